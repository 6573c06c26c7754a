"""MCP over streamable HTTP on loopback, with the official SDK's client: tools, results, tool
errors, and the endpoint's guard in front of ``/mcp``."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from engine import Vault
from tests.engine.api.conftest import Served, assert_error, table_counts

T = TypeVar("T")

EXPECTED_TOOLS = {
    "ingest_event",
    "recall_context",
    "search_facts",
    "get_object",
    "correct_fact",
    "upload_document",
    "list_collections",
    "forget",
    "list_conversations",
    # the subject workspace (tests/engine/api/test_workspace_api.py)
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

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


@asynccontextmanager
async def connect(served: Served, mode: str = "auto", token: str | None = None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token or served.token}"}
    async with (
        httpx2.AsyncClient(headers=headers, trust_env=False, timeout=30) as http,
        Client(streamable_http_client(f"{served.url}/mcp", http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client


def run(served: Served, body: Callable[[Client], Awaitable[T]], mode: str = "auto") -> T:
    async def go() -> T:
        async with connect(served, mode) as client:
            return await body(client)

    return asyncio.run(go())


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_are_listed_with_descriptions_and_schemas(served: Served, mode: str) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(served, body, mode)}
    assert set(tools) == EXPECTED_TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.output_schema is not None, tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name}"
    assert tools["ingest_event"].input_schema["required"] == ["conversation_id", "content"]
    assert tools["forget"].annotations.destructive_hint is True
    assert tools["search_facts"].annotations.read_only_hint is True
    assert tools["recall_context"].input_schema["required"] == ["conversation_id", "query"]
    assert tools["recall_context"].annotations.read_only_hint is True
    assert "required" not in tools["upload_document"].input_schema  # name+content, or path
    assert tools["upload_document"].annotations.read_only_hint is False
    assert tools["list_collections"].annotations.read_only_hint is True
    recall_out = tools["recall_context"].output_schema["properties"]
    assert set(recall_out) == {"llm_context", "blocks", "routing"}


def test_each_tool_works_on_the_vault(served: Served) -> None:
    vault = served.vault

    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        ingested = await client.call_tool(
            "ingest_event",
            {"conversation_id": "mcp-chat", "content": "I live in Lisbon.", "role": "user"},
        )
        out["ingest"] = ingested.structured_content
        await asyncio.to_thread(vault.jobs.wait_idle, 20)
        out["search"] = (await client.call_tool("search_facts", {"query": "Lisbon"})).structured_content
        fact_id = out["search"]["facts"][0]["id"]
        out["object"] = (await client.call_tool("get_object", {"object_id": fact_id})).structured_content
        out["corrected"] = (
            await client.call_tool("correct_fact", {"fact_id": fact_id, "object_text": "Porto"})
        ).structured_content
        out["history"] = (
            await client.call_tool("search_facts", {"subject": "user", "include_history": True})
        ).structured_content
        out["conversations"] = (await client.call_tool("list_conversations", {})).structured_content
        out["dry_run"] = (
            await client.call_tool("forget", {"conversation_id": "mcp-chat", "dry_run": True})
        ).structured_content
        out["forget"] = (await client.call_tool("forget", {"conversation_id": "mcp-chat"})).structured_content
        return out

    out = run(served, body)
    assert out["ingest"]["status"] == "queued"
    assert [f["statement"] for f in out["search"]["facts"]] == ["User lives in Lisbon"]
    assert out["object"]["kind"] == "fact" and out["object"]["value"]["object_text"] == "Lisbon"
    corrected = out["corrected"]
    assert corrected["object_text"] == "Porto" and corrected["previous_id"] == out["object"]["id"]
    statuses = {f["object_text"]: f["status"] for f in out["history"]["facts"]}
    assert statuses == {"Lisbon": "superseded", "Porto": "active"}
    [conversation] = out["conversations"]["conversations"]
    assert (conversation["conversation_id"], conversation["events"]) == ("mcp-chat", 1)
    assert out["dry_run"]["dry_run"] is True and out["dry_run"]["deleted_counts"]["events"] == 1
    assert out["forget"]["deleted_counts"]["events"] == 1
    assert vault.conversations() == []  # forgotten for real


def test_events_ingested_over_mcp_say_so(served: Served) -> None:
    async def body(client: Client) -> Any:
        return await client.call_tool(
            "ingest_event", {"conversation_id": "c", "content": "I like tea.", "author": "Ana"}
        )

    result = run(served, body)
    stored = served.vault.conversations.event(result.structured_content["event_id"])
    assert (stored.source, stored.author) == ("mcp", "Ana")
    assert json.loads(text_of(result)) == result.structured_content  # text for older clients


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("get_object", {"object_id": 987654}, "[not_found] No object with id 987654."),
        ("correct_fact", {"fact_id": 987654, "object_text": "x"}, "[not_found] No fact"),
        ("forget", {}, "[validation_error] conversation_id: name a conversation"),
        ("forget", {"since": "2026-02-01", "until": "2026-01-01"}, "[validation_error] until"),
        ("ingest_event", {"conversation_id": "c", "content": "   "}, "content: must be non-empty"),
        ("ingest_event", {"conversation_id": "c", "content": "x", "role": "robot"}, "role"),
        ("search_facts", {"limit": 0}, "limit"),
        ("search_facts", {"cursor": "garbage"}, "[validation_error] cursor"),
    ],
)
def test_errors_are_readable_tool_errors(served: Served, tool: str, arguments: dict[str, Any], expected: str) -> None:
    before = table_counts(served.vault)

    async def body(client: Client) -> Any:
        return await client.call_tool(tool, arguments)

    result = run(served, body)
    assert result.is_error is True
    assert expected in text_of(result)
    assert "Traceback" not in text_of(result)
    assert table_counts(served.vault) == before


def test_a_correction_of_an_old_version_is_refused_with_the_fix(served: Served) -> None:
    fact = served.vault.facts.add("user", "likes", "tea")
    served.vault.facts.edit(fact.id, object_text="coffee")

    async def body(client: Client) -> Any:
        return await client.call_tool("correct_fact", {"fact_id": fact.id, "object_text": "water"})

    result = run(served, body)
    assert result.is_error and text_of(result).startswith("[conflict] ")
    assert "Fix: Restore it first" in text_of(result)


def test_the_guard_stands_in_front_of_mcp(served: Served) -> None:
    url = f"{served.url}/mcp"
    headers = {"Accept": "application/json, text/event-stream"}
    before = table_counts(served.vault)
    with httpx.Client(trust_env=False, timeout=5) as http:
        assert_error(http.post(url, json=INITIALIZE, headers=headers), 401, "unauthorized")
        wrong = {**headers, "Authorization": "Bearer not-the-token"}
        assert_error(http.post(url, json=INITIALIZE, headers=wrong), 401)
        good = {**headers, **served.auth()}
        assert_error(http.post(url, json=INITIALIZE, headers={**good, "Host": "evil.com"}), 421)
        assert_error(http.post(url, json=INITIALIZE, headers={**good, "Origin": "http://evil.com"}), 403)
        plain = {**good, "Content-Type": "text/plain"}
        assert_error(http.post(url, content=json.dumps(INITIALIZE), headers=plain), 415)
        assert http.post(url, json=INITIALIZE, headers=good).status_code == 200
    assert table_counts(served.vault) == before


def test_the_sdk_client_without_the_token_cannot_connect(served: Served) -> None:
    async def go() -> None:
        async with connect(served, token="wrong-token") as client:
            await client.list_tools()

    before = table_counts(served.vault)
    with pytest.raises(BaseExceptionGroup) as caught:
        asyncio.run(go())
    assert caught.group_contains(MCPError)
    assert table_counts(served.vault) == before


def test_a_stopping_server_does_not_wait_for_open_mcp_sessions(vault: Vault) -> None:
    from engine.api.app import create_app
    from engine.api.server import EndpointServer

    token = vault.endpoint_token()
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port), 0)
    server.start()
    served = Served(server, vault, token)

    async def go() -> float:
        async with connect(served, mode="legacy") as client:  # a session with its GET stream
            await client.list_tools()
            started = asyncio.get_running_loop().time()
            await asyncio.to_thread(server.stop)
            return asyncio.get_running_loop().time() - started

    assert asyncio.run(go()) < 2  # not the 5 s graceful-shutdown timeout


def test_a_bug_is_a_generic_tool_error_that_logs_its_type_only(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from engine.api.mcp import build_mcp_server

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("CANARY-bug private words")

    monkeypatch.setattr(vault.facts, "page", broken)
    caplog.set_level(logging.DEBUG)

    async def go() -> Any:
        async with Client(build_mcp_server(vault)) as client:  # in process
            return await client.call_tool("search_facts", {"query": "tea"})

    result = asyncio.run(go())
    assert result.is_error and text_of(result).startswith("[internal_error] ")
    assert "CANARY" not in text_of(result) and "KeyError" not in text_of(result)
    assert "MCP tool search_facts failed with KeyError" in caplog.text
    assert "CANARY" not in caplog.text


def test_building_the_server_leaves_global_logging_alone() -> None:
    """The SDK's constructor would install its own stderr handler on a bare root logger."""
    code = (
        "import logging\n"
        "from engine.api.mcp import build_mcp_server\n"
        "build_mcp_server(None)\n"
        "print(len(logging.getLogger().handlers), logging.getLogger().level)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert result.stdout.split() == ["0", str(logging.WARNING)]


# -- recall, documents, collections --------------------------------------------------------------
def test_recall_context_answers_the_prompt_text_blocks_and_routing(served: Served) -> None:
    vault = served.vault
    vault.events.extract("I live in Lisbon and I work as a nurse.", learn=True, conversation_id="mcp-r")

    async def body(client: Client) -> Any:
        return await client.call_tool(
            "recall_context",
            {"conversation_id": "mcp-r", "query": "Where do I live?", "token_budget": 400},
        )

    result = run(served, body)
    assert result.is_error is False
    out = result.structured_content
    assert "Lisbon" in out["llm_context"]["text"]
    assert 0 < out["llm_context"]["tokens"] <= 400
    lisbon = [b for b in out["blocks"] if "Lisbon" in b["content"]]
    assert lisbon and set(lisbon[0]) == {"kind", "id", "content", "score", "at"}
    assert lisbon[0]["kind"] == "fact" and lisbon[0]["at"].endswith("Z")
    assert out["routing"]["strategy"] == "LOCAL"
    assert out["routing"]["subjects"] == ["user (vault owner)"]
    assert out["routing"]["degraded"] is False


def test_documents_over_mcp_upload_list_and_recall(served: Served, tmp_path: Path) -> None:
    vault = served.vault
    vault.update_settings({"endpoint.mcp_upload_path": True, "documents.allowed_roots": [str(tmp_path)]})
    collection = vault.collections.create("Kitchen")
    manual = tmp_path / "kettle.txt"
    manual.write_text("Descale the kettle with citric acid every month.", encoding="utf-8")

    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["text"] = await client.call_tool(
            "upload_document",
            {
                "name": "oven.md",
                "content": "# Oven\n\nThe oven self-cleans at 480 degrees for three hours.",
                "collection_id": collection.id,
            },
        )
        out["path"] = await client.call_tool("upload_document", {"path": str(manual)})
        out["collections"] = await client.call_tool("list_collections", {})
        out["recall"] = await client.call_tool(
            "recall_context",
            {
                "conversation_id": "kitchen",
                "query": "How hot does the oven get when cleaning?",
                "collection_id": collection.id,
            },
        )
        return out

    out = run(served, body)
    text = out["text"].structured_content
    assert text["status"] == "processing" and text["name"] == "oven.md"
    assert vault.collections.document_ids(collection.id) == [text["document_id"]]
    by_path = out["path"].structured_content
    stored = vault.documents.get(by_path["document_id"]).info
    assert stored.path == str(manual.resolve()) and stored.name == "kettle.txt"
    [listed] = out["collections"].structured_content["collections"]
    assert (listed["id"], listed["name"], listed["documents"]) == (collection.id, "Kitchen", 1)
    recall = out["recall"].structured_content
    assert recall["routing"]["strategy"] == "COLLECTION"
    assert "480 degrees" in recall["llm_context"]["text"]
    assert "citric" not in recall["llm_context"]["text"]  # not in the collection


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("upload_document", {}, "[validation_error] content: is required"),
        ("upload_document", {"content": "text"}, "[validation_error] name: is required"),
        ("upload_document", {"path": "notes.txt"}, "[validation_error] path: 'notes.txt' is a"),
        ("upload_document", {"path": "/dev/null"}, "is a character device"),
        ("upload_document", {"name": "x.exe", "content": "MZ"}, "[unsupported_file]"),
        ("upload_document", {"name": "a.md", "content": "x", "collection_id": 9}, "[not_found]"),
        ("recall_context", {"conversation_id": "c", "query": "x", "limit": 0}, "limit"),
        ("recall_context", {"conversation_id": "c", "query": "x", "document_id": 9}, "No document"),
    ],
)
def test_document_and_recall_tool_errors_are_readable(
    served: Served, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    served.vault.update_settings({"endpoint.mcp_upload_path": True})  # the path is checked before it is allowed
    before = table_counts(served.vault)

    async def body(client: Client) -> Any:
        return await client.call_tool(tool, arguments)

    result = run(served, body)
    assert result.is_error is True
    assert expected in text_of(result)
    assert "Traceback" not in text_of(result)
    assert table_counts(served.vault) == before


def test_a_quarantined_upload_is_a_tool_error_with_the_reason(served: Served, tmp_path: Path) -> None:
    broken = tmp_path / "scan.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    served.vault.update_settings({"endpoint.mcp_upload_path": True, "documents.allowed_roots": [str(tmp_path)]})

    async def body(client: Client) -> Any:
        return await client.call_tool("upload_document", {"path": str(broken)})

    result = run(served, body)
    assert result.is_error is True
    assert text_of(result).startswith("[document_quarantined] scan.pdf could not be read (invalid)")
    assert served.vault.documents() == []
    [held] = served.vault.documents.quarantine()
    assert (held.name, held.reason, held.path) == ("scan.pdf", "invalid", str(broken.resolve()))
