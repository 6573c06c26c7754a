"""Reading instants at the engine's edges: ISO-8601, epoch seconds, RFC 2822, LoCoMo stamps.

Every instant the engine stores is an aware UTC datetime.  :func:`parse_datetime` is the one place a
client's idea of a time (``occurred_at``, ``reference_time``, ``valid_time``, an importer's
timestamp) becomes one, and the one place a malformed time becomes a
:class:`~engine.errors.ValidationError` on the field ``time``.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime

from engine.errors import ValidationError
from engine.temporal.grammar import CLOCK, DATE, Context, parse_clock, resolve_date
from engine.temporal.lexicon import unnamed

_FIX = "Use ISO-8601 (2024-05-15T10:30:00Z), epoch seconds, or a stamp like '1:56 pm on 8 May, 2023'."
#: Epoch values above this are almost certainly milliseconds (in seconds they would be after the
#: year 5138).
_MAX_EPOCH_SECONDS = 1e11
#: Year 5 or so: from here to the maximum every value converts without an error.
_FAST_MIN_EPOCH = -62_000_000_000.0
_NUMERIC = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: "1:56 pm on 8 May, 2023" (LoCoMo), also without the time, or with the date first ("8 May, 2023,
#: 1:56 pm").
_STAMP = re.compile(
    rf"(?:(?P<clock>{unnamed(CLOCK)})\s*(?:on\s+|,\s*))?(?P<date>{unnamed(DATE)})"
    rf"(?:,?\s+(?:at\s+)?(?P<clock2>{unnamed(CLOCK)}))?",
    re.IGNORECASE,
)
_DATE_RE = re.compile(DATE, re.IGNORECASE)
# Any anchor works for dates that carry their year; this one is never consulted for them.
_EPOCH_CONTEXT = Context(datetime(1970, 1, 1, tzinfo=UTC), "past")


def to_epoch(dt: datetime) -> float:
    """Seconds since the Unix epoch; a naive datetime is taken as UTC."""
    if not isinstance(dt, datetime):
        raise ValidationError("time", f"expected a datetime, got {type(dt).__name__}")
    if dt.tzinfo is None or dt.utcoffset() is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def from_epoch(x: float) -> datetime:
    """The aware UTC datetime ``x`` seconds after the Unix epoch."""
    kind = type(x)
    if (kind is float or kind is int) and _FAST_MIN_EPOCH <= x <= _MAX_EPOCH_SECONDS:
        # the common case, checked with as little work as possible: recall converts hundreds per request
        # (NaN and infinities fail the range test and get the full checks below)
        return datetime.fromtimestamp(x, tz=UTC)
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise ValidationError("time", f"expected epoch seconds, got {type(x).__name__}")
    if not math.isfinite(x):
        raise ValidationError("time", f"{x!r} is not a time", fix=_FIX)
    if abs(x) > _MAX_EPOCH_SECONDS:
        raise ValidationError(
            "time",
            f"{x!r} is too large for epoch seconds",
            fix="Epoch values must be in seconds; divide milliseconds by 1000.",
        )
    try:
        return datetime.fromtimestamp(x, tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise ValidationError("time", f"{x!r} is out of range", fix=_FIX) from exc


def _aware_utc(dt: datetime) -> datetime:
    if dt.tzinfo is None or dt.utcoffset() is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def _stamp(text: str) -> datetime | None:
    m = _STAMP.fullmatch(text)
    if m is None:
        return None
    inner = _DATE_RE.fullmatch(m.group("date"))
    if inner is None:
        return None
    named_month = inner.group("m1") or inner.group("m2")
    if named_month and not (inner.group("y1") or inner.group("y2")):
        # A stamp must name its year; "8 May" alone is an expression for resolve(), not an instant.
        return None
    day = resolve_date(_EPOCH_CONTEXT, inner)
    clock_text = m.group("clock") or m.group("clock2")
    clock = parse_clock(clock_text) if clock_text else None
    if day is None or (clock_text and clock is None):
        return None
    hour, minute = (clock.hour, clock.minute) if clock else (0, 0)
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)


def parse_datetime(value: str | datetime | float | int) -> datetime:
    """``value`` as an aware UTC datetime.

    Accepts datetimes (naive = UTC), epoch seconds (numbers or numeric strings), ISO-8601 strings
    (with or without a zone, ``Z``, or date only), RFC 2822 ("Mon, 08 May 2023 13:56:00 +0000") and
    LoCoMo's session stamps ("1:56 pm on 8 May, 2023"; zone-less stamps are UTC).  Anything else
    raises ``ValidationError("time", ...)``.
    """
    if isinstance(value, datetime):
        return _aware_utc(value)
    if isinstance(value, bool):
        raise ValidationError("time", "expected a time, got a boolean", fix=_FIX)
    if isinstance(value, int | float):
        return from_epoch(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        raise ValidationError("time", f"expected a time, got {type(value).__name__}", fix=_FIX)
    text = value.strip()
    if not text or len(text) > 100:
        raise ValidationError("time", "expected a time, got an empty or overlong string", fix=_FIX)
    if _NUMERIC.fullmatch(text):
        return from_epoch(float(text))
    try:
        return _aware_utc(datetime.fromisoformat(text))
    except ValueError:
        pass
    stamp = _stamp(text)
    if stamp is not None:
        return stamp
    if text[:3].isalpha():
        try:
            return _aware_utc(parsedate_to_datetime(text))
        except (TypeError, ValueError, IndexError):
            pass
    raise ValidationError("time", f"cannot read {value!r} as a time", fix=_FIX)
