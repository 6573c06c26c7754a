"""Indirect questions (advice, plans, judgements) through ``vault.recall`` (DESIGN §5: expand the query, wider
pool, rerank)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from engine import Vault
from engine.recall.analyze import QueryAnalyzer
from engine.recall.types import RecallRequest, RecallResult
from tests.engine.recall.support import ingest

REF = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)


def recall(vault: Vault, query: str, **kw: Any) -> RecallResult:
    return vault.recall(RecallRequest(conversation_id="asking", query=query, reference_time=REF, **kw))


@pytest.mark.parametrize(
    ("query", "mode"),
    [
        ("Can you recommend a good book for the flight?", "indirect"),
        ("Any ideas for my sister's birthday?", "indirect"),
        ("I need advice on a running plan", "indirect"),
        ("Would Tom enjoy a jazz concert?", "indirect"),
        # advice already given is a recorded fact: a direct question
        ("What did Ana recommend for the trip?", "direct"),
        ("What advice does Tom give about pruning roses?", "direct"),
        ("Which restaurant was on Ana's recommendation list?", "direct"),
        ("What book has Linh suggested?", "direct"),
    ],
)
def test_asking_for_advice_is_indirect_reporting_advice_is_direct(query: str, mode: str) -> None:
    assert QueryAnalyzer.mode_of(query) == mode


def test_an_indirect_question_digs_twice_as_deep(vault: Vault) -> None:
    ingest(
        vault,
        "trail",
        *(
            (f"2024-05-{1 + i % 28:02d}T{8 + i // 28:02d}:00:00Z", f"Hiking note {i}: trail section {i} done.")
            for i in range(90)
        ),
    )
    direct = recall(vault, "When did I go hiking?", limit=10)
    indirect = recall(vault, "Would I enjoy hiking next month?", limit=10)
    assert direct.routing.mode == "direct" and indirect.routing.mode == "indirect"
    assert direct.routing.channels["keyword"].hits == 30
    assert indirect.routing.channels["keyword"].hits == 60
    assert len(indirect.blocks) <= 10, "a wider pool, the same number of answers"


def test_an_indirect_question_is_expanded_to_the_subjects_preferences(vault: Vault) -> None:
    vault.facts.add("Caroline", "works_as", "nurse")
    vault.facts.add("Caroline", "lives_in", "Boston")
    painting = vault.facts.add("Caroline", "likes", "watercolour painting")
    tennis = vault.facts.add("Caroline", "plays_sport", "tennis")
    result = recall(vault, "What gift should I buy for Caroline?")
    assert result.routing.mode == "indirect" and "caroline" in result.routing.subjects
    profile = result.routing.channels["profile"]
    assert profile.ran and profile.hits == 2
    ranked = [b.id for b in result.blocks if b.kind == "fact"]
    assert set(ranked[:2]) == {painting.id, tennis.id}, "what she likes and does comes first"
    assert {b.id for b in result.answer_facts[:2]} == {painting.id, tennis.id}
    # the same subject asked about directly: no expansion
    direct = recall(vault, "Where does Caroline live?")
    assert direct.routing.mode == "direct" and not direct.routing.channels["profile"].ran


class _AxisEmbedder:
    """Each predicate description on an axis of its own, so a query vector sets its similarity to each exactly."""

    model_id = "axes"

    def __init__(self, names: list[str], texts: dict[str, str]) -> None:
        self._axis = {texts[name]: index for index, name in enumerate(names)}
        self.dim = len(names)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, self._axis[text]] = 1.0
        return out


def test_an_indirect_question_keeps_more_and_looser_predicates(vault: Vault) -> None:
    texts = vault.catalog.describe_texts()
    names = list(texts)
    analyzer = QueryAnalyzer(vault.catalog, _AxisEmbedder(names, texts))  # type: ignore[arg-type]
    query = np.zeros(len(names), dtype=np.float32)
    for name, similarity in (("likes", 0.6), ("loves", 0.4), ("listens_to", 0.38), ("has_pet", 0.2)):
        query[names.index(name)] = similarity
    question = "Would Tom enjoy the concert?"
    wide = analyzer.analyse(question, reference_time=REF, known_subjects={}, query_vector=query)
    assert wide.mode == "indirect"
    assert wide.predicates[-3:] == ("likes", "loves", "listens_to"), "0.35 and above, nearest first"
    assert "has_pet" not in wide.predicates
    plain = analyzer.analyse("Did Tom go to the concert?", reference_time=REF, known_subjects={}, query_vector=query)
    assert plain.mode == "direct" and "likes" in plain.predicates
    assert "loves" not in plain.predicates and "listens_to" not in plain.predicates, "a direct question keeps 0.45+"
