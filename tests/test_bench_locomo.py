"""The LoCoMo harness: the scoring rule of the data's README, and a whole run on a small generated conversation.

The development data itself is not needed (CI has a fresh clone): the conversation is the importer tests' sample.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench import locomo
from tests.plugins.importer_samples import locomo_conversation


def _result(*externals: str | None) -> Any:
    blocks = [SimpleNamespace(kind="event", meta={} if e is None else {"external_id": e}) for e in externals]
    return SimpleNamespace(blocks=blocks)


def test_summaries_and_repeats_keep_their_slot_before_the_cut() -> None:
    # an episode (None) and a second block of turn D1 take slots 2 and 3: D9 is ranked 4th, not 2nd
    turns = locomo.ranked_turns(_result("D1", None, "D1", "D9"))
    assert turns == ["D1", None, "D1", "D9"]
    scores = locomo.score(turns, ("D1", "D9"))
    assert scores[5] == 1.0
    crowded = locomo.ranked_turns(_result("D1", *([None] * 9), "D9"))
    assert locomo.score(crowded, ("D1", "D9")) == {5: 0.5, 10: 0.5, 20: 1.0}


def test_an_understanding_takes_a_slot_for_each_turn_it_leads_to() -> None:
    led = SimpleNamespace(kind="understanding", meta={"evidence_external_ids": ["D4", "D7"]})
    empty = SimpleNamespace(kind="understanding", meta={"evidence_external_ids": []})
    result = SimpleNamespace(blocks=[*_result("D1").blocks, led, empty, *_result("D9").blocks])
    assert locomo.ranked_turns(result) == ["D1", "D4", "D7", None, "D9"]


def test_a_turn_reached_twice_counts_once() -> None:
    assert locomo.score(["D1", "D1", "D1"], ("D1", "D2")) == {5: 0.5, 10: 0.5, 20: 0.5}
    assert locomo.score([], ("D1",)) == {5: 0.0, 10: 0.0, 20: 0.0}


def test_a_run_writes_both_systems_side_by_side(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "1.json").write_text(json.dumps(locomo_conversation()), encoding="utf-8")
    out = tmp_path / "out.json"
    locomo.main(["--data", str(data), "--json", str(out)])
    report = json.loads(out.read_text())
    context = {"context_precision", "context_recall", "context_items", "tokens_per_query"}
    for system, extra in (("cairn", context), ("baseline", set())):
        overall = report[system]["overall"]
        assert set(overall) == {"recall@5", "recall@10", "recall@20", "n"} | extra
        assert overall["n"] == 1  # the sample's one question of categories 1-4
        assert set(report[system]["latency_ms"]) == {"p50", "p95"}
        assert set(report[system]["by_category"]) == {"4"}
    assert report["cairn"]["overall"]["recall@10"] == 1.0  # "What did Ana adopt?" finds "I adopted a cat"
    assert report["embedder"].startswith("hashing") and report["llm"] == "simple"
    cairn = report["cairn"]["overall"]
    assert cairn["context_items"] >= 1 and cairn["tokens_per_query"] > 0
    assert 0.0 < cairn["context_precision"] <= 1.0 and cairn["context_recall"] == 1.0
    assert report["cairn_by_file"]["1"]["n"] == 1


def _context(items: list[tuple[str, int]], blocks: list[Any], background: tuple[Any, ...] = ()) -> Any:
    return SimpleNamespace(
        llm_context=SimpleNamespace(items=tuple(items), tokens=10), blocks=blocks, background_context=background
    )


def test_context_items_map_to_the_turn_they_come_from() -> None:
    # a fact counts by the turn it was extracted from, whatever its block quotes; an episode maps to no turn
    led = SimpleNamespace(kind="understanding", id=5, meta={"evidence_external_ids": ["D3", "D4"]})
    conflict = SimpleNamespace(kind="conflict", id=6, meta={"fact_a": 10, "fact_b": 11})
    result = _context(
        [("fact", 10), ("event", 1), ("episode", 2), ("understanding", 5), ("conflict", 6)], [led, conflict]
    )
    items = locomo.context_items(result, {10: "D9", 11: "D8"}, {1: "D1"})
    assert items == [{"D9"}, {"D1"}, set(), {"D3", "D4"}, {"D9", "D8"}]
    assert locomo.precision(items, ("D1", "D4")) == 2 / 5
    assert locomo.context_recall(items, ("D1", "D4", "D7")) == 2 / 3


def test_an_empty_context_has_no_precision() -> None:
    assert locomo.precision([], ("D1",)) == 0.0
    assert locomo.context_recall([], ("D1",)) == 0.0
