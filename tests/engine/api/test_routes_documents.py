"""``/v6/documents``: uploads as multipart (over real loopback HTTP), as JSON text and by local path;
the statuses (201 new, 200 replaced/unchanged, 422 quarantined); paths that are not regular files;
the body cap on multipart; the tree, the list, deletion and the quarantine with retry."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Vault
from engine.api.app import create_app
from engine.api.server import EndpointServer
from engine.config import EndpointSettings
from tests.engine.api.conftest import Served, assert_error, table_counts
from tests.engine.watch_support import wait_until
from tests.plugins.parser_pdf import garbage_with_header, statement_pdf, text_pdf

GARDEN = "# Garden\n\nThe tomatoes need water every morning.\n\n## Tools\n\nThe rake is in the shed.\n"


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, headers=served.auth(), trust_env=False, timeout=30) as client:
        yield client


def upload_text(client: httpx.Client, auth: dict[str, str], **body: Any) -> httpx.Response:
    return client.post("/v6/documents", json={"name": "garden.md", "content": GARDEN, **body}, headers=auth)


def document_rows(vault: Vault) -> dict[str, int]:
    counts = table_counts(vault)
    return {name: counts[name] for name in ("documents", "sections", "spans")}


# -- uploads -----------------------------------------------------------------------------------------
def test_a_json_text_upload_is_created_and_searchable(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    response = upload_text(client, auth, project_id="home")
    assert response.status_code == 201
    out = response.json()
    assert out == {
        "document_id": out["document_id"],
        "status": "processing",
        "sections": 2,
        "spans": 2,
        "name": "garden.md",
        "reason": "",
    }
    tree = client.get(f"/v6/documents/{out['document_id']}", headers=auth).json()
    assert tree["document"]["name"] == "garden.md" and tree["document"]["project_id"] == "home"
    assert tree["document"]["parser"] == "markdown" and tree["document"]["path"] is None
    assert tree["document"]["created_at"].endswith("Z")
    assert [s["title"] for s in tree["sections"]] == ["Garden", "Tools"]
    assert "tomatoes need water" in tree["sections"][0]["spans"][0]["text"]
    spans = [sp for s in tree["sections"] for sp in s["spans"]]
    assert all(0 <= sp["start_char"] < sp["end_char"] for sp in spans)
    listed = client.get("/v6/documents", params={"project_id": "home"}, headers=auth).json()
    assert [d["id"] for d in listed["documents"]] == [out["document_id"]]
    assert client.get("/v6/documents", params={"project_id": "work"}, headers=auth).json() == {"documents": []}


def test_a_multipart_upload_over_loopback(http: httpx.Client, served: Served) -> None:
    vault = served.vault
    collection = vault.collections.create("Manuals")
    pdf = text_pdf([["Ledger of the lighthouse keeper", "Oil was delivered on Tuesday."]])
    response = http.post(
        "/v6/documents",
        files={"file": ("C:\\Users\\ana\\ledger.pdf", pdf, "application/pdf")},
        data={"collection_id": str(collection.id), "project_id": "coast"},
    )
    assert response.status_code == 201, response.text
    out = response.json()
    assert out["name"] == "ledger.pdf" and out["status"] == "processing" and out["spans"] >= 1
    info = vault.documents.get(out["document_id"]).info
    assert (info.parser, info.page_count, info.size_bytes) == ("pdf", 1, len(pdf))
    assert info.project_id == "coast" and info.collection_ids == (collection.id,)
    listed = http.get("/v6/documents", params={"collection_id": collection.id}).json()
    assert [d["id"] for d in listed["documents"]] == [out["document_id"]]


def test_a_statement_uploaded_over_loopback_is_recalled_as_the_whole_table(http: httpx.Client) -> None:
    response = http.post("/v6/documents", files={"file": ("harbor.pdf", statement_pdf(), "application/pdf")})
    assert response.status_code == 201, response.text
    document_id = response.json()["document_id"]
    tree = http.get(f"/v6/documents/{document_id}").json()
    [table] = [t for section in tree["sections"] for t in section["tables"]]
    assert table["text"][: table["header_chars"]].endswith(
        "Consolidated Statement of Cash Flows\nYears ended December 31\n"
    )
    assert table["text"].endswith("Zephyrine rebates received 1,999 (497) 3,189")
    body = {"conversation_id": "c", "query": "zephyrine rebates", "document_id": document_id}
    answer = http.post("/v6/recall", json=body).json()
    hit = next(b for b in answer["blocks"] if b["kind"] == "span" and "Zephyrine" in b["content"])
    assert hit["meta"]["table"]["whole"] is True and "(Millions) 2018 2017 2016" in hit["meta"]["table"]["text"]
    text = answer["llm_context"]["text"]
    assert "Consolidated Statement of Cash Flows" in text and "Quillwort harvest receipts 1,000" in text


def test_a_large_multipart_file_is_answered_at_once_and_read_in_the_background(
    http: httpx.Client, served: Served
) -> None:
    line = "The quick brown fox jumps over the lazy dog near the lighthouse.\n"
    text = line * (3 * 1024 * 1024 // len(line))  # 3 MiB: spooled to disk while it arrives, over the 1 MiB mark
    response = http.post("/v6/documents", files={"file": ("big.txt", text.encode(), "text/plain")})
    assert response.status_code == 202, response.text
    out = response.json()
    assert (out["status"], out["spans"], out["name"]) == ("parsing", 0, "big.txt")
    doc_id = out["document_id"]
    listed = http.get("/v6/documents").json()["documents"]
    assert [d["id"] for d in listed] == [doc_id] and listed[0]["status"] in ("processing", "ready")
    wait_until(lambda: http.get(f"/v6/documents/{doc_id}").json()["document"]["reading"] is None, 60)
    info = served.vault.documents.get(doc_id).info
    assert info.size_bytes == len(text.encode()) and info.spans > 10


def test_a_client_may_wait_for_a_large_file_or_not_wait_for_a_small_one(http: httpx.Client, served: Served) -> None:
    line = "Oil was delivered to the lighthouse on Tuesday.\n"
    big = (line * (2 * 1024 * 1024 // len(line))).encode()
    waited = http.post("/v6/documents", params={"wait": "true"}, files={"file": ("big.txt", big, "text/plain")})
    assert waited.status_code == 201, waited.text
    assert waited.json()["status"] == "processing" and waited.json()["spans"] > 10
    small = http.post("/v6/documents", params={"wait": "false"}, files={"file": ("small.txt", b"Rope.", "text/plain")})
    assert small.status_code == 202 and small.json()["status"] == "parsing"
    doc_id = small.json()["document_id"]
    wait_until(lambda: http.get(f"/v6/documents/{doc_id}").json()["document"]["reading"] is None, 60)
    assert served.vault.documents.get(doc_id).info.spans == 1


def test_a_path_upload_is_new_then_unchanged_then_replaced(
    client: httpx.Client, auth: dict[str, str], vault: Vault, tmp_path: Path
) -> None:
    vault.update_settings({"documents.allowed_roots": [str(tmp_path)]})
    notes = tmp_path / "notes.txt"
    notes.write_text("The spare key is under the blue pot.", encoding="utf-8")
    first = client.post("/v6/documents", json={"path": str(notes)}, headers=auth)
    again = client.post("/v6/documents", json={"path": str(notes)}, headers=auth)
    notes.write_text("The spare key is now with the neighbour.", encoding="utf-8")
    changed = client.post("/v6/documents", json={"path": str(notes)}, headers=auth)
    assert (first.status_code, again.status_code, changed.status_code) == (201, 200, 200)
    doc_id = first.json()["document_id"]
    assert again.json()["status"] == "unchanged" and again.json()["document_id"] == doc_id
    assert changed.json()["status"] == "processing" and changed.json()["document_id"] == doc_id
    [stored] = vault.documents()
    assert stored.path == str(notes.resolve())
    assert "neighbour" in vault.documents.get(doc_id).sections[0].spans[0].text


def test_document_id_replaces_that_document(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    doc_id = upload_text(client, auth).json()["document_id"]
    replaced = client.post(
        "/v6/documents",
        json={"name": "garden.md", "content": "# Garden\n\nPeppers now.", "document_id": doc_id},
        headers=auth,
    )
    assert replaced.status_code == 200 and replaced.json()["document_id"] == doc_id
    assert len(vault.documents()) == 1
    assert "Peppers" in vault.documents.get(doc_id).sections[0].spans[0].text
    missing = client.post("/v6/documents", json={"name": "a.md", "content": "x", "document_id": 987_654}, headers=auth)
    assert assert_error(missing, 404, "not_found")["details"]["kind"] == "document"  # type: ignore[index]


def test_a_symlink_to_a_regular_file_is_read(
    client: httpx.Client, auth: dict[str, str], vault: Vault, tmp_path: Path
) -> None:
    vault.update_settings({"documents.allowed_roots": [str(tmp_path)]})
    target = tmp_path / "real.md"
    target.write_text("# Real\n\nThe real content.", encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    response = client.post("/v6/documents", json={"path": str(link)}, headers=auth)
    assert response.status_code == 201
    assert vault.documents()[0].path == str(target.resolve())


# -- refusals ----------------------------------------------------------------------------------------
def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)
    return path


def _socket_file(tmp_path: Path) -> Path:
    path = tmp_path / "sock.txt"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()  # the socket file stays
    return path


def _link_to_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "folder"
    folder.mkdir()
    link = tmp_path / "folder-link.md"
    link.symlink_to(folder)
    return link


@pytest.mark.skipif(os.name == "nt", reason="POSIX file kinds")
@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda tmp: tmp, "is a folder; only regular files can be uploaded"),
        (_link_to_folder, "is a folder"),
        (_fifo, "is a named pipe"),
        (_socket_file, "is a socket"),
        (lambda tmp: Path("/dev/null"), "/dev/null is a character device"),
        (lambda tmp: tmp / "missing.md", "missing.md does not exist"),
        (lambda tmp: Path("notes/today.md"), "'notes/today.md' is a relative path"),
    ],
    ids=["folder", "link-to-folder", "fifo", "socket", "device", "missing", "relative"],
)
def test_a_path_that_is_not_a_regular_file_is_refused_clearly(
    client: httpx.Client, auth: dict[str, str], vault: Vault, tmp_path: Path, make: Any, words: str
) -> None:
    path = make(tmp_path)
    before = table_counts(vault)
    result: list[httpx.Response] = []
    # a named pipe would block a reader forever: the answer must come without anyone writing
    worker = threading.Thread(
        target=lambda: result.append(client.post("/v6/documents", json={"path": str(path)}, headers=auth))
    )
    worker.start()
    worker.join(20)
    assert result, "the request hung"
    error = assert_error(result[0], 400, "validation_error")
    assert error["details"]["field"] == "path"  # type: ignore[index]
    assert words in error["message"]  # type: ignore[operator]
    assert table_counts(vault) == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "content"),
        ({"content": "Some text."}, "name"),
        ({"name": "a.md"}, "content"),
        ({"name": "a.md", "content": "x", "path": "/etc/hostname"}, "path"),
        ({"name": "a.md", "content": ""}, "content"),
        ({"name": "a.md", "content": "x", "colection_id": 3}, "colection_id"),
        ({"name": "a.md", "content": "x", "collection_id": "three"}, "collection_id"),
    ],
)
def test_a_bad_json_body_is_a_400_naming_the_field(
    client: httpx.Client, auth: dict[str, str], vault: Vault, body: dict[str, Any], field: str
) -> None:
    before = table_counts(vault)
    error = assert_error(client.post("/v6/documents", json=body, headers=auth), 400)
    assert error["details"]["field"] == field  # type: ignore[index]
    assert table_counts(vault) == before


def test_invalid_or_empty_json_is_a_400(client: httpx.Client, auth: dict[str, str]) -> None:
    headers = {**auth, "Content-Type": "application/json"}
    broken = assert_error(client.post("/v6/documents", content=b"{nope", headers=headers), 400)
    assert broken["details"]["field"] == "body"  # type: ignore[index]
    empty = assert_error(client.post("/v6/documents", headers=auth), 400)
    assert empty["details"]["field"] == "body"  # type: ignore[index]


def test_an_unsupported_type_is_a_415_naming_what_is_supported(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    error = assert_error(
        client.post("/v6/documents", json={"name": "tool.exe", "content": "MZ"}, headers=auth),
        415,
        "unsupported_file",
    )
    assert ".pdf" in error["details"]["fix"]  # type: ignore[index]
    assert vault.documents() == []


@pytest.mark.parametrize(
    ("files", "data", "field"),
    [
        (None, {"project_id": "p"}, "file"),
        ({"file": ("", b"text", "text/plain")}, None, "file"),
        ({"file": ("a.txt", b"text", "text/plain")}, {"document_id": "abc"}, "document_id"),
        ({"file": ("a.txt", b"text", "text/plain")}, {"colour": "red"}, "colour"),
        ({"attachment": ("a.txt", b"text", "text/plain")}, None, "attachment"),
    ],
)
def test_a_bad_multipart_form_is_a_400_naming_the_field(
    http: httpx.Client, served: Served, files: Any, data: Any, field: str
) -> None:
    before = table_counts(served.vault)
    if files is None:  # fields only: a part without a filename keeps it multipart
        files = {"user_id": (None, b"default")}
    response = http.post("/v6/documents", files=files, data=data)
    error = assert_error(response, 400, "validation_error")
    assert error["details"]["field"] == field  # type: ignore[index]
    assert table_counts(served.vault) == before


def test_two_files_are_refused(http: httpx.Client, served: Served) -> None:
    before = table_counts(served.vault)
    response = http.post(
        "/v6/documents",
        files=[
            ("file", ("a.txt", b"one", "text/plain")),
            ("file", ("b.txt", b"two", "text/plain")),
        ],
    )
    error = assert_error(response, 400, "bad_request")
    assert "Too many files" in error["message"]  # type: ignore[operator]
    assert table_counts(served.vault) == before


# -- the body cap ------------------------------------------------------------------------------------
@pytest.fixture
def small_cap(vault: Vault) -> Iterator[Served]:
    """The endpoint with a 64 KiB body cap, on a loopback port."""
    token = vault.endpoint_token()
    settings = EndpointSettings(max_body_bytes=64 * 1024)
    server = EndpointServer(lambda port: create_app(vault, token=token, port=port, settings=settings), 0)
    server.start()
    try:
        yield Served(server, vault, token)
    finally:
        server.stop()


def _multipart(payload: bytes, boundary: str = "cairn-boundary") -> bytes:
    return (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
            f"Content-Type: text/plain\r\n\r\n"
        ).encode()
        + payload
        + f"\r\n--{boundary}--\r\n".encode()
    )


def test_a_multipart_body_over_the_cap_is_a_413(small_cap: Served, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    before = table_counts(small_cap.vault)
    body = _multipart(b"x" * (200 * 1024))
    headers = {
        **small_cap.auth(),
        "Content-Type": "multipart/form-data; boundary=cairn-boundary",
    }

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while it streams
        for start in range(0, len(body), 8192):
            yield body[start : start + 8192]

    with httpx.Client(base_url=small_cap.url, trust_env=False, timeout=30) as http:
        declared = http.post("/v6/documents", content=body, headers=headers)
        streamed = http.post("/v6/documents", content=chunks(), headers=headers)
        under = http.post("/v6/documents", content=_multipart(b"y" * 1024), headers=headers)
    error = assert_error(declared, 413, "payload_too_large")
    assert error["details"]["max_body_bytes"] == 64 * 1024  # type: ignore[index]
    assert_error(streamed, 413, "payload_too_large")
    assert under.status_code == 201, under.text
    counts = table_counts(small_cap.vault)
    assert counts["documents"] == before["documents"] + 1  # only the small one
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# -- quarantine --------------------------------------------------------------------------------------
def test_a_file_that_cannot_be_parsed_is_a_422_with_the_typed_reason(http: httpx.Client, served: Served) -> None:
    vault = served.vault
    before = document_rows(vault)
    response = http.post("/v6/documents", files={"file": ("scan.pdf", garbage_with_header(), "application/pdf")})
    error = assert_error(response, 422, "document_quarantined")
    details: dict[str, Any] = error["details"]  # type: ignore[assignment]
    assert (details["name"], details["reason"]) == ("scan.pdf", "invalid")
    assert "PDF" in details["detail"] and "retry" in details["fix"]
    assert document_rows(vault) == before  # nothing of it entered the vault
    listed = http.get("/v6/documents/quarantine").json()["quarantine"]
    assert [(q["id"], q["name"], q["reason"]) for q in listed] == [(details["quarantine_id"], "scan.pdf", "invalid")]
    assert listed[0]["created_at"].endswith("Z") and listed[0]["path"] is None
    # the same bytes again: still held, answered the same way, nothing parsed again
    again = http.post("/v6/documents", files={"file": ("scan.pdf", garbage_with_header(), "application/pdf")})
    assert assert_error(again, 422)["details"]["quarantine_id"] == details["quarantine_id"]  # type: ignore[index]
    # bytes have no path to read again
    retried = assert_error(http.post(f"/v6/documents/quarantine/{details['quarantine_id']}/retry"), 400)
    assert retried["details"]["field"] == "quarantine_id"  # type: ignore[index]


def test_a_quarantined_path_is_retried_once_repaired(http: httpx.Client, served: Served, tmp_path: Path) -> None:
    vault = served.vault
    vault.update_settings({"documents.allowed_roots": [str(tmp_path)]})
    ledger = tmp_path / "ledger.pdf"
    ledger.write_bytes(garbage_with_header(seed=3))
    failed = assert_error(http.post("/v6/documents", json={"path": str(ledger)}), 422)
    quarantine_id = failed["details"]["quarantine_id"]  # type: ignore[index]
    assert vault.documents.quarantine()[0].path == str(ledger.resolve())
    assert_error(http.post(f"/v6/documents/quarantine/{quarantine_id}/retry"), 422)  # still broken

    [held] = vault.documents.quarantine()
    ledger.write_bytes(text_pdf([["The ledger lists the lamp oil deliveries."]]))
    repaired = http.post(f"/v6/documents/quarantine/{held.id}/retry")
    assert repaired.status_code == 201, repaired.text
    assert repaired.json()["status"] == "processing"
    assert vault.documents.quarantine() == []
    assert vault.documents()[0].path == str(ledger.resolve())
    assert_error(http.post(f"/v6/documents/quarantine/{held.id}/retry"), 404, "not_found")


# -- reading and deleting ----------------------------------------------------------------------------
def test_listing_by_an_unknown_collection_is_a_404(client: httpx.Client, auth: dict[str, str]) -> None:
    error = assert_error(client.get("/v6/documents", params={"collection_id": 987_654}, headers=auth), 404)
    assert error["details"]["kind"] == "collection"  # type: ignore[index]


def test_delete_removes_the_document_and_its_tree(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    before = document_rows(vault)
    doc_id = upload_text(client, auth).json()["document_id"]
    assert document_rows(vault) != before
    deleted = client.delete(f"/v6/documents/{doc_id}", headers=auth)
    assert deleted.status_code == 200 and deleted.json() == {"document_id": doc_id, "deleted": True}
    assert document_rows(vault) == before
    assert_error(client.get(f"/v6/documents/{doc_id}", headers=auth), 404, "not_found")
    assert_error(client.delete(f"/v6/documents/{doc_id}", headers=auth), 404, "not_found")
