"""Subjects: the people, projects and topics facts are about, with aliases, renames and merges.

The vault owner is the subject named ``user`` (kind ``owner``).  Names match case-insensitively and through
aliases, so "Mel" can be made an alias of "Melanie" and both resolve to one subject.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.dto import DocumentMention
from engine.errors import Conflict, NotFound, ValidationError
from engine.store import Tx
from engine.temporal import from_epoch

OWNER = "user"
NAMED_SPANS_LIMIT = 5000  # spans read to count a subject's mentions; a name in more spans than this is everywhere


@dataclass(frozen=True, slots=True)
class Subject:
    """A named anchor facts, events and understandings are tagged with."""

    id: int
    user_id: str
    name: str
    kind: str
    summary: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    fact_count: int
    event_count: int
    created_at: datetime
    updated_at: datetime


SUBJECT_COLUMNS = (
    "s.id, s.user_id, s.name, s.kind, s.summary, s.aliases, s.tags, "
    "(SELECT COUNT(*) FROM facts f WHERE f.subject_id = s.id AND f.status IN ('active', 'contested')), "
    "(SELECT COUNT(*) FROM event_subjects es WHERE es.subject_id = s.id), s.created_at, s.updated_at"
)


def subject_from_row(row: Sequence[Any]) -> Subject:
    """Build a :class:`Subject` from a row selected with :data:`SUBJECT_COLUMNS`."""
    return Subject(
        id=int(row[0]),
        user_id=str(row[1]),
        name=str(row[2]),
        kind=str(row[3]),
        summary=str(row[4]),
        aliases=tuple(json.loads(row[5] or "[]")),
        tags=tuple(json.loads(row[6] or "[]")),
        fact_count=int(row[7]),
        event_count=int(row[8]),
        created_at=from_epoch(float(row[9])),
        updated_at=from_epoch(float(row[10])),
    )


def find_subject_id(q: Any, user_id: str, name: str) -> int | None:
    """The id of the subject called ``name`` (or aliased so) for ``user_id``, following merges."""
    row = q.execute(
        "SELECT id, merged_into FROM subjects WHERE user_id = ? AND name = ? COLLATE NOCASE", (user_id, name)
    ).first()
    if row is None:
        row = q.execute(
            "SELECT s.id, s.merged_into FROM subjects s, json_each(s.aliases) a "
            "WHERE s.user_id = ? AND a.value = ? COLLATE NOCASE LIMIT 1",
            (user_id, name),
        ).first()
    if row is None:
        return None
    subject_id, merged_into = int(row[0]), row[1]
    hops = 0
    while merged_into is not None and hops < 16:
        nxt = q.execute("SELECT id, merged_into FROM subjects WHERE id = ?", (merged_into,)).first()
        if nxt is None:
            break
        subject_id, merged_into = int(nxt[0]), nxt[1]
        hops += 1
    return subject_id


def ensure_subject(tx: Tx, user_id: str, name: str, kind: str = "entity") -> int:
    """The subject's id, creating it when it does not exist yet."""
    clean = " ".join(name.split())
    if not clean:
        raise ValidationError("subject", "must not be empty")
    found = find_subject_id(tx, user_id, clean)
    if found is not None:
        return found
    subject_id = tx.new_id("subject")
    tx.execute(
        "INSERT INTO subjects(id, user_id, name, kind, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        (subject_id, user_id, clean, "owner" if clean == OWNER else kind, tx.now, tx.now),
    )
    tx.emit("subject.created", subject_id, name=clean, user_id=user_id)
    return subject_id


