"""The recall and document tools over stdio (``cairn mcp``), driven by the MCP SDK's own stdio
client against a child process."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.cli_support import child_env
from tests.engine.api.conftest import open_vault

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX processes")

REPO = Path(__file__).resolve().parents[3]


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


async def session(vault_dir: Path, home: Path, manual: Path, errlog: Any) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp", "--vault", str(vault_dir)],
        env=child_env(home),
        cwd=str(REPO),
    )
    out: dict[str, Any] = {}
    async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
        out["tools"] = {t.name for t in (await client.list_tools()).tools}
        [shelf] = (await client.call_tool("list_collections", {})).structured_content["collections"]
        out["shelf"] = shelf
        out["text"] = (
            await client.call_tool(
                "upload_document",
                {
                    "name": "boat.md",
                    "content": "# Boat\n\nThe dinghy's outboard takes two-stroke oil.",
                    "collection_id": shelf["id"],
                },
            )
        ).structured_content
        out["path"] = (await client.call_tool("upload_document", {"path": str(manual)})).structured_content
        out["folder"] = await client.call_tool("upload_document", {"path": str(manual.parent)})
        await client.call_tool("ingest_event", {"conversation_id": "harbour", "content": "I keep my boat in Porto."})
        deadline = time.monotonic() + 20
        while True:  # the turn is learned in the background of the child process
            recalled = await client.call_tool(
                "recall_context", {"conversation_id": "harbour", "query": "Where is my boat kept?"}
            )
            text = recalled.structured_content["llm_context"]["text"]
            if "Porto" in text or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        out["recall"] = recalled.structured_content
        out["documents"] = (
            await client.call_tool(
                "recall_context",
                {
                    "conversation_id": "harbour",
                    "query": "Which oil does the outboard take?",
                    "collection_id": shelf["id"],
                },
            )
        ).structured_content
        out["shelf_after"] = (await client.call_tool("list_collections", {})).structured_content
    return out


def test_recall_and_document_tools_on_stdio(tmp_path: Path) -> None:
    vault_dir = tmp_path / "vault"
    with open_vault(vault_dir) as vault:  # a collection made beforehand, as the GUI would
        shelf_id = vault.collections.create("Boat shed", description="Manuals").id
        # and uploads by path allowed, from that one folder (both off by default)
        vault.update_settings({"endpoint.mcp_upload_path": True, "documents.allowed_roots": [str(tmp_path / "files")]})
    manual = tmp_path / "files" / "winch.txt"
    manual.parent.mkdir()
    manual.write_text("Grease the winch every spring.", encoding="utf-8")
    with tempfile.TemporaryFile("w+") as errlog:
        out = asyncio.run(session(vault_dir, tmp_path / "home", manual, errlog))
        errlog.seek(0)
        stderr = errlog.read()
    assert {"recall_context", "upload_document", "list_collections"} <= out["tools"]
    assert (out["shelf"]["id"], out["shelf"]["name"], out["shelf"]["documents"]) == (
        shelf_id,
        "Boat shed",
        0,
    )
    assert out["text"]["status"] == "processing" and out["text"]["name"] == "boat.md"
    assert out["path"]["name"] == "winch.txt" and out["path"]["spans"] == 1
    assert out["folder"].is_error and "is a folder" in text_of(out["folder"])
    assert "Porto" in out["recall"]["llm_context"]["text"]
    assert out["recall"]["routing"]["strategy"] == "LOCAL"
    assert out["documents"]["routing"]["strategy"] == "COLLECTION"
    assert "two-stroke" in out["documents"]["llm_context"]["text"]
    assert out["shelf_after"]["collections"][0]["documents"] == 1
    assert "Traceback" not in stderr
    with open_vault(vault_dir) as vault:  # what the child stored is in the vault
        paths = {d.name: d.path for d in vault.documents()}
        assert paths == {"boat.md": None, "winch.txt": str(manual.resolve())}
