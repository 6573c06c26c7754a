"""Conflicts and the status changes that settle them: open, resolve, settle, supersede, retract, restore.

A conflict links two facts that cannot both be current (two values of a single-valued slot, or facts of related
slots that exclude each other, :mod:`engine.facts.compat`) and marks both contested until one wins — by a user's
clarification, an explicit resolution in the app or the endpoint, a change that makes the slot move on, or a
retraction.  Every function here runs inside the writer's transaction and publishes what it changed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from engine.errors import Conflict, NotFound, ValidationError
from engine.facts.model import Fact, confidence, standing_for, tier_for
from engine.store import Store, Tx, chunked
from engine.temporal import from_epoch


class FactLookup(Protocol):
    """What the conflicts API needs of the facts API: facts by id (a protocol, so that neither module imports the
    other — :class:`~engine.facts.api.FactsApi` builds this one and satisfies it)."""

    def get_many(self, ids: Sequence[int]) -> list[Fact]:
        """Facts by id, in the order asked (missing ids are skipped)."""
        ...


# -- reads and moves of conflict rows for other rooms (this module owns the conflicts table) ----------------------
def other_side(q: Any, conflict_id: int, fact_id: int) -> int:
    """The fact that conflict ``conflict_id`` sets against ``fact_id``."""
    sql = "SELECT CASE WHEN fact_a = ? THEN fact_b ELSE fact_a END FROM conflicts WHERE id = ?"
    return int(q.scalar(sql, (fact_id, conflict_id)))


def open_between(q: Any, user_id: str, fact_ids: Sequence[int]) -> list[tuple[int, int, int, float]]:
    """``(id, fact_a, fact_b, created_at)`` of the user's open conflicts involving any of ``fact_ids``, by id."""
    if not fact_ids:
        return []
    marks = ",".join("?" * len(fact_ids))
    rows = q.query(
        f"SELECT id, fact_a, fact_b, created_at FROM conflicts WHERE status = 'open' AND user_id = ? "
        f"AND (fact_a IN ({marks}) OR fact_b IN ({marks})) ORDER BY id",
        (user_id, *fact_ids, *fact_ids),
    )
    return [(int(r[0]), int(r[1]), int(r[2]), float(r[3])) for r in rows]


def of_facts(tx: Tx, fact_ids: Sequence[int]) -> set[int]:
    """Every conflict (any status) one of ``fact_ids`` takes part in."""
    found: set[int] = set()
    for chunk in chunked(fact_ids):
        marks = ",".join("?" * len(chunk))
        found.update(
            int(r[0])
            for r in tx.execute(
                f"SELECT id FROM conflicts WHERE fact_a IN ({marks}) OR fact_b IN ({marks})", (*chunk, *chunk)
            ).fetchall()
        )
    return found


def sides(tx: Tx, conflict_ids: Sequence[int]) -> list[tuple[int, int]]:
    """``(fact_a, fact_b)`` of each of ``conflict_ids``."""
    out: list[tuple[int, int]] = []
    for chunk in chunked(conflict_ids):
        marks = ",".join("?" * len(chunk))
        rows = tx.execute(f"SELECT fact_a, fact_b FROM conflicts WHERE id IN ({marks})", tuple(chunk)).fetchall()
        out += [(int(a), int(b)) for a, b in rows]
    return out


def move_to_subject(tx: Tx, keep_id: int, merge_ids: Sequence[int]) -> None:
    """Subjects ``merge_ids`` were merged into ``keep_id``: their conflicts are the keeper's now."""
    for other in merge_ids:
        tx.execute("UPDATE conflicts SET subject_id = ? WHERE subject_id = ?", (keep_id, other))


def count_open(q: Any) -> int:
    """How many conflicts are open, all users together (the vault's counts)."""
    return int(q.scalar("SELECT COUNT(*) FROM conflicts WHERE status = 'open'"))


