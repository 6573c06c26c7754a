"""Shared pieces of the life shapes: reading a place, an organisation or a noun phrase after a trigger, and
building a :class:`~engine.facts.rules.model.Found` from a context.

Readers return ``(value, end)`` with ``value`` a verbatim substring of the text (trimmed at its ends only), so a
value is always part of its evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from engine.facts.rules.life.context import Context, Time, clause_end, clause_start, context
from engine.facts.rules.life.words import COMMON_WORDS
from engine.facts.rules.model import Found, Sentence
from engine.facts.rules.text import has_change_cue

#: Words that end a value: prepositions, conjunctions, time words, fillers.
_STOP_WORDS = frozenset(
    """with by for to from and but or so because bc since now then last next this that these those which who
    when where while until till after before during about around as at on in into onto of than like lol haha
    tbh btw pls though although yet too also just already still again anymore anyway alone together myself
    ourselves himself herself today tomorrow yesterday tonight soon later ago here there is are was were be
    been am has have had will would can could should its it's my our your his her their the a an every each
    per via plus rs sha o jare abeg oya la lah""".split()
)
_TIME_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
    january february march april may june july august september october november december jan feb mar apr jun
    jul aug sep sept oct nov dec""".split()
)
_CONNECTORS = frozenset("of de da do dos das del della di du la le el al van von der den y e & and".split())
_WORD_RE = re.compile(r"[\w'’&.-]+|[^\w\s]", re.UNICODE)
_DIGIT_RE = re.compile(r"\d")
#: A speaker correcting themselves: the new value replaces what they said before.
_CORRECTION_RE = re.compile(
    r"\b(?:sorry|actually|i\s+mean|i\s+meant|correction|i\s+tell\s+a\s+lie|wait\s+no)\b|"
    r",\s*not\s+(?!(?:proud|sure|bad|great|good|much|really|ideal|happy|fun|easy|cheap|ok|okay|true|a\s+fan)\b)"
    r"(?:the\s+|my\s+|a\s+|an\s+)?(?:(?-i:[A-Z])|\d|\w+\s*[,.!?]|\w+$)",
    re.IGNORECASE,
)
_BOUNDARY_CHARS = set(',;:.!?()[]"“”—–')


def words_from(text: str, pos: int, end: int) -> Iterator[re.Match[str]]:
    """Word and punctuation tokens of ``text[pos:end]``."""
    return _WORD_RE.finditer(text, pos, end)


@lru_cache(maxsize=512)
def words_of(low: str) -> frozenset[str]:
    """The lower-case words of a sentence, for the cheap gates that keep most patterns from running at all."""
    return frozenset(_GATE_WORD_RE.findall(low))


_GATE_WORD_RE = re.compile(r"[a-zà-ÿ0-9]+(?:['’-][a-z]+)*")


@lru_cache(maxsize=256)
def lowercase_writer(text: str) -> bool:
    """True when the message is written mostly in lower case (names and places lose their capitals)."""
    letters = list(re.findall(r"\b[A-Za-z][a-z]+\b", text))
    if len(letters) < 4:
        return False
    caps = sum(1 for w in letters if w[0].isupper())
    return caps / len(letters) < 0.08


def read_name(text: str, pos: int, end: int, *, lowercase_ok: bool, max_words: int = 5) -> tuple[str, int] | None:
    """A proper name at ``pos`` ("Ras Al Khor", "Forvis Mazars", "St James's", "Patel & Co CPA"); lower-case
    words count when ``lowercase_ok`` and they are not common words.  Stops at punctuation and stop words."""
    while pos < end and text[pos].isspace():
        pos += 1
    if pos < end and text[pos] in "\"“'‘":
        closing = {'"': '"', "“": "”", "'": "'", "‘": "’"}[text[pos]]
        close = text.find(closing, pos + 1, end)
        if close > pos + 1 and close - pos <= 60:
            return text[pos + 1 : close], close + 1
    parts: list[tuple[int, int]] = []
    for m in words_from(text, pos, end):
        word = m.group()
        low = word.casefold().strip(".")
        if word in _BOUNDARY_CHARS or word in ("'", "’"):
            break
        if _DIGIT_RE.search(word) and not parts:
            break
        capital = word[:1].isupper() or (word[:1].isdigit() and bool(parts))
        if parts and low in _CONNECTORS and not (low == "and" and not _next_is_capital(text, m.end(), end)):
            parts.append((m.start(), m.end()))
            continue
        if low in _TIME_WORDS and (parts or not capital):
            break
        if (capital and low not in ("i", "i'm", "im")) or (
            lowercase_ok
            and low not in _STOP_WORDS
            and low not in COMMON_WORDS
            and low not in _TIME_WORDS
            and word.replace("'", "").replace("’", "").replace("-", "").isalpha()
        ):
            parts.append((m.start(), m.end()))
        else:
            break
        if len(parts) >= max_words:
            break
    while parts and text[parts[-1][0] : parts[-1][1]].casefold() in _CONNECTORS:
        parts.pop()
    if not parts:
        return None
    a, b = parts[0][0], parts[-1][1]
    value = text[a:b].rstrip(".'’")
    return (value, a + len(value)) if value else None


