"""Uploads read in the background: answered at once, visible with their progress, and never lost.

A gate parser holds a parse open until the test creates its gate file, so every state (waiting, being read, read)
is seen for certain rather than caught by timing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from engine.changes import Change
from engine.documents.model import DocumentInfo
from engine.vault import Vault
from tests.engine.documents.plugin_parsers import GateParser, TestParsers
from tests.engine.documents.support import finds, open_vault
from tests.engine.watch_support import wait_until

#: Generous: a busy two-core machine starts a parser process slowly; the wait ends as soon as the state is reached.
PATIENCE_S = 60.0


def gated(gate: Path, *pages: str) -> bytes:
    """A ``.gate`` file: the gate's path, then its pages split by form feeds."""
    return (f"{gate}\n" + "\f".join(pages)).encode()


def info(vault: Vault, document_id: int) -> DocumentInfo:
    return vault.documents.get(document_id).info


def read_in_time(vault: Vault, document_id: int) -> Callable[[], bool]:
    return lambda: info(vault, document_id).reading is None


def test_a_background_upload_answers_at_once_shows_progress_then_is_searchable(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    seen: list[Change] = []
    with open_vault(tmp_path / "vault", start_workers=True, plugins=[TestParsers(GateParser())]) as vault:
        vault.changes.subscribe(seen.extend)
        payload = gated(gate, "The harbour master logs every ferry.", "Tides turn at noon.", "Gulls nest on the pier.")
        result = vault.documents.upload(name="harbour.gate", data=payload, background=True)
        assert result.status == "parsing" and result.document_id is not None
        doc_id = result.document_id
        waiting = info(vault, doc_id)
        assert waiting.status == "processing" and waiting.spans == 0 and waiting.reading is not None
        assert waiting.name == "harbour.gate" and "reading" not in waiting.metadata
        assert [d.id for d in vault.documents()] == [doc_id]  # listed while it waits
        assert (vault.paths.uploads / str(doc_id) / "payload").read_bytes() == payload
        # the parser counted its pages: the document says so, and the change feed told the GUI
        wait_until(lambda: (info(vault, doc_id).reading or _none()).pages_total == 3, PATIENCE_S)
        wait_until(lambda: any(c.type == "document.progress" and c.object_id == doc_id for c in seen), PATIENCE_S)
        gate.touch()
        wait_until(read_in_time(vault, doc_id), PATIENCE_S)
        stored = info(vault, doc_id)
        assert stored.status in ("processing", "ready") and stored.spans >= 1 and stored.page_count == 3
        assert finds(vault, "ferry")
        assert not (vault.paths.uploads / str(doc_id)).exists()  # the bytes go once the tree is stored
        assert any(c.type == "document.reading" and c.object_id == doc_id for c in seen)


def test_a_file_that_cannot_be_read_in_the_background_leaves_a_failed_document_and_its_quarantine(
    tmp_path: Path,
) -> None:
    with open_vault(tmp_path / "vault", start_workers=True) as vault:
        broken = b"%PDF-1.7\n" + b"\x00\x01 not a pdf at all " * 200
        result = vault.documents.upload(name="annual-report.pdf", data=broken, background=True)
        assert result.status == "parsing" and result.document_id is not None
        doc_id = result.document_id
        wait_until(read_in_time(vault, doc_id), PATIENCE_S)
        failed = info(vault, doc_id)
        assert failed.status == "failed" and failed.spans == 0
        assert failed.status_reason is not None and "held in quarantine" in failed.status_reason
        assert [q.name for q in vault.documents.quarantine()] == ["annual-report.pdf"]
        assert not (vault.paths.uploads / str(doc_id)).exists()
        # the same bytes again: refused at once with the reason, nothing queued
        again = vault.documents.upload(name="annual-report.pdf", data=broken, background=True)
        assert again.status == "quarantined" and again.quarantine_id is not None


def test_a_document_deleted_while_it_is_read_stays_deleted(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    with open_vault(tmp_path / "vault", start_workers=True, plugins=[TestParsers(GateParser())]) as vault:
        result = vault.documents.upload(name="draft.gate", data=gated(gate, "A draft nobody keeps."), background=True)
        assert result.document_id is not None
        doc_id = result.document_id
        wait_until(lambda: (info(vault, doc_id).reading or _none()).pages_total == 1, PATIENCE_S)
        vault.documents.delete(doc_id)
        assert not (vault.paths.uploads / str(doc_id)).exists()  # its kept bytes go with it, at once
        gate.touch()
        wait_until(lambda: vault.documents.reading() == 0, PATIENCE_S)
        assert vault.documents() == []
        assert not (vault.paths.uploads / str(doc_id)).exists()
        assert vault.store.query("SELECT count(*) FROM spans")[0][0] == 0


def test_an_upload_waiting_when_the_vault_closes_is_read_at_the_next_open(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    parsers = [TestParsers(GateParser())]
    with open_vault(tmp_path / "vault", start_workers=True, plugins=parsers) as vault:
        collection = vault.collections.create("Harbour")
        first = vault.documents.upload(
            name="log.gate", data=gated(gate, "The lamp was lit at dusk."), collection_id=collection.id, background=True
        )
        second = vault.documents.upload(name="tides.gate", data=gated(gate, "Spring tides in March."), background=True)
        assert first.document_id is not None and second.document_id is not None
        wait_until(lambda: (info(vault, first.document_id or 0).reading or _none()).pages_total == 1, PATIENCE_S)
    # closed mid-parse: nothing was stored, nothing refused, both still wait with their bytes
    gate.touch()
    with open_vault(tmp_path / "vault", start_workers=True, plugins=parsers) as vault:
        for doc_id in (first.document_id, second.document_id):
            wait_until(read_in_time(vault, doc_id), PATIENCE_S)
            assert info(vault, doc_id).spans >= 1
        assert info(vault, first.document_id).collection_ids == (collection.id,)
        assert finds(vault, "lamp")
        assert vault.documents.quarantine() == []
        assert list(vault.paths.uploads.iterdir()) == []


def test_a_waiting_document_whose_bytes_are_gone_says_so_at_the_next_open(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    parsers = [TestParsers(GateParser())]
    with open_vault(tmp_path / "vault", start_workers=True, plugins=parsers) as vault:
        result = vault.documents.upload(name="lost.gate", data=gated(gate, "Gone."), background=True)
        assert result.document_id is not None
        doc_id = result.document_id
        wait_until(lambda: (info(vault, doc_id).reading or _none()).pages_total == 1, PATIENCE_S)
    for item in (vault.paths.uploads / str(doc_id)).iterdir():
        item.unlink()
    (vault.paths.uploads / str(doc_id)).rmdir()
    (vault.paths.uploads / "999999").mkdir()  # bytes whose document is gone: swept
    with open_vault(tmp_path / "vault", start_workers=True, plugins=parsers) as vault:
        lost = info(vault, doc_id)
        assert lost.status == "failed" and lost.reading is None
        assert lost.status_reason is not None and "upload it again" in lost.status_reason
        assert list(vault.paths.uploads.iterdir()) == []


def test_forgetting_a_document_that_waits_to_be_read_removes_its_kept_bytes(tmp_path: Path) -> None:
    from engine.forget import ForgetScope

    gate = tmp_path / "gate"
    with open_vault(tmp_path / "vault", start_workers=True, plugins=[TestParsers(GateParser())]) as vault:
        first = vault.documents.upload(name="a.gate", data=gated(gate, "Alpha."), background=True)
        second = vault.documents.upload(name="b.gate", data=gated(gate, "Beta."), background=True)
        assert first.document_id is not None and second.document_id is not None
        assert (vault.paths.uploads / str(second.document_id)).exists()  # queued behind the first
        vault.forget(ForgetScope(document_id=second.document_id))
        assert not (vault.paths.uploads / str(second.document_id)).exists()
        gate.touch()
        wait_until(lambda: vault.documents.reading() == 0, PATIENCE_S)
        assert [d.id for d in vault.documents()] == [first.document_id]


def test_the_same_file_again_for_a_document_being_read_is_not_read_twice(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    with open_vault(tmp_path / "vault", start_workers=True, plugins=[TestParsers(GateParser())]) as vault:
        payload = gated(gate, "Once is enough.")
        first = vault.documents.upload(name="once.gate", data=payload, background=True)
        assert first.document_id is not None
        again = vault.documents.upload(name="once.gate", data=payload, document_id=first.document_id, background=True)
        assert (again.document_id, again.status) == (first.document_id, "parsing")  # not queued twice
        gate.touch()
        wait_until(read_in_time(vault, first.document_id), PATIENCE_S)
        assert len(vault.documents()) == 1
        meta = vault.store.query("SELECT metadata FROM documents")[0][0]
        assert "reading" not in json.loads(meta)


def test_a_small_upload_is_still_read_before_it_answers(tmp_path: Path) -> None:
    with open_vault(tmp_path / "vault", start_workers=True) as vault:
        result = vault.documents.upload(name="note.md", text="# Note\n\nBuy rope.", background=None)
        assert result.status == "processing" and result.spans >= 1
        assert not vault.paths.uploads.exists() or list(vault.paths.uploads.iterdir()) == []


class _NoneProgress:
    pages_total = None


def _none() -> _NoneProgress:
    return _NoneProgress()
