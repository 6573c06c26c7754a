"""Recall's reads: the candidates it ranked (facts, events, episodes and spans by id, in as few queries as possible)
and what the prompt text shows beside them (the owner's hot facts, this conversation's facts and latest turns, open
conflicts, turns whose facts have all ended).  :mod:`engine.recall.assemble` builds blocks and text from what these
return and runs no SQL of its own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from engine.documents.model import TABLE_COLUMNS, TableInSection, table_from_row
from engine.facts.conflicts import open_between
from engine.facts.model import FACT_COLUMNS, FACT_FROM, Fact, fact_from_row
from engine.store import Reader, chunked
from engine.temporal import from_epoch


@dataclass(frozen=True, slots=True)
class Turn:
    """An event as recall needs it."""

    id: int
    conversation_id: str
    role: str
    author: str | None
    content: str
    at: datetime
    status: str
    external_id: str | None
    episode_id: int | None
    user_id: str


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    """An episode as recall needs it."""

    id: int
    conversation_id: str
    summary: str
    started_at: datetime
    ended_at: datetime
    first_event_id: int | None
    last_event_id: int | None
    status: str = "summarized"


@dataclass(frozen=True, slots=True)
class SpanRow:
    """A document span as recall needs it, with the table it lies in (if any)."""

    id: int
    document_id: int
    document_name: str
    section_id: int | None
    section_title: str
    text: str
    page_start: int | None
    page_end: int | None
    start_char: int
    end_char: int
    document_at: datetime | None = None  # when the vault got this version of the document
    table: TableInSection | None = None


def _marks(ids: list[int]) -> str:
    return ",".join("?" * len(ids))


def load_facts(store: Reader, ids: Iterable[int]) -> dict[int, Fact]:
    """Facts by id."""
    out: dict[int, Fact] = {}
    for chunk in chunked(sorted(set(ids))):
        for row in store.query(f"SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.id IN ({_marks(chunk)})", tuple(chunk)):
            fact = fact_from_row(row)
            out[fact.id] = fact
    return out


TURN_COLUMNS = "id, conversation_id, role, author, content, occurred_at, status, external_id, episode_id, user_id"


def turn_from_row(row: Any) -> Turn:
    """A :class:`Turn` from a row selected with :data:`TURN_COLUMNS`."""
    return Turn(
        int(row[0]),
        str(row[1]),
        str(row[2]),
        row[3],
        str(row[4]),
        from_epoch(float(row[5])),
        str(row[6]),
        row[7],
        row[8],
        str(row[9]),
    )


def load_turns(store: Reader, ids: Iterable[int]) -> dict[int, Turn]:
    """Events by id."""
    out: dict[int, Turn] = {}
    for chunk in chunked(sorted(set(ids))):
        for row in store.query(f"SELECT {TURN_COLUMNS} FROM events WHERE id IN ({_marks(chunk)})", tuple(chunk)):
            turn = turn_from_row(row)
            out[turn.id] = turn
    return out


def load_episodes(store: Reader, ids: Iterable[int], *, conversation_id: str | None = None) -> dict[int, EpisodeRow]:
    """Episodes by id (only summarised ones carry text), optionally only those of ``conversation_id``."""
    out: dict[int, EpisodeRow] = {}
    scope, scope_params = (" AND conversation_id = ?", (conversation_id,)) if conversation_id is not None else ("", ())
    for chunk in chunked(sorted(set(ids))):
        for r in store.query(
            "SELECT id, conversation_id, summary, started_at, ended_at, first_event_id, last_event_id, status "
            f"FROM episodes WHERE id IN ({_marks(chunk)}) AND summary != ''{scope}",
            (*chunk, *scope_params),
        ):
            out[int(r[0])] = EpisodeRow(
                int(r[0]), str(r[1]), str(r[2]), from_epoch(float(r[3])), from_epoch(float(r[4])), r[5], r[6], str(r[7])
            )
    return out


def load_spans(store: Reader, ids: Iterable[int]) -> dict[int, SpanRow]:
    """Document spans by id, with their document and section names."""
    out: dict[int, SpanRow] = {}
    for chunk in chunked(sorted(set(ids))):
        for r in store.query(
            "SELECT sp.id, sp.document_id, d.name, sp.section_id, COALESCE(se.title, ''), sp.text, sp.page_start, "
            "sp.page_end, sp.start_char, sp.end_char, d.updated_at "
            "FROM spans sp JOIN documents d ON d.id = sp.document_id "
            f"LEFT JOIN sections se ON se.id = sp.section_id WHERE sp.id IN ({_marks(chunk)})",
            tuple(chunk),
        ):
            out[int(r[0])] = SpanRow(
                int(r[0]),
                int(r[1]),
                str(r[2]),
                r[3],
                str(r[4]),
                str(r[5]),
                r[6],
                r[7],
                int(r[8]),
                int(r[9]),
                from_epoch(float(r[10])),
            )
    return _with_tables(store, out)


def _with_tables(store: Reader, spans: dict[int, SpanRow]) -> dict[int, SpanRow]:
    """``spans`` each with the table of its section it overlaps most (one query for all of them, reading only tables
    that overlap a span: a section merged under the section cap may hold thousands)."""
    ranges = sorted({(s.section_id, s.start_char, s.end_char) for s in spans.values() if s.section_id is not None})
    tables: dict[int, dict[int, TableInSection]] = {}
    for chunk in chunked(ranges, 300):
        terms = " OR ".join(["(section_id = ? AND start_char < ? AND end_char > ?)"] * len(chunk))
        for r in store.query(
            f"SELECT {TABLE_COLUMNS} FROM document_tables WHERE {terms}",
            tuple(v for section, start, end in chunk for v in (section, end, start)),
        ):
            section_id, table = table_from_row(r)
            tables.setdefault(section_id, {})[table.id] = table
    if not tables:
        return spans
    out: dict[int, SpanRow] = {}
    for span_id, span in spans.items():
        best, most = None, 0
        for table in tables.get(span.section_id or -1, {}).values():
            overlap = min(span.end_char, table.end_char) - max(span.start_char, table.start_char)
            if overlap > most:
                best, most = table, overlap
        out[span_id] = replace(span, table=best) if best is not None else span
    return out


def adjacent_ids(store: Reader, event_ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
    """For each event, the ids of the turns right before and after it in its conversation (one query)."""
    if not event_ids:
        return {}
    rows = store.query(
        "SELECT c.id, "
        "(SELECT e.id FROM events e WHERE e.conversation_id = c.conversation_id AND e.user_id = c.user_id "
        " AND e.role != 'system' "
        "AND (e.occurred_at < c.occurred_at OR (e.occurred_at = c.occurred_at AND e.id < c.id)) "
        " ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1), "
        "(SELECT e.id FROM events e WHERE e.conversation_id = c.conversation_id AND e.user_id = c.user_id "
        " AND e.role != 'system' "
        "AND (e.occurred_at > c.occurred_at OR (e.occurred_at = c.occurred_at AND e.id > c.id)) "
        " ORDER BY e.occurred_at, e.id LIMIT 1) "
        f"FROM events c WHERE c.id IN ({_marks(event_ids)})",
        tuple(event_ids),
    )
    return {int(r[0]): (r[1], r[2]) for r in rows}


def neighbour_turns(store: Reader, turns: Iterable[Turn], known: dict[int, Turn]) -> dict[int, list[Turn]]:
    """For each of ``turns``, the turns right before and after it in its conversation (time order).

    Two queries for all of them (adjacent ids, then the turns not already in ``known``) rather than two per turn.
    """
    wanted = {turn.id: turn for turn in turns}
    adjacent = adjacent_ids(store, sorted(wanted))
    missing = {int(i) for pair in adjacent.values() for i in pair if i is not None and int(i) not in known}
    loaded = {**known, **load_turns(store, missing)} if missing else known
    return {
        turn_id: [loaded[int(i)] for i in adjacent.get(turn_id, (None, None)) if i is not None and int(i) in loaded]
        for turn_id in wanted
    }


# -- what the text shows beside the ranking ------------------------------------------------------------------------
#: Statuses of a fact that has ended: a turn stating only such facts is an earlier state.
ENDED = ("superseded", "retracted")


def hot_facts(store: Reader, user_id: str, limit: int) -> list[Fact]:
    """The owner's hot facts (the background every prompt may carry), most important first."""
    rows = store.query(
        f"SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.user_id = ? AND f.tier = 'hot' AND f.status = 'active' "
        "AND f.standing IN ('working', 'fact') ORDER BY f.importance DESC, f.updated_at DESC, f.id LIMIT ?",
        (user_id, limit),
    )
    return [fact_from_row(r) for r in rows]