def open_conflict(tx: Tx, user_id: str, subject_id: int, predicate: str, old_id: int, new_id: int, reason: str) -> int:
    """Mark both facts contested/challenged and record the conflict."""
    conflict_id = tx.new_id("conflict")
    tx.execute(
        "INSERT INTO conflicts(id, user_id, subject_id, predicate, fact_a, fact_b, status, reason, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)",
        (conflict_id, user_id, subject_id, predicate, old_id, new_id, reason, tx.now),
    )
    for fid in (old_id, new_id):
        _rescore(tx, fid, status="contested")
        tx.emit("memory.updated", fid, reason="contested")
    tx.emit(
        "conflict.created",
        conflict_id,
        fact_ids=[old_id, new_id],
        predicate=predicate,
        user_id=user_id,
    )
    return conflict_id


def open_conflicts_of(q: Any, fact_id: int) -> list[int]:
    """Open conflicts a fact is part of."""
    rows = q.execute(
        "SELECT id FROM conflicts WHERE status = 'open' AND (fact_a = ? OR fact_b = ?)",
        (fact_id, fact_id),
    ).fetchall()
    return [int(r[0]) for r in rows]


def resolve_conflict(tx: Tx, conflict_id: int, winner_id: int | None, *, resolved_by: str) -> None:
    """Close a conflict: the winner is promoted, the loser retired to cold; ``None`` keeps both.

    A loser is retired even when it is part of other open conflicts: in a single-valued slot the value the user
    chose is the current one.  Conflicts left with a retired side are closed with it (see :func:`supersede`).
    """
    row = tx.execute("SELECT fact_a, fact_b, status FROM conflicts WHERE id = ?", (conflict_id,)).first()
    if row is None or row[2] != "open":
        return
    fact_a, fact_b = int(row[0]), int(row[1])
    resolution = "keep_both" if winner_id is None else ("keep_a" if winner_id == fact_a else "keep_b")
    tx.execute(
        "UPDATE conflicts SET status = 'resolved', resolution = ?, winner_id = ?, resolved_by = ?, "
        "resolved_at = ? WHERE id = ?",
        (resolution, winner_id, resolved_by, tx.now, conflict_id),
    )
    if winner_id is None:
        for fid in (fact_a, fact_b):
            settle(tx, fid)
    else:
        loser = fact_b if winner_id == fact_a else fact_a
        settle(tx, winner_id)
        supersede(tx, loser, winner_id)
    tx.emit(
        "conflict.resolved",
        conflict_id,
        winner_id=winner_id,
        resolution=resolution,
        resolved_by=resolved_by,
    )


def settle(tx: Tx, fact_id: int) -> None:
    """A contested fact leaves the contested state once no open conflict holds it any more.

    Also used by forget: a fact whose opponent was forgotten is no longer contested by anything.
    """
    if tx.scalar("SELECT status FROM facts WHERE id = ?", (fact_id,)) != "contested":
        return
    if not open_conflicts_of(tx, fact_id):
        _rescore(tx, fact_id, status="active")
        tx.emit("memory.updated", fact_id, reason="conflict resolved")


def restore_superseded(tx: Tx, fact_id: int) -> None:
    """Make a superseded fact current again (its replacement was forgotten): active, rescored and re-tiered."""
    if tx.scalar("SELECT status FROM facts WHERE id = ?", (fact_id,)) != "superseded":
        return
    tx.execute("UPDATE facts SET superseded_at = NULL, superseded_by = NULL WHERE id = ?", (fact_id,))
    _rescore(tx, fact_id, status="active")
    tx.emit("memory.restored", fact_id, reason="what replaced it was forgotten")