def rename_subject(tx: Tx, subject_id: int, new_name: str) -> None:
    """Rename a subject; the old name becomes an alias so earlier references still resolve."""
    row = tx.execute("SELECT user_id, name, aliases, kind FROM subjects WHERE id = ?", (subject_id,)).first()
    if row is None:
        raise NotFound("subject", subject_id)
    user_id, old_name, aliases_json, kind = row
    clean = " ".join(new_name.split())
    if not clean:
        raise ValidationError("name", "must not be empty")
    if kind == "owner":
        raise Conflict("The vault owner's subject cannot be renamed.", fix="Add an is_named fact instead.")
    other = find_subject_id(tx, user_id, clean)
    if other is not None and other != subject_id:
        raise Conflict(f"A subject called {clean!r} already exists.", fix="Merge the two subjects instead.")
    aliases = [a for a in json.loads(aliases_json or "[]") if a.casefold() != clean.casefold()]
    if old_name.casefold() != clean.casefold():
        aliases.append(old_name)
    tx.execute(
        "UPDATE subjects SET name = ?, aliases = ?, updated_at = ? WHERE id = ?",
        (clean, json.dumps(aliases), tx.now, subject_id),
    )
    tx.emit("subject.changed", subject_id, name=clean)


def merge_subjects(tx: Tx, keep_id: int, merge_ids: Sequence[int]) -> int:
    """Fold ``merge_ids`` into ``keep_id``: facts, tags and aliases move; the merged rows point at the keeper.

    Returns the number of facts that moved.
    """
    keeper = tx.execute("SELECT user_id, aliases FROM subjects WHERE id = ?", (keep_id,)).first()
    if keeper is None:
        raise NotFound("subject", keep_id)
    aliases = list(json.loads(keeper[1] or "[]"))
    moved = 0
    for other in merge_ids:
        if other == keep_id:
            continue
        row = tx.execute("SELECT user_id, name, aliases, kind FROM subjects WHERE id = ?", (other,)).first()
        if row is None:
            raise NotFound("subject", other)
        if row[0] != keeper[0]:
            raise ValidationError("merge_ids", "subjects of different users cannot be merged")
        if row[3] == "owner":
            raise Conflict(
                "The vault owner's subject cannot be merged into another.",
                fix="Merge the other subject into the owner instead.",
            )
        moved += int(
            tx.execute(
                "UPDATE facts SET subject_id = ?, updated_at = ? WHERE subject_id = ?", (keep_id, tx.now, other)
            ).rowcount
            or 0
        )
        for table, column in (
            ("fact_subjects", "fact_id"),
            ("event_subjects", "event_id"),
            ("understanding_subjects", "understanding_id"),
            ("observation_subjects", "observation_id"),
        ):
            tx.execute(
                f"INSERT OR IGNORE INTO {table}({column}, subject_id) "
                f"SELECT {column}, ? FROM {table} WHERE subject_id = ?",
                (keep_id, other),
            )
            tx.execute(f"DELETE FROM {table} WHERE subject_id = ?", (other,))
        aliases.extend([row[1], *json.loads(row[2] or "[]")])
        tx.execute(
            "UPDATE subjects SET merged_into = ?, aliases = '[]', name = ?, updated_at = ? WHERE id = ?",
            (keep_id, f"{row[1]} (merged #{other})", tx.now, other),
        )
    unique = list(dict.fromkeys(a for a in aliases if a))
    tx.execute("UPDATE subjects SET aliases = ?, updated_at = ? WHERE id = ?", (json.dumps(unique), tx.now, keep_id))
    tx.emit("subject.changed", keep_id, merged=list(merge_ids))
    return moved


