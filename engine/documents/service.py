"""``vault.documents``: upload, the document → section → span tree, deletion, quarantine (DESIGN §6).

Upload does the slow, risky work before taking the writer: read the bytes (size cap first), pick a parser by
extension or MIME type, parse in the sandbox (a failure quarantines the file by hash and parser version, and it is
not retried until one of them changes), cut spans along sections, pass each span through the privacy firewall,
embed the spans.  Then one transaction replaces the document's old tree (sections, spans, their full-text entries
and vectors) with the new one, so a recall never sees half of each.  Spans are searchable when ``upload``
returns (status ``processing``); section and document distillations follow in a background job (→ ``ready``).

Clear outcomes: a text format (Markdown, plain text, HTML) holding binary content is refused before it is parsed
and quarantined as ``invalid`` with a detail saying so (it would be indexed as mojibake); an empty file, a file
without extractable text, and a document whose outline or length passed ``documents.max_sections`` /
``documents.max_spans`` (see :func:`engine.documents.chunking.shape`) are stored ``degraded`` with a reason that
says which and what was kept.  A re-upload of a quarantined file answers its reason *and* detail.

Paths: a path upload reads the file its links lead to, never one in ``/proc``, ``/sys`` or ``/dev``.  A path named
by a client of the endpoint (``client_path``) must lead into a watched folder or ``documents.allowed_roots``, a
file of a watched folder (``within``) into that folder: otherwise :class:`PathNotAllowed`, and nothing is read.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import os
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pluggy

from engine.ai.embedders import Embedder
from engine.config import PrivacySettings, Settings
from engine.documents import originals
from engine.documents.background import BackgroundReader, PendingFolder, PendingRead
from engine.documents.chunking import SpanCut, TableCut, sections_of, shape
from engine.documents.content import binary_content
from engine.documents.model import (
    DOCUMENT_COLUMNS,
    READING_KEY,
    TABLE_COLUMNS,
    DocumentInfo,
    DocumentTree,
    QuarantineEntry,
    ReadProgress,
    SectionView,
    SpanView,
    TableInSection,
    UploadResult,
    document_from_row,
    table_from_row,
)
from engine.documents.sandbox import ParseFailure, ParserSandbox, SandboxLimits
from engine.dto import SpanSource
from engine.errors import (
    EnvironmentProblem,
    ModelUnavailable,
    NotFound,
    StorageFull,
    UnsupportedFile,
    UserError,
    ValidationError,
)
from engine.jobs import drop_document_jobs, enqueue
from engine.plugin_api import ParsedDocument, Parser
from engine.privacy import apply as firewall_apply
from engine.store import Store, Tx, chunked
from engine.temporal import from_epoch
from engine.vectors import VectorItem
from engine.vectors.base import VectorIndex
from engine.vectors.migration import queue_vectors
from engine.watching.containment import in_system_folder, open_resolved, real_path, resolve_within

log = logging.getLogger(__name__)

#: The status reason of a document made from an empty file.
EMPTY_FILE = "empty file: 0 bytes, nothing to index"
#: The status reason of a non-empty file in which the parser found no text.
NO_TEXT = "no text could be extracted from a non-empty file"
#: The setting that widens the folders a client may name a file in.
ALLOWED_ROOTS_SETTING = "documents.allowed_roots"


class PathNotAllowed(UserError):
    """A path upload that would read a file outside the folders Cairn may read from (HTTP 403).

    Raised before a byte is read, so a caller — a chat model steered by a prompt it read, say — learns nothing of the
    file's content.
    """

    code = "path_not_allowed"

    def __init__(self, message: str, *, fix: str, setting: str = ALLOWED_ROOTS_SETTING) -> None:
        super().__init__(message, fix=fix, details={"field": "path", "setting": setting})


@dataclass(frozen=True, slots=True)
class _Incoming:
    """An upload read and checked, before or after its parse: what storing or quarantining it needs."""

    target: int | None  # the document it becomes a new version of (or, read in the background, its waiting row)
    user_id: str
    project_id: str | None
    name: str
    path: str | None
    parser: Parser
    digest: str
    size: int
    source: str
    collection_id: int | None
    new: bool = False  # read in the background into a row made for it: a refusal leaves no earlier version

    def file_columns(self) -> dict[str, Any]:
        """The ``documents`` columns that describe the file itself, known before it is parsed."""
        return {
            "name": self.name,
            "path": self.path,
            "mime": mimetypes.guess_type(self.name)[0],
            "parser": self.parser.name,
            "parser_version": self.parser.version,
            "content_hash": self.digest,
            "size_bytes": self.size,
        }


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table as it is stored: where it lies, and its text passed through the firewall (caption and header lines
    first: ``header_chars`` of it), so a table shows nothing its spans would not."""

    cut: TableCut
    text: str
    header_chars: int

    @classmethod
    def of(cls, text: str, cut: TableCut, policy: Any) -> StoredTable:
        """The table ``cut`` of the document ``text``, its two parts firewalled apart so the header's length is
        known after any redaction."""
        header = firewall_apply(text[cut.start : cut.header_end], policy).text
        rows = firewall_apply(text[cut.header_end : cut.end], policy).text
        return cls(cut, header + rows, len(header))


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """A parsed upload ready to store: everything the write transaction needs, computed before it (parse, shape,
    firewall, embed)."""

    upload: _Incoming  # who, what and where from: the upload as read and checked
    parsed: ParsedDocument
    spans: Sequence[SpanCut]
    texts: Sequence[str]
    tables: Sequence[StoredTable]
    vectors: Any  # the spans' vectors, or None when the embedder was down (queued instead)
    reason: str | None  # why it is degraded, or None

    @property
    def status(self) -> str:
        """``degraded`` (stored with a reason: a cap, no text) or ``processing`` (its distillation is on the way)."""
        return "degraded" if self.reason else "processing"

    @property
    def pages(self) -> int | None:
        """The page count, for formats that have pages."""
        return len(self.parsed.pages) or None

    def version_columns(self) -> dict[str, Any]:
        """The ``documents`` columns that describe this version of the file: written alike by a new document and by
        a new version of an existing one."""
        return {
            **self.upload.file_columns(),
            "page_count": self.pages,
            "status": self.status,
            "status_reason": self.reason,
            "metadata": self.metadata_json,
        }

    @property
    def metadata_json(self) -> str:
        """The parser's metadata with the title and the first warnings, as stored."""
        parsed = self.parsed
        return json.dumps(
            {**dict(parsed.metadata), "title": parsed.title, "warnings": list(parsed.warnings)[:20]}, ensure_ascii=False
        )


