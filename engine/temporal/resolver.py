"""The rule table and its two entry points: :func:`resolve` and :func:`find_mentions`.

A rule is a precompiled regex plus a handler that turns its match into a span.  ``resolve`` tries
the rules as full matches of the whole expression; ``find_mentions`` runs them over free text and
keeps the longest non-overlapping matches.  The same handlers serve both, so a phrase found in a
chat turn resolves exactly as it would when asked for directly.

Speed comes from not running most rules at all: a text's letter-words are collected once, and a rule
runs only when one of its head words ("week", "friday", "tonight", …) is present, or a digit for the
numeric ones.  Most chat sentences contain none and cost one tokenising pass.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any, cast

from engine.errors import ValidationError
from engine.temporal.arithmetic import Prefer, Span, day_span, part_of, union, weekend_span
from engine.temporal.grammar import (
    BARE_HOUR,
    CLOCK,
    DAYNUM,
    DAYREF,
    MONTH,
    MONTHREF,
    PART_WORD,
    PERIOD,
    SEASONREF,
    WEEKDAY,
    YEAR,
    Context,
    clock_in_part,
    minute_span,
    nfc_lower,
    parse_clock,
    part_span,
    resolve_base,
    resolve_day,
    resolve_month,
    resolve_period,
    resolve_season,
    rolling,
    shifted,
    word_before,
)
from engine.temporal.lexicon import (
    FUZZY_NUMBERS,
    HEAD_WORDS,
    MONTHS,
    NUMBER_WORDS,
    SEASONS,
    UNIT_WORDS,
    VI_NUMBERS,
    VI_PHRASES,
    VI_UNITS,
    WEEKDAYS,
    alternation,
    squash,
    unnamed,
    vi,
)
from engine.temporal.types import TemporalMention, TimeRange

_FLAGS = re.IGNORECASE
_B = r"(?<!\w)"
_E = r"(?!\w)"
_NUM = rf"(?P<num>{alternation(NUMBER_WORDS)}|\d{{1,4}})"
_UNIT = rf"(?P<unit>{alternation(UNIT_WORDS)})(?!\w)"
_AT = r"(?:(?:at|around|@)\s*)"

Handler = Callable[[re.Match[str], Context], Span | None]


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of time expression: pattern, handler, and the words it cannot match without."""

    name: str
    regex: re.Pattern[str]
    handler: Handler
    heads: frozenset[str]
    #: A cheap pattern that lets the rule run without a head word (numeric dates, clocks, years).
    shape: re.Pattern[str] | None = None


def _count(text: str) -> tuple[int, bool]:
    """The number a count phrase stands for, and whether it is fuzzy ("a few")."""
    key = squash(text)
    if key.isdigit():
        return int(key), False
    return NUMBER_WORDS[key], key in FUZZY_NUMBERS


def _shift(ctx: Context, count: int, fuzzy: bool, unit: str, sign: int) -> Span | None:
    """A shift by ``count`` units; a fuzzy count covers count−1 … count+1 units as one range."""
    if not fuzzy:
        return shifted(ctx, sign * count, unit)
    spans = [shifted(ctx, sign * n, unit) for n in (count - 1, count + 1)]
    present = [s for s in spans if s is not None]
    return union(present) if len(present) == 2 else None


# -- handlers --------------------------------------------------------------------------------------
def _ago(m: re.Match[str], ctx: Context) -> Span | None:
    count, fuzzy = _count(m.group("num"))
    sign = -1 if squash(m.group("dir")) in ("ago", "back") else 1
    return _shift(ctx, count, fuzzy, UNIT_WORDS[m.group("unit").lower()], sign)


def _in(m: re.Match[str], ctx: Context) -> Span | None:
    count, fuzzy = _count(m.group("num"))
    return _shift(ctx, count, fuzzy, UNIT_WORDS[m.group("unit").lower()], 1)


_BARE_ROLLING_UNITS = frozenset({"hour", "week", "fortnight", "month", "year"})


