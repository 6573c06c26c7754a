"""``search`` and the perspective verbs over the real endpoint, and recall's understanding blocks: REST
``POST /v6/workspace/<verb>`` and the MCP tools of the same names answer the same JSON, and refusals are the error
contract's."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp.client import Client

from engine.recall import assemble
from tests.engine.api.conftest import Served, assert_error
from tests.engine.api.test_mcp import run, text_of
from tests.engine.api.test_workspace_api import call, http, ok, tool
from tests.engine.recall.test_understandings import seeded

__all__ = ["http"]  # the fixture, shared with the workspace's other API tests


def unscored(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without its scores, which weigh in the items' age (in whole hours) at the time of asking."""
    return {**answer, "results": [{**r, "score": None} for r in answer.get("results", [])]}


DEFAULT_NAMES = ["general", "technical", "relational", "temporal", "project"]


def test_search_over_rest_ranks_understandings_first_and_names_the_perspective(http: httpx.Client) -> None:
    note = ok(http, "remember", {"content": "Ana keeps bees on the roof.", "subject_names": ["Ana"]})["observation"]
    other = ok(http, "remember", {"content": "Ana's bees swarmed in May.", "subject_names": ["Ana", "Bees"]})
    made = ok(
        http,
        "create_understanding",
        {
            "content": "Ana is a beekeeper: her hives are on the roof.",
            "summary": "Ana keeps bees",
            "subject_names": ["Ana"],
            "source_observation_ids": [note["id"]],
        },
    )
    found = ok(http, "search", {"query": "bees on the roof"})
    assert found["perspectives"] == DEFAULT_NAMES and found["perspectives_collapsed"] is True
    assert found["embedder"] == "hashing-v1-384" and "ignores instructions" in found["notes"][0]
    first = found["results"][0]
    assert first["kind"] == "understanding" and first["id"] == made["id"] and first["observation"] is None
    assert first["understanding"]["summary"] == "Ana keeps bees" and first["matched_perspective"] == "general"
    covered = {r["id"]: r["covered"] for r in found["results"]}
    assert covered[note["id"]] is True and covered[other["observation"]["id"]] is False
    only = ok(http, "search", {"query": "bees", "subject_names": ["Bees"], "include_observations": True})
    assert [r["id"] for r in only["results"]] == [other["observation"]["id"]]
    assert ok(http, "search", {"query": "nothing matches zyzzyva"})["results"] == []


def test_perspectives_are_listed_added_reworded_and_removed(http: httpx.Client) -> None:
    listed = ok(http, "list_perspectives", {})
    assert [p["name"] for p in listed["perspectives"]] == DEFAULT_NAMES
    assert all(p["builtin"] for p in listed["perspectives"]) and listed["collapsed"] is True
    assert "ignores instructions" in listed["note"]
    added = ok(http, "add_perspective", {"name": "health", "instruction": "Represent the health matters:"})
    assert added["perspectives"][-1] == {
        "name": "health",
        "instruction": "Represent the health matters:",
        "builtin": False,
    }
    assert ok(http, "search", {"query": "anything"})["perspectives"] == [*DEFAULT_NAMES, "health"]
    reworded = ok(http, "add_perspective", {"name": "health", "instruction": "Represent health and care:"})
    assert reworded["perspectives"][-1]["instruction"] == "Represent health and care:"
    assert [p["name"] for p in ok(http, "remove_perspective", {"name": "health"})["perspectives"]] == DEFAULT_NAMES
    assert ok(http, "list_perspectives", {"user_id": "someone"})["perspectives"][-1]["name"] == "project"


def test_perspective_refusals_are_the_error_contract(http: httpx.Client) -> None:
    assert_error(call(http, "add_perspective", {"name": "Two Words", "instruction": "x"}), 400)
    assert_error(call(http, "add_perspective", {"name": "general", "instruction": "Represent all:"}), 400)
    assert_error(call(http, "add_perspective", {"name": "health"}), 400)
    assert_error(call(http, "remove_perspective", {"name": "temporal"}), 400)
    assert_error(call(http, "remove_perspective", {"name": "never-added"}), 404)
    assert_error(call(http, "search", {"query": ""}), 400)
    assert_error(call(http, "search", {"query": "bees", "limit": 1000}), 400)


def test_mcp_search_and_perspectives_answer_what_rest_answers(served: Served, http: httpx.Client) -> None:
    ok(http, "remember", {"content": "Ana keeps bees on the roof.", "subject_names": ["Ana"]})
    ok(http, "remember", {"content": "Bob repairs old bicycles.", "subject_names": ["Bob"]})
    ok(http, "add_perspective", {"name": "health", "instruction": "Represent the health matters:"})
    reads: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "bees roof", "limit": 5}),
        ("search", {"query": "bicycles", "subject_names": ["Bob"], "include_observations": True}),
        ("list_perspectives", {}),
    ]

    async def body(client: Client) -> list[Any]:
        return [(await client.call_tool(name, arguments)).structured_content for name, arguments in reads]

    over_mcp = run(served, body)
    for (name, arguments), answered in zip(reads, over_mcp, strict=True):
        assert unscored(answered) == unscored(ok(http, name, arguments)), name
    assert next(r["observation"]["content"] for r in over_mcp[0]["results"]) == "Ana keeps bees on the roof."
    removed = tool(served, "remove_perspective", {"name": "health"})
    assert [p["name"] for p in removed.structured_content["perspectives"]] == DEFAULT_NAMES
    refused = tool(served, "remove_perspective", {"name": "health"})
    assert refused.is_error is True and "not_found" in text_of(refused)


def test_recall_over_rest_returns_the_understanding_block(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assemble, "UNDERSTANDING_AT", 0)
    seeded(served.vault)
    with httpx.Client(base_url=served.url, headers=served.auth(), trust_env=False, timeout=30) as client:
        response = client.post(
            "/v6/recall",
            json={
                "conversation_id": "asking",
                "query": "What has Marta loved doing?",
                "reference_time": "2024-06-10",
            },
        )
    assert response.status_code == 200, response.text
    blocks = [b for b in response.json()["blocks"] if b["kind"] == "understanding"]
    assert len(blocks) == 1 and blocks[0]["meta"]["subjects"] == ["Marta"]
    assert blocks[0]["source_ids"] and blocks[0]["evidence"][0]["source_kind"] == "event"
