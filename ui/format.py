"""How the views write values: dates in local time, confidences, subject names, counts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from engine.subjects import OWNER

if TYPE_CHECKING:
    from engine.vectors.migration import VectorStatus

OWNER_LABEL = "You"


def local_time(value: datetime | float | None, *, seconds: bool = False) -> str:
    """``2026-01-02 10:03`` in the computer's time zone ("" for None).

    Engine times are aware UTC datetimes or Unix seconds (jobs).
    """
    if value is None:
        return ""
    moment = datetime.fromtimestamp(value, UTC) if isinstance(value, int | float) else value
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def local_date(value: datetime | None) -> str:
    """``2026-01-02`` in the computer's time zone ("" for None)."""
    return "" if value is None else value.astimezone().strftime("%Y-%m-%d")


def percent(value: float) -> str:
    """A 0–1 score as a whole percentage."""
    return f"{round(value * 100)}%"


def subject_label(name: str) -> str:
    """The vault owner's subject (``user``) is shown as "You"; other subjects by name."""
    return OWNER_LABEL if name == OWNER else name


def subject_name(text: str) -> str:
    """The engine's name for a subject as typed ("You" or "me" is the vault owner, ``user``)."""
    clean = text.strip()
    return OWNER if clean.casefold() in (OWNER_LABEL.casefold(), "me") else clean


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``1 memory`` / ``3 memories``."""
    word = noun if count == 1 else (plural_noun or f"{noun}s")
    return f"{count:,} {word}"


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut with an ellipsis past ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def vectors_text(status: VectorStatus) -> str:
    """One line for a re-embedding's progress and vectors waiting for their embedder ("" when all is well)."""
    parts = []
    if status.migration is not None:
        done = max(0, status.migration.total - status.remaining)
        parts.append(
            f"Re-embedding with {status.migration.to_model}: {done:,} of {status.migration.total:,} "
            f"(searches use {status.migration.from_model} for the rest meanwhile)"
        )
    if status.queued:
        parts.append(f"{status.queued:,} items wait for their vectors until the embedder is back")
    return "\n".join(parts)


def error_text(message: str | None, at: float | None) -> str:
    """ "Last error 14:02:11: …" or ""."""
    if not message:
        return ""
    when = local_time(at, seconds=True)
    return f"Last error {when}: {message}"
