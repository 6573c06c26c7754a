"""Events: validation, ingest (single and batch), and reading conversations back.

Ingest is the acknowledgement path, so it does only what must be durable before answering: validate, run the L0
firewall (nothing unredacted is ever stored, indexed or embedded), insert the event, put it in its conversation's
open episode, and enqueue its enrichment job — all in one write transaction.  Everything slower (classification,
extraction, embedding) happens in the enrichment job.

Duplicates are no-ops that return the existing id: the same ``external_id`` in a conversation, or else the same
conversation, role, author, content and time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from engine.config import Settings
from engine.errors import ValidationError
from engine.jobs import enqueue_many
from engine.privacy import apply as firewall_apply
from engine.store import Tx
from engine.temporal import from_epoch, parse_datetime, to_epoch

EVENT_TYPES = ("message", "tool_call", "app_event", "observation")
ROLES = ("user", "assistant", "system", "tool")
MAX_CONTENT_CHARS = 100_000
MAX_ID_CHARS = 256
MAX_METADATA_BYTES = 32_768
DEFAULT_USER = "default"

IngestStatus = Literal["queued", "duplicate", "blocked", "skipped"]


@dataclass(frozen=True, slots=True)
class EventIn:
    """An event to ingest (the ``POST /v6/ingest`` body)."""

    conversation_id: str
    content: str
    role: str = "user"
    type: str = "message"
    occurred_at: datetime | str | float | None = None
    author: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    user_id: str = DEFAULT_USER
    project_id: str | None = None
    source: str = "api"
    external_id: str | None = None
    valid_time: datetime | str | float | None = None


@dataclass(frozen=True, slots=True)
class IngestResult:
    """The acknowledgement: the event's id and what happens next."""

    event_id: int
    status: IngestStatus


@dataclass(frozen=True, slots=True)
class Event:
    """A stored event (immutable evidence)."""

    id: int
    user_id: str
    project_id: str | None
    conversation_id: str
    type: str
    role: str
    author: str | None
    content: str
    occurred_at: datetime
    valid_time: datetime | None
    ingested_at: datetime
    metadata: Mapping[str, Any]
    source: str
    external_id: str | None
    status: str
    episode_id: int | None

    @property
    def speaker(self) -> str:
        """Who said it: the author in multi-party transcripts, else the role."""
        return self.author or self.role


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """A conversation as listed by the GUI and ``GET /v6/conversations``."""

    conversation_id: str
    user_id: str
    events: int
    first_at: datetime
    last_at: datetime
    authors: tuple[str, ...]
    title: str = ""  # the title an export gave it ("" when none: show the id)


@dataclass(frozen=True, slots=True)
class PreparedEvent:
    """An event validated and passed through the privacy firewall: what the writer stores, computed before the
    writer is asked, so the one writer thread spends nothing on it."""

    event: EventIn
    content: str
    occurred_at: float
    valid_time: float | None
    content_hash: str
    metadata_json: str
    status: str


EVENT_COLUMNS = (
    "id, user_id, project_id, conversation_id, type, role, author, content, occurred_at, valid_time, ingested_at, "
    "metadata, source, external_id, status, episode_id"
)


def event_from_row(row: Sequence[Any]) -> Event:
    """Build an :class:`Event` from a row selected with :data:`EVENT_COLUMNS`."""
    return Event(
        id=int(row[0]),
        user_id=str(row[1]),
        project_id=row[2],
        conversation_id=str(row[3]),
        type=str(row[4]),
        role=str(row[5]),
        author=row[6],
        content=str(row[7]),
        occurred_at=from_epoch(float(row[8])),
        valid_time=from_epoch(float(row[9])) if row[9] is not None else None,
        ingested_at=from_epoch(float(row[10])),
        metadata=json.loads(row[11] or "{}"),
        source=str(row[12]),
        external_id=row[13],
        status=str(row[14]),
        episode_id=int(row[15]) if row[15] is not None else None,
    )


