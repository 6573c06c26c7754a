"""Stage 7 (Decide): what to do with a proposal given the stored facts it was matched with — inside the writer's
transaction.

Stage 6 (:mod:`engine.facts.match`) finds and ranks the stored facts a proposal meets; :func:`plan` decides with the
best-ranked fact of the same value first:

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
touched (:mod:`engine.facts.trace`, which also writes the trace entries of ``vault.events.extract``); conflicts and the
status changes that settle them live in :mod:`engine.facts.conflicts`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from engine.config import FactSettings
from engine.facts import params
from engine.facts.conflicts import (
    close_moot_conflicts,
    open_conflict,
    open_conflicts_of,
    resolve_conflict,
    retract,
    supersede,
)
from engine.facts.match import Candidate, Match, SlotFact, match, same_value
from engine.facts.model import confidence, contains_detail, kind_of, normalise_object, standing_for, tier_for
from engine.facts.outcomes import ANY_VALUE, AUTHORITATIVE, SWITCH_MARK, Action, Applied, FactContext
from engine.facts.pipeline import Proposal
from engine.facts.rules.lexicon import RELATIONS
from engine.facts.statements import Restater
from engine.facts.trace import CREATING, ms, planned_standing, planned_tiers, stored_tiers
from engine.store import Tx
from engine.subjects import ensure_subject, find_subject_id
from engine.vectors import VectorIndex, VectorItem
from engine.vectors.migration import queue_vectors


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
        (f for f in slot if same_value(f.object_norm, p.object_norm)), key=lambda f: position.get(f.id, len(position))
    )
    if p.proposition.negated:
        return _plan_negation(slot, same, p, event_id=event_id, stated_at=stated_at)
    if same:
        return _plan_repetition(same, p, event_id=event_id)
    return _plan_other_value(slot, p, event_id=event_id, valid_time=valid_time, opposed=opposed)


def _plan_negation(
    slot: Sequence[SlotFact], same: Sequence[SlotFact], p: Proposal, *, event_id: int | None, stated_at: float | None
) -> Action:
    """A negated proposal ends what was said before it — never a value stated later (an older event enriched again
    or imported late) — and an assistant or tool cannot end what the user said."""
    if p.object_text == ANY_VALUE:
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
    ended = [f for f in same if stated_at is None or f.stated_at is None or f.stated_at <= stated_at]
    if p.source_role not in AUTHORITATIVE:
        ended = [f for f in ended if f.source_role not in AUTHORITATIVE]
    if ended:
        return Action("RETRACT", p, tuple(f.id for f in ended), "a later statement says this no longer holds")
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


def _plan_repetition(same: Sequence[SlotFact], p: Proposal, *, event_id: int | None) -> Action:
    """The value is known already: merged into (or linked to) the best-ranked fact holding it — or, said by the user
    about one side of an open conflict, that side chosen."""
    match = same[0]
    if event_id is not None and any(f.event_id == event_id or event_id in f.corroborated_by for f in same):
        return Action("NOOP", p, (match.id,), "already stored from this event")
    if match.status == "contested" and p.source_role in AUTHORITATIVE:
        return Action("RESOLVE", p, (match.id,), "the user repeated one side of an open conflict")
    if p.kind == "relational":
        return Action("LINK", p, (match.id,), "known relationship mentioned again")
    detail = contains_detail(p.object_norm, match.object_norm)
    return Action("MERGE", p, (match.id,), "same fact with more detail" if detail else "same fact again")


def _plan_other_value(
    slot: Sequence[SlotFact],
    p: Proposal,
    *,
    event_id: int | None,
    valid_time: float | None,
    opposed: Sequence[SlotFact],
) -> Action:
    """A value the slot does not hold: new, a change (a cue or a later valid time), a user statement replacing an
    assistant's, or — a different value without a cue — a conflict for the user to settle."""
    if p.cardinality == "single" and event_id is not None and not p.proposition.change_cue:
        together = [f for f in slot if f.event_id == event_id and f.source_role == p.source_role]
        if together and not any(f.status == "contested" for f in together):
            return Action("MERGE", p, (together[0].id,), "another value of the slot in the same message", combine=True)
    rivals = _rivals(slot, p)
    others = rivals + [f for f in opposed if f.id not in {o.id for o in rivals}]
    if not others:
        return Action("CREATE", p, (), "new")
    named = _named_relation([f for f in rivals if f.id not in {o.id for o in opposed}], p)
    if named is not None:
        return named
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


#: Relations a bare mention can fill a slot with ("my wife" → has_spouse "wife") until the person is named.
_RELATION_SLOTS = frozenset({"has_spouse", "has_partner", "has_manager"})


