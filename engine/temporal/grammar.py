"""What time expressions mean: sub-grammars for days, clock times, months, seasons, periods.

Each sub-grammar is a regex fragment with named groups plus a function that turns a full match of it
into a date or a :class:`~engine.temporal.arithmetic.Span`.  Composite rules in
:mod:`engine.temporal.resolver` embed the fragments without their group names and call these
functions on the captured text, so "Friday", "on Friday at 3pm" and "Friday evening" all resolve
"Friday" the same way.

When a :class:`Context` carries the surrounding text (``find_mentions``), the resolvers also judge
whether an ambiguous word is meant as a time at all: "I may go", "we will march", "June said", "the
sun" are not dates.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from engine.temporal.arithmetic import (
    SEASON_INDEX,
    Prefer,
    Span,
    add_months,
    at,
    day_span,
    month_index,
    month_of_index,
    month_span,
    occurrence_after,
    occurrence_before,
    season_index,
    season_span,
    shift_exact,
    week_span,
    week_start,
    weekend_span,
    year_span,
)
from engine.temporal.lexicon import (
    CUE_WORDS,
    MONTHS,
    NAME_MONTHS,
    ORDINAL_WORDS,
    PARTS_OF_DAY,
    SEASONS,
    VERB_MONTHS,
    WEEKDAYS,
    WORD_WEEKDAYS,
    alternation,
    squash,
    unnamed,
)

_FLAGS = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class Context:
    """What a rule needs besides its match: the aware anchor, the preference, the scanned text."""

    anchor: datetime
    prefer: Prefer
    text: str | None = None

    @property
    def tz(self) -> tzinfo:
        """The anchor's zone; every boundary is built in it."""
        tz = self.anchor.tzinfo
        # The public functions make the anchor aware before they build a Context.
        assert tz is not None
        return tz

    @property
    def today(self) -> date:
        """The anchor's local calendar date."""
        return self.anchor.date()

    @property
    def scanning(self) -> bool:
        """True inside ``find_mentions``: ambiguous words must prove they are meant as times."""
        return self.text is not None


# -- regex fragments -------------------------------------------------------------------------------
YEAR = r"(?:19|20)\d\d(?!\d)"
DAYNUM = r"(?:3[01]|[12]\d|0?[1-9])"
# An abbreviation's dot belongs to the month only before a day number ("Jan. 5"); at the end of a
# sentence it is the sentence's.
MONTH = alternation(MONTHS) + r"(?!\w)(?:\.(?=\s*\d))?"
WEEKDAY = alternation(WEEKDAYS) + r"(?!\w)"
SEASON = alternation(SEASONS) + r"(?!\w)"
ORDINAL = rf"(?:{DAYNUM}(?:st|nd|rd|th)?(?!\w)|{alternation(ORDINAL_WORDS)}(?!\w))"

DATE = (
    rf"(?:(?P<dwd>{WEEKDAY}),?\s+(?:the\s+)?)?"
    r"(?:"
    rf"(?P<m1>{MONTH})\s+(?:the\s+)?(?P<d1>{ORDINAL})(?:,?\s+(?P<y1>{YEAR}))?"
    rf"|(?:the\s+)?(?P<d2>{ORDINAL})\s+(?:(?P<of>of)\s+)?(?P<m2>{MONTH})(?:,?\s+(?P<y2>{YEAR}))?"
    r"|(?P<iy>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2})(?!\d)"
    r"|(?P<um>\d{1,2})/(?P<ud>\d{1,2})/(?P<uy>\d{4}|\d{2})(?!\d)"
    r"|(?P<ed>\d{1,2})\.(?P<em>\d{1,2})\.(?P<ey>\d{4})(?!\d)"
    r")"
)
_NAMED_DAYS = r"the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|today|tomorrow|tmrw|yesterday"
_WEEKDAY_MOD = r"last|next|this\s+coming|this\s+past|this|coming|past"
DAYREF = (
    rf"(?:(?P<date>{unnamed(DATE)})"
    rf"|(?P<named>{_NAMED_DAYS})(?!\w)"
    rf"|(?:(?P<wmod>{_WEEKDAY_MOD})\s+)?(?P<wd>{WEEKDAY})"
    r"(?:\s+(?P<wpost>after\s+next|before\s+last|next\s+week|last\s+week|this\s+week)(?!\w))?)"
)
TIME12 = r"(?P<h12>1[0-2]|0?[1-9])(?:[:.](?P<m12>[0-5]\d))?\s*(?P<ap>[ap])(?:m|\.m\.?)(?!\w)"
TIME24 = r"(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)(?!\d)"
NOON = r"(?P<noon>(?:12\s+)?noon|midday)(?!\w)|(?P<midnight>midnight)(?!\w)"
CLOCK = rf"(?:{TIME12}|{TIME24}|{NOON})"
#: An hour without am/pm, only meaningful after a part of the day ("tonight at 8").
BARE_HOUR = r"(?P<bh>1[0-2]|0?[1-9])(?::(?P<bm>[0-5]\d))?(?!\s*[ap]\.?m)(?![\w:])"
PART_WORD = alternation(PARTS_OF_DAY) + r"(?!\w)"

