"""JSON Lines transcripts: one ``{role, content, occurred_at, author?, conversation_id?, id?, title?}`` per line.

The simplest format for scripts.  ``role`` is one of ``user``, ``assistant``, ``system``, ``tool``;
``content`` is the text (an empty one is skipped); ``author`` names the speaker; ``title`` (on any line of
a conversation) names the conversation.  Blank lines are allowed and other keys are ignored.

Every turn needs its time, because relative dates in it ("tomorrow", "last week") are resolved against it:
``occurred_at`` (the ingest endpoint's name), or ``timestamp``, ``time``, ``created_at`` — ISO-8601 text or
Unix seconds (milliseconds are recognised by size).  A turn whose time is missing or unreadable is reported
with its line; it is never stamped with the import time.

Lines are grouped by ``conversation_id`` in the order each conversation first appears; the id is
used as given so that a file written by a client that also talks to the live endpoint lands in the
same conversation.  Lines without one form the conversation ``jsonl:<file stem>``.  ``external_id``
is the line's ``id`` or ``line:<n>`` (1-based), so re-reading the same file yields the same ids.
Turns keep file order.

A bad line fails the conversation it belongs to; the file's other conversations are still read.  A
line that is not a JSON object (or whose ``conversation_id`` is unusable) cannot be assigned to any
conversation, so then no conversation of the file is yielded: importing them could leave one of them
incomplete.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from engine.plugin_api import ImportedConversation, ImportedTurn, ImportFormatError, Role
from plugins.importers.fields import (
    JsonObject,
    describe,
    flexible_time_field,
    optional_id,
    optional_str,
    required_str,
)
from plugins.importers.reading import IsolatingImporter, decode_head, iter_text_lines, read_head

_ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
}
#: A first line longer than the sniff head is read from the file up to this size.
_FIRST_LINE_LIMIT = 16 * 1024 * 1024


@dataclass
class _Group:
    """The lines of one conversation read so far."""

    conversation_id: str
    turns: list[ImportedTurn] = field(default_factory=list)
    errors: list[ImportFormatError] = field(default_factory=list)
    seen_ids: dict[str, int] = field(default_factory=dict)
    title: str = ""


class JsonlImporter(IsolatingImporter):
    """Reads JSON Lines transcripts of ``{role, content, ...}`` records."""

    name = "jsonl"
    description = "JSON Lines, one {role, content, occurred_at, author?, conversation_id?, id?} per line"
    extensions: tuple[str, ...] = (".jsonl", ".ndjson")

    def sniff(self, path: Path, head: bytes) -> bool:
        """The first non-blank line is a JSON object with ``role`` and ``content``."""
        text = decode_head(head)
        if text is None:
            return False
        stripped = text.lstrip()
        if not stripped.startswith("{"):
            return False
        first, newline, _ = stripped.partition("\n")
        if not newline and len(head) < _FIRST_LINE_LIMIT:
            first = (decode_head(read_head(path, _FIRST_LINE_LIMIT)) or "").lstrip().partition("\n")[0]
        try:
            record = json.loads(first)
        except json.JSONDecodeError:
            return False
        return isinstance(record, dict) and "role" in record and "content" in record

    def read_each(self, path: Path) -> Iterator[ImportedConversation | ImportFormatError]:
        """Yield each conversation of the file, or the errors that sank it."""
        default_id = f"jsonl:{path.stem}"
        groups: dict[str, _Group] = {}
        unassigned: dict[int, ImportFormatError] = {}  # line number → error
        for number, line in iter_text_lines(path):
            if not line.strip():
                continue
            where = f"{path.name} line {number}"
            try:
                record = _record(line, where)
                conversation_id = optional_id(record, "conversation_id", where) or default_id
            except ImportFormatError as exc:
                unassigned[number] = exc
                continue
            group = groups.setdefault(conversation_id, _Group(conversation_id))
            if conversation_id != default_id:
                where = f"{where} (conversation {conversation_id})"
            title = record.get("title")
            if isinstance(title, str) and title.strip() and not group.title:
                group.title = title.strip()
            try:
                turn = _turn(record, number, where, group)
            except ImportFormatError as exc:
                group.errors.append(exc)
                continue
            if turn is not None:
                group.turns.append(turn)
        yield from unassigned.values()
        for group in groups.values():
            if group.errors:
                yield from group.errors
            elif unassigned:
                if len(groups) > 1:
                    lines = ", ".join(str(n) for n in unassigned)
                    yield ImportFormatError(
                        f"not imported: line(s) {lines} could not be assigned to a conversation",
                        location=f"{path.name} (conversation {group.conversation_id})",
                    )
            else:
                yield ImportedConversation(group.conversation_id, _title(group, path), tuple(group.turns))


def _record(line: str, where: str) -> JsonObject:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"invalid JSON at column {exc.colno}: {exc.msg}", location=where) from exc
    if not isinstance(record, dict):
        raise ImportFormatError(f"expected a JSON object, found {describe(record)}", location=where)
    return record


def _turn(record: JsonObject, number: int, where: str, group: _Group) -> ImportedTurn | None:
    role_name = required_str(record, "role", where)
    role = _ROLES.get(role_name)
    if role is None:
        raise ImportFormatError(f"role {role_name!r} is not one of {', '.join(_ROLES)}", location=where)
    content = required_str(record, "content", where)
    occurred_at = _time_of(record, where)
    author = optional_str(record, "author", where)
    external_id = optional_id(record, "id", where) or f"line:{number}"
    if external_id in group.seen_ids:
        raise ImportFormatError(
            f"id {external_id!r} is already used on line {group.seen_ids[external_id]}",
            location=where,
        )
    group.seen_ids[external_id] = number
    text = content.rstrip()
    if not text.strip():
        return None
    return ImportedTurn(
        role=role, content=text, occurred_at=occurred_at, author=author, external_id=external_id, location=where
    )


#: The names a turn's time goes by, in the order they are looked for.
TIME_KEYS = ("occurred_at", "timestamp", "time", "created_at")


def _time_of(record: JsonObject, where: str) -> datetime:
    """The turn's time from the first time key present; an error naming the line when there is none."""
    for key in TIME_KEYS:
        if record.get(key) is not None:
            found = flexible_time_field(record, key, where)
            if found is not None:
                return found
    raise ImportFormatError(
        "no time: give each turn 'occurred_at' (ISO-8601 or Unix seconds; 'timestamp', 'time' and 'created_at' "
        "are read too) so that its relative dates resolve against when it was said",
        location=where,
    )


def _title(group: _Group, path: Path) -> str:
    """The conversation's own title when a line gives one, else the file stem for the file's own conversation,
    else the conversation id."""
    if group.title:
        return group.title
    return path.stem if group.conversation_id == f"jsonl:{path.stem}" else group.conversation_id