def _named_relation(others: Sequence[SlotFact], p: Proposal) -> Action | None:
    """A bare mention and a name of the same relation are one person, never a conflict: "it's for Dolores my wife"
    after "my wife Dolores" changes nothing, and "my wife Dolores" after "my wife" names her."""
    if p.predicate not in _RELATION_SLOTS or p.cardinality != "single":
        return None
    if not others:
        return None  # only facts of other slots oppose it ("Divorced" against "my wife"): a conflict, decided below
    if p.object_norm in RELATIONS:
        return Action("NOOP", p, (), "a bare mention of a relation the slot already names")
    bare = [f for f in others if f.object_norm in RELATIONS]
    if bare and len(bare) == len(others):
        return Action("UPDATE", p, tuple(f.id for f in bare), "the relation named")
    return None


def _rivals(slot: Sequence[SlotFact], p: Proposal) -> list[SlotFact]:
    """The slot's facts a new value competes with: every other value of a single-valued slot; in a multi-valued
    one, those of the same key (``params.value_key``: a favourite's category, a preference's kind — "oat milk" and
    "almond milk" compete, "oat milk" and "dark mode" do not)."""
    if p.cardinality == "single":
        return [f for f in slot if not same_value(f.object_norm, p.object_norm)]
    key = params.value_key(p.predicate, p.object_norm)
    if key is None:
        return []
    return [
        f
        for f in slot
        if params.value_key(p.predicate, f.object_norm) == key and not same_value(f.object_norm, p.object_norm)
    ]


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