def supersede(tx: Tx, old_id: int, new_id: int | None, *, close_conflicts: bool = True) -> None:
    """Retire ``old_id`` (history kept): superseded, cold, pointing at its replacement.

    A fact leaving a conflict this way gets the standing of its confidence back (``challenged`` only describes
    a fact in an open conflict), and the conflicts it was part of are closed: the slot has moved on.
    """
    row = tx.execute("SELECT status, confidence FROM facts WHERE id = ?", (old_id,)).first()
    if row is None or row[0] not in ("active", "contested"):
        return
    tx.execute(
        "UPDATE facts SET status = 'superseded', superseded_at = ?, superseded_by = ?, tier = 'cold', "
        "standing = ?, updated_at = ? WHERE id = ?",
        (tx.now, new_id, standing_for(float(row[1])), tx.now, old_id),
    )
    tx.emit("memory.superseded", old_id, superseded_by=new_id)
    if close_conflicts:
        close_moot_conflicts(tx, old_id)


def close_moot_conflicts(tx: Tx, retired_id: int) -> None:
    """Close the open conflicts of a fact that is no longer current (``resolved_by = 'superseded'``).

    Neither side won such a conflict: the slot moved on.  The other side settles unless another conflict holds it.
    """
    for conflict_id in open_conflicts_of(tx, retired_id):
        fact_a, fact_b = tx.execute("SELECT fact_a, fact_b FROM conflicts WHERE id = ?", (conflict_id,)).first()
        tx.execute(
            "UPDATE conflicts SET status = 'resolved', resolution = NULL, winner_id = NULL, "
            "resolved_by = 'superseded', resolved_at = ? WHERE id = ?",
            (tx.now, conflict_id),
        )
        tx.emit("conflict.resolved", conflict_id, winner_id=None, resolution=None, resolved_by="superseded")
        settle(tx, int(fact_b) if int(fact_a) == retired_id else int(fact_a))


def retract(tx: Tx, fact_id: int, *, until: float, by_event: int | None = None) -> None:
    """Mark a fact retracted (no longer true from ``until``), cold; its open conflicts go to the other side.

    ``by_event`` (the event that said so) is kept in the fact's metadata as ``retracted_by``.
    """
    row = tx.execute("SELECT status, confidence FROM facts WHERE id = ?", (fact_id,)).first()
    if row is None or row[0] not in ("active", "contested"):
        return
    tx.execute(
        "UPDATE facts SET status = 'retracted', valid_to = COALESCE(MIN(valid_to, ?), ?), tier = 'cold', "
        "standing = ?, metadata = CASE WHEN ? IS NULL THEN metadata "
        "ELSE json_set(COALESCE(metadata, '{}'), '$.retracted_by', ?) END, updated_at = ? WHERE id = ?",
        (until, until, standing_for(float(row[1])), by_event, by_event, tx.now, fact_id),
    )
    for conflict_id in open_conflicts_of(tx, fact_id):
        other = tx.execute(
            "SELECT CASE WHEN fact_a = ? THEN fact_b ELSE fact_a END FROM conflicts WHERE id = ?",
            (fact_id, conflict_id),
        ).scalar()
        resolve_conflict(tx, conflict_id, int(other) if other is not None else None, resolved_by="retraction")
    tx.emit("memory.updated", fact_id, reason="retracted")


def _rescore(tx: Tx, fact_id: int, *, status: str) -> None:
    row = tx.execute(
        "SELECT kind, corroboration, metadata, importance, predicate, useful_count, "
        "questionable_count, source_role, tier_pinned, tier FROM facts WHERE id = ?",
        (fact_id,),
    ).first()
    if row is None:
        return
    (
        kind,
        corroboration,
        meta_json,
        importance,
        _predicate,
        useful,
        questionable,
        source_role,
        pinned,
        tier,
    ) = row
    meta = json.loads(meta_json or "{}")
    source_class = meta.get("source_class", "user" if source_role == "user" else "group")
    contested = status == "contested"
    conf = confidence(
        source_class,
        kind,
        corroboration=int(corroboration),
        conflicted=contested,
        signals=int(useful) - int(questionable),
    )
    standing = standing_for(conf, contested=contested)
    new_tier = tier if pinned else tier_for(float(importance), standing, meta.get("tier_hint", "warm"), status)
    tx.execute(
        "UPDATE facts SET status = ?, confidence = ?, standing = ?, tier = ?, updated_at = ? WHERE id = ?",
        (status, conf, standing, new_tier, tx.now, fact_id),
    )


