"""Stages 6 (Match), 7 (Decide) and 9 (Tier), and conflict handling — inside the writer's transaction.

Stage 6, :func:`match`, reads the live facts of the proposal's slot ``(user, subject, predicate)`` (plus the
opposite preference for the same value, and what this very event already stored) and ranks them by similarity ×
recency × importance.  Stage 7, :func:`plan`, decides with the best-ranked fact of the same value first:

==========  ===============================================================================================
CREATE      nothing like it is known: a new fact
MERGE       the same fact again (from another event) or with more detail: one row remains, corroborated
LINK        a known relationship mentioned again: subjects and event are tagged, no new row
NOOP        exactly this, from this very event, is already stored (re-processing): nothing changes
UPDATE      same single-valued slot, a change cue or a later valid time: the old version is superseded
CONFLICT    same single-valued slot, different value, no change cue: both contested, a conflict opens
RESOLVE     a user statement repeating one side of an open conflict: that side wins, the other is retired
RETRACT     a negation ("I no longer …") of a known fact: the fact is retracted, valid until now
==========  ===============================================================================================

Role rules (DESIGN §3): user statements are the source of truth; assistant and tool statements yield facts but
never supersede or win against a user fact (they are stored as candidates beside it); system messages never get
here.  :meth:`Decider.apply` carries a plan out; both are used by enrichment, and ``plan`` alone by the dry run.
Stage 9 (Tier) is :func:`~engine.facts.model.tier_with_reason`, applied to every fact a decision created or
touched; each outcome records its :class:`Match` and :class:`TierChoice`, and :func:`stage_traces` turns them into
the trace entries of ``Vault.extract``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.config import FactSettings
from engine.facts import compat, params
from engine.facts.model import (
    confidence,
    contains_detail,
    kind_of,
    normalise_object,
    standing_for,
    tier_for,
    tier_with_reason,
)
from engine.facts.pipeline import STAGES, Proposal
from engine.facts.statements import Restater
from engine.facts.types import Decision, StageTrace, Tier
from engine.store import Tx
from engine.subjects import ensure_subject, find_subject_id
from engine.vectors import VectorIndex, VectorItem

AUTHORITATIVE = frozenset({"user", "manual"})
#: The value of a negated proposition that ends every earlier value of its slot ("I quit Zalando" → the role too).
ANY_VALUE = "*"
#: Separates the new and the old value of a "switched from A to B" proposal ("B ⟵ A").
SWITCH_MARK = "⟵"
#: How many ranked candidates the Match trace lists per proposal (a multi-valued slot can hold hundreds).
TRACE_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class SlotFact:
    """What matching needs to know about a stored fact of the slot."""

    id: int
    object_norm: str
    object_text: str
    status: str
    standing: str
    source_role: str
    confidence: float
    valid_from: float | None
    event_id: int | None
    corroboration: int
    kind: str
    importance: float
    corroborated_by: tuple[int, ...] = ()
    stated_at: float | None = None  # when its evidence was said (the event's time), else when it was recorded


@dataclass(frozen=True, slots=True)
class Candidate:
    """A stored fact that Match found for a proposal, with the parts of its rank."""

    fact_id: int
    object_text: str
    status: str
    similarity: float  # 1 for the same value, 0.8 for more or less detail, else shared words (Jaccard)
    recency: float  # 0.5 ** (age / half-life of the predicate's decay); 1 for stable facts
    importance: float
    score: float  # similarity × recency × importance


@dataclass(frozen=True, slots=True)
class Match:
    """Stage 6 for one proposal: its subject, the stored facts Decide weighs, and their ranking (best first)."""

    proposal: Proposal
    subject_id: int | None
    slot: tuple[SlotFact, ...]
    opposed: tuple[SlotFact, ...] = ()
    applied: tuple[int, ...] = ()
    ranked: tuple[Candidate, ...] = ()


@dataclass(frozen=True, slots=True)
class TierChoice:
    """Stage 9 for one fact a decision created or touched: its tier and the rule that chose it."""

    fact_id: int | None
    tier: Tier
    reason: str


@dataclass(frozen=True, slots=True)
class Action:
    """One decision about one proposal, with the stored facts it concerns."""

    decision: Decision
    proposal: Proposal
    targets: tuple[int, ...] = ()
    reason: str = ""
    conflict_with_user: bool = False
    replaces: tuple[int, ...] = ()  # older non-authoritative values a kept-aside candidate takes over from
    combine: bool = False  # MERGE: a second value of a single slot in the same message, kept beside the first
    keep_object: str | None = None  # UPDATE: the new version keeps this (fuller) wording of the corrected fact


@dataclass(slots=True)
class Applied:
    """What :func:`apply` did: the action and the ids it created or touched."""

    action: Action
    fact_id: int | None = None
    conflict_id: int | None = None
    touched: list[int] = field(default_factory=list)
    match: Match | None = None
    tiers: list[TierChoice] = field(default_factory=list)
    embedded: bool = False  # a vector was stored for the new fact (quarantined facts get none)
    match_ms: float = 0.0
    decide_ms: float = 0.0
    tier_ms: float = 0.0


SLOT_COLUMNS = (
    "id, object_norm, object_text, status, standing, source_role, confidence, valid_from, event_id, "
    "corroboration, kind, importance, metadata, "
    "COALESCE((SELECT e.occurred_at FROM events e WHERE e.id = event_id), recorded_at)"
)
SLOT_SQL = (
    f"SELECT {SLOT_COLUMNS} FROM facts WHERE user_id = ? AND subject_id = ? AND predicate = ? "
    "AND status IN ('active', 'contested') ORDER BY recorded_at, id"
)
#: A multi-valued slot ("likes") can hold thousands of values; matching reads the same value plus the most recent
#: ones (where a "more detail" restatement almost always lives), so enrichment stays constant-time per fact.
MULTI_SLOT_SQL = (
    f"SELECT {SLOT_COLUMNS} FROM (SELECT * FROM facts WHERE user_id = ? AND subject_id = ? AND predicate = ? "
    "AND status IN ('active', 'contested') AND object_norm = ? "
    "UNION SELECT * FROM (SELECT * FROM facts WHERE user_id = ? AND subject_id = ? AND predicate = ? "
    "AND status IN ('active', 'contested') ORDER BY recorded_at DESC, id DESC LIMIT 200)) ORDER BY recorded_at, id"
)


def slot_facts(
    q: Any, user_id: str, subject_id: int | None, predicate: str, *, cardinality: str = "single", object_norm: str = ""
) -> list[SlotFact]:
    """The live facts of a slot that matching needs (``q``: a Tx or a read snapshot)."""
    if subject_id is None:
        return []
    if cardinality == "single":
        rows = q.execute(SLOT_SQL, (user_id, subject_id, predicate)).fetchall()
    else:
        rows = q.execute(
            MULTI_SLOT_SQL, (user_id, subject_id, predicate, object_norm, user_id, subject_id, predicate)
        ).fetchall()
    return [_slot_fact(r) for r in rows]


def applied_from_event(q: Any, user_id: str, subject_id: int | None, p: Proposal, event_id: int | None) -> list[int]:
    """Facts of ``p``'s slot and value (any status) that this event already created, corroborated or retracted.

    Enrichment of an event is then idempotent even after the slot moved on: re-running it never re-asserts a
    value it stated before, nor retracts a value a later event stated again.
    """
    if subject_id is None or event_id is None:
        return []
    if p.proposition.negated:
        involved = "json_extract(metadata, '$.retracted_by') = ?"
        args: tuple[Any, ...] = (event_id,)
    else:
        involved = (
            "(event_id = ? OR EXISTS (SELECT 1 FROM json_each(facts.metadata, '$.corroborated_by') WHERE value = ?))"
        )
        args = (event_id, event_id)
    sql = f"SELECT id, object_norm FROM facts WHERE user_id = ? AND subject_id = ? AND predicate = ? AND {involved}"
    base: tuple[Any, ...] = (user_id, subject_id, p.predicate, *args)
    if p.cardinality != "single":
        sql += " AND object_norm = ?"
        base += (p.object_norm,)
    return [int(r[0]) for r in q.execute(sql, base).fetchall() if _same_value(str(r[1]), p.object_norm)]


def opposed_facts(
    q: Any, user_id: str, subject_id: int | None, predicate: str, object_norm: str, object_text: str = ""
) -> list[SlotFact]:
    """Live facts the proposal contradicts outside its own slot: the opposite preference for the same value
    ("likes" X against "dislikes" X), and facts of related slots it cannot coexist with (a vegetarian diet against
    a steak, "I don't smoke" against a cigarette: :mod:`engine.facts.compat`)."""
    if subject_id is None:
        return []
    found: list[SlotFact] = []
    opposites = params.OPPOSITE_PREDICATES.get(predicate, ())
    if opposites and object_norm:
        marks = ",".join("?" * len(opposites))
        rows = q.execute(
            f"SELECT {SLOT_COLUMNS} FROM facts WHERE user_id = ? AND subject_id = ? AND predicate IN ({marks}) "
            "AND status IN ('active', 'contested') ORDER BY recorded_at DESC, id DESC LIMIT 200",
            (user_id, subject_id, *opposites),
        ).fetchall()
        # "dislikes oat milk" against "prefers oat milk in my coffee": the same thing with more or less said
        found += [f for f in map(_slot_fact, reversed(rows)) if _same_value(f.object_norm, object_norm)]
    related = compat.RELATED.get(predicate, ())
    if related and object_text:
        marks = ",".join("?" * len(related))
        rows = q.execute(
            f"SELECT {SLOT_COLUMNS}, predicate FROM facts WHERE user_id = ? AND subject_id = ? AND predicate IN "
            f"({marks}) AND status IN ('active', 'contested') ORDER BY recorded_at, id LIMIT 200",
            (user_id, subject_id, *related),
        ).fetchall()
        found += [_slot_fact(r) for r in rows if compat.clash(predicate, object_text, str(r[-1]), str(r[2]))]
    return found


def _slot_fact(r: Sequence[Any]) -> SlotFact:
    evidence = json.loads(r[12] or "{}").get("corroborated_by", [])
    return SlotFact(
        int(r[0]),
        str(r[1]),
        str(r[2]),
        str(r[3]),
        str(r[4]),
        str(r[5]),
        float(r[6]),
        r[7],
        r[8],
        int(r[9]),
        str(r[10]),
        float(r[11]),
        tuple(int(e) for e in evidence),
        float(r[13]) if r[13] is not None else None,
    )


def match(q: Any, user_id: str, subject_id: int | None, p: Proposal, *, event_id: int | None, at: float) -> Match:
    """Stage 6: the live facts of ``p``'s slot and of the opposite preference, ranked; ``q`` a Tx or a snapshot.

    ``at`` is when the proposal was said: recency is measured back from it, not from the clock.
    """
    slot = tuple(slot_facts(q, user_id, subject_id, p.predicate, cardinality=p.cardinality, object_norm=p.object_norm))
    opposed = tuple(opposed_facts(q, user_id, subject_id, p.predicate, p.object_norm, p.object_text))
    applied = tuple(applied_from_event(q, user_id, subject_id, p, event_id))
    seen = {f.id for f in slot}
    ranked = rank(p, [*slot, *(f for f in opposed if f.id not in seen)], at)
    return Match(p, subject_id, slot, opposed, applied, ranked)


def rank(p: Proposal, facts: Sequence[SlotFact], at: float) -> tuple[Candidate, ...]:
    """``facts`` as candidates for ``p``, best first by similarity × recency × importance (ties: older first)."""
    words = set(p.object_norm.split())
    half_life = params.HALF_LIFE_DAYS.get(p.decay)
    found: list[Candidate] = []
    for f in facts:
        if _same_value(f.object_norm, p.object_norm):
            similarity = 1.0 if f.object_norm == p.object_norm else 0.8
        else:
            theirs = set(f.object_norm.split())
            similarity = len(words & theirs) / len(words | theirs) if words | theirs else 0.0
        age_days = max(0.0, at - f.stated_at) / 86400 if f.stated_at is not None else 0.0
        recency = 0.5 ** (age_days / half_life) if half_life else 1.0
        score = similarity * recency * f.importance
        found.append(
            Candidate(f.id, f.object_text, f.status, similarity, round(recency, 4), f.importance, round(score, 4))
        )
    order = {f.id: i for i, f in enumerate(facts)}
    return tuple(sorted(found, key=lambda c: (-c.score, order[c.fact_id])))


def plan_match(m: Match, *, event_id: int | None, valid_time: float | None, stated_at: float | None = None) -> Action:
    """Stage 7 for a :class:`Match` (see :func:`plan`)."""
    return plan(
        m.slot,
        m.proposal,
        event_id=event_id,
        valid_time=valid_time,
        opposed=m.opposed,
        applied=m.applied,
        stated_at=stated_at,
        ranked=m.ranked,
    )


def plan(
    slot: Sequence[SlotFact],
    p: Proposal,
    *,
    event_id: int | None,
    valid_time: float | None,
    opposed: Sequence[SlotFact] = (),
    applied: Sequence[int] = (),
    stated_at: float | None = None,
    ranked: Sequence[Candidate] = (),
) -> Action:
    """Decide what to do with ``p`` given the live facts of its slot (pure: no writes).

    ``opposed`` are live facts of the opposite predicate with the same value ("likes jazz" for a proposal
    "dislikes jazz"): they contradict the proposal the way another value of a single-valued slot does.
    ``applied`` are facts this very event already produced for the proposal (see :func:`applied_from_event`).
    ``stated_at`` is when the proposal was said (its event's time).  ``ranked`` (Match's ranking) decides which
    fact of the same value a repetition merges into or links to: the best-ranked one, else the oldest.
    """
    if applied:
        return Action("NOOP", p, tuple(applied), "already applied from this event")
    corrected = _corrected_event(slot, p)
    if corrected is not None:
        return Action(
            "UPDATE",
            p,
            (corrected.id,),
            "a correction of the date of a known event",
            keep_object=corrected.object_text
            if len(corrected.object_text) > len(p.object_text) or p.object_text == ANY_VALUE
            else None,
        )
    if p.object_text == ANY_VALUE and not p.proposition.negated:
        return Action("NOOP", p, (), "a correction with nothing known to correct")
    position = {c.fact_id: i for i, c in enumerate(ranked)}
    same = sorted(
        (f for f in slot if _same_value(f.object_norm, p.object_norm)), key=lambda f: position.get(f.id, len(position))
    )
    if p.proposition.negated and p.object_text == ANY_VALUE:
        # "I quit Zalando" ends the role held there too: every value of the slot said before this message
        ended = [
            f
            for f in slot
            if f.event_id != event_id and (stated_at is None or f.stated_at is None or f.stated_at < stated_at)
        ]
        if p.source_role not in AUTHORITATIVE:
            ended = [f for f in ended if f.source_role not in AUTHORITATIVE]
        if ended:
            return Action("RETRACT", p, tuple(f.id for f in ended), "ended with what it belonged to")
        return Action("NOOP", p, (), "nothing of the slot to end")
    if p.proposition.negated:
        # A negation ends what was said before it, never a value stated later (an older event enriched again or
        # imported late); an assistant or tool cannot end what the user said.
        ended = [f for f in same if stated_at is None or f.stated_at is None or f.stated_at <= stated_at]
        if p.source_role not in AUTHORITATIVE:
            ended = [f for f in ended if f.source_role not in AUTHORITATIVE]
        if ended:
            return Action(
                "RETRACT",
                p,
                tuple(f.id for f in ended),
                "a later statement says this no longer holds",
            )
        if same:
            return Action(
                "NOOP",
                p,
                (),
                f"negation of something a {p.source_role} statement cannot end"
                if p.source_role not in AUTHORITATIVE
                else "negation of something stated later",
            )
        return Action("NOOP", p, (), "negation of something not known")
    if same:
        match = same[0]
        if event_id is not None and any(f.event_id == event_id or event_id in f.corroborated_by for f in same):
            return Action("NOOP", p, (match.id,), "already stored from this event")
        if match.status == "contested" and p.source_role in AUTHORITATIVE:
            return Action("RESOLVE", p, (match.id,), "the user repeated one side of an open conflict")
        if p.kind == "relational":
            return Action("LINK", p, (match.id,), "known relationship mentioned again")
        detail = contains_detail(p.object_norm, match.object_norm)
        return Action("MERGE", p, (match.id,), "same fact with more detail" if detail else "same fact again")
    if p.cardinality == "single" and event_id is not None and not p.proposition.change_cue:
        together = [f for f in slot if f.event_id == event_id and f.source_role == p.source_role]
        if together and not any(f.status == "contested" for f in together):
            return Action("MERGE", p, (together[0].id,), "another value of the slot in the same message", combine=True)
    if p.cardinality == "single":
        others = [f for f in slot if not _same_value(f.object_norm, p.object_norm)]
    else:
        key = params.value_key(p.predicate, p.object_norm)
        others = [
            f
            for f in slot
            if key is not None
            and params.value_key(p.predicate, f.object_norm) == key
            and not _same_value(f.object_norm, p.object_norm)
        ]
    others += [f for f in opposed if f.id not in {o.id for o in others}]
    if not others:
        return Action("CREATE", p, (), "new")
    user_backed = [f for f in others if f.source_role in AUTHORITATIVE]
    if p.source_role not in AUTHORITATIVE:
        if user_backed:
            return Action(
                "CREATE",
                p,
                tuple(f.id for f in user_backed),
                f"{p.source_role} statement cannot overrule the user; kept as a candidate",
                conflict_with_user=True,
                replaces=tuple(f.id for f in others if f.source_role not in AUTHORITATIVE),
            )
        return Action("UPDATE", p, tuple(f.id for f in others), f"newer {p.source_role} statement")
    later = valid_time is not None and any(
        f.valid_from is None or valid_time - f.valid_from > params.LATER_VALID_TIME_S for f in others
    )
    if p.proposition.change_cue or later:
        why = "change cue" if p.proposition.change_cue else "later valid time"
        return Action("UPDATE", p, tuple(f.id for f in others), why)
    if not user_backed:
        return Action("UPDATE", p, tuple(f.id for f in others), "a user statement replaces an assistant's")
    return Action("CONFLICT", p, tuple(f.id for f in user_backed), "different value without a change cue")


#: Predicates of dated events whose date a later statement may correct ("the appointment is Friday, not Thursday").
_EVENTS = frozenset({"has_event", "plans_to", "plans_to_visit"})


def _corrected_event(slot: Sequence[SlotFact], p: Proposal) -> SlotFact | None:
    """The known event a correction re-dates: same head noun, a different date, said before."""
    if p.predicate not in _EVENTS or not p.proposition.change_cue or p.when is None or p.proposition.negated:
        return None
    if p.object_text == ANY_VALUE:  # "it's the 14th, not the 4th": the latest dated event
        dated = [f for f in slot if f.valid_from is not None and abs(f.valid_from - (p.valid_from or 0)) > 3600]
        return max(dated, key=lambda f: f.stated_at or 0) if dated else None
    head = p.object_norm.split()[-1] if p.object_norm.split() else ""
    if not head:
        return None
    for f in reversed(slot):
        if (
            head in f.object_norm.split()
            and f.valid_from is not None
            and abs(f.valid_from - (p.valid_from or 0)) > 3600
        ):
            return f
    return None


def _same_value(stored: str, new: str) -> bool:
    return stored == new or contains_detail(new, stored) or contains_detail(stored, new)


@dataclass(frozen=True, slots=True)
class FactContext:
    """Provenance shared by the proposals of one event or span."""

    user_id: str
    project_id: str | None
    conversation_id: str | None
    event_id: int | None
    span_id: int | None
    extractor: str
    prompt_hash: str | None
    valid_time: float | None
    stated_at: float | None = None  # when the event was said (its occurred_at)


class Decider:
    """Plans and applies proposals inside a write transaction."""

    def __init__(self, settings: FactSettings, vectors: VectorIndex, restater: Restater | None = None) -> None:
        self.settings = settings
        self.vectors = vectors
        self.restater = restater

    def _switched(self, tx: Tx, user_id: str, subject_id: int, p: Proposal) -> tuple[Proposal, tuple[int, ...]]:
        """A "switched from A to B" proposal filed in A's slot: B replaces the live fact that says A.

        Without a fact that says A it stays a ``switched_to`` fact worded "B (from A)".
        """
        if p.predicate != "switched_to" or SWITCH_MARK not in p.object_text:
            return p, ()
        new, _, old = (part.strip() for part in p.object_text.partition(SWITCH_MARK))
        rows = tx.execute(
            "SELECT id, predicate FROM facts WHERE user_id = ? AND subject_id = ? AND object_norm = ? "
            "AND status IN ('active', 'contested') ORDER BY recorded_at DESC LIMIT 5",
            (user_id, subject_id, normalise_object(old)),
        ).fetchall()
        if not rows or self.restater is None:
            value = f"{new} (from {old})"
            return replace(p, object_text=value, object_norm=normalise_object(value)), ()
        predicate = str(rows[0][1])
        spec = self.restater.spec(predicate)
        statement = self.restater.statement(p.subject, predicate, new)
        moved = replace(
            p,
            predicate=predicate,
            object_text=new,
            object_norm=normalise_object(new),
            statement=statement,
            cardinality=spec.cardinality if spec else p.cardinality,
            kind=kind_of(spec.kind) if spec else p.kind,
            decay=spec.decay if spec else p.decay,
            tier_hint=spec.tier_hint if spec else p.tier_hint,
            importance=spec.importance if spec else p.importance,
        )
        return moved, tuple(int(r[0]) for r in rows if str(r[1]) == predicate)

    def _restate(self, tx: Tx, fact_ids: Sequence[int]) -> None:
        if self.restater is not None:
            self.restater.restate(tx, fact_ids)

    def decide_and_apply(self, tx: Tx, ctx: FactContext, proposals: Sequence[Proposal]) -> list[Applied]:
        """Match, decide, store and tier each proposal in order (later proposals see earlier ones)."""
        results: list[Applied] = []
        at = ctx.stated_at if ctx.stated_at is not None else tx.now
        for p in proposals:
            t0 = time.perf_counter()
            kind = "person" if p.source_class != "manual" and _looks_like_name(p.subject) else "entity"
            subject_id = ensure_subject(tx, ctx.user_id, p.subject, kind)
            p, replaced = self._switched(tx, ctx.user_id, subject_id, p)
            found = match(tx, ctx.user_id, subject_id, p, event_id=ctx.event_id, at=at)
            t1 = time.perf_counter()
            action = plan_match(found, event_id=ctx.event_id, valid_time=ctx.valid_time, stated_at=ctx.stated_at)
            if replaced and action.decision == "CREATE":
                action = Action("UPDATE", p, replaced, "switched from what it replaces")
            done = self.apply(tx, ctx, subject_id, action)
            t2 = time.perf_counter()
            done.tiers = _stored_tiers(tx, [i for i in (done.fact_id, *done.touched) if i is not None])
            done.embedded = done.fact_id is not None and bool(
                tx.scalar("SELECT COUNT(*) FROM embeddings WHERE object_id = ?", (done.fact_id,))
            )
            done.match, done.match_ms, done.decide_ms = found, _ms(t0, t1), _ms(t1, t2)
            done.tier_ms = _ms(t2, time.perf_counter())
            results.append(done)
        return results

    def dry_run(self, q: Any, user_id: str, proposals: Sequence[Proposal], event_id: int | None) -> list[Action]:
        """What :meth:`decide_and_apply` would do, against a read snapshot, without writing."""
        return [planned.action for planned in self.plan_all(q, user_id, proposals, event_id)]

    def plan_all(
        self, q: Any, user_id: str, proposals: Sequence[Proposal], event_id: int | None, *, at: float | None = None
    ) -> list[Applied]:
        """Stages 6, 7 and 9 planned against a read snapshot: each outcome with no ids, nothing written.

        Proposals are planned independently (an earlier one is not stored for a later one to see).
        """
        when = time.time() if at is None else at
        outcomes: list[Applied] = []
        for p in proposals:
            t0 = time.perf_counter()
            subject_id = find_subject_id(q, user_id, p.subject)
            found = match(q, user_id, subject_id, p, event_id=event_id, at=when)
            t1 = time.perf_counter()
            action = plan_match(found, event_id=event_id, valid_time=None)
            t2 = time.perf_counter()
            tiers = planned_tiers(action)
            creates = action.decision in _CREATING
            outcomes.append(
                Applied(
                    action,
                    match=found,
                    tiers=tiers,
                    embedded=creates and p.vector is not None and _planned_standing(action) != "quarantine",
                    match_ms=_ms(t0, t1),
                    decide_ms=_ms(t1, t2),
                    tier_ms=_ms(t2, time.perf_counter()),
                )
            )
        return outcomes

    # -- applying ----------------------------------------------------------------------------------------------
    def apply(self, tx: Tx, ctx: FactContext, subject_id: int, action: Action) -> Applied:
        """Carry out one decision."""
        done = Applied(action)
        p = action.proposal
        match action.decision:
            case "NOOP":
                pass
            case "CREATE":
                standing = "candidate" if action.conflict_with_user and p.standing in ("working", "fact") else None
                done.fact_id = self._insert(
                    tx,
                    ctx,
                    subject_id,
                    p,
                    standing=standing,
                    metadata={"contradicts": list(action.targets)} if action.targets else {},
                )
                for old in action.replaces:  # a newer assistant value replaces the older one beside the user's
                    supersede(tx, old, done.fact_id)
                done.touched = list(action.replaces)
            case "MERGE" | "LINK":
                target = action.targets[0]
                if action.combine:
                    self._combine(tx, target, p)
                self._corroborate(tx, target, ctx, p, more_detail=action.decision == "MERGE" and not action.combine)
                # the event speaks of the fact's subject (and, for a relationship, of the person named) as a new
                # fact's event does: tagging both lets the turn be found from either side
                self._tag(tx, ctx, target, p, subject_id=subject_id)
                done.touched.append(target)
            case "UPDATE":
                if action.keep_object is not None:
                    p = replace(p, object_text=action.keep_object, object_norm=normalise_object(action.keep_object))
                new_id = self._insert(tx, ctx, subject_id, p, previous_id=action.targets[-1])
                if action.keep_object is not None:
                    self._restate(tx, [new_id])
                for old in action.targets:
                    supersede(tx, old, new_id, close_conflicts=False)
                for old in action.targets:  # conflicts among the replaced values are moot now
                    close_moot_conflicts(tx, old)
                done.fact_id, done.touched = new_id, list(action.targets)
            case "CONFLICT":
                new_id = self._insert(tx, ctx, subject_id, p, status="contested")
                done.fact_id = new_id
                for old in action.targets:
                    done.conflict_id = open_conflict(
                        tx, ctx.user_id, subject_id, p.predicate, old, new_id, action.reason
                    )
                if self.settings.conflict_auto_resolve and done.conflict_id is not None:
                    winner = _higher_confidence(tx, action.targets[-1], new_id)
                    resolve_conflict(tx, done.conflict_id, winner, resolved_by="auto")
            case "RESOLVE":
                winner = action.targets[0]
                for conflict_id in open_conflicts_of(tx, winner):
                    resolve_conflict(tx, conflict_id, winner, resolved_by="clarification")
                self._corroborate(tx, winner, ctx, p, more_detail=False)
                done.touched.append(winner)
            case "RETRACT":
                ended = [*action.targets, *_ending_with(tx, action.targets)]
                for target in ended:
                    retract(tx, target, until=ctx.valid_time or tx.now, by_event=ctx.event_id)
                done.touched = ended
        return done

    def _insert(
        self,
        tx: Tx,
        ctx: FactContext,
        subject_id: int,
        p: Proposal,
        *,
        status: str = "active",
        standing: str | None = None,
        previous_id: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> int:
        fact_id = tx.new_id("fact")
        contested = status == "contested"
        conf = confidence(p.source_class, p.kind, conflicted=contested) if contested else p.confidence
        if standing == "candidate":  # kept beside a user fact: its confidence stays in the candidate band
            conf = min(conf, params.CANDIDATE_MAX_CONFIDENCE)
        band = standing or standing_for(conf, contested=contested)
        tier = tier_for(p.importance, band, p.tier_hint, status)
        meta: dict[str, Any] = dict(metadata or {})
        meta["map"] = p.map_method
        meta["source_class"] = p.source_class
        meta["tier_hint"] = p.tier_hint
        if p.when is not None:
            meta["when"] = {
                "start": p.when.range.start.isoformat(),
                "end": p.when.range.end.isoformat(),
                "grain": p.when.range.grain,
                "expression": p.when.text,
            }
        if p.proposition.rule:
            meta["rule"] = p.proposition.rule
        ev = p.proposition.evidence
        tx.execute(
            "INSERT INTO facts(id, user_id, project_id, subject_id, predicate, object_text, object_norm, statement, "
            "source_text, source_start, source_end, event_id, span_id, conversation_id, source_role, confidence, "
            "importance, tier, standing, kind, decay, valid_from, valid_to, recorded_at, updated_at, previous_id, "
            "status, extractor, prompt_hash, metadata) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                fact_id,
                ctx.user_id,
                ctx.project_id,
                subject_id,
                p.predicate,
                p.object_text,
                p.object_norm,
                p.statement,
                ev.text,
                ev.start,
                ev.end,
                ctx.event_id,
                ctx.span_id,
                ctx.conversation_id,
                p.source_role,
                conf,
                p.importance,
                tier,
                band,
                p.kind,
                p.decay,
                p.valid_from,
                p.valid_to,
                tx.now,
                tx.now,
                previous_id,
                status,
                # the extractor that found this fact, not whichever took part in the run: a model's run also keeps
                # the rules' facts, and those were found by the rules
                p.proposition.extractor,
                ctx.prompt_hash if p.proposition.extractor not in ("rules", "manual") else None,
                json.dumps(meta, sort_keys=True),
            ),
        )
        self._tag(tx, ctx, fact_id, p, subject_id=subject_id)
        if p.vector is not None and band != "quarantine":
            self.vectors.add(tx, [VectorItem(fact_id, "fact", ctx.user_id, p.vector, p.object_norm)])
        tx.emit(
            "memory.created",
            fact_id,
            subject=p.subject,
            predicate=p.predicate,
            user_id=ctx.user_id,
            conversation_id=ctx.conversation_id,
            standing=band,
        )
        return fact_id

    def _tag(self, tx: Tx, ctx: FactContext, fact_id: int, p: Proposal, *, subject_id: int | None = None) -> None:
        """Tag the fact with its subject (and, for relationships, the person named), and the event with both."""
        ids = [subject_id] if subject_id is not None else []
        if p.kind == "relational" and _looks_like_name(p.object_text):
            ids.append(ensure_subject(tx, ctx.user_id, p.object_text, "person"))
        for sid in ids:
            tx.execute(
                "INSERT OR IGNORE INTO fact_subjects(fact_id, subject_id) VALUES (?, ?)",
                (fact_id, sid),
            )
            if ctx.event_id is not None:
                tx.execute(
                    "INSERT OR IGNORE INTO event_subjects(event_id, subject_id) VALUES (?, ?)",
                    (ctx.event_id, sid),
                )

    def _combine(self, tx: Tx, fact_id: int, p: Proposal) -> None:
        """Keep a second value of a single slot from the same message beside the first ("moved to Lisbon … a flat
        in Arroios" → "Lisbon, Arroios"): one message rarely contradicts itself; it names a place and a part of it."""
        row = tx.execute("SELECT object_text FROM facts WHERE id = ?", (fact_id,)).first()
        if row is None or p.object_text.casefold() in str(row[0]).casefold():
            return
        value = f"{row[0]}, {p.object_text}"
        tx.execute(
            "UPDATE facts SET object_text = ?, object_norm = ?, updated_at = ? WHERE id = ?",
            (value, normalise_object(value), tx.now, fact_id),
        )
        self._restate(tx, [fact_id])

    def _corroborate(self, tx: Tx, fact_id: int, ctx: FactContext, p: Proposal, *, more_detail: bool) -> None:
        row = tx.execute(
            "SELECT object_text, object_norm, corroboration, source_role, kind, metadata, status, "
            "useful_count, questionable_count FROM facts WHERE id = ?",
            (fact_id,),
        ).first()
        if row is None:
            return
        object_text, object_norm, corroboration, source_role, kind, meta_json, status = row[:7]
        meta = json.loads(meta_json or "{}")
        evidence = list(meta.get("corroborated_by", []))
        if ctx.event_id is not None and ctx.event_id not in evidence:
            evidence.append(ctx.event_id)
        meta["corroborated_by"] = evidence[-20:]
        count = int(corroboration) + 1
        signals = int(row[7]) - int(row[8])
        source_class = json.loads(meta_json or "{}").get("source_class", "user" if source_role == "user" else "group")
        conf = confidence(
            source_class,
            kind,
            corroboration=count,
            conflicted=status == "contested",
            signals=signals,
        )
        new_text, new_norm = object_text, object_norm
        if more_detail and contains_detail(p.object_norm, object_norm):
            new_text, new_norm = p.object_text, p.object_norm
            meta.setdefault("earlier_values", []).append(object_text)
        if _beside_live_user_fact(tx, meta):
            # an assistant/tool value kept beside the user's: repeating it never makes it injectable
            conf = min(conf, params.CANDIDATE_MAX_CONFIDENCE)
        standing = standing_for(conf, contested=status == "contested")
        tx.execute(
            "UPDATE facts SET corroboration = ?, confidence = ?, standing = ?, object_text = ?, "
            "object_norm = ?, metadata = ?, updated_at = ? WHERE id = ?",
            (
                count,
                conf,
                standing,
                new_text,
                new_norm,
                json.dumps(meta, sort_keys=True),
                tx.now,
                fact_id,
            ),
        )
        tx.emit("memory.updated", fact_id, reason="corroborated")
        if new_text != object_text:
            self._restate(tx, [fact_id])


# -- stage 9 and the trace of stages 6–9 ------------------------------------------------------------------------
#: Decisions that store a new fact row.
_CREATING = frozenset({"CREATE", "UPDATE", "CONFLICT"})
#: What a decision does to the tiers of the facts it targets (those it does not change are left out).
_TARGET_TIERS: dict[str, tuple[Tier, str]] = {
    "UPDATE": ("cold", "superseded: archived"),
    "RETRACT": ("cold", "retracted: archived"),
}


def _planned_standing(action: Action) -> str:
    """The standing a fact created by ``action`` would start with (see :meth:`Decider._insert`)."""
    if action.decision == "CONFLICT":
        return "challenged"
    if action.conflict_with_user and action.proposal.standing in ("working", "fact"):
        return "candidate"
    return action.proposal.standing


def planned_tiers(action: Action) -> list[TierChoice]:
    """Stage 9 for a planned (not applied) decision: the new fact's tier (``fact_id`` None) and its targets'."""
    p = action.proposal
    choices: list[TierChoice] = []
    if action.decision in _CREATING:
        status = "contested" if action.decision == "CONFLICT" else "active"
        tier, reason = tier_with_reason(p.importance, _planned_standing(action), p.tier_hint, status)
        choices.append(TierChoice(None, tier, reason))
    if action.decision in _TARGET_TIERS:
        tier, reason = _TARGET_TIERS[action.decision]
        choices += [TierChoice(target, tier, reason) for target in action.targets]
    return choices


def _stored_tiers(tx: Tx, fact_ids: Sequence[int]) -> list[TierChoice]:
    """Stage 9 as applied: each fact's tier after the decision, with the rule that gives it."""
    choices: list[TierChoice] = []
    for fact_id in dict.fromkeys(fact_ids):
        row = tx.execute(
            "SELECT tier, importance, standing, status, tier_pinned, json_extract(metadata, '$.tier_hint') "
            "FROM facts WHERE id = ?",
            (fact_id,),
        ).first()
        if row is None:
            continue
        tier, importance, standing, status, pinned, hint = row
        if pinned:
            choices.append(TierChoice(fact_id, tier, "pinned by the user"))
            continue
        computed, reason = tier_with_reason(float(importance), str(standing), str(hint or "warm"), str(status))
        choices.append(TierChoice(fact_id, tier, reason if computed == tier else f"{tier} from use ({reason} else)"))
    return choices


def stage_traces(
    before: Sequence[StageTrace], outcomes: Sequence[Applied], decide: StageTrace, *, planned: bool
) -> tuple[StageTrace, ...]:
    """The whole trace in DESIGN §4 order: the analysis stages, then Match, Decide, Embed and Tier.

    ``before`` are the analysis traces (the statements' vectors were computed there, in one batch, before the
    write); the Embed entry here also says which facts got a vector stored (or would, when ``planned``).
    """
    verb = "would be" if planned else "were"
    match_trace = StageTrace(
        "match",
        f"{sum(len(o.match.ranked) for o in outcomes if o.match)} stored facts matched for {len(outcomes)} proposals",
        {"matches": [_match_dict(o) for o in outcomes]},
        round(sum((o.match_ms for o in outcomes), 0.0), 3),
    )
    decide = replace(decide, ms=decide.ms or round(sum((o.decide_ms for o in outcomes), 0.0), 3))
    embed_before = next((t for t in before if t.stage == "embed"), None)
    embed_trace = StageTrace(
        "embed",
        f"{embed_before.summary if embed_before else 'nothing embedded'}; "
        f"{sum(1 for o in outcomes if o.embedded)} fact vectors {verb} stored",
        {
            **(embed_before.details if embed_before else {}),
            "stored": [
                {"statement": o.action.proposal.statement, "fact_id": o.fact_id} for o in outcomes if o.embedded
            ],
            "not_stored": [
                {"statement": o.action.proposal.statement, "why": _why_no_vector(o)} for o in outcomes if not o.embedded
            ],
        },
        embed_before.ms if embed_before else 0.0,
    )
    tiers = [
        {"statement": o.action.proposal.statement, "fact_id": c.fact_id, "tier": c.tier, "reason": c.reason}
        for o in outcomes
        for c in o.tiers
    ]
    tier_trace = StageTrace(
        "tier",
        f"{len(tiers)} facts tiered" + (" (planned)" if planned else ""),
        {"tiers": tiers},
        round(sum((o.tier_ms for o in outcomes), 0.0), 3),
    )
    rest = [t for t in before if t.stage != "embed"]
    stages = [*rest, match_trace, decide, embed_trace, tier_trace]
    order = {name: i for i, name in enumerate(STAGES)}
    return tuple(sorted(stages, key=lambda t: order.get(t.stage, len(order))))


def _match_dict(o: Applied) -> dict[str, Any]:
    p = o.action.proposal
    m = o.match
    return {
        "statement": p.statement,
        "slot": {"subject": p.subject, "predicate": p.predicate, "cardinality": p.cardinality},
        "candidates": [
            {
                "fact_id": c.fact_id,
                "object": c.object_text,
                "status": c.status,
                "similarity": round(c.similarity, 3),
                "recency": c.recency,
                "importance": c.importance,
                "score": c.score,
            }
            for c in (m.ranked[:TRACE_CANDIDATES] if m else ())
        ],
        "opposed": [f.id for f in m.opposed] if m else [],
        "from_this_event": list(m.applied) if m else [],
    }


def _why_no_vector(o: Applied) -> str:
    if o.action.decision not in _CREATING:
        return f"{o.action.decision}: no new fact"
    if o.action.proposal.vector is None:
        return "not embedded"
    return "quarantined: not recallable until approved"


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)


