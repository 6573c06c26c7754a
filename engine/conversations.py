"""``vault.conversations``: listing conversations, their turns and episodes, and importing transcripts."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from engine.episodes import EPISODE_COLUMNS, Episode, close_idle, episode_from_row
from engine.errors import NotFound, UnsupportedFile, ValidationError
from engine.events import EVENT_COLUMNS, ConversationInfo, Event, EventIn, event_from_row
from engine.plugin_api import ImportedConversation, ImportedTurn, Importer, ImportFormatError
from engine.store import Store, Tx
from engine.temporal import from_epoch

log = logging.getLogger(__name__)

HEAD_BYTES = 64 * 1024
#: How a batch ingest names the event that failed validation (see ``engine.events.prepare_batch``).
_BATCH_FIELD = re.compile(r"events\[(\d+)\]\.(.+)")


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """Progress of one transcript import, yielded after each conversation."""

    path: str
    importer: str
    conversations_done: int
    conversations_total: int
    events_added: int
    duplicates: int
    errors: tuple[str, ...]
    current: str = ""


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """The outcome of importing one file."""

    path: str
    importer: str
    conversations: int
    events_added: int
    duplicates: int
    errors: tuple[str, ...]


class ConversationsApi:
    """Conversations of the vault (calling it lists them)."""

    def __init__(
        self,
        store: Store,
        plugins: pluggy.PluginManager,
        ingest: Callable[[Sequence[EventIn]], list[Any]],
        gap_s: float,
    ) -> None:
        self._store = store
        self._plugins = plugins
        self._ingest = ingest
        self._gap_s = gap_s

    def __call__(self, *, user_id: str | None = None, q: str | None = None, limit: int = 500) -> list[ConversationInfo]:
        """Conversations, most recently active first; with ``q``, those whose title or id contains it (any case)."""
        sql = (
            "SELECT e.conversation_id AS cid, e.user_id, COUNT(*), MIN(e.occurred_at), MAX(e.occurred_at) AS latest, "
            "GROUP_CONCAT(DISTINCT e.author), (SELECT t.title FROM conversation_titles t "
            "WHERE t.user_id = e.user_id AND t.conversation_id = e.conversation_id) AS title FROM events e"
        )
        args: list[Any] = []
        if user_id:
            sql += " WHERE e.user_id = ?"
            args.append(user_id)
        sql += " GROUP BY e.user_id, e.conversation_id"
        if q:
            needle = q.casefold()
            sql = (
                f"SELECT * FROM ({sql}) WHERE instr(casefold(cid), ?) > 0 "
                "OR instr(casefold(COALESCE(title, '')), ?) > 0"
            )
            args += [needle, needle]
        sql += " ORDER BY latest DESC LIMIT ?"
        return [
            ConversationInfo(
                str(r[0]),
                str(r[1]),
                int(r[2]),
                from_epoch(float(r[3])),
                from_epoch(float(r[4])),
                tuple(sorted(a for a in (r[5] or "").split(",") if a)),
                str(r[6] or ""),
            )
            for r in self._store.query(sql, (*args, limit))
        ]

    def events(
        self, conversation_id: str, *, user_id: str | None = None, limit: int = 1000, before_id: int | None = None
    ) -> list[Event]:
        """The conversation's events in time order (the last ``limit`` before ``before_id``)."""
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE conversation_id = ?"
        args: list[Any] = [conversation_id]
        if user_id:
            sql += " AND user_id = ?"
            args.append(user_id)
        if before_id is not None:
            sql += " AND id < ?"
            args.append(before_id)
        rows = self._store.query(
            f"SELECT * FROM ({sql} ORDER BY occurred_at DESC, id DESC LIMIT ?) ORDER BY occurred_at, id", (*args, limit)
        )
        return [event_from_row(r) for r in rows]

    def event(self, event_id: int) -> Event:
        """One event by id."""
        rows = self._store.query(f"SELECT {EVENT_COLUMNS} FROM events WHERE id = ?", (event_id,))
        if not rows:
            raise NotFound("event", event_id)
        return event_from_row(rows[0])

    def neighbours(self, event_id: int, *, before: int = 2, after: int = 2) -> list[Event]:
        """The event with up to ``before``/``after`` turns around it (the GUI's evidence context)."""
        centre = self.event(event_id)
        earlier = self._store.query(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE conversation_id = ? AND user_id = ? AND "
            "(occurred_at < ? OR (occurred_at = ? AND id < ?)) ORDER BY occurred_at DESC, id DESC LIMIT ?",
            (
                centre.conversation_id,
                centre.user_id,
                centre.occurred_at.timestamp(),
                centre.occurred_at.timestamp(),
                centre.id,
                before,
            ),
        )
        later = self._store.query(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE conversation_id = ? AND user_id = ? AND "
            "(occurred_at > ? OR (occurred_at = ? AND id > ?)) ORDER BY occurred_at, id LIMIT ?",
            (
                centre.conversation_id,
                centre.user_id,
                centre.occurred_at.timestamp(),
                centre.occurred_at.timestamp(),
                centre.id,
                after,
            ),
        )
        return [*(event_from_row(r) for r in reversed(earlier)), centre, *(event_from_row(r) for r in later)]

    def episodes(
        self, conversation_id: str | None = None, *, user_id: str | None = None, limit: int = 500
    ) -> list[Episode]:
        """Episodes (of one conversation, or all), newest first."""
        sql = f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE 1"
        args: list[Any] = []
        if conversation_id:
            sql += " AND conversation_id = ?"
            args.append(conversation_id)
        if user_id:
            sql += " AND user_id = ?"
            args.append(user_id)
        rows = self._store.query(sql + " ORDER BY started_at DESC, id DESC LIMIT ?", (*args, limit))
        return [episode_from_row(r) for r in rows]

    def episode(self, episode_id: int) -> Episode:
        """One episode by id."""
        rows = self._store.query(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,))
        if not rows:
            raise NotFound("episode", episode_id)
        return episode_from_row(rows[0])

    def close_episodes(self, conversation_id: str, *, user_id: str | None = None) -> int:
        """Close the conversation's open segment now (its summary is queued)."""
        return int(
            self._store.write(lambda tx: close_idle(tx, self._gap_s, conversation_id=conversation_id, user_id=user_id))
        )

    # -- transcripts -------------------------------------------------------------------------------------------
    def importers(self) -> list[Importer]:
        """Every registered transcript importer."""
        found: list[Importer] = []
        self._plugins.hook.register_importers(register=found.append)
        return found

    def detect(self, path: Path) -> Importer:
        """The importer whose ``sniff`` accepts ``path``."""
        if not path.is_file():
            raise ValidationError("path", f"{path} is not a file")
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
        importers = self.importers()
        for importer in importers:
            try:
                if importer.sniff(path, head):
                    return importer
            except Exception:
                log.warning("importer %s failed to sniff a file", getattr(importer, "name", "?"))
        names = ", ".join(f"{i.name} ({i.description})" for i in importers) or "none registered"
        raise UnsupportedFile(
            f"{path.name} is not a transcript format Cairn knows.", fix=f"Supported formats: {names}."
        )

    def import_file(
        self, path: Path, *, user_id: str = "default", importer: Importer | None = None, project_id: str | None = None
    ) -> Iterator[ImportProgress]:
        """Import a transcript file, yielding progress after each conversation.

        Each conversation is ingested in one transaction, so a malformed conversation imports nothing; its error
        (naming the line or record) is reported and the others are imported.  That holds for turns the file reads
        fine but the vault refuses (text over the size limit, an author name too long): the error names the
        turn's place in the file and the field, not the position in an internal batch.  Re-importing adds nothing:
        turns keep their original ids (``external_id``) and duplicates are no-ops.
        """
        chosen = importer or self.detect(path)
        good, bad = _read_all(chosen, path)
        errors = [str(e) for e in bad]
        added = duplicates = 0
        total = len(good)
        yield ImportProgress(str(path), chosen.name, 0, total, 0, 0, tuple(errors))
        for done, conversation in enumerate(good, start=1):
            try:
                a, d = self._import_conversation(conversation, chosen.name, user_id, project_id, path)
            except ImportFormatError as exc:
                errors.append(str(exc))
            else:
                added += a
                duplicates += d
            yield ImportProgress(
                str(path),
                chosen.name,
                done,
                total,
                added,
                duplicates,
                tuple(errors),
                current=conversation.title or conversation.conversation_id,
            )
        # for the activity history: counts and the file's kind, never its name or content
        self._store.write(
            lambda tx: tx.emit(
                "import.completed",
                None,
                importer=chosen.name,
                conversations=total - (len(errors) - len(bad)),
                events=added,
                duplicates=duplicates,
                failed=len(errors),
            )
        )

    def import_summary(self, path: Path, **kwargs: Any) -> ImportSummary:
        """Import ``path`` to the end and summarise."""
        last: ImportProgress | None = None
        for last in self.import_file(path, **kwargs):  # noqa: B007 - we want the final progress
            pass
        assert last is not None
        return ImportSummary(
            last.path, last.importer, last.conversations_done, last.events_added, last.duplicates, last.errors
        )

    def _import_conversation(
        self, conversation: ImportedConversation, importer: str, user_id: str, project_id: str | None, path: Path
    ) -> tuple[int, int]:
        """Ingest one conversation in one transaction: ``(added, duplicates)``.

        Raises:
            ImportFormatError: a turn fails the vault's validation; nothing of the conversation is stored.
        """
        turns = [turn for turn in conversation.turns if turn.content.strip()]
        events = [
            EventIn(
                conversation_id=conversation.conversation_id,
                content=turn.content,
                role=turn.role,
                type=turn.type,
                occurred_at=turn.occurred_at,
                author=turn.author,
                metadata=dict(turn.metadata),
                user_id=user_id,
                project_id=project_id,
                source=f"import:{importer}",
                external_id=turn.external_id,
            )
            for turn in turns
        ]
        if not events:
            return 0, 0
        try:
            results = self._ingest(events)
        except ValidationError as exc:
            raise _rejected_turn(exc, turns, conversation, path) from exc
        title = " ".join((conversation.title or "").split())[:TITLE_MAX]
        if title and title != conversation.conversation_id:
            self._store.write(
                lambda tx: set_title(tx, user_id, conversation.conversation_id, title, f"import:{importer}")
            )
        duplicates = sum(1 for r in results if r.status == "duplicate")
        return len(results) - duplicates, duplicates


