"""The workspace's sessions, recall, consolidation and merges over REST (``POST /v6/workspace/<verb>`` on a real
loopback server) and over MCP (the official SDK's client against ``/mcp``): orient, bring_to_mind and its seen log,
reset_seen, recall in subject and question mode, consolidation run and queued, the report, similar subjects and
merges; the session required, refusals naming the field, and the same JSON both ways."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from app.plugins import build_plugin_manager
from engine import Settings, Vault
from engine.api.app import create_app
from engine.api.server import EndpointServer
from engine.workspace import CONSOLIDATE_JOB
from tests.engine.api.conftest import OFFLINE, Served, assert_error, table_counts
from tests.engine.api.test_mcp import run, text_of
from tests.engine.api.test_workspace_api import call, ok, tool

SESSION_VERBS = ("orient", "bring_to_mind", "reset_seen")


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    """A client of the real server on loopback, with the token."""
    with httpx.Client(base_url=served.url, headers=served.auth(), trust_env=False, timeout=30) as client:
        yield client


@pytest.fixture
def idle_http(tmp_path: Path) -> Iterator[tuple[httpx.Client, Vault]]:
    """A client of a real server over a vault whose job workers do not run: a queued job stays queued."""
    vault = Vault.open(
        tmp_path / "idle",
        settings=Settings().updated(OFFLINE),
        plugins=build_plugin_manager(load_entry_points=False),
        start_workers=False,
    )
    token = vault.endpoint_token()
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    try:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=server.address, headers=headers, trust_env=False, timeout=30) as client:
            yield client, vault
    finally:
        server.stop()
        vault.close()


def ids(items: list[dict[str, Any]]) -> list[int]:
    return [int(item["id"]) for item in items]


# -- orient, bring_to_mind, reset_seen ---------------------------------------------------------------------------
def test_orient_returns_the_soul_written_before_and_the_newest_activity(http: httpx.Client) -> None:
    soul = ok(
        http,
        "create_understanding",
        {"content": "Help Ana remember what matters to her.", "summary": "Help Ana remember.", "kind": "soul"},
    )
    note = ok(http, "remember", {"content": "Ana prefers short morning meetings.", "subject_names": ["Ana"]})
    oriented = ok(http, "orient", {}, session="s1")
    assert set(oriented) == {
        "soul",
        "protocol",
        "orientation",
        "pending_consolidation",
        "recent_observations",
        "recent_understandings",
        "heartbeat_token",
    }
    assert oriented["soul"] == soul and oriented["soul"]["summary"] == "Help Ana remember."
    assert oriented["protocol"] is None and oriented["orientation"] is None
    assert oriented["pending_consolidation"] == 1  # Ana has evidence no pass has seen
    assert ids(oriented["recent_observations"]) == [note["observation"]["id"]]
    assert ids(oriented["recent_understandings"]) == [soul["id"]]
    assert oriented["heartbeat_token"]
    # the body's session wins over the header's; `recent` bounds the lists
    ok(http, "remember", {"content": "Bob reviews every pull request.", "subject_names": ["Bob"]})
    fewer = ok(http, "orient", {"session_id": "s2", "recent": 1}, session="s1")
    assert [o["content"] for o in fewer["recent_observations"]] == ["Bob reviews every pull request."]
    assert fewer["heartbeat_token"] != oriented["heartbeat_token"]


def test_bring_to_mind_brings_only_what_is_new_and_a_wrong_token_means_compacted(http: httpx.Client) -> None:
    note = ok(http, "remember", {"content": "Ana prefers short morning meetings.", "subject_names": ["Ana"]})
    picture = ok(
        http,
        "create_understanding",
        {"content": "Ana works best in the morning.", "summary": "Ana: mornings", "subject_names": ["Ana"]},
    )
    token = ok(http, "orient", {"session_id": "s1"})["heartbeat_token"]

    first = ok(http, "bring_to_mind", {"topic_or_context": "Planning a meeting with Ana", "last_token": token}, "s1")
    assert ids(first["understandings"]) == [picture["id"]]
    assert ids(first["observations"]) == [note["observation"]["id"]]
    assert (first["compacted"], first["already_seen"]) == (False, 0)

    # the same topic again, with the token just issued: nothing new
    body = {"topic_or_context": "Planning a meeting with Ana", "session_id": "s1"}
    second = ok(http, "bring_to_mind", {**body, "last_token": first["heartbeat_token"]})
    assert (second["understandings"], second["observations"]) == ([], [])
    assert (second["compacted"], second["already_seen"]) == (False, 2)

    # include_seen brings the seen items back without starting the log again
    again = ok(http, "bring_to_mind", {**body, "last_token": second["heartbeat_token"], "include_seen": True})
    assert ids(again["understandings"]) == [picture["id"]] and again["compacted"] is False

    # a token that is not the last one issued: the context was lost, everything comes back
    lost = ok(http, "bring_to_mind", {**body, "last_token": first["heartbeat_token"]})
    assert lost["compacted"] is True
    assert ids(lost["understandings"]) == [picture["id"]] and ids(lost["observations"]) == [note["observation"]["id"]]

    # another session has seen nothing
    other = ok(http, "bring_to_mind", {**body, "session_id": "s2"})
    assert ids(other["understandings"]) == [picture["id"]] and other["compacted"] is False

    # reset_seen empties this session's log (the token stays good): the next call repeats
    assert ok(http, "reset_seen", {"session_id": "s1"}) == {"cleared": 2}
    repeated = ok(http, "bring_to_mind", {**body, "last_token": lost["heartbeat_token"]})
    assert repeated["compacted"] is False and ids(repeated["understandings"]) == [picture["id"]]
    assert ok(http, "reset_seen", None, session="s9") == {"cleared": 0}
    assert ok(http, "orient", None, session="s9")["heartbeat_token"]  # the header alone names the session


@pytest.mark.parametrize(
    ("verb", "body"),
    [
        ("orient", {}),
        ("orient", None),
        ("bring_to_mind", {"topic_or_context": "Ana"}),
        ("reset_seen", {"user_id": "default"}),
        ("reset_seen", None),
    ],
)
def test_the_session_is_required(http: httpx.Client, served: Served, verb: str, body: dict[str, Any] | None) -> None:
    ok(http, "remember", {"content": "Ana likes tea.", "subject_names": ["Ana"]})
    assert served.vault.jobs.wait_idle(60)  # the note's own background work (its vectors) is not the request's
    before = table_counts(served.vault)
    error = assert_error(call(http, verb, body), 400, "validation_error")
    assert error["details"]["field"] == "session_id"  # type: ignore[index]
    assert "session_id" in str(error["message"])
    assert table_counts(served.vault) == before


# -- recall ------------------------------------------------------------------------------------------------------
def test_recall_in_subject_mode_and_in_question_mode(http: httpx.Client, served: Served) -> None:
    lisbon = served.vault.facts.add("Ana", "lives_in", "Lisbon")
    note = ok(http, "remember", {"content": "Ana prefers short morning meetings.", "subject_names": ["Ana"]})
    picture = ok(
        http,
        "create_understanding",
        {"content": "Ana lives in Lisbon and works mornings.", "summary": "Ana", "subject_names": ["Ana"]},
    )

    subject = ok(http, "recall", {"query": "ana"})  # exactly a subject's name (in any case)
    assert subject["mode"] == "subject" and subject["subject"]["name"] == "Ana"
    assert ids(subject["understandings"]) == [picture["id"]]
    assert ids(subject["observations"]) == [note["observation"]["id"]]
    assert (subject["best_answer"], subject["supporting"], subject["provenance"]) == (None, [], [])

    question = ok(http, "recall", {"query": "Where does Ana live?"})
    assert question["mode"] == "question" and question["subject"] is None and question["observations"] == []
    best = question["best_answer"]
    assert (best["kind"], best["id"], best["content"]) == ("fact", lisbon.id, "Ana lives in Lisbon")
    returned = [best, *question["supporting"]]
    assert [(p["id"], p["kind"]) for p in question["provenance"]] == [(b["id"], b["kind"]) for b in returned]
    assert question["provenance"][0]["evidence"] == best["evidence"]
    assert question["provenance"][0]["source_ids"] == best["source_ids"]
    assert ids(question["understandings"]) == [picture["id"]]  # the understandings of the subject it names

    nothing = ok(http, "recall", {"query": "What colour is the moon of Nowhere?"})
    assert nothing["mode"] == "question" and nothing["understandings"] == []


# -- consolidation -----------------------------------------------------------------------------------------------
def test_consolidate_writes_understandings_from_what_was_remembered(http: httpx.Client) -> None:
    for content in ("Ana and Bob share a flat.", "Ana and Bob met at university.", "Ana and Bob cook on Sundays."):
        ok(http, "remember", {"content": content, "subject_names": ["Ana", "Bob"]})
    ok(http, "remember", {"content": "Carla sings in a choir.", "subject_names": ["Carla"]})
    assert ok(http, "pending_consolidation", {}) == {"pending_subjects": 3}

    done = ok(http, "consolidate", {})
    assert set(done) == {"generation", "subjects_written", "relationships_written", "unchanged", "writer", "warnings"}
    assert done["generation"] == 1 and sorted(done["subjects_written"]) == ["Ana", "Bob", "Carla"]
    assert done["relationships_written"] == [["Ana", "Bob"]]
    assert (done["unchanged"], done["writer"], done["warnings"]) == (0, "extractive", [])
    (ana,) = ok(http, "get_understandings", {"subject_names": ["Ana"], "kind": "single_subject"})["understandings"]
    assert ana["source"] == "consolidation" and "Ana and Bob share a flat." in ana["content"]
    (pair,) = ok(http, "get_understandings", {"subject_names": ["Ana", "Bob"], "kind": "relationship"})[
        "understandings"
    ]
    assert len(pair["sources"]) == 3
    assert ok(http, "pending_consolidation", None) == {"pending_subjects": 0}

    # nothing changed since: the next pass writes nothing
    again = ok(http, "consolidate", None)
    assert again["generation"] == 2 and again["subjects_written"] == [] and again["relationships_written"] == []
    assert ok(http, "stats", {})["generation"] == 2


def test_a_background_consolidation_is_queued_once(idle_http: tuple[httpx.Client, Vault]) -> None:
    http, vault = idle_http
    ok(http, "remember", {"content": "Hamid works as an accountant.", "subject_names": ["Hamid"]})
    queued = ok(http, "consolidate", {"background": True})
    assert queued["queued"] is True and isinstance(queued["job_id"], int)
    assert set(queued) == {"queued", "job_id"}
    assert ok(http, "consolidate", {"background": True}) == {"queued": False, "job_id": None}  # one at a time
    jobs = vault.store.query("SELECT id, kind FROM jobs WHERE kind = ?", (CONSOLIDATE_JOB,))
    assert [(int(r[0]), str(r[1])) for r in jobs] == [(queued["job_id"], CONSOLIDATE_JOB)]
    assert ok(http, "consolidate", {"background": True, "user_id": "other"})["queued"] is True  # per user
    assert ok(http, "stats", {})["generation"] == 0  # queued, not run


def test_the_consolidation_report_lists_what_to_look_at(http: httpx.Client) -> None:
    empty = ok(http, "consolidation_report", None)
    assert empty == {
        "generation": 0,
        "pending_subjects": 0,
        "subjects_needing_understanding": [],
        "stale_understandings": [],
        "intersections_needing_synthesis": [],
        "dense_intersections": [],
        "unlinked_observations": [],
        "questionable": [],
    }
    notes = [
        ok(http, "remember", {"content": content, "subject_names": ["Ana", "Bob"]})["observation"]["id"]
        for content in ("Ana and Bob share a flat.", "Ana and Bob met at university.", "Ana and Bob cook.")
    ]
    ok(http, "create_subjects", {"names": ["Cairn", "Cairn project"]})
    ok(http, "update_subject_summary", {"subject_name": "Cairn", "summary": "Local memory vault software"})
    ok(http, "update_subject_summary", {"subject_name": "Cairn project", "summary": "Local memory vault project"})
    ok(http, "mark_questionable", {"ids": [notes[0]]})
    report = ok(http, "consolidation_report", {"limit": 10})
    assert report["generation"] == 0 and report["pending_subjects"] == 2
    assert report["subjects_needing_understanding"] == [{"name": "Ana", "items": 3}, {"name": "Bob", "items": 3}]
    assert report["intersections_needing_synthesis"] == [{"subject_a": "Ana", "subject_b": "Bob", "shared": 3}]
    (dense,) = report["dense_intersections"]
    assert {dense["subject_a"], dense["subject_b"]} == {"Cairn", "Cairn project"} and 0 < dense["similarity"] <= 1
    assert report["unlinked_observations"] == sorted(notes, reverse=True)
    assert report["questionable"] == [{"id": notes[0], "kind": "observation"}]
    assert report["stale_understandings"] == []
    assert len(ok(http, "consolidation_report", {"limit": 1})["unlinked_observations"]) == 1


# -- similar subjects and merges ---------------------------------------------------------------------------------
def test_similar_subjects_are_found_and_merged(http: httpx.Client, served: Served) -> None:
    ok(http, "create_subjects", {"names": ["Bob Smith", "Bob", "Carla"]})
    ok(http, "remember", {"content": "Bob plays the cello.", "subject_names": ["Bob"]})
    similar = ok(http, "find_similar_subjects", {"subject_name": "Bob Smith"})["subjects"]
    assert [s["name"] for s in similar] == ["Bob"] and similar[0]["score"] >= 0.85
    assert set(similar[0]) == {"subject_id", "name", "score"}
    assert ok(http, "find_similar_subjects", {"subject_name": "Bob Smith", "threshold": 0.99}) == {"subjects": []}

    kept = ok(http, "merge_subjects", {"subject_name": "Bob Smith", "names": ["Bob"]})
    assert kept["name"] == "Bob Smith" and "Bob" in kept["aliases"]
    assert [s["name"] for s in ok(http, "get_subjects", {"names": ["Bob"]})["subjects"]] == ["Bob Smith"]
    notes = ok(http, "search_observations", {"query": "cello", "subject_names": ["Bob Smith"]})["observations"]
    assert [o["content"] for o in notes] == ["Bob plays the cello."]
    (structural,) = ok(http, "get_understandings", {"subject_names": ["Bob Smith"], "kind": "structural"})[
        "understandings"
    ]
    assert "Bob merged into Bob Smith" in structural["content"]

    # into itself: a conflict through the error contract, and nothing written
    before = table_counts(served.vault)
    for names in (["Bob Smith"], ["Bob"]):  # "Bob" is now the keeper's alias
        error = assert_error(
            call(http, "merge_subjects", {"subject_name": "Bob Smith", "names": names}), 409, "conflict"
        )
        assert "itself" in str(error["message"])
    assert_error(call(http, "merge_subjects", {"subject_name": "Bob Smith", "names": ["Nobody"]}), 404, "not_found")
    assert table_counts(served.vault) == before


# -- refusals ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("verb", "body", "field"),
    [
        # refused by the request model
        ("orient", {"session_id": "s1", "recent": 51}, "recent"),
        ("orient", {"session_id": ""}, "session_id"),
        ("bring_to_mind", {"topic_or_context": "", "session_id": "s1"}, "topic_or_context"),
        ("bring_to_mind", {"topic_or_context": "Ana", "session_id": "s1", "limit": 0}, "limit"),
        ("bring_to_mind", {"topic_or_context": "Ana", "session_id": "s1", "last_token": ""}, "last_token"),
        ("recall", {"query": ""}, "query"),
        ("recall", {"query": "Ana", "limit": 201}, "limit"),
        ("consolidate", {"background": "later"}, "background"),
        ("consolidation_report", {"limit": 0}, "limit"),
        ("pending_consolidation", {"user_id": ""}, "user_id"),
        ("find_similar_subjects", {"subject_name": "Bob", "threshold": 1.5}, "threshold"),
        ("merge_subjects", {"subject_name": "Bob", "names": []}, "names"),
        ("merge_subjects", {"subject_name": "Bob", "merge": ["Ana"], "names": ["Ana"]}, "merge"),
        # refused by the engine, through the same error contract
        ("bring_to_mind", {"topic_or_context": "   ", "session_id": "s1"}, "topic_or_context"),
        ("orient", {"session_id": "   "}, "session_id"),
        ("merge_subjects", {"subject_name": "Bob", "names": ["  "]}, "names"),
    ],
)
def test_bad_requests_are_a_400_naming_the_field_and_write_nothing(
    http: httpx.Client, served: Served, verb: str, body: dict[str, Any], field: str
) -> None:
    ok(http, "create_subjects", {"names": ["Ana", "Bob"]})
    before = table_counts(served.vault)
    error = assert_error(call(http, verb, body), 400, "validation_error")
    assert error["details"]["field"] == field, error  # type: ignore[index]
    assert table_counts(served.vault) == before


# -- MCP ---------------------------------------------------------------------------------------------------------
NEW_TOOLS = {
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


def test_the_new_tools_are_listed_and_described(served: Served) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(served, body) if t.name in NEW_TOOLS}
    assert set(tools) == NEW_TOOLS
    for name, listed in tools.items():
        assert listed.description and len(listed.description) > 40, name
        assert listed.output_schema is not None, name
    for name in SESSION_VERBS:
        assert "session_id" in tools[name].input_schema["required"], name
    assert tools["bring_to_mind"].input_schema["required"] == ["topic_or_context", "session_id"]
    assert tools["merge_subjects"].input_schema["required"] == ["subject_name", "names"]
    assert tools["merge_subjects"].annotations.destructive_hint is True
    assert "summary" in tools["orient"].description and "compaction" in tools["orient"].description
    for read_only in ("recall", "consolidation_report", "pending_consolidation", "find_similar_subjects"):
        assert tools[read_only].annotations.read_only_hint is True, read_only
    assert tools["consolidate"].annotations.read_only_hint is False
    assert set(tools["recall"].output_schema["properties"]) == {
        "mode",
        "subject",
        "understandings",
        "observations",
        "best_answer",
        "supporting",
        "provenance",
    }


def test_every_new_verb_over_mcp(served: Served) -> None:
    ws = served.vault.workspace
    ws.create_understanding("Help the person remember.", summary="why", kind="soul")
    for content in ("Ana and Bob share a flat.", "Ana and Bob met at university.", "Ana and Bob cook on Sundays."):
        ws.remember(content, ["Ana", "Bob"])
    ws.create_subjects(["Bob Smith"])

    async def body(client: Client) -> dict[str, Any]:
        async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(name, arguments)
            assert result.is_error is False, (name, text_of(result))
            return result.structured_content

        out: dict[str, Any] = {}
        out["oriented"] = await call_tool("orient", {"session_id": "mcp-1"})
        token = out["oriented"]["heartbeat_token"]
        out["first"] = await call_tool(
            "bring_to_mind", {"topic_or_context": "Ana's flat", "session_id": "mcp-1", "last_token": token}
        )
        out["second"] = await call_tool(
            "bring_to_mind",
            {"topic_or_context": "Ana's flat", "session_id": "mcp-1", "last_token": out["first"]["heartbeat_token"]},
        )
        out["lost"] = await call_tool(
            "bring_to_mind", {"topic_or_context": "Ana's flat", "session_id": "mcp-1", "last_token": "stale"}
        )
        out["reset"] = await call_tool("reset_seen", {"session_id": "mcp-1"})
        out["pending"] = await call_tool("pending_consolidation", {})
        out["report"] = await call_tool("consolidation_report", {"limit": 5})
        out["consolidated"] = await call_tool("consolidate", {})
        out["subject"] = await call_tool("recall", {"query": "Ana"})
        out["question"] = await call_tool("recall", {"query": "Who shares a flat with Ana?"})
        out["similar"] = await call_tool("find_similar_subjects", {"subject_name": "Bob"})
        out["merged"] = await call_tool("merge_subjects", {"subject_name": "Bob Smith", "names": ["Bob"]})
        out["itself"] = await client.call_tool("merge_subjects", {"subject_name": "Bob Smith", "names": ["Bob"]})
        out["no_session"] = await client.call_tool("orient", {})
        return out

    out = run(served, body)
    assert out["oriented"]["soul"]["content"] == "Help the person remember."
    assert out["oriented"]["pending_consolidation"] == 2
    assert len(out["first"]["observations"]) == 3 and out["first"]["compacted"] is False
    assert (out["second"]["observations"], out["second"]["already_seen"]) == ([], 3)
    assert out["lost"]["compacted"] is True and len(out["lost"]["observations"]) == 3
    assert out["reset"] == {"cleared": 3}
    assert out["pending"] == {"pending_subjects": 2}
    assert out["report"]["intersections_needing_synthesis"] == [{"subject_a": "Ana", "subject_b": "Bob", "shared": 3}]
    assert sorted(out["consolidated"]["subjects_written"]) == ["Ana", "Bob"]
    assert out["consolidated"]["relationships_written"] == [["Ana", "Bob"]]
    assert out["subject"]["mode"] == "subject" and out["subject"]["subject"]["name"] == "Ana"
    assert {u["kind"] for u in out["subject"]["understandings"]} == {"single_subject", "relationship"}
    assert out["question"]["mode"] == "question" and out["question"]["subject"] is None
    assert [s["name"] for s in out["similar"]["subjects"]] == ["Bob Smith"]
    assert out["merged"]["name"] == "Bob Smith" and "Bob" in out["merged"]["aliases"]
    assert out["itself"].is_error and text_of(out["itself"]).startswith("[conflict] ")
    assert out["no_session"].is_error and "session_id" in text_of(out["no_session"])


def test_mcp_answers_what_rest_answers(served: Served, http: httpx.Client) -> None:
    served.vault.facts.add("Ana", "lives_in", "Lisbon")
    for content in ("Ana and Bob share a flat.", "Ana and Bob met at university.", "Ana and Bob cook on Sundays."):
        ok(http, "remember", {"content": content, "subject_names": ["Ana", "Bob"]})
    ok(http, "create_subjects", {"names": ["Bob Smith"]})
    ok(http, "create_understanding", {"content": "Ana: Lisbon.", "summary": "Ana", "subject_names": ["Ana"]})
    reads: list[tuple[str, dict[str, Any]]] = [
        ("recall", {"query": "Ana"}),
        ("recall", {"query": "Where does Ana live?", "limit": 5}),
        ("consolidation_report", {"limit": 5}),
        ("pending_consolidation", {}),
        ("find_similar_subjects", {"subject_name": "Bob", "threshold": 0.5}),
    ]

    async def body(client: Client) -> list[Any]:
        return [(await client.call_tool(name, arguments)).structured_content for name, arguments in reads]

    over_mcp = run(served, body)
    for (name, arguments), answered in zip(reads, over_mcp, strict=True):
        rest = ok(http, name, arguments)
        if name == "recall" and rest["mode"] == "question":
            for block in (rest["best_answer"], answered["best_answer"]):  # a recall's scores may move a hair
                block.pop("score")
            for blocks in (rest["supporting"], answered["supporting"]):
                for block in blocks:
                    block.pop("score")
        assert answered == rest, name
    # the session verbs answer the same shape both ways (the tokens are new each time)
    oriented = tool(served, "orient", {"session_id": "same"}).structured_content
    assert set(oriented) == set(ok(http, "orient", {"session_id": "same"}))
    brought = tool(served, "bring_to_mind", {"topic_or_context": "flat", "session_id": "same"}).structured_content
    rest_brought = ok(http, "bring_to_mind", {"topic_or_context": "flat", "session_id": "same", "include_seen": True})
    assert set(brought) == set(rest_brought) and ids(brought["observations"]) == ids(rest_brought["observations"])
    # and a pass run over MCP is the same JSON as one run over REST (nothing changed in between: nothing written)
    tool(served, "consolidate", {})
    over_rest = ok(http, "consolidate", {})
    again = tool(served, "consolidate", {}).structured_content
    assert again == {**over_rest, "generation": over_rest["generation"] + 1}


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("bring_to_mind", {"topic_or_context": "   ", "session_id": "s1"}, "[validation_error] topic_or_context"),
        ("bring_to_mind", {"topic_or_context": "Ana"}, "session_id"),
        ("reset_seen", {}, "session_id"),
        ("recall", {"query": ""}, "query"),
        ("merge_subjects", {"subject_name": "Ana", "names": ["Ana"]}, "[conflict] "),
        ("merge_subjects", {"subject_name": "Ana", "names": ["Nobody"]}, "[not_found] No subject"),
        ("merge_subjects", {"subject_name": "Ana", "names": ["   "]}, "[validation_error] names"),
        ("find_similar_subjects", {"subject_name": "Ana", "threshold": 2}, "threshold"),
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


# -- the OpenAPI document ----------------------------------------------------------------------------------------
def test_the_openapi_document_describes_the_new_verbs(http: httpx.Client) -> None:
    document = http.get("/openapi.json").json()
    paths = document["paths"]
    for verb in NEW_TOOLS:
        assert f"/v6/workspace/{verb}" in paths, verb
    for verb in SESSION_VERBS:
        parameters = paths[f"/v6/workspace/{verb}"]["post"]["parameters"]
        assert any(p["name"] == "X-Session-Id" and p["in"] == "header" for p in parameters), verb
    answers = paths["/v6/workspace/consolidate"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert {option["$ref"].rsplit("/", 1)[-1] for option in answers["anyOf"]} == {
        "ConsolidatedOut",
        "ConsolidationQueuedOut",
    }
    assert {"404", "409"} <= set(paths["/v6/workspace/merge_subjects"]["post"]["responses"])
    oriented = document["components"]["schemas"]["OrientedOut"]["properties"]
    assert "compaction" in str(oriented["soul"])
