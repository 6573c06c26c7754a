"""The one way an understanding is written: every revision is a new row that supersedes the active one of its slot
(one per workspace kind; one single-subject and one structural per subject; one relationship per pair), citing its
sources, with the change published and the new text queued for embedding under the perspectives.

Shared by the verbs (create, update, structural notes), consolidation and merges, so a slot never holds two active
understandings whichever path wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.errors import ValidationError
from engine.store import Tx, chunked
from engine.workspace.model import WORKSPACE_KINDS
from engine.workspace.rows import current_generation
from engine.workspace.searcher import queue_embedding


def active_of_slot(tx: Tx, user_id: str, kind: str, subject_ids: Sequence[int]) -> int | None:
    """The active understanding a new one of ``kind`` about ``subject_ids`` replaces: one per workspace kind,
    one single-subject and one structural per subject, one relationship per pair."""
    if kind in WORKSPACE_KINDS:
        row = tx.execute(
            "SELECT id FROM understandings WHERE user_id = ? AND kind = ? AND status = 'active' "
            "AND superseded_by IS NULL ORDER BY created_at DESC, id DESC LIMIT 1",
            (user_id, kind),
        ).first()
        return None if row is None else int(row[0])
    tagged = "".join(
        " AND EXISTS (SELECT 1 FROM understanding_subjects us WHERE us.understanding_id = u.id AND us.subject_id = ?)"
        for _ in subject_ids
    )
    row = tx.execute(
        f"SELECT u.id FROM understandings u WHERE u.user_id = ? AND u.kind = ? AND u.status = 'active' "
        f"AND u.superseded_by IS NULL{tagged} AND (SELECT COUNT(*) FROM understanding_subjects us "
        "WHERE us.understanding_id = u.id) = ? ORDER BY u.created_at DESC, u.id DESC LIMIT 1",
        (user_id, kind, *subject_ids, len(subject_ids)),
    ).first()
    return None if row is None else int(row[0])


def insert_understanding(
    tx: Tx,
    *,
    user_id: str,
    kind: str,
    title: str,
    summary: str,
    content: str,
    subject_ids: Sequence[int],
    sources: Sequence[int],
    session_id: str | None,
    source: str,
    previous: int | None,
) -> int:
    """Insert an understanding tagged with ``subject_ids`` and citing ``sources`` (each must be a stored object),
    superseding ``previous``; returns its id."""
    cited = list(dict.fromkeys(sources))
    for chunk in chunked(cited):
        marks = ",".join("?" * len(chunk))
        found = tx.execute(f"SELECT id FROM objects WHERE id IN ({marks})", tuple(chunk)).fetchall()
        known = {int(r[0]) for r in found}
        unknown = [i for i in chunk if i not in known]
        if unknown:
            raise ValidationError("source_observation_ids", f"no object with id {unknown[0]}")
    new_id = tx.new_id("understanding")
    tx.execute(
        "INSERT INTO understandings(id, user_id, kind, title, summary, content, supersedes, status, source, "
        "generation, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
        (
            new_id,
            user_id,
            kind,
            title,
            summary,
            content,
            previous,
            source,
            current_generation(tx, user_id),
            session_id,
            tx.now,
        ),
    )
    tx.executemany(
        "INSERT OR IGNORE INTO understanding_subjects(understanding_id, subject_id) VALUES (?, ?)",
        [(new_id, s) for s in dict.fromkeys(subject_ids)],
    )
    tx.executemany(
        "INSERT OR IGNORE INTO understanding_sources(understanding_id, object_id) VALUES (?, ?)",
        [(new_id, o) for o in cited],
    )
    if previous is not None:
        tx.execute(
            "UPDATE understandings SET superseded_by = ?, status = 'superseded' WHERE id = ?", (new_id, previous)
        )
        tx.emit("understanding.superseded", previous, by=new_id)
    tx.emit("understanding.created", new_id, kind=kind, user_id=user_id)
    queue_embedding(tx, user_id)
    return new_id
