"""The subject workspace over REST (``POST /v6/workspace/<verb>`` on a real loopback server) and over MCP (the
official SDK's client against ``/mcp``): every verb, the session rule of deletion, refusals naming the field,
unknown subjects, and revisions by supersession."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import httpx
import pytest
from mcp import Client

from engine.api.models.workspace import (
    MAX_BATCH_OBSERVATIONS,
    UnderstandingKind,
)
from engine.workspace import UNDERSTANDING_KINDS
from engine.workspace.rows import MAX_CONTENT, MAX_IDS, MAX_SUBJECTS
from tests.engine.api.conftest import Served, assert_error, table_counts
from tests.engine.api.test_mcp import run, text_of

WORKSPACE_TOOLS = {
    "create_subjects",
    "get_subjects",
    "update_subject_summary",
    "remember",
    "add_observations",
    "delete_observations",
    "search_observations",
    "search",
    "list_perspectives",
    "add_perspective",
    "remove_perspective",
    "create_understanding",
    "update_understanding",
    "get_understandings",
    "understanding_history",
    "set_structural_understanding",
    "mark_useful",
    "mark_questionable",
    "open_intersection",
    "open_around",
    "stats",
    # sessions, recall, consolidation and merges (tests/engine/api/test_workspace_sessions_api.py)
    "orient",
    "bring_to_mind",
    "reset_seen",
    "recall",
    "consolidate",
    "consolidation_report",
    "pending_consolidation",
    "find_similar_subjects",
    "merge_subjects",
}


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    """A client of the real server on loopback, with the token."""
    with httpx.Client(base_url=served.url, headers=served.auth(), trust_env=False, timeout=30) as client:
        yield client


def call(http: httpx.Client, verb: str, body: dict[str, Any] | None, session: str | None = None) -> httpx.Response:
    headers = {"X-Session-Id": session} if session is not None else {}
    if body is None:
        return http.post(f"/v6/workspace/{verb}", headers=headers)
    return http.post(f"/v6/workspace/{verb}", json=body, headers=headers)


def ok(http: httpx.Client, verb: str, body: dict[str, Any] | None, session: str | None = None) -> dict[str, Any]:
    response = call(http, verb, body, session)
    assert response.status_code == 200, response.text
    return dict(response.json())


def tool(served: Served, name: str, arguments: dict[str, Any]) -> Any:
    """One MCP tool call's result (its structured content, or the error result itself)."""

    async def body(client: Client) -> Any:
        return await client.call_tool(name, arguments)

    return run(served, body)


# -- REST: every verb --------------------------------------------------------------------------------------------
def test_subjects_are_created_looked_up_and_summarised(http: httpx.Client) -> None:
    made = ok(http, "create_subjects", {"names": ["Ana", "Cairn project"], "kind": "person"})
    assert [s["name"] for s in made["subjects"]] == ["Ana", "Cairn project"]
    assert made["subjects_created"] == ["Ana", "Cairn project"]
    assert {s["kind"] for s in made["subjects"]} == {"person"}
    again = ok(http, "create_subjects", {"names": ["ana", "Bob"]})
    assert [s["name"] for s in again["subjects"]] == ["Ana", "Bob"]
    assert again["subjects_created"] == ["Bob"]  # Ana existed: found case-insensitively, not made twice

    found = ok(http, "get_subjects", {"names": ["Bob", "Nobody"]})
    assert [s["name"] for s in found["subjects"]] == ["Bob"] and found["missing"] == ["Nobody"]

    summed = ok(
        http, "update_subject_summary", {"subject_name": "Ana", "summary": "Designer on Cairn.", "tags": ["team"]}
    )
    assert (summed["name"], summed["summary"], summed["tags"]) == ("Ana", "Designer on Cairn.", ["team"])
    kept = ok(http, "update_subject_summary", {"subject_name": "Ana", "summary": "Lead designer."})
    assert (kept["summary"], kept["tags"]) == ("Lead designer.", ["team"])  # tags left out: unchanged


