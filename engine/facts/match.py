"""Stage 6 (Match): the stored facts a proposal is weighed against, ranked.

:func:`match` reads the live facts of the proposal's slot ``(user, subject, predicate)`` — for a multi-valued slot
the same value and the most recent ones — the facts it contradicts outside its slot (the opposite preference for the
same value, and the related slots of :mod:`engine.facts.compat`: a diet against a dish), and what this very event
already stored, and ranks them by similarity × recency × importance.  It works against a write transaction or a read
snapshot alike, so the dry run of ``vault.events.extract`` matches exactly as enrichment does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.facts import compat, params
from engine.facts.pipeline import Proposal


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


#: The value of a negated proposition that ends every earlier value of its slot ("I handed in my notice" → the role).
ANY_VALUE = "*"
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
#: Their ids and values come first, and only the values that share a word with the proposal's are read in full:
#: nothing else can be the same value, hold more detail, fall in the same keyed slot or be the same event (the
#: union is of ids, not of whole rows: comparing rows with their metadata made this the costliest query of
#: enrichment once a slot held a few hundred values).
MULTI_SLOT_IDS_SQL = (
    "SELECT id, object_norm FROM facts WHERE user_id = ? AND subject_id = ? "
    "AND predicate = ? AND status IN ('active', 'contested') AND object_norm = ? "
    "UNION SELECT id, object_norm FROM (SELECT id, object_norm FROM facts WHERE user_id = ? AND subject_id = ? "
    "AND predicate = ? AND status IN ('active', 'contested') ORDER BY recorded_at DESC, id DESC LIMIT 200)"
)
#: Words that say nothing about which value is which.
_FILLER_WORDS = frozenset("a an the my our your his her their of to in on at for with and or is it i me".split())


def slot_facts(
    q: Any,
    user_id: str,
    subject_id: int | None,
    predicate: str,
    *,
    cardinality: str = "single",
    object_norm: str = "",
    every_value: bool = False,
) -> list[SlotFact]:
    """The live facts of a slot that matching needs (``q``: a Tx or a read snapshot).

    A multi-valued slot gives the same value and the recent values that share a word with it — all recent values
    when ``every_value`` (a negation of the whole slot: "I quit Zalando" ends every role held there).
    """
    if subject_id is None:
        return []
    if cardinality == "single":
        rows = q.execute(SLOT_SQL, (user_id, subject_id, predicate)).fetchall()
        return [slot_fact_of(r) for r in rows]
    candidates = q.execute(
        MULTI_SLOT_IDS_SQL, (user_id, subject_id, predicate, object_norm, user_id, subject_id, predicate)
    ).fetchall()
    words = set(object_norm.split()) - _FILLER_WORDS
    ids = [
        int(r[0]) for r in candidates if every_value or r[1] == object_norm or not words.isdisjoint(str(r[1]).split())
    ]
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = q.execute(f"SELECT {SLOT_COLUMNS} FROM facts WHERE id IN ({marks}) ORDER BY recorded_at, id", ids).fetchall()
    return [slot_fact_of(r) for r in rows]


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
        # the JSON is read only for the few facts that were ever corroborated (instr first: most never were)
        involved = (
            "(event_id = ? OR (instr(metadata, 'corroborated_by') > 0 AND "
            "EXISTS (SELECT 1 FROM json_each(facts.metadata, '$.corroborated_by') WHERE value = ?)))"
        )
        args = (event_id, event_id)
    sql = f"SELECT id, object_norm FROM facts WHERE user_id = ? AND subject_id = ? AND predicate = ? AND {involved}"
    base: tuple[Any, ...] = (user_id, subject_id, p.predicate, *args)
    if p.cardinality != "single":
        sql += " AND object_norm = ?"
        base += (p.object_norm,)
    return [int(r[0]) for r in q.execute(sql, base).fetchall() if same_value(str(r[1]), p.object_norm)]


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
        found += [f for f in map(slot_fact_of, reversed(rows)) if same_value(f.object_norm, object_norm)]
    related = compat.RELATED.get(predicate, ())
    if related and object_text:
        marks = ",".join("?" * len(related))
        rows = q.execute(
            f"SELECT {SLOT_COLUMNS}, predicate FROM facts WHERE user_id = ? AND subject_id = ? AND predicate IN "
            f"({marks}) AND status IN ('active', 'contested') ORDER BY recorded_at, id LIMIT 200",
            (user_id, subject_id, *related),
        ).fetchall()
        found += [slot_fact_of(r) for r in rows if compat.clash(predicate, object_text, str(r[-1]), str(r[2]))]
    return found


def slot_fact_of(r: Sequence[Any]) -> SlotFact:
    """A :class:`SlotFact` from a row of :data:`SLOT_COLUMNS` (columns after them are ignored)."""
    metadata = r[12]
    # most facts were never corroborated: skip parsing their metadata (a multi-valued slot reads up to 200 rows)
    evidence = json.loads(metadata).get("corroborated_by", []) if metadata and "corroborated_by" in metadata else []
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
    slot = tuple(
        slot_facts(
            q,
            user_id,
            subject_id,
            p.predicate,
            cardinality=p.cardinality,
            object_norm=p.object_norm,
            every_value=p.object_text == ANY_VALUE,
        )
    )
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
        if same_value(f.object_norm, p.object_norm):
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


def same_value(stored: str, new: str) -> bool:
    """Two values say the same thing: equal, or one holds everything the other says and more (the token containment
    of :func:`~engine.facts.model.contains_detail` either way, computed once on sets: matching calls this for every
    stored value of a slot)."""
    if stored == new:
        return True
    a, b = stored.split(), new.split()
    if len(a) == len(b):
        return False
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return set(shorter).issubset(longer)
