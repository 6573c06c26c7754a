"""Text mechanics of the rule extractor: sentences with offsets, what to skip, and object
bounding/trimming.

Everything here works on offsets into the original text and never rewrites it, so evidence quotes
stay verbatim (``text[start:end]``).  Objects are cut out of the text and then only trimmed at their
ends: an object is always a substring of its evidence, which keeps it faithful to what was said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from engine.facts.rules.lexicon import REFERRING_STARTS, word_set

#: How far an object reaches: ``phrase`` to the clause's end; ``np`` a noun phrase (stops at
#: prepositions); ``name`` capitalised words; ``value`` a short value such as a date; ``pref`` a
#: phrase cut before the thing it is preferred to; ``event`` a phrase that keeps its time words
#: ("tournament next month").
ObjectKind = Literal["phrase", "np", "name", "value", "pref", "event"]

_ABBREVIATIONS = word_set("mr mrs ms dr st jr sr vs etc e.g i.e a.m p.m no prof approx u.s u.k fig mt ft inc ltd co")
_BOUNDARY_RE = re.compile(r"(?=[\s\"'”’)\]A-Z])(?:(?<=[.!?…])[\"'”’)\]]*\s+|\n\s*|(?<=[.!?…])(?=[A-Z][a-z]))")
#: Attachment notes an importer appends to a turn ("[shares a photo: …]"): machine-written, not the
#: speaker's.
_ANNOTATION_RE = re.compile(
    r"\[(?:shares?|shared|sends?|sent|attach(?:es|ed)?|image|photo|picture|video|file|sticker)"
    r"\b[^\[\]]{0,600}\]",
    re.IGNORECASE,
)
_QUOTE_RE = re.compile(r"(?=[\"“'])(?:\"[^\"\n]{1,400}\"|“[^”\n]{1,400}”|(?<![\w])'[^'\n]{1,200}'(?![\w]))")

#: A question by inversion ("do you…", "what do you…") even without a question mark.
_QUESTION_RE = re.compile(
    r"^\W*(?:(?:do|does|did|are|is|was|were|can|could|would|will|should|have|has|shall|may|might|"
    r"wanna|want)\s+(?:you|u|ya|i|we|they|he|she|it|your)\b|(?:what|why|how|where|who|which|when)"
    r"\s+"
    r"(?:do|does|did|are|is|was|were|can|could|would|will|should|have|has|about|if)\b|"
    r"any\s+(?:tips|advice|"
    r"ideas|plans|recommendations)\b|what's\b|how's\b|how\s+come\b)",
    re.IGNORECASE,
)
#: Conditionals, wishes and suppositions: nothing in such a sentence is asserted as true. "…, pretty
#: cool, huh?" asks nothing: a tag after a statement.
_TAG_QUESTION_RE = re.compile(
    r"[,–—-]\s*(?:(?:pretty|so|really)\s+\w+,?\s+)?(?:huh|right|eh|no|isn['’]t\s+it|"
    r"don['’]t\s+you\s+think|"
    r"you\s+know|ya\s+know|ok|okay|yeah)\s*\?$",
    re.IGNORECASE,
)
_HYPOTHETICAL_RE = re.compile(
    r"(?=[iuswhpngIUSWHPNG])\b(?:if|unless|suppose|supposing|imagine|wish|hypothetically|pretend|in\s+case|nếu|giá\s+mà|"
    r"giả\s+sử)\b",
    re.IGNORECASE,
)
_CONCESSIVE_RE = re.compile(r"(?:even|as)\s+$", re.IGNORECASE)
_REPORTING_RE = re.compile(
    r"(?=[stawrcmSTAWRCM])\b(?:said|says|say|told|tells|tell|asked|asks|wrote|writes|texted|replied|claims?|claimed|"
    r"thinks|thought|mentioned|reminded)\b",
    re.IGNORECASE,
)

CHANGE_CUE_RE = re.compile(
    r"(?=[nftascmbgkdđNFTASCMBGKDĐ])\b(?:now|nowadays|no\s+longer|from\s+now\s+on|these\s+days|any\s?more|switched|switching|"
    r"changed\s+to|change\s+to|started\s+using|start\s+using|moved\s+to|moving\s+to|new\s+job|"
    r"bây giờ|giờ đây|không còn|từ nay|dạo này|chuyển sang|đổi sang)\b",
    re.IGNORECASE,
)

# Clause-level stops for objects: punctuation, dashes, and subordinating words that open a new
# clause.
_STOP_PHRASE_RE = re.compile(
    r"(?=[,;:!?()\[\]….\s\-–—])(?:[,;:!?()\[\]…]|\.(?=\s|$)|\s[-–—]+\s|\s[-–—]{1,2}(?=\w)|(?<=\w)[-–—]+\s|"
    r"\s(?:because|cause|'cause|since|although|though|while|whereas|unless|until|whenever|which|"
    r"who|whom|"
    r"whose|where|just\s+to|in\s+order\s+to|that(?=\s+(?:I|we|you|he|she|they|it|is|was|are|were|"
    r"has|have|had|will|would|can|could|really|"
    r"just|always|never|helps|makes|keeps)\b)|so\s+that|but|yet|as\s+soon\s+as|as\s+well\s+as|"
    r"even\s+though|when|if|than|like\s+i)\b|"
    r"\s(?:and|or|so|then|plus)\s+(?=(?:i|i'm|i've|i'll|i'd|we|we're|we've|you|he|she|they|it|it's|"
    r"that|"
    r"this|there|my|our|his|her|their|then|also|now|still|just|really|im|ive|can't|it'll|let's|"
    r"gotta|"
    r"got|gonna|wanna|had|have|has|was|were|am|is|are|will|would|could|should|did|do|does|made|"
    r"make|makes|"
    r"hope|can)\b)|\s(?:and|but)\s*$|\s(?=(?-i:I|I'm|I've|I'd|I'll)\s)|\s(?:we|he|she|they)\s(?=\w))",
    re.IGNORECASE,
)
_TIME_STOP_RE = re.compile(
    r"\s(?:(?:about|around|over|almost|nearly|like|just|only)\s+(?=\w+\s+(?:days?|weeks?|months?|"
    r"years?)\s+ago))?"
    r"(?:yesterday|today|tonight|tomorrow|recently|lately|earlier\s+today|last\s+(?:week|weekend|"
    r"month|year|"
    r"night|time|summer|winter|spring|fall|autumn|\w+day)|next\s+(?:week|weekend|month|year|summer|"
    r"winter|spring|"
    r"fall|autumn|\w+day)|this\s+(?:past\s+|coming\s+)?(?:week|weekend|month|year|morning|"
    r"afternoon|evening|summer)|(?:a\s+few|a\s+couple\s+of|\w+)\s+(?:days?|weeks?|months?|years?)"
    r"\s+ago|"
    r"the\s+other\s+day|a\s+while\s+(?:ago|back)|not\s+(?:so\s+)?long\s+ago|"
    r"for\s+the\s+first\s+time|every\s+\w+|"
    r"daily|weekly)\b",
    re.IGNORECASE,
)
_PREF_STOP_RE = re.compile(
    r"\s(?:over|than|rather\s+than|instead\s+of|compared\s+to|vs\.?|versus|to|when|for)\s",
    re.IGNORECASE,
)
_NP_STOP_RE = re.compile(
    r"\s(?:from|with|for|to|at|in|on|since|during|after|before|by|as|like|into|onto|over|through|"
    r"via|"
    r"about|around|near|and|or|that|this|last|next|every|each|yesterday|today|tomorrow|tonight|"
    r"recently|brings|"
    r"keep|make|help|give|makes|keeps|helps|gives|means|takes|drives|lets|feels|looks|seems|"
    r"lately|again|now|right|soon|who|which|is|are|was|were|has|have|had|will|would|can|could|'s|"
    r"’s|of(?=\s+(?:it|that|this|them|everything|what)\b))\b",
    re.IGNORECASE,
)
_LEADING_FILLER_RE = re.compile(
    r"^(?:(?:lots\s+of|a\s+lot\s+of|a\s+bit\s+of|kind\s+of|sort\s+of|a\s+few|a\s+couple\s+of|"
    r"a\s+bunch\s+of|plenty\s+of|tons\s+of|a|an|the|some|really|so|very|just|"
    r"totally|absolutely|also|too|quite|pretty|kinda|sorta|actually|still|even|already|definitely|"
    r"truly|super|all|such|few|of)\s+)+",
    re.IGNORECASE,
)
_TRAILING_FILLER_RE = re.compile(
    r"(?:\s+(?:so\s+much|a\s+lot|a\s+ton|lots|very\s+much|too|as\s+well|also|lately|these\s+days|"
    r"right\s+now|now|anymore|any\s+more|again|though|haha+|lol|honestly|actually|already|"
    r"for\s+sure|tbh|"
    r"today|yesterday|tonight|tomorrow|recently|even\s+more|more|even|now\s+and\s+then|knowing|"
    r"seeing|hearing|ever|at\s+all|really|much|as\s+usual|in\s+(?:this|that|some)\s+way|"
    r"so\s+far|soon|later|after\s+(?:work|school|class)|a\s+(?:few|couple\s+of)\s+times|\w+\s+times|once|twice|"
    r"(?:last|this|next|past)\s+(?:week|weekend|month|year|night|summer|winter|spring|fall|autumn|"
    r"time|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|\w+day)|"
    r"(?:a\s+(?:few|couple\s+of)|\w+)\s+(?:days?|weeks?|weekends?|months?|years?)\s+(?:ago|later|"
    r"from\s+now)|a\s+while\s+(?:ago|"
    r"back)|"
    r"the\s+other\s+day|earlier|before|at\s+first|first|for\s+the\s+first\s+time|"
    # (Not "for you", "with you": an object ending so is about the listener and is rejected.)
    r"on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|for\s+(?:me|us)|"
    r"at\s+the\s+moment|every\s+\w+))+$",
    re.IGNORECASE,
)
_TRAILING_SOFT_RE = re.compile(
    r"(?:\s+(?:so\s+much|a\s+lot|too|as\s+well|also|though|haha+|lol|honestly|actually|for\s+sure|"
    r"tbh|really))+$",
    re.IGNORECASE,
)
_TRAILING_PUNCT_RE = re.compile(r"[\s\-–—.,;:!?'\"“”’)*~]+$|(?:\s+[^\w\s]+)+$")
_COORDINATION_RE = re.compile(r"\s(?:and|or|but|while|because|so)\s")
_FUNCTION_WORDS = word_set(
    "a an the of to in on at for with and or but my our his her their your its is are was were be "
    "been some any more most very so too just really much many"
)
#: Last words that leave an object dangling or pointing elsewhere ("see them", "stand up for what").
_DANGLING = word_set("what which who how where when why and or but")
_DANGLING_QUESTION_RE = re.compile(r"\s+(?:and|or)\s+(?:how|what|why|where|when|who)(?:\s+[a-z]+)?$", re.IGNORECASE)
_LEADING_TIME_RE = re.compile(
    r"(?:(?:last|this|next|past)\s+(?:week|weekend|month|year|night|time|summer|winter|spring|fall|"
    r"autumn|\w+day)|"
    r"yesterday|today|tonight|tomorrow|recently|lately|earlier|soon|now|(?:a\s+few|a\s+couple\s+of|"
    r"\w+)\s+"
    r"(?:days?|weeks?|months?|years?)\s+ago)\b",
    re.IGNORECASE,
)
_REFERRING_ENDS = word_set(
    "you ya u yourself it them that this him her us me there these those what which who whom "
    "where when why how for to of with at in on by from about into the a an my your our his their "
    "its and or but so as than any some more one we they he she i"
)
_MAX_WORDS: dict[ObjectKind, int] = {
    "phrase": 12,
    "np": 7,
    "name": 4,
    "value": 6,
    "pref": 8,
    "event": 10,
}


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open character range ``[start, end)`` of the source text."""

    start: int
    end: int