def conversation_facts(store: Reader, user_id: str, conversation_id: str, limit: int) -> list[Fact]:
    """The facts this conversation stated, newest first (quarantined ones left out)."""
    rows = store.query(
        f"SELECT {FACT_COLUMNS} FROM facts f INDEXED BY facts_conversation JOIN subjects s ON s.id = f.subject_id "
        "WHERE f.user_id = ? AND f.conversation_id = ? AND f.status IN ('active', 'contested') "
        "AND f.standing != 'quarantine' "
        "ORDER BY f.recorded_at DESC, f.id DESC LIMIT ?",
        (user_id, conversation_id, limit),
    )
    return [fact_from_row(r) for r in rows]


def latest_turns(store: Reader, user_id: str, conversation_id: str, limit: int) -> list[Turn]:
    """This conversation's last ``limit`` turns (system messages left out), oldest first."""
    rows = store.query(
        f"SELECT {TURN_COLUMNS} FROM events WHERE user_id = ? AND conversation_id = ? AND role != 'system' "
        "ORDER BY occurred_at DESC, id DESC LIMIT ?",
        (user_id, conversation_id, limit),
    )
    return [turn_from_row(r) for r in reversed(rows)]


@dataclass(frozen=True, slots=True)
class OpenConflict:
    """An open conflict between two facts, both loaded."""

    id: int
    a: Fact
    b: Fact
    created_at: datetime