def _rolling(m: re.Match[str], ctx: Context) -> Span | None:
    unit_word = m.group("unit").lower()
    unit = UNIT_WORDS[unit_word]
    direction = m.groupdict().get("rdir")
    sign = -1 if direction and direction.lower() in ("past", "last") else 1
    if m.group("num") is None:
        # "the past week" — but not "the last day (of school)" nor the narrative "the next week".
        if direction is None or direction.lower() == "next" or unit_word not in _BARE_ROLLING_UNITS:
            return None
        return rolling(ctx, sign, unit)
    count, _ = _count(m.group("num"))
    return rolling(ctx, sign * count, unit)


def _day(m: re.Match[str], ctx: Context) -> Span | None:
    day = resolve_day(ctx, m.group("day"), m.start("day"))
    return day_span(day, ctx.tz) if day else None


def _day_time(m: re.Match[str], ctx: Context) -> Span | None:
    key = "" if m.group("day") else "2"
    day = resolve_day(ctx, m.group("day" + key), m.start("day" + key))
    clock = parse_clock(m.group("time" + key))
    if day is None or clock is None:
        return None
    return minute_span(day, clock, ctx.tz)


_LETTER = re.compile(r"[a-z]", _FLAGS)


def _bare_day(m: re.Match[str], ctx: Context) -> Span | None:
    """ "the 10th", "on the 14th", "Saturday the 26th": the nearest date with that day of the month on the
    preferred side of today (today counts as both); with a weekday, the nearest such date on that weekday
    within a year, else the nearest one at all."""
    day = int(m.group("bd"))
    if not 1 <= day <= 31:
        return None
    weekday = WEEKDAYS.get(m.group("bwd").lower().rstrip(".")) if m.group("bwd") else None
    step = -1 if ctx.prefer == "past" else 1
    today = ctx.today
    first: date | None = None
    year, month = today.year, today.month
    for _ in range(13):
        try:
            candidate = date(year, month, day)
        except ValueError:
            candidate = None
        if candidate is not None and ((step < 0 and candidate <= today) or (step > 0 and candidate >= today)):
            if first is None:
                first = candidate
            if weekday is None or candidate.weekday() == weekday:
                return day_span(candidate, ctx.tz)
        month += step
        if month == 0:
            year, month = year - 1, 12
        elif month == 13:
            year, month = year + 1, 1
    return day_span(first, ctx.tz) if first is not None else None


def _time(m: re.Match[str], ctx: Context) -> Span | None:
    text = m.group("time")
    clock = parse_clock(text)
    if clock is None:
        return None
    if ctx.scanning and not m.group("at") and not _LETTER.search(text):
        return None  # a bare "3:16" in prose is as likely a verse, a ratio or a score as a time
    day = ctx.today
    if clock.midnight:
        # Midnight names a day boundary: the one just passed (prefer past) or the one ending today.
        return minute_span(day if ctx.prefer == "future" else day - timedelta(days=1), clock, ctx.tz)
    return minute_span(day, clock, ctx.tz)


def _part(m: re.Match[str], ctx: Context) -> Span | None:
    fixed = m.group("fixed")
    if fixed:
        key = squash(fixed)
        day = ctx.today - timedelta(days=1) if key == "last night" else ctx.today
        part = "night"
    elif m.group("tpart"):
        day, part = ctx.today, m.group("tpart").lower()
    else:
        resolved = resolve_day(ctx, m.group("pday"), m.start("pday"))
        if resolved is None:
            return None
        day, part = resolved, m.group("ppart").lower()
    if m.group("ptime"):
        clock = parse_clock(m.group("ptime"))
        return clock_in_part(day, part, clock, ctx.tz) if clock else None
    return part_span(day, part, ctx.tz)


def _the_weekend(m: re.Match[str], ctx: Context) -> Span | None:
    """The weekend of "over the weekend": the latest begun (past) or the first not over (future)."""
    today = ctx.today
    on_weekend = today.weekday() >= 5
    if ctx.prefer == "past":
        return weekend_span(today if on_weekend else today - timedelta(days=7), ctx.tz)
    return weekend_span(today, ctx.tz)


