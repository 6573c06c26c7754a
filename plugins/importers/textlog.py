"""Plain-text chat logs: ``Name: message`` lines, optionally timestamped; one conversation a file.

Accepted timestamp prefixes (wall-clock times, taken as UTC because the log does not name a zone)::

    [2024-05-01 10:22] Name: msg          [2024-05-01 10:22:33] Name: msg
    2024-05-01 10:22:33 - Name: msg       [10:22] Name: msg  (time only: no date, so no occurred_at)
    01/05/2024, 10:22 - Name: msg         [01/05/24, 10:22:33 pm] Name: msg  (WhatsApp)

Numeric dates are ambiguous (01/05 is 1 May or 5 January).  The whole file decides: a first field
above 12 means day-first, a second field above 12 means month-first, a file with both is an error,
and a file with neither is read day-first (WhatsApp's order in most locales) and says so in the
``date_order`` metadata.  Time-only stamps keep the clock time in ``time_of_day`` metadata.

A line that does not start a message continues the previous one (kept with its line break).  Once
the first message has a timestamp, only timestamped lines start messages, so a continuation such as
``PS: bring snacks`` stays in its message; in logs without timestamps any ``Name: text`` line starts
a message (a name is at most 48 characters and five words).  A timestamped line without a speaker
(``Messages and calls are end-to-end encrypted``) is an ``app_event`` turn with role ``system``.

These are logs between people, not between a user and an assistant: every message is role ``user``
with ``author`` = the speaker, and the fact pipeline attributes what is said to that author.
``conversation_id`` is ``text:<file stem>``; ``external_id`` is ``line:<n>`` of the message's first
line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from engine.plugin_api import ImportedConversation, ImportedTurn, ImportFormatError
from plugins.importers.reading import IsolatingImporter, decode_head, iter_text_lines, read_head

_CLOCK = r"(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?(?:\s?(?P<ampm>[AaPp])\.?[Mm]\.?)?"
_ISO_DATE = r"(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})[ T]"
_NUMERIC_DATE = r"(?P<p>\d{1,2})[/.](?P<q>\d{1,2})[/.](?P<y>\d{4}|\d{2}),?\s+"
_DASH = r"\s+[-–]\s+"
_REST = r"(?P<rest>.*)"
#: (kind, pattern) for each accepted timestamp prefix; ``rest`` is what follows the stamp.
_STAMPS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(rf"\[{_ISO_DATE}{_CLOCK}\]\s*{_REST}")),
    ("iso", re.compile(rf"{_ISO_DATE}{_CLOCK}{_DASH}{_REST}")),
    ("numeric", re.compile(rf"\[{_NUMERIC_DATE}{_CLOCK}\]\s*{_REST}")),
    ("numeric", re.compile(rf"{_NUMERIC_DATE}{_CLOCK}{_DASH}{_REST}")),
    ("clock", re.compile(rf"\[{_CLOCK}\]\s*{_REST}")),
)
_NAME_CHAR = r"[^:\[\]{}<>\"]"
_EDGE_CHAR = r"[^\s:\[\]{}<>\"]"
_SPEAKER = re.compile(rf"(?P<name>{_EDGE_CHAR}(?:{_NAME_CHAR}{{0,46}}{_EDGE_CHAR})?):(?:\s+(?P<text>.*))?")
_MAX_NAME_WORDS = 5
_SNIFF_LINES = 20
_SNIFF_BYTES = 8192


@dataclass
class _Entry:
    """A message (or notice) being assembled: its first line, speaker, stamp and text lines."""

    line: int
    speaker: str | None
    kind: str | None
    stamp: re.Match[str] | None
    lines: list[str] = field(default_factory=list)


class TextLogImporter(IsolatingImporter):
    """Reads plain-text chat logs between people (``Name: message`` lines)."""

    name = "text"
    description = "plain-text chat log ('Name: message' lines, optional timestamps, WhatsApp export)"
    extensions: tuple[str, ...] = (".txt", ".log")

    def sniff(self, path: Path, head: bytes) -> bool:
        """The first line starts a message, and so does another of the first lines (when any)."""
        # A short head may not hold one complete line: look a little further into the file.
        if len(head) < _SNIFF_BYTES:
            head = read_head(path, _SNIFF_BYTES)
        text = decode_head(head)
        if text is None:
            return False
        lines = text.splitlines()
        if lines and not text.endswith(("\n", "\r")) and len(lines) > 1:
            lines.pop()  # possibly cut off by the head
        nonblank = [line for line in lines if line.strip()][:_SNIFF_LINES]
        if not nonblank:
            return False
        kinds = [_line_kind(line) for line in nonblank]
        starts = sum(kind is not None for kind in kinds)
        return kinds[0] is not None and "speaker" in kinds and starts >= min(2, len(nonblank))

    def read_each(self, path: Path) -> Iterator[ImportedConversation | ImportFormatError]:
        """Yield the file's one conversation, or the error that sank it."""
        try:
            item: ImportedConversation | ImportFormatError = _read(path)
        except ImportFormatError as exc:
            item = exc
        yield item


def _line_kind(line: str) -> str | None:
    """``speaker`` / ``notice`` for a line that starts a message, else ``None``."""
    try:
        _kind, stamp, rest = _split_stamp(line, "")
    except ImportFormatError:
        return None
    if stamp is None:
        return "speaker" if _speaker(line) else None
    return "speaker" if _speaker(rest) else "notice"