#: Titles longer than this are cut (an export's title is a line, not a paragraph).
TITLE_MAX = 200


def set_title(tx: Tx, user_id: str, conversation_id: str, title: str, source: str) -> None:
    """Record (or replace) the title of a user's conversation."""
    tx.execute(
        "INSERT INTO conversation_titles(user_id, conversation_id, title, source, updated_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(user_id, conversation_id) DO UPDATE SET title = excluded.title, source = excluded.source, "
        "updated_at = excluded.updated_at",
        (user_id, conversation_id, title, source, tx.now),
    )


def _rejected_turn(
    exc: ValidationError, turns: Sequence[ImportedTurn], conversation: ImportedConversation, path: Path
) -> ImportFormatError:
    """The vault's refusal of one turn, said in the file's terms: where the turn is, which field, what is wrong."""
    found = _BATCH_FIELD.fullmatch(exc.field)
    index, field = (int(found[1]), found[2]) if found else (None, exc.field)
    reason = exc.message.removeprefix(f"{exc.field}: ")
    if index is not None and index < len(turns):
        turn = turns[index]
        location = turn.location or f"{path.name}: conversation {conversation.conversation_id}, turn {index + 1}"
    else:
        location = f"{path.name}: conversation {conversation.conversation_id}"
    return ImportFormatError(
        f"'{field}' {reason}; nothing of conversation {conversation.title or conversation.conversation_id!r} "
        "was imported",
        location=location,
    )


def _read_all(importer: Importer, path: Path) -> tuple[list[ImportedConversation], list[ImportFormatError]]:
    """Good conversations and the errors of bad ones (importers with ``read_each`` isolate each conversation)."""
    good: list[ImportedConversation] = []
    bad: list[ImportFormatError] = []
    read_each = getattr(importer, "read_each", None)
    try:
        if callable(read_each):
            for item in read_each(path):
                (bad if isinstance(item, ImportFormatError) else good).append(item)
        else:
            good.extend(importer.read(path))
    except ImportFormatError as exc:
        bad.append(exc)
    return good, bad