@dataclass(frozen=True, slots=True)
class ConflictView:
    """An open or resolved conflict with both sides."""

    id: int
    user_id: str
    subject: str
    predicate: str
    status: str
    reason: str
    fact_a: Fact
    fact_b: Fact
    resolution: str | None
    winner_id: int | None
    resolved_by: str | None
    created_at: datetime
    resolved_at: datetime | None


class ConflictsApi:
    """Open and resolved conflicts."""

    def __init__(self, store: Store, facts: FactLookup) -> None:
        self._store = store
        self._facts = facts

    def __call__(
        self, *, status: str | None = "open", user_id: str | None = None, limit: int = 200
    ) -> list[ConflictView]:
        """Conflicts, newest first (``status`` open / resolved / None for all)."""
        conds: list[str] = []
        args: list[Any] = []
        if status:
            if status not in ("open", "resolved"):
                raise ValidationError("status", "must be 'open' or 'resolved'")
            conds.append("c.status = ?")
            args.append(status)
        if user_id:
            conds.append("c.user_id = ?")
            args.append(user_id)
        return self._views(" AND ".join(conds) or "1", args, limit)

    def _views(self, where: str, args: list[Any], limit: int) -> list[ConflictView]:
        rows = self._store.query(
            "SELECT c.id, c.user_id, COALESCE(s.name, ''), c.predicate, c.status, c.reason, c.fact_a, c.fact_b, "
            "c.resolution, c.winner_id, c.resolved_by, c.created_at, c.resolved_at FROM conflicts c "
            f"LEFT JOIN subjects s ON s.id = c.subject_id WHERE {where} "
            "ORDER BY c.created_at DESC, c.id DESC LIMIT ?",
            (*args, limit),
        )
        facts = {f.id: f for f in self._facts.get_many([i for r in rows for i in (int(r[6]), int(r[7]))])}
        return [
            ConflictView(
                id=int(r[0]),
                user_id=str(r[1]),
                subject=str(r[2]),
                predicate=str(r[3]),
                status=str(r[4]),
                reason=str(r[5]),
                fact_a=facts[int(r[6])],
                fact_b=facts[int(r[7])],
                resolution=r[8],
                winner_id=r[9],
                resolved_by=r[10],
                created_at=from_epoch(float(r[11])),
                resolved_at=from_epoch(float(r[12])) if r[12] is not None else None,
            )
            for r in rows
            if int(r[6]) in facts and int(r[7]) in facts
        ]

    def get(self, conflict_id: int) -> ConflictView:
        """One conflict by id."""
        views = self._views("c.id = ?", [conflict_id], 1)
        if not views:
            raise NotFound("conflict", conflict_id)
        return views[0]

    def count(self, *, status: str = "open", user_id: str | None = None) -> int:
        """How many conflicts have ``status`` (the GUI's badge)."""
        sql, args = "SELECT COUNT(*) FROM conflicts WHERE status = ?", [status]
        if user_id:
            sql += " AND user_id = ?"
            args.append(user_id)
        return int(self._store.scalar(sql, tuple(args)) or 0)

    def resolve(self, conflict_id: int, winner_id: int | None) -> ConflictView:
        """Resolve: ``winner_id`` wins (the other side is retired), or ``None`` keeps both."""

        def op(tx: Tx) -> None:
            row = tx.execute("SELECT fact_a, fact_b, status FROM conflicts WHERE id = ?", (conflict_id,)).first()
            if row is None:
                raise NotFound("conflict", conflict_id)
            if row[2] != "open":
                raise Conflict(f"Conflict {conflict_id} is already resolved.")
            if winner_id is not None and winner_id not in (int(row[0]), int(row[1])):
                raise ValidationError("winner_id", f"must be {row[0]} or {row[1]} (the two sides)")
            resolve_conflict(tx, conflict_id, winner_id, resolved_by="user")

        self._store.write(op)
        return self.get(conflict_id)