def sentences(text: str, start: int, end: int) -> list[Span]:
    """The sentences of ``text[start:end]``, trimmed of surrounding whitespace, attachment notes
    removed.
    """
    pieces: list[Span] = []
    cursor = start
    for part_start, part_end in _without_annotations(text, start, end):
        cursor = part_start
        for m in _BOUNDARY_RE.finditer(text, part_start, part_end):
            if _is_abbreviation(text, cursor, m.start()):
                continue
            pieces.append(Span(cursor, m.start()))
            cursor = m.end()
        pieces.append(Span(cursor, part_end))
    out: list[Span] = []
    for span in pieces:
        s, e = span.start, span.end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.extend(_split_question_tail(text, s, e))
    return out


#: A dash between a statement and a question that follows it in the same sentence.
_DASH_RE = re.compile(r"\s[-–—]{1,2}\s")


def _split_question_tail(text: str, s: int, e: int) -> tuple[Span, ...]:
    """ "I finished another pottery project - want to see a pic?": the question after the last dash asks; the
    statement before it still states.  Anything else is one sentence."""
    if text[e - 1] != "?":
        return (Span(s, e),)
    last = None
    for m in _DASH_RE.finditer(text, s, e):
        last = m
    if last is None or len(text[s : last.start()].split()) < 3 or "?" in text[s : last.start()]:
        return (Span(s, e),)
    return Span(s, last.start()), Span(last.end(), e)


