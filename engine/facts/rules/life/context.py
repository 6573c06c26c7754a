"""Who says what, how and when, around one trigger word of a sentence: the clause context of a life fact.

The life shapes find a trigger ("live in", "moved to", "my sister", "allergic to") and ask this module about the
words before it, inside its clause: the **subject** (the speaker for "I"/"we" or a dropped subject, a named person,
an unnamed relative such as "user's mother-in-law", or a pronoun resolved to the last person named before it), the
**polarity** (negated by "not", "don't", "never", "no longer"), the **time** of the verb group (past, present,
future/planned), and whether the clause is **irrealis** — hypothetical, wished, wondered about or suggested — in
which case nothing in it is a fact.

Informal chat is the normal case, not the exception: lower-case "i", "im", dropped subjects ("Got tinnitus",
"moved in on the 10th"), lower-case names after a relation noun ("my gf keisha"), run-on sentences.  Everything
works on offsets into the original text so the evidence stays verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from engine.facts.rules.life.people import Person, person_at, person_overlapping, resolve_pronoun

Time = Literal["past", "present", "future"]

#: Where a clause ends and the next begins, for the purpose of finding a trigger's subject.
_CLAUSE_RE = re.compile(
    r"[;:!?()\[\]\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF]|\.(?=\s|$)|\s[-–—]+\s|,|"
    # "me and jess broke up", "keisha and i": a coordinated subject, not two clauses
    r"(?<!\bme)(?<!\bi)\sand\s(?!(?:i|me)\b)|"
    r"(?<!\bday)(?<!\bweek)(?<!\bnight)\s(?:but|so|because|bc|cuz|coz|cause|while|although|though|"
    r"whereas|then|plus|which|who|when|since|after|before|until|till|if|unless)\s",
    re.IGNORECASE,
)
_TOKEN_RE = re.compile(r"[\w'’&.-]+", re.UNICODE)

_FIRST_PERSON = frozenset(
    "i i'm im i've ive i'll i’m i’ve i’ll i'd i’d we we're we’re we've we’ve weve we'll we’ll us me myself".split()
)
_THIRD_PRONOUNS = {"he": "m", "he's": "m", "he’s": "m", "hes": "m", "she": "f", "she's": "f", "she’s": "f", "shes": "f"}
_SECOND = frozenset("you you're you’re youre u ur your you've you'll ya".split())
_NEGATIONS = frozenset(
    """not never no n't dont don't don’t doesnt doesn't doesn’t didnt didn't didn’t cant can't can’t cannot wont
    won't won’t isnt isn't isn’t arent aren't aren’t wasnt wasn't wasn’t werent weren't weren’t havent haven't
    haven’t hasnt hasn't hasn’t hadnt hadn't hadn’t aint ain't ain’t wouldnt wouldn't wouldn’t nor""".split()
)
_FUTURE = frozenset("will 'll ’ll gonna shall i'll i’ll we'll we’ll he'll she'll going".split())
_PLAN_WORDS = re.compile(
    r"\b(?:going\s+to|gonna|plan(?:ning)?\s+(?:to|on)|about\s+to|want\s+to|wanna|would\s+like\s+to|"
    r"hope\s+to|hoping\s+to|intend\s+to|aim\s+to|trying\s+to|need\s+to|have\s+to|got\s+to|decided\s+to|"
    r"will|['’]ll|shall|soon)\b",
    re.IGNORECASE,
)
_IRREALIS = re.compile(
    r"\b(?:if|would|could|might|should|maybe|perhaps|hypothetical(?:ly)?|imagine|suppose|wish|dream|dreaming|"
    r"someday|some\s+day|one\s+day|thinking\s+(?:about|of)|considering|wondering|tempting|not\s+decided|"
    r"in\s+theory|whether|instead\s+of)\b",
    re.IGNORECASE,
)
_RELATIVE_OPENER = re.compile(r".*\b(?:who|which|whom)\s+\S?$", re.IGNORECASE | re.DOTALL)
_REPORTED_RE = re.compile(
    r"\b(?:he|she|they|[A-Z][a-z]+)\s+(?:told|tells|says|said|thinks|thought|reckons|keeps\s+telling)\s+(?:me\s+)?"
    r"(?:that\s+)?(?:i|i['’]m|im|i\s+am)\b",
    re.IGNORECASE,
)
#: A clause opened by "if"/"whether" (a condition, or a question inside "let me know if …") asserts nothing.
_OPENED_BY_IF_RE = re.compile(r"\b(?:if|whether)\s*$", re.IGNORECASE)
#: Markers that make everything after them in the sentence unreal, whichever clause they sit in (not an "if" that
#: asks inside one clause: "I doubt if I'm …, but …").
_SENTENCE_IRREALIS = re.compile(
    r"\b(?:(?<!know\s)(?<!see\s)(?<!ask\s)(?<!doubt\s)(?<!wonder\s)(?<!sure\s)(?<!check\s)if|hypothetical(?:ly)?|"
    r"imagine|suppose|supposing|pretend|in\s+theory|only\s+dream|not\s+(?:a\s+)?real\s+plan)\b",
    re.IGNORECASE,
)
#: Clause openers that do not name a subject: a dropped "I" may follow them.
_FILLERS = frozenset(
    """ok okay so and but also then now well oh ah yeah yes yep no nope lol haha hmm update big news actually
    honestly anyway anyways btw plus just still finally recently lately today yesterday tonight tomorrow this
    last next week month year weekend morning night already again even really totally literally basically
    alhamdulillah good great right sure since fyi ps omg wow fun fact guess what first second update: life
    seriously officially only luckily sadly unfortunately fortunately maybe perhaps ago a few couple of in on at
    after before a an the""".split()
)
#: Verb-group words between a subject and its verb (auxiliaries, adverbs) that say nothing about the subject.
_AUX = frozenset(
    """am is are was were be been being have has had do does did 'm ’m 're ’re 's ’s 've ’ve 'd ’d will would
    shall should can could may might must gonna going to got also just really still now already finally
    actually recently currently always never not no longer more anymore totally literally officially
    basically only even ever soon then again""".split()
)


@dataclass(frozen=True, slots=True)
class Context:
    """The clause around a trigger, as far as a life fact needs it."""

    subject: str  # the speaker, a person's name, or "user's <relation>" for an unnamed relative
    start: int  # where the clause starts
    negated: bool
    time: Time
    irrealis: bool  # hypothetical, wished, wondered about: not a fact
    planned: bool  # a statement of intent or schedule ("going to", "will", "plan to")
    person: Person | None = None  # the person the subject names, when it names one


def clause_start(text: str, lo: int, pos: int) -> int:
    """The start of the clause holding ``pos`` (never before ``lo``)."""
    start = lo
    for m in _CLAUSE_RE.finditer(text, lo, pos):
        if m.end() <= pos:
            start = m.end()
    while start < pos and text[start].isspace():
        start += 1
    return start


def clause_end(text: str, pos: int, hi: int) -> int:
    """Where the clause holding ``pos`` ends (at most ``hi``)."""
    m = _CLAUSE_RE.search(text, pos, hi)
    return m.start() if m else hi


def context(
    text: str, lo: int, pos: int, speaker: str, *, verb_time: Time = "present", depth: int = 0
) -> Context | None:
    """The context of a trigger at ``pos`` in the sentence starting at ``lo``; None when its subject is not
    someone the vault can attribute it to ("you", "the landlord", "it")."""
    start = clause_start(text, lo, pos)
    if _REPORTED_RE.search(text, lo, pos):
        return None  # "He told me I'm a great cook": someone else's words about the speaker
    prefix = text[start:pos]
    tokens = [t.casefold().strip(".-") for t in _TOKEN_RE.findall(prefix)]
    tokens = [t for t in tokens if t]
    negated = any(t in _NEGATIONS or t.endswith(("n't", "n’t")) for t in tokens) or bool(
        re.search(r"\bno\s+longer\b", prefix, re.IGNORECASE)
    )
    planned = bool(_PLAN_WORDS.search(prefix))
    irrealis = (
        bool(_IRREALIS.search(text, start, pos))
        or bool(_SENTENCE_IRREALIS.search(text, lo, pos))
        or bool(_OPENED_BY_IF_RE.search(text, max(lo, start - 12), start))
    ) and not (_concessive(text, lo, pos))
    time: Time = verb_time
    if planned and verb_time != "past":
        time = "future"
    if re.search(r"\b(?:used\s+to|was|were|had|did|didn['’]?t)\b", prefix, re.IGNORECASE) and verb_time != "future":
        time = "past"
    subject, person = _subject(text, lo, start, pos, tokens, speaker, depth)
    if subject is None:
        return None
    return Context(subject, start, negated, time, irrealis, planned, person)


def _concessive(text: str, lo: int, pos: int) -> bool:
    """ "even if", "as if": concede or compare, not hypothetical."""
    return bool(re.search(r"\b(?:even|as)\s+if\b", text[lo:pos], re.IGNORECASE)) and not re.search(
        r"(?<!even )(?<!as )\bif\b", text[lo:pos], re.IGNORECASE
    )


def _subject(
    text: str, lo: int, start: int, pos: int, tokens: list[str], speaker: str, depth: int
) -> tuple[str | None, Person | None]:
    """The subject named in the clause prefix, else the one a dropped subject inherits."""
    # first person anywhere before the verb: "I", "we", "me and my gf", "keisha and i"
    core = [t for t in tokens if t not in _AUX and t not in _NEGATIONS]
    if any(t in _FIRST_PERSON for t in core):
        return speaker, None
    named = person_at(text, start, pos)
    if named is not None:
        return named.subject, named
    for t in core:
        if t in _SECOND:
            return None, None
        gender = _THIRD_PRONOUNS.get(t)
        if gender is not None or t in ("he", "she", "they"):
            found = resolve_pronoun(text, start, gender)
            return (found.subject, found) if found is not None else (None, None)
    rest = [t for t in core if t not in _FILLERS and not t.isdigit()]
    if rest and start == lo and _looks_like_verb(rest[0]):
        return speaker, None  # "Went vegan on 1 January", "Got tinnitus": chat drops the "I"
    if not rest:
        # dropped subject: the previous clause's, or the speaker at the start of the sentence
        if start > lo and depth < 4:
            prev = _previous_clause_subject(text, lo, start, speaker, depth)
            if prev is not None:
                return prev
        return speaker, None
    return None, None


_VERB_FORMS = frozenset(
    """went got had made took came bought sold picked drove left quit started moved became turned joined found
    built signed booked finished ran won lost gave sent wrote told saw met broke tore hurt fell flew say said
    set kept thought felt""".split()
)


def _looks_like_verb(word: str) -> bool:
    """A clause-opening word that is a past-tense verb ("Went vegan …", "Bought a van"), not a noun."""
    return word in _VERB_FORMS or (
        word.endswith(("ed", "ing"))
        and len(word) > 4
        and word
        not in (
            "need",
            "speed",
            "seed",
            "morning",
            "evening",
            "thing",
            "something",
            "everything",
            "nothing",
            "wedding",
            "building",
            "meeting",
            "spring",
        )
    )


def _previous_clause_subject(
    text: str, lo: int, start: int, speaker: str, depth: int
) -> tuple[str | None, Person | None] | None:
    """The subject of the clause before ``start``: a coordinated clause without one shares it ("Son Magnus lives
    in Oslo, works as a nurse"); None when that clause names none."""
    back = lo
    for m in _CLAUSE_RE.finditer(text, lo, start):
        if m.end() <= start:
            back = m.start()
    while back > lo and text[back - 1] in " \t)":
        if text[back - 1] == ")":  # a parenthesis is an aside: the clause before it carries the subject
            opening = text.rfind("(", lo, back - 1)
            if opening < 0:
                break
            back = opening
        else:
            back -= 1
    if back <= lo:
        return None
    prev = clause_start(text, lo, back)
    tokens = [t.casefold().strip(".-") for t in _TOKEN_RE.findall(text[prev:back])]
    tokens = [t for t in tokens if t and t not in _AUX and t not in _NEGATIONS]
    if prev > lo and _RELATIVE_OPENER.match(text, max(lo, prev - 7), prev + 1) and depth < 4:
        # ", who lives with us," is an aside about the subject before it
        return _previous_clause_subject(text, lo, prev, speaker, depth + 1)
    if any(t in _FIRST_PERSON for t in tokens):
        return speaker, None
    named = person_at(text, prev, back) or person_overlapping(text, prev, back)
    if named is not None and named.start - prev <= 12:
        return named.subject, named
    for t in tokens[:3]:
        if t in _SECOND:
            return None, None
        gender = _THIRD_PRONOUNS.get(t)
        if gender is not None or t == "they":
            found = resolve_pronoun(text, prev, gender)
            return (found.subject, found) if found is not None else (None, None)
    if prev > lo and depth < 4 and all(t in _FILLERS for t in tokens[:1]):
        return _previous_clause_subject(text, lo, prev, speaker, depth + 1)
    return None
