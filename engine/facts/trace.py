"""Stage 9 (Tier) as planned and as applied, and the trace entries of stages 6–9 that ``vault.events.extract`` shows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from engine.facts.model import tier_with_reason
from engine.facts.outcomes import Action, Applied, TierChoice
from engine.facts.pipeline import STAGES
from engine.facts.types import StageTrace, Tier
from engine.store import Tx

#: How many ranked candidates the Match trace lists per proposal (a multi-valued slot can hold hundreds).
TRACE_CANDIDATES = 5

#: Decisions that store a new fact row.
CREATING = frozenset({"CREATE", "UPDATE", "CONFLICT"})
#: What a decision does to the tiers of the facts it targets (those it does not change are left out).
_TARGET_TIERS: dict[str, tuple[Tier, str]] = {
    "UPDATE": ("cold", "superseded: archived"),
    "RETRACT": ("cold", "retracted: archived"),
}


def planned_standing(action: Action) -> str:
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
    if action.decision in CREATING:
        status = "contested" if action.decision == "CONFLICT" else "active"
        tier, reason = tier_with_reason(p.importance, planned_standing(action), p.tier_hint, status)
        choices.append(TierChoice(None, tier, reason))
    if action.decision in _TARGET_TIERS:
        tier, reason = _TARGET_TIERS[action.decision]
        choices += [TierChoice(target, tier, reason) for target in action.targets]
    return choices


def stored_tiers(tx: Tx, fact_ids: Sequence[int]) -> list[TierChoice]:
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
    if o.action.decision not in CREATING:
        return f"{o.action.decision}: no new fact"
    if o.action.proposal.vector is None:
        return "not embedded"
    return "quarantined: not recallable until approved"


def ms(start: float, end: float) -> float:
    """The milliseconds from ``start`` to ``end`` (seconds of ``time.perf_counter``), rounded for the trace."""
    return round((end - start) * 1000, 3)
