"""Uploads by path over the endpoint: REST ``POST /v6/documents {path}`` and MCP ``upload_document(path)`` read only
files under the folders the person allowed (watched folders, ``documents.allowed_roots``); MCP reads no path at all
unless ``endpoint.mcp_upload_path`` is on.  A refusal is a 403 ``path_not_allowed`` (a tool error over MCP) naming
the setting, and nothing is read or stored.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from engine.vault import Vault
from tests.engine.api.conftest import Served, assert_error, table_counts

SECRET = "quokkasecret"


def private_file(tmp_path: Path) -> Path:
    path = tmp_path / "private" / "key.txt"
    path.parent.mkdir()
    path.write_text(f"-----BEGIN KEY----- {SECRET} -----END KEY-----\n", encoding="utf-8")
    return path


def stored_text(vault: Vault) -> str:
    return " ".join(str(r[0]) for r in vault.store.query("SELECT text FROM spans"))


# -- REST --------------------------------------------------------------------------------------------------------
def test_a_rest_path_outside_the_allowed_folders_is_a_403_naming_the_setting(
    client: httpx.Client, auth: dict[str, str], vault: Vault, tmp_path: Path
) -> None:
    secret = private_file(tmp_path)
    before = table_counts(vault)
    error = assert_error(
        client.post("/v6/documents", json={"path": str(secret)}, headers=auth), 403, "path_not_allowed"
    )
    assert "documents.allowed_roots" in str(error["message"])
    assert error["details"] == {  # type: ignore[comparison-overlap]
        "fix": "Add its folder to documents.allowed_roots in Settings → Advanced → Documents (or watch the folder), "
        "or upload the file's content instead of its path.",
        "field": "path",
        "setting": "documents.allowed_roots",
    }
    assert table_counts(vault) == before and SECRET not in stored_text(vault)


def test_a_rest_path_is_read_in_an_allowed_root_or_a_watched_folder_and_a_link_out_is_refused(
    client: httpx.Client, auth: dict[str, str], vault: Vault, tmp_path: Path
) -> None:
    secret = private_file(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    manual = shared / "manual.txt"
    manual.write_text("Grease the winch every spring.", encoding="utf-8")
    os.symlink(secret, shared / "notes.txt")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nThe espalier pears need twine.\n", encoding="utf-8")
    vault.watcher.watch(notes)
    vault.watcher.rescan(notes, timeout=60)  # the watcher has ingested it: the upload finds it unchanged
    vault.update_settings({"documents.allowed_roots": [str(shared)]})
    assert client.post("/v6/documents", json={"path": str(manual)}, headers=auth).status_code == 201
    garden = client.post("/v6/documents", json={"path": str(notes / "garden.md")}, headers=auth)
    assert (garden.status_code, garden.json()["status"]) == (200, "unchanged")
    assert_error(client.post("/v6/documents", json={"path": str(shared / "notes.txt")}, headers=auth), 403)
    assert sorted(d.name for d in vault.documents()) == ["garden.md", "manual.txt"]
    assert SECRET not in stored_text(vault)


# -- MCP ---------------------------------------------------------------------------------------------------------
def call(served: Served, tool: str, arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        headers = {"Authorization": f"Bearer {served.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, trust_env=False, timeout=30) as http,
            Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client,  # type: ignore[arg-type]
        ):
            return await client.call_tool(tool, arguments)

    return asyncio.run(go())


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


def test_mcp_upload_by_path_is_off_by_default_and_reads_nothing(served: Served, tmp_path: Path) -> None:
    vault = served.vault
    manual = tmp_path / "shared" / "manual.txt"
    manual.parent.mkdir()
    manual.write_text("Grease the winch every spring.", encoding="utf-8")
    vault.update_settings({"documents.allowed_roots": [str(manual.parent)]})  # allowed folder, but MCP paths are off
    before = table_counts(vault)
    refused = call(served, "upload_document", {"path": str(manual)})
    assert refused.is_error is True
    assert text_of(refused).startswith("[path_not_allowed] upload_document does not read files by path here")
    assert "endpoint.mcp_upload_path" in text_of(refused) and "name and content" in text_of(refused)
    assert table_counts(vault) == before
    inline = call(served, "upload_document", {"name": "winch.md", "content": "# Winch\n\nGrease it every spring."})
    assert inline.is_error is False and inline.structured_content["status"] == "processing"


def test_mcp_upload_by_path_when_allowed_still_keeps_to_the_allowed_folders(served: Served, tmp_path: Path) -> None:
    vault = served.vault
    secret = private_file(tmp_path)
    manual = tmp_path / "shared" / "manual.txt"
    manual.parent.mkdir()
    manual.write_text("Grease the winch every spring.", encoding="utf-8")
    vault.update_settings({"endpoint.mcp_upload_path": True, "documents.allowed_roots": [str(manual.parent)]})
    refused = call(served, "upload_document", {"path": str(secret)})
    assert refused.is_error is True and text_of(refused).startswith("[path_not_allowed] ")
    assert "documents.allowed_roots" in text_of(refused)
    read = call(served, "upload_document", {"path": str(manual)})
    assert read.is_error is False and read.structured_content["name"] == "manual.txt"
    assert SECRET not in stored_text(vault)
