"""The data the rule extractor passes between its steps: clause heads, rules, and found facts.

A *head* is the parsed start of a clause — who speaks (subject and person), how (mode: a main verb,
a copula "I'm …", or a possessive "I have …"), when (tense) and whether it is negated — plus where
the rest begins. A *rule* matches the rest of the clause from that position and names the predicate
and the object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from engine.facts.rules.text import ObjectKind

Person = Literal["first", "we", "third"]
Mode = Literal["verb", "be", "have"]
Tense = Literal[
    "present",
    "past",
    "progressive",
    "perfect",
    "perfect_prog",
    "future",
    "modal",
    "can",
    "used_to",
    "must",
]
#: What a negated match does: keep it flagged, drop it, fire only when negated, or switch to another
#: predicate.
Negation = Literal["flag", "skip", "require"] | str

#: Tenses in which a statement of intent is a plan ("I plan to", "I'm planning to").
PLANNING: frozenset[Tense] = frozenset({"present", "progressive", "perfect_prog", "future"})
#: Lookahead for a gerund next ("went camping").
GERUND_STRICT = r"(?=[a-z]+ing\b)"
#: Lookahead for a gerund next, possibly after one modifier ("go horseback riding").
GERUND = (
    r"(?=(?:(?!(?:home|back|out|up|there|away|to|into|on|off|towards?|for|with|about|of|by|in|at|from)"
    r"\b)[a-z-]+\s+)?[a-z]+ing\b)"
)
PERSONS_ALL: frozenset[Person] = frozenset({"first", "we", "third"})
PERSONS_ONE: frozenset[Person] = frozenset({"first", "third"})
STATE: frozenset[Tense] = frozenset({"present", "progressive", "perfect", "perfect_prog"})
EVENT: frozenset[Tense] = frozenset({"past", "perfect"})
ANY_REAL: frozenset[Tense] = frozenset({"present", "past", "progressive", "perfect", "perfect_prog"})

#: A chooser's answer: a predicate, a (predicate, reshaped object) pair, or None to reject the
#: match.
Choice = str | tuple[str, str] | None
#: Picks the predicate from the cleaned object ("guitar" → plays_instrument).
Chooser = Callable[[str], Choice]


@dataclass(frozen=True, slots=True)
class Head:
    """The parsed start of a clause.

    ``pos`` is where the main verb starts (mode ``verb``), or the complement after "am/is/'m"
    (``be``) or after "have/has/'ve got" (``have``); ``word`` is the lowercase first word there,
    used to pick candidate rules. ``aux`` is the first auxiliary ("will", "gonna", "am", …; empty
    for none).
    """

    subject: str
    person: Person
    start: int
    pos: int
    mode: Mode
    tense: Tense
    negated: bool
    word: str
    aux: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    """One statement shape: a lead pattern at the head's position, then an object up to the clause's
    end.

    ``lead`` may end in a lookahead so that the object includes the verb ("won first place").
    ``past`` names the predicate a simple-past statement maps to when the rule's own tenses exclude
    the past ("I lived in X" → ``lived_in``); ``also`` adds predicates stated by the same words ("I
    moved to X" → ``lives_in`` too).
    """

    name: str
    keys: tuple[str, ...]
    lead: re.Pattern[str]
    predicate: str | Chooser
    kind: ObjectKind = "phrase"
    mode: Mode = "verb"
    tenses: frozenset[Tense] = STATE
    persons: frozenset[Person] = PERSONS_ALL
    negation: Negation = "flag"
    past: str | None = None
    change: bool = False
    also: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Found:
    """A fact a rule found in one sentence, before it becomes a Proposition."""

    subject: str
    predicate: str
    object: str
    rule: str
    negated: bool = False
    change: bool = False
    #: The clause the fact was read from (the life shapes set it): its time expressions date the fact, and the
    #: clause heads inside it are not read again by the generic rules.
    span: tuple[int, int] | None = None
    #: The clause's time ("past", "present", "future"): which way a bare date ("on Saturday", "the 10th") points.
    time: str = ""


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence being read: the source text and the sentence's span in it, where its clauses
    start, who speaks, and a lowercase copy for the cheap keyword gates that keep most shapes from
    running at all.
    """

    text: str
    start: int
    end: int
    starts: tuple[int, ...]
    speaker: str
    low: str

    def has(self, *needles: str) -> bool:
        """True when the sentence contains any of these lowercase substrings."""
        low = self.low
        for needle in needles:  # noqa: SIM110 (a plain loop: this gate runs ~60 times per sentence, any() costs more)
            if needle in low:
                return True
        return False

    def clause_matches(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """Matches of ``pattern`` anchored at the sentence's clause starts."""
        for pos in self.starts:
            m = pattern.match(self.text, pos, self.end)
            if m:
                yield m


def _forms(*stems: str) -> tuple[str, ...]:
    """Space-separated verb forms per argument, flattened: _forms("live lives lived living")."""
    return tuple(w for s in stems for w in s.split())


def rule(
    name: str,
    keys: str,
    lead: str,
    predicate: str | Chooser,
    kind: ObjectKind = "phrase",
    *,
    tenses: frozenset[Tense] = STATE,
    persons: frozenset[Person] | None = None,
    negation: Negation = "flag",
    past: str | None = None,
    change: bool = False,
    also: tuple[str, ...] = (),
    mode: str = "verb",
) -> Rule:
    """Build a rule; ``lead`` is matched case-insensitively at the head's position."""
    return Rule(
        name=name,
        keys=_forms(keys),
        lead=re.compile(lead, re.IGNORECASE),
        predicate=predicate,
        kind=kind,
        mode="be" if mode == "be" else "have" if mode == "have" else "verb",
        tenses=tenses,
        persons=persons if persons is not None else frozenset({"first", "we", "third"}),
        negation=negation,
        past=past,
        change=change,
        also=also,
    )