def _next_is_capital(text: str, pos: int, end: int) -> bool:
    m = re.compile(r"\s*(\S)").match(text, pos, end)
    return bool(m and m.group(1).isupper())


def read_phrase(
    text: str, pos: int, end: int, *, max_words: int = 8, stops: frozenset[str] = frozenset()
) -> str | None:
    """A short phrase at ``pos`` up to punctuation or a clause word ("senior backend engineer")."""
    a = b = -1
    for count, m in enumerate(words_from(text, pos, end), start=1):
        word = m.group()
        low = word.casefold()
        if word in _BOUNDARY_CHARS or low in stops:
            break
        if low in ("and", "but", "so", "because", "bc", "which", "who", "when", "while", "if", "since", "lol"):
            break
        if a < 0:
            a = m.start()
        b = m.end()
        if count >= max_words:
            break
    if a < 0:
        return None
    return text[a:b].strip(" .'’\"") or None


#: A month's name or its abbreviation, and a weekday: the fragments the date-reading shapes share.
MONTH_WORD = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
WEEKDAY_WORD = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
#: A start said apart from the news of the job or plan: "I join on the 3rd of November", "desk job, start 1st
#: december", "I start on Monday" — the verb, then a date within a few words.
LATER_START_RE = re.compile(
    r"\b(?:(?:i|we)\s+)?(?:start|starts|starting|join|joining|begin|begins)\b(?:\s+(?:work|there|at|with|in)\b"
    r"(?:\s+[\w&'’-]+){0,4}?)?\s+(?:on\s+|from\s+)?(?:(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+of)?\s+"
    + MONTH_WORD
    + r"\b|"
    + WEEKDAY_WORD
    + r"\b|next\s+\w+|tomorrow|"
    + MONTH_WORD
    + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b)",
    re.IGNORECASE,
)


def make(
    ctx: Context,
    s: Sentence,
    predicate: str,
    obj: str,
    rule: str,
    *,
    end: int,
    negated: bool | None = None,
    change: bool = False,
    subject: str | None = None,
    time: Time | None = None,
) -> Found:
    """A Found for ``ctx``'s subject, spanning the clause from its start to the end of the value's clause."""
    stop = clause_end(s.text, end, s.end) if end < s.end else s.end
    clause = s.text[ctx.start : max(stop, end)]
    tail = s.text[ctx.start : min(s.end, max(stop, end) + 25)]  # ", not Thursday" follows the clause it corrects
    change = change or has_change_cue(clause) or _CORRECTION_RE.search(tail) is not None
    return Found(
        subject=subject if subject is not None else ctx.subject,
        predicate=predicate,
        object=obj.strip(),
        rule=f"life.{rule}",
        negated=ctx.negated if negated is None else negated,
        change=change,
        span=(ctx.start, max(stop, end)),
        time=time or ctx.time,
    )


def speaker_ctx(s: Sentence, pos: int, time: Time = "present") -> Context | None:
    """The speaker's context at ``pos`` for a clause whose subject is the speaker whatever its words ("our flat
    in …", "here in …", "car note for the civic"): the parsed one when it is the speaker's, else a plain one; None
    only when the clause is unreal."""
    ctx = context(s.text, s.start, pos, s.speaker, verb_time=time)
    if ctx is None or ctx.subject != s.speaker:
        ctx = Context(
            s.speaker,
            clause_start(s.text, s.start, pos),
            bool(ctx and ctx.negated),
            time,
            bool(ctx and ctx.irrealis),
            False,
        )
    return None if ctx.irrealis else ctx


def ctx_at(s: Sentence, pos: int, *, time: Time = "present") -> Context | None:
    """The context of a trigger at ``pos`` of the sentence; None when it is not attributable or is irrealis."""
    ctx = context(s.text, s.start, pos, s.speaker, verb_time=time)
    if ctx is None or ctx.irrealis:
        return None
    return ctx