_PERIOD_RE = re.compile(PERIOD, _FLAGS)
_MONTHREF_RE = re.compile(MONTHREF, _FLAGS)
_SEASONREF_RE = re.compile(SEASONREF, _FLAGS)


def _period(m: re.Match[str], ctx: Context) -> Span | None:
    inner = _PERIOD_RE.fullmatch(m.group("ref"))
    return resolve_period(ctx, inner) if inner else None


def _month(m: re.Match[str], ctx: Context) -> Span | None:
    inner = _MONTHREF_RE.fullmatch(m.group("ref"))
    return resolve_month(ctx, inner, m.start("ref")) if inner else None


def _season(m: re.Match[str], ctx: Context) -> Span | None:
    inner = _SEASONREF_RE.fullmatch(m.group("ref"))
    return resolve_season(ctx, inner) if inner else None


#: Words before a bare year that make it a year ("since 2016", "of 2022"), besides in/during.
_YEAR_CUES = frozenset({"since", "until", "till", "by", "before", "after", "from", "of", "around"})
_NOT_PLURAL_NOUNS = frozenset({"was", "is", "has", "as", "us", "its", "his", "this", "yes", "does"})
_NEXT_WORD = re.compile(r"\s+([a-z]+)\b")


def _year(m: re.Match[str], ctx: Context) -> Span | None:
    if ctx.text is not None:
        if not m.group("yprep") and word_before(ctx.text, m.start()) not in _YEAR_CUES:
            return None  # a bare four-digit number is more often a count than a year
        following = _NEXT_WORD.match(ctx.text, m.end())
        word = following.group(1) if following else ""
        if word.endswith("s") and word not in _NOT_PLURAL_NOUNS:
            return None  # "in 2000 words", "in 1990 dollars"
    return resolve_base(ctx, m.group("year"))


_EDGE_PARTS = {"beginning": "early", "start": "early", "middle": "mid", "end": "late"}


def _part_of(m: re.Match[str], ctx: Context) -> Span | None:
    part = (m.group("part") or "").lower() or _EDGE_PARTS[m.group("edge").lower()]
    base_text = m.group("base")
    if ctx.scanning and part == "late" and squash(base_text) == "last week":
        return None  # "I was late last week" is about being late
    base = resolve_base(ctx, base_text, m.start("base"))
    if base is None:
        return None
    if part == "early":
        return part_of(base, "early", ctx.tz)
    return part_of(base, "mid" if part == "mid" else "late", ctx.tz)


def _fuzzy(m: re.Match[str], ctx: Context) -> Span | None:
    anchor, today, tz = ctx.anchor, ctx.today, ctx.tz
    if m.group("recent"):
        # "recently": the thirty days before the anchor, a deliberately generous window.
        return Span(datetime.combine(today - timedelta(days=30), anchor.timetz()), anchor, "range")
    if m.group("other"):
        # "the other day": some day within the past week.
        return Span(day_span(today - timedelta(days=7), tz).start, day_span(today, tz).start, "range")
    base_key = squash(m.group("elbase"))
    if base_key == "today":
        base: Span | None = day_span(today, tz)
    elif base_key == "tonight":
        base = part_span(today, "night", tz)
    elif base_key.split()[-1] in ("morning", "afternoon", "evening"):
        base = part_span(today, base_key.split()[-1], tz)
    else:
        base = resolve_base(ctx, base_key)
    if base is None:
        return None
    if m.group("el").lower() == "earlier":
        start, end = base.start, min(anchor, base.end)
    else:
        start, end = max(anchor, base.start), base.end
    return Span(start, end, "range") if start < end else Span(base.start, base.end, "range")


def _vi_phrase(m: re.Match[str], ctx: Context) -> Span | None:
    english = VI_PHRASES[nfc_lower(m.group("vp"))]
    return _resolve_text(english, Context(ctx.anchor, ctx.prefer))