def _without_annotations(text: str, start: int, end: int) -> list[tuple[int, int]]:
    parts: list[tuple[int, int]] = []
    cursor = start
    for m in _ANNOTATION_RE.finditer(text, start, end):
        parts.append((cursor, m.start()))
        cursor = m.end()
    parts.append((cursor, end))
    return [(a, b) for a, b in parts if b > a]


_INITIALS_RE = re.compile(r"(?:[a-z]\.)+[a-z]")


def _is_abbreviation(text: str, sentence_start: int, boundary: int) -> bool:
    """True when the full stop before ``boundary`` ends an abbreviation ("Dr.", "e.g.") or an
    initial."""
    if boundary == 0 or text[boundary - 1] != ".":
        return False
    m = re.search(r"([A-Za-z.]+)\.$", text[max(sentence_start, boundary - 12) : boundary])
    if not m:
        return False
    word = m.group(1).casefold()
    # an initial ("J. Smith") or a run of them ("J.K. Rowling", "J.R.R. Tolkien")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or _INITIALS_RE.fullmatch(word) is not None


def skip_reason(sentence: str) -> str | None:
    """Why a sentence states nothing to remember (a question or a hypothetical), or None."""
    stripped = sentence.rstrip(" \"'”’)")
    if (stripped.endswith("?") and not _TAG_QUESTION_RE.search(stripped)) or _QUESTION_RE.match(sentence):
        return "question"
    for m in _HYPOTHETICAL_RE.finditer(sentence):
        # "even if" and "as if" concede or compare; they do not make the sentence hypothetical.  "let me know if",
        # "I doubt if" ask a question inside one clause: that clause states nothing (see embedded_questions), the
        # others still do.
        if m.group().casefold() != "if" or not (
            _CONCESSIVE_RE.search(sentence, 0, m.start()) or _EMBEDDED_IF_RE.search(sentence, 0, m.start())
        ):
            return "hypothetical"
    return None