def _insert_sections(tx: Tx, doc_id: int, parsed: ParsedDocument) -> list[int]:
    sections = sections_of(parsed)
    section_ids = tx.new_ids("section", len(sections))
    tx.executemany(
        "INSERT INTO sections(id, document_id, ordinal, level, title, start_char, end_char, "
        "page_start, page_end) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (sid, doc_id, i, s.level, s.title, s.start_char, s.end_char, s.page_start, s.page_end)
            for i, (sid, s) in enumerate(zip(section_ids, sections, strict=True))
        ],
    )
    return section_ids


def _insert_tables(tx: Tx, doc_id: int, doc: PreparedDocument, section_ids: Sequence[int]) -> None:
    tx.executemany(
        "INSERT INTO document_tables(document_id, section_id, start_char, end_char, header_chars, text) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(doc_id, section_ids[t.cut.section], t.cut.start, t.cut.end, t.header_chars, t.text) for t in doc.tables],
    )


def _insert_spans(tx: Tx, doc_id: int, doc: PreparedDocument, section_ids: Sequence[int]) -> list[int]:
    span_ids = tx.new_ids("span", len(doc.spans))
    texts = doc.texts
    tx.executemany(
        "INSERT INTO spans(id, document_id, section_id, ordinal, text, start_char, end_char, "
        "page_start, page_end, token_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                span_id,
                doc_id,
                section_ids[s.section],
                i,
                texts[i],
                s.start,
                s.end,
                s.page_start,
                s.page_end,
                len(texts[i]) // 4,
            )
            for i, (span_id, s) in enumerate(zip(span_ids, doc.spans, strict=True))
        ],
    )
    return span_ids