def open_conflicts(store: Reader, user_id: str, fact_ids: Sequence[int]) -> list[OpenConflict]:
    """The open conflicts any of ``fact_ids`` is a side of, with both sides (one with a side gone is left out)."""
    if not fact_ids:
        return []
    found = []
    for conflict_id, fact_a, fact_b, created in open_between(store, user_id, list(fact_ids)):
        facts = load_facts(store, (int(fact_a), int(fact_b)))
        a, b = facts.get(int(fact_a)), facts.get(int(fact_b))
        if a is not None and b is not None:
            found.append(OpenConflict(int(conflict_id), a, b, from_epoch(float(created))))
    return found


@dataclass(frozen=True, slots=True)
class Ended:
    """A turn whose facts have all ended: when the last of them did, and which (subject id, predicate) they were."""

    until: datetime
    slots: frozenset[tuple[int, str]]


def ended_turns(store: Reader, user_id: str, event_ids: Iterable[int]) -> dict[int, Ended]:
    """The turns among ``event_ids`` whose facts have all ended, with the day the last of them ended.

    A turn that also states a live fact stays current; a turn that stated no fact is not judged at all.
    """
    ids = sorted(set(event_ids))
    if not ids:
        return {}
    # it ended when what replaced it began to hold (else when it was closed, else when it was replaced)
    rows = store.query(
        "SELECT f.event_id, f.status, COALESCE(f.valid_to, n.valid_from, n.recorded_at, f.superseded_at), "
        "f.subject_id, f.predicate "
        f"FROM facts f LEFT JOIN facts n ON n.id = f.superseded_by WHERE f.user_id = ? "
        f"AND f.event_id IN ({_marks(ids)}) AND f.status != 'deleted'",
        (user_id, *ids),
    )
    live: set[int] = set()
    until: dict[int, float] = {}
    slots: dict[int, set[tuple[int, str]]] = {}
    for event_id, status, ended_at, subject_id, predicate in rows:
        if status in ENDED:
            until[int(event_id)] = max(until.get(int(event_id), 0.0), float(ended_at or 0.0))
            slots.setdefault(int(event_id), set()).add((int(subject_id), str(predicate)))
        else:
            live.add(int(event_id))
    return {
        event_id: Ended(from_epoch(at), frozenset(slots[event_id]))
        for event_id, at in until.items()
        if event_id not in live and at > 0
    }