def _vi_shift(m: re.Match[str], ctx: Context) -> Span | None:
    number = nfc_lower(m.group("vn"))
    count, fuzzy = (int(number), False) if number.isdigit() else (VI_NUMBERS[number], number in ("vài", "mấy"))
    unit = VI_UNITS[nfc_lower(m.group("vu"))]
    sign = -1 if nfc_lower(m.group("vd")) == "trước" else 1
    return _shift(ctx, count, fuzzy, unit, sign)


# -- the table -------------------------------------------------------------------------------------
def _easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 19 * l_) // 433
    month = (h + l_ - 7 * m + 90) // 25
    return date(year, month, (h + l_ - 7 * m + 33 * month + 19) % 32)


def _thanksgiving(year: int) -> date:
    """The fourth Thursday of November (the United States')."""
    first = date(year, 11, 1)
    return first + timedelta(days=(3 - first.weekday()) % 7 + 21)


#: Holidays by a key of their name's first letters: the date in a given year.
HOLIDAYS: dict[str, Callable[[int], date]] = {
    "christmas eve": lambda y: date(y, 12, 24),
    "christmas": lambda y: date(y, 12, 25),
    "xmas": lambda y: date(y, 12, 25),
    "boxing day": lambda y: date(y, 12, 26),
    "new year's eve": lambda y: date(y, 12, 31),
    "new year's day": lambda y: date(y, 1, 1),
    "halloween": lambda y: date(y, 10, 31),
    "valentine's day": lambda y: date(y, 2, 14),
    "thanksgiving": _thanksgiving,
    "easter": _easter,
    "good friday": lambda y: _easter(y) - timedelta(days=2),
    "easter monday": lambda y: _easter(y) + timedelta(days=1),
}
_HOLIDAY = (
    r"(?P<hol>christmas\s+eve|christmas(?:\s+day)?|xmas|boxing\s+day|new\s+year['’]?s\s+(?:eve|day)|halloween|"
    r"valentine['’]?s(?:\s+day)?|thanksgiving(?:\s+day)?|good\s+friday|easter(?:\s+(?:sunday|monday))?)"
)


def _holiday(m: re.Match[str], ctx: Context) -> Span | None:
    """ "at Christmas", "the day before Thanksgiving", "on Easter Monday": the nearest such day on the preferred
    side of today (today counts as both), moved by "the day before/after"."""
    name = re.sub(r"\s+", " ", m.group("hol").casefold()).replace("’", "'")
    name = {
        "christmas day": "christmas",
        "thanksgiving day": "thanksgiving",
        "easter sunday": "easter",
        "valentine's": "valentine's day",
        "valentines day": "valentine's day",
        "valentines": "valentine's day",
        "new years eve": "new year's eve",
        "new years day": "new year's day",
    }.get(name, name)
    when = HOLIDAYS.get(name)
    if when is None:
        return None
    shift = {"before": -1, "after": 1}.get((m.group("rel") or "").casefold(), 0)
    days = [when(y) + timedelta(days=shift) for y in (ctx.today.year - 1, ctx.today.year, ctx.today.year + 1)]
    if ctx.prefer == "past":
        day = max((d for d in days if d <= ctx.today), default=days[0])
    else:
        day = min((d for d in days if d >= ctx.today), default=days[-1])
    return day_span(day, ctx.tz)


def _rule(name: str, pattern: str, handler: Handler, heads: set[str], shape: str | None = None) -> Rule:
    compiled_shape = re.compile(shape, _FLAGS) if shape else None
    return Rule(name, re.compile(_B + pattern, _FLAGS), handler, frozenset(heads), compiled_shape)


_NUMERIC_DATE_SHAPE = r"\d[-/.]\d"
_CLOCK_SHAPE = r"\d\s*[ap]\.?m|\d:[0-5]\d"
_YEAR_SHAPE = r"(?<!\d)(?:19|20)\d\d(?!\d)"