#: A verb of knowing or asking right before "if": the "if" opens an embedded question, not a condition.
_EMBEDDED_IF_RE = re.compile(
    r"\b(?:know|see|ask|asked|asking|check|checking|doubt|wonder|wondering|wondered|sure|decide|deciding|tell|"
    r"find\s+out|curious|unsure)\s+$",
    re.IGNORECASE,
)
_EMBEDDED_CLAUSE_RE = re.compile(r"\bif\b[^,;:.!?()]*", re.IGNORECASE)


def embedded_questions(text: str, start: int, end: int) -> list[Span]:
    """The clauses of ``text[start:end]`` that ask rather than state: "if …" after a verb of knowing or asking, up
    to the next clause break ("let me know *if you want suggestions*", "I doubt *if I'm making a difference*")."""
    out: list[Span] = []
    for m in _EMBEDDED_CLAUSE_RE.finditer(text, start, end):
        if _EMBEDDED_IF_RE.search(text, max(start, m.start() - 20), m.start()):
            out.append(Span(m.start(), m.end()))
    return out


def quoted_spans(text: str, start: int, end: int) -> list[Span]:
    """Quoted passages inside ``text[start:end]`` (others' words, or titles)."""
    return [Span(m.start(), m.end()) for m in _QUOTE_RE.finditer(text, start, end)]


