"""Clause heads: where clauses start in a sentence and who/how/when each one speaks.

A sentence like "Yeah, my wife and I moved to Lyon last year and I've been painting a lot" has
clause starts at "Yeah", "my wife and I moved…" and "I've been painting…".  For each start the head
parser reads the subject ("I", "we", "my wife and I", "my sister Anna", "Caroline"), the auxiliaries
and negation ("'ve been", "don't", "no longer"), skips adverbs ("really", "just", "finally"), and
reports the mode and tense of what follows.
"""

from __future__ import annotations

import re

from engine.facts.rules.lexicon import ING_ADJECTIVES, NOT_PAST_ED, PARTICIPLES, PAST_FORMS
from engine.facts.rules.model import Head, Mode, Person, Tense
from engine.facts.rules.subjects import (
    dropped_subject,
    led_by_adverb_or_comma,
    shared_subject,
    subject as read_subject,
)

_CLAUSE_SEP_RE = re.compile(
    # (every branch starts with one of these characters: the look-ahead lets the scan skip the rest at once)
    r"(?=[,;:(\-–—\s])(?:[,;:(]|(?<=\w)[-–—]{2,}(?=\w)|(?<=\w)[-–—](?=\s)|\s(?:"
    r"(?:[-–—]+|and|but|because|cause|['’]cause|cos|coz|cuz|since|though|although|while|when|after|"
    r"before|until|"
    r"once|then|plus|or|now\s+that|which\s+is\s+why)\s+|"
    # "that" opens a clause before a subject ("I think that I …"), not as a determiner ("that kind
    # of …").
    r"that\s+(?=(?:I|we|you|he|she|they|it|my|our|(?-i:[A-Z]))\b)|"
    # "so" and "as" are adverbs as often as conjunctions ("I felt so accepted"): only before a new
    # subject.
    r"(?:so|as)\s+(?=(?:I|we|my|our|(?-i:[A-Z][a-z]+)\s+(?:is|was|has|had)\b)|i\s)|"
    r"(?:agree|believe|think|feel|know|hope|guess|learned|realized|realised|remember|reminder)"
    r"\s+that\s+|"
    r"(?:tell|told|show|showed)\s+(?:you|ya)\s+(?:that\s+)?(?=(?:I|we)\b)|"
    # "that's why I love volunteering", "reminds me how much I love performing": the speaker's own clause follows
    r"(?:why|how\s+much)\s+(?=(?:I|we)\s+(?!(?-i:[a-z]+ed)\b))|"
    r"(?:think|guess|know|realized|realised|figured|decided|feel\s+like|found\s+out|noticed|"
    r"remember|bet|admit|"
    r"swear|promise|said|told\s+\w+)\s+(?:that\s+)?(?=(?:i|we)\b)))",
    re.IGNORECASE,
)
#: A sentence that opens with "Remember that …" states what follows.
_SUBORDINATE_RE = re.compile(
    r"(?:\w+[\s,]+)*?(?:when|while|before|after|since|because|although|though|once|if)\b",
    re.IGNORECASE,
)
_OPENING_THAT_RE = re.compile(r"(?:remember|reminder|believe|agree)\s+that\s+", re.IGNORECASE)
_PREFIX_RE = re.compile(
    r"(?:(?:and|but|so|also|plus|actually|honestly|well|oh|yeah|yes|now|then|recently|lately|today|"
    r"yesterday|just|"
    r"since|when|after|before|because|although|though|while|once|ever\s+since|tomorrow|"
    r"from\s+now\s+on|"
    r"next\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn|time|\w+day)|"
    r"tonight|finally|luckily|sadly|unfortunately|fortunately|anyway|anyways|basically|btw|"
    r"personally|"
    r"lol|haha|hey|ok|okay|wow|right|sure|true|hmm|guess\s+what|by\s+the\s+way|fun\s+fact|"
    r"last\s+(?:week|weekend|month|year|night|summer|winter|spring|fall|\w+day)|"
    r"this\s+(?:past\s+)?(?:week|weekend|month|year|morning|afternoon|evening|summer)|"
    r"(?:a\s+few|a\s+couple\s+of|\w+)\s+(?:days|weeks|months|years)\s+ago|the\s+other\s+day|"
    r"a\s+while\s+(?:ago|back)|on\s+\w+day|in\s+\d{4}|these\s+days|nowadays|at\s+the\s+moment|"
    r"right\s+now|for\s+(?:now|a\s+while)|since\s+then|so\s+far|over\s+the\s+\w+|"
    r"after\s+work|every\s+\w+)[\s,!]+)*",
    re.IGNORECASE,
)
_CONTRACTION_RE = re.compile(r"['’](m|re|ve|ll|d|s)\b", re.IGNORECASE)
_AUX_RE = re.compile(
    r"\s+(am|is|are|was|were|have|has|had|do|does|did|will|shall|would|could|should|might|may|must|"
    r"can|"
    r"cannot|can['’]?t|won['’]?t|don['’]?t|doesn['’]?t|didn['’]?t|haven['’]?t|hasn['’]?t|"
    r"hadn['’]?t|"
    r"isn['’]?t|aren['’]?t|wasn['’]?t|weren['’]?t|wouldn['’]?t|couldn['’]?t|shouldn['’]?t|"
    r"ain['’]?t|"
    r"gonna|gotta|used\s+to|going\s+to(?=\s+(?!the\b|a\b|an\b|my\b|our\b|see\b)[a-z]+\b))\b",
    re.IGNORECASE,
)
_NEG_RE = re.compile(r"\s+(?:not|never|no\s+longer|no\s+more)\b", re.IGNORECASE)
_ADVERB_RE = re.compile(
    r"\s+(?:really|also|just|recently|finally|actually|still|currently|now|always|totally|"
    r"absolutely|"
    r"definitely|truly|mostly|mainly|usually|often|sometimes|even|already|kinda|kind\s+of|"
    r"sort\s+of|"
    r"honestly|seriously|literally|officially|lately|ever|basically|typically|generally|primarily|"
    r"normally|"
    r"occasionally|constantly|newly|originally|initially|first|then|soon|both|all|personally|only|"
    r"real|super|much|"
    r"absolutely|particularly|especially|so|very|too|def|totes|lowkey|highkey|pretty\s+much|slowly|"
    r"officially|happily|proudly|secretly|regularly|frequently|definitely|certainly|probably)\b",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"\s*([A-Za-zÀ-ỹ0-9][\w'’.+#-]*)")


