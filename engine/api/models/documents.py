"""Models of documents and collections: uploads, the document tree, the quarantine, collections.

They mirror :mod:`engine.documents.model` field by field.  An upload arrives as multipart (a file)
or as JSON (:class:`DocumentJsonBody`: a text with a name, or the path of a local file);
:class:`DocumentFormFields` holds the optional fields of the multipart form.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engine.api.models.common import Id, RequestModel, ResponseModel, UserId
from engine.events import MAX_ID_CHARS

#: Longest file name and local path an upload may give.
MAX_NAME_CHARS = 255
MAX_PATH_CHARS = 4096
#: Documents added to a collection in one request.
MAX_MEMBERS = 1000

UploadStatus = Literal["processing", "ready", "degraded", "unchanged", "parsing"]

_UPLOAD_STATUS_HELP = (
    "processing: stored and searchable, distillation queued · ready: distilled · degraded: "
    "stored, but no text could be extracted · unchanged: the same content was already stored "
    "(nothing was written) · parsing: accepted (202) and being read in the background; "
    "`GET /v6/documents/{id}` shows its `reading` progress until its text is stored"
)
_DOCUMENT_EXAMPLE: dict[str, Any] = {
    "id": 700,
    "user_id": "default",
    "project_id": None,
    "name": "handbook.md",
    "path": None,
    "mime": "text/markdown",
    "parser": "markdown",
    "parser_version": "1",
    "content_hash": "52805a7b941c077dcac0128f38ab9eaf7decfb97e897ae55588c0968244ad86c",
    "size_bytes": 18233,
    "page_count": None,
    "status": "ready",
    "status_reason": None,
    "metadata": {"encoding": "utf-8", "title": "Staff handbook", "warnings": []},
    "created_at": "2026-03-01T09:30:00Z",
    "updated_at": "2026-03-01T09:30:04Z",
    "sections": 12,
    "spans": 40,
    "collection_ids": [812],
    "distillation": "The staff handbook covers leave, expenses and on-call duty.",
}
_SPAN_EXAMPLE: dict[str, Any] = {
    "id": 705,
    "ordinal": 0,
    "text": "Leave\n\nEvery employee has 25 days of paid leave a year.",
    "start_char": 0,
    "end_char": 54,
    "page_start": None,
    "page_end": None,
}
_SECTION_EXAMPLE: dict[str, Any] = {
    "id": 701,
    "ordinal": 0,
    "level": 1,
    "title": "Leave",
    "start_char": 0,
    "end_char": 1210,
    "page_start": None,
    "page_end": None,
    "distillation": "25 days of paid leave; requests two weeks ahead.",
    "spans": [_SPAN_EXAMPLE],
}
_QUARANTINE_EXAMPLE: dict[str, Any] = {
    "id": 731,
    "name": "scan.pdf",
    "path": "/home/ana/Documents/scan.pdf",
    "content_hash": "5cf631b2693bbfc4c0a9655ec2b709ed51ee1f6afa0496c7d89620b296d51545",
    "size_bytes": 20009,
    "parser": "pdf",
    "parser_version": "1",
    "reason": "invalid",
    "detail": "unreadable PDF: PdfStreamError: Stream has ended unexpectedly",
    "created_at": "2026-03-01T09:31:00Z",
}
_COLLECTION_EXAMPLE: dict[str, Any] = {
    "id": 812,
    "user_id": "default",
    "name": "Work",
    "description": "Handbooks and policies",
    "documents": 3,
    "created_at": "2026-03-01T09:00:00Z",
    "updated_at": "2026-03-01T09:30:00Z",
}


class DocumentJsonBody(RequestModel):
    """A document sent as JSON: a text with a file name, or the path of a file on this machine.

    Give `name` and `content`, or `path` — not both.  A path must be absolute and name a regular
    file Cairn can read (a folder, a device or a named pipe is refused).
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "meeting-notes.md",
                    "content": "# Standup\n\nAna takes over the billing migration.",
                },
                {"path": "/home/ana/Documents/handbook.pdf", "collection_id": 812},
            ]
        }
    )

    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="File name of `content`; its extension picks the parser (.md, .txt, .html).",
    )
    content: str | None = Field(default=None, min_length=1, description="The document's text (with `name`).")
    path: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="Absolute path of a regular file on this machine (instead of name+content).",
    )
    document_id: Id | None = Field(default=None, description="Replace this document's content (its id stays).")
    collection_id: Id | None = Field(default=None, description="Also add it to this collection.")
    project_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID_CHARS, description="Project scope.")
    user_id: UserId = "default"


