"""People (and pets) a message mentions: "my sister Noa", "my gf keisha", "Husband David", "our kelpie Ziggy", "Tash".

A mention has a name, a relation to the speaker, or both.  Names in chat are often lower case ("my boyfriend
conor"), so after a relation noun a lower-case word counts as a name unless it is a common word (a verb, a
function word, an adjective); anywhere else only capitalised words that are not sentence furniture count.  Each
mention also knows the pronoun gender its relation implies, so "she" can be resolved to the last woman named before
it in the same message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

from engine.facts.rules.life.words import (
    COMMON_WORDS,
    FEMALE,
    MALE,
    NOT_NAMES_LIFE,
    PET_WORDS,
    RELATION_PREDICATES,
)

_REL_ALT = "|".join(sorted((re.escape(w) for w in (*RELATION_PREDICATES, *PET_WORDS)), key=len, reverse=True))
_ADJ = (
    r"(?:(?:little|big|older|younger|elder|oldest|youngest|eldest|baby|twin|best|new|dear|lovely|sweet|late|"
    r"former|ex|old|two|three|four|beautiful|wonderful|adorable|furry|rescue|golden|border|future|step)[\s-]+)*"
)
_NAME_WORD = r"[A-Za-zÀ-ÖØ-öø-ÿĀ-ž][a-zà-öø-ÿā-ž'’-]*"
_MENTION_RE = re.compile(
    r"(?<![\w'’])(?:(?P<poss>my|our|his|her|their)\s+|(?P<a>an?)\s+(?=(?:former\s+|old\s+|good\s+|close\s+)*"
    r"(?:colleague|friend|cousin|coworker|co-worker)\s*,)|(?P<bare>(?<=^)|(?<=[.!?;:]\s)|(?<=\n)))"
    + _ADJ
    + r"(?P<rel>"
    + _REL_ALT
    + r")(?![\w'’-])"
    + r"(?:\s*,?\s*(?:\(\s*)?(?P<name>"
    + _NAME_WORD
    + r"(?:\s+(?-i:[A-Z])[a-zà-öø-ÿ'’-]+)?))?",
    re.IGNORECASE,
)
_CAP_NAME_RE = re.compile(r"(?<![\w'’@#/.-])(?-i:[A-Z])[a-zà-öø-ÿā-ž]+(?:[-'’](?-i:[A-Z])[a-zà-öø-ÿ]+)?(?![\w@])")
_NOT_A_PARTNER = re.compile(r"\s+(?:at\s+work|in\s+crime|at\s+the\s+(?:firm|office)|at\s+my\s+(?:firm|job))\b", re.I)
_POSSESSIVE_OWNER_RE = re.compile(
    r"\b(?P<owner>(?-i:[A-Z])[\w-]+)['’]s\s+" + _ADJ + r"(?P<rel>" + _REL_ALT + r")\b(?!\s+(?-i:[A-Z]))", re.I
)


@dataclass(frozen=True, slots=True)
class Person:
    """One mention of a person or pet."""

    start: int
    end: int
    name: str | None
    relation: str | None  # the relation noun as written ("gf", "mother-in-law", "kelpie")
    owner: str | None = None  # whose relative: None for the speaker's ("my"), else a name ("her dad" → set later)

    @property
    def subject(self) -> str:
        """How facts about this person are filed: the name, else "<owner>'s <relation>" ("user's mum",
        "Sarah's mum")."""
        if self.name:
            return self.name
        if self.relation and self.owner and self.owner not in ("his", "her", "their"):
            return f"{self.owner}'s {self.relation}"
        return f"user's {self.relation}" if self.relation else "someone"

    @property
    def gender(self) -> str | None:
        """The gender the relation noun implies ("f" or "m"), or None when it implies none."""
        rel = (self.relation or "").casefold()
        if rel in FEMALE:
            return "f"
        if rel in MALE:
            return "m"
        return None

    @property
    def is_pet(self) -> bool:
        """Whether the relation noun names a pet."""
        return (self.relation or "").casefold() in PET_WORDS

    @property
    def predicate(self) -> str | None:
        """The speaker's relationship predicate (``has_sibling``…), for the speaker's own relatives."""
        if self.owner is not None or not self.relation:
            return None
        rel = self.relation.casefold()
        if rel in PET_WORDS:
            return "has_pet"
        return RELATION_PREDICATES.get(rel)


#: Particles and adverbs that follow a relation or pet noun in a phrasal verb ("took my turtles out", "picked my
#: son up"): never a name.
_PARTICLES = frozenset("out up down off over back away around home along inside outside together again".split())


def _is_name(word: str, *, after_relation: bool) -> bool:
    bare = word.strip("'’-")
    if len(bare) < 2 or not bare.replace("-", "").replace("'", "").replace("’", "").isalpha():
        return False
    low = bare.casefold()
    if (
        low in COMMON_WORDS
        or low in _PARTICLES
        or bare in NOT_NAMES_LIFE
        or low in RELATION_PREDICATES
        or low in PET_WORDS
    ):
        return False
    if bare[0].isupper():
        return True
    if not after_relation:
        return False
    # lower case after a relation noun: a name unless it looks like a verb, adverb or adjective
    return not low.endswith(("ing", "ed", "ly", "ous", "ful", "ive", "able"))


#: Plural relation nouns: a lower-case word after them is their verb ("our kids need", "my parents live").
_PLURAL_RELATIONS = frozenset(
    """kids children sons daughters twins boys girls parents friends siblings brothers sisters cousins grandparents
    grandkids grandchildren colleagues coworkers co-workers pets cats dogs""".split()
)
#: What follows a verb, never a name: "my kids *motivate* me", "our kids *need* the best".
_VERB_AFTER_RELATION_RE = re.compile(
    r"\s+(?:me|us|him|them|it|you|my|our|your|their|the|a|an|this|that|these|those|so|such)\b", re.IGNORECASE
)


_PLACE_PREPOSITION_RE = re.compile(
    r"\b(?:in|from|to|at|near|outside|into|via|through|across|around)\s+$", re.IGNORECASE
)


@lru_cache(maxsize=256)
def mentions(text: str) -> tuple[Person, ...]:
    """Every person or pet mention of ``text``, in order (cached: the shapes of one message share them)."""
    found: list[Person] = []
    taken: list[tuple[int, int]] = []
    for m in _MENTION_RE.finditer(text):
        rel = m.group("rel")
        if m.group("bare") is not None and not rel[0].isupper():
            continue  # a bare relation noun only opens a sentence capitalised ("Son Magnus lives in Oslo")
        if rel.casefold() == "partner" and _NOT_A_PARTNER.match(text, m.end("rel")):
            continue  # "my partner at work", "my business partner": a colleague
        poss = (m.group("poss") or "").casefold()
        name = m.group("name")
        end = m.end("rel")
        if name is not None:
            name = re.sub(r"['’]s$", "", name)
            first = name.split()[0]
            if m.group("bare") is not None and not first[:1].isupper():
                name = None
            elif not first[:1].isupper() and (
                rel.casefold() in _PLURAL_RELATIONS or _VERB_AFTER_RELATION_RE.match(text, m.start("name") + len(first))
            ):
                name = None  # "my kids motivate me", "my grandmother inspires us": a verb, not a lower-case name
            elif _is_name(first, after_relation=True):
                name = name if all(_is_name(w, after_relation=True) for w in name.split()) else first
                end = m.start("name") + len(name)
            else:
                name = None
        if poss in ("his", "her", "their"):
            owner: str | None = poss
        else:
            owner = None
        start = m.start("poss") if m.group("poss") else m.start("a") if m.group("a") else m.start("rel")
        found.append(Person(start, end, name, rel, owner))
        taken.append((start, end))
    for m in _POSSESSIVE_OWNER_RE.finditer(text):
        owner = m.group("owner")
        if any(a <= m.start() < b for a, b in taken) or not _is_name(owner, after_relation=False):
            continue
        found.append(Person(m.start(), m.end("rel"), None, m.group("rel"), owner))
        taken.append((m.start(), m.end("rel")))
    for m in _CAP_NAME_RE.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        word = m.group()
        if not _is_name(word, after_relation=False) or _sentence_initial_common(text, m.start(), word):
            continue
        # "Tash and I", "Jonas is", "with Felix": a capitalised word that is not a place after "in/from/to"
        if _PLACE_PREPOSITION_RE.search(text, max(0, m.start() - 12), m.start()):
            continue
        found.append(Person(m.start(), m.end(), word, None))
    found.sort(key=lambda p: p.start)
    return tuple(found)


def _sentence_initial_common(text: str, pos: int, word: str) -> bool:
    """A capitalised word that opens a sentence and is an ordinary word there ("Bought", "Drove")."""
    before = text[:pos].rstrip()
    at_start = not before or before[-1] in ".!?\n:;"
    return at_start and (word.casefold() in COMMON_WORDS or word.casefold().endswith(("ed", "ing")))


def person_at(text: str, start: int, pos: int) -> Person | None:
    """The person named as the subject between ``start`` and ``pos`` (the last mention there), if any."""
    inside = [
        p
        for p in mentions(text)
        if start <= p.start and p.end <= pos and (p.relation or _acts(text, p) or _only_aux(text[p.end : pos]))
    ]
    if not inside:
        return None
    # "my wife Agnieszka cook": the mention nearest the verb is its subject
    return inside[-1]


def person_overlapping(text: str, start: int, end: int) -> Person | None:
    """A mention that ends inside ``[start, end)`` (an apposition split by commas: "my partner, Sam, is …")."""
    found = [p for p in mentions(text) if p.start < start < p.end <= end and (p.name or p.relation)]
    return found[-1] if found else None


def people_before(text: str, pos: int) -> list[Person]:
    """Mentions before ``pos`` (for resolving "he"/"she"), people first, pets too."""
    return [p for p in mentions(text) if p.end <= pos and (p.name or p.relation)]


def owner_of(text: str, person: Person) -> Person | None:
    """For "her dad Ricardo" / "his parents": the person the possessive points back to."""
    if person.owner not in ("his", "her"):
        return None
    gender = "m" if person.owner == "his" else "f"
    for p in reversed(people_before(text, person.start)):
        if p.gender in (gender, None) and p.name and not p.is_pet:
            return p
    return None


#: The speaker's messages just before the one being read, most recent last (set by :func:`earlier_messages` for
#: one extraction): "Lwazi's birthday is 27 July" … "wait no, his birthday is the 22nd" — chat splits what it says
#: across messages, and a pronoun with nobody to point back to in its own message points into the one before.
_EARLIER: ContextVar[tuple[str, ...]] = ContextVar("earlier_messages", default=())


@contextmanager
def earlier_messages(texts: Sequence[str]) -> Iterator[None]:
    """Let pronouns of the extraction inside this block resolve into ``texts`` (oldest first)."""
    token = _EARLIER.set(tuple(texts))
    try:
        yield
    finally:
        _EARLIER.reset(token)


def resolve_pronoun(text: str, pos: int, gender: str | None) -> Person | None:
    """The person "he"/"she"/"they" at ``pos`` points back to: the last one named before it whose relation has
    that gender, else the last named person of unknown gender that acted as someone (a relation or a name
    followed by a verb); when the message names nobody it can be, the same in the speaker's messages just before
    (see :func:`earlier_messages`).  A person found in an earlier message is used for who they are, never for where
    they stand in the text."""
    found = _resolve_in(text, pos, gender)
    if found is None and not people_before(text, pos):
        for earlier in reversed(_EARLIER.get()):
            found = _resolve_in(earlier, len(earlier), gender)
            if found is not None or people_before(earlier, len(earlier)):
                break  # the nearest message that names anyone decides, found or not
    return found


def _resolve_in(text: str, pos: int, gender: str | None) -> Person | None:
    before = [p for p in people_before(text, pos) if not p.is_pet]
    if gender is not None:
        for p in reversed(before):
            if p.gender == gender:
                return p
    for p in reversed(before):
        if (p.gender is None or gender is None) and (p.relation or _acts(text, p)):
            return p
    return None


_VERBISH_RE = re.compile(
    r"\s*,?\s*(?:['’]s\b|[a-z]+ed\b|is|was|has|had|will|would|and\s+(?:i|me)\b|said|says|thinks|wants|loves|likes|got|gets|"
    r"lives|works|did|does|can|could|keeps|made|makes|went|goes|came|comes|wrote|called|told)\b",
    re.IGNORECASE,
)


def _acts(text: str, person: Person) -> bool:
    """True when a bare name is followed by a verb ("Tash loves MONA"): a person acting, not a place or a word."""
    return _VERBISH_RE.match(text, person.end) is not None


_AUX_ONLY_RE = re.compile(
    r"(?:\s*(?:['’]s|['’]ll|['’]d|is|are|was|were|has|have|had|will|would|also|just|now|still|already|really|"
    r"never|not|always|currently|finally|recently|been|be|does|did|do|n['’]t|doesn['’]t|didn['’]t)\b)*\s*",
    re.IGNORECASE,
)


def _only_aux(gap: str) -> bool:
    m = _AUX_ONLY_RE.fullmatch(gap)
    return m is not None