def test_remember_writes_once_and_add_observations_writes_each(http: httpx.Client, served: Served) -> None:
    first = ok(
        http,
        "remember",
        {"content": "Ana prefers short morning meetings.", "subject_names": ["Ana"], "kind": "preference"},
        session="s1",
    )
    note = first["observation"]
    assert first["duplicate"] is False and first["subjects_created"] == ["Ana"]
    assert (note["content"], note["kind"], note["subjects"], note["session_id"]) == (
        "Ana prefers short morning meetings.",
        "preference",
        ["Ana"],
        "s1",
    )
    assert note["confidence"] == 0.8 and note["observed_at"].endswith("Z")
    same = ok(http, "remember", {"content": "Ana prefers short  morning meetings.", "subject_names": ["Bob"]})
    assert same["duplicate"] is True and same["observation"]["id"] == note["id"] and same["subjects_created"] == []

    batch = ok(
        http,
        "add_observations",
        {
            "observations": [
                {"content": "Bob reviews every pull request.", "subject_names": ["Bob"], "confidence": 0.6},
                {"content": "Ana and Bob share a flat.", "subject_names": ["Ana", "Bob"]},
                {"content": "Ana prefers short morning meetings.", "subject_names": ["Ana"]},
            ],
            "session_id": "s2",
        },
    )
    results = batch["results"]
    assert [r["duplicate"] for r in results] == [False, False, True]
    assert results[0]["observation"]["confidence"] == 0.6 and results[0]["subjects_created"] == ["Bob"]
    assert results[1]["observation"]["subjects"] == ["Ana", "Bob"]
    assert {r["observation"]["session_id"] for r in results[:2]} == {"s2"}
    assert results[2]["observation"]["id"] == note["id"]
    assert served.vault.workspace.stats().observations == 3


def test_search_finds_by_words_and_subjects(http: httpx.Client) -> None:
    ok(http, "remember", {"content": "Ana is learning Portuguese.", "subject_names": ["Ana"]})
    ok(http, "remember", {"content": "Ana and Bob practise Portuguese together.", "subject_names": ["Ana", "Bob"]})
    ok(http, "remember", {"content": "Bob plays chess.", "subject_names": ["Bob"]})
    words = ok(http, "search_observations", {"query": "portuguese"})["observations"]
    assert {o["content"] for o in words} == {"Ana is learning Portuguese.", "Ana and Bob practise Portuguese together."}
    both = ok(http, "search_observations", {"query": "Portuguese", "subject_names": ["Ana", "Bob"]})
    assert [o["content"] for o in both["observations"]] == ["Ana and Bob practise Portuguese together."]
    one = ok(http, "search_observations", {"query": "Portuguese", "limit": 1})
    assert len(one["observations"]) == 1


def test_understandings_are_revised_by_supersession_and_the_chain_is_walked(http: httpx.Client) -> None:
    note = ok(http, "remember", {"content": "Ana moved to Lisbon in March.", "subject_names": ["Ana"]})["observation"]
    later = ok(http, "remember", {"content": "Ana works remotely now.", "subject_names": ["Ana"]})["observation"]
    first = ok(
        http,
        "create_understanding",
        {
            "content": "Ana lives in Lisbon since March.",
            "summary": "Ana, Lisbon",
            "subject_names": ["Ana"],
            "title": "Ana",
            "source_observation_ids": [note["id"]],
        },
        session="s1",
    )
    assert (first["kind"], first["active"], first["sources"], first["session_id"]) == (
        "single_subject",
        True,
        [note["id"]],
        "s1",
    )
    second = ok(
        http,
        "update_understanding",
        {
            "understanding_id": first["id"],
            "new_content": "Ana lives in Lisbon and works remotely.",
            "new_summary": "Ana, Lisbon, remote",
            "source_observation_ids": [later["id"]],
        },
    )
    assert second["supersedes"] == first["id"] and second["subjects"] == ["Ana"] and second["title"] == "Ana"
    assert second["sources"] == sorted([note["id"], later["id"]])  # the old sources and the new one
    third = ok(
        http,
        "update_understanding",
        {"understanding_id": second["id"], "new_content": "Ana is a remote designer.", "new_summary": "Ana"},
    )
    chain = ok(http, "understanding_history", {"understanding_id": second["id"]})["understandings"]
    assert [u["id"] for u in chain] == [first["id"], second["id"], third["id"]]
    assert [u["active"] for u in chain] == [False, False, True]
    assert [u["status"] for u in chain] == ["superseded", "superseded", "active"]
    assert chain[0]["superseded_by"] == second["id"] and chain[0]["content"] == "Ana lives in Lisbon since March."
    current = ok(http, "get_understandings", {"subject_names": ["Ana"]})["understandings"]
    assert [u["id"] for u in current] == [third["id"]]
    # revising an old revision is refused, naming the field; the chain is unchanged
    stale = call(
        http, "update_understanding", {"understanding_id": first["id"], "new_content": "x", "new_summary": "y"}
    )
    error = assert_error(stale, 400, "validation_error")
    assert error["details"]["field"] == "understanding_id"  # type: ignore[index]
    assert "superseded" in str(error["message"])
    stats = ok(http, "stats", {})
    assert (stats["understandings"], stats["superseded_understandings"]) == (1, 2)