class DocumentFormFields(RequestModel):
    """The optional fields of a multipart upload, next to the `file` part."""

    document_id: Id | None = Field(default=None, description="Replace this document's content (its id stays).")
    collection_id: Id | None = Field(default=None, description="Also add it to this collection.")
    project_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID_CHARS, description="Project scope.")
    user_id: UserId = "default"


class UploadOut(ResponseModel):
    """What an upload did.  A file that could not be parsed is answered 422 instead."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "document_id": 700,
                    "status": "processing",
                    "sections": 12,
                    "spans": 40,
                    "name": "handbook.md",
                    "reason": "",
                }
            ]
        }
    )

    document_id: int = Field(description="The document's global id.")
    status: UploadStatus = Field(description=_UPLOAD_STATUS_HELP)
    sections: int = Field(description="Sections of the document.")
    spans: int = Field(description="Searchable spans of the document.")
    name: str = Field(description="The document's name.")
    reason: str = Field(description="Why it is degraded (empty otherwise).")


class ReadingOut(ResponseModel):
    """How far the background reading of an upload has come."""

    pages_read: int = Field(description="Pages read so far (0 until the parser starts).")
    pages_total: int | None = Field(description="Pages in the file, once counted (null for unpaged formats).")


class DocumentOut(ResponseModel):
    """A document without its tree."""

    model_config = ConfigDict(json_schema_extra={"examples": [_DOCUMENT_EXAMPLE]})

    id: int = Field(description="Global id.")
    user_id: str = Field(description="Owner.")
    project_id: str | None = Field(description="Project scope.")
    name: str = Field(description="File name.")
    path: str | None = Field(description="Where it was read from (uploads of bytes have none).")
    mime: str | None = Field(description="MIME type guessed from the name.")
    parser: str | None = Field(description="Parser that read it.")
    parser_version: str | None = Field(description="Version of that parser.")
    content_hash: str = Field(description="SHA-256 of the bytes, hex.")
    size_bytes: int = Field(description="Size of the file.")
    page_count: int | None = Field(description="Pages (paged formats only).")
    status: str = Field(description="processing, ready, degraded or failed.")
    status_reason: str | None = Field(description="Why it is degraded or failed.")
    metadata: dict[str, Any] = Field(description="What the parser found: title, encoding, …")
    created_at: datetime = Field(description="First stored (UTC).")
    updated_at: datetime = Field(description="Last changed (UTC).")
    sections: int = Field(description="Number of sections.")
    spans: int = Field(description="Number of searchable spans.")
    collection_ids: list[int] = Field(description="Collections it belongs to.")
    distillation: str | None = Field(description="Summary of the whole document, once made.")
    reading: ReadingOut | None = Field(
        default=None,
        description="Set while its upload is being read in the background (status processing, no "
        "spans yet, or the previous version's); null once its text is stored or refused.",
    )


class DocumentList(ResponseModel):
    """Documents, most recently updated first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"documents": [_DOCUMENT_EXAMPLE]}]})

    documents: list[DocumentOut] = Field(description="The documents.")


class SpanOut(ResponseModel):
    """A searchable piece of a section (offsets into the document's text)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SPAN_EXAMPLE]})

    id: int = Field(description="Global id.")
    ordinal: int = Field(description="Position in the document, from 0.")
    text: str = Field(description="The span's text, after the privacy firewall.")
    start_char: int = Field(description="Start offset in the document's text.")
    end_char: int = Field(description="End offset in the document's text.")
    page_start: int | None = Field(description="First page (paged formats).")
    page_end: int | None = Field(description="Last page (paged formats).")


class TableOut(ResponseModel):
    """A table of a section, kept whole: what recall shows in place of a span that lies inside it."""

    id: int = Field(description="The table's id (within the vault's tables; not a global object id).")
    start_char: int = Field(description="Start offset in the document's text (its caption's first line).")
    end_char: int = Field(description="End offset in the document's text (its last row's end).")
    header_chars: int = Field(description="How many characters of `text` are the caption and header lines.")
    text: str = Field(description="The table's text, after the privacy firewall: caption and header, then rows.")


class SectionOut(ResponseModel):
    """A section with its distillation, spans and tables."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SECTION_EXAMPLE]})

    id: int = Field(description="Global id.")
    ordinal: int = Field(description="Position in the document, from 0.")
    level: int = Field(description="Heading level (1 = top).")
    title: str = Field(description="Heading text.")
    start_char: int = Field(description="Start offset in the document's text.")
    end_char: int = Field(description="End offset in the document's text.")
    page_start: int | None = Field(description="First page (paged formats).")
    page_end: int | None = Field(description="Last page (paged formats).")
    distillation: str | None = Field(description="Summary of the section, once made.")
    spans: list[SpanOut] = Field(description="The section's spans, in order.")
    tables: list[TableOut] = Field(
        default_factory=list,
        description="The section's tables (a PDF statement, a Markdown or HTML table) longer than one span, in order.",
    )


