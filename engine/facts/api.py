"""``vault.facts`` and ``vault.conflicts``: reading, filtering and correcting facts (DESIGN §3 lifecycle).

Every change goes through the writer and the change feed.  History is never lost: an edit is a new version that
supersedes the old one, a delete is soft (``restore`` undoes it), a retraction restores the previous winner.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from engine.errors import Conflict, ModelUnavailable, NotFound, ValidationError
from engine.facts import params
from engine.facts.conflicts import open_conflicts_of, other_side, resolve_conflict, retract, supersede
from engine.facts.decide import Decider
from engine.facts.model import (
    FACT_COLUMNS,
    FACT_FROM,
    Fact,
    confidence,
    fact_from_row,
    normalise_object,
    render_statement,
    standing_for,
    tier_for,
)
from engine.facts.outcomes import Applied, FactContext
from engine.facts.pipeline import Pipeline, Proposal
from engine.facts.types import Evidence, Proposition
from engine.store import Store, Tx, chunked
from engine.subjects import OWNER
from engine.temporal import parse_datetime, to_epoch
from engine.vectors import VectorIndex, VectorItem
from engine.vectors.migration import queue_vectors

STATUSES = ("active", "contested", "superseded", "retracted", "deleted")
TIERS = ("hot", "warm", "cold")
STANDINGS = ("quarantine", "candidate", "working", "fact", "challenged")


@dataclass(frozen=True, slots=True)
class FactPage:
    """One page of facts and the cursor for the next (None at the end)."""

    facts: tuple[Fact, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class TruthEntry:
    """The current winner of a slot (or one value of a multi-valued predicate)."""

    subject: str
    predicate: str
    cardinality: str
    fact: Fact
    alternatives: int


@dataclass(frozen=True, slots=True)
class PredicateInfo:
    """A predicate as pickers show it."""

    name: str
    label: str
    description: str
    kind: str
    cardinality: str


@dataclass(frozen=True, slots=True)
class FactFilter:
    """Filters shared by listing, the GUI table and ``GET /v6/facts``."""

    user_id: str | None = None
    subject: str | None = None
    predicate: str | None = None
    tier: str | None = None
    standing: str | None = None
    status: str | tuple[str, ...] | None = None
    q: str | None = None
    conversation_id: str | None = None
    event_id: int | None = None
    as_of: datetime | str | float | None = None
    q_mode: str = "any"  # "any": facts with any of the words; "all": facts with every word


class FactsApi:
    """Facts of the vault.  Calling the object lists facts: ``vault.facts(subject="user", as_of=...)``."""

    def __init__(self, store: Store, decider: Decider, pipeline: Pipeline, vectors: VectorIndex) -> None:
        self._store = store
        self._decider = decider
        self._pipeline = pipeline
        self._vectors = vectors

    # -- reading -----------------------------------------------------------------------------------------------
    def __call__(self, *, limit: int = 100, **filters: Any) -> list[Fact]:
        """Facts matching ``filters`` (see :class:`FactFilter`), newest first."""
        return list(self.page(FactFilter(**filters), limit=limit).facts)

    def page(self, flt: FactFilter, *, limit: int = 100, cursor: str | None = None) -> FactPage:
        """A page of facts (keyset pagination on ``updated_at, id``: stable under concurrent writes)."""
        if not 1 <= limit <= 1000:
            raise ValidationError("limit", "must be between 1 and 1000")
        where, args = self._where(flt)
        if cursor:
            at, last_id = _decode_cursor(cursor)
            where.append("(f.updated_at < ? OR (f.updated_at = ? AND f.id < ?))")
            args += [at, at, last_id]
        sql = (
            f"SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE {' AND '.join(where) or '1'} "
            "ORDER BY f.updated_at DESC, f.id DESC LIMIT ?"
        )
        rows = self._store.query(sql, (*args, limit + 1))
        facts = tuple(fact_from_row(r) for r in rows[:limit])
        nxt = None
        if len(rows) > limit:
            # the raw column, not the datetime: a microsecond-rounded timestamp could repeat or skip a fact
            last_row = rows[limit - 1]
            nxt = _encode_cursor(float(last_row[25]), int(last_row[0]))
        return FactPage(facts, nxt)

    ORDERS: ClassVar[dict[str, tuple[str, bool]]] = {
        "updated": ("f.updated_at", True),
        "subject": ("s.name COLLATE NOCASE", False),
        "predicate": ("f.predicate", False),
        "confidence": ("f.confidence", True),
        "tier": ("CASE f.tier WHEN 'hot' THEN 0 WHEN 'warm' THEN 1 ELSE 2 END", False),
        "standing": (
            "CASE f.standing WHEN 'fact' THEN 0 WHEN 'working' THEN 1 WHEN 'challenged' THEN 2 "
            "WHEN 'candidate' THEN 3 ELSE 4 END",
            False,
        ),
        "value": ("f.object_text COLLATE NOCASE", False),
    }

    def ids(self, flt: FactFilter, *, order: str = "updated", descending: bool | None = None) -> list[int]:
        """All ids matching ``flt`` in display order (the GUI's lazy table fetches rows by id).

        ``order`` is one of :attr:`ORDERS`; ``descending`` defaults to the natural direction of that column.
        """
        if order not in self.ORDERS:
            raise ValidationError("order", f"must be one of {', '.join(self.ORDERS)}")
        column, natural = self.ORDERS[order]
        direction = "DESC" if (natural if descending is None else descending) else "ASC"
        where, args = self._where(flt)
        rows = self._store.query(
            f"SELECT f.id FROM {FACT_FROM} WHERE {' AND '.join(where) or '1'} "
            f"ORDER BY {column} {direction}, f.id {direction}",
            tuple(args),
        )
        return [int(r[0]) for r in rows]

    def predicates(self) -> list[PredicateInfo]:
        """The catalog predicates and custom ones in use (for pickers and filters)."""
        rows = self._store.query("SELECT name, label, description, kind, cardinality FROM predicates ORDER BY name")
        known = {str(r[0]) for r in rows}
        custom = self._store.query("SELECT DISTINCT predicate FROM facts WHERE predicate LIKE 'custom:%'")
        out = [PredicateInfo(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]
        out += [
            PredicateInfo(
                str(r[0]),
                str(r[0]).removeprefix("custom:").replace("_", " "),
                "added by extraction",
                "behavioral",
                "multi",
            )
            for r in custom
            if str(r[0]) not in known
        ]
        return out

    def get_many(self, ids: Sequence[int]) -> list[Fact]:
        """Facts by id, in the order asked (missing ids are skipped)."""
        found: dict[int, Fact] = {}
        for chunk in chunked(ids):
            marks = ",".join("?" * len(chunk))
            for row in self._store.query(
                f"SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE f.id IN ({marks})", tuple(chunk)
            ):
                fact = fact_from_row(row)
                found[fact.id] = fact
        return [found[i] for i in ids if i in found]

    def get(self, fact_id: int) -> Fact:
        """One fact by id (any status)."""
        facts = self.get_many([fact_id])
        if not facts:
            raise NotFound("fact", fact_id)
        return facts[0]

    def history(self, fact_id: int) -> list[Fact]:
        """The version chain through ``fact_id``, oldest first (edits, updates, supersessions)."""
        chain_ids: list[int] = []
        current: int | None = fact_id
        seen: set[int] = set()
        while current is not None and current not in seen:  # walk back
            seen.add(current)
            chain_ids.insert(0, current)
            current = self._store.scalar("SELECT previous_id FROM facts WHERE id = ?", (current,))
        current = self._store.scalar("SELECT superseded_by FROM facts WHERE id = ?", (fact_id,))
        while current is not None and current not in seen:  # and forward
            seen.add(current)
            chain_ids.append(int(current))
            current = self._store.scalar("SELECT superseded_by FROM facts WHERE id = ?", (current,))
        facts = self.get_many(chain_ids)
        if not facts:
            raise NotFound("fact", fact_id)
        return facts

    def superseded(self, *, user_id: str | None = None, limit: int = 100) -> list[Fact]:
        """Facts replaced by newer versions, most recent first."""
        return self(limit=limit, user_id=user_id, status="superseded")

    def truth(self, *, subject: str | None = None, user_id: str | None = None) -> list[TruthEntry]:
        """Current slot winners: one per single-valued slot; every live value of multi-valued predicates."""
        flt = FactFilter(user_id=user_id, subject=subject, status=("active", "contested"))
        where, args = self._where(flt)
        rows = self._store.query(
            f"SELECT {FACT_COLUMNS} FROM {FACT_FROM} WHERE {' AND '.join(where)} ORDER BY s.name, f.predicate",
            tuple(args),
        )
        cardinality = dict(self._store.query("SELECT name, cardinality FROM predicates"))
        slots: dict[tuple[str, int, str], list[Fact]] = {}
        for row in rows:
            fact = fact_from_row(row)
            slots.setdefault((fact.user_id, fact.subject_id, fact.predicate), []).append(fact)
        entries: list[TruthEntry] = []
        for (_user, _sid, predicate), facts in slots.items():
            card = str(cardinality.get(predicate, "multi"))
            if card == "single":
                winner = max(facts, key=_truth_rank)
                entries.append(TruthEntry(winner.subject, predicate, card, winner, len(facts) - 1))
            else:
                entries.extend(TruthEntry(f.subject, predicate, card, f, 0) for f in facts)
        return entries

    def _where(self, flt: FactFilter) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        if flt.user_id:
            where.append("f.user_id = ?")
            args.append(flt.user_id)
        if flt.subject:
            where.append(
                "(s.name = ? COLLATE NOCASE OR f.subject_id IN (SELECT s2.id FROM subjects s2, "
                "json_each(s2.aliases) a WHERE a.value = ? COLLATE NOCASE))"
            )
            args += [flt.subject, flt.subject]
        if flt.predicate:
            where.append("f.predicate = ?")
            args.append(flt.predicate)
        for name, value, allowed in (
            ("tier", flt.tier, TIERS),
            ("standing", flt.standing, STANDINGS),
        ):
            if value:
                if value not in allowed:
                    raise ValidationError(name, f"must be one of {', '.join(allowed)}")
                where.append(f"f.{name} = ?")
                args.append(value)
        if flt.conversation_id:
            where.append("f.conversation_id = ?")
            args.append(flt.conversation_id)
        if flt.event_id is not None:
            where.append("f.event_id = ?")
            args.append(flt.event_id)
        if flt.q:
            if flt.q_mode not in ("any", "all"):
                raise ValidationError("q_mode", "must be 'any' or 'all'")
            where.append("f.id IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?)")
            args.append(fts_query(flt.q, all_words=flt.q_mode == "all"))
        if flt.as_of is not None:
            at = to_epoch(parse_datetime(flt.as_of))
            where.append(
                "f.recorded_at <= ? AND (f.superseded_at IS NULL OR f.superseded_at > ?) "
                "AND f.status != 'deleted' AND (f.valid_from IS NULL OR f.valid_from <= ?) "
                "AND (f.valid_to IS NULL OR f.valid_to > ?)"
            )
            args += [at, at, at, at]
        statuses = (flt.status,) if isinstance(flt.status, str) else flt.status
        if statuses:
            bad = [s for s in statuses if s not in STATUSES]
            if bad:
                raise ValidationError("status", f"must be one of {', '.join(STATUSES)}")
            where.append(f"f.status IN ({','.join('?' * len(statuses))})")
            args += list(statuses)
        elif flt.as_of is None:
            where.append("f.status IN ('active', 'contested')")
        return where, args

    # -- correcting --------------------------------------------------------------------------------------------
    def add(
        self,
        subject: str,
        predicate: str,
        object_text: str,
        *,
        user_id: str = "default",
        project_id: str | None = None,
    ) -> Fact:
        """Add a memory by hand (source ``manual``); it goes through map, match and decide like any other."""
        for name, value in (
            ("subject", subject),
            ("predicate", predicate),
            ("object", object_text),
        ):
            if not value or not value.strip():
                raise ValidationError(name, "must not be empty")
        proposal = self._manual_proposal(subject.strip(), predicate.strip(), object_text.strip())
        ctx = FactContext(user_id, project_id, None, None, None, "manual", None, None)
        applied: list[Applied] = self._store.write(lambda tx: self._decider.decide_and_apply(tx, ctx, [proposal]))
        fact_id = applied[0].fact_id or (applied[0].touched[0] if applied[0].touched else None)
        if fact_id is None:
            raise Conflict("That memory is already stored.")
        return self.get(fact_id)

    def edit(
        self,
        fact_id: int,
        *,
        object_text: str | None = None,
        predicate: str | None = None,
        subject: str | None = None,
    ) -> Fact:
        """Correct a fact: a new version (source ``manual``) supersedes the old one; history is kept."""
        old = self.get(fact_id)
        if old.status not in ("active", "contested"):
            raise Conflict(
                f"Fact {fact_id} is {old.status}; only current facts can be edited.",
                fix="Restore it first, or edit the newest version in its history.",
            )
        new_subject = (subject or old.subject).strip()
        new_predicate = (predicate or old.predicate).strip()
        new_object = (object_text if object_text is not None else old.object_text).strip()
        if not new_object:
            raise ValidationError("object_text", "must not be empty")
        proposal = self._manual_proposal(new_subject, new_predicate, new_object)

        def op(tx: Tx) -> int:
            from engine.subjects import ensure_subject

            ctx = FactContext(
                old.user_id,
                old.project_id,
                old.conversation_id,
                old.event_id,
                old.span_id,
                "manual",
                None,
                None,
            )
            subject_id = ensure_subject(tx, old.user_id, new_subject)
            new_id = self._decider._insert(
                tx,
                ctx,
                subject_id,
                proposal,
                previous_id=fact_id,
                metadata={"edited_from": fact_id},
            )
            # keep the original quote as provenance of the corrected value
            tx.execute(
                "UPDATE facts SET source_text = ?, source_start = ?, source_end = ? WHERE id = ?",
                (old.source_text, old.source_start, old.source_end, new_id),
            )
            for conflict_id in open_conflicts_of(tx, fact_id):
                resolve_conflict(tx, conflict_id, None, resolved_by="edit")
            supersede(tx, fact_id, new_id)
            return new_id

        return self.get(self._store.write(op))

    def delete(self, fact_id: int) -> Fact:
        """Soft-delete (hidden everywhere, restorable)."""

        def op(tx: Tx) -> None:
            status = self._status(tx, fact_id)
            if status == "deleted":
                return
            for conflict_id in open_conflicts_of(tx, fact_id):
                resolve_conflict(tx, conflict_id, other_side(tx, conflict_id, fact_id), resolved_by="deletion")
                status = self._status(tx, fact_id)
            tx.execute(
                "UPDATE facts SET status_before_delete = ?, status = 'deleted', tier = 'cold', "
                "updated_at = ? WHERE id = ?",
                (status, tx.now, fact_id),
            )
            tx.emit("memory.deleted", fact_id, soft=True)

        self._store.write(op)
        return self.get(fact_id)

    def restore(self, fact_id: int) -> Fact:
        """Undo a soft delete."""

        def op(tx: Tx) -> None:
            status = self._status(tx, fact_id)
            if status != "deleted":
                raise Conflict(f"Fact {fact_id} is not deleted (it is {status}).")
            previous = tx.scalar("SELECT status_before_delete FROM facts WHERE id = ?", (fact_id,)) or "active"
            tx.execute(
                "UPDATE facts SET status = ?, status_before_delete = NULL, updated_at = ? WHERE id = ?",
                ("active" if previous == "contested" else previous, tx.now, fact_id),
            )
            self._retier(tx, fact_id)
            tx.emit("memory.restored", fact_id)

        self._store.write(op)
        return self.get(fact_id)

    def retract(self, fact_id: int) -> Fact:
        """The fact was wrong: retract it and bring back the version it replaced, if any."""

        def op(tx: Tx) -> None:
            status = self._status(tx, fact_id)
            if status not in ("active", "contested"):
                raise Conflict(f"Fact {fact_id} is {status}; only current facts can be retracted.")
            retract(tx, fact_id, until=tx.now)
            previous = tx.scalar("SELECT previous_id FROM facts WHERE id = ?", (fact_id,))
            if previous is not None and self._status(tx, int(previous)) == "superseded":
                tx.execute(
                    "UPDATE facts SET status = 'active', superseded_at = NULL, superseded_by = NULL, "
                    "updated_at = ? WHERE id = ?",
                    (tx.now, previous),
                )
                self._retier(tx, int(previous))
                tx.emit("memory.restored", int(previous), reason="previous winner restored")

        self._store.write(op)
        return self.get(fact_id)

    def approve(self, fact_id: int) -> Fact:
        """The person vouches for a quarantined or candidate fact: it becomes a manual, injectable fact."""

        def op(tx: Tx) -> None:
            row = tx.execute("SELECT kind, status, metadata FROM facts WHERE id = ?", (fact_id,)).first()
            if row is None:
                raise NotFound("fact", fact_id)
            meta = json.loads(row[2] or "{}")
            meta["approved_from"] = meta.get("source_class")
            meta["source_class"] = "manual"
            conf = confidence("manual", row[0])
            standing = standing_for(conf, contested=row[1] == "contested")
            tx.execute(
                "UPDATE facts SET confidence = ?, standing = ?, metadata = ?, updated_at = ? WHERE id = ?",
                (conf, standing, json.dumps(meta, sort_keys=True), tx.now, fact_id),
            )
            self._retier(tx, fact_id)
            self._ensure_vector(tx, fact_id)
            tx.emit("memory.updated", fact_id, reason="approved")

        self._store.write(op)
        return self.get(fact_id)

    def set_tier(self, fact_id: int, tier: str, *, pinned: bool = True) -> Fact:
        """Pin a fact to ``tier`` (hot = always recalled) or unpin it (``pinned=False`` re-tiers by the rules)."""
        if tier not in TIERS:
            raise ValidationError("tier", f"must be one of {', '.join(TIERS)}")

        def op(tx: Tx) -> None:
            self._status(tx, fact_id)
            tx.execute(
                "UPDATE facts SET tier = ?, tier_pinned = ?, updated_at = ? WHERE id = ?",
                (tier, int(pinned), tx.now, fact_id),
            )
            if not pinned:
                self._retier(tx, fact_id)
            tx.emit("memory.updated", fact_id, reason="tier")

        self._store.write(op)
        return self.get(fact_id)

    def mark(self, fact_id: int, signal: str) -> Fact:
        """Record a utility signal (``useful`` / ``questionable``); it moves importance and confidence."""
        if signal not in ("useful", "questionable"):
            raise ValidationError("signal", "must be 'useful' or 'questionable'")

        def op(tx: Tx) -> None:
            row = tx.execute(
                "SELECT kind, status, metadata, importance, useful_count, questionable_count, "
                "corroboration FROM facts WHERE id = ?",
                (fact_id,),
            ).first()
            if row is None:
                raise NotFound("fact", fact_id)
            kind, status, meta_json, importance, useful, questionable, corroboration = row
            useful, questionable = int(useful), int(questionable)
            if signal == "useful":
                useful += 1
                importance = min(1.0, float(importance) + params.SIGNAL_STEP)
            else:
                questionable += 1
                importance = max(0.0, float(importance) - params.SIGNAL_STEP)
            meta = json.loads(meta_json or "{}")
            conf = confidence(
                meta.get("source_class", "user"),
                kind,
                corroboration=int(corroboration),
                conflicted=status == "contested",
                signals=useful - questionable,
            )
            tx.execute(
                "UPDATE facts SET useful_count = ?, questionable_count = ?, importance = ?, confidence = ?, "
                "standing = ?, updated_at = ? WHERE id = ?",
                (
                    useful,
                    questionable,
                    importance,
                    conf,
                    standing_for(conf, contested=status == "contested"),
                    tx.now,
                    fact_id,
                ),
            )
            self._retier(tx, fact_id)
            tx.emit("memory.updated", fact_id, reason=signal)

        self._store.write(op)
        return self.get(fact_id)

    # -- helpers -----------------------------------------------------------------------------------------------
    def _manual_proposal(self, subject: str, predicate: str, object_text: str) -> Proposal:
        from engine.facts.model import kind_of

        name, method = self._pipeline.map_predicate(predicate)
        catalog = self._pipeline.catalog
        spec = catalog.get(name) if name in catalog else None
        label = spec.label if spec else name.removeprefix("custom:").replace("_", " ")
        statement = render_statement(subject, label, object_text)
        kind = kind_of(spec.kind if spec else "behavioral")
        conf = confidence("manual", kind)
        prop = Proposition(
            subject,
            name,
            object_text,
            Evidence(statement, 0, len(statement)),
            extractor="manual",
            rule="manual",
        )
        try:
            vector: npt.NDArray[np.float32] | None = self._pipeline.embedder.embed([statement])[0]
        except ModelUnavailable:
            vector = None  # stored all the same; its vector waits in the backlog for the embedder
        return Proposal(
            proposition=prop,
            subject=subject if subject.casefold() != "me" else OWNER,
            predicate=name,
            map_method=method,
            object_text=object_text,
            object_norm=normalise_object(object_text),
            statement=statement,
            kind=kind,
            decay=spec.decay if spec else "moderate",
            cardinality=spec.cardinality if spec else "multi",
            tier_hint=spec.tier_hint if spec else "warm",
            importance=spec.importance if spec else params.CUSTOM_IMPORTANCE,
            utility=1.0,
            source_class="manual",
            source_role="manual",
            confidence=conf,
            standing=standing_for(conf),
            valid_from=None,
            valid_to=None,
            when=None,
            vector=vector,
        )

    @staticmethod
    def _status(tx: Tx, fact_id: int) -> str:
        status = tx.scalar("SELECT status FROM facts WHERE id = ?", (fact_id,))
        if status is None:
            raise NotFound("fact", fact_id)
        return str(status)

    @staticmethod
    def _retier(tx: Tx, fact_id: int) -> None:
        row = tx.execute(
            "SELECT importance, standing, status, metadata, tier_pinned FROM facts WHERE id = ?",
            (fact_id,),
        ).first()
        if row is None or row[4]:
            return
        hint = json.loads(row[3] or "{}").get("tier_hint", "warm")
        tx.execute(
            "UPDATE facts SET tier = ? WHERE id = ?",
            (tier_for(float(row[0]), row[1], hint, row[2]), fact_id),
        )

    def _ensure_vector(self, tx: Tx, fact_id: int) -> None:
        row = tx.execute("SELECT statement, user_id, object_norm FROM facts WHERE id = ?", (fact_id,)).first()
        has = tx.scalar("SELECT 1 FROM embeddings WHERE object_id = ?", (fact_id,))
        if row is not None and not has:
            try:
                vector = self._pipeline.embedder.embed([str(row[0])])[0]
            except ModelUnavailable:
                queue_vectors(tx, self._vectors.space_id, [(fact_id, "fact", str(row[1]), str(row[2]))])
            else:
                self._vectors.add(tx, [VectorItem(fact_id, "fact", str(row[1]), vector, str(row[2]))])


def _truth_rank(f: Fact) -> tuple[int, int, float, float]:
    authority = 1 if f.source_role in ("user", "manual") else 0
    standing = {"fact": 4, "working": 3, "challenged": 2, "candidate": 1}.get(f.standing, 0)
    return authority, standing, f.recorded_at.timestamp(), f.confidence


def fts_query(text: str, *, all_words: bool = False) -> str:
    """A safe FTS5 query: each word quoted, OR-ed (or AND-ed with ``all_words``)."""
    words = [w for w in "".join(c if c.isalnum() else " " for c in text).split() if w]
    if not words:
        raise ValidationError("q", "needs at least one word")
    return (" AND " if all_words else " OR ").join(f'"{w}"' for w in words[:32])


def _encode_cursor(at: float, fact_id: int) -> str:
    return base64.urlsafe_b64encode(f"{at!r}:{fact_id}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[float, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, fact_id = raw.rsplit(":", 1)
        return float(at), int(fact_id)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError("cursor", "is not a cursor this endpoint returned") from exc