_PERIOD_MOD = r"last|this\s+coming|this\s+past|this|next|coming"
PERIOD = (
    rf"(?:(?P<pmod>{_PERIOD_MOD})\s+(?P<period>week|weekend|month|year)"
    r"|the\s+(?P<period2>week|weekend|month|year)\s+(?P<ppost>before\s+last|after\s+next))(?!\w)"
)
_CAL_MOD = r"last|this\s+coming|this\s+past|this|next|coming|past"
MONTHREF = rf"(?:(?P<mmod>{_CAL_MOD})\s+)?(?P<mon>{MONTH})(?:,?\s+(?:of\s+)?(?P<my>{YEAR}))?"
SEASONREF = (
    rf"(?:the\s+)?(?:(?P<smod>{_CAL_MOD})\s+)?(?P<season>{SEASON})"
    rf"(?:,?\s+(?:of\s+)?(?P<sy>{YEAR}))?"
)

_DATE_RE = re.compile(DATE, _FLAGS)
_DAYREF_RE = re.compile(DAYREF, _FLAGS)
_CLOCK_RE = re.compile(rf"(?:{CLOCK}|{BARE_HOUR})", _FLAGS)
_PERIOD_RE = re.compile(PERIOD, _FLAGS)
_MONTHREF_RE = re.compile(MONTHREF, _FLAGS)
_SEASONREF_RE = re.compile(SEASONREF, _FLAGS)
_YEAR_RE = re.compile(YEAR)


# -- plausibility (only while scanning free text) --------------------------------------------------
_WORD_BEFORE = re.compile(r"([^\W\d_]+)[\s\-]*$")
_SENTENCE_OPENERS = frozenset(".!?\n\r\"“‘'(*-•>:")


def word_before(text: str, index: int) -> str:
    """The lower-cased word ending right before ``index`` (skipping spaces and hyphens), or ""."""
    m = _WORD_BEFORE.search(text, max(0, index - 24), index)
    return m.group(1).lower() if m else ""


def sentence_initial(text: str, index: int) -> bool:
    """True when only spaces separate ``index`` from the start of the text or of a sentence."""
    i = index - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in _SENTENCE_OPENERS


def month_plausible(ctx: Context, start: int, end: int, *, number: bool, strong: bool) -> bool:
    """Whether the month word at ``text[start:end]`` is meant as a month.

    ``number``: a day or year number stands next to it; ``strong``: that number is unmistakably part
    of a date (a year, an ordinal suffix, "the 5th of …").  "May" and "March" are verbs too:
    lower-case, they count only in a strong date; capitalised, when a number or a cue word stands by
    or they are not the first word of a sentence. Month words that are also given names or
    abbreviations ("June", "Aug") need a number or a cue word.
    """
    text = ctx.text
    if text is None:
        return True
    token = text[start:end]
    key = token.lower().rstrip(".")
    if key in VERB_MONTHS:
        if token[:1].islower():
            return strong
        return number or word_before(text, start) in CUE_WORDS or not sentence_initial(text, start)
    if key in NAME_MONTHS:
        return number or word_before(text, start) in CUE_WORDS
    return True