_UNITS = set(UNIT_WORDS)
_DAY_HEADS = {"today", "tomorrow", "tmrw", "yesterday"} | set(WEEKDAYS) | set(MONTHS)
_CLOCK_HEADS = {"noon", "midday", "midnight"}
_DAY = unnamed(DAYREF)
_CLOCK = unnamed(CLOCK)
_VI_PHRASE = "(?:" + "|".join(vi(p) for p in sorted(VI_PHRASES, key=len, reverse=True)) + ")"
_VI_NUMBER = "(?:" + "|".join(vi(n) for n in sorted(VI_NUMBERS, key=len, reverse=True)) + r"|\d{1,3})"
_VI_UNIT = "(?:" + "|".join(vi(u) for u in sorted(VI_UNITS, key=len, reverse=True)) + ")"
_VI_HEADS = {w for p in (*VI_PHRASES, *VI_UNITS) for w in p.split()}

RULES: tuple[Rule, ...] = (
    _rule(
        "ago",
        rf"{_NUM}\s+{_UNIT}\s+(?P<dir>ago|back|from\s+now|from\s+today|hence){_E}",
        _ago,
        _UNITS,
    ),
    _rule(
        "in",
        rf"in\s+(?:(?:about|around|roughly|just|only|another)\s+)?{_NUM}\s+{_UNIT}(?:(?:'s|')?\s+time{_E})?",
        _in,
        _UNITS,
    ),
    _rule(
        "rolling",
        rf"(?:(?:in|over|during|for|within)\s+)?the\s+(?P<rdir>past|last|next|coming)\s+(?:{_NUM}\s+)?{_UNIT}"
        r"(?!\s+of(?!\w))",
        _rolling,
        _UNITS,
    ),
    _rule("within", rf"within\s+(?:the\s+next\s+)?{_NUM}\s+{_UNIT}", _rolling, _UNITS),
    _rule(
        "day_time",
        rf"(?:on\s+)?(?P<day>{_DAY}),?\s+{_AT}?(?P<time>{_CLOCK})"
        rf"|{_AT}?(?P<time2>{_CLOCK}),?\s+(?:on\s+)?(?P<day2>{_DAY})",
        _day_time,
        _CLOCK_HEADS,
        shape=_CLOCK_SHAPE,
    ),
    _rule("day", rf"(?:on\s+)?(?P<day>{_DAY})", _day, _DAY_HEADS, shape=_NUMERIC_DATE_SHAPE),
    _rule(
        "bare_day",
        rf"(?:on\s+)?(?:(?P<bwd>{WEEKDAY}),?\s+)?the\s+(?P<bd>{DAYNUM})(?:st|nd|rd|th)(?!\w)"
        rf"(?!\s+(?:of\s+)?{MONTH})(?!\s+(?:century|floor|time|place|row|grade|year|day|week|month|anniversary))",
        _bare_day,
        set(),
        shape=r"\bthe\s+\d{1,2}(?:st|nd|rd|th)\b",
    ),
    _rule(
        "time",
        rf"(?:(?P<at>at|around|@)\s*)?(?P<time>{_CLOCK})",
        _time,
        _CLOCK_HEADS,
        shape=_CLOCK_SHAPE,
    ),
    _rule(
        "part_of_day",
        r"(?:(?P<fixed>tonight|tonite|last\s+night)"
        rf"|this\s+(?P<tpart>morning|afternoon|evening)"
        rf"|(?:on\s+)?(?P<pday>{_DAY})\s+(?:in\s+the\s+)?(?P<ppart>{PART_WORD}))"
        rf"(?:,?\s+{_AT}(?P<ptime>{_CLOCK}|{unnamed(BARE_HOUR)}))?{_E}",
        _part,
        {"tonight", "tonite", "night", "morning", "afternoon", "evening"},
    ),
    _rule("period", rf"(?P<ref>{unnamed(PERIOD)})", _period, {"week", "weekend", "month", "year"}),
    _rule(
        "the_weekend",
        r"(?:(?:over|during|at|on|for)\s+)?the\s+weekend(?!\w)(?!\s+(?:before|after|of)(?!\w))",
        _the_weekend,
        {"weekend"},
    ),
    _rule("month", rf"(?:(?:in|during)\s+)?(?P<ref>{unnamed(MONTHREF)}){_E}", _month, set(MONTHS)),
    _rule("season", rf"(?:(?:in|during)\s+)?(?P<ref>{unnamed(SEASONREF)}){_E}", _season, set(SEASONS)),
    _rule(
        "year",
        rf"(?:(?P<yprep>in|during|the\s+year)\s+)?(?P<year>{YEAR})",
        _year,
        set(),
        shape=_YEAR_SHAPE,
    ),
    _rule(
        "part_of",
        r"(?:(?P<part>early|mid|late)(?:\s*-\s*|\s+)(?:in\s+)?"
        r"|(?:the\s+)?(?P<edge>beginning|start|middle|end)\s+of\s+)"
        rf"(?P<base>{unnamed(PERIOD)}|{unnamed(MONTHREF)}|{unnamed(SEASONREF)}|{YEAR}"
        r"|(?:the\s+)?(?:month|week|year)(?!\w))",
        _part_of,
        {"early", "mid", "late", "beginning", "start", "middle", "end"},
    ),
    _rule(
        "fuzzy",
        r"(?:(?P<recent>recently|lately|not\s+(?:too\s+|so\s+|that\s+)?long\s+ago)"
        r"|(?P<other>the\s+other\s+day)"
        r"|(?P<el>earlier|later)\s+(?P<elbase>today|tonight|this\s+(?:week|month|year|morning|afternoon|evening)))"
        + _E,
        _fuzzy,
        {"recently", "lately", "long", "other", "earlier", "later"},
    ),
    _rule(
        "holiday",
        rf"(?:(?:on|at|over|for|by|before|after|until|till)\s+)?(?:the\s+day\s+(?P<rel>before|after)\s+)?{_HOLIDAY}{_E}",
        _holiday,
        {
            "christmas",
            "xmas",
            "boxing",
            "year's",
            "years",
            "halloween",
            "valentine's",
            "valentines",
            "thanksgiving",
            "easter",
            "good",
        },
    ),
    _rule("vi_phrase", rf"(?P<vp>{_VI_PHRASE}){_E}", _vi_phrase, _VI_HEADS),
    _rule(
        "vi_shift",
        rf"(?P<vn>{_VI_NUMBER})\s+(?P<vu>{_VI_UNIT})\s+(?P<vd>{vi('trước')}|{vi('nữa')}){_E}",
        _vi_shift,
        _VI_HEADS,
    ),
)
_ALL_HEADS = frozenset().union(*(r.heads for r in RULES)) | HEAD_WORDS