def test_kinds_structural_and_workspace_understandings(http: httpx.Client) -> None:
    pair = ok(
        http,
        "create_understanding",
        {"content": "Old friends who share a flat.", "summary": "friends", "subject_names": ["Ana", "Bob"]},
    )
    assert pair["kind"] == "relationship" and pair["subjects"] == ["Ana", "Bob"]
    soul = ok(http, "create_understanding", {"content": "Help the person remember.", "summary": "why", "kind": "soul"})
    assert soul["kind"] == "soul" and soul["subjects"] == []
    own = ok(http, "get_understandings", {})["understandings"]
    assert [u["id"] for u in own] == [soul["id"]]  # none named: the workspace's own
    assert ok(http, "get_understandings", {"kind": "relationship", "subject_names": ["Ana"]})["understandings"] == [
        pair
    ]
    structural = ok(
        http, "set_structural_understanding", {"subject_name": "Ana", "content": "Ana is also called Annie."}
    )
    assert (structural["kind"], structural["subjects"]) == ("structural", ["Ana"])
    assert structural["summary"] == "How this subject relates to others by name and containment."
    newer = ok(
        http,
        "set_structural_understanding",
        {"subject_name": "Ana", "content": "Ana (Annie) is part of the design team.", "summary": "Ana's names"},
        session="s9",
    )
    assert newer["supersedes"] == structural["id"] and newer["summary"] == "Ana's names"
    assert newer["session_id"] == "s9"


def test_marks_count_uses_and_doubts(http: httpx.Client, served: Served) -> None:
    note = ok(http, "remember", {"content": "Ana likes tea.", "subject_names": ["Ana"]})["observation"]
    made = ok(http, "create_understanding", {"content": "Ana: tea.", "summary": "tea", "subject_names": ["Ana"]})
    useful = ok(http, "mark_useful", {"ids": [note["id"], made["id"], 987_654]})["marked"]
    assert useful[str(note["id"])] == "observation" and useful[str(made["id"])] == "understanding"
    assert "not found" in useful["987654"]
    doubt = ok(http, "mark_questionable", {"ids": [note["id"]]})["marked"]
    assert doubt == {str(note["id"]): "observation"}
    stored = served.vault.workspace.observation(note["id"])
    assert (stored.useful_count, stored.questionable_count) == (1, 1)


def test_intersections_and_neighbourhoods(http: httpx.Client) -> None:
    ok(http, "remember", {"content": "Ana and Bob met at university.", "subject_names": ["Ana", "Bob"]})
    ok(http, "remember", {"content": "Ana and Bob share a flat.", "subject_names": ["Ana", "Bob"]})
    ok(http, "remember", {"content": "Ana and Carla sing in a choir.", "subject_names": ["Ana", "Carla"]})
    rel = ok(
        http,
        "create_understanding",
        {"content": "Old friends who live together.", "summary": "friends", "subject_names": ["Ana", "Bob"]},
    )
    between = ok(http, "open_intersection", {"subject_a": "ana", "subject_b": "Bob"})
    assert (between["subject_a"], between["subject_b"]) == ("Ana", "Bob")  # the subjects' own spelling
    assert {o["content"] for o in between["observations"]} == {
        "Ana and Bob met at university.",
        "Ana and Bob share a flat.",
    }
    assert [u["id"] for u in between["understandings"]] == [rel["id"]]
    assert between["facts"] == [] and between["events"] == 0 and between["size"] == 3
    assert len(ok(http, "open_intersection", {"subject_a": "Ana", "subject_b": "Bob", "limit": 1})["observations"]) == 1

    around = ok(http, "open_around", {"subject_name": "Ana"})
    assert around["subject_name"] == "Ana"
    assert [(n["name"], n["shared"]) for n in around["neighbours"]] == [("Bob", 3), ("Carla", 1)]
    assert around["neighbours"][0]["relationship"]["id"] == rel["id"]
    assert around["neighbours"][1]["relationship"] is None
    assert [n["name"] for n in ok(http, "open_around", {"subject_name": "Ana", "limit": 1})["neighbours"]] == ["Bob"]