_WEEKDAY_CUES = frozenset({"on", "last", "next", "this", "coming", "past", "by", "until"})


def weekday_plausible(ctx: Context, start: int, end: int, *, cued: bool) -> bool:
    """Whether a weekday word is meant as a day.

    Abbreviations need a cue word, and "sun"/"sat"/"wed" a capital too.
    """
    text = ctx.text
    if text is None:
        return True
    token = text[start:end]
    key = token.lower().rstrip(".")
    if len(key) >= 6:  # a full name; abbreviations have at most five letters
        return True
    if key in WORD_WEEKDAYS and token[:1].islower():
        return False
    return cued or word_before(text, start) in _WEEKDAY_CUES


# -- days ------------------------------------------------------------------------------------------
def _number(text: str) -> int:
    key = squash(text).rstrip(".")
    for suffix in ("st", "nd", "rd", "th"):
        if key.endswith(suffix) and key[: -len(suffix)].isdigit():
            return int(key[: -len(suffix)])
    return int(key) if key.isdigit() else ORDINAL_WORDS[key]


def _month_number(text: str) -> int:
    return MONTHS[text.lower().rstrip(".")]


def _yearless(ctx: Context, month: int, day: int) -> date | None:
    """The nearest valid ``month``/``day`` on the preferred side of today (today counts as both).

    Searching up to eight years covers 29 February.
    """
    today = ctx.today
    step = -1 if ctx.prefer == "past" else 1
    for offset in range(9):
        year = today.year + step * offset
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if (step < 0 and candidate <= today) or (step > 0 and candidate >= today):
            return candidate
    return None


def _expand_year(text: str) -> int:
    """A year as written: two digits mean 2000–2069 or 1970–1999 (the POSIX pivot)."""
    value = int(text)
    if len(text) == 2:
        return value + (2000 if value < 70 else 1900)
    return value


def resolve_date(ctx: Context, m: re.Match[str], offset: int = 0) -> date | None:
    """A calendar date from a full match of :data:`DATE`.

    ``offset`` is where the match sits in ``ctx.text``.
    """
    try:
        if m.group("iy"):
            return date(int(m.group("iy")), int(m.group("im")), int(m.group("id")))
        if m.group("um"):
            return date(_expand_year(m.group("uy")), int(m.group("um")), int(m.group("ud")))
        if m.group("ed"):
            return date(int(m.group("ey")), int(m.group("em")), int(m.group("ed")))
    except ValueError:
        return None
    first = bool(m.group("m1"))
    month_group, day_group, year_group = ("m1", "d1", "y1") if first else ("m2", "d2", "y2")
    day_text = m.group(day_group)
    year_text = m.group(year_group)
    suffixed = day_text[:1].isdigit() and not day_text.isdigit()  # "5th", not "5" nor "fifth"
    strong = bool(year_text) or bool(m.group("of")) or suffixed
    if not month_plausible(ctx, offset + m.start(month_group), offset + m.end(month_group), number=True, strong=strong):
        return None
    month, day = _month_number(m.group(month_group)), _number(day_text)
    if year_text:
        try:
            return date(int(year_text), month, day)
        except ValueError:
            return None
    if not 1 <= day <= 31:
        return None
    return _yearless(ctx, month, day)


def _weekday_date(ctx: Context, weekday: int, mod: str, post: str) -> date:
    """The date a weekday expression names (conventions in the package docstring).

    "last"/"past" Friday is the most recent Friday before today; "this" Friday the one of the
    current ISO week; "next" Friday the one of next week; "coming" Friday the first after today; a
    bare weekday the most recent (prefer past) or the coming (prefer future) one, never today.
    """
    today = ctx.today
    monday = week_start(today)
    most_recent = today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)
    upcoming = today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)
    if post in ("next week", "last week", "this week"):
        weeks = {"next week": 1, "last week": -1, "this week": 0}[post]
        return monday + timedelta(days=7 * weeks + weekday)
    if mod == "this":
        base = monday + timedelta(days=weekday)
    elif mod == "next":
        base = monday + timedelta(days=7 + weekday)
    elif mod in ("last", "past", "this past"):
        base = most_recent
    elif mod in ("coming", "this coming"):
        base = upcoming
    else:
        base = most_recent if ctx.prefer == "past" else upcoming
    if post == "after next":
        base += timedelta(days=7)
    elif post == "before last":
        base -= timedelta(days=7)
    return base