def validate(event: EventIn, settings: Settings, now: float, *, where: str = "") -> PreparedEvent:
    """Check every field; raise :class:`ValidationError` naming the first bad one.  Applies the firewall."""

    def bad(name: str, message: str, fix: str = "") -> ValidationError:
        return ValidationError(f"{where}{name}", message, fix=fix)

    _check_text_fields(event, bad)
    metadata_json = _metadata_json(event, bad)
    try:
        occurred = to_epoch(parse_datetime(event.occurred_at)) if event.occurred_at is not None else now
        valid = to_epoch(parse_datetime(event.valid_time)) if event.valid_time is not None else None
    except ValidationError as exc:
        field_name = "occurred_at" if event.occurred_at is not None else "valid_time"
        raise bad(field_name, exc.message.split(": ", 1)[-1]) from exc

    shield = firewall_apply(event.content, settings.privacy)
    content = shield.text
    metadata = dict(event.metadata)
    if shield.findings:
        metadata["pii"] = sorted({f"{f.category}:{f.action}" for f in shield.findings})
        metadata_json = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    if event.role == "system":
        status = "skipped"  # system messages are not processed for memory (DESIGN §3)
    elif shield.blocked:
        status = "blocked"
    else:
        status = "queued"
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    return PreparedEvent(event, content, occurred, valid, digest, metadata_json, status)


def _check_text_fields(event: EventIn, bad: Callable[..., ValidationError]) -> None:
    """The conversation, type, role, content and the optional names: present where required, of bounded size."""
    if not isinstance(event.conversation_id, str) or not event.conversation_id.strip():
        raise bad("conversation_id", "is required", "Pass the id of the chat this event belongs to.")
    if len(event.conversation_id) > MAX_ID_CHARS:
        raise bad("conversation_id", f"is longer than {MAX_ID_CHARS} characters")
    if event.type not in EVENT_TYPES:
        raise bad("type", f"must be one of {', '.join(EVENT_TYPES)} (got {event.type!r})")
    if event.role not in ROLES:
        raise bad("role", f"must be one of {', '.join(ROLES)} (got {event.role!r})")
    if not isinstance(event.content, str) or not event.content.strip():
        raise bad("content", "must be non-empty text")
    if len(event.content) > MAX_CONTENT_CHARS:
        raise bad(
            "content",
            f"is {len(event.content)} characters; the limit is {MAX_CONTENT_CHARS}",
            "Split long text into several events, or upload it as a document.",
        )
    for name in ("user_id", "project_id", "author", "external_id", "source"):
        value = getattr(event, name)
        if value is None:
            if name in ("user_id", "source"):
                raise bad(name, "is required")
            continue
        if not isinstance(value, str) or not value.strip():
            raise bad(name, "must be non-empty text when given")
        if len(value) > MAX_ID_CHARS:
            raise bad(name, f"is longer than {MAX_ID_CHARS} characters")


