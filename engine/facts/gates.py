"""The rule path's judgement of a sentence, applied to proposals from any extractor (the local model's included).

A model reads meaning well and grammar loosely: it may turn "I'm not allergic to peanuts" into an allergy, "my
sister Marta lives in Porto" into where the user lives, "I'm going to Japan in October" into a visit, or "if I took
a job in Norway" into a job.  Every proposal whose evidence the rules can read goes through the same gates the rule
shapes use (:mod:`engine.facts.rules.life.context`):

* **question** — a sentence that asks states nothing: dropped;
* **irrealis** — hypothetical, wished, wondered about: dropped;
* **negation** — a negated clause makes the proposal a negation (it retracts, never asserts);
* **attribution** — a clause about someone else files the proposal under them, not the speaker;
* **tense** — a clause about what is ahead turns a done-event predicate ("visited") into a plan.

Each change is reported, so ``vault.events.extract`` shows what the gates did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engine.facts.rules.life.context import context
from engine.facts.rules.text import sentences, skip_reason
from engine.facts.types import Proposition

#: Predicates that say something happened; said about what is ahead, they are plans.
DONE_EVENTS = frozenset(
    {"visited", "attended", "did_activity", "achieved", "finished", "started", "moved_to", "participated_in"}
)


@dataclass(frozen=True, slots=True)
class GateResult:
    """A proposal after the gates (None when dropped) and what they did to it."""

    proposition: Proposition | None
    notes: tuple[str, ...] = ()


def gate(text: str, prop: Proposition, speaker: str) -> GateResult:
    """Pass ``prop`` (from any extractor) through the sentence gates of the rule path."""
    ev = prop.evidence
    spans = [sp for sp in sentences(text, 0, len(text)) if sp.start <= ev.start < sp.end] if text else []
    if not spans:
        return GateResult(prop)
    sentence = spans[0]
    quote = text[sentence.start : sentence.end]
    if skip_reason(quote) == "question":
        return GateResult(None, ("dropped: the sentence asks, it states nothing",))
    pos = _anchor(text, prop, sentence.start, sentence.end)
    ctx = context(text, sentence.start, pos, speaker)
    if ctx is None:
        return GateResult(prop)
    notes: list[str] = []
    if ctx.irrealis:
        return GateResult(None, ("dropped: hypothetical or wished, not a fact",))
    out = prop
    if ctx.negated and not prop.negated:
        out = replace(out, negated=True)
        notes.append("negated: the sentence says it does not hold")
    if prop.subject == speaker and ctx.subject != speaker:
        out = replace(out, subject=ctx.subject)
        notes.append(f"attributed to {ctx.subject}: the sentence is about them")
    if prop.predicate in DONE_EVENTS and (ctx.time == "future" or ctx.planned) and not out.negated:
        out = replace(out, predicate="plans_to")
        notes.append("a plan: the sentence speaks of what is ahead")
    return GateResult(out, tuple(notes))


def _anchor(text: str, prop: Proposition, start: int, end: int) -> int:
    """Where in the sentence the proposal's clause is: the first word of its value, else the evidence start."""
    words = re.findall(r"[\w'’-]{3,}", prop.object)
    for word in words:
        found = re.search(rf"\b{re.escape(word)}\b", text[start:end], re.IGNORECASE)
        if found is not None:
            return start + found.start()
    return max(start, min(prop.evidence.start, end))
