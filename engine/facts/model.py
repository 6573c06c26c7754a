"""The Fact DTO and the pure functions that score, band and tier a fact (DESIGN §3, stages 5 and 9)."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.facts import params
from engine.facts.types import FactKind, Standing, Tier
from engine.temporal import from_epoch


@dataclass(frozen=True, slots=True)
class Fact:
    """One stored fact, with its provenance and usage."""

    id: int
    user_id: str
    project_id: str | None
    subject_id: int
    subject: str
    predicate: str
    object_text: str
    statement: str
    source_text: str
    source_start: int | None
    source_end: int | None
    event_id: int | None
    span_id: int | None
    conversation_id: str | None
    source_role: str
    confidence: float
    importance: float
    tier: Tier
    tier_pinned: bool
    standing: Standing
    kind: str
    decay: str
    valid_from: datetime | None
    valid_to: datetime | None
    recorded_at: datetime
    updated_at: datetime
    superseded_at: datetime | None
    superseded_by: int | None
    previous_id: int | None
    status: str
    extractor: str
    prompt_hash: str | None
    access_count: int
    last_accessed_at: datetime | None
    useful_count: int
    questionable_count: int
    corroboration: int
    metadata: Mapping[str, Any]

    @property
    def injectable(self) -> bool:
        """True when recall may put this fact into a prompt (standing working/fact, status active)."""
        return self.status == "active" and self.standing in params.INJECTABLE


FACT_COLUMNS = (
    "f.id, f.user_id, f.project_id, f.subject_id, s.name, f.predicate, f.object_text, f.statement, f.source_text, "
    "f.source_start, f.source_end, f.event_id, f.span_id, f.conversation_id, f.source_role, f.confidence, "
    "f.importance, f.tier, f.tier_pinned, f.standing, f.kind, f.decay, f.valid_from, f.valid_to, f.recorded_at, "
    "f.updated_at, f.superseded_at, f.superseded_by, f.previous_id, f.status, f.extractor, f.prompt_hash, "
    "f.access_count, f.last_accessed_at, f.useful_count, f.questionable_count, f.corroboration, f.metadata"
)
FACT_FROM = "facts f JOIN subjects s ON s.id = f.subject_id"


def _dt(value: Any) -> datetime | None:
    return from_epoch(float(value)) if value is not None else None


def fact_from_row(row: Sequence[Any]) -> Fact:
    """Build a :class:`Fact` from a row selected with :data:`FACT_COLUMNS` over :data:`FACT_FROM`."""
    recorded = _dt(row[24])
    updated = _dt(row[25])
    assert recorded is not None and updated is not None
    return Fact(
        id=int(row[0]),
        user_id=str(row[1]),
        project_id=row[2],
        subject_id=int(row[3]),
        subject=str(row[4]),
        predicate=str(row[5]),
        object_text=str(row[6]),
        statement=str(row[7]),
        source_text=str(row[8]),
        source_start=row[9],
        source_end=row[10],
        event_id=row[11],
        span_id=row[12],
        conversation_id=row[13],
        source_role=str(row[14]),
        confidence=float(row[15]),
        importance=float(row[16]),
        tier=row[17],
        tier_pinned=bool(row[18]),
        standing=row[19],
        kind=str(row[20]),
        decay=str(row[21]),
        valid_from=_dt(row[22]),
        valid_to=_dt(row[23]),
        recorded_at=recorded,
        updated_at=updated,
        superseded_at=_dt(row[26]),
        superseded_by=row[27],
        previous_id=row[28],
        status=str(row[29]),
        extractor=str(row[30]),
        prompt_hash=row[31],
        access_count=int(row[32]),
        last_accessed_at=_dt(row[33]),
        useful_count=int(row[34]),
        questionable_count=int(row[35]),
        corroboration=int(row[36]),
        metadata=json.loads(row[37]) if row[37] and row[37] != "{}" else {},
    )


# -- scoring (stage 5) ------------------------------------------------------------------------------------------
def confidence(
    source_class: str,
    kind: str,
    *,
    corroboration: int = 0,
    conflicted: bool = False,
    signals: int = 0,
) -> float:
    """σ(α·S + β·K − γ·F + δ·T + bias), plus the user's useful/questionable marks (``signals``: +1 / −1 each)."""
    s = params.SOURCE_WEIGHT.get(source_class, 0.3)
    k = min(1.0, corroboration / params.CORROBORATION_SATURATION)
    t = params.KIND_BONUS.get(kind, 0.5)  # type: ignore[call-overload]
    f = 1.0 if conflicted else 0.0
    z = params.ALPHA * s + params.BETA * k - params.GAMMA * f + params.DELTA * t + params.BIAS + 0.5 * signals
    return round(1.0 / (1.0 + math.exp(-z)), 4)