def _read(path: Path) -> ImportedConversation:
    entries: list[_Entry] = []
    stamped = False
    for number, line in iter_text_lines(path):
        where = f"{path.name} line {number}"
        kind, stamp, rest = _split_stamp(line, where)
        if stamp is not None:
            found = _speaker(rest)
            entry = _Entry(number, found[0] if found else None, kind, stamp)
            entry.lines.append(found[1] if found else rest)
            stamped = stamped or not entries
            entries.append(entry)
        elif not stamped and (found := _speaker(line)):
            entries.append(_Entry(number, found[0], None, None, [found[1]]))
        elif entries:
            entries[-1].lines.append(line)
        elif line.strip():
            raise ImportFormatError(
                "expected 'Name: message' (optionally after a timestamp); no message to continue",
                location=where,
            )
    if not entries:
        raise ImportFormatError("no chat messages found", location=path.name)
    times = _resolve_times(entries, path.name)
    turns = [turn for entry, when in zip(entries, times, strict=True) if (turn := _turn(entry, when, path.name))]
    return ImportedConversation(f"text:{path.stem}", path.stem, tuple(turns))


def _split_stamp(line: str, where: str) -> tuple[str | None, re.Match[str] | None, str]:
    """(kind, match, rest) for a timestamped line, else ``(None, None, line)``; bad values raise."""
    for kind, pattern in _STAMPS:
        match = pattern.fullmatch(line)
        if match:
            _check_stamp(kind, match, where)
            return kind, match, match["rest"]
    return None, None, line


def _speaker(text: str) -> tuple[str, str] | None:
    match = _SPEAKER.fullmatch(text)
    if match is None or len(match["name"].split()) > _MAX_NAME_WORDS:
        return None
    return match["name"], match["text"] or ""


def _hour(match: re.Match[str]) -> int:
    hour = int(match["h"])
    ampm = match["ampm"]
    if ampm is None:
        if hour > 23:
            raise ValueError(f"hour {hour} is out of range")
        return hour
    if not 1 <= hour <= 12:
        raise ValueError(f"hour {hour} is out of range for a 12-hour clock")
    return hour % 12 + (12 if ampm.lower() == "p" else 0)


def _year(match: re.Match[str]) -> int:
    year = match["y"]
    return 2000 + int(year) if len(year) == 2 else int(year)


def _make(match: re.Match[str], year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, _hour(match), int(match["mi"]), int(match["s"] or 0), tzinfo=UTC)


def _check_stamp(kind: str, match: re.Match[str], where: str) -> None:
    """Reject impossible dates and times now, so the error names the line that has them."""
    stamp = match.group(0)[: match.start("rest")].strip(" -–[]")
    try:
        if kind == "iso":
            _make(match, int(match["y"]), int(match["mo"]), int(match["d"]))
        elif kind == "numeric":
            _make_numeric(match)
        else:
            _make(match, 2000, 1, 1)
    except ValueError as exc:
        raise ImportFormatError(f"bad timestamp {stamp!r}: {exc}", location=where) from exc


def _make_numeric(match: re.Match[str]) -> datetime:
    """The date read day-first, else month-first; ``ValueError`` if valid in neither order."""
    p, q = int(match["p"]), int(match["q"])
    try:
        return _make(match, _year(match), q, p)
    except ValueError:
        return _make(match, _year(match), p, q)


def _resolve_times(entries: list[_Entry], file_name: str) -> list[tuple[datetime | None, dict[str, str]]]:
    """Each entry's time and time metadata, with numeric dates read in the file's one date order."""
    numeric = [e for e in entries if e.kind == "numeric" and e.stamp is not None]
    day_first = next((e for e in numeric if e.stamp and int(e.stamp["p"]) > 12), None)
    month_first = next((e for e in numeric if e.stamp and int(e.stamp["q"]) > 12), None)
    if day_first and month_first:
        later = max(day_first, month_first, key=lambda e: e.line)
        raise ImportFormatError(
            f"dates mix day-first (line {day_first.line}) and month-first (line {month_first.line})",
            location=f"{file_name} line {later.line}",
        )
    order = "month-first" if month_first else "day-first"
    order_note = order if (day_first or month_first) else f"{order} (assumed)"
    resolved: list[tuple[datetime | None, dict[str, str]]] = []
    for entry in entries:
        match = entry.stamp
        if match is None:
            resolved.append((None, {}))
        elif entry.kind == "iso":
            resolved.append((_make(match, int(match["y"]), int(match["mo"]), int(match["d"])), {}))
        elif entry.kind == "numeric":
            p, q = int(match["p"]), int(match["q"])
            day, month = (q, p) if order == "month-first" else (p, q)
            try:
                when = _make(match, _year(match), month, day)
            except ValueError as exc:
                raise ImportFormatError(
                    f"bad timestamp: {exc} when read {order}",
                    location=f"{file_name} line {entry.line}",
                ) from exc
            resolved.append((when, {"date_order": order_note}))
        else:
            clock = _make(match, 2000, 1, 1)
            shown = clock.strftime("%H:%M:%S" if match["s"] else "%H:%M")
            resolved.append((None, {"time_of_day": shown}))
    return resolved


def _turn(entry: _Entry, when: tuple[datetime | None, dict[str, str]], file_name: str) -> ImportedTurn | None:
    text = "\n".join(entry.lines).rstrip()
    if not text.strip():
        return None
    occurred_at, metadata = when
    location = f"{file_name} line {entry.line}"
    if entry.speaker is None:
        return ImportedTurn(
            role="system",
            content=text,
            occurred_at=occurred_at,
            external_id=f"line:{entry.line}",
            type="app_event",
            metadata=metadata,
            location=location,
        )
    return ImportedTurn(
        role="user",
        content=text,
        occurred_at=occurred_at,
        author=entry.speaker,
        external_id=f"line:{entry.line}",
        metadata=metadata,
        location=location,
    )
