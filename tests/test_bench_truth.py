"""The truth benchmark end to end on the invented probe set (tests/fixtures/truth-mini): `cairn import` in its own
process, enrichment to idle, the checks over the REST API, the rates and the JSON report.

The set was written for this project, apart from the development data (which CI does not have), and stays small so
the run takes seconds; its checks cover every kind.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import truth

MINI = Path(__file__).resolve().parent / "fixtures" / "truth-mini"


def test_a_run_imports_each_persona_checks_every_kind_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "truth.json"
    assert truth.main(["--data", str(MINI), "--only", "01,04", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    personas = {p["number"]: p for p in report["personas"]}
    assert set(personas) == {"01", "04"}
    assert all(p["error"] is None and p["facts"] > 0 and p["parked_jobs"] == 0 for p in personas.values())
    kinds = {c["kind"] for p in personas.values() for c in p["checks"]}
    assert kinds == {"answer", "present", "absent", "conflict", "dated"}
    outcome = {c["id"]: c for p in personas.values() for c in p["checks"]}
    # the current residence after a move, a job dated by "I start on the 2nd of June", an open conflict
    assert outcome["01-a1"]["passed"], outcome["01-a1"]
    assert outcome["01-d1"]["passed"], outcome["01-d1"]
    assert outcome["01-c1"]["passed"], outcome["01-c1"]
    # lower-case chat: the new employer and the break-up
    assert outcome["04-a1"]["passed"] and outcome["04-x1"]["passed"], (outcome["04-a1"], outcome["04-x1"])
    assert report["overall"]["checks"] == sum(len(p["checks"]) for p in personas.values())
    assert report["by_kind"]["conflict"]["checks"] == 1


def test_a_check_of_each_kind_scores_as_the_set_defines() -> None:
    class Api:
        def best_answer(self, query: str, reference_time: str) -> dict[str, str] | None:
            return {"statement": "User lives in Lisbon"} if "live" in query else None

    facts = [
        {"statement": "User lives in Lisbon", "valid_from": "2025-10-13T00:00:00Z"},
        {"statement": "Noa lives in Haifa", "valid_from": None},
    ]
    conflicts = [{"fact_a": {"statement": "User follows diet vegetarian"}, "fact_b": {"statement": "User has picanha"}}]
    run = lambda check: truth._run_check(check, Api(), facts, conflicts, "2026-01-01T00:00:00Z")  # type: ignore[arg-type]  # noqa: E731
    assert run(
        {"id": "a", "kind": "answer", "query": "Where do I live?", "expect_any": ["Lisbon"], "forbid": ["Berlin"]}
    ).passed
    assert not run({"id": "a", "kind": "answer", "query": "Who am I?", "expect_any": ["x"], "forbid": []}).passed
    assert run({"id": "p", "kind": "present", "all_of": ["noa", "HAIFA"]}).passed
    assert not run({"id": "p", "kind": "present", "all_of": ["Noa", "Lisbon"]}).passed  # the same fact, not two
    assert run({"id": "x", "kind": "absent", "all_of": ["Berlin"]}).passed
    assert run({"id": "d", "kind": "dated", "all_of": ["Lisbon"], "date_prefix": "2025-10-13"}).passed
    assert not run({"id": "d", "kind": "dated", "all_of": ["Noa"], "date_prefix": "2025"}).passed
    assert run({"id": "c", "kind": "conflict", "values": ["picanha", "vegetarian"]}).passed