def standing_for(confidence_value: float, *, contested: bool = False) -> Standing:
    """The trust band of a confidence (``challenged`` while in an open conflict)."""
    if contested:
        return "challenged"
    for upper, band in params.STANDING_BANDS:
        if confidence_value < upper:
            return band
    return "fact"


def tier_for(importance: float, standing: str, tier_hint: str, status: str) -> Tier:
    """Stage 9: hot (always recalled), warm (by relevance) or cold (archive)."""
    return tier_with_reason(importance, standing, tier_hint, status)[0]


def tier_with_reason(importance: float, standing: str, tier_hint: str, status: str) -> tuple[Tier, str]:
    """:func:`tier_for` and the rule that chose it, for the Tier stage's trace."""
    if status in ("superseded", "retracted", "deleted"):
        return "cold", f"{status}: archived"
    if standing == "quarantine":
        return "cold", "quarantined until evidence or approval"
    if importance < params.COLD_MAX_IMPORTANCE:
        return "cold", f"importance {importance:.2f} below {params.COLD_MAX_IMPORTANCE}"
    if tier_hint == "hot" and standing in ("fact", "working") and importance >= params.HOT_MIN_IMPORTANCE:
        return "hot", f"hot predicate, {standing} standing, importance {importance:.2f}"
    if tier_hint == "hot":
        return "warm", f"hot predicate, but {standing} standing and importance {importance:.2f}"
    return "warm", "recalled by relevance"


def kind_of(value: str) -> FactKind:
    """Coerce a catalog kind string (unknown → behavioral)."""
    if value in params.KIND_BONUS:
        return value
    return "behavioral"


# -- text helpers -----------------------------------------------------------------------------------------------
_LEADING = re.compile(r"^(?:a|an|the|my|our|some|this|that)\s+", re.IGNORECASE)
_PUNCT = re.compile(r"[^\w\s:+#./-]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def normalise_object(text: str) -> str:
    """Comparable form of an object value: lower case, no accents on Latin letters' case, no articles/punctuation."""
    value = unicodedata.normalize("NFKC", text).casefold().strip()
    value = _PUNCT.sub(" ", value)
    value = _SPACE.sub(" ", value).strip()
    while True:
        stripped = _LEADING.sub("", value)
        if stripped == value:
            break
        value = stripped
    return value.rstrip(" .")


def render_statement(subject: str, label: str, object_text: str, when: datetime | None = None) -> str:
    """The sentence a fact is embedded and searched as: ``"Caroline attended a support group (2023-05-07)"``."""
    who = "User" if subject == "user" else subject
    text = f"{who} {label} {object_text}".strip()
    if when is not None:
        text += f" ({when:%Y-%m-%d})"
    return text


def contains_detail(longer: str, shorter: str) -> bool:
    """True when ``longer`` says everything ``shorter`` says and more (token containment)."""
    long_tokens, short_tokens = longer.split(), shorter.split()
    if len(long_tokens) <= len(short_tokens):
        return False
    return all(token in long_tokens for token in short_tokens)