def test_stats_with_or_without_a_body_and_users_kept_apart(http: httpx.Client) -> None:
    empty = ok(http, "stats", None)  # no body at all: the default user's
    assert set(empty) == {
        "generation",
        "subjects",
        "observations",
        "understandings",
        "superseded_understandings",
        "unlinked_observations",
    }
    assert (empty["generation"], empty["observations"], empty["understandings"]) == (0, 0, 0)
    ok(http, "remember", {"content": "Zed keeps bees.", "subject_names": ["Zed"], "user_id": "other"})
    theirs = ok(
        http,
        "create_understanding",
        {"content": "Zed: bees.", "summary": "bees", "subject_names": ["Zed"], "user_id": "other"},
    )
    assert ok(http, "stats", {"user_id": "other"})["observations"] == 1
    assert ok(http, "stats", {})["observations"] == 0
    assert ok(http, "get_subjects", {"names": ["Zed"]})["missing"] == ["Zed"]
    assert ok(http, "search_observations", {"query": "bees"})["observations"] == []
    # another user's understanding is not found, neither to revise nor to read its history
    for verb, body in (
        ("understanding_history", {"understanding_id": theirs["id"]}),
        ("update_understanding", {"understanding_id": theirs["id"], "new_content": "x", "new_summary": "y"}),
    ):
        assert_error(call(http, verb, body), 404, "not_found")
    chain = ok(http, "understanding_history", {"understanding_id": theirs["id"], "user_id": "other"})
    assert [u["id"] for u in chain["understandings"]] == [theirs["id"]]


# -- the session rule of deletion --------------------------------------------------------------------------------
def test_only_the_session_that_wrote_an_observation_deletes_it(http: httpx.Client, served: Served) -> None:
    mine = ok(http, "remember", {"content": "Planning the spring release.", "subject_names": ["Cairn"]}, session="s1")
    theirs = ok(
        http, "remember", {"content": "Bob reviews every pull request.", "subject_names": ["Bob"], "session_id": "s2"}
    )
    anonymous = ok(http, "remember", {"content": "Nobody's note.", "subject_names": ["Bob"]})
    ids = [mine["observation"]["id"], theirs["observation"]["id"], anonymous["observation"]["id"], 987_654]
    before = table_counts(served.vault)

    # no session anywhere: refused, naming the field, nothing deleted
    error = assert_error(call(http, "delete_observations", {"ids": ids}), 400, "validation_error")
    assert error["details"]["field"] == "session_id"  # type: ignore[index]
    assert table_counts(served.vault) == before

    # the header's session: only s1's note goes; the others are rejected, each with its reason
    done = ok(http, "delete_observations", {"ids": ids}, session="s1")
    assert done["deleted"] == [mine["observation"]["id"]]
    rejected = done["rejected"]
    assert set(rejected) == {str(i) for i in ids[1:]}
    assert "another session" in rejected[str(theirs["observation"]["id"])]
    assert "another session" in rejected[str(anonymous["observation"]["id"])]
    assert rejected["987654"] == "no such observation"
    assert ok(http, "search_observations", {"query": "spring release"})["observations"] == []
    assert ok(http, "stats", {})["observations"] == 2

    # the body's session wins over the header's
    wins = ok(http, "delete_observations", {"ids": [theirs["observation"]["id"]], "session_id": "s2"}, session="s1")
    assert wins["deleted"] == [theirs["observation"]["id"]] and wins["rejected"] == {}


