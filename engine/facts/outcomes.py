"""What Decide concludes and what applying it did: the records shared by the match, decide and trace stages."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.facts.match import ANY_VALUE, Match
from engine.facts.pipeline import Proposal
from engine.facts.types import Decision, Tier

__all__ = ["ANY_VALUE", "AUTHORITATIVE", "SWITCH_MARK", "Action", "Applied", "FactContext", "TierChoice"]

#: Who may end or overrule what the user said (DESIGN §3 role rules).
AUTHORITATIVE = frozenset({"user", "manual"})
#: Separates the new and the old value of a "switched from A to B" proposal ("B ⟵ A").
SWITCH_MARK = "⟵"


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