def clause_starts(text: str, start: int, end: int) -> list[int]:
    """Offsets inside a sentence where a clause may begin (the sentence start, after separators)."""
    starts = [start]
    opening = _OPENING_THAT_RE.match(text, start, end)
    if opening:
        starts.append(opening.end())
    for m in _CLAUSE_SEP_RE.finditer(text, start, end):
        p = m.end()
        while p < end and text[p].isspace():
            p += 1
        if p < end and p != starts[-1]:
            starts.append(p)
    return starts


def parse_head(
    text: str,
    pos: int,
    end: int,
    speaker: str,
    implicit: tuple[str, Person] | None = None,
    *,
    chained: bool = False,
    first: bool = True,
    past_chain: bool = False,
) -> tuple[Head, tuple[str, str] | None] | None:
    """Parse the clause head at ``pos``; also return a relation it names ("my sister Anna" →
    has_sibling Anna).

    ``implicit`` is the subject a clause without one inherits — chat drops "I" ("Started hitting the
    gym last week", "Been painting a lot"), and a coordinated clause shares the previous one's
    subject ("Caroline adopted a dog and went …").  Returns None when the clause has no subject the
    rules can attribute (pronouns other than I/we, unnamed relatives, "you").
    """
    m = _PREFIX_RE.match(text, pos, end)
    p = m.end() if m else pos
    subject = read_subject(text, p, end, speaker)
    if subject is None and implicit is not None and not _SUBORDINATE_RE.match(text, pos, p):
        # ("When picking endorsements, make sure …" is advice, not a dropped "I".)
        led = led_by_adverb_or_comma(text, pos, p)
        subject = dropped_subject(text, p, end, implicit, (chained or not first) and not led)
        if subject is None and past_chain:
            subject = shared_subject(text, p, end, implicit)
    if subject is None:
        return None
    name, person, subj_end, relation, implied = subject
    head = _auxiliaries(text, p, subj_end, end, name, person, implied)
    if head is None:
        return None
    return head, relation


def _auxiliaries(text: str, start: int, p: int, end: int, subject: str, person: Person, implied: str) -> Head | None:
    """Read auxiliaries, negation and adverbs after the subject and classify what follows."""
    negated = implied in _NEGATED_AUX
    implied = _NEGATED_AUX.get(implied, implied)
    auxes: list[tuple[str, int]] = [(implied, p)] if implied else []
    m = _CONTRACTION_RE.match(text, p, end)
    if m and not implied:
        c = m.group(1).casefold()
        if c == "s":
            return None  # "Anna's …" is a possessive far more often than "Anna is"
        auxes.append(({"m": "am", "re": "are", "ve": "have", "ll": "will", "d": "'d"}[c], m.start()))
        p = m.end()
    for _ in range(3):
        m = _AUX_RE.match(text, p, end)
        if not m:
            break
        word = re.sub(r"\s+", " ", m.group(1).casefold().replace("’", "'"))
        if word in _NEGATED_AUX:
            negated = True
            word = _NEGATED_AUX[word]
        auxes.append((word, m.start(1)))
        p = m.end()
    while True:
        n = _NEG_RE.match(text, p, end)
        if n:
            negated = True
            p = n.end()
            continue
        a = _ADVERB_RE.match(text, p, end)
        if a:
            p = a.end()
            continue
        break
    return _classify(text, start, p, end, subject, person, auxes, negated)