class Decider:
    """Plans and applies proposals inside a write transaction."""

    def __init__(self, settings: FactSettings, vectors: VectorIndex, restater: Restater | None = None) -> None:
        self.settings = settings
        self.vectors = vectors
        self.restater = restater

    def _switched(
        self, tx: Tx, user_id: str, subject_id: int, p: Proposal, event_id: int | None
    ) -> tuple[Proposal, tuple[int, ...]]:
        """A "switched from A to B" proposal filed in A's slot: B replaces the live fact that says A.

        What A's slot is comes from what was said *before* this message: the same message's own facts ("I moved
        from Berlin to Lisbon" also gives ``lived_in Berlin``) would otherwise file B as a past home.  When this
        message already stated B in a slot, the switch joins that fact instead of repeating it.  Without either it
        stays a ``switched_to`` fact worded "B (from A)".
        """
        if p.predicate != "switched_to" or SWITCH_MARK not in p.object_text:
            return p, ()
        new, _, old = (part.strip() for part in p.object_text.partition(SWITCH_MARK))
        rows = tx.execute(
            "SELECT id, predicate FROM facts WHERE user_id = ? AND subject_id = ? AND object_norm = ? "
            "AND status IN ('active', 'contested') AND event_id IS NOT ? ORDER BY recorded_at DESC LIMIT 5",
            (user_id, subject_id, normalise_object(old), event_id),
        ).fetchall()
        if not rows and event_id is not None:
            said = tx.execute(
                "SELECT predicate FROM facts WHERE user_id = ? AND subject_id = ? AND object_norm = ? "
                "AND status IN ('active', 'contested') AND event_id = ? LIMIT 1",
                (user_id, subject_id, normalise_object(new), event_id),
            ).fetchall()
            if said and self.restater is not None:
                return self._moved(p, str(said[0][0]), new), ()
        if not rows or self.restater is None:
            value = f"{new} (from {old})"
            return replace(p, object_text=value, object_norm=normalise_object(value)), ()
        moved = self._moved(p, str(rows[0][1]), new)
        return moved, tuple(int(r[0]) for r in rows if str(r[1]) == moved.predicate)

    def _moved(self, p: Proposal, predicate: str, value: str) -> Proposal:
        """``p`` filed in ``predicate``'s slot with ``value``: worded and embedded anew (the vector made for the old
        wording would find the fact by words it no longer has)."""
        assert self.restater is not None
        spec = self.restater.spec(predicate)
        statement = self.restater.statement(p.subject, predicate, value)
        return replace(
            p,
            predicate=predicate,
            object_text=value,
            object_norm=normalise_object(value),
            statement=statement,
            vector=self.restater.vector_of(statement) if p.vector is not None else None,
            cardinality=spec.cardinality if spec else p.cardinality,
            kind=kind_of(spec.kind) if spec else p.kind,
            decay=spec.decay if spec else p.decay,
            tier_hint=spec.tier_hint if spec else p.tier_hint,
            importance=spec.importance if spec else p.importance,
        )

    def _restate(self, tx: Tx, fact_ids: Sequence[int]) -> None:
        if self.restater is not None:
            self.restater.restate(tx, fact_ids)

    def decide_and_apply(
        self, tx: Tx, ctx: FactContext, proposals: Sequence[Proposal], *, trace: bool = True
    ) -> list[Applied]:
        """Match, decide, store and tier each proposal in order (later proposals see earlier ones).

        Without ``trace`` the outcomes leave out the tiers and vectors that were stored (two reads per proposal
        that background enrichment, which shows no trace, need not pay for).
        """
        results: list[Applied] = []
        at = ctx.stated_at if ctx.stated_at is not None else tx.now
        for p in proposals:
            t0 = time.perf_counter()
            kind = "person" if p.source_class != "manual" and _looks_like_name(p.subject) else "entity"
            subject_id = ensure_subject(tx, ctx.user_id, p.subject, kind)
            p, replaced = self._switched(tx, ctx.user_id, subject_id, p, ctx.event_id)
            found = match(tx, ctx.user_id, subject_id, p, event_id=ctx.event_id, at=at)
            t1 = time.perf_counter()
            action = plan_match(found, event_id=ctx.event_id, valid_time=ctx.valid_time, stated_at=ctx.stated_at)
            if replaced and action.decision == "CREATE":
                action = Action("UPDATE", p, replaced, "switched from what it replaces")
            done = self.apply(tx, ctx, subject_id, action)
            t2 = time.perf_counter()
            if trace:
                done.tiers = stored_tiers(tx, [i for i in (done.fact_id, *done.touched) if i is not None])
                done.embedded = done.fact_id is not None and bool(
                    tx.scalar("SELECT COUNT(*) FROM embeddings WHERE object_id = ?", (done.fact_id,))
                )
            done.match, done.match_ms, done.decide_ms = found, ms(t0, t1), ms(t1, t2)
            done.tier_ms = ms(t2, time.perf_counter())
            results.append(done)
        return results

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
            creates = action.decision in CREATING
            outcomes.append(
                Applied(
                    action,
                    match=found,
                    tiers=tiers,
                    embedded=creates and p.vector is not None and planned_standing(action) != "quarantine",
                    match_ms=ms(t0, t1),
                    decide_ms=ms(t1, t2),
                    tier_ms=ms(t2, time.perf_counter()),
                )
            )
        return outcomes

    # -- applying ----------------------------------------------------------------------------------------------
    def apply(self, tx: Tx, ctx: FactContext, subject_id: int, action: Action) -> Applied:
        """Carry out one decision."""
        done = Applied(action)
        match action.decision:
            case "NOOP":
                pass
            case "CREATE":
                self._apply_create(tx, ctx, subject_id, action, done)
            case "MERGE" | "LINK":
                self._apply_repetition(tx, ctx, subject_id, action, done)
            case "UPDATE":
                self._apply_update(tx, ctx, subject_id, action, done)
            case "CONFLICT":
                self._apply_conflict(tx, ctx, subject_id, action, done)
            case "RESOLVE":
                winner = action.targets[0]
                for conflict_id in open_conflicts_of(tx, winner):
                    resolve_conflict(tx, conflict_id, winner, resolved_by="clarification")
                self._corroborate(tx, winner, ctx, action.proposal, more_detail=False)
                done.touched.append(winner)
            case "RETRACT":
                ended = [*action.targets, *_ending_with(tx, action.targets)]
                for target in ended:
                    retract(tx, target, until=ctx.valid_time or tx.now, by_event=ctx.event_id)
                done.touched = ended
        return done

    def _apply_create(self, tx: Tx, ctx: FactContext, subject_id: int, action: Action, done: Applied) -> None:
        p = action.proposal
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

    def _apply_repetition(self, tx: Tx, ctx: FactContext, subject_id: int, action: Action, done: Applied) -> None:
        p = action.proposal
        target = action.targets[0]
        if action.combine:
            self._combine(tx, target, p)
        self._corroborate(tx, target, ctx, p, more_detail=action.decision == "MERGE" and not action.combine)
        # the event speaks of the fact's subject (and, for a relationship, of the person named) as a new
        # fact's event does: tagging both lets the turn be found from either side
        self._tag(tx, ctx, target, p, subject_id=subject_id)
        done.touched.append(target)

    def _apply_update(self, tx: Tx, ctx: FactContext, subject_id: int, action: Action, done: Applied) -> None:
        p = action.proposal
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

    def _apply_conflict(self, tx: Tx, ctx: FactContext, subject_id: int, action: Action, done: Applied) -> None:
        p = action.proposal
        new_id = self._insert(tx, ctx, subject_id, p, status="contested")
        done.fact_id = new_id
        for old in action.targets:
            done.conflict_id = open_conflict(tx, ctx.user_id, subject_id, p.predicate, old, new_id, action.reason)
        if self.settings.conflict_auto_resolve and done.conflict_id is not None:
            winner = _higher_confidence(tx, action.targets[-1], new_id)
            resolve_conflict(tx, done.conflict_id, winner, resolved_by="auto")

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
        elif band != "quarantine":  # the embedder was down: the fact is stored, its vector waits for it
            queue_vectors(tx, self.vectors.space_id, [(fact_id, "fact", ctx.user_id, p.object_norm)])
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
