"""Which way a date points: the time expression that dates a clause, resolved forward or backward by the clause.

"On Saturday" said on a Tuesday is the coming Saturday when the clause is about what is ahead ("my son has a
tournament on Saturday") and the last one when it is about what happened ("we got back on Saturday").  Dates with
a month ("Oct 31", "in May", "the 9th of September") are resolved to the occurrence nearest to when they were said,
leaning to the clause's side: people write about dates close to now, and a past-tense verb in the same clause
("we booked the hall for March 14") says when the booking happened, not when the party is.

:func:`pick` chooses the expression inside a clause (the most precise one when there are several) and its
direction, from mentions found both ways (``find_mentions`` with ``prefer="past"`` and ``"future"``).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from engine.temporal.types import TemporalMention

#: How much closer the other side must be before a clause's own tense is overruled for a dated expression.
LEAN = timedelta(days=120)
_GRAIN_ORDER = {
    "instant": 0,
    "minute": 0,
    "hour": 0,
    "part_of_day": 0,
    "day": 0,
    "weekend": 1,
    "week": 1,
    "month": 2,
    "season": 3,
    "year": 4,
    "range": 5,
}
_HAS_MONTH = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b|\d{1,2}[/.-]\d{1,2}", re.IGNORECASE
)


def pick(
    clause: tuple[int, int],
    tense: str,
    past: list[TemporalMention],
    future: list[TemporalMention],
    anchor: datetime,
) -> TemporalMention | None:
    """The mention that dates ``text[clause[0]:clause[1]]``, resolved in the direction its clause implies.

    ``tense`` is ``past``, ``future`` or ``present`` (anything else counts as present: a schedule — "my viva is
    on the 24th" — points ahead for weekdays and bare days, to the nearest occurrence for dates with a month).
    """
    start, end = clause
    inside = [m for m in past if m.start >= start and m.end <= end]
    if not inside:
        return None
    best = min(inside, key=lambda m: (_GRAIN_ORDER.get(m.range.grain, 5), m.start))
    ahead = next((m for m in future if m.start == best.start and m.end == best.end), None)
    if ahead is None or ahead.range.start == best.range.start:
        return best
    behind_gap = anchor - best.range.start
    ahead_gap = ahead.range.start - anchor
    if _HAS_MONTH.search(best.text) and best.range.grain in ("day", "minute", "hour", "part_of_day", "month"):
        if tense == "past":
            return best if behind_gap <= max(LEAN, ahead_gap) else ahead
        if tense == "future":
            return ahead if ahead_gap <= max(LEAN, behind_gap) else best
        return best if behind_gap < ahead_gap else ahead
    return best if tense == "past" else ahead