# -- refusals ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("verb", "body", "field"),
    [
        # refused by the request model
        ("remember", {"content": "x", "subject_names": ["Ana"], "confidence": 1.5}, "confidence"),
        ("remember", {"content": "x", "subject_names": []}, "subject_names"),
        ("remember", {"content": "x" * (MAX_CONTENT + 1), "subject_names": ["Ana"]}, "content"),
        ("remember", {"content": "x", "subject_names": ["Ana"], "related_to": [0]}, "related_to[0]"),
        ("remember", {"content": "x", "subject_names": ["Ana"], "subject": "typo"}, "subject"),
        ("remember", {"subject_names": ["Ana"]}, "content"),
        ("create_subjects", {"names": ["n"] * (MAX_SUBJECTS + 1)}, "names"),
        (
            "add_observations",
            {"observations": [{"content": f"n{i}", "subject_names": ["A"]} for i in range(MAX_BATCH_OBSERVATIONS + 1)]},
            "observations",
        ),
        (
            "add_observations",
            {"observations": [{"content": "x", "subject_names": ["A"], "kind": ""}]},
            "observations[0].kind",
        ),
        ("delete_observations", {"ids": [], "session_id": "s1"}, "ids"),
        ("mark_useful", {"ids": [1] * (MAX_IDS + 1)}, "ids"),
        ("create_understanding", {"content": "x", "summary": "y", "kind": "gossip"}, "kind"),
        ("search_observations", {"query": "tea", "limit": 0}, "limit"),
        ("open_around", {"subject_name": "Ana", "limit": 101}, "limit"),
        ("stats", {"user_id": ""}, "user_id"),
        # refused by the engine, through the same error contract
        ("remember", {"content": "   ", "subject_names": ["Ana"]}, "content"),
        ("create_subjects", {"names": ["  "]}, "names"),
        ("add_observations", {"observations": [{"content": "   ", "subject_names": ["A"]}]}, "observations[0].content"),
        ("create_understanding", {"content": "x", "summary": "y", "subject_names": ["A", "B", "C"]}, "kind"),
        (
            "create_understanding",
            {"content": "x", "summary": "y", "subject_names": ["A"], "kind": "soul"},
            "subject_names",
        ),
        ("create_understanding", {"content": "x", "summary": "y", "kind": "structural"}, "subject_names"),
        (
            "create_understanding",
            {"content": "x", "summary": "y", "subject_names": ["A"], "source_observation_ids": [987_654]},
            "source_observation_ids",
        ),
        ("search_observations", {"query": "   "}, "query"),
    ],
)
def test_bad_requests_are_a_400_naming_the_field_and_write_nothing(
    http: httpx.Client, served: Served, verb: str, body: dict[str, Any], field: str
) -> None:
    before = table_counts(served.vault)
    error = assert_error(call(http, verb, body), 400, "validation_error")
    assert error["details"]["field"] == field, error  # type: ignore[index]
    assert table_counts(served.vault) == before


def test_an_invalid_observation_in_a_batch_is_named_and_those_before_it_are_kept(http: httpx.Client) -> None:
    body = {
        "observations": [
            {"content": "First of the batch.", "subject_names": ["Ana"]},
            {"content": "Second of the batch.", "subject_names": ["Ana"], "related_to": [987_654]},
        ]
    }
    assert_error(call(http, "add_observations", body), 404, "not_found")  # no understanding 987654
    kept = ok(http, "search_observations", {"query": "batch"})["observations"]
    assert [o["content"] for o in kept] == ["First of the batch."]
    body["observations"][1] = {"content": "Second of the batch.", "subject_names": ["Ana"]}
    again = ok(http, "add_observations", body)["results"]  # sending it again is harmless
    assert [r["duplicate"] for r in again] == [True, False]


@pytest.mark.parametrize(
    ("verb", "body"),
    [
        ("update_subject_summary", {"subject_name": "Nobody", "summary": "x"}),
        ("open_intersection", {"subject_a": "Ana", "subject_b": "Nobody"}),
        ("open_around", {"subject_name": "Nobody"}),
        ("search_observations", {"query": "tea", "subject_names": ["Nobody"]}),
        ("get_understandings", {"subject_names": ["Ana", "Nobody"]}),
        ("update_understanding", {"understanding_id": 987_654, "new_content": "x", "new_summary": "y"}),
        ("understanding_history", {"understanding_id": 987_654}),
    ],
)
def test_unknown_subjects_and_understandings_are_a_404(
    http: httpx.Client, served: Served, verb: str, body: dict[str, Any]
) -> None:
    ok(http, "create_subjects", {"names": ["Ana"]})
    before = table_counts(served.vault)
    error = assert_error(call(http, verb, body), 404, "not_found")
    assert error["details"]["kind"] in {"subject", "understanding"}  # type: ignore[index]
    assert table_counts(served.vault) == before


