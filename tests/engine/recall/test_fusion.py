"""Fusion order (DESIGN §5 step 3): reciprocal-rank fusion, then standing, importance, recency/decay and utility
weights; and the rerank of indirect questions.  Inputs are built by hand so that each weight is seen to change an
order that the ranks alone would give the other way round."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from engine.facts.model import Fact
from engine.recall.channels import Key
from engine.recall.ranker import RERANK_POOL, RRF_K, Anchor, _fuse, rerank_indirect, weigh
from engine.recall.types import TimeWindow
from tests.engine.recall.support import analysis

REF = datetime(2024, 6, 10, tzinfo=UTC)


def fact(fact_id: int, **overrides: object) -> Fact:
    """A live, warm, stable, manual fact about the user with neutral signals."""
    base = Fact(
        id=fact_id,
        user_id="default",
        project_id=None,
        subject_id=1,
        subject="user",
        predicate="likes",
        object_text=f"thing {fact_id}",
        statement=f"User likes thing {fact_id}",
        source_text=f"thing {fact_id}",
        source_start=None,
        source_end=None,
        event_id=None,
        span_id=None,
        conversation_id=None,
        source_role="manual",
        confidence=0.95,
        importance=0.5,
        tier="warm",
        tier_pinned=False,
        standing="fact",
        kind="preference",
        decay="stable",
        valid_from=None,
        valid_to=None,
        recorded_at=REF - timedelta(days=1),
        updated_at=REF - timedelta(days=1),
        superseded_at=None,
        superseded_by=None,
        previous_id=None,
        status="active",
        extractor="manual",
        prompt_hash=None,
        access_count=0,
        last_accessed_at=None,
        useful_count=0,
        questionable_count=0,
        corroboration=0,
        metadata={},
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


def hydrated(*facts: Fact) -> dict[str, dict[int, object]]:
    return {"fact": {f.id: f for f in facts}, "event": {}, "span": {}, "episode": {}}


def order(anchors: list[Anchor]) -> list[Key]:
    return [a.key for a in anchors]


def test_fuse_is_reciprocal_rank_fusion_with_channel_weights() -> None:
    ranked: dict[str, list[Key]] = {
        "keyword": [("fact", 1), ("fact", 2), ("fact", 3)],
        "vector": [("fact", 3), ("fact", 4)],
        "temporal": [("fact", 4)],
    }
    scores, channels_of = _fuse(ranked, {"keyword": 1.0, "vector": 1.0, "temporal": 0.5})
    assert scores[("fact", 1)] == pytest.approx(1 / (RRF_K + 1))
    assert scores[("fact", 3)] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert scores[("fact", 4)] == pytest.approx(1 / (RRF_K + 2) + 0.5 / (RRF_K + 1))
    # found by two channels beats first place in one; a lighter channel adds less
    assert sorted(scores, key=lambda k: -scores[k]) == [("fact", 3), ("fact", 4), ("fact", 1), ("fact", 2)]
    assert channels_of[("fact", 3)] == {"keyword", "vector"}
    # the channel weight alone changes the order
    heavy, _ = _fuse(ranked, {"keyword": 1.0, "vector": 1.0, "temporal": 3.0})
    assert max(heavy, key=lambda k: heavy[k]) == ("fact", 4)


# The ranks say 1 before 2 (first vs second in one channel: 1/11 against 1/12); each weight below must reverse it.
@pytest.mark.parametrize(
    ("first", "second", "signal"),
    [
        ({"standing": "candidate", "confidence": 0.4}, {}, "standing"),
        ({"standing": "challenged"}, {}, "standing"),
        ({"importance": 0.0}, {"importance": 1.0}, "importance"),
        (
            {"decay": "moderate", "recorded_at": REF - timedelta(days=720)},
            {"decay": "moderate", "recorded_at": REF - timedelta(days=2)},
            "recency",
        ),
        ({"valid_to": REF - timedelta(days=3), "decay": "ephemeral"}, {}, "expired"),
        ({"questionable_count": 3}, {"useful_count": 0}, "utility"),
        ({}, {"useful_count": 2}, "utility"),
    ],
)
def test_weights_reorder_what_the_ranks_alone_would_order(
    first: dict[str, object], second: dict[str, object], signal: str
) -> None:
    ranked: dict[str, list[Key]] = {"keyword": [("fact", 1), ("fact", 2)]}
    scores, channels_of = _fuse(ranked, {"keyword": 1.0})
    neutral = weigh(scores, channels_of, hydrated(fact(1), fact(2)), analysis("x"), "c", REF)
    assert order(neutral) == [("fact", 1), ("fact", 2)], "equal signals: rank order"
    weighed = weigh(scores, channels_of, hydrated(fact(1, **first), fact(2, **second)), analysis("x"), "c", REF)
    assert order(weighed) == [("fact", 2), ("fact", 1)], f"{signal} should reverse the order"
    assert weighed[0].score > weighed[1].score


def test_quarantined_facts_never_make_an_anchor() -> None:
    scores, channels_of = _fuse({"keyword": [("fact", 1), ("fact", 2)]}, {})
    anchors = weigh(scores, channels_of, hydrated(fact(1, standing="quarantine"), fact(2)), analysis("x"), "c", REF)
    assert order(anchors) == [("fact", 2)]


def test_named_subjects_and_the_time_window_weigh_in() -> None:
    scores, channels_of = _fuse({"keyword": [("fact", 1), ("fact", 2)]}, {})
    items = hydrated(fact(1, subject="melanie"), fact(2, subject="caroline"))
    a = analysis("caroline's cat", subjects=("caroline",))
    assert order(weigh(scores, channels_of, items, a, "c", REF)) == [("fact", 2), ("fact", 1)]
    window = TimeWindow(datetime(2024, 6, 3, tzinfo=UTC), datetime(2024, 6, 10, tzinfo=UTC), "last week")
    items = hydrated(
        fact(1, valid_from=datetime(2024, 5, 1, tzinfo=UTC)), fact(2, valid_from=datetime(2024, 6, 5, tzinfo=UTC))
    )
    assert order(weigh(scores, channels_of, items, analysis("x", temporal=window), "c", REF)) == [
        ("fact", 2),
        ("fact", 1),
    ]


def test_rerank_of_indirect_questions_lifts_close_meanings_and_preferences() -> None:
    items = hydrated(
        fact(1, kind="occupational", predicate="works_as"),
        fact(2, kind="preference"),
        fact(3, kind="identity", predicate="lives_in"),
    )

    def anchors() -> list[Anchor]:
        return [
            Anchor(("fact", 1), 0.10, {"keyword"}, [(0.10, 1)]),
            Anchor(("fact", 2), 0.09, {"keyword"}, [(0.09, 2)]),
            Anchor(("fact", 3), 0.08, {"keyword"}, [(0.08, 3)]),
        ]

    # no closeness: the preference still rises above the job (× ADVICE_BOOST beats 0.10 / 0.09)
    assert order(rerank_indirect(anchors(), items, {})) == [("fact", 2), ("fact", 1), ("fact", 3)]
    # closeness in meaning lifts the third above both
    assert order(rerank_indirect(anchors(), items, {3: 0.9, 1: 0.0, 2: 0.1}))[0] == ("fact", 3)
    # beyond the reranked pool nothing moves
    many = [Anchor(("fact", 100 + i), 1.0 - i * 0.001, set(), []) for i in range(RERANK_POOL)]
    tail = Anchor(("fact", 2), 0.0001, {"keyword"}, [(0.0001, 2)])
    assert rerank_indirect([*many, tail], items, {2: 1.0})[-1] is tail
