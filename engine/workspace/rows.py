"""The workspace's rows and values: the columns read, the DTOs built from them, the generation counter, and the
checks every verb applies to what a client sends (each refusal names its field).

Shared by :mod:`engine.workspace.service` (the verbs), :mod:`engine.workspace.retrieval` (what ``bring_to_mind``
finds) and :mod:`engine.workspace.consolidate`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from engine.errors import ValidationError
from engine.store import Tx
from engine.temporal import from_epoch
from engine.workspace.model import Observation, Understanding

MAX_CONTENT = 20_000  # characters of one observation or understanding: a note, not a document
MAX_SUBJECTS = 32  # subjects one item may be tagged with
MAX_IDS = 500  # ids one call may name
GENERATION_KEY = "workspace.generation:"
#: Leaves out (and, as ``SEEN``, keeps only) what a session was shown: parameters user_id, session_id.
UNSEEN = (
    " AND NOT EXISTS (SELECT 1 FROM workspace_seen ws WHERE ws.user_id = ? AND ws.session_id = ? "
    "AND ws.object_id = u.id)"
)
SEEN = UNSEEN.replace("NOT EXISTS", "EXISTS")
MARKABLE = (("observations", "observation"), ("understandings", "understanding"), ("facts", "fact"))

OBSERVATION_COLUMNS = (
    "o.id, o.user_id, o.kind, o.content, o.confidence, o.observed_at, o.session_id, o.generation, "
    "(SELECT json_group_array(s.name) FROM observation_subjects os JOIN subjects s ON s.id = os.subject_id "
    "WHERE os.observation_id = o.id), o.useful_count, o.questionable_count"
)
UNDERSTANDING_COLUMNS = (
    "u.id, u.user_id, u.kind, u.title, u.summary, u.content, "
    "(SELECT json_group_array(s.name) FROM understanding_subjects us JOIN subjects s ON s.id = us.subject_id "
    "WHERE us.understanding_id = u.id), "
    "(SELECT json_group_array(src.object_id) FROM understanding_sources src WHERE src.understanding_id = u.id), "
    "u.status, u.supersedes, u.superseded_by, u.generation, u.source, u.session_id, u.created_at, "
    "u.useful_count, u.questionable_count"
)


def observation_from_row(row: Sequence[Any]) -> Observation:
    """An observation from a row of :data:`OBSERVATION_COLUMNS`."""
    return Observation(
        id=int(row[0]),
        user_id=str(row[1]),
        kind=str(row[2]),
        content=str(row[3]),
        confidence=float(row[4]),
        observed_at=from_epoch(float(row[5])),
        session_id=None if row[6] is None else str(row[6]),
        generation=int(row[7]),
        subjects=tuple(sorted(json.loads(row[8] or "[]"), key=str.casefold)),
        useful_count=int(row[9]),
        questionable_count=int(row[10]),
    )


def understanding_from_row(row: Sequence[Any]) -> Understanding:
    """An understanding from a row of :data:`UNDERSTANDING_COLUMNS`."""
    return Understanding(
        id=int(row[0]),
        user_id=str(row[1]),
        kind=str(row[2]),
        title=str(row[3]),
        summary=str(row[4]),
        content=str(row[5]),
        subjects=tuple(sorted(json.loads(row[6] or "[]"), key=str.casefold)),
        sources=tuple(sorted(int(i) for i in json.loads(row[7] or "[]"))),
        status=str(row[8]),
        supersedes=None if row[9] is None else int(row[9]),
        superseded_by=None if row[10] is None else int(row[10]),
        generation=int(row[11]),
        source=str(row[12]),
        session_id=None if row[13] is None else str(row[13]),
        created_at=from_epoch(float(row[14])),
        useful_count=int(row[15]),
        questionable_count=int(row[16]),
    )


STOPWORDS = frozenset(
    "the and for with that this from what when where which who whom about into over your their there have has had "
    "was were are is be been being does did how why can could would should will shall than then them they she him "
    "her his its our ours you yours mine".split()
)


def search_words(text: str, *, keep_short: bool = False) -> list[str]:
    """The words of ``text`` worth searching for (lower case, no punctuation; short and common words dropped)."""
    words = "".join(c if c.isalnum() else " " for c in text.casefold()).split()
    if keep_short:
        return words
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in STOPWORDS))


def content_hash(content: str) -> str:
    """The identity of an observation's content: whitespace runs count as one space, case counts."""
    return hashlib.sha256(" ".join(content.split()).encode("utf-8")).hexdigest()


def current_generation(q: Any, user_id: str) -> int:
    """The workspace's consolidation generation for ``user_id`` (0 before the first pass)."""
    value = q.execute("SELECT value FROM meta WHERE key = ?", (GENERATION_KEY + user_id,)).first()
    return int(value[0]) if value is not None else 0


def next_generation(tx: Tx, user_id: str) -> int:
    """Start a new consolidation generation and return its number."""
    new = current_generation(tx, user_id) + 1
    tx.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (GENERATION_KEY + user_id, str(new)),
    )
    return new


# -- validation --------------------------------------------------------------------------------------------------
def text_field(field: str, value: object, *, limit: int = MAX_CONTENT, required: bool = True) -> str:
    """``value`` stripped; refused, naming ``field``, when it is not text, is empty though ``required``, or is
    longer than ``limit`` characters."""
    if not isinstance(value, str):
        raise ValidationError(field, "must be text")
    clean = value.strip()
    if required and not clean:
        raise ValidationError(field, "must not be empty")
    if len(clean) > limit:
        raise ValidationError(field, f"is {len(clean)} characters long; at most {limit} are kept in one item")
    return clean


def names_field(field: str, names: Iterable[object], *, required: bool = False) -> list[str]:
    """The subject names given, spaces collapsed and each once (case aside; a bare string is one name); refused when
    ``required`` and empty, or past :data:`MAX_SUBJECTS`."""
    if isinstance(names, str):
        names = [names]
    out: list[str] = []
    seen: set[str] = set()
    for name in names:
        clean = " ".join(text_field(field, name, limit=200).split())
        if clean.casefold() not in seen:
            seen.add(clean.casefold())
            out.append(clean)
    if required and not out:
        raise ValidationError(field, "name at least one subject")
    if len(out) > MAX_SUBJECTS:
        raise ValidationError(field, f"names {len(out)} subjects; at most {MAX_SUBJECTS}")
    return out


def ids_field(field: str, ids: Iterable[object]) -> list[int]:
    """The ids given, each once in their order; refused for a value that is no positive 64-bit integer, or past
    :data:`MAX_IDS`."""
    out: list[int] = []
    for value in ids:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
            raise ValidationError(field, f"{value!r} is not an id")
        out.append(value)
    if len(out) > MAX_IDS:
        raise ValidationError(field, f"names {len(out)} ids; at most {MAX_IDS} in one call")
    return list(dict.fromkeys(out))


def confidence_field(value: float) -> float:
    """A confidence as a float; refused unless it is a number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise ValidationError("confidence", "must be a number from 0 to 1")
    return float(value)