def resolve_day(ctx: Context, text: str, offset: int = 0) -> date | None:
    """The calendar date named by ``text``, a full :data:`DAYREF` ("tomorrow", "next Friday")."""
    m = _DAYREF_RE.fullmatch(text)
    if m is None:
        return None
    if m.group("date") is not None:
        inner = _DATE_RE.fullmatch(m.group("date"))
        return resolve_date(ctx, inner, offset + m.start("date")) if inner else None
    named = m.group("named")
    if named:
        key = squash(named)
        delta = {
            "today": 0,
            "tomorrow": 1,
            "tmrw": 1,
            "yesterday": -1,
            "the day before yesterday": -2,
            "the day after tomorrow": 2,
        }[key]
        return ctx.today + timedelta(days=delta)
    mod = squash(m.group("wmod") or "")
    post = squash(m.group("wpost") or "")
    cued = bool(mod or post) or (offset > 0 and ctx.text is not None and word_before(ctx.text, offset) == "on")
    if not weekday_plausible(ctx, offset + m.start("wd"), offset + m.end("wd"), cued=cued):
        return None
    if post in ("after next", "before last") and mod:
        return None
    return _weekday_date(ctx, WEEKDAYS[m.group("wd").lower().rstrip(".")], mod, post)


# -- clock times -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Clock:
    """A time of day as written.

    ``midnight`` marks the 00:00 that ends a day; ``bare`` an hour written without am/pm.
    """

    hour: int
    minute: int
    midnight: bool = False
    bare: bool = False


def parse_clock(text: str) -> Clock | None:
    """A :class:`Clock` from "2pm", "2:30 p.m.", "14:30", "noon", "midnight" or a bare "8"."""
    m = _CLOCK_RE.fullmatch(text.strip())
    if m is None:
        return None
    if m.group("noon"):
        return Clock(12, 0)
    if m.group("midnight"):
        return Clock(0, 0, midnight=True)
    if m.group("h12"):
        hour = int(m.group("h12")) % 12 + (12 if m.group("ap").lower() == "p" else 0)
        return Clock(hour, int(m.group("m12") or 0))
    if m.group("h24"):
        return Clock(int(m.group("h24")), int(m.group("m24")))
    return Clock(int(m.group("bh")), int(m.group("bm") or 0), bare=True)


def minute_span(day: date, clock: Clock, tz: tzinfo) -> Span:
    """The minute ``clock`` on ``day``; "midnight" on a day is the midnight that ends it."""
    if clock.midnight:
        day += timedelta(days=1)
    start = at(day, tz, clock.hour, clock.minute)
    return Span(start, shift_exact(start, timedelta(minutes=1)), "minute")


