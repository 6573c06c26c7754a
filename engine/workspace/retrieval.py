"""What ``bring_to_mind`` finds: the understandings of the subjects a topic names, those whose words match it, and
the fresh observations (not yet covered by an understanding) on it — leaving out, in SQL, what the session was
already shown.

Subjects are found by their names and aliases in the topic (runs of up to four words, longest first) through an
index rebuilt only when the user's subjects change, so a vault of thousands of subjects costs a few dictionary
lookups per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.workspace import consolidate as passes
from engine.workspace.model import Observation, Understanding
from engine.workspace.rows import (
    OBSERVATION_COLUMNS,
    SEEN,
    UNDERSTANDING_COLUMNS,
    UNSEEN,
    observation_from_row,
    search_words,
    understanding_from_row,
)

#: Full-text matches considered per search (best ranked first); ``already_seen`` counts among these.
CANDIDATES = 200


class Retrieval:
    """The searches of ``bring_to_mind`` (one per workspace: it keeps each user's name index)."""

    def __init__(self) -> None:
        self._names: dict[str, tuple[tuple[Any, ...], dict[str, int]]] = {}

    def understandings(
        self, q: Any, topic: str, words: list[str], user_id: str, limit: int, unseen: tuple[str, str] | None
    ) -> tuple[list[Understanding], int]:
        """Active understandings of the subjects named in ``topic``, then those whose words match it, leaving out
        what the session ``unseen`` (user, session) was shown; and how many were left out so."""
        index = self._name_index(q, user_id)
        tokens = search_words(topic, keep_short=True)
        named: list[int] = []
        for size in range(min(4, len(tokens)), 0, -1):  # "Bob Smith" before "Bob"
            for start in range(len(tokens) - size + 1):
                subject_id = index.get(" ".join(tokens[start : start + size]))
                if subject_id is not None and subject_id not in named:
                    named.append(subject_id)
        active = "u.user_id = ? AND u.status = 'active' AND u.superseded_by IS NULL"
        ids: list[int] = []
        seen: set[int] = set()
        for subject_id in named[:10]:
            # from the subject's tags to its understandings (CROSS JOIN keeps that order: the other way scans them all)
            base = (
                "FROM understanding_subjects us CROSS JOIN understandings u ON u.id = us.understanding_id "
                f"WHERE {active} "
            )
            args: tuple[Any, ...] = (user_id, subject_id)
            ids += [
                int(r[0])
                for r in q.execute(
                    f"SELECT u.id {base} AND us.subject_id = ?{UNSEEN if unseen else ''} "
                    "ORDER BY u.created_at DESC LIMIT ?",
                    (*args, *(unseen or ()), limit),
                ).fetchall()
            ]
            if unseen:
                rows = q.execute(f"SELECT u.id {base} AND us.subject_id = ?{SEEN}", (*args, *unseen)).fetchall()
                seen.update(int(r[0]) for r in rows)
        if words:
            match = " OR ".join(f'"{w}"' for w in words[:32])
            # the best CANDIDATES matches by rank, then the filters: a common word matching every understanding of a
            # large vault must not make each call filter (and count) them all
            base = (
                "FROM (SELECT rowid AS id, rank FROM understandings_fts WHERE understandings_fts MATCH ? "
                f"ORDER BY rank LIMIT {CANDIDATES}) f JOIN understandings u ON u.id = f.id WHERE {active}"
            )
            ids += [
                int(r[0])
                for r in q.execute(
                    f"SELECT u.id {base}{UNSEEN if unseen else ''} ORDER BY f.rank LIMIT ?",
                    (match, user_id, *(unseen or ()), limit),
                ).fetchall()
            ]
            if unseen:
                rows = q.execute(f"SELECT u.id {base}{SEEN}", (match, user_id, *unseen)).fetchall()
                seen.update(int(r[0]) for r in rows)
        chosen = list(dict.fromkeys(ids))[:limit]
        return self.understandings_by_id(q, chosen), len(seen)

    def understandings_by_id(self, q: Any, ids: Sequence[int]) -> list[Understanding]:
        """The understandings of ``ids`` in that order, read in one query."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = {
            int(r[0]): understanding_from_row(r)
            for r in q.execute(
                f"SELECT {UNDERSTANDING_COLUMNS} FROM understandings u WHERE u.id IN ({marks})", tuple(ids)
            ).fetchall()
        }
        return [rows[i] for i in ids if i in rows]

    def _name_index(self, q: Any, user_id: str) -> dict[str, int]:
        """Names and aliases (as search words joined by spaces) → subject id, rebuilt only when the user's
        subjects change (their count, newest change or newest id)."""
        fingerprint = tuple(
            q.execute("SELECT COUNT(*), MAX(updated_at), MAX(id) FROM subjects WHERE user_id = ?", (user_id,)).first()
        )
        cached = self._names.get(user_id)
        if cached is not None and cached[0] == fingerprint:
            return cached[1]
        index: dict[str, int] = {}
        for subject_id, name, aliases in q.execute(
            "SELECT id, name, aliases FROM subjects WHERE user_id = ? AND merged_into IS NULL", (user_id,)
        ).fetchall():
            for label in (str(name), *passes.aliases_of(aliases)):
                key = " ".join(search_words(label, keep_short=True))
                if key:
                    index.setdefault(key, int(subject_id))
        self._names[user_id] = (fingerprint, index)
        return index

    def fresh_observations(
        self, q: Any, words: list[str], user_id: str, limit: int, unseen: tuple[str, str] | None
    ) -> tuple[list[Observation], int]:
        """Observations on the topic that no active understanding covers yet, best match first, leaving out what
        the session ``unseen`` was shown; and how many were left out so."""
        if not words:
            return [], 0
        match = " OR ".join(f'"{w}"' for w in words[:32])
        base = (
            "FROM (SELECT rowid AS id, rank FROM observations_fts WHERE observations_fts MATCH ? "
            f"ORDER BY rank LIMIT {CANDIDATES}) f JOIN observations o ON o.id = f.id WHERE o.user_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM understanding_sources s JOIN understandings u "
            "ON u.id = s.understanding_id WHERE s.object_id = o.id AND u.superseded_by IS NULL)"
        )
        unseen_sql = UNSEEN.replace("u.id", "o.id")
        ranked = [
            int(r[0])
            for r in q.execute(
                f"SELECT o.id {base}{unseen_sql if unseen else ''} ORDER BY f.rank LIMIT ?",
                (match, user_id, *(unseen or ()), limit),
            ).fetchall()
        ]
        seen = 0
        if unseen:
            seen = int(
                q.execute(f"SELECT COUNT(*) {base}{SEEN.replace('u.id', 'o.id')}", (match, user_id, *unseen)).scalar()
            )
        if not ranked:
            return [], seen
        marks = ",".join("?" * len(ranked))
        rows = {
            int(r[0]): observation_from_row(r)
            for r in q.execute(
                f"SELECT {OBSERVATION_COLUMNS} FROM observations o WHERE o.id IN ({marks})", tuple(ranked)
            ).fetchall()
        }
        return [rows[i] for i in ranked if i in rows], seen