def _beside_live_user_fact(tx: Tx, meta: dict[str, Any]) -> bool:
    """True when a fact was stored as a candidate beside user facts that are still live."""
    ids = [int(i) for i in meta.get("contradicts", [])]
    if not ids:
        return False
    marks = ",".join("?" * len(ids))
    return bool(
        tx.scalar(f"SELECT COUNT(*) FROM facts WHERE id IN ({marks}) AND status IN ('active', 'contested')", tuple(ids))
    )


#: A fact that ends takes with it the facts said together with it: leaving an employer ends the role and the
#: department the same message named ("I'm a data analyst at Kuda" … "I've resigned from Kuda").
ENDS_WITH: dict[str, tuple[str, ...]] = {"works_at": ("works_as", "works_in_department")}


def _ending_with(tx: Tx, fact_ids: Sequence[int]) -> list[int]:
    """Live facts of the same subject stated in the same event as a retracted fact, in the slots that end with it."""
    found: list[int] = []
    for fact_id in fact_ids:
        row = tx.execute("SELECT predicate, subject_id, event_id FROM facts WHERE id = ?", (fact_id,)).first()
        if row is None or row[2] is None or str(row[0]) not in ENDS_WITH:
            continue
        related = ENDS_WITH[str(row[0])]
        marks = ",".join("?" * len(related))
        found += [
            int(r[0])
            for r in tx.execute(
                f"SELECT id FROM facts WHERE subject_id = ? AND event_id = ? AND predicate IN ({marks}) "
                "AND status IN ('active', 'contested')",
                (row[1], row[2], *related),
            ).fetchall()
        ]
    return found


def _looks_like_name(text: str) -> bool:
    words = text.split()
    return 0 < len(words) <= 4 and all(w[:1].isupper() for w in words)


def _higher_confidence(tx: Tx, a: int, b: int) -> int:
    rows = dict(tx.execute("SELECT id, confidence FROM facts WHERE id IN (?, ?)", (a, b)).fetchall())
    return a if float(rows.get(a, 0)) > float(rows.get(b, 0)) else b


# -- conflicts and status changes shared with the lifecycle API -----------------------------------------------
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