# -- public entry points ---------------------------------------------------------------------------
def make_context(anchor: datetime, prefer: str, text: str | None = None) -> Context:
    """Validate anchor and preference; a naive anchor is UTC, an aware one keeps its zone."""
    if not isinstance(anchor, datetime):
        raise ValidationError("anchor", f"expected a datetime, got {type(anchor).__name__}")
    if prefer not in ("past", "future"):
        raise ValidationError("prefer", f"must be 'past' or 'future', not {prefer!r}")
    if anchor.tzinfo is None or anchor.utcoffset() is None:
        anchor = anchor.replace(tzinfo=UTC)
    return Context(anchor, cast(Prefer, prefer), text)


_TRIM = " \t\r\n.,;:!?\"'“”‘’()[]"


def _resolve_text(text: str, ctx: Context) -> Span | None:
    for rule in RULES:
        m = rule.regex.fullmatch(text)
        if m is not None:
            span = rule.handler(m, ctx)
            if span is not None:
                return span
    return None


def resolve(expression: str, anchor: datetime, *, prefer: Prefer = "past") -> TimeRange | None:
    """The absolute interval [start, end) ``expression`` names, seen from ``anchor``, or None.

    ``anchor`` keeps its zone (naive means UTC) and every boundary is local to it.  ``prefer``
    settles expressions that could point either way ("Friday", "in March", "March 5").  Expressions
    outside the built-in grammar that contain a full date ("2023/05/08", "Mon, 08 May 2023 13:56")
    go to ``dateparser``.
    """
    ctx = make_context(anchor, prefer)
    if not isinstance(expression, str):
        raise ValidationError("expression", f"expected text, got {type(expression).__name__}")
    label = expression.strip()
    text = unicodedata.normalize("NFC", label).strip(_TRIM)
    if not text or len(text) > 120:
        return None
    span = _resolve_text(text, ctx)
    if span is None and any(ch.isdigit() for ch in text):
        span = _fallback(text, ctx)
    return span.labelled(label) if span else None