def has_reporting(text: str, start: int, end: int) -> bool:
    """True when the sentence contains a reporting verb at all (then clause starts are checked one
    by one).
    """
    return _REPORTING_RE.search(text, start, end) is not None


def reported_before(text: str, sentence_start: int, pos: int) -> bool:
    """True when someone else's words are being reported before ``pos`` ("she says I …")."""
    before = text[sentence_start:pos]
    found = list(_REPORTING_RE.finditer(before))
    if not found:
        return False
    m = found[-1]
    # "I told her I …" and "excited to tell you I …" report the speaker's own words: still their
    # statement.
    return not re.search(r"(?:\b(?:i|we)\s+(?:\w+\s+)?|\bto\s+)$", before[: m.start()], re.IGNORECASE)


def bound_object(text: str, start: int, limit: int, kind: ObjectKind) -> tuple[int, int]:
    """The raw extent of an object that begins at ``start``: up to the first clause stop before
    ``limit``.
    """
    m = _STOP_PHRASE_RE.search(text, start, limit)
    end = m.start() if m else limit
    for q in _QUOTE_RE.finditer(text, start, limit):
        # A quoted title inside the object is kept whole ("reading "The Name of the Wind" by …").
        if q.start() < end < q.end() or (q.start() == start and end < q.end()):
            n = _STOP_PHRASE_RE.search(text, q.end(), limit)
            end = n.start() if n else limit
            break
        if q.start() >= end:
            break
    extra = {"np": _NP_STOP_RE, "name": _NP_STOP_RE, "pref": _PREF_STOP_RE}.get(kind)
    stops = ([_TIME_STOP_RE] if kind != "event" else []) + ([extra] if extra is not None else [])
    for stop in stops:
        for n in stop.finditer(text, start, end):
            if not any(q.start() < n.start() < q.end() for q in _QUOTE_RE.finditer(text, start, end)):
                end = n.start()
                break
    return start, end


#: Nouns that only react to what someone else said when nothing qualifies them.
_REACTION_NOUNS = frozenset(["idea", "thought", "sound", "vibe", "vibes", "news", "pic", "pics", "photo", "photos"])