def test_the_same_subject_twice_is_not_an_intersection(http: httpx.Client) -> None:
    ok(http, "create_subjects", {"names": ["Ana"]})
    error = assert_error(call(http, "open_intersection", {"subject_a": "Ana", "subject_b": "ana"}), 400)
    assert error["details"]["field"] == "subject_b"  # type: ignore[index]


def test_a_session_header_out_of_bounds_is_refused(http: httpx.Client) -> None:
    body = {"content": "x", "subject_names": ["Ana"]}
    error = assert_error(call(http, "remember", body, session="s" * 201), 400, "validation_error")
    assert error["details"]["field"] == "X-Session-Id"  # type: ignore[index]


# -- MCP ---------------------------------------------------------------------------------------------------------
def test_the_workspace_tools_are_listed_and_described(served: Served) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(served, body) if t.name in WORKSPACE_TOOLS}
    assert set(tools) == WORKSPACE_TOOLS
    for name, listed in tools.items():
        assert listed.description and len(listed.description) > 40, name
        assert listed.output_schema is not None, name
    assert tools["remember"].input_schema["required"] == ["content", "subject_names"]
    assert tools["delete_observations"].input_schema["required"] == ["ids", "session_id"]
    assert tools["delete_observations"].annotations.destructive_hint is True
    assert tools["update_understanding"].input_schema["required"] == [
        "understanding_id",
        "new_content",
        "new_summary",
    ]
    for read_only in ("get_subjects", "search_observations", "open_intersection", "open_around", "stats"):
        assert tools[read_only].annotations.read_only_hint is True, read_only
    assert tools["remember"].annotations.read_only_hint is False


def test_every_verb_over_mcp(served: Served) -> None:
    async def body(client: Client) -> dict[str, Any]:
        async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(name, arguments)
            assert result.is_error is False, (name, text_of(result))
            return result.structured_content

        out: dict[str, Any] = {}
        out["created"] = await call_tool("create_subjects", {"names": ["Ana", "Bob"], "kind": "person"})
        out["found"] = await call_tool("get_subjects", {"names": ["Ana", "Nobody"]})
        out["summary"] = await call_tool("update_subject_summary", {"subject_name": "Ana", "summary": "Designer."})
        out["remember"] = await call_tool(
            "remember",
            {"content": "Ana and Bob share a flat.", "subject_names": ["Ana", "Bob"], "session_id": "mcp-1"},
        )
        out["added"] = await call_tool(
            "add_observations",
            {
                "observations": [
                    {"content": "Ana sings in a choir.", "subject_names": ["Ana", "Carla"], "confidence": 0.7},
                    {"content": "Ana and Bob share a flat.", "subject_names": ["Ana", "Bob"]},
                ],
                "session_id": "mcp-1",
            },
        )
        note_id = out["remember"]["observation"]["id"]
        out["search"] = await call_tool("search_observations", {"query": "flat", "subject_names": ["Bob"]})
        out["understanding"] = await call_tool(
            "create_understanding",
            {
                "content": "Flatmates.",
                "summary": "flatmates",
                "subject_names": ["Ana", "Bob"],
                "source_observation_ids": [note_id],
            },
        )
        first_id = out["understanding"]["id"]
        out["revised"] = await call_tool(
            "update_understanding",
            {"understanding_id": first_id, "new_content": "Old friends and flatmates.", "new_summary": "friends"},
        )
        out["current"] = await call_tool("get_understandings", {"subject_names": ["Ana", "Bob"]})
        out["history"] = await call_tool("understanding_history", {"understanding_id": first_id})
        out["structural"] = await call_tool(
            "set_structural_understanding", {"subject_name": "Ana", "content": "Ana is also called Annie."}
        )
        out["useful"] = await call_tool("mark_useful", {"ids": [note_id]})
        out["doubt"] = await call_tool("mark_questionable", {"ids": [first_id]})
        out["between"] = await call_tool("open_intersection", {"subject_a": "Ana", "subject_b": "Bob"})
        out["around"] = await call_tool("open_around", {"subject_name": "Ana"})
        out["deleted"] = await call_tool(
            "delete_observations", {"ids": [out["added"]["results"][0]["observation"]["id"]], "session_id": "mcp-1"}
        )
        out["stats"] = await call_tool("stats", {})
        return out

    out = run(served, body)
    assert out["created"]["subjects_created"] == ["Ana", "Bob"]
    assert out["found"]["missing"] == ["Nobody"] and out["found"]["subjects"][0]["kind"] == "person"
    assert out["summary"]["summary"] == "Designer."
    assert out["remember"]["duplicate"] is False and out["remember"]["observation"]["session_id"] == "mcp-1"
    assert [r["duplicate"] for r in out["added"]["results"]] == [False, True]
    assert out["added"]["results"][0]["subjects_created"] == ["Carla"]
    assert [o["content"] for o in out["search"]["observations"]] == ["Ana and Bob share a flat."]
    assert out["understanding"]["kind"] == "relationship"
    revised = out["revised"]
    assert revised["supersedes"] == out["understanding"]["id"] and revised["active"] is True
    assert [u["id"] for u in out["current"]["understandings"]] == [revised["id"]]
    assert [u["id"] for u in out["history"]["understandings"]] == [out["understanding"]["id"], revised["id"]]
    assert out["structural"]["kind"] == "structural"
    assert out["useful"]["marked"] == {str(out["remember"]["observation"]["id"]): "observation"}
    assert out["doubt"]["marked"] == {str(out["understanding"]["id"]): "understanding"}
    assert out["between"]["size"] == 2 and [u["id"] for u in out["between"]["understandings"]] == [revised["id"]]
    assert [n["name"] for n in out["around"]["neighbours"]] == ["Bob", "Carla"]
    assert out["deleted"]["deleted"] == [out["added"]["results"][0]["observation"]["id"]]
    assert out["stats"]["observations"] == 1 and out["stats"]["superseded_understandings"] == 1