def _metadata_json(event: EventIn, bad: Callable[..., ValidationError]) -> str:
    """The metadata as stored: a JSON object of bounded size."""
    if not isinstance(event.metadata, Mapping):
        raise bad("metadata", "must be an object")
    try:
        metadata_json = json.dumps(dict(event.metadata), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise bad("metadata", f"must be JSON-serialisable ({exc})") from exc
    if len(metadata_json.encode()) > MAX_METADATA_BYTES:
        raise bad("metadata", f"is larger than {MAX_METADATA_BYTES} bytes")
    return metadata_json


def prepare_batch(events: Sequence[EventIn], settings: Settings, now: float) -> list[PreparedEvent]:
    """Validate a whole batch first, so a bad event stores nothing (its index is in the field name)."""
    if not events:
        raise ValidationError("events", "must contain at least one event")
    return [validate(e, settings, now, where=f"events[{i}].") for i, e in enumerate(events)]


def insert_prepared(tx: Tx, items: Sequence[PreparedEvent], episodes: Any) -> list[IngestResult]:
    """Insert validated events (skipping duplicates) with their enrichment jobs; returns one result each.

    ``episodes`` assigns each new event to its conversation's open episode (see :mod:`engine.episodes`).  The new
    events of a batch are written together (their ids, episodes, rows and jobs in a few statements): the writer
    thread is what every acknowledgement waits for.
    """
    results: list[IngestResult | None] = [None] * len(items)
    fresh: list[int] = []  # indexes of the events to insert, in order
    first_of: dict[tuple[Any, ...], int] = {}  # a duplicate inside the batch → the index of its first copy
    repeats: dict[int, int] = {}
    stored = _find_duplicates(tx, items)
    for index, item in enumerate(items):
        key = _dedupe_key(item)
        if key in first_of:
            repeats[index] = first_of[key]
            continue
        existing = stored.get(index)
        if existing is not None:
            results[index] = IngestResult(existing, "duplicate")
            continue
        first_of[key] = index
        fresh.append(index)
    event_ids = dict(zip(fresh, tx.new_ids("event", len(fresh)), strict=True))
    episode_ids = episodes.assign_many(
        tx,
        [
            (e.user_id, e.project_id, e.conversation_id, event_ids[i], items[i].occurred_at)
            for i in fresh
            for e in (items[i].event,)
        ],
    )
    rows = []
    for i, episode_id in zip(fresh, episode_ids, strict=True):
        item, e = items[i], items[i].event
        rows.append(
            (
                event_ids[i],
                e.user_id,
                e.project_id,
                e.conversation_id,
                e.type,
                e.role,
                e.author,
                item.content,
                item.occurred_at,
                item.valid_time,
                tx.now,
                item.metadata_json,
                e.source,
                e.external_id,
                item.status,
                episode_id,
                item.content_hash,
            )
        )
    tx.executemany(
        f"INSERT INTO events({EVENT_COLUMNS}, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    queued = [i for i in fresh if items[i].status == "queued"]
    enqueue_many(tx, "enrich", [{"event_id": event_ids[i]} for i in queued], priority=50)
    for i in fresh:
        e, status = items[i].event, items[i].status
        tx.emit("event.created", event_ids[i], conversation_id=e.conversation_id, user_id=e.user_id, status=status)
        results[i] = IngestResult(event_ids[i], "queued" if status == "queued" else status)  # type: ignore[arg-type]
    for index, first in repeats.items():
        results[index] = IngestResult(event_ids[first], "duplicate")
    return [r for r in results if r is not None]


def _dedupe_key(item: PreparedEvent) -> tuple[Any, ...]:
    """What makes two events the same one (the ``events_external`` and ``events_dedupe`` unique indexes)."""
    e = item.event
    if e.external_id is not None:
        return (e.user_id, e.conversation_id, "external", e.external_id)
    return (e.user_id, e.conversation_id, e.role, e.author or "", item.content_hash, item.occurred_at)


#: Events looked up per statement by :func:`_find_duplicates` (7 parameters each).
_DEDUPE_CHUNK = 128


def _find_duplicates(tx: Tx, items: Sequence[PreparedEvent]) -> dict[int, int]:
    """The stored event each of ``items`` repeats, by index: one statement per chunk of events, not one per event.

    A statement per event was the writer's largest cost per acknowledgement after the insert itself.  The lookup
    joins the batch, as a VALUES table, to the ``events_dedupe`` unique index (its plan is a search of that index
    per row); events with an ``external_id`` are few and keep their own lookup.
    """
    found: dict[int, int] = {}
    plain: list[tuple[int, PreparedEvent]] = []
    for index, item in enumerate(items):
        if item.event.external_id is not None:
            existing = _find_duplicate(tx, item)
            if existing is not None:
                found[index] = existing
        else:
            plain.append((index, item))
    for start in range(0, len(plain), _DEDUPE_CHUNK):
        chunk = plain[start : start + _DEDUPE_CHUNK]
        values = ",".join("(?, ?, ?, ?, ?, ?, ?)" for _ in chunk)
        params: list[Any] = []
        for index, item in chunk:
            e = item.event
            params += (index, e.user_id, e.conversation_id, e.role, e.author or "", item.content_hash, item.occurred_at)
        rows = tx.execute(
            f"WITH q(i, user_id, conversation_id, role, author, content_hash, occurred_at) AS (VALUES {values}) "
            "SELECT q.i, e.id FROM q JOIN events e ON e.user_id = q.user_id AND e.conversation_id = q.conversation_id "
            "AND e.role = q.role AND COALESCE(e.author, '') = q.author AND e.content_hash = q.content_hash "
            "AND e.occurred_at = q.occurred_at AND e.external_id IS NULL",
            params,
        ).fetchall()
        found.update((int(r[0]), int(r[1])) for r in rows)
    return found


def _find_duplicate(tx: Tx, item: PreparedEvent) -> int | None:
    e = item.event
    if e.external_id is not None:
        found = tx.scalar(
            "SELECT id FROM events WHERE user_id = ? AND conversation_id = ? AND external_id = ?",
            (e.user_id, e.conversation_id, e.external_id),
        )
    else:
        found = tx.scalar(
            "SELECT id FROM events WHERE user_id = ? AND conversation_id = ? AND role = ? "
            "AND COALESCE(author, '') = ? AND content_hash = ? AND occurred_at = ? AND external_id IS NULL",
            (e.user_id, e.conversation_id, e.role, e.author or "", item.content_hash, item.occurred_at),
        )
    return int(found) if found is not None else None