def clean_object(raw: str, kind: ObjectKind) -> str | None:  # noqa: C901 — a cascade of rules read top to bottom; not yet split
    """Trim filler from an object and reject what names nothing (pronouns, empty, too long)."""
    obj = raw.strip()
    for _ in range(3):
        before = obj
        obj = _LEADING_FILLER_RE.sub("", obj)
        obj = _TRAILING_PUNCT_RE.sub("", obj)
        obj = (_TRAILING_SOFT_RE if kind == "event" else _TRAILING_FILLER_RE).sub("", obj)
        obj = obj.strip()
        if obj == before:
            break
    if _LEADING_TIME_RE.match(obj):
        return None  # "I graduated last week": the words after the verb are a time, not an object
    for open_q, close_q in (('"', '"'), ("“", "”")):
        if (obj.count(open_q) + (obj.count(close_q) if close_q != open_q else 0)) % 2:
            obj = obj + close_q if obj.startswith(open_q) or open_q in obj else obj.lstrip(open_q)
    if not obj:
        return None
    words = obj.split()
    if len(words) >= 3 and words[0].casefold() in ("this", "these", "that", "those") and words[1].isalpha():
        # "this amazing deal": the described thing is named well enough; "this one", "this book" are
        # not.
        words = words[1:]
        obj = " ".join(words)
    if len(words) >= 3 and words[-1].casefold() in ("there", "here"):
        # "stoked for my game there": the place was named before; the rest still names the thing
        words = words[:-1]
        obj = " ".join(words)
    if len(words) >= 2 and words[0].casefold() == "another" and words[1].casefold() not in _FUNCTION_WORDS | {"one"}:
        # "another pottery project" names the kind of thing; "another one" does not
        words = words[1:]
        obj = " ".join(words)
    if len(words) == 1 and words[0].casefold() in ("few", "couple", "lot", "bunch", "ton", "tons"):
        return None  # "I'm planning a few": a quantity without what it counts
    first = words[0].casefold().strip("'\"“”‘’")
    if len(words) <= 2 and first in _REACTION_NOUNS:
        return None  # "I love the idea!", "love the thought, Sam": a reply, the thing is elsewhere
    if first in REFERRING_STARTS or first.replace("’", "'") in REFERRING_STARTS:
        return None
    if all(w.casefold() in _FUNCTION_WORDS for w in words):
        return None
    while len(words) > 2 and words[-1].casefold() in _DANGLING and words[-2].casefold() in _DANGLING | {"and", "or"}:
        words = words[:-2]  # "teach kids about veterans and what …" was cut before its clause
        obj = " ".join(words)
    cut = _DANGLING_QUESTION_RE.search(obj) if (" and " in obj or " or " in obj) else None
    if cut is not None and len(obj[: cut.start()].split()) >= 2:
        return clean_object(obj[: cut.start()], kind)  # "their dedication and how well (they worked)"
    if words[-1].casefold().strip(".!") in _REFERRING_ENDS:
        # "hiking to the top and seeing this": keep the coordinated part that names something, if
        # any.
        head, sep, _tail = obj.rpartition(" and ")
        if sep and len(head.split()) >= 2:
            return clean_object(head, kind)
        return None  # about the listener, or pointing back at something unnamed ("see them")
    if len(words) > _MAX_WORDS[kind]:
        # A long phrase is usually two coordinated ones ("explored the coast … and hit some national
        # parks"): keep the first when it stands on its own, else give up rather than keep a run-on.
        cut = _COORDINATION_RE.search(obj)
        if kind not in ("phrase", "event") or cut is None or len(obj[: cut.start()].split()) < 2:
            return None
        return clean_object(obj[: cut.start()], kind)
    if kind == "name" and not all(w[:1].isupper() or w in ("de", "van", "von", "da", "di", "le") for w in words):
        return None
    if not any(ch.isalnum() for ch in obj):
        return None
    return obj


def extract_object(text: str, start: int, limit: int, kind: ObjectKind) -> str | None:
    """Bound and clean the object starting at ``start``; None when there is none worth keeping."""
    a, b = bound_object(text, start, limit, kind)
    if b <= a:
        return None
    return clean_object(text[a:b], kind)


def has_change_cue(evidence: str) -> bool:
    """True when the evidence carries a change cue ("now", "switched to", "no longer", …), DESIGN
    §3."""
    return CHANGE_CUE_RE.search(evidence) is not None
