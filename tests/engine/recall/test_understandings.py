"""Understandings in recall (DESIGN §3a, §5): a subject named in a question that gathers across its history brings its
understanding, expanded to the turns it was made from that bear on the question — over the engine and over
``POST /v6/recall`` alike — and nothing of it otherwise."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engine import Vault
from engine.recall import assemble
from engine.recall.types import RecallRequest, RecallResult
from engine.recall.understandings import gathers, understanding_blocks
from tests.engine.recall.support import ingest

REF = datetime(2024, 6, 10, 12, 0, tzinfo=UTC)
TURNS = (
    ("2024-05-01T10:00Z", "My sister Marta lives in Porto."),
    ("2024-05-02T10:00Z", "Marta loves hiking in the mountains."),
    ("2024-05-03T10:00Z", "Marta loves playing the cello."),
    ("2024-05-04T10:00Z", "Marta works as a nurse at the children's hospital."),
    ("2024-05-05T10:00Z", "Marta loves baking sourdough bread."),
)


def recall(vault: Vault, query: str) -> RecallResult:
    return vault.recall(RecallRequest(conversation_id="asking", query=query, reference_time=REF))


def seeded(vault: Vault) -> list[int]:
    events = ingest(vault, "c", *TURNS)
    vault.workspace.consolidate()
    return events


def test_the_questions_that_gather_are_told_from_those_that_ask_one_thing() -> None:
    for query in (
        "What has Marta loved doing?",
        "Where has Marta travelled?",
        "What activities does Marta do?",
        "How many times has Marta been to Lisbon?",
        "What do Marta and Bob both like?",
    ):
        assert gathers(query), query
    for query in ("Where does Marta live?", "What is Marta's job?", "When did Marta move?"):
        assert not gathers(query), query


def test_a_gathering_question_brings_the_named_subjects_understanding_and_its_evidence(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a vault this small ranks every turn of Marta's among its first blocks, which leaves her understanding no turn
    # to lead to; placed first, it leads to those that bear on the question
    monkeypatch.setattr(assemble, "UNDERSTANDING_AT", 0)
    events = seeded(vault)
    (understanding,) = vault.workspace.get_understandings(["Marta"], kind="single_subject")
    result = recall(vault, "What has Marta loved doing?")
    blocks = [b for b in result.blocks if b.kind == "understanding"]
    assert [b.id for b in blocks] == [understanding.id]
    block = blocks[0]
    assert result.blocks.index(block) == 0
    assert block.meta["subjects"] == ["Marta"] and block.meta["understanding_kind"] == "single_subject"
    # expanded to the turns it was made from that bear on the question: those where Marta loves something
    loved = {e for e, (_, text) in zip(events, TURNS, strict=True) if "loves" in text}
    assert block.source_ids and set(block.source_ids) <= loved
    assert [e.source_id for e in block.evidence] == list(block.source_ids)
    assert all(e.source_kind == "event" for e in block.evidence)
    assert f"[understanding #{understanding.id} " in result.llm_context.text
    assert understanding.summary.split(":")[0] in result.llm_context.text


def test_no_understanding_for_one_fact_questions_without_consolidation_or_when_turned_off(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assemble, "UNDERSTANDING_AT", 0)
    ingest(vault, "c", *TURNS)
    assert not [b for b in recall(vault, "What has Marta loved doing?").blocks if b.kind == "understanding"]
    vault.workspace.consolidate()
    assert not [b for b in recall(vault, "Where does Marta live?").blocks if b.kind == "understanding"]
    assert [b for b in recall(vault, "What has Marta loved doing?").blocks if b.kind == "understanding"]
    vault.update_settings({"recall.understandings": False})
    assert not [b for b in recall(vault, "What has Marta loved doing?").blocks if b.kind == "understanding"]


def test_an_understanding_whose_turns_are_all_shown_already_adds_nothing(vault: Vault) -> None:
    events = seeded(vault)
    with vault.store.snapshot() as snap:
        kwargs: dict[str, Any] = {
            "user_id": "default",
            "subjects": ("Marta",),
            "query": "What has Marta loved doing?",
            "predicates": ("likes",),
            "score": 1.0,
        }
        assert understanding_blocks(snap, shown_events=set(), **kwargs)
        assert understanding_blocks(snap, shown_events=set(events), **kwargs) == []
        assert understanding_blocks(snap, shown_events=set(), **{**kwargs, "subjects": ("Nobody",)}) == []


def test_the_understanding_follows_the_best_ranked_blocks_and_leaves_their_turns_out(vault: Vault) -> None:
    seeded(vault)  # every turn of Marta's ranks among the first blocks: her understanding adds none of them again
    assert not [b for b in recall(vault, "What has Marta loved doing?").blocks if b.kind == "understanding"]