class DocumentsApi:
    """Documents of the vault (calling it lists them)."""

    def __init__(
        self,
        store: Store,
        plugins: pluggy.PluginManager,
        embedder: Embedder,
        vectors: VectorIndex,
        settings: Any,
        *,
        on_enqueue: Any = None,
        work_dir: Path | None = None,
        originals_dir: Path | None = None,
        uploads_dir: Path | None = None,
        emit: Callable[..., Any] | None = None,
    ) -> None:
        self._store = store
        self._originals_dir = originals_dir  # originals that came with a restore: a deleted document's go with it
        self._work_dir = work_dir  # the vault's private work folder, for the parser sandbox
        self._on_enqueue = on_enqueue or (lambda: None)  # wakes the job runner for the distillation job
        self._plugins = plugins
        self._embedder = embedder
        self._vectors = vectors
        self._settings = settings  # a callable returning the current Settings
        self._sandbox: ParserSandbox | None = None
        self._sandbox_lock = threading.Lock()
        self._parsers: list[Parser] | None = None
        self._closed = False
        # uploads read after their request was answered (None: every upload is read before it answers)
        self._pending = PendingFolder(uploads_dir) if uploads_dir is not None else None
        self._emit: Callable[..., Any] = emit or (lambda *_a, **_k: None)
        self._reader = BackgroundReader(self._read_waiting, self._announce)

    def close(self) -> None:
        """Stop the background reader and the parser workers; an upload being read waits for the next open."""
        self._reader.stop()
        with self._sandbox_lock:
            self._closed = True
            if self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None
        self._reader.join()

    # -- parsers -----------------------------------------------------------------------------------------------
    def parsers(self) -> list[Parser]:
        """Every registered document parser."""
        if self._parsers is None:
            found: list[Parser] = []
            self._plugins.hook.register_parsers(register=found.append)
            self._parsers = found
        return list(self._parsers)

    def parser_for(self, name: str, mime: str | None = None) -> Parser:
        """The parser for a file name (by extension) or MIME type.

        Raises:
            UnsupportedFile: no registered parser handles it.
        """
        suffix = Path(name).suffix.casefold()
        guessed = mime or mimetypes.guess_type(name)[0]
        for parser in self.parsers():
            if suffix and suffix in parser.extensions:
                return parser
        for parser in self.parsers():
            if guessed and guessed in parser.mime_types:
                return parser
        kinds = sorted({ext for p in self.parsers() for ext in p.extensions})
        raise UnsupportedFile(
            f"Cairn cannot read {Path(name).name!r} files of this type.",
            fix=f"Supported: {', '.join(kinds) or 'none (no parser plugins)'}.",
        )

    # -- upload ------------------------------------------------------------------------------------------------
    def upload(
        self,
        *,
        path: str | Path | None = None,
        name: str | None = None,
        data: bytes | None = None,
        text: str | None = None,
        document_id: int | None = None,
        collection_id: int | None = None,
        project_id: str | None = None,
        user_id: str = "default",
        source: str = "upload",
        mime: str | None = None,
        force: bool = False,
        client_path: bool = False,
        within: str | Path | None = None,
        background: bool | None = False,
    ) -> UploadResult:
        """Add or replace a document; see the module docstring.

        Give ``path``, or ``name`` with ``data`` (bytes) or ``text``.  ``document_id`` replaces that document;
        a ``path`` already in the vault replaces the document from that path.  ``force`` re-parses a file the
        quarantine holds.  ``client_path``: the path was named by a client of the endpoint (REST, MCP), not by the
        person at this computer, so it must lead into a watched folder or ``documents.allowed_roots``.
        ``within``: the watched folder the file was found in; it must lead inside it.  ``background``: store the
        document as waiting and read it on the background reader, answering ``parsing`` at once (None: when the file
        is larger than ``documents.background_above_bytes``); see :mod:`engine.documents.background`.

        Raises:
            ValidationError: missing or contradictory arguments, a file that is not there, too large.
            PathNotAllowed: the path leads out of the folders allowed to it, or into a system folder.
            UnsupportedFile: no parser for this type.
            NotFound: ``document_id`` or ``collection_id`` does not exist.
            StorageFull: a file to be read in the background cannot be kept.
        """
        settings: Settings = self._settings()
        allowed = self._allowed_folders(settings, client_path=client_path, within=within)
        file_path, display, payload = self._read(path, name, data, text, settings.documents.max_bytes, allowed)
        parser = self.parser_for(display, mime)
        digest = hashlib.sha256(payload).hexdigest()
        target = self._target(document_id, file_path, user_id)
        if collection_id is not None:
            self._require_collection(collection_id, user_id)
        if target is not None and not force:
            row = self._store.query(
                f"SELECT content_hash, parser_version, status, {_READING} FROM documents WHERE id = ?",
                (target,),
            )
            if row and row[0][3] == digest:  # the same file again while it waits to be read
                return self._result(target, "parsing")
            if row and row[0][0] == digest and row[0][1] == parser.version and row[0][2] != "failed":
                if collection_id is not None:
                    self._store.write(lambda tx: _add_member(tx, collection_id, target))
                return self._result(target, "unchanged")
        held = self._quarantined(digest, parser, user_id)
        if held is not None and not force:
            # the same answer as when it was quarantined: the reason and what the parser said
            return UploadResult(None, "quarantined", 0, 0, display, f"{held.reason}: {held.detail}", held.id)
        refusal = _binary_refusal(parser, payload)
        incoming = _Incoming(
            target=target,
            user_id=user_id,
            project_id=project_id,
            name=display,
            path=file_path,
            parser=parser,
            digest=digest,
            size=len(payload),
            source=source,
            collection_id=collection_id,
        )
        if background is None:
            background = len(payload) > settings.documents.background_above_bytes
        if refusal is None and background and self._pending is not None:
            return self._read_later(incoming, payload, mime)
        parsed = refusal or self._parse(parser, payload, display, settings)
        return self._keep(incoming, parsed, settings)

    def _keep(
        self, incoming: _Incoming, parsed: ParsedDocument | ParseFailure, settings: Settings, *, waited: bool = False
    ) -> UploadResult:
        """Store what the parser made of an upload (or quarantine what it could not read); ``waited``: the upload
        was read in the background, and its document may have been deleted meanwhile (then nothing is stored)."""
        display, target, user_id = incoming.name, incoming.target, incoming.user_id
        if isinstance(parsed, ParseFailure):
            failure = parsed

            def refuse(tx: Tx) -> int | None:
                if waited and target is not None and not _still_reading(tx, target, incoming.digest):
                    return None
                return self._quarantine(
                    tx,
                    user_id,
                    display,
                    incoming.path,
                    incoming.digest,
                    incoming.size,
                    incoming.parser,
                    failure,
                    target,
                    new=incoming.new,
                )

            quarantine_id = self._store.write(refuse)
            return UploadResult(None, "quarantined", 0, 0, display, f"{parsed.reason}: {parsed.detail}", quarantine_id)
        shaped = shape(parsed, max_sections=settings.documents.max_sections, max_spans=settings.documents.max_spans)
        parsed = _masked_structure(replace(parsed, sections=shaped.sections), settings.privacy)
        spans = shaped.spans
        texts = [firewall_apply(parsed.text[s.start : s.end], settings.privacy).text for s in spans]
        tables = [StoredTable.of(parsed.text, t, settings.privacy) for t in shaped.tables]
        vectors = None
        if texts:
            try:
                vectors = self._embedder.embed(texts)
            except ModelUnavailable as exc:
                # stored all the same: the spans' vectors wait in the backlog for the embedder
                log.warning("embedder unavailable while storing %s (%s): vectors queued", display, exc.message)
        reasons = [EMPTY_FILE] if not incoming.size else [NO_TEXT] if not parsed.text.strip() else []
        reasons += shaped.notes
        prepared = PreparedDocument(
            upload=incoming,
            parsed=parsed,
            spans=spans,
            texts=texts,
            tables=tables,
            vectors=vectors,
            reason="; ".join(reasons) or None,
        )

        def store(tx: Tx) -> int | None:
            if waited and target is not None and not _still_reading(tx, target, incoming.digest):
                return None  # deleted (or uploaded again) while it was being read
            return self._write_tree(tx, prepared)

        doc_id = self._store.write(store)
        if doc_id is None:
            return UploadResult(None, "deleted", 0, 0, display, "deleted while it was being read")
        self._on_enqueue()
        return self._result(doc_id, "degraded" if reasons else "processing")

    # -- reading in the background -------------------------------------------------------------------------------
    def _read_later(self, incoming: _Incoming, payload: bytes, mime: str | None) -> UploadResult:
        """Store the document as waiting to be read, keep its bytes, and queue it; answers ``parsing`` at once.

        Raises:
            StorageFull: the bytes cannot be kept (nothing is left behind).
        """
        assert self._pending is not None
        target = incoming.target
        doc_id = int(self._store.write(lambda tx: self._waiting_row(tx, incoming)))
        kept = {name: getattr(incoming, name) for name in _KEPT_FOR_LATER}
        pending = PendingRead(document_id=doc_id, mime=mime, **{**kept, "new": target is None})
        try:
            self._pending.keep(pending, payload)
        except OSError as exc:
            self._pending.drop(doc_id)
            self._store.write(lambda tx: _undo_waiting(tx, doc_id, new=target is None))
            raise StorageFull(
                f"{incoming.name} could not be kept to be read ({exc.strerror or exc}); nothing was added.",
                fix="Free some disk space in the vault's folder and upload it again.",
            ) from exc
        self._reader.submit(doc_id)
        return self._result(doc_id, "parsing")

    def _waiting_row(self, tx: Tx, incoming: _Incoming) -> int:
        """The document row an upload read in the background is seen as until it is stored."""
        if incoming.target is None:
            doc_id = tx.new_id("document")
            row = {
                "id": doc_id,
                "user_id": incoming.user_id,
                "project_id": incoming.project_id,
                **incoming.file_columns(),
                "status": "processing",
                "metadata": json.dumps({READING_KEY: incoming.digest}),
                "created_at": tx.now,
                "updated_at": tx.now,
                "source": incoming.source,
            }
            tx.execute(
                f"INSERT INTO documents({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
            )
        else:
            doc_id = incoming.target
            tx.execute(
                f"UPDATE documents SET metadata = json_set(metadata, '$.{READING_KEY}', ?), updated_at = ? "
                "WHERE id = ?",
                (incoming.digest, tx.now, doc_id),
            )
        if incoming.collection_id is not None:
            _add_member(tx, incoming.collection_id, doc_id)
        if incoming.path is not None:
            tx.execute("UPDATE files SET document_id = ? WHERE path = ?", (doc_id, incoming.path))
        tx.emit("document.reading", doc_id, name=incoming.name, user_id=incoming.user_id)
        return doc_id

    def _read_waiting(self, document_id: int, on_progress: Callable[[int, int], None]) -> None:
        """Read one waiting upload (the background reader's thread): parse, then store or quarantine."""
        assert self._pending is not None
        loaded = self._pending.load(document_id)
        if loaded is None:
            self._abandon(document_id, "its file was lost before it could be read; upload it again")
            return
        pending, payload = loaded
        if not self._store.query(_STILL_READING, (document_id, pending.digest)):
            self._pending.drop(document_id)  # deleted, or uploaded again, while it waited
            return
        settings: Settings = self._settings()
        try:
            parser = self.parser_for(pending.name, pending.mime)
        except UnsupportedFile as exc:  # its parser plugin was removed since
            self._abandon(document_id, exc.message)
            self._pending.drop(document_id)
            return
        try:
            parsed = self._parse(parser, payload, pending.name, settings, on_progress)
        except RuntimeError:
            if self._reader.stopping:
                return  # closed under it: read again at the next open
            raise
        except EnvironmentProblem as exc:  # not the file's fault: it waits for the next open
            note = f"waiting to be read: {exc.message}"
            self._store.write(
                lambda tx: tx.execute("UPDATE documents SET status_reason = ? WHERE id = ?", (note, document_id))
            )
            return
        if self._reader.stopping:
            return  # the parse was cut short by closing, whatever it answered
        incoming = _Incoming(
            target=document_id, parser=parser, **{name: getattr(pending, name) for name in _KEPT_FOR_LATER}
        )
        self._keep(incoming, parsed, settings, waited=True)
        self._pending.drop(document_id)

    def _abandon(self, document_id: int, reason: str) -> None:
        """A waiting upload that can no longer be read: its document says why (an earlier version stays)."""

        def op(tx: Tx) -> None:
            tx.execute(
                f"UPDATE documents SET status = 'failed', status_reason = ?, "
                f"{_END_READING}, updated_at = ? WHERE id = ?",
                (reason, tx.now, document_id),
            )
            tx.emit("document.degraded", document_id, reason=reason)

        self._store.write(op)

    def _announce(self, document_id: int, progress: ReadProgress) -> None:
        self._emit("document.progress", document_id, pages_read=progress.pages_read, pages_total=progress.pages_total)

    def resume_reading(self) -> int:
        """Queue the uploads a previous run left waiting (at open); returns how many.  A document waiting without
        its bytes is marked failed with the reason, and bytes without their document are removed."""
        if self._pending is None:
            return 0
        kept = set(self._pending.waiting())
        rows = self._store.query(f"SELECT id FROM documents WHERE {_READING} IS NOT NULL")
        waiting = [int(r[0]) for r in rows]
        for doc_id in sorted(kept - set(waiting)):
            self._pending.drop(doc_id)
        resumed = 0
        for doc_id in sorted(waiting):
            if doc_id in kept:
                self._reader.submit(doc_id)
                resumed += 1
            else:
                self._abandon(doc_id, "Cairn stopped before this upload's file was kept; upload it again")
        return resumed

    def reading(self) -> int:
        """Uploads waiting to be read or being read in the background."""
        return self._reader.waiting()

    def _allowed_folders(self, settings: Settings, *, client_path: bool, within: str | Path | None) -> _Allowed | None:
        """The folders a path upload must lead into; None: anywhere but the system folders."""
        if within is not None:
            return _Allowed((str(within),), watched=str(within))
        if client_path:
            folders = (*(os.path.expanduser(f.path) for f in settings.watch.folders), *settings.documents.allowed_roots)
            return _Allowed(folders)
        return None

    def _read(
        self,
        path: str | Path | None,
        name: str | None,
        data: bytes | None,
        text: str | None,
        max_bytes: int,
        allowed: _Allowed | None = None,
    ) -> tuple[str | None, str, bytes]:
        given = sum(x is not None for x in (path, data, text))
        if given != 1:
            raise ValidationError("path", "give exactly one of path, data (bytes) or text")
        if path is not None:
            file_path = Path(path).expanduser()
            real = _admitted(file_path, allowed)
            try:
                with os.fdopen(open_resolved(real), "rb") as handle:
                    info = os.fstat(handle.fileno())
                    if not stat.S_ISREG(info.st_mode):
                        raise ValidationError("path", f"{file_path} is not a file (or cannot be read)")
                    if info.st_size > max_bytes:
                        raise ValidationError(
                            "path",
                            f"{file_path.name} is {info.st_size:,} bytes; the limit is {max_bytes:,}",
                            fix="Raise documents.max_bytes in Settings for large files.",
                        )
                    payload = handle.read(max_bytes + 1)
            except OSError as exc:  # unreadable, gone or swapped for a link since the check: a user error
                raise ValidationError(
                    "path",
                    f"{file_path.name} cannot be read ({exc.strerror or exc})",
                    fix="Check the file's permissions and that it is still there.",
                ) from exc
            if len(payload) > max_bytes:  # it grew while it was read
                raise ValidationError(
                    "path",
                    f"{file_path.name} is more than {max_bytes:,} bytes",
                    fix="Raise documents.max_bytes in Settings for large files.",
                )
            return real, name or file_path.name, payload
        if not name or not name.strip():
            raise ValidationError("name", "is required with data or text (its extension picks the parser)")
        payload = data if data is not None else (text or "").encode("utf-8")
        if len(payload) > max_bytes:
            raise ValidationError("data", f"is {len(payload):,} bytes; the limit is {max_bytes:,}")
        return None, name.strip(), payload

    def _target(self, document_id: int | None, file_path: str | None, user_id: str) -> int | None:
        if document_id is not None:
            if not self._store.query("SELECT 1 FROM documents WHERE id = ? AND user_id = ?", (document_id, user_id)):
                raise NotFound("document", document_id)
            return document_id
        if file_path is not None:
            row = self._store.query(
                "SELECT id FROM documents WHERE path = ? AND user_id = ? ORDER BY id LIMIT 1", (file_path, user_id)
            )
            if row:
                return int(row[0][0])
        return None

    def _parse(
        self,
        parser: Parser,
        payload: bytes,
        name: str,
        settings: Settings,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> ParsedDocument | ParseFailure:
        with self._sandbox_lock:
            if self._closed:
                raise RuntimeError("the documents service is closed")
            if self._sandbox is None:
                self._sandbox = ParserSandbox(SandboxLimits.from_settings(settings.documents), work_root=self._work_dir)
            sandbox = self._sandbox
        return sandbox.parse(parser, payload, name=name, on_progress=on_progress)

    def _quarantined(self, digest: str, parser: Parser, user_id: str) -> QuarantineEntry | None:
        rows = self._store.query(
            "SELECT id, name, path, content_hash, size_bytes, parser, parser_version, reason, detail, created_at "
            "FROM quarantine WHERE user_id = ? AND content_hash = ? AND parser = ? AND parser_version = ?",
            (user_id, digest, parser.name, parser.version),
        )
        return _quarantine_entry(rows[0]) if rows else None

    def _quarantine(
        self,
        tx: Tx,
        user_id: str,
        name: str,
        path: str | None,
        digest: str,
        size: int,
        parser: Parser,
        failure: ParseFailure,
        target: int | None,
        *,
        new: bool = False,
    ) -> int:
        if target is not None:
            # the file changed into something unreadable: its old version no longer matches what is on disk (or,
            # ``new``, the document waiting for it was never more than its name)
            reason = (
                f"could not be read ({failure.reason}); the file is held in quarantine"
                if new
                else f"the latest version could not be read ({failure.reason}); showing the previous one"
            )
            tx.execute(
                f"UPDATE documents SET status = 'failed', status_reason = ?, "
                f"{_END_READING}, updated_at = ? WHERE id = ?",
                (reason, tx.now, target),
            )
            tx.emit("document.degraded", target, reason=failure.reason, user_id=user_id)
        existing = tx.scalar(
            "SELECT id FROM quarantine WHERE user_id = ? AND content_hash = ? AND parser = ? AND parser_version = ?",
            (user_id, digest, parser.name, parser.version),
        )
        if existing is not None:
            return int(existing)
        quarantine_id = tx.new_id("quarantine")
        tx.execute(
            "INSERT INTO quarantine(id, user_id, name, path, content_hash, size_bytes, parser, parser_version, "
            "reason, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                quarantine_id,
                user_id,
                name,
                path,
                digest,
                size,
                parser.name,
                parser.version,
                failure.reason,
                failure.detail[:2000],
                tx.now,
            ),
        )
        tx.emit("document.quarantined", quarantine_id, reason=failure.reason, user_id=user_id)
        return quarantine_id

    def _write_tree(self, tx: Tx, doc: PreparedDocument) -> int:
        """Store a parsed document: its row (new, or the old one refilled), sections, spans and their vectors, then
        its collection, its watched file, and the distillation job; returns its id."""
        up = doc.upload
        doc_id = self._insert_document(tx, doc) if up.target is None else self._replace_document(tx, doc, up.target)
        section_ids = _insert_sections(tx, doc_id, doc.parsed)
        span_ids = _insert_spans(tx, doc_id, doc, section_ids)
        _insert_tables(tx, doc_id, doc, section_ids)
        if doc.vectors is not None and span_ids:
            self._vectors.add(
                tx,
                [
                    VectorItem(span_id, "span", up.user_id, doc.vectors[i], up.digest)
                    for i, span_id in enumerate(span_ids)
                ],
            )
        elif span_ids:
            queue_vectors(
                tx, self._vectors.space_id, [(span_id, "span", up.user_id, up.digest) for span_id in span_ids]
            )
        if up.collection_id is not None:
            _add_member(tx, up.collection_id, doc_id)
        if up.path is not None:
            tx.execute("UPDATE files SET document_id = ? WHERE path = ?", (doc_id, up.path))
        if doc.reason:
            tx.emit("document.degraded", doc_id, name=up.name, user_id=up.user_id, reason=doc.reason)
        if span_ids:
            # a degraded document with text (past a cap) is distilled too; it stays degraded (see distill.py)
            enqueue(
                tx,
                "distill_document",
                {"document_id": doc_id, "content_hash": up.digest},
                priority=120,
                dedupe_key=f"distill:{doc_id}:{up.digest}",
            )
            if not doc.reason:
                tx.emit("document.processing", doc_id, name=up.name, user_id=up.user_id, spans=len(span_ids))
        return doc_id

    def _insert_document(self, tx: Tx, doc: PreparedDocument) -> int:
        doc_id = tx.new_id("document")
        row = {
            "id": doc_id,
            "user_id": doc.upload.user_id,
            "project_id": doc.upload.project_id,
            **doc.version_columns(),
            "created_at": tx.now,
            "updated_at": tx.now,
            "source": doc.upload.source,
        }
        tx.execute(f"INSERT INTO documents({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
        return doc_id

    def _replace_document(self, tx: Tx, doc: PreparedDocument, doc_id: int) -> int:
        """Refill an existing document's row for a new version: its old sections, spans and vectors go."""
        old = [
            int(r[0])
            for r in tx.execute(
                "SELECT id FROM spans WHERE document_id = ? UNION ALL SELECT id FROM sections WHERE document_id = ?",
                (doc_id, doc_id),
            ).fetchall()
        ]
        for chunk in chunked(old):
            tx.execute(f"DELETE FROM objects WHERE id IN ({','.join('?' * len(chunk))})", tuple(chunk))
        self._vectors.delete(tx, [doc_id])
        version = doc.version_columns()
        # a re-upload by content keeps the path and project a watched file or an earlier upload gave it
        assignments = [f"{c} = COALESCE(?, {c})" if c == "path" else f"{c} = ?" for c in version]
        tx.execute(
            f"UPDATE documents SET {', '.join(assignments)}, distillation = NULL, distiller = NULL, updated_at = ?, "
            "project_id = COALESCE(?, project_id) WHERE id = ?",
            (*version.values(), tx.now, doc.upload.project_id, doc_id),
        )
        self._vectors.delete(tx, old)
        return doc_id

    def _result(self, document_id: int, status: str) -> UploadResult:
        info = self.get(document_id).info
        return UploadResult(
            document_id,
            status if status in ("unchanged", "parsing") else info.status,
            info.sections,
            info.spans,
            info.name,
            info.status_reason or "",
        )

    # -- reading -----------------------------------------------------------------------------------------------
    def __call__(
        self,
        *,
        user_id: str | None = None,
        project_id: str | None = None,
        collection_id: int | None = None,
        q: str | None = None,
        limit: int = 1000,
    ) -> list[DocumentInfo]:
        """Documents, most recently updated first; with ``q``, those whose name contains it (any case)."""
        sql = f"SELECT {_qualified('d')} , {_counts('d')} FROM documents d WHERE 1"
        args: list[Any] = []
        if q:
            sql += " AND instr(casefold(d.name), ?) > 0"
            args.append(q.casefold())
        if user_id:
            sql += " AND d.user_id = ?"
            args.append(user_id)
        if project_id:
            sql += " AND d.project_id = ?"
            args.append(project_id)
        if collection_id is not None:
            sql += " AND d.id IN (SELECT document_id FROM collection_documents WHERE collection_id = ?)"
            args.append(collection_id)
        rows = self._store.query(sql + " ORDER BY d.updated_at DESC, d.id DESC LIMIT ?", (*args, limit))
        return [self._with_progress(document_from_row(r)) for r in rows]

    def _with_progress(self, info: DocumentInfo) -> DocumentInfo:
        """A document being read, with how far its reading has come in this process."""
        if info.reading is None:
            return info
        return replace(info, reading=self._reader.progress(info.id) or info.reading)

    def get(self, document_id: int) -> DocumentTree:
        """A document with its sections and spans."""
        rows = self._store.query(
            f"SELECT {_qualified('d')}, {_counts('d')} FROM documents d WHERE d.id = ?", (document_id,)
        )
        if not rows:
            raise NotFound("document", document_id)
        info = self._with_progress(document_from_row(rows[0]))
        spans: dict[int, list[SpanView]] = {}
        for r in self._store.query(
            "SELECT id, section_id, ordinal, text, start_char, end_char, page_start, page_end "
            "FROM spans WHERE document_id = ? ORDER BY ordinal",
            (document_id,),
        ):
            spans.setdefault(int(r[1]) if r[1] is not None else -1, []).append(
                SpanView(int(r[0]), int(r[2]), str(r[3]), int(r[4]), int(r[5]), r[6], r[7])
            )
        tables: dict[int, list[TableInSection]] = {}
        for r in self._store.query(
            f"SELECT {TABLE_COLUMNS} FROM document_tables WHERE document_id = ? ORDER BY start_char", (document_id,)
        ):
            section_id, table = table_from_row(r)
            tables.setdefault(section_id, []).append(table)
        sections = tuple(
            SectionView(
                int(r[0]),
                int(r[1]),
                int(r[2]),
                str(r[3]),
                int(r[4]),
                int(r[5]),
                r[6],
                r[7],
                r[8],
                tuple(spans.get(int(r[0]), [])),
                tuple(tables.get(int(r[0]), [])),
            )
            for r in self._store.query(
                "SELECT id, ordinal, level, title, start_char, end_char, page_start, "
                "page_end, distillation FROM sections WHERE document_id = ? ORDER BY ordinal",
                (document_id,),
            )
        )
        return DocumentTree(info, sections)

    def section(self, section_id: int) -> SectionView:
        """One section with its spans."""
        row = self._store.query("SELECT document_id FROM sections WHERE id = ?", (section_id,))
        if not row:
            raise NotFound("section", section_id)
        for section in self.get(int(row[0][0])).sections:
            if section.id == section_id:
                return section
        raise NotFound("section", section_id)

    def span(self, span_id: int) -> SpanView:
        """One span."""
        rows = self._store.query(
            "SELECT id, ordinal, text, start_char, end_char, page_start, page_end FROM spans WHERE id = ?", (span_id,)
        )
        if not rows:
            raise NotFound("span", span_id)
        r = rows[0]
        return SpanView(int(r[0]), int(r[1]), str(r[2]), int(r[3]), int(r[4]), r[5], r[6])

    def span_source(self, span_id: int) -> SpanSource:
        """One span with its document's name and status, the headings above it and its pages.

        Raises:
            NotFound: no such span (its document was deleted or re-read since).
        """
        rows = self._store.query(
            "SELECT sp.id, sp.document_id, d.name, d.status, sp.section_id, sp.ordinal, sp.text, sp.start_char, "
            "sp.end_char, sp.page_start, sp.page_end FROM spans sp JOIN documents d ON d.id = sp.document_id "
            "WHERE sp.id = ?",
            (span_id,),
        )
        if not rows:
            raise NotFound("span", span_id)
        r = rows[0]
        section_id = int(r[4]) if r[4] is not None else None
        return SpanSource(
            span_id=int(r[0]),
            document_id=int(r[1]),
            document_name=str(r[2]),
            document_status=str(r[3]),
            section_id=section_id,
            section_path=self._section_path(int(r[1]), section_id),
            ordinal=int(r[5]),
            text=str(r[6]),
            start_char=int(r[7]),
            end_char=int(r[8]),
            page_start=r[9],
            page_end=r[10],
        )

    def _section_path(self, document_id: int, section_id: int | None) -> tuple[str, ...]:
        """The titles from the outermost heading down to ``section_id``: sections are stored flat, in order, with
        their heading level, so the enclosing ones are the nearest earlier sections of a shallower level."""
        if section_id is None:
            return ()
        open_sections: list[tuple[int, str]] = []  # (level, title) of the headings still open
        for sid, level, title in self._store.query(
            "SELECT id, level, title FROM sections WHERE document_id = ? "
            "AND ordinal <= (SELECT ordinal FROM sections WHERE id = ?) ORDER BY ordinal",
            (document_id, section_id),
        ):
            while open_sections and open_sections[-1][0] >= int(level):
                open_sections.pop()
            open_sections.append((int(level), str(title)))
            if int(sid) == section_id:
                break
        return tuple(title for _level, title in open_sections)

    def quarantined(self, quarantine_id: int) -> QuarantineEntry:
        """One quarantined file."""
        for entry in self.quarantine():
            if entry.id == quarantine_id:
                return entry
        raise NotFound("quarantined file", quarantine_id)

    def delete(self, document_id: int) -> int:
        """Delete a document with its sections, spans, vectors, distillations and memberships; returns its id."""

        def op(tx: Tx) -> int:
            if tx.scalar("SELECT id FROM documents WHERE id = ?", (document_id,)) is None:
                raise NotFound("document", document_id)
            ids = [
                int(r[0])
                for r in tx.execute(
                    "SELECT id FROM spans WHERE document_id = ? "
                    "UNION ALL SELECT id FROM sections WHERE document_id = ?",
                    (document_id, document_id),
                ).fetchall()
            ]
            self._vectors.delete(tx, [*ids, document_id])
            for chunk in chunked(ids):
                tx.execute(f"DELETE FROM objects WHERE id IN ({','.join('?' * len(chunk))})", tuple(chunk))
            # A file of a watched folder keeps its row (path, size, mtime, hash) without a document: the watcher
            # then leaves the unchanged file alone instead of ingesting it again at its next scan, and an edited
            # file comes back as a new document.  (The foreign key would null it anyway; this says so.)
            tx.execute("UPDATE files SET document_id = NULL WHERE document_id = ?", (document_id,))
            tx.execute("DELETE FROM objects WHERE id = ?", (document_id,))
            drop_document_jobs(tx, "distill_document", document_id)
            tx.emit("document.deleted", document_id)
            return document_id

        deleted = int(self._store.write(op))
        if self._originals_dir is not None:
            originals.sweep(self._store, self._originals_dir)
        self.sweep_waiting()
        return deleted

    def sweep_waiting(self) -> int:
        """Remove the kept bytes of uploads whose document is gone (deleted or forgotten while it waited to be read):
        a forget leaves no copy behind.  A parse already under way has its bytes in memory and ends without storing
        anything.  Returns how many were removed.  The folders are laid out as the originals' are, one per
        document id, so the originals' sweep serves."""
        return 0 if self._pending is None else originals.sweep(self._store, self._pending.folder)

    # -- quarantine --------------------------------------------------------------------------------------------
    def quarantine(self, *, user_id: str | None = None) -> list[QuarantineEntry]:
        """Files that could not be parsed, with their typed reason."""
        sql = (
            "SELECT id, name, path, content_hash, size_bytes, parser, parser_version, reason, detail, created_at "
            "FROM quarantine"
        )
        args: tuple[Any, ...] = ()
        if user_id:
            sql += " WHERE user_id = ?"
            args = (user_id,)
        return [_quarantine_entry(r) for r in self._store.query(sql + " ORDER BY created_at DESC", args)]

    def retry(self, quarantine_id: int) -> UploadResult:
        """Parse a quarantined file again (it must still be at its path)."""
        rows = self._store.query("SELECT path, name, user_id FROM quarantine WHERE id = ?", (quarantine_id,))
        if not rows:
            raise NotFound("quarantined file", quarantine_id)
        path, name, user_id = rows[0]
        if not path or not Path(path).is_file():
            raise ValidationError(
                "quarantine_id", f"{name} is no longer at {path or 'a known path'}", fix="Upload the file again."
            )
        if real_path(path) != path:
            # recorded as a real path: a link there now is not the file that was quarantined
            raise ValidationError(
                "quarantine_id", f"{path} has been replaced by a link since it was quarantined", fix="Upload it again."
            )
        self._store.write(lambda tx: tx.execute("DELETE FROM objects WHERE id = ?", (quarantine_id,)))
        return self.upload(path=path, user_id=str(user_id), force=True)

    def _require_collection(self, collection_id: int, user_id: str) -> None:
        if not self._store.query("SELECT 1 FROM collections WHERE id = ? AND user_id = ?", (collection_id, user_id)):
            raise NotFound("collection", collection_id)


#: The hash of the upload a document waits for (NULL when it waits for none), and the assignment that ends the wait.
_READING = f"json_extract(metadata, '$.{READING_KEY}')"
_END_READING = f"metadata = json_remove(metadata, '$.{READING_KEY}')"
_STILL_READING = f"SELECT 1 FROM documents WHERE id = ? AND {_READING} = ?"

#: What an upload read in the background keeps on disk of its :class:`_Incoming` (the parser is found again by name).
_KEPT_FOR_LATER = ("user_id", "project_id", "name", "path", "digest", "size", "source", "collection_id", "new")


def _still_reading(tx: Tx, document_id: int, digest: str) -> bool:
    """The document still waits for this upload (not deleted, not superseded by another upload meanwhile)."""
    return tx.scalar(_STILL_READING, (document_id, digest)) is not None


def _undo_waiting(tx: Tx, document_id: int, *, new: bool) -> None:
    """Take back a waiting row whose bytes could not be kept: a new one goes, an existing one forgets the wait."""
    if new:
        tx.execute("UPDATE files SET document_id = NULL WHERE document_id = ?", (document_id,))
        tx.execute("DELETE FROM objects WHERE id = ?", (document_id,))
    else:
        tx.execute(f"UPDATE documents SET {_END_READING} WHERE id = ?", (document_id,))


@dataclass(frozen=True, slots=True)
class _Allowed:
    """The folders a path upload must lead into: one watched folder (``watched``), or those a client may name."""

    folders: tuple[str, ...]
    watched: str | None = None


def _admitted(file_path: Path, allowed: _Allowed | None) -> str:
    """The real path to read for ``file_path``, checked against the folders allowed to this upload.

    Raises:
        ValidationError: it leads nowhere (missing, a dangling link, a loop of links) or to no regular file.
        PathNotAllowed: it leads into a system folder, or out of the ``allowed`` folders.
    """
    real = real_path(file_path)
    if real is None or not os.path.isfile(real):
        raise ValidationError("path", f"{file_path} is not a file (or cannot be read)")
    if in_system_folder(real):
        raise PathNotAllowed(
            f"{file_path} leads into a system folder (/proc, /sys, /dev): those hold no documents",
            fix="Upload a document file; the process's environment, memory and devices are never read.",
        )
    if allowed is not None and resolve_within(real, allowed.folders) is None:
        if allowed.watched is not None:
            raise PathNotAllowed(
                f"{file_path} leads out of the watched folder {allowed.watched}; links there are followed only to "
                "files inside it",
                fix="Move or copy the file into the watched folder instead of linking to it.",
                setting="watch.folders",
            )
        raise PathNotAllowed(
            f"{file_path} is not in a folder Cairn may read files from by path (the watched folders or "
            f"{ALLOWED_ROOTS_SETTING}; links count by where they lead)",
            fix=f"Add its folder to {ALLOWED_ROOTS_SETTING} in Settings → Advanced → Documents (or watch the "
            "folder), or upload the file's content instead of its path.",
        )
    return real


def _binary_refusal(parser: Parser, payload: bytes) -> ParseFailure | None:
    """A quarantine reason for binary content given to a text parser (it would be read as mojibake), else None."""
    if not any(kind.startswith("text/") for kind in parser.mime_types):
        return None
    found = binary_content(payload)
    if found is None:
        return None
    return ParseFailure(
        "invalid", f"binary content, not {parser.name} text: {found} (a binary file with a text file's name?)"
    )


def _masked_structure(parsed: ParsedDocument, policy: PrivacySettings) -> ParsedDocument:
    """``parsed`` with its title, section titles and metadata values passed through the privacy firewall.

    Like span texts, these are stored, shown in recall and handed to the model that writes distillations.  The
    text itself is left alone: span offsets index it, and each span is masked on its own.
    """

    def mask(value: str) -> str:
        return firewall_apply(value, policy).text if value else value

    return replace(
        parsed,
        title=mask(parsed.title),
        sections=tuple(replace(section, title=mask(section.title)) for section in parsed.sections),
        metadata={key: mask(value) for key, value in parsed.metadata.items()},
    )


def _add_member(tx: Tx, collection_id: int, document_id: int) -> None:
    tx.execute(
        "INSERT OR IGNORE INTO collection_documents(collection_id, document_id, added_at) VALUES (?, ?, ?)",
        (collection_id, document_id, tx.now),
    )
    tx.emit("collection.changed", collection_id, document_id=document_id)


def _qualified(alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in DOCUMENT_COLUMNS.split(","))


def _counts(alias: str) -> str:
    return (
        f"(SELECT COUNT(*) FROM sections x WHERE x.document_id = {alias}.id), "
        f"(SELECT COUNT(*) FROM spans y WHERE y.document_id = {alias}.id), "
        f"(SELECT GROUP_CONCAT(collection_id) FROM collection_documents c WHERE c.document_id = {alias}.id), "
        f"{alias}.distillation"
    )


def _quarantine_entry(r: Sequence[Any]) -> QuarantineEntry:
    return QuarantineEntry(
        int(r[0]),
        str(r[1]),
        r[2],
        str(r[3]),
        int(r[4]),
        str(r[5]),
        str(r[6]),
        str(r[7]),
        str(r[8]),
        from_epoch(float(r[9])),
    )