_NEGATED_AUX = {
    **{
        f"{a}{t}": a
        for a in (
            "don",
            "doesn",
            "didn",
            "haven",
            "hasn",
            "hadn",
            "isn",
            "aren",
            "wasn",
            "weren",
            "wouldn",
            "couldn",
            "shouldn",
            "ain",
        )
        for t in ("'t", "t")
    },
    "can't": "can",
    "cant": "can",
    "cannot": "can",
    "won't": "will",
    "wont": "will",
}
_NEGATED_AUX.update(
    {
        k: {
            "don": "do",
            "doesn": "does",
            "didn": "did",
            "haven": "have",
            "hasn": "has",
            "hadn": "had",
            "isn": "is",
            "aren": "are",
            "wasn": "was",
            "weren": "were",
            "wouldn": "would",
            "couldn": "could",
            "shouldn": "should",
            "ain": "am",
        }.get(v, v)
        for k, v in _NEGATED_AUX.items()
    }
)


def _next_word(text: str, p: int, end: int) -> tuple[str, int, int] | None:
    m = _WORD_RE.match(text, p, end)
    if not m:
        return None
    return m.group(1).casefold().replace("’", "'"), m.start(1), m.end(1)


def _classify(  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    text: str,
    start: int,
    p: int,
    end: int,
    subject: str,
    person: Person,
    auxes: list[tuple[str, int]],
    negated: bool,
) -> Head | None:
    nxt = _next_word(text, p, end)
    if nxt is None:
        return None
    word, w_start, w_end = nxt

    def head(mode: Mode, tense: Tense, at: int) -> Head | None:
        if mode == "be":
            while (a := _ADVERB_RE.match(text, at, end)) is not None:
                at = a.end()
        at = _skip_space(text, at, end)
        key = _next_word(text, at, end)
        if key is None:
            return None
        return Head(subject, person, start, at, mode, tense, negated, key[0], aux)

    def after_word() -> tuple[str, int, int] | None:
        return _next_word(text, w_end, end)

    aux, aux_at = auxes[0] if auxes else ("", p)
    second = auxes[1][0] if len(auxes) > 1 else ""
    if aux in _MODALS or (aux == "'d" and word != "been"):
        return head("verb", "modal", w_start)
    if aux == "gotta" or (aux in ("have", "has") and word == "to"):
        return head("verb", "must", w_start)
    if aux == "used to":
        return head("verb", "used_to", w_start)
    if aux in ("will", "gonna", "going to") or second in ("going to", "gonna"):
        if word == "be":
            after = after_word()
            if after and after[0].endswith("ing"):
                return head("verb", "future", after[1])
            return head("be", "future", w_end)
        return head("verb", "future", w_start)
    if aux == "can":
        return head("verb", "can", w_start)
    if aux in ("am", "is", "are", "was", "were"):
        past = aux in ("was", "were")
        if word == "going" and not past:
            m = _GOING_TO_RE.match(text, w_end, end)
            if m:
                return head("verb", "future", m.end())  # "I'm definitely going to keep up with …"
        if word.endswith("ing") and word not in ING_ADJECTIVES:
            return head("verb", "past" if past else "progressive", w_start)
        return head("be", "past" if past else "present", w_start)
    if aux in ("have", "has", "had", "'d"):
        past = aux in ("had", "'d")
        if word == "been":
            after = after_word()
            if after and after[0].endswith("ing") and after[0] not in ING_ADJECTIVES:
                return head("verb", "past" if past else "perfect_prog", after[1])
            return head("be", "past" if past else "perfect", w_end)
        if word in ("got", "gotten") and not past:
            after = after_word()
            if after and after[0] == "to":
                return head("verb", "must", after[1])
            return head("have", "present", w_end)
        if word == "had":
            return head("have", "past" if past else "perfect", w_end)  # "I've always had a love for …"
        if word in PARTICIPLES or (word.endswith("ed") and word not in NOT_PAST_ED):
            return head("verb", "past" if past else "perfect", w_start)
        return head("have", "past" if past else "present", w_start)
    if aux in ("do", "does", "did") and negated and (second in ("have", "has") or word in ("have", "has")):
        at = w_start if second in ("have", "has") else w_end
        return head("have", "past" if aux == "did" else "present", at)  # "I don't have any pets"
    if aux in ("do", "does", "did"):
        tense: Tense = "past" if aux == "did" else "present"
        return head("verb", tense, w_start if negated else aux_at)
    # No auxiliary: the word is the main verb, or the possessive "have"/"got".
    if word in ("have", "has", "had", "got"):
        return head("have", "past" if word == "had" else "present", w_end)
    past_form = word in PAST_FORMS or (word.endswith("ed") and word not in NOT_PAST_ED)
    return head("verb", "past" if past_form else "present", w_start)


_GOING_TO_RE = re.compile(r"\s+to\s+(?!(?:the|a|an|my|our|his|her|their|see|be)\b)(?=[a-z]+\b)")
_MODALS = frozenset({"would", "could", "should", "might", "may", "must", "shall"})


def _skip_space(text: str, p: int, end: int) -> int:
    while p < end and text[p].isspace():
        p += 1
    return p