def test_mcp_answers_what_rest_answers(served: Served, http: httpx.Client) -> None:
    ok(http, "remember", {"content": "Ana and Bob share a flat.", "subject_names": ["Ana", "Bob"]}, session="s1")
    ok(http, "remember", {"content": "Ana sings in a choir.", "subject_names": ["Ana", "Carla"]})
    first = ok(
        http, "create_understanding", {"content": "Flatmates.", "summary": "flat", "subject_names": ["Ana", "Bob"]}
    )
    ok(http, "update_understanding", {"understanding_id": first["id"], "new_content": "Friends.", "new_summary": "f"})
    reads: list[tuple[str, dict[str, Any]]] = [
        ("get_subjects", {"names": ["Ana", "Nobody"]}),
        ("search_observations", {"query": "Ana", "subject_names": ["Ana"]}),
        ("get_understandings", {"subject_names": ["Bob"]}),
        ("understanding_history", {"understanding_id": first["id"]}),
        ("open_intersection", {"subject_a": "Ana", "subject_b": "Bob"}),
        ("open_around", {"subject_name": "Ana", "limit": 5}),
        ("stats", {}),
    ]

    async def body(client: Client) -> list[Any]:
        return [(await client.call_tool(name, arguments)).structured_content for name, arguments in reads]

    over_mcp = run(served, body)
    for (name, arguments), answered in zip(reads, over_mcp, strict=True):
        assert answered == ok(http, name, arguments), name
    # a write answers the same shape both ways (a duplicate: the same observation)
    again = tool(served, "remember", {"content": "Ana sings in a choir.", "subject_names": ["Ana"]})
    assert again.structured_content == ok(
        http, "remember", {"content": "Ana sings in a choir.", "subject_names": ["Ana"]}
    )


