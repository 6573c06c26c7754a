"""The subject workspace: observations, understandings and the relationships between subjects (DESIGN §3a).

This module owns the tables ``observations``, ``observation_subjects``, ``understanding_sources``,
``workspace_sessions`` and ``workspace_seen``, and writes ``understandings``/``understanding_subjects``; subjects
themselves belong to :mod:`engine.subjects`, which this module calls to find or create them.

Why it is shaped so:

* **Evidence is immutable.**  An observation is never edited: a second write of the same content (by hash, per
  user) is a no-op that returns the first.  Only the session that wrote one may delete it — sessions are
  provenance, and one client's clean-up must not reach another's notes.
* **Understandings are revised by supersession.**  ``update_understanding`` writes a new row citing the old one;
  the old row gets ``superseded_by`` and leaves the active set.  The chain can always be walked back.
* **A relationship is an intersection.**  There is no edge table: what two subjects share is everything tagged with
  both — observations, facts, turns and understandings — and their neighbourhood is ranked by its size.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from engine.ai.embedders import Embedder
from engine.ai.llm import LLM
from engine.errors import Conflict, NotFound, ValidationError
from engine.jobs import Job, JobOutcome, each_job, enqueue, finish_jobs
from engine.store import Store, Tx, chunked
from engine.subjects import Subject, SubjectsApi, ensure_subject, find_subject_id
from engine.temporal import parse_datetime, to_epoch
from engine.workspace import consolidate as passes, sessions
from engine.workspace.model import (
    UNDERSTANDING_KINDS,
    WORKSPACE_KINDS,
    BroughtToMind,
    ConsolidationReport,
    Deleted,
    Intersection,
    Neighbour,
    Observation,
    Oriented,
    Remembered,
    Searched,
    SimilarSubject,
    SubjectRecall,
    TaggedFact,
    Understanding,
    WorkspaceStats,
)
from engine.workspace.retrieval import Retrieval
from engine.workspace.rows import (
    OBSERVATION_COLUMNS,
    UNDERSTANDING_COLUMNS,
    confidence_field,
    content_hash,
    current_generation,
    ids_field,
    names_field,
    next_generation,
    observation_from_row,
    search_words,
    text_field,
    understanding_from_row,
)
from engine.workspace.searcher import Searcher, queue_embedding
from engine.workspace.writes import active_of_slot, insert_understanding

CONSOLIDATE_JOB = "consolidate"


class Workspace:
    """The workspace verbs over one vault's store (``vault.workspace``).

    ``llm`` gives the configured model (or None) each time it is needed, so a model that comes or goes between
    passes is picked up; ``notify`` wakes the job runner after a consolidation job is queued.
    """

    def __init__(
        self,
        store: Store,
        subjects: SubjectsApi,
        *,
        llm: Callable[[], LLM | None] | None = None,
        timeout_s: float = 60.0,
        use_model: bool = True,
        notify: Callable[[], None] | None = None,
        embedder: Callable[[], Embedder | None] | None = None,
        perspective_instructions: Callable[[], str] = lambda: "auto",
    ) -> None:
        self._store = store
        self.searcher = Searcher(store, embedder, perspective_instructions)
        self._subjects = subjects
        self._llm = llm
        self._timeout_s = timeout_s
        self._use_model = use_model
        self._notify = notify
        self._retrieval = Retrieval()

    # -- generations ---------------------------------------------------------------------------------------------
    def generation(self, *, user_id: str = "default") -> int:
        """The current consolidation generation."""
        with self._store.snapshot() as snap:
            return current_generation(snap, user_id)

    # -- subjects ------------------------------------------------------------------------------------------------
    def create_subjects(
        self, names: Sequence[str], *, kind: str = "entity", user_id: str = "default"
    ) -> tuple[list[Subject], list[str]]:
        """The subjects called ``names``, creating those that do not exist; returns them and the names created."""
        wanted = names_field("names", names, required=True)
        kind = text_field("kind", kind, limit=40)

        def op(tx: Tx) -> tuple[list[int], list[str]]:
            created = [n for n in wanted if find_subject_id(tx, user_id, n) is None]
            return [ensure_subject(tx, user_id, n, kind) for n in wanted], created

        ids, created = self._store.write(op)
        return [self._subjects.get(i) for i in ids], created

    def get_subjects(self, names: Sequence[str], *, user_id: str = "default") -> tuple[list[Subject], list[str]]:
        """The subjects called (or aliased) ``names``, and the names no subject answers to."""
        found: list[Subject] = []
        missing: list[str] = []
        with self._store.snapshot() as snap:
            ids = [(n, find_subject_id(snap, user_id, n)) for n in names_field("names", names, required=True)]
        for name, subject_id in ids:
            if subject_id is None:
                missing.append(name)
            else:
                found.append(self._subjects.get(subject_id))
        return found, missing

    def update_subject_summary(
        self, name: str, summary: str, *, tags: Sequence[str] | None = None, user_id: str = "default"
    ) -> Subject:
        """Set a subject's summary (and, when given, its tags)."""
        text = text_field("summary", summary, limit=4000, required=False)
        clean_tags = None if tags is None else names_field("tags", tags)

        def op(tx: Tx) -> int:
            subject_id = self._subject_id(tx, name, user_id)
            tx.execute("UPDATE subjects SET summary = ?, updated_at = ? WHERE id = ?", (text, tx.now, subject_id))
            if clean_tags is not None:
                tx.execute("UPDATE subjects SET tags = ? WHERE id = ?", (json.dumps(clean_tags), subject_id))
            tx.emit("subject.updated", subject_id, summary=True)
            return subject_id

        return self._subjects.get(self._store.write(op))

    # -- observations --------------------------------------------------------------------------------------------
    def remember(
        self,
        content: str,
        subject_names: Sequence[str],
        *,
        kind: str = "note",
        confidence: float = 0.8,
        session_id: str | None = None,
        related_to: Sequence[int] = (),
        observed_at: datetime | str | float | None = None,
        user_id: str = "default",
    ) -> Remembered:
        """Write an observation tagged with ``subject_names`` (creating the subjects that do not exist yet).

        The same content written again is a no-op that returns the first observation (``duplicate``).
        ``related_to`` names understandings the observation bears on: it joins their sources, so the
        consolidation report can tell which understandings have new evidence.
        """
        text = text_field("content", content)
        names = names_field("subject_names", subject_names, required=True)
        kind = text_field("kind", kind, limit=40)
        conf = confidence_field(confidence)
        related = ids_field("related_to", related_to)
        session = None if session_id is None else text_field("session_id", session_id, limit=200)
        when = to_epoch(parse_datetime(observed_at)) if observed_at is not None else None
        digest = content_hash(text)

        def op(tx: Tx) -> tuple[int, bool, list[str]]:
            existing = tx.execute(
                "SELECT id FROM observations WHERE user_id = ? AND content_hash = ?", (user_id, digest)
            ).first()
            if existing is not None:
                return int(existing[0]), True, []
            for understanding_id in related:
                self._understanding_row(tx, understanding_id)  # NotFound for an unknown id
            created = [n for n in names if find_subject_id(tx, user_id, n) is None]
            subject_ids = [ensure_subject(tx, user_id, n) for n in names]
            observation_id = tx.new_id("observation")
            tx.execute(
                "INSERT INTO observations(id, user_id, kind, content, content_hash, confidence, observed_at, "
                "session_id, generation, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    observation_id,
                    user_id,
                    kind,
                    text,
                    digest,
                    conf,
                    tx.now if when is None else when,
                    session,
                    current_generation(tx, user_id),
                    tx.now,
                ),
            )
            tx.executemany(
                "INSERT OR IGNORE INTO observation_subjects(observation_id, subject_id) VALUES (?, ?)",
                [(observation_id, s) for s in subject_ids],
            )
            tx.executemany(
                "INSERT OR IGNORE INTO understanding_sources(understanding_id, object_id) VALUES (?, ?)",
                [(u, observation_id) for u in related],
            )
            tx.emit("observation.created", observation_id, user_id=user_id)
            queue_embedding(tx, user_id)
            return observation_id, False, created

        observation_id, duplicate, created = self._store.write(op)
        return Remembered(self.observation(observation_id), duplicate, tuple(created))

    def observation(self, observation_id: int) -> Observation:
        """One observation by id."""
        rows = self._store.query(f"SELECT {OBSERVATION_COLUMNS} FROM observations o WHERE o.id = ?", (observation_id,))
        if not rows:
            raise NotFound("observation", observation_id)
        return observation_from_row(rows[0])

    def delete_observations(self, ids: Sequence[int], *, session_id: str, user_id: str = "default") -> Deleted:
        """Delete the observations of ``ids`` this session wrote; every other id is rejected with its reason."""
        wanted = ids_field("ids", ids)
        session = text_field("session_id", session_id, limit=200)

        def op(tx: Tx) -> Deleted:
            rejected: dict[int, str] = {}
            deleting: list[int] = []
            for chunk in chunked(wanted):
                marks = ",".join("?" * len(chunk))
                rows = {
                    int(r[0]): (str(r[1]), r[2])
                    for r in tx.execute(
                        f"SELECT id, user_id, session_id FROM observations WHERE id IN ({marks})", tuple(chunk)
                    ).fetchall()
                }
                for oid in chunk:
                    owner = rows.get(oid)
                    if owner is None or owner[0] != user_id:
                        rejected[oid] = "no such observation"
                    elif owner[1] != session:
                        rejected[oid] = "written in another session; only the session that wrote it may delete it"
                    else:
                        deleting.append(oid)
            for chunk in chunked(deleting):
                tx.execute(f"DELETE FROM objects WHERE id IN ({','.join('?' * len(chunk))})", tuple(chunk))
            for oid in deleting:
                tx.emit("observation.deleted", oid, user_id=user_id)
            return Deleted(tuple(deleting), rejected)

        result: Deleted = self._store.write(op)
        return result

    def search_observations(
        self, query: str, *, subject_names: Sequence[str] = (), limit: int = 20, user_id: str = "default"
    ) -> list[Observation]:
        """Observations matching ``query`` (full-text, every word), optionally only those tagged with every one of
        ``subject_names``; best matches first."""
        words = "".join(c if c.isalnum() else " " for c in text_field("query", query, limit=1000)).split()
        if not words:
            return []
        match = " ".join(f'"{w}"' for w in words[:32])
        limit = max(1, min(int(limit), 200))
        with self._store.snapshot() as snap:
            subject_ids = self._subject_ids(snap, subject_names, user_id) if subject_names else []
            tagged = "".join(
                " AND EXISTS (SELECT 1 FROM observation_subjects os WHERE os.observation_id = o.id "
                "AND os.subject_id = ?)"
                for _ in subject_ids
            )
            rows = snap.execute(
                f"SELECT {OBSERVATION_COLUMNS} FROM observations_fts f JOIN observations o ON o.id = f.rowid "
                f"WHERE observations_fts MATCH ? AND o.user_id = ?{tagged} ORDER BY f.rank LIMIT ?",
                (match, user_id, *subject_ids, limit),
            ).fetchall()
        return [observation_from_row(r) for r in rows]

    def search(
        self,
        query: str,
        *,
        subject_names: Sequence[str] = (),
        include_observations: bool = True,
        limit: int = 10,
        user_id: str = "default",
    ) -> Searched:
        """Understandings and observations on ``query``, by words and across the perspectives (see
        :mod:`engine.workspace.search`), optionally only those tagged with every one of ``subject_names``."""
        text = text_field("query", query, limit=1000)
        names = names_field("subject_names", subject_names)
        return self.searcher.search(
            text,
            subject_ids=lambda snap: self._subject_ids(snap, names, user_id) if names else [],
            include_observations=include_observations,
            limit=max(1, min(int(limit), 100)),
            user_id=user_id,
        )

    def observations_of(
        self, subject_names: Sequence[str], *, limit: int = 20, user_id: str = "default"
    ) -> list[Observation]:
        """The newest observations tagged with every one of ``subject_names``."""
        limit = max(1, min(int(limit), 500))
        with self._store.snapshot() as snap:
            subject_ids = self._subject_ids(snap, subject_names, user_id)
            rows = snap.execute(
                f"SELECT {OBSERVATION_COLUMNS} FROM observations o WHERE o.user_id = ?"
                + "".join(
                    " AND EXISTS (SELECT 1 FROM observation_subjects os WHERE os.observation_id = o.id "
                    "AND os.subject_id = ?)"
                    for _ in subject_ids
                )
                + " ORDER BY o.observed_at DESC, o.id DESC LIMIT ?",
                (user_id, *subject_ids, limit),
            ).fetchall()
        return [observation_from_row(r) for r in rows]

    # -- understandings ------------------------------------------------------------------------------------------
    def create_understanding(
        self,
        content: str,
        *,
        summary: str,
        subject_names: Sequence[str] = (),
        kind: str | None = None,
        title: str = "",
        sources: Sequence[int] = (),
        session_id: str | None = None,
        source: str = "client",
        user_id: str = "default",
    ) -> Understanding:
        """Write an understanding tagged with ``subject_names``, citing ``sources`` (any object ids).

        Without ``kind`` one subject makes a ``single_subject`` understanding and two a ``relationship``.  The
        workspace kinds (soul, protocol, orientation) take no subject; a new one supersedes the active one.  A new
        single-subject or structural understanding of a subject that already has an active one supersedes it too,
        so each subject has one current picture.
        """
        text = text_field("content", content)
        short = text_field("summary", summary, limit=1000)
        names = names_field("subject_names", subject_names)
        chosen = kind if kind is not None else {1: "single_subject", 2: "relationship"}.get(len(names))
        if chosen is None:
            raise ValidationError("kind", f"{len(names)} subjects named: say which kind of understanding this is")
        if chosen not in UNDERSTANDING_KINDS:
            raise ValidationError("kind", f"must be one of {', '.join(UNDERSTANDING_KINDS)}")
        if chosen in WORKSPACE_KINDS and names:
            raise ValidationError("subject_names", f"a {chosen} understanding is about the workspace, not subjects")
        if chosen in ("single_subject", "structural") and len(names) != 1:
            raise ValidationError("subject_names", f"a {chosen} understanding is about exactly one subject")
        if chosen == "relationship" and len(names) != 2:
            raise ValidationError("subject_names", "a relationship understanding is about exactly two subjects")
        cited = ids_field("source_observation_ids", sources)
        session = None if session_id is None else text_field("session_id", session_id, limit=200)
        heading = text_field("title", title, limit=300, required=False)

        def op(tx: Tx) -> int:
            subject_ids = [ensure_subject(tx, user_id, n) for n in names]
            previous = active_of_slot(tx, user_id, chosen, subject_ids)
            return insert_understanding(
                tx,
                user_id=user_id,
                kind=chosen,
                title=heading,
                summary=short,
                content=text,
                subject_ids=subject_ids,
                sources=cited,
                session_id=session,
                source=source,
                previous=previous,
            )

        return self.understanding(self._store.write(op))

    def update_understanding(
        self,
        understanding_id: int,
        *,
        new_content: str,
        new_summary: str,
        sources: Sequence[int] | None = None,
        session_id: str | None = None,
    ) -> Understanding:
        """Revise an active understanding: a new row with the same kind and subjects supersedes it.

        Its sources are the old ones plus ``sources``.  Revising one that was superseded already is refused (revise
        the current one: ``understanding_history`` shows it).
        """
        text = text_field("new_content", new_content)
        short = text_field("new_summary", new_summary, limit=1000)
        more = ids_field("source_observation_ids", sources or ())
        session = None if session_id is None else text_field("session_id", session_id, limit=200)

        def op(tx: Tx) -> int:
            old = self._understanding_row(tx, understanding_id)
            if not old.active:
                raise ValidationError(
                    "understanding_id",
                    f"understanding {understanding_id} was superseded by {old.superseded_by}; revise the current one",
                )
            subject_ids = self._subject_ids(tx, old.subjects, old.user_id)
            return insert_understanding(
                tx,
                user_id=old.user_id,
                kind=old.kind,
                title=old.title,
                summary=short,
                content=text,
                subject_ids=subject_ids,
                sources=[*old.sources, *more],
                session_id=session,
                source="client" if old.source == "consolidation" else old.source,
                previous=understanding_id,
            )

        return self.understanding(self._store.write(op))

    def set_structural_understanding(
        self,
        subject_name: str,
        content: str,
        *,
        summary: str = "",
        session_id: str | None = None,
        user_id: str = "default",
    ) -> Understanding:
        """Write a subject's structural understanding (aliases, containment, merges in prose), superseding the old."""
        return self.create_understanding(
            content,
            summary=summary or "How this subject relates to others by name and containment.",
            subject_names=[subject_name],
            kind="structural",
            session_id=session_id,
            user_id=user_id,
        )

    def understanding(self, understanding_id: int) -> Understanding:
        """One understanding by id (active or not)."""
        with self._store.snapshot() as snap:
            return self._understanding_row(snap, understanding_id)

    def get_understandings(
        self, subject_names: Sequence[str] = (), *, kind: str | None = None, user_id: str = "default"
    ) -> list[Understanding]:
        """The active understandings tagged with every one of ``subject_names`` (none named: the workspace's own
        soul, protocol and orientation), newest first."""
        with self._store.snapshot() as snap:
            if subject_names:
                subject_ids = self._subject_ids(snap, subject_names, user_id)
                tagged = "".join(
                    " AND EXISTS (SELECT 1 FROM understanding_subjects us WHERE us.understanding_id = u.id "
                    "AND us.subject_id = ?)"
                    for _ in subject_ids
                )
                args: tuple[Any, ...] = (user_id, *subject_ids)
            else:
                tagged = f" AND u.kind IN ({','.join('?' * len(WORKSPACE_KINDS))})"
                args = (user_id, *WORKSPACE_KINDS)
            if kind is not None:
                tagged += " AND u.kind = ?"
                args = (*args, kind)
            rows = snap.execute(
                f"SELECT {UNDERSTANDING_COLUMNS} FROM understandings u WHERE u.user_id = ? "
                f"AND u.status = 'active' AND u.superseded_by IS NULL{tagged} ORDER BY u.created_at DESC, u.id DESC",
                args,
            ).fetchall()
        return [understanding_from_row(r) for r in rows]

    def understanding_history(self, understanding_id: int) -> list[Understanding]:
        """The revision chain ``understanding_id`` belongs to, oldest first (the current one last)."""
        with self._store.snapshot() as snap:
            start = self._understanding_row(snap, understanding_id)
            chain = [start]
            seen = {start.id}
            back = start
            while back.supersedes is not None and back.supersedes not in seen:
                try:
                    back = self._understanding_row(snap, back.supersedes)
                except NotFound:
                    break
                chain.insert(0, back)
                seen.add(back.id)
            forward = start
            while forward.superseded_by is not None and forward.superseded_by not in seen:
                forward = self._understanding_row(snap, forward.superseded_by)
                chain.append(forward)
                seen.add(forward.id)
        return chain

    # -- marks ---------------------------------------------------------------------------------------------------
    def mark(self, ids: Sequence[int], *, useful: bool, user_id: str = "default") -> dict[int, str]:
        """Count a use (``useful``) or a doubt against observations, understandings and facts; returns, per id,
        the kind marked or why not."""
        wanted = ids_field("ids", ids)
        column = "useful_count" if useful else "questionable_count"

        def op(tx: Tx) -> dict[int, str]:
            out: dict[int, str] = {}
            for object_id in wanted:
                for table, kind in (
                    ("observations", "observation"),
                    ("understandings", "understanding"),
                    ("facts", "fact"),
                ):
                    done = tx.execute(
                        f"UPDATE {table} SET {column} = {column} + 1 WHERE id = ? AND user_id = ?",
                        (object_id, user_id),
                    ).rowcount
                    if done:
                        out[object_id] = kind
                        tx.emit(f"{kind}.marked", object_id, useful=useful)
                        break
                else:
                    out[object_id] = "not found (only observations, understandings and facts can be marked)"
            return out

        result: dict[int, str] = self._store.write(op)
        return result

    # -- relationships -------------------------------------------------------------------------------------------
    def open_intersection(
        self, subject_a: str, subject_b: str, *, limit: int = 50, user_id: str = "default"
    ) -> Intersection:
        """Everything tagged with both subjects: observations, current facts, turns and active understandings."""
        limit = max(1, min(int(limit), 500))
        with self._store.snapshot() as snap:
            a = self._subject_id(snap, subject_a, user_id)
            b = self._subject_id(snap, subject_b, user_id)
            if a == b:
                raise ValidationError("subject_b", "name two different subjects")
            observations = snap.execute(
                f"SELECT {OBSERVATION_COLUMNS} FROM observations o WHERE o.id IN ("
                "SELECT x.observation_id FROM observation_subjects x JOIN observation_subjects y "
                "ON y.observation_id = x.observation_id WHERE x.subject_id = ? AND y.subject_id = ?) "
                "ORDER BY o.observed_at DESC, o.id DESC LIMIT ?",
                (a, b, limit),
            ).fetchall()
            facts = snap.execute(
                "SELECT f.id, f.statement, f.source_text, s.name FROM facts f JOIN subjects s ON s.id = f.subject_id "
                "WHERE f.status = 'active' AND f.id IN (SELECT x.fact_id FROM fact_subjects x JOIN fact_subjects y "
                "ON y.fact_id = x.fact_id WHERE x.subject_id = ? AND y.subject_id = ?) "
                "ORDER BY f.importance DESC, f.id DESC LIMIT ?",
                (a, b, limit),
            ).fetchall()
            understandings = snap.execute(
                f"SELECT {UNDERSTANDING_COLUMNS} FROM understandings u WHERE u.status = 'active' "
                "AND u.superseded_by IS NULL AND u.id IN (SELECT x.understanding_id FROM understanding_subjects x "
                "JOIN understanding_subjects y ON y.understanding_id = x.understanding_id "
                "WHERE x.subject_id = ? AND y.subject_id = ?) ORDER BY u.created_at DESC",
                (a, b),
            ).fetchall()
            events = int(
                snap.execute(
                    "SELECT COUNT(*) FROM event_subjects x JOIN event_subjects y ON y.event_id = x.event_id "
                    "WHERE x.subject_id = ? AND y.subject_id = ?",
                    (a, b),
                ).scalar()
                or 0
            )
            name_a, name_b = self._name(snap, a), self._name(snap, b)
        return Intersection(
            subject_a=name_a,
            subject_b=name_b,
            observations=tuple(observation_from_row(r) for r in observations),
            facts=tuple(TaggedFact(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in facts),
            understandings=tuple(understanding_from_row(r) for r in understandings),
            events=events,
        )

    def open_around(self, subject_name: str, *, limit: int = 10, user_id: str = "default") -> list[Neighbour]:
        """The subjects sharing evidence with ``subject_name``, the largest intersection first, each with their
        relationship understanding when one exists."""
        limit = max(1, min(int(limit), 100))
        with self._store.snapshot() as snap:
            me = self._subject_id(snap, subject_name, user_id)
            shared: dict[int, int] = {}
            for table, column in (
                ("observation_subjects", "observation_id"),
                ("fact_subjects", "fact_id"),
                ("event_subjects", "event_id"),
                ("understanding_subjects", "understanding_id"),
            ):
                for other, count in snap.execute(
                    f"SELECT y.subject_id, COUNT(*) FROM {table} x JOIN {table} y ON y.{column} = x.{column} "
                    f"WHERE x.subject_id = ? AND y.subject_id != ? GROUP BY y.subject_id",
                    (me, me),
                ).fetchall():
                    shared[int(other)] = shared.get(int(other), 0) + int(count)
            ranked = sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))
            out: list[Neighbour] = []
            for other, count in ranked:
                row = snap.execute(
                    "SELECT name, summary, merged_into, user_id FROM subjects WHERE id = ?", (other,)
                ).first()
                if row is None or row[2] is not None or str(row[3]) != user_id:
                    continue
                relationship = snap.execute(
                    f"SELECT {UNDERSTANDING_COLUMNS} FROM understandings u WHERE u.kind = 'relationship' "
                    "AND u.status = 'active' AND u.superseded_by IS NULL AND u.id IN ("
                    "SELECT x.understanding_id FROM understanding_subjects x JOIN understanding_subjects y "
                    "ON y.understanding_id = x.understanding_id WHERE x.subject_id = ? AND y.subject_id = ?) "
                    "ORDER BY u.created_at DESC LIMIT 1",
                    (me, other),
                ).first()
                out.append(
                    Neighbour(
                        name=str(row[0]),
                        subject_id=other,
                        shared=count,
                        summary=str(row[1]),
                        relationship=understanding_from_row(relationship) if relationship is not None else None,
                    )
                )
                if len(out) >= limit:
                    break
        return out

    def stats(self, *, user_id: str = "default") -> WorkspaceStats:
        """Counts of the workspace: subjects, observations, understandings (active, superseded), unlinked notes."""
        with self._store.snapshot() as snap:
            row = snap.execute(
                "SELECT (SELECT COUNT(*) FROM subjects WHERE user_id = ?1 AND merged_into IS NULL), "
                "(SELECT COUNT(*) FROM observations WHERE user_id = ?1), "
                "(SELECT COUNT(*) FROM understandings WHERE user_id = ?1 AND superseded_by IS NULL "
                "AND status = 'active'), "
                "(SELECT COUNT(*) FROM understandings WHERE user_id = ?1 AND superseded_by IS NOT NULL), "
                "(SELECT COUNT(*) FROM observations o WHERE o.user_id = ?1 AND NOT EXISTS "
                "(SELECT 1 FROM understanding_sources s WHERE s.object_id = o.id))",
                (user_id,),
            ).first()
            generation = current_generation(snap, user_id)
        return WorkspaceStats(
            generation=generation,
            subjects=int(row[0]),
            observations=int(row[1]),
            understandings=int(row[2]),
            superseded_understandings=int(row[3]),
            unlinked_observations=int(row[4]),
        )

    # -- sessions ------------------------------------------------------------------------------------------------
    def orient(self, *, session_id: str, recent: int = 10, user_id: str = "default") -> Oriented:
        """What an assistant reads first: soul, protocol and orientation (each with its summary as the note to keep
        when the context is compacted), how many subjects wait for consolidation, and the newest activity.

        Starts the session afresh: its seen log is emptied and a new heartbeat token issued.
        """
        session = text_field("session_id", session_id, limit=200)
        recent = max(1, min(int(recent), 50))
        heartbeat = self._store.write(lambda tx: sessions.beat(tx, user_id, session, None, reset=True))
        pointed = {u.kind: u for u in self.get_understandings(user_id=user_id)}
        with self._store.snapshot() as snap:
            pending = len(passes.changed_subjects(snap, user_id, passes.last_pass_at(snap, user_id)))
            latest_observations = [
                observation_from_row(r)
                for r in snap.execute(
                    f"SELECT {OBSERVATION_COLUMNS} FROM observations o WHERE o.user_id = ? "
                    "ORDER BY o.created_at DESC, o.id DESC LIMIT ?",
                    (user_id, recent),
                ).fetchall()
            ]
            latest_understandings = [
                understanding_from_row(r)
                for r in snap.execute(
                    f"SELECT {UNDERSTANDING_COLUMNS} FROM understandings u WHERE u.user_id = ? "
                    "AND u.status = 'active' AND u.superseded_by IS NULL ORDER BY u.created_at DESC, u.id DESC "
                    "LIMIT ?",
                    (user_id, recent),
                ).fetchall()
            ]
        return Oriented(
            soul=pointed.get("soul"),
            protocol=pointed.get("protocol"),
            orientation=pointed.get("orientation"),
            pending_consolidation=pending,
            recent_observations=tuple(latest_observations),
            recent_understandings=tuple(latest_understandings),
            heartbeat_token=heartbeat.token,
        )

    def bring_to_mind(
        self,
        topic_or_context: str,
        *,
        session_id: str,
        last_token: str | None = None,
        include_seen: bool = False,
        limit: int = 8,
        user_id: str = "default",
    ) -> BroughtToMind:
        """Understandings and fresh (not yet consolidated) observations on a topic, leaving out what this session
        was already shown unless ``include_seen``; what is returned joins the seen log.

        A ``last_token`` that is not the one last issued to the session (or none, for a session seen before), or a
        gap of more than 30 minutes, means the client's context was compacted: the seen log starts again and the
        answer says ``compacted``.
        """
        topic = text_field("topic_or_context", topic_or_context, limit=4000)
        session = text_field("session_id", session_id, limit=200)
        limit = max(1, min(int(limit), 50))
        words = search_words(topic)

        # everything is read from a snapshot, so a busy writer never waits on the search; only the heartbeat and
        # the seen log are written, in one short transaction at the end
        with self._store.snapshot() as snap:
            lost = sessions.compacted(snap, user_id, session, last_token)
            unseen = None if include_seen or lost else (user_id, session)
            shown_u, seen_u = self._retrieval.understandings(snap, topic, words, user_id, limit, unseen)
            shown_o, seen_o = self._retrieval.fresh_observations(snap, words, user_id, limit, unseen)
        filtered = seen_u + seen_o

        def op(tx: Tx) -> sessions.Heartbeat:
            heartbeat = sessions.beat(tx, user_id, session, last_token)
            sessions.note_seen(tx, user_id, session, [*(u.id for u in shown_u), *(o.id for o in shown_o)])
            return heartbeat

        heartbeat: sessions.Heartbeat = self._store.write(op)
        return BroughtToMind(
            understandings=tuple(shown_u),
            observations=tuple(shown_o),
            heartbeat_token=heartbeat.token,
            compacted=heartbeat.compacted,
            already_seen=filtered,
        )

    def reset_seen(self, *, session_id: str, user_id: str = "default") -> int:
        """Empty the session's seen log (the next ``bring_to_mind`` may repeat anything); returns its size."""
        session = text_field("session_id", session_id, limit=200)
        cleared: int = self._store.write(lambda tx: sessions.reset(tx, user_id, session))
        return cleared

    def recall_subject(self, name: str, *, limit: int = 10, user_id: str = "default") -> SubjectRecall | None:
        """Subject mode of the workspace ``recall``: when ``name`` is exactly a subject's name (or alias), the
        subject, its active understandings and its newest observations; None when no subject is called so."""
        with self._store.snapshot() as snap:
            subject_id = find_subject_id(snap, user_id, " ".join(name.split()))
        if subject_id is None:
            return None
        subject = self._subjects.get(subject_id)
        return SubjectRecall(
            subject=subject,
            understandings=tuple(self.get_understandings([subject.name], user_id=user_id)),
            observations=tuple(self.observations_of([subject.name], limit=limit, user_id=user_id)),
        )

    # -- consolidation -------------------------------------------------------------------------------------------
    def model_rewriter(self) -> tuple[passes.Rewriter, str] | None:
        """A rewriter that asks the configured model to turn a draft into prose, and the model's name; None without
        a model (or with ``workspace.use_model`` off)."""
        llm = self._llm() if (self._llm is not None and self._use_model) else None
        return None if llm is None else passes.model_rewriter(llm, self._timeout_s)

    def request_consolidation(self, *, user_id: str = "default") -> int | None:
        """Queue a consolidation pass as a background job (one at a time per user); returns the job id, or None
        when one is queued already."""
        job_id: int | None = self._store.write(
            lambda tx: enqueue(
                tx, CONSOLIDATE_JOB, {"user_id": user_id}, priority=200, dedupe_key=f"{CONSOLIDATE_JOB}:{user_id}"
            )
        )
        if self._notify is not None:
            self._notify()
        return job_id

    def run_jobs(self, jobs: Sequence[Job]) -> list[JobOutcome]:
        """The job handler of :data:`CONSOLIDATE_JOB`: one pass per job, with the model when there is one."""

        def run(job: Job) -> Sequence[str]:
            result = self.consolidate(user_id=str(job.payload.get("user_id", "default")))
            # a handler finishes its own jobs (the runner only records failures and warnings)
            self._store.write(functools.partial(finish_jobs, job_ids=[job.id]))
            return result.warnings

        return each_job(jobs, run)

    def due_for_consolidation(self, quiet_s: float, *, now: float) -> list[str]:
        """Users whose newest evidence is older than ``quiet_s`` and newer than their last pass."""
        with self._store.snapshot() as snap:
            return passes.due_users(snap, quiet_s, now)

    def consolidate(
        self,
        *,
        rewriter: passes.Rewriter | None = None,
        writer_name: str = "extractive",
        use_model: bool = True,
        user_id: str = "default",
    ) -> passes.PassResult:
        """Run one consolidation pass (see :mod:`engine.workspace.consolidate`): a new generation, then an
        understanding for each subject — and each pair of subjects — whose evidence changed since the last pass.

        The drafts are read and rewritten (by ``rewriter``, or by the configured model when ``use_model`` and none
        is given) outside the write transaction, so a slow model never holds the writer; each understanding is then
        written in its own short transaction.
        """
        if rewriter is None and use_model:
            found = self.model_rewriter()
            if found is not None:
                rewriter, writer_name = found
        with self._store.snapshot() as snap:
            since = passes.last_pass_at(snap, user_id)
            subjects = sorted(passes.changed_subjects(snap, user_id, since))
            pairs = sorted(passes.changed_pairs(snap, user_id, since))
            drafts = [d for d in (passes.subject_draft(snap, s) for s in subjects) if d is not None]
            drafts += [d for d in (passes.pair_draft(snap, a, b) for a, b in pairs) if d is not None]

        def start(tx: Tx) -> int:
            generation = next_generation(tx, user_id)
            passes.mark_pass(tx, user_id)
            return generation

        generation: int = self._store.write(start)
        result = passes.PassResult(generation, writer=writer_name if rewriter is not None else "extractive")
        for draft in drafts:
            text = passes.rewrite(draft, rewriter, result)

            def write(tx: Tx, draft: passes.Draft = draft, text: str = text) -> bool:
                previous = active_of_slot(tx, user_id, draft.kind, draft.subject_ids)
                if previous is not None:
                    old = self._understanding_row(tx, previous)
                    if old.content == text:
                        return False
                insert_understanding(
                    tx,
                    user_id=user_id,
                    kind=draft.kind,
                    title=draft.title,
                    summary=draft.summary,
                    content=text,
                    subject_ids=draft.subject_ids,
                    sources=draft.sources,
                    session_id=None,
                    source="consolidation",
                    previous=previous,
                )
                return True

            if not self._store.write(write):
                result.unchanged += 1
            elif draft.kind == "relationship":
                a, b = draft.title.split(" & ", 1)
                result.relationships_written.append((a, b))
            else:
                result.subjects_written.append(draft.title)
        return result

    def pending_consolidation(self, *, user_id: str = "default") -> int:
        """How many subjects have evidence newer than the last consolidation pass."""
        with self._store.snapshot() as snap:
            return len(passes.changed_subjects(snap, user_id, passes.last_pass_at(snap, user_id)))

    def consolidation_report(self, *, limit: int = 50, user_id: str = "default") -> ConsolidationReport:
        """What consolidation should look at: subjects without an understanding, stale understandings, pairs
        sharing much with no relationship written, pairs whose summaries overlap although they share little,
        observations no understanding cites, and items marked questionable more often than useful."""
        limit = max(1, min(int(limit), 500))
        with self._store.snapshot() as snap:
            return passes.report(snap, user_id, limit)

    def find_similar_subjects(
        self, name: str, *, threshold: float = 0.75, limit: int = 10, user_id: str = "default"
    ) -> list[SimilarSubject]:
        """Subjects whose name or an alias looks like ``name`` ("Bob" and "Bob Smith", "Mel" and "Mell"): merge
        candidates, best first."""
        wanted = " ".join(text_field("subject_name", name, limit=200).split())
        rows = self._store.query(
            "SELECT id, name, aliases FROM subjects WHERE user_id = ? AND merged_into IS NULL", (user_id,)
        )
        candidates = [(int(r[0]), str(r[1]), passes.aliases_of(r[2])) for r in rows]
        found = passes.similar_names(candidates, wanted, threshold=max(0.0, min(float(threshold), 1.0)))
        return [SimilarSubject(subject_id, other, score) for subject_id, other, score in found[: max(1, limit)]]

    def merge_subjects(self, keep: str, merge: Sequence[str], *, user_id: str = "default") -> Subject:
        """Fold the subjects called ``merge`` into ``keep``: every tag (facts, turns, observations,
        understandings) moves to the keeper, the merged names become its aliases, and the merge is noted in the
        keeper's structural understanding."""
        merging = names_field("merge", merge, required=True)

        def op(tx: Tx) -> int:
            keep_id = self._subject_id(tx, keep, user_id)
            ids = [self._subject_id(tx, n, user_id) for n in merging]
            if keep_id in ids:
                raise Conflict(f"{keep} cannot be merged into itself.", fix="Name the other subjects to merge.")
            merged_names = [self._name(tx, i) for i in ids]
            self._subjects.merge_in(tx, keep_id, ids)
            self._subjects.restate_in(tx, keep_id)
            previous = active_of_slot(tx, user_id, "structural", [keep_id])
            before = self._understanding_row(tx, previous).content + "\n" if previous is not None else ""
            when = datetime.fromtimestamp(tx.now).date().isoformat()
            note = f"- {', '.join(merged_names)} merged into {self._name(tx, keep_id)} on {when}."
            insert_understanding(
                tx,
                user_id=user_id,
                kind="structural",
                title=self._name(tx, keep_id),
                summary=f"Names and merges of {self._name(tx, keep_id)}",
                content=before + note,
                subject_ids=[keep_id],
                sources=ids,
                session_id=None,
                source="consolidation",
                previous=previous,
            )
            return keep_id

        keep_id: int = self._store.write(op)
        return self._subjects.get(keep_id)

    # -- helpers -------------------------------------------------------------------------------------------------
    @staticmethod
    def _subject_id(q: Any, name: str, user_id: str) -> int:
        clean = " ".join(text_field("subject_name", name, limit=200).split())
        found = find_subject_id(q, user_id, clean)
        if found is None:
            raise NotFound("subject", clean)
        return found

    def _subject_ids(self, q: Any, names: Sequence[str], user_id: str) -> list[int]:
        return list(dict.fromkeys(self._subject_id(q, n, user_id) for n in names_field("subject_names", names)))

    @staticmethod
    def _name(q: Any, subject_id: int) -> str:
        return str(q.execute("SELECT name FROM subjects WHERE id = ?", (subject_id,)).scalar())

    @staticmethod
    def _understanding_row(q: Any, understanding_id: int) -> Understanding:
        row = q.execute(f"SELECT {UNDERSTANDING_COLUMNS} FROM understandings u WHERE u.id = ?", (understanding_id,))
        found = row.first()
        if found is None:
            raise NotFound("understanding", understanding_id)
        return understanding_from_row(found)


__all__ = ["Workspace", "content_hash", "current_generation", "next_generation"]
