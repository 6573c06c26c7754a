"""``cairn mcp`` (stdio) driven by the MCP SDK's own stdio client, and the log files of
``cairn mcp`` and ``cairn serve`` after memory content and the token went through REST and MCP."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.cli_support import child_env

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX processes and signals")

REPO = Path(__file__).resolve().parents[1]
CANARY = "Wombatfjord"


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


def logs_of(vault_dir: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in (vault_dir / "logs").glob("*.log*"))


async def stdio_session(vault_dir: Path, home: Path, errlog: Any) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp", "--vault", str(vault_dir)],
        env=child_env(home),
        cwd=str(REPO),
    )
    out: dict[str, Any] = {}
    async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        ingested = await client.call_tool(
            "ingest_event", {"conversation_id": "stdio", "content": f"I live in {CANARY}."}
        )
        out["ingest"] = ingested.structured_content
        deadline = time.monotonic() + 20
        while True:  # enrichment runs in the background of the child process
            found = await client.call_tool("search_facts", {"query": CANARY})
            if found.structured_content["facts"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        out["search"] = found.structured_content
        fact_id = out["search"]["facts"][0]["id"]
        out["object"] = (await client.call_tool("get_object", {"object_id": fact_id})).structured_content
        out["correct"] = (
            await client.call_tool("correct_fact", {"fact_id": fact_id, "object_text": "Oslo"})
        ).structured_content
        out["conversations"] = (await client.call_tool("list_conversations", {})).structured_content
        out["forget"] = (
            await client.call_tool("forget", {"conversation_id": "stdio", "dry_run": True})
        ).structured_content
        out["missing"] = await client.call_tool("get_object", {"object_id": 123456})
        out["unscoped"] = await client.call_tool("forget", {})
        out["bad_role"] = await client.call_tool(
            "ingest_event", {"conversation_id": "stdio", "content": "x", "role": CANARY}
        )
    return out


#: Every tool ``cairn mcp`` serves, whether it opens the vault itself or bridges to the app that holds it.
EXPECTED_TOOLS = sorted(
    [
        "correct_fact",
        "forget",
        "get_object",
        "ingest_event",
        "list_collections",
        "list_conversations",
        "recall_context",
        "search_facts",
        "upload_document",
        "add_observations",
        "create_subjects",
        "create_understanding",
        "delete_observations",
        "get_subjects",
        "get_understandings",
        "mark_questionable",
        "mark_useful",
        "open_around",
        "open_intersection",
        "remember",
        "search_observations",
        "set_structural_understanding",
        "search",
        "list_perspectives",
        "add_perspective",
        "remove_perspective",
        "stats",
        "understanding_history",
        "update_subject_summary",
        "update_understanding",
        "bring_to_mind",
        "consolidate",
        "consolidation_report",
        "find_similar_subjects",
        "merge_subjects",
        "orient",
        "pending_consolidation",
        "recall",
        "reset_seen",
    ]
)


def test_cairn_mcp_serves_every_tool_on_stdio(tmp_path: Path) -> None:
    vault_dir = tmp_path / "vault"
    with tempfile.TemporaryFile("w+") as errlog:
        out = asyncio.run(stdio_session(vault_dir, tmp_path / "home", errlog))
        errlog.seek(0)
        stderr = errlog.read()
    assert out["tools"] == EXPECTED_TOOLS
    assert out["ingest"]["status"] == "queued"
    assert [f["object_text"] for f in out["search"]["facts"]] == [CANARY]
    assert out["object"]["kind"] == "fact"
    assert out["correct"]["object_text"] == "Oslo"
    assert out["conversations"]["conversations"][0]["conversation_id"] == "stdio"
    assert out["forget"]["dry_run"] is True and out["forget"]["deleted_counts"]["events"] == 1
    assert out["missing"].is_error and text_of(out["missing"]).startswith("[not_found] ")
    assert out["unscoped"].is_error and "whole_user" in text_of(out["unscoped"])
    assert out["bad_role"].is_error and "role" in text_of(out["bad_role"])
    # the child logged to its file (and stderr), never the content
    log_text = logs_of(vault_dir)
    assert "vault opened" in log_text
    assert CANARY not in log_text + stderr
    assert "Traceback" not in stderr


def test_cairn_mcp_while_the_app_holds_the_vault_serves_its_tools_through_the_endpoint(tmp_path: Path) -> None:
    from app.plugins import build_plugin_manager
    from engine import Settings, Vault
    from engine.api.app import create_app
    from engine.api.server import EndpointServer

    vault_dir = tmp_path / "vault"
    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with Vault.open(vault_dir, settings=settings, plugins=build_plugin_manager(load_entry_points=False)) as held:
        token = held.endpoint_token()
        held.vault_id()
        server = EndpointServer(lambda port: create_app(held, token=token, port=port), 0)
        server.start()
        try:
            # the app's settings name its port: that is where `cairn mcp` looks for it
            settings.updated({"endpoint.port": server.port}).save(held.paths.settings)
            with tempfile.TemporaryFile("w+") as errlog:
                out = asyncio.run(stdio_session(vault_dir, tmp_path / "home", errlog))
                errlog.seek(0)
                stderr = errlog.read()
        finally:
            server.stop()
        assert out["tools"] == EXPECTED_TOOLS
        assert out["ingest"]["status"] == "queued"
        assert [f["object_text"] for f in out["search"]["facts"]] == [CANARY]
        assert out["correct"]["object_text"] == "Oslo"
        assert out["missing"].is_error and text_of(out["missing"]).startswith("[not_found] ")
        assert out["bad_role"].is_error and "role" in text_of(out["bad_role"])
        # it all happened in the vault the app holds
        assert [f.object_text for f in held.facts(limit=10)] == ["Oslo"]
    assert f"serving its tools through http://127.0.0.1:{server.port}/mcp" in stderr
    assert "Traceback" not in stderr


def test_cairn_mcp_on_a_locked_vault_says_so(tmp_path: Path) -> None:
    from engine import Settings, Vault

    settings = Settings().updated({"llm.provider": "simple", "embedder.provider": "hashing"})
    with Vault.open(tmp_path / "vault", settings=settings):
        result = subprocess.run(
            [sys.executable, "-m", "app", "mcp", "--vault", str(tmp_path / "vault")],
            cwd=REPO,
            env=child_env(tmp_path / "home"),
            capture_output=True,
            text=True,
            timeout=60,
            input="",
        )
    assert result.returncode == 1
    assert result.stdout == ""  # stdout is the protocol's alone, even for an error
    assert "error:" in result.stderr and "Traceback" not in result.stderr


ADDRESS = re.compile(r"http://127\.0\.0\.1:(\d+)")


def test_cairn_serve_logs_hold_neither_token_nor_content(tmp_path: Path) -> None:
    vault_dir = tmp_path / "vault"
    with tempfile.TemporaryFile("w+") as stderr_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--vault", str(vault_dir), "--port", "0", "-v"],
            cwd=REPO,
            env=child_env(tmp_path / "home"),
            stdout=subprocess.DEVNULL,
            stderr=stderr_file,
            text=True,
        )
        try:
            port = _wait_for_port(stderr_file, proc)
            token = (vault_dir / "token").read_text().strip()
            url = f"http://127.0.0.1:{port}"
            auth = {"Authorization": f"Bearer {token}"}
            with httpx.Client(trust_env=False, timeout=30) as http:
                ok = http.post(
                    f"{url}/v6/ingest",
                    json={"conversation_id": CANARY, "content": f"I live in {CANARY}."},
                    headers=auth,
                )
                bad = http.post(
                    f"{url}/v6/ingest",
                    json={"conversation_id": "c", "content": CANARY, "role": CANARY},
                    headers=auth,
                )
                assert (ok.status_code, bad.status_code) == (202, 400)

            async def over_mcp() -> bool:
                async with (
                    httpx2.AsyncClient(headers=auth, trust_env=False, timeout=30) as client,
                    Client(streamable_http_client(f"{url}/mcp", http_client=client)) as mcp,  # type: ignore[arg-type]
                ):
                    await mcp.call_tool("ingest_event", {"conversation_id": "m", "content": CANARY})
                    failed = await mcp.call_tool("correct_fact", {"fact_id": 1, "object_text": CANARY})
                    return bool(failed.is_error)

            assert asyncio.run(over_mcp())
        finally:
            proc.terminate()
            assert proc.wait(20) == 0
        stderr_file.seek(0)
        stderr = stderr_file.read()
    everything = logs_of(vault_dir) + stderr
    assert "Stopped cleanly." in stderr
    assert "answered 400" in everything  # verbose logging was on, and the endpoint used it
    for secret in (CANARY, token):
        assert secret not in everything


def _wait_for_port(stderr_file: Any, proc: subprocess.Popen[str], timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stderr_file.seek(0)
        match = ADDRESS.search(stderr_file.read())
        if match:
            return int(match.group(1))
        assert proc.poll() is None, "serve exited early"
        time.sleep(0.05)
    raise AssertionError("serve printed no address")