_LETTERS = re.compile(r"[^\W\d_]+")
_DIGIT = re.compile(r"\d")


def _words(text: str) -> frozenset[str]:
    lowered = text.lower()
    if not unicodedata.is_normalized("NFC", lowered):
        lowered = unicodedata.normalize("NFC", lowered)  # only for the word set; offsets use the text as given
    return frozenset(_LETTERS.findall(lowered))


def find_mentions(text: str, anchor: datetime, *, prefer: Prefer = "past") -> list[TemporalMention]:
    """The time expressions in ``text``, in order, each resolved against ``anchor``.

    Offsets index ``text`` as given (``text[m.start:m.end] == m.text``).  Where candidates overlap
    the longest wins; ties go to the earlier, then to the rule listed first.  Ordinary words that
    only look like times ("I may go", "we will march", "June said", "a second try") are not
    reported.
    """
    ctx = make_context(anchor, prefer, text)
    if not isinstance(text, str):
        raise ValidationError("text", f"expected text, got {type(text).__name__}")
    words = _words(text)
    has_digit = _DIGIT.search(text) is not None
    if words.isdisjoint(_ALL_HEADS) and not has_digit:
        return []
    candidates: list[tuple[int, int, int, re.Match[str]]] = []
    for index, rule in enumerate(RULES):
        if rule.heads.isdisjoint(words) and not (has_digit and rule.shape is not None and rule.shape.search(text)):
            continue
        candidates.extend((m.start(), m.end(), index, m) for m in rule.regex.finditer(text))
    candidates.sort(key=lambda c: (c[0] - c[1], c[0], c[2]))
    taken = bytearray(len(text))  # 1 where an accepted mention already sits
    found: list[TemporalMention] = []
    for start, end, index, m in candidates:
        if taken.find(1, start, end) != -1:
            continue
        if word_before(text, start) in ("every", "each"):
            continue  # habitual ("every Friday"), not a point in time
        span = RULES[index].handler(m, ctx)
        if span is None:
            continue
        taken[start:end] = b"\x01" * (end - start)
        found.append(TemporalMention(start, end, text[start:end], span.labelled(text[start:end])))
    found.sort(key=lambda f: f.start)
    return found


# -- dateparser fallback ---------------------------------------------------------------------------
_HAS_CLOCK = re.compile(r"\d:\d\d|\d\s*[ap]\.?m\b", _FLAGS)


@cache
def _date_parser() -> Any:
    """One strict English ``DateDataParser``: it only accepts text with a day, a month and a year.

    Imported lazily: dateparser takes a noticeable moment to load and is only needed for unusual
    formats.
    """
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=["en"],
        settings={"STRICT_PARSING": True, "DATE_ORDER": "MDY", "RETURN_AS_TIMEZONE_AWARE": False},
    )


def _fallback(text: str, ctx: Context) -> Span | None:
    """An absolute date (and time) in a format the grammar lacks, via dateparser, or None."""
    if len(text) > 64:
        return None
    try:
        data = _date_parser().get_date_data(text)
    except Exception:  # a third-party parser's surprise must not turn "unknown" into a crash
        return None
    value = getattr(data, "date_obj", None)
    if not isinstance(value, datetime):
        return None
    if value.tzinfo is not None:
        value = value.astimezone(ctx.tz)
    if _HAS_CLOCK.search(text):
        start = value.replace(tzinfo=ctx.tz, second=0, microsecond=0)
        return Span(start, start + timedelta(minutes=1), "minute")
    return day_span(value.date(), ctx.tz)
