"""Choosing an importer for a file and reading it conversation by conversation.

Why this module exists: :class:`~engine.plugin_api.Importer` exposes ``read(path)``, an iterator
that raises :class:`ImportFormatError` at the first malformed record.  A generator cannot resume
after raising, so a multi-conversation export with one broken conversation would lose every
conversation after it.  The built-in importers therefore derive from :class:`IsolatingImporter` and
implement ``read_each(path)``, which yields either a finished :class:`ImportedConversation` or the
:class:`ImportFormatError` that sank one conversation, and carries on.  :func:`read_all` turns that
into ``(good, bad)`` so the caller imports the good conversations whole and reports the bad ones;
nothing partial from a bad conversation ever reaches it.  Errors that make the whole file unreadable
(invalid JSON, wrong top-level shape, undecodable bytes) are raised by ``read_each`` and reported by
:func:`read_all` as the file's only error.  ``OSError`` (missing file, permissions) is not a format
problem and propagates.

:func:`detect` picks the importer whose ``sniff`` accepts the file.  The JSON exports all begin with
``[`` or ``{``, so the sniffers look for distinguishing keys; :func:`first_json_key` finds which of
them a file mentions first, reading past the caller's head when a long first record pushes the key
further in.
"""

from __future__ import annotations

import codecs
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path

from engine.plugin_api import ImportedConversation, Importer, ImportFormatError

#: How many bytes :func:`detect` hands to ``sniff``.
HEAD_BYTES = 64 * 1024
#: How far a sniffer may read to find a distinguishing key (a LoCoMo list opens with a long ``qa``).
SCAN_BYTES = 1024 * 1024

_UTF8_BOM = codecs.BOM_UTF8

#: The distinguishing keys of the JSON transcript formats.  A key is ``"name"`` followed by a colon;
#: inside a JSON string the quotes would be escaped, so text mentioning the name cannot match.
FORMAT_KEYS = ("mapping", "chat_messages", "speaker_a")
_KEY_PATTERN = re.compile(rb'"(' + b"|".join(k.encode() for k in FORMAT_KEYS) + rb')"\s*:')


class IsolatingImporter(ABC):
    """Built-in importers' base: ``read_each`` isolates bad conversations; ``read`` is strict."""

    name: str
    description: str
    extensions: tuple[str, ...]

    @abstractmethod
    def sniff(self, path: Path, head: bytes) -> bool:
        """True when ``path`` (whose first bytes are ``head``) looks like this format."""

    @abstractmethod
    def read_each(self, path: Path) -> Iterator[ImportedConversation | ImportFormatError]:
        """Yield each conversation, or the error that makes that conversation unusable.

        Raises :class:`ImportFormatError` when the file as a whole cannot be read.
        """

    def read(self, path: Path) -> Iterator[ImportedConversation]:
        """Yield the conversations; raise at the first malformed one (the Importer protocol)."""
        for item in self.read_each(path):
            if isinstance(item, ImportFormatError):
                raise item
            yield item

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def read_all(importer: Importer, path: Path) -> tuple[list[ImportedConversation], list[ImportFormatError]]:
    """Read every well-formed conversation of ``path``, and the errors of those that are not.

    Each conversation in the first list is complete; a conversation with any malformed record
    appears only as an error in the second.  Importers without ``read_each`` (third-party ones) are
    read through ``read``: the conversations yielded before its first error are kept, the error is
    reported, and the rest of the file is not reached.
    """
    good: list[ImportedConversation] = []
    bad: list[ImportFormatError] = []
    read_each = getattr(importer, "read_each", None)
    try:
        if callable(read_each):
            for item in read_each(path):
                if isinstance(item, ImportFormatError):
                    bad.append(item)
                else:
                    good.append(item)
        else:
            good.extend(importer.read(path))
    except ImportFormatError as exc:
        bad.append(exc)
    return good, bad


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of ``path``."""
    with path.open("rb") as stream:
        return stream.read(size)


def detect(importers: Iterable[Importer], path: Path) -> Importer:
    """The first of ``importers`` whose ``sniff`` accepts ``path``.

    Raises :class:`ImportFormatError` listing the supported formats when none does.
    """
    candidates = list(importers)
    head = read_head(path)
    for importer in candidates:
        if importer.sniff(path, head):
            return importer
    supported = "; ".join(f"{imp.name} ({imp.description})" for imp in candidates) or "none registered"
    raise ImportFormatError(f"not a recognised transcript format; supported formats: {supported}", location=path.name)


# -- helpers for sniffers and readers --------------------------------------------------------------
def first_significant_byte(head: bytes) -> bytes:
    """The first byte after an optional UTF-8 BOM and whitespace (``b""`` for a blank head)."""
    stripped = head.removeprefix(_UTF8_BOM).lstrip()
    return stripped[:1]


def first_json_key(path: Path, head: bytes) -> str | None:
    """Which of :data:`FORMAT_KEYS` comes first as a JSON key, reading up to :data:`SCAN_BYTES`."""
    found = _KEY_PATTERN.search(head)
    if found is None and len(head) < SCAN_BYTES:
        try:
            found = _KEY_PATTERN.search(read_head(path, SCAN_BYTES))
        except OSError:
            return None
    return found.group(1).decode() if found else None


def decode_head(head: bytes) -> str | None:
    """``head`` as UTF-8 text, tolerating a character cut at the end; ``None`` if not text."""
    if b"\x00" in head:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(head.removeprefix(_UTF8_BOM), final=False)
    except UnicodeDecodeError:
        return None


def load_json(path: Path) -> object:
    """The decoded JSON document in ``path``; undecodable bytes or invalid JSON fail the whole file.

    The bytes are decoded and released before parsing so that a 100+ MB export is held as text and
    as objects, not as bytes as well.
    """
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"not UTF-8 text (bad byte at offset {exc.start})", location=path.name) from exc
    del data
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", location=path.name
        ) from exc


def iter_text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for each line (1-based, without its line ending), decoded as UTF-8.

    Reads in binary and decodes line by line so that a bad byte is reported with its line number.
    """
    with path.open("rb") as stream:
        for number, raw in enumerate(stream, start=1):
            chunk = raw.removeprefix(_UTF8_BOM) if number == 1 else raw
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFormatError(
                    f"not UTF-8 text (bad byte at column {exc.start + 1})",
                    location=f"{path.name} line {number}",
                ) from exc
            yield number, text.rstrip("\r\n")
