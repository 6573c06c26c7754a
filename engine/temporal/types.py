"""The time types: what a time expression resolved to, and where it was found.

They belong to the temporal room that makes them; the facts room, which keeps them on propositions, imports them
from here rather than the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["Grain", "TemporalMention", "TimeRange"]

# -- types ---------------------------------------------------------------------------------------------------
Grain = Literal[
    "instant",
    "minute",
    "hour",
    "part_of_day",
    "day",
    "weekend",
    "week",
    "month",
    "season",
    "year",
    "range",
]


@dataclass(frozen=True, slots=True)
class TimeRange:
    """An absolute, timezone-aware interval [start, end) that a time expression resolved to."""

    start: datetime
    end: datetime
    grain: Grain
    expression: str


@dataclass(frozen=True, slots=True)
class TemporalMention:
    """A time expression found in a text, with its offsets and resolved range."""

    start: int
    end: int
    text: str
    range: TimeRange
