"""Calendar arithmetic: local days, ISO weeks, weekends, months, seasons and years.

Everything here works on *wall-clock* dates in the anchor's time zone and returns aware datetimes
built with ``datetime(y, m, d, h, mi, tzinfo=tz)``.  Building boundaries that way (instead of adding
``timedelta`` to an aware datetime) keeps a "day" from local midnight to local midnight even when a
daylight-saving change makes it 23 or 25 hours long.  Sub-day offsets ("in an hour") are the
opposite case: they are real elapsed time, so :func:`shift_exact` does them in UTC.

Occurrences of months and seasons are numbered on one axis (``year * 12 + month - 1`` and ``year * 4
+ index``) so "the most recent March", "the nearest winter" and "the one after" are integer
comparisons rather than special cases for the turn of the year.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Literal

from engine.temporal.types import Grain, TimeRange

Prefer = Literal["past", "future"]
Part = Literal["early", "mid", "late"]

#: Meteorological seasons (northern hemisphere): the first month of each; a season lasts three
#: months.
SEASON_START_MONTH: dict[str, int] = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}
SEASON_INDEX: dict[str, int] = {"spring": 0, "summer": 1, "autumn": 2, "winter": 3}
_SEASON_NAMES = ("spring", "summer", "autumn", "winter")


@dataclass(frozen=True, slots=True)
class Span:
    """A resolved interval before it is labelled with the expression text."""

    start: datetime
    end: datetime
    grain: Grain

    def labelled(self, expression: str) -> TimeRange:
        """The public DTO for this span."""
        return TimeRange(start=self.start, end=self.end, grain=self.grain, expression=expression)


# -- building blocks -------------------------------------------------------------------------------
def at(day: date, tz: tzinfo, hour: int = 0, minute: int = 0) -> datetime:
    """Local wall-clock time ``hour:minute`` on ``day`` in ``tz``."""
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)


def day_span(day: date, tz: tzinfo) -> Span:
    """The local calendar day [00:00, next 00:00)."""
    return Span(at(day, tz), at(day + timedelta(days=1), tz), "day")


def days_span(first: date, last: date, tz: tzinfo, grain: Grain = "range") -> Span:
    """From the start of ``first`` to the end of ``last`` (both inclusive)."""
    return Span(at(first, tz), at(last + timedelta(days=1), tz), grain)


def week_start(day: date) -> date:
    """The Monday of ``day``'s ISO week."""
    return day - timedelta(days=day.weekday())


def week_span(day: date, tz: tzinfo) -> Span:
    """The ISO week (Monday 00:00 to the next Monday 00:00) that contains ``day``."""
    monday = week_start(day)
    return Span(at(monday, tz), at(monday + timedelta(days=7), tz), "week")


def weekend_span(day: date, tz: tzinfo) -> Span:
    """Saturday 00:00 to Monday 00:00 of ``day``'s ISO week."""
    monday = week_start(day)
    return Span(at(monday + timedelta(days=5), tz), at(monday + timedelta(days=7), tz), "weekend")


def month_index(year: int, month: int) -> int:
    """A month as one integer, so month arithmetic never special-cases December."""
    return year * 12 + month - 1


def month_of_index(index: int) -> tuple[int, int]:
    """(year, month) of a :func:`month_index`."""
    return index // 12, index % 12 + 1


def month_span(year: int, month: int, tz: tzinfo) -> Span:
    """The calendar month [1st 00:00, 1st of the next month 00:00)."""
    next_year, next_month = month_of_index(month_index(year, month) + 1)
    return Span(at(date(year, month, 1), tz), at(date(next_year, next_month, 1), tz), "month")


def year_span(year: int, tz: tzinfo) -> Span:
    """The calendar year [1 January, next 1 January)."""
    return Span(at(date(year, 1, 1), tz), at(date(year + 1, 1, 1), tz), "year")


def add_months(day: date, months: int) -> date:
    """``day`` moved by whole months, clamped to the month's last day.

    31 January + 1 month is 29 February in a leap year.
    """
    year, month = month_of_index(month_index(day.year, day.month) + months)
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


# -- seasons ---------------------------------------------------------------------------------------
def season_index(day: date) -> int:
    """The season containing ``day`` as one integer ``season_year * 4 + index``.

    The season year is the year the season starts in, so January 2024 is in winter 2023 (December
    2023 – February 2024).
    """
    month = day.month
    if month == 12:
        return day.year * 4 + 3
    if month <= 2:
        return (day.year - 1) * 4 + 3
    return day.year * 4 + (month - 3) // 3


def season_span(index: int, tz: tzinfo) -> Span:
    """The three months of the season numbered ``index`` (see :func:`season_index`)."""
    year, which = divmod(index, 4)
    first = month_index(year, SEASON_START_MONTH[_SEASON_NAMES[which]])
    start_y, start_m = month_of_index(first)
    end_y, end_m = month_of_index(first + 3)
    return Span(at(date(start_y, start_m, 1), tz), at(date(end_y, end_m, 1), tz), "season")


def occurrence_before(current: int, period: int, residue: int) -> int:
    """The largest index < ``current`` with ``index % period == residue``."""
    candidate = current - 1
    return candidate - (candidate - residue) % period


def occurrence_after(current: int, period: int, residue: int) -> int:
    """The smallest index > ``current`` with ``index % period == residue``."""
    candidate = current + 1
    return candidate + (residue - candidate) % period


# -- parts and shifts ------------------------------------------------------------------------------
def part_of(span: Span, part: Part, tz: tzinfo) -> Span:
    """The early / mid / late third of a week, month, season or year (always grain ``range``).

    Months split by day of month (1–10, 11–20, 21–end), the way people say "early May"; weeks split
    Monday–Tuesday, Wednesday–Thursday, Friday–Sunday; seasons split by month; years split into
    four-month thirds.
    """
    first = span.start.date()
    last = (span.end - timedelta(days=1)).date()
    if span.grain == "month":
        bounds = {"early": (1, 10), "mid": (11, 20), "late": (21, last.day)}[part]
        return days_span(first.replace(day=bounds[0]), first.replace(day=bounds[1]), tz)
    if span.grain == "week":
        monday = week_start(first)
        offsets = {"early": (0, 1), "mid": (2, 3), "late": (4, 6)}[part]
        return days_span(monday + timedelta(days=offsets[0]), monday + timedelta(days=offsets[1]), tz)
    months = {"season": 1, "year": 4}.get(span.grain)
    if months is None:
        return Span(span.start, span.end, "range")
    base = month_index(first.year, first.month)
    offset = {"early": 0, "mid": 1, "late": 2}[part] * months
    start_y, start_m = month_of_index(base + offset)
    end_y, end_m = month_of_index(base + offset + months)
    return Span(at(date(start_y, start_m, 1), tz), at(date(end_y, end_m, 1), tz), "range")


def shift_exact(anchor: datetime, delta: timedelta) -> datetime:
    """``anchor`` moved by elapsed time, in UTC, then shown again in the anchor's zone.

    Aware arithmetic in a zone with daylight saving is wall-clock arithmetic in Python; "in an hour"
    across a clock change must be sixty real minutes, so the sum is done in UTC.
    """
    tz = anchor.tzinfo or UTC
    return (anchor.astimezone(UTC) + delta).astimezone(tz)


def union(spans: list[Span]) -> Span:
    """The smallest span covering all ``spans`` (used for fuzzy counts such as "a few days ago")."""
    return Span(min(s.start for s in spans), max(s.end for s in spans), "range")
