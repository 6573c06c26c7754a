"""Typed access to decoded JSON records and timestamp conversion for the transcript importers.

Every importer reads untrusted files, so each field is checked for presence and type before use, and
a problem becomes an :class:`ImportFormatError` whose location names the record (``where``) and
whose message names the key and what is wrong with it.  Keeping these checks here keeps the format
modules about their formats.

Timestamps always come out timezone-aware in UTC.  A time without a zone (a naive ISO string, a chat
log's wall clock) is taken as UTC: the file does not say which zone it meant, and guessing the
importing machine's zone would make the same file produce different event times on different
machines, which defeats re-import deduplication.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from engine.plugin_api import ImportFormatError

#: A decoded JSON object.
JsonObject = Mapping[str, object]

#: Epoch values above this are milliseconds: as seconds they would lie beyond the year 5000.
_MILLISECONDS_THRESHOLD = 1e11

_NUMERIC = re.compile(r"[+-]?\d+(?:\.\d+)?")


def describe(value: object) -> str:
    """The JSON name of ``value``'s type, for error messages a user can act on."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def expect_object(value: object, label: str, where: str) -> JsonObject:
    """``value`` as a JSON object, or an error saying that ``label`` is something else."""
    if not isinstance(value, dict):
        raise ImportFormatError(f"{label} must be an object, not {describe(value)}", location=where)
    return value


def required(obj: JsonObject, key: str, where: str, *, label: str | None = None) -> object:
    """The value under ``key``; a missing key is an error naming it."""
    if key not in obj:
        raise ImportFormatError(f"missing key '{label or key}'", location=where)
    return obj[key]


def required_str(obj: JsonObject, key: str, where: str, *, label: str | None = None) -> str:
    """A string field that must be present."""
    value = required(obj, key, where, label=label)
    if not isinstance(value, str):
        raise ImportFormatError(f"'{label or key}' must be a string, not {describe(value)}", location=where)
    return value


def optional_str(obj: JsonObject, key: str, where: str, *, label: str | None = None) -> str | None:
    """A string field that may be absent or null."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ImportFormatError(f"'{label or key}' must be a string or null, not {describe(value)}", location=where)


def required_list(obj: JsonObject, key: str, where: str, *, label: str | None = None) -> list[object]:
    """A list field that must be present."""
    value = required(obj, key, where, label=label)
    if not isinstance(value, list):
        raise ImportFormatError(f"'{label or key}' must be a list, not {describe(value)}", location=where)
    return value


def optional_id(obj: JsonObject, key: str, where: str) -> str | None:
    """An id given as a string or an integer (scripts write both); integers become strings."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ImportFormatError(f"'{key}' must be a string or an integer, not {describe(value)}", location=where)


# -- timestamps ------------------------------------------------------------------------------------
def from_epoch(value: float) -> datetime:
    """UTC datetime from Unix seconds (or milliseconds, told apart by size); else ``ValueError``."""
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    seconds = value / 1000 if abs(value) > _MILLISECONDS_THRESHOLD else value
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError) as exc:
        raise ValueError("out of range") from exc


def from_iso(text: str) -> datetime:
    """UTC datetime from ISO-8601 text (``Z``/offset; naive means UTC); else ``ValueError``."""
    parsed = datetime.fromisoformat(text.strip())
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def epoch_field(obj: JsonObject, key: str, where: str, *, label: str | None = None) -> datetime | None:
    """An optional epoch-seconds number field (``null`` or absent → ``None``)."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ImportFormatError(f"'{label or key}' must be a number of seconds, not {describe(value)}", location=where)
    try:
        return from_epoch(value)
    except ValueError as exc:
        raise ImportFormatError(f"bad timestamp in '{label or key}' ({value!r}): {exc}", location=where) from exc


def iso_field(obj: JsonObject, key: str, where: str, *, label: str | None = None) -> datetime | None:
    """An optional ISO-8601 string field (``null`` or absent → ``None``)."""
    text = optional_str(obj, key, where, label=label)
    if text is None:
        return None
    try:
        return from_iso(text)
    except ValueError as exc:
        raise ImportFormatError(f"bad timestamp in '{label or key}' ({text!r}): not ISO-8601", location=where) from exc


def flexible_time_field(obj: JsonObject, key: str, where: str) -> datetime | None:
    """An optional time given as ISO-8601 text, epoch seconds/milliseconds, or a numeric string."""
    value = obj.get(key)
    if isinstance(value, str) and _NUMERIC.fullmatch(value.strip()):
        try:
            return from_epoch(float(value))
        except ValueError as exc:
            raise ImportFormatError(f"bad timestamp in '{key}' ({value!r}): {exc}", location=where) from exc
    if isinstance(value, str):
        return iso_field(obj, key, where)
    return epoch_field(obj, key, where)
