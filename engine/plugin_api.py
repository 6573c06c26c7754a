"""The plugin API: pluggy hook specifications and the types plugins exchange with the engine.

This is the only engine module a plugin may import.  Built-in plugins in ``plugins/`` register through exactly
these hooks, like third-party ones found through the ``cairn`` entry-point group.

Hooks (``register_*`` contribute things; ``*_will_*`` / ``*_did_*`` observe or amend events):

* ``register_parsers(register)`` — document parsers (:class:`Parser`).
* ``register_importers(register)`` — chat transcript importers (:class:`Importer`).
* ``register_predicates(register)`` — extra catalog predicates (:class:`PredicateSpec`).
* ``fact_will_be_saved(fact)`` — inspect or amend a proposed fact; return a replacement, ``None`` to keep it.
* ``fact_did_save(fact_id, fact)`` — observe a stored fact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import pluggy

PROJECT = "cairn"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# -- documents ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Caps a parser must respect (the sandbox enforces time and memory on top).

    ``progress``, when set, is for paged formats: call it with ``(pages read, pages in all)`` as pages are read (it
    is cheap to call per page).  The sandbox gives a long document time in proportion to its pages, and shows the
    progress; a parser that never calls it has the flat ``documents.parse_timeout_s``.
    """

    max_bytes: int = 100 * 1024 * 1024
    max_pages: int = 2000
    max_chars: int = 50_000_000
    progress: Callable[[int, int], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ParsedSection:
    """A heading-delimited part of a parsed document; offsets index :attr:`ParsedDocument.text`."""

    title: str
    level: int
    start_char: int
    end_char: int
    page_start: int | None = None
    page_end: int | None = None


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """Where a page of the source lies in :attr:`ParsedDocument.text` (1-based page numbers)."""

    number: int
    start_char: int
    end_char: int


@dataclass(frozen=True, slots=True)
class ParsedTable:
    """A table in :attr:`ParsedDocument.text`: ``start_char`` … ``end_char`` holds its caption and header lines
    (up to ``header_end``) and then its rows.

    Spans are cut as for any text (searching rows finds a row); a table is what recall shows when a span falls
    inside one, so the model reads a figure with its column header and its statement's caption, not a slice.
    """

    start_char: int
    header_end: int
    end_char: int


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """What a parser returns: the normalised text plus its structure."""

    text: str
    sections: tuple[ParsedSection, ...] = ()
    pages: tuple[ParsedPage, ...] = ()
    title: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    tables: tuple[ParsedTable, ...] = ()


class ParseError(Exception):
    """The file is not valid for this parser (becomes a quarantine with reason ``invalid``)."""


class LimitExceeded(ParseError):
    """The file exceeds a configured cap (quarantine reason ``limit``)."""


@runtime_checkable
class Parser(Protocol):
    """Turns the bytes of one file into a :class:`ParsedDocument`.  Runs in a sandboxed worker process."""

    name: str
    version: str
    extensions: tuple[str, ...]
    mime_types: tuple[str, ...]

    def parse(self, data: bytes, *, name: str, limits: ParseLimits) -> ParsedDocument:
        """Parse ``data`` (the file's bytes); raise :class:`ParseError` for invalid input."""
        ...


# -- transcripts ----------------------------------------------------------------------------------------------
Role = Literal["user", "assistant", "system", "tool"]


@dataclass(frozen=True, slots=True)
class ImportedTurn:
    """One turn of an imported conversation, with its original time and speaker.

    ``location`` says where in the file the turn was read (``"chat.jsonl line 4"``, ``"conversations.json:
    conversation[2], message[5]"``): a turn the vault refuses (text over the size limit, an author name too long)
    is reported there, in the terms of the file the person has, not of the vault's event fields.  It is not part of
    a turn's identity: the same turn read from a copy of the file under another name is the same turn.
    """

    role: Role
    content: str
    occurred_at: datetime | None = None
    author: str | None = None
    external_id: str | None = None
    type: Literal["message", "tool_call", "app_event", "observation"] = "message"
    metadata: Mapping[str, str] = field(default_factory=dict)
    location: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """A conversation read from a transcript file; ``conversation_id`` is stable across re-imports."""

    conversation_id: str
    title: str
    turns: tuple[ImportedTurn, ...]


class ImportFormatError(Exception):
    """A malformed transcript; the message names the line or record."""

    def __init__(self, message: str, *, location: str = "") -> None:
        super().__init__(f"{location}: {message}" if location else message)
        self.location = location


@runtime_checkable
class Importer(Protocol):
    """Reads one transcript format."""

    name: str
    description: str
    extensions: tuple[str, ...]

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when ``path`` (whose first bytes are ``head``) looks like this format."""
        ...

    def read(self, path: Path) -> Iterator[ImportedConversation]:
        """Yield the file's conversations; raise :class:`ImportFormatError` naming the bad line or record."""
        ...


# -- predicates -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PredicateSpec:
    """A catalog predicate (see ``resources/predicates.toml`` for the built-in ones)."""

    name: str
    label: str
    description: str
    kind: Literal["identity", "occupational", "preference", "behavioral", "temporal", "relational"]
    cardinality: Literal["single", "multi"]
    importance: float
    decay: Literal["stable", "moderate", "ephemeral"]
    tier_hint: Literal["hot", "warm", "cold"]
    cues: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()


# -- hook specifications --------------------------------------------------------------------------------------
class HookSpecs:
    """The hooks a Cairn plugin may implement."""

    @hookspec
    def register_parsers(self, register: Callable[[Parser], None]) -> None:
        """Register document parsers: call ``register(parser)`` once per parser."""

    @hookspec
    def register_importers(self, register: Callable[[Importer], None]) -> None:
        """Register transcript importers: call ``register(importer)`` once per format."""

    @hookspec
    def register_predicates(self, register: Callable[[PredicateSpec], None]) -> None:
        """Register extra catalog predicates: call ``register(spec)`` once per predicate."""


def new_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager with Cairn's hook specifications and nothing registered."""
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(HookSpecs)
    return pm