def part_span(day: date, part: str, tz: tzinfo) -> Span:
    """A part of ``day`` (morning 06–12, afternoon 12–18, evening 18–24, night 18–06 next day)."""
    first_hour, hours = PARTS_OF_DAY[part]
    end_hour = first_hour + hours
    end = at(day + timedelta(days=end_hour // 24), tz, end_hour % 24)
    return Span(at(day, tz, first_hour), end, "part_of_day")


def clock_in_part(day: date, part: str, clock: Clock, tz: tzinfo) -> Span:
    """``clock`` within a part of ``day``.

    "tonight at 8" is 20:00; "tonight at 1am" is 01:00 the next day.
    """
    hour = clock.hour
    if clock.bare:
        if part == "night" and 1 <= hour <= 5:
            day += timedelta(days=1)
        elif part in ("afternoon", "evening", "night") and hour < 12:
            hour += 12
    elif part == "night" and hour < 6 and not clock.midnight:
        day += timedelta(days=1)
    return minute_span(day, Clock(hour, clock.minute, midnight=clock.midnight), tz)


# -- months, seasons, periods, years ---------------------------------------------------------------
def resolve_month(ctx: Context, m: re.Match[str], offset: int = 0) -> Span | None:
    """A calendar month from a full match of :data:`MONTHREF` (see the package conventions)."""
    year_text = m.group("my")
    mod = squash(m.group("mmod") or "")
    if ctx.text is not None:
        start, end = offset + m.start("mon"), offset + m.end("mon")
        if not month_plausible(ctx, start, end, number=bool(year_text), strong=bool(year_text)):
            return None
    month = _month_number(m.group("mon"))
    if year_text:
        return month_span(int(year_text), month, ctx.tz)
    today = ctx.today
    current = month_index(today.year, today.month)
    residue = month - 1
    if mod == "this":
        index = month_index(today.year, month)
    elif mod == "next":
        index = month_index(today.year + 1, month)
    elif mod in ("last", "past", "this past"):
        index = occurrence_before(current, 12, residue)
    elif mod in ("coming", "this coming"):
        index = occurrence_after(current, 12, residue)
    elif current % 12 == residue:
        index = current
    elif ctx.prefer == "past":
        index = occurrence_before(current, 12, residue)
    else:
        index = occurrence_after(current, 12, residue)
    return month_span(*month_of_index(index), ctx.tz)


def _nearest_season(ctx: Context, current: int, residue: int) -> int:
    """The occurrence of a season nearest the anchor (ties go to the preferred side)."""
    before = occurrence_before(current, 4, residue)
    after = occurrence_after(current, 4, residue)
    gap_before = ctx.anchor - season_span(before, ctx.tz).end
    gap_after = season_span(after, ctx.tz).start - ctx.anchor
    if gap_before == gap_after:
        return before if ctx.prefer == "past" else after
    return before if gap_before < gap_after else after


def resolve_season(ctx: Context, m: re.Match[str]) -> Span | None:
    """A meteorological season from a full match of :data:`SEASONREF`.

    "this winter" is the one containing the anchor, else the nearest (winter spans the turn of the
    year, so "the one of this calendar year" would be ambiguous); "last" is the most recent one
    before the current season; "next" the one after "this"; a bare season follows ``prefer``.
    """
    mod = squash(m.group("smod") or "")
    year_text = m.group("sy")
    if ctx.scanning and not mod and not year_text:
        return None  # "I love summer" is about summer in general, not a time
    residue = SEASON_INDEX[SEASONS[m.group("season").lower()]]
    if year_text:
        return season_span(int(year_text) * 4 + residue, ctx.tz)
    current = season_index(ctx.today)
    if current % 4 == residue and mod in ("", "this"):
        index = current
    elif mod == "this":
        index = _nearest_season(ctx, current, residue)
    elif mod in ("last", "past", "this past"):
        index = occurrence_before(current, 4, residue)
    elif mod == "next":
        this = current if current % 4 == residue else _nearest_season(ctx, current, residue)
        index = this + 4 if this >= current else occurrence_after(current, 4, residue)
    elif mod in ("coming", "this coming"):
        index = occurrence_after(current, 4, residue)
    elif ctx.prefer == "past":
        index = occurrence_before(current, 4, residue)
    else:
        index = occurrence_after(current, 4, residue)
    return season_span(index, ctx.tz)


def resolve_period(ctx: Context, m: re.Match[str]) -> Span | None:
    """A week, weekend, month or year relative to the anchor's (ISO weeks, Sat–Sun weekends)."""
    today = ctx.today
    if m.group("period2"):
        unit = m.group("period2").lower()
        steps = -2 if squash(m.group("ppost")) == "before last" else 2
        mod = ""
    else:
        unit = m.group("period").lower()
        mod = squash(m.group("pmod"))
        steps = {"last": -1, "this": 0, "next": 1, "coming": 1, "this coming": 1, "this past": -1}[mod]
    if unit == "weekend" and mod == "this past":
        return weekend_span(today if today.weekday() >= 5 else today - timedelta(days=7), ctx.tz)
    if unit == "weekend" and mod in ("coming", "this coming"):
        return weekend_span(today + timedelta(days=7) if today.weekday() >= 5 else today, ctx.tz)
    if mod == "this past":
        return rolling(ctx, -1, unit)
    if unit == "week":
        return week_span(today + timedelta(days=7 * steps), ctx.tz)
    if unit == "weekend":
        return weekend_span(today + timedelta(days=7 * steps), ctx.tz)
    if unit == "month":
        shifted = add_months(today, steps)
        return month_span(shifted.year, shifted.month, ctx.tz)
    return year_span(today.year + steps, ctx.tz)


def rolling(ctx: Context, count: int, unit: str) -> Span | None:
    """The ``count`` units before (negative) or after (positive) the anchor instant, as a range.

    Days and longer move the wall clock; minutes and hours are elapsed time.
    """
    anchor = ctx.anchor
    try:
        if unit in ("minute", "hour"):
            other = shift_exact(anchor, timedelta(**{unit + "s": count}))
        elif unit in ("day", "week", "weekend", "fortnight"):
            days = count * {"day": 1, "week": 7, "weekend": 7, "fortnight": 14}[unit]
            other = datetime.combine(anchor.date() + timedelta(days=days), anchor.timetz())
        else:
            months = count * {"month": 1, "year": 12, "decade": 120}[unit]
            other = datetime.combine(add_months(anchor.date(), months), anchor.timetz())
    except (OverflowError, ValueError):
        return None
    start, end = (other, anchor) if count < 0 else (anchor, other)
    return Span(start, end, "range")


def shifted(ctx: Context, count: int, unit: str) -> Span | None:
    """The calendar unit containing the anchor moved by ``count`` units ("3 days ago").

    Days and longer move the wall clock and return the whole day / ISO week / weekend / month /
    year; minutes and hours are elapsed time and return the clock minute or hour containing the
    result.
    """
    today = ctx.today
    tz = ctx.tz
    try:
        if unit == "minute":
            moved = shift_exact(ctx.anchor, timedelta(minutes=count)).replace(second=0, microsecond=0)
            return Span(moved, shift_exact(moved, timedelta(minutes=1)), "minute")
        if unit == "hour":
            moved = shift_exact(ctx.anchor, timedelta(hours=count)).replace(minute=0, second=0, microsecond=0)
            return Span(moved, shift_exact(moved, timedelta(hours=1)), "hour")
        if unit == "day":
            return day_span(today + timedelta(days=count), tz)
        if unit in ("week", "fortnight"):
            return week_span(today + timedelta(days=count * (14 if unit == "fortnight" else 7)), tz)
        if unit == "weekend":
            return weekend_span(today + timedelta(days=7 * count), tz)
        if unit == "month":
            moved_day = add_months(today, count)
            return month_span(moved_day.year, moved_day.month, tz)
        return year_span(today.year + count * (10 if unit == "decade" else 1), tz)
    except (OverflowError, ValueError):
        return None


def resolve_base(ctx: Context, text: str, offset: int = 0) -> Span | None:
    """A week / month / season / year to take a part of ("the month", "May", "2022")."""
    key = squash(text)
    today = ctx.today
    if key in ("month", "the month"):
        return month_span(today.year, today.month, ctx.tz)
    if key in ("week", "the week"):
        return week_span(today, ctx.tz)
    if key in ("year", "the year"):
        return year_span(today.year, ctx.tz)
    if _YEAR_RE.fullmatch(text):
        return year_span(int(text), ctx.tz)
    m = _PERIOD_RE.fullmatch(text)
    if m:
        return resolve_period(ctx, m)
    m = _MONTHREF_RE.fullmatch(text)
    if m:
        return resolve_month(ctx, m, offset)
    m = _SEASONREF_RE.fullmatch(text)
    if m:
        # The part word ("early", "the end of") already shows a bare season is meant as a time.
        return resolve_season(Context(ctx.anchor, ctx.prefer), m)
    return None


def nfc_lower(text: str) -> str:
    """NFC, lower case, single spaces: the Vietnamese tables' key, whatever form the text had."""
    return squash(unicodedata.normalize("NFC", text))