class SubjectsApi:
    """``vault.subjects``: the people and topics the vault knows (calling it lists them, the owner first)."""

    def __init__(
        self,
        store: Any,
        restate: Callable[[Tx, int], object] | None = None,
        merged: Callable[[Tx, int, Sequence[int]], object] | None = None,
    ) -> None:
        self._store = store
        #: Writes the statements of a subject's facts again from their slots (after a rename or a merge).
        self._restate = restate
        #: Moves what other rooms file under merged subjects to the keeper (their conflicts: the facts room owns them).
        self._merged = merged

    def __call__(self, *, user_id: str | None = None, q: str | None = None, limit: int = 500) -> list[Subject]:
        """Subjects (not merged away), the vault owner first, then by how much is known about them."""
        sql = f"SELECT {SUBJECT_COLUMNS} FROM subjects s WHERE s.merged_into IS NULL"
        args: list[Any] = []
        if user_id:
            sql += " AND s.user_id = ?"
            args.append(user_id)
        if q:
            sql += " AND (s.name LIKE ? OR s.aliases LIKE ?)"
            args += [f"%{q}%", f"%{q}%"]
        sql += " ORDER BY (s.kind = 'owner') DESC, 8 DESC, 9 DESC, s.name LIMIT ?"
        return [subject_from_row(r) for r in self._store.query(sql, (*args, limit))]

    def get(self, subject_id: int) -> Subject:
        """One subject by id."""
        rows = self._store.query(f"SELECT {SUBJECT_COLUMNS} FROM subjects s WHERE s.id = ?", (subject_id,))
        if not rows:
            raise NotFound("subject", subject_id)
        return subject_from_row(rows[0])

    def find(self, name: str, *, user_id: str = "default") -> Subject:
        """A subject by name or alias."""
        with self._store.snapshot() as snap:
            found = find_subject_id(snap, user_id, name)
        if found is None:
            raise NotFound("subject", name)
        return self.get(found)

    def event_ids(self, subject_id: int, *, limit: int = 50) -> list[int]:
        """Events tagged with the subject (spoken by or about them), newest first."""
        rows = self._store.query(
            "SELECT e.id FROM event_subjects es JOIN events e ON e.id = es.event_id WHERE es.subject_id = ? "
            "ORDER BY e.occurred_at DESC, e.id DESC LIMIT ?",
            (subject_id, limit),
        )
        return [int(r[0]) for r in rows]

    def events(self, subject_id: int, *, limit: int = 50) -> list[Any]:
        """Events tagged with the subject, newest first (as :class:`engine.events.Event`)."""
        from engine.events import EVENT_COLUMNS, event_from_row

        columns = ", ".join(f"e.{c.strip()}" for c in EVENT_COLUMNS.split(","))
        rows = self._store.query(
            f"SELECT {columns} FROM event_subjects es JOIN events e ON e.id = es.event_id WHERE es.subject_id = ? "
            "ORDER BY e.occurred_at DESC, e.id DESC LIMIT ?",
            (subject_id, limit),
        )
        return [event_from_row(r) for r in rows]

    def document_ids(self, subject_id: int, *, limit: int = 50) -> list[int]:
        """Documents whose facts are about the subject, most recent first."""
        rows = self._store.query(
            "SELECT DISTINCT sp.document_id FROM facts f JOIN spans sp ON sp.id = f.span_id "
            "WHERE f.subject_id = ? AND f.status IN ('active', 'contested') LIMIT ?",
            (subject_id, limit),
        )
        return [int(r[0]) for r in rows]

    def documents(self, subject_id: int, *, limit: int = 50) -> list[DocumentMention]:
        """Documents that mention the subject, the most mentions first.

        A document counts when its text names the subject (its name or an alias, as a phrase in the full-text
        index) or when current memories about the subject were drawn from it.  The vault owner is never matched by
        name: "user" in a document's text is not the person who owns the vault.

        Raises:
            NotFound: no such subject.
        """
        subject = self.get(subject_id)
        found: dict[int, dict[str, Any]] = {}
        if subject.kind != "owner":
            for span_id, document_id, page, excerpt in self._named_spans(subject):
                entry = found.setdefault(document_id, {"spans": 0, "facts": 0, "span": span_id, "page": page})
                entry["spans"] += 1
                entry.setdefault("excerpt", excerpt)
        for document_id, facts, span_id, page in self._store.query(
            "SELECT sp.document_id, COUNT(*), MIN(sp.id), MIN(sp.page_start) FROM facts f "
            "JOIN spans sp ON sp.id = f.span_id WHERE f.subject_id = ? AND f.status IN ('active', 'contested') "
            "GROUP BY sp.document_id",
            (subject_id,),
        ):
            entry = found.setdefault(int(document_id), {"spans": 0, "facts": 0, "span": int(span_id), "page": page})
            entry["facts"] = int(facts)
        if not found:
            return []
        marks = ",".join("?" * len(found))
        rows = self._store.query(
            f"SELECT id, name, status, updated_at FROM documents WHERE id IN ({marks}) AND user_id = ?",
            (*found, subject.user_id),
        )
        mentions = [
            DocumentMention(
                document_id=int(r[0]),
                name=str(r[1]),
                status=str(r[2]),
                updated_at=from_epoch(float(r[3])),
                spans=found[int(r[0])]["spans"],
                facts=found[int(r[0])]["facts"],
                first_span_id=found[int(r[0])]["span"],
                page=found[int(r[0])]["page"],
                excerpt=" ".join(str(found[int(r[0])].get("excerpt", "")).split()),
            )
            for r in rows
        ]
        mentions.sort(key=lambda m: (-(m.facts + m.spans), -m.updated_at.timestamp(), m.name))
        return mentions[:limit]

    def _named_spans(self, subject: Subject) -> list[tuple[int, int, int | None, str]]:
        """``(span id, document id, page, excerpt)`` of every span naming ``subject``, in document order."""
        phrases = [name for name in (subject.name, *subject.aliases) if any(ch.isalnum() for ch in name)]
        if not phrases:
            return []
        query = " OR ".join('"' + name.replace('"', '""') + '"' for name in phrases)
        rows = self._store.query(
            "SELECT sp.id, sp.document_id, sp.page_start, snippet(spans_fts, 0, '', '', '…', 16) "
            "FROM spans_fts JOIN spans sp ON sp.id = spans_fts.rowid JOIN documents d ON d.id = sp.document_id "
            "WHERE spans_fts MATCH ? AND d.user_id = ? ORDER BY sp.document_id, sp.ordinal LIMIT ?",
            (query, subject.user_id, NAMED_SPANS_LIMIT),
        )
        return [(int(r[0]), int(r[1]), r[2], str(r[3] or "")) for r in rows]

    def neighbours(self, subject_id: int, *, limit: int = 20) -> list[tuple[Subject, int]]:
        """Other subjects sharing facts or events with this one, by the size of the intersection."""
        rows = self._store.query(
            "SELECT other, COUNT(*) AS n FROM ("
            " SELECT b.subject_id AS other FROM fact_subjects a JOIN fact_subjects b ON a.fact_id = b.fact_id "
            "  WHERE a.subject_id = ? AND b.subject_id != ? "
            " UNION ALL SELECT b.subject_id FROM event_subjects a JOIN event_subjects b ON a.event_id = b.event_id "
            "  WHERE a.subject_id = ? AND b.subject_id != ?) GROUP BY other ORDER BY n DESC LIMIT ?",
            (subject_id, subject_id, subject_id, subject_id, limit),
        )
        return [(self.get(int(r[0])), int(r[1])) for r in rows]

    def merge_in(self, tx: Tx, keep_id: int, merge_ids: Sequence[int]) -> int:
        """Merge inside ``tx`` (:func:`merge_subjects`), and tell the rooms that file things by subject; the count
        of facts moved."""
        moved = merge_subjects(tx, keep_id, merge_ids)
        if self._merged is not None:
            self._merged(tx, keep_id, merge_ids)
        return moved

    def restate_in(self, tx: Tx, subject_id: int) -> None:
        """Write the statements of the facts filed under ``subject_id`` again, inside ``tx`` (after another room
        merged subjects into it)."""
        if self._restate is not None:
            self._restate(tx, subject_id)

    def rename(self, subject_id: int, new_name: str) -> Subject:
        """Rename (the old name stays as an alias); the subject's facts are restated under the new name."""

        def op(tx: Tx) -> None:
            rename_subject(tx, subject_id, new_name)
            if self._restate is not None:
                self._restate(tx, subject_id)

        self._store.write(op)
        return self.get(subject_id)

    def merge(self, keep_id: int, merge_ids: Sequence[int]) -> Subject:
        """Merge ``merge_ids`` into ``keep_id``; the facts that moved are restated under the keeper's name."""
        if not merge_ids:
            raise ValidationError("merge_ids", "name at least one subject to merge")

        def op(tx: Tx) -> None:
            self.merge_in(tx, keep_id, merge_ids)
            if self._restate is not None:
                self._restate(tx, keep_id)

        self._store.write(op)
        return self.get(keep_id)
