"""Typed inputs and outputs of the fact pipeline's stages (DESIGN §4).

Each stage is a small function from one of these to the next; every stage also returns a :class:`StageTrace`
saying what it decided and why, so ``vault.events.extract`` can show the whole path of a text without storing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from engine.temporal.types import TemporalMention

SegmentLabel = Literal["statement", "greeting", "question", "command", "code", "filler"]
FactKind = Literal["identity", "occupational", "preference", "behavioral", "temporal", "relational"]
Decay = Literal["stable", "moderate", "ephemeral"]
Tier = Literal["hot", "warm", "cold"]
Standing = Literal["quarantine", "candidate", "working", "fact", "challenged"]
FactStatus = Literal["active", "contested", "superseded", "retracted", "deleted"]
Decision = Literal["CREATE", "UPDATE", "MERGE", "LINK", "NOOP", "CONFLICT", "RESOLVE", "RETRACT"]
SourceRole = Literal["user", "assistant", "system", "tool", "manual", "document"]


# -- L0.5 classifier --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Segment:
    """A sentence-like piece of a text with its label; offsets index the (firewalled) text."""

    start: int
    end: int
    label: SegmentLabel
    keep: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Classification:
    """The classifier's verdict: the segments worth extracting from (``keep``) and all of them with labels."""

    segments: tuple[Segment, ...]

    @property
    def keep(self) -> bool:
        """True when at least one segment is a statement worth extracting from."""
        return any(s.keep for s in self.segments)

    @property
    def kept(self) -> tuple[Segment, ...]:
        """The segments that pass."""
        return tuple(s for s in self.segments if s.keep)


# -- extract ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Evidence:
    """A verbatim quote: ``source[start:end] == text``."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Proposition:
    """A subject–predicate–object card proposed by an extractor, with its verbatim evidence.

    ``subject`` is a display name: the speaker (the event's author, or ``"user"`` for the vault owner) for
    first-person statements, or the named entity a third-person statement is about.  ``predicate`` is a catalog
    name when the extractor knows it, else a short raw phrase the Map stage resolves.
    """

    subject: str
    predicate: str
    object: str
    evidence: Evidence
    extractor: str = "rules"
    negated: bool = False
    change_cue: bool = False
    temporal: TemporalMention | None = None
    rule: str = ""  # which rule (or prompt) produced it, for the trace
    #: The clause the extractor read it from, when it knows: only a time expression inside it dates the fact,
    #: resolved in the clause's ``tense`` ("past", "present", "future"); None lets the whole evidence date it.
    clause: tuple[int, int] | None = None
    tense: str = ""


# -- stage traces -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StageTrace:
    """What one stage did: its name, a one-line summary, and structured details (JSON-friendly)."""

    stage: str
    summary: str
    details: dict[str, Any] = field(default_factory=dict)
    ms: float = 0.0
