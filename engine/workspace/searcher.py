"""The workspace's perspectives and ``search`` over one vault (``Workspace`` delegates to a :class:`Searcher`).

It owns the embedding side: which perspectives a user has, whether the embedder reads instructions (else they
collapse to one vector), the background job that embeds new items under each, and the per-user matrices a search
reads.  A search never waits on a model it cannot reach: when the embedder fails it answers by words alone and
says so, and items written a moment ago are embedded on the spot (a few dozen at most) before it ranks.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from engine.ai.embedders import Embedder
from engine.jobs import Job, JobOutcome, enqueue, finish_jobs
from engine.store import Store, Tx
from engine.workspace import perspectives as lens
from engine.workspace.model import Searched
from engine.workspace.search import search

log = logging.getLogger(__name__)

#: Items a search embeds itself (beyond, it leaves them to the job and finds them by their words).
CATCH_UP = 48


def queue_embedding(tx: Tx, user_id: str) -> None:
    """Ask for the user's new items to be embedded (one job queued per user; a second of delay gathers a burst)."""
    enqueue(
        tx,
        lens.PERSPECTIVES_JOB,
        {"user_id": user_id},
        priority=210,
        dedupe_key=f"{lens.PERSPECTIVES_JOB}:{user_id}",
        delay_s=0.25,
    )


class Searcher:
    """Perspectives, their vectors and ``search`` for one vault's workspace."""

    def __init__(
        self,
        store: Store,
        embedder: Callable[[], Embedder | None] | None,
        instructions: Callable[[], str] = lambda: "auto",
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._instructions = instructions
        self._index = lens.PerspectiveIndex()

    def _current(self) -> Embedder | None:
        return None if self._embedder is None else self._embedder()

    def perspectives(self, user_id: str) -> tuple[list[lens.Perspective], bool, str]:
        """The user's perspectives, whether they are embedded apart (the embedder reads instructions), and the
        embedder's model id ('' without one)."""
        embedder = self._current()
        with self._store.snapshot() as snap:
            found = lens.perspectives(snap, user_id)
        if embedder is None:
            return found, False, ""
        return found, lens.follows_instructions(embedder.model_id, self._instructions()), embedder.model_id

    def add_perspective(self, name: str, instruction: str, *, user_id: str) -> lens.Perspective:
        """Add (or re-word) one of the user's own perspectives; a background job embeds the items under it."""

        def op(tx: Tx) -> lens.Perspective:
            added = lens.add_perspective(tx, user_id, name, instruction)
            queue_embedding(tx, user_id)
            return added

        added: lens.Perspective = self._store.write(op)
        return added

    def remove_perspective(self, name: str, *, user_id: str) -> None:
        """Remove one of the user's own perspectives and its vectors (a built-in one is refused)."""
        self._store.write(functools.partial(lens.remove_perspective, user_id=user_id, name=name))

    def embed(self, user_id: str, *, budget: int | None = None) -> int:
        """Embed the user's items that lack a vector under a perspective in use; returns how many were written."""
        embedder = self._current()
        if embedder is None:
            return 0
        found, instructed, _ = self.perspectives(user_id)
        return lens.embed_missing(self._store, embedder, user_id, found, instructed, budget=budget)

    def run_jobs(self, jobs: Sequence[Job]) -> list[JobOutcome]:
        """The handler of :data:`~engine.workspace.perspectives.PERSPECTIVES_JOB`.  An embedder that is down leaves
        the items for the next job or search (a warning, never a parked job): the vectors are a cache of the text."""
        outcomes: list[JobOutcome] = []
        for job in jobs:
            user_id = str(job.payload.get("user_id", "default"))
            warnings: list[str] = []
            try:
                self.embed(user_id)
            except Exception as exc:
                warnings.append(f"workspace items not embedded yet ({type(exc).__name__}: {exc})")
            self._store.write(functools.partial(finish_jobs, job_ids=[job.id]))
            outcomes.append(JobOutcome(job.id, warnings=warnings))
        return outcomes

    def search(
        self,
        query: str,
        *,
        subject_ids: Callable[[object], list[int]],
        include_observations: bool,
        limit: int,
        user_id: str,
    ) -> Searched:
        """``search``: see :func:`engine.workspace.search.search`; ``subject_ids`` resolves the subject filter inside
        the search's snapshot."""
        found, instructed, model_id = self.perspectives(user_id)
        names = tuple(p.name for p in found)
        notes: list[str] = []
        embedder = self._current()
        similar: dict[int, tuple[float, str]] = {}
        if embedder is None:
            notes.append("No embedder: found by words only.")
        else:
            try:
                self.embed(user_id, budget=CATCH_UP)
                queries = lens.query_vectors(embedder, query, found, instructed)
                with self._store.snapshot() as snap:
                    similar = self._index.best(snap, user_id, embedder, queries, 200)
            except Exception as exc:  # a model that is down must not take the search down
                log.warning("workspace search without vectors: %s", type(exc).__name__)
                notes.append(f"The embedder is unavailable ({type(exc).__name__}): found by words only.")
                similar = {}
        if embedder is not None and not instructed:
            notes.append(
                f"Perspectives collapsed: the embedder {model_id} ignores instructions, so every perspective is one "
                "vector (matched_perspective says 'general')."
            )
        with self._store.snapshot() as snap:
            hits = search(
                snap,
                user_id=user_id,
                query=query,
                similar=similar,
                subject_ids=subject_ids(snap),
                include_observations=include_observations,
                limit=limit,
                now=datetime.now(UTC),
                collapsed_as="general",
            )
        return Searched(tuple(hits), names, embedder is not None and not instructed, model_id, tuple(notes))
