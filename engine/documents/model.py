"""Document DTOs: what ``vault.documents`` and ``vault.collections`` return."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.temporal import from_epoch

DOCUMENT_COLUMNS = (
    "id, user_id, project_id, name, path, mime, parser, parser_version, content_hash, size_bytes, page_count, "
    "status, status_reason, metadata, created_at, updated_at"
)


#: The metadata key marking a document whose upload waits to be read in the background (its value: the upload's
#: SHA-256).  Internal: :func:`document_from_row` turns it into :attr:`DocumentInfo.reading`.
READING_KEY = "reading"


@dataclass(frozen=True, slots=True)
class ReadProgress:
    """How far the reading of a document has come; ``pages_total`` is None until the parser has counted them."""

    pages_read: int
    pages_total: int | None


@dataclass(frozen=True, slots=True)
class UploadResult:
    """What an upload did: ``processing`` / ``ready`` / ``degraded`` / ``unchanged`` / ``quarantined``, or
    ``parsing`` (stored as waiting, read in the background)."""

    document_id: int | None
    status: str
    sections: int
    spans: int
    name: str
    reason: str = ""
    quarantine_id: int | None = None


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A document without its tree."""

    id: int
    user_id: str
    project_id: str | None
    name: str
    path: str | None
    mime: str | None
    parser: str | None
    parser_version: str | None
    content_hash: str
    size_bytes: int
    page_count: int | None
    status: str
    status_reason: str | None
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    sections: int
    spans: int
    collection_ids: tuple[int, ...]
    distillation: str | None
    reading: ReadProgress | None = None  # set while its upload waits or is being read in the background


@dataclass(frozen=True, slots=True)
class SpanView:
    """A span of a document (offsets into the document's text)."""

    id: int
    ordinal: int
    text: str
    start_char: int
    end_char: int
    page_start: int | None
    page_end: int | None


@dataclass(frozen=True, slots=True)
class TableInSection:
    """A table of a section: its text after the firewall, caption and header lines first (``header_chars`` of
    it), and its offsets into the document's text.  Recall shows it in place of a span that lies inside it."""

    id: int
    start_char: int
    end_char: int
    header_chars: int
    text: str


#: The ``document_tables`` columns :func:`table_from_row` reads, after the section id every reader selects first.
TABLE_COLUMNS = "section_id, id, start_char, end_char, header_chars, text"


def table_from_row(r: Any) -> tuple[int, TableInSection]:
    """A row of :data:`TABLE_COLUMNS` as (its section's id, the table)."""
    return int(r[0]), TableInSection(int(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]))


@dataclass(frozen=True, slots=True)
class SectionView:
    """A section with its distillation, spans and tables."""

    id: int
    ordinal: int
    level: int
    title: str
    start_char: int
    end_char: int
    page_start: int | None
    page_end: int | None
    distillation: str | None
    spans: tuple[SpanView, ...]
    tables: tuple[TableInSection, ...] = ()


@dataclass(frozen=True, slots=True)
class DocumentTree:
    """A document and its sections in order."""

    info: DocumentInfo
    sections: tuple[SectionView, ...]


@dataclass(frozen=True, slots=True)
class QuarantineEntry:
    """A file that could not be parsed, kept out until it or its parser changes."""

    id: int
    name: str
    path: str | None
    content_hash: str
    size_bytes: int
    parser: str
    parser_version: str
    reason: str
    detail: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Collection:
    """A named group of documents."""

    id: int
    user_id: str
    name: str
    description: str
    documents: int
    created_at: datetime
    updated_at: datetime


def document_from_row(r: Sequence[Any]) -> DocumentInfo:
    """A :class:`DocumentInfo` from :data:`DOCUMENT_COLUMNS` followed by section/span counts, collections and the
    distillation."""
    metadata = json.loads(r[13] or "{}")
    waiting = metadata.pop(READING_KEY, None) is not None
    return DocumentInfo(
        id=int(r[0]),
        user_id=str(r[1]),
        project_id=r[2],
        name=str(r[3]),
        path=r[4],
        mime=r[5],
        parser=r[6],
        parser_version=r[7],
        content_hash=str(r[8]),
        size_bytes=int(r[9]),
        page_count=r[10],
        status=str(r[11]),
        status_reason=r[12],
        metadata=metadata,
        created_at=from_epoch(float(r[14])),
        updated_at=from_epoch(float(r[15])),
        sections=int(r[16]),
        spans=int(r[17]),
        collection_ids=tuple(int(x) for x in str(r[18] or "").split(",") if x),
        distillation=r[19],
        reading=ReadProgress(0, None) if waiting else None,
    )
