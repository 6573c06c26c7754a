"""Data transfer objects that cross the :class:`~engine.vault.Vault` boundary: frozen, slotted, plain values."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal


@dataclass(frozen=True, slots=True)
class Counts:
    """How much the vault holds."""

    events: int = 0
    facts: int = 0
    active_facts: int = 0
    documents: int = 0
    spans: int = 0
    subjects: int = 0
    open_conflicts: int = 0
    episodes: int = 0
    collections: int = 0
    conversations: int = 0


@dataclass(frozen=True, slots=True)
class VaultInfo:
    """A summary of the vault and the machinery in use (the GUI's overview, ``/v6/health``, ``cairn doctor``)."""

    path: str
    schema_version: int
    app_version: str
    sqlite_version: str
    vec_version: str
    llm_engine: str
    llm_reason: str
    embedder: str
    embedder_reason: str
    vector_backend: str
    queue_depth: int
    counts: Counts
    warnings: tuple[str, ...] = ()


FindingStatus = Literal["ok", "warn", "error"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One check of ``cairn doctor``: what was checked, the result, and the command that fixes a problem."""

    check: str
    status: FindingStatus
    detail: str
    fix: str = ""
    essential: bool = False


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """All findings; ``ok`` is False when something essential is missing."""

    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True unless an essential check failed."""
        return not any(f.status == "error" and f.essential for f in self.findings)


@dataclass(frozen=True, slots=True)
class SpanSource:
    """A document span in its place: the document, the headings above it and its pages.

    The evidence of a memory drawn from a document is shown from this, the way a chat turn is shown with its
    neighbours: a quote means little without knowing which document, section and page it came from.
    """

    span_id: int
    document_id: int
    document_name: str
    document_status: str
    section_id: int | None
    section_path: tuple[str, ...]
    """The titles of the enclosing sections, outermost first; the span's own section last."""
    ordinal: int
    text: str
    start_char: int
    end_char: int
    page_start: int | None
    page_end: int | None

    @property
    def section_title(self) -> str:
        """The title of the span's own section ("" when it has none)."""
        return self.section_path[-1] if self.section_path else ""


@dataclass(frozen=True, slots=True)
class DocumentMention:
    """A document that mentions a subject: its text names the subject, or memories about it come from it."""

    document_id: int
    name: str
    status: str
    updated_at: datetime
    spans: int = 0
    """Spans whose text names the subject (by its name or an alias)."""
    facts: int = 0
    """Current memories about the subject drawn from the document."""
    first_span_id: int | None = None
    """The first span naming the subject (or a memory's span when only memories point here)."""
    page: int | None = None
    """The page of :attr:`first_span_id`, for documents with pages."""
    excerpt: str = ""
    """A few words around the first mention."""