def test_the_session_rule_over_mcp(served: Served) -> None:
    ws = served.vault.workspace
    mine = ws.remember("Mine to delete.", ["Ana"], session_id="mcp-a").observation
    theirs = ws.remember("Theirs to keep.", ["Ana"], session_id="mcp-b").observation
    done = tool(served, "delete_observations", {"ids": [mine.id, theirs.id], "session_id": "mcp-a"})
    assert done.structured_content["deleted"] == [mine.id]
    assert "another session" in done.structured_content["rejected"][str(theirs.id)]
    missing = tool(served, "delete_observations", {"ids": [theirs.id]})
    assert missing.is_error and "session_id" in text_of(missing)
    assert ws.observation(theirs.id).content == "Theirs to keep."


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("remember", {"content": "   ", "subject_names": ["Ana"]}, "[validation_error] content: must not be empty"),
        ("remember", {"content": "x", "subject_names": ["Ana"], "confidence": 2}, "confidence"),
        (
            "add_observations",
            {"observations": [{"content": "  ", "subject_names": ["Ana"]}]},
            "[validation_error] observations[0].content",
        ),
        ("open_intersection", {"subject_a": "Ana", "subject_b": "Nobody"}, "[not_found] No subject"),
        ("open_around", {"subject_name": "Nobody"}, "[not_found] No subject"),
        ("understanding_history", {"understanding_id": 987_654}, "[not_found] No understanding"),
        ("create_understanding", {"content": "x", "summary": "y", "subject_names": ["A", "B", "C"]}, "kind"),
        ("create_understanding", {"content": "x", "summary": "y", "kind": "gossip"}, "kind"),
        ("mark_useful", {"ids": []}, "ids"),
    ],
)
def test_refusals_over_mcp_are_readable_tool_errors(
    served: Served, name: str, arguments: dict[str, Any], expected: str
) -> None:
    served.vault.workspace.create_subjects(["Ana"])
    before = table_counts(served.vault)
    result = tool(served, name, arguments)
    assert result.is_error is True
    assert expected in text_of(result)
    assert "Traceback" not in text_of(result)
    assert table_counts(served.vault) == before


def test_the_mcp_supersession_chain_refuses_a_stale_revision(served: Served) -> None:
    async def body(client: Client) -> tuple[Any, Any, Any]:
        made = await client.call_tool(
            "create_understanding", {"content": "Ana is in Lisbon.", "summary": "Ana", "subject_names": ["Ana"]}
        )
        first = made.structured_content["id"]
        await client.call_tool(
            "update_understanding", {"understanding_id": first, "new_content": "Ana is in Porto.", "new_summary": "A"}
        )
        stale = await client.call_tool(
            "update_understanding", {"understanding_id": first, "new_content": "Ana is in Faro.", "new_summary": "A"}
        )
        history = await client.call_tool("understanding_history", {"understanding_id": first})
        return first, stale, history.structured_content

    first, stale, history = run(served, body)
    assert stale.is_error and text_of(stale).startswith("[validation_error] understanding_id: ")
    assert [u["content"] for u in history["understandings"]] == ["Ana is in Lisbon.", "Ana is in Porto."]
    assert history["understandings"][0]["id"] == first


# -- the models in step with the engine --------------------------------------------------------------------------
def test_the_understanding_kinds_are_the_engines() -> None:
    assert get_args(UnderstandingKind) == UNDERSTANDING_KINDS


def test_the_openapi_document_describes_every_workspace_verb(http: httpx.Client) -> None:
    document = http.get("/openapi.json").json()
    verbs = {path.rsplit("/", 1)[-1] for path in document["paths"] if path.startswith("/v6/workspace/")}
    assert verbs == WORKSPACE_TOOLS  # the REST verbs are the MCP tools
    remember = document["paths"]["/v6/workspace/remember"]["post"]
    assert any(p["name"] == "X-Session-Id" and p["in"] == "header" for p in remember["parameters"])
    assert {"200", "400", "404"} <= set(remember["responses"])


def test_a_tool_call_and_a_request_write_to_the_same_workspace(served: Served, http: httpx.Client) -> None:
    made = tool(
        served, "remember", {"content": "The kettle is blue.", "subject_names": ["Kitchen"], "session_id": "mcp-k"}
    )
    assert made.is_error is False
    found = ok(http, "search_observations", {"query": "kettle"})["observations"]
    assert [(o["id"], o["content"], o["session_id"]) for o in found] == [
        (made.structured_content["observation"]["id"], "The kettle is blue.", "mcp-k")
    ]
    # and the session that wrote it over MCP deletes it over REST
    done = ok(http, "delete_observations", {"ids": [found[0]["id"]]}, session="mcp-k")
    assert done["deleted"] == [found[0]["id"]]