class DocumentTreeOut(ResponseModel):
    """A document with its sections and spans in order."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"document": _DOCUMENT_EXAMPLE, "sections": [_SECTION_EXAMPLE]}]}
    )

    document: DocumentOut = Field(description="The document.")
    sections: list[SectionOut] = Field(description="Its sections, in order.")


class DocumentDeleted(ResponseModel):
    """A document removed with everything derived from it."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"document_id": 700, "deleted": True}]})

    document_id: int = Field(description="The deleted document's id.")
    deleted: bool = Field(description="Always true.")


class QuarantineOut(ResponseModel):
    """A file that could not be parsed; it is kept out until it or its parser changes."""

    model_config = ConfigDict(json_schema_extra={"examples": [_QUARANTINE_EXAMPLE]})

    id: int = Field(description="Global id of the quarantine entry.")
    name: str = Field(description="File name.")
    path: str | None = Field(description="Where it was read from (retry needs it).")
    content_hash: str = Field(description="SHA-256 of the bytes, hex.")
    size_bytes: int = Field(description="Size of the file.")
    parser: str = Field(description="Parser that failed.")
    parser_version: str = Field(description="Its version.")
    reason: str = Field(description="invalid, limit, timeout, crash, encrypted, …")
    detail: str = Field(description="The parser's own words.")
    created_at: datetime = Field(description="When it was quarantined (UTC).")


class QuarantineList(ResponseModel):
    """Quarantined files, newest first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"quarantine": [_QUARANTINE_EXAMPLE]}]})

    quarantine: list[QuarantineOut] = Field(description="The quarantined files.")


class CollectionCreate(RequestModel):
    """A new collection."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"name": "Work", "description": "Handbooks and policies"}]}
    )

    name: str = Field(
        min_length=1,
        max_length=200,
        description="Unique per user, compared without regard to letter case.",
    )
    description: str = Field(default="", max_length=2000, description="What it holds.")
    user_id: UserId = "default"


class CollectionRename(RequestModel):
    """A collection's new name."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"name": "Work (2026)"}]})

    name: str = Field(min_length=1, max_length=200, description="The new name.")


class CollectionMembers(RequestModel):
    """Documents to add to a collection."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"document_ids": [700, 733]}]})

    document_ids: list[Id] = Field(
        min_length=1,
        max_length=MAX_MEMBERS,
        description="The documents (already members are fine).",
    )


class CollectionOut(ResponseModel):
    """A named group of documents."""

    model_config = ConfigDict(json_schema_extra={"examples": [_COLLECTION_EXAMPLE]})

    id: int = Field(description="Global id.")
    user_id: str = Field(description="Owner.")
    name: str = Field(description="The name.")
    description: str = Field(description="What it holds.")
    documents: int = Field(description="How many documents it holds.")
    created_at: datetime = Field(description="Created (UTC).")
    updated_at: datetime = Field(description="Last changed (UTC).")


class CollectionDetail(CollectionOut):
    """A collection with the ids of its documents."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{**_COLLECTION_EXAMPLE, "document_ids": [700, 733, 790]}]}
    )

    document_ids: list[int] = Field(description="Its documents, most recently added first.")


class CollectionList(ResponseModel):
    """Collections, by name."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"collections": [_COLLECTION_EXAMPLE]}]})

    collections: list[CollectionOut] = Field(description="The collections.")


class CollectionDeleted(ResponseModel):
    """A deleted collection; its documents stay in the vault."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"collection_id": 812, "deleted": True}]})

    collection_id: int = Field(description="The deleted collection's id.")
    deleted: bool = Field(description="Always true.")
