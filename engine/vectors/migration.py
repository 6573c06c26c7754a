"""One embedder per vault, changed in the open: the active vector space, the re-embedding backlog, and searching
both spaces while a migration runs.

A vault records the embedder its vectors belong to (``meta['vectors.active']``: model id and dimension).  When the
embedder in use changes — a setting, or ``auto`` finding Ollama — nothing is re-embedded in the foreground and
nothing becomes invisible:

- every object with a vector in the old space is put in the **backlog** of the new one (``vector_backlog``, one
  row per object) and a durable ``vectors.fill`` job embeds them a batch at a time with the new model, resumable
  across restarts (the backlog is the progress);
- until the backlog is empty, searches use both spaces (:class:`MigratingIndex`): the question is embedded with
  both models (:class:`DualEmbedder`), the new space answers for what it has, the old space for what is still in the
  backlog — so no item is ever missing from the vector channel;
- when the backlog is empty the old space is dropped (its vectors, its ``vec0`` table, its registry row).

The same backlog keeps **outages** from losing anything: an embedder that fails at write time (Ollama stopped)
leaves the object stored without its vector and queued; the fill job retries with back-off until the embedder is
back (:class:`GuardedEmbedder` notices and remembers the failure, so a request does not wait on a dead server each
time).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.ai.embedders import Embedder, Matrix
from engine.errors import ModelUnavailable
from engine.jobs import Job, JobOutcome, enqueue, finish_jobs
from engine.store import Store, Tx, chunked
from engine.vectors.base import VectorHit, VectorIndex, VectorItem
from engine.vectors.reduced import ReducedStats
from engine.vectors.space import listed_in
from engine.vectors.sqlite_vec import SqliteVecIndex

log = logging.getLogger(__name__)

ACTIVE_KEY = "vectors.active"
MIGRATION_KEY = "vectors.migration"
FILL_JOB = "vectors.fill"
#: Objects embedded per fill job (one embedder call, one write transaction).
FILL_BATCH = 256
#: The longest wait between two tries of an embedder that is down.
MAX_BACKOFF_S = 300.0
#: After a failure, calls fail at once for this long before the embedder is tried again (doubling up to the max);
#: the vault passes ``[jobs] backoff_s``.
FIRST_BACKOFF_S = 2.0

#: Where each kind of object's embedded text lives — the same text its vector was first made from.
SOURCES: dict[str, str] = {
    "fact": "SELECT id, statement FROM facts WHERE id IN ({marks})",
    "event": "SELECT id, content FROM events WHERE id IN ({marks})",
    "episode": "SELECT id, summary FROM episodes WHERE id IN ({marks})",
    "span": "SELECT id, text FROM spans WHERE id IN ({marks})",
    "section": "SELECT id, COALESCE(distillation, '') FROM sections WHERE id IN ({marks})",
    "document": "SELECT id, COALESCE(NULLIF(distillation, ''), name) FROM documents WHERE id IN ({marks})",
}


# -- what the vault records ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SpaceRef:
    """An embedding model's vector space, as the vault records it."""

    model_id: str
    dim: int


@dataclass(frozen=True, slots=True)
class MigrationInfo:
    """A re-embedding under way: from which space to which, since when, how many objects in all, and why."""

    from_model: str
    from_dim: int
    to_model: str
    started_at: float
    total: int
    reason: str


@dataclass(frozen=True, slots=True)
class VectorStatus:
    """What ``cairn doctor``, ``/v6/jobs`` and the GUI show about the vectors."""

    active: str
    dim: int
    migration: MigrationInfo | None
    remaining: int  # objects still to re-embed for the migration
    queued: int  # objects waiting for their vector because the embedder was down
    last_error: str | None
    last_error_at: float | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        migration = None
        if self.migration is not None:
            done = max(0, self.migration.total - self.remaining)
            migration = {
                "from_model": self.migration.from_model,
                "to_model": self.migration.to_model,
                "started_at": self.migration.started_at,
                "total": self.migration.total,
                "done": done,
                "remaining": self.remaining,
                "reason": self.migration.reason,
            }
        return {
            "active": self.active,
            "dim": self.dim,
            "migration": migration,
            "queued": self.queued,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
        }


def _meta(store: Store, key: str) -> Any:
    rows = store.query("SELECT value FROM meta WHERE key = ?", (key,))
    return json.loads(rows[0][0]) if rows else None


def _set_meta(tx: Tx, key: str, value: Any) -> None:
    tx.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, json.dumps(value, sort_keys=True)),
    )


def recorded_active(store: Store) -> SpaceRef | None:
    """The space the vault's vectors belong to; for a vault from before this was recorded, the space holding most
    vectors (None for a vault without any)."""
    value = _meta(store, ACTIVE_KEY)
    if isinstance(value, dict) and isinstance(value.get("model_id"), str):
        return SpaceRef(str(value["model_id"]), int(value.get("dim", 0)))
    rows = store.query(
        "SELECT s.model_id, s.dim, COUNT(e.object_id) AS n FROM vector_spaces s "
        "LEFT JOIN embeddings e ON e.space_id = s.id GROUP BY s.id ORDER BY n DESC, s.id DESC LIMIT 1"
    )
    if rows and int(rows[0][2]) > 0:
        return SpaceRef(str(rows[0][0]), int(rows[0][1]))
    return None


def record_active(store: Store, ref: SpaceRef) -> None:
    """Record ``ref`` as the vault's active space."""
    store.write(lambda tx: _set_meta(tx, ACTIVE_KEY, {"model_id": ref.model_id, "dim": ref.dim}))


def migration_info(store: Store) -> MigrationInfo | None:
    """The migration under way, if any."""
    value = _meta(store, MIGRATION_KEY)
    if not isinstance(value, dict):
        return None
    return MigrationInfo(
        str(value["from_model"]),
        int(value["from_dim"]),
        str(value["to_model"]),
        float(value["started_at"]),
        int(value["total"]),
        str(value.get("reason", "")),
    )


def start_migration(store: Store, old: SpaceRef, new: VectorIndex, reason: str) -> MigrationInfo:
    """Record the switch from ``old`` to ``new``'s space and queue every object of the old space for re-embedding.

    Objects already queued for the new space (an earlier, unfinished migration to it) stay queued once.
    """

    def write(tx: Tx) -> MigrationInfo:
        old_space = tx.scalar("SELECT id FROM vector_spaces WHERE model_id = ?", (old.model_id,))
        if old_space is not None:
            tx.execute(
                "INSERT OR IGNORE INTO vector_backlog(space_id, object_id, kind, user_id, content_hash, reason, "
                "added_at) SELECT ?, object_id, kind, user_id, content_hash, 'migration', ? FROM embeddings "
                "WHERE space_id = ?",
                (new.space_id, tx.now, int(old_space)),
            )
        total = int(
            tx.scalar(
                "SELECT COUNT(*) FROM vector_backlog WHERE space_id = ? AND reason = 'migration'", (new.space_id,)
            )
            or 0
        )
        info = MigrationInfo(old.model_id, old.dim, new.model_id, tx.now, total, reason)
        _set_meta(
            tx,
            MIGRATION_KEY,
            {
                "from_model": info.from_model,
                "from_dim": info.from_dim,
                "to_model": info.to_model,
                "started_at": info.started_at,
                "total": info.total,
                "reason": info.reason,
            },
        )
        _set_meta(tx, ACTIVE_KEY, {"model_id": new.model_id, "dim": new.dim})
        enqueue_fill(tx)
        tx.emit("vectors.migration_started", None, **{"from": old.model_id, "to": new.model_id, "total": total})
        return info

    info: MigrationInfo = store.write(write)
    return info


def enqueue_fill(tx: Tx, *, delay_s: float = 0.0, attempt: int = 0) -> None:
    """Make sure a fill job is queued (one at a time)."""
    enqueue(tx, FILL_JOB, {"attempt": attempt}, priority=150, dedupe_key=FILL_JOB, delay_s=delay_s, max_attempts=50)


def queue_vectors(tx: Tx, space_id: int, items: Iterable[tuple[int, str, str, str]], *, reason: str = "outage") -> int:
    """Queue objects ``(object_id, kind, user_id, content_hash)`` whose vector could not be made now."""
    rows = [(space_id, oid, kind, user, digest, reason, tx.now) for oid, kind, user, digest in items]
    if not rows or not space_id:
        return 0
    tx.executemany(
        "INSERT OR IGNORE INTO vector_backlog(space_id, object_id, kind, user_id, content_hash, reason, added_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    enqueue_fill(tx)
    return len(rows)


def vector_status(store: Store, space_id: int, embedder: Embedder) -> VectorStatus:
    """The vault's vector state now."""
    counts = dict(
        store.query("SELECT reason, COUNT(*) FROM vector_backlog WHERE space_id = ? GROUP BY reason", (space_id,))
    )
    error = embedder.last_error if isinstance(embedder, GuardedEmbedder | DualEmbedder) else None
    return VectorStatus(
        active=embedder.model_id,
        dim=embedder.new_dim if isinstance(embedder, DualEmbedder) else embedder.dim,
        migration=migration_info(store),
        remaining=int(counts.get("migration", 0)),
        queued=int(counts.get("outage", 0)),
        last_error=error[0] if error else None,
        last_error_at=error[1] if error else None,
    )


# -- embedders that fail visibly -------------------------------------------------------------------------------------
class GuardedEmbedder:
    """An embedder whose failures are :class:`ModelUnavailable` (whatever the client raised), remembered with their
    time, and not retried on every call: after a failure, calls fail at once until a back-off has passed (2 s,
    doubling to 5 min), then the next call probes the model again.  Recovery clears the failure."""

    def __init__(
        self, inner: Embedder, *, first_backoff_s: float = FIRST_BACKOFF_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.inner = inner
        self._first_backoff_s = first_backoff_s
        self.model_id = inner.model_id
        self.dim = inner.dim
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._retry_at = 0.0
        self._error: tuple[str, float] | None = None

    @property
    def last_error(self) -> tuple[str, float] | None:
        """The last failure's message and wall-clock time, while it is not recovered from."""
        return self._error

    @property
    def available(self) -> bool:
        """False while a failure is being backed off from."""
        return self._error is None or self._clock() >= self._retry_at

    def embed(self, texts: Sequence[str], *, background: bool = False) -> Matrix:
        """Embed, or raise :class:`ModelUnavailable`.  ``background``: bulk work that must leave a core to the
        requests running meanwhile (an embedder with a ``embed_in_background`` method is asked through it)."""
        with self._lock:
            if self._error is not None and self._clock() < self._retry_at:
                raise ModelUnavailable(
                    f"The embedder {self.model_id} is unavailable: {self._error[0]}",
                    fix="Cairn retries it with back-off; start the model server again.",
                )
        try:
            quiet = getattr(self.inner, "embed_in_background", None) if background else None
            out = quiet(texts) if quiet is not None else self.inner.embed(texts)
        except Exception as exc:
            message = exc.message if isinstance(exc, ModelUnavailable) else f"{type(exc).__name__}: {exc}"
            with self._lock:
                self._failures += 1
                backoff = min(MAX_BACKOFF_S, self._first_backoff_s * 2 ** (self._failures - 1))
                self._retry_at = self._clock() + backoff
                self._error = (message, time.time())
            log.warning("embedder %s failed (%s); next try in %.0f s", self.model_id, message, backoff)
            if isinstance(exc, ModelUnavailable):
                raise
            raise ModelUnavailable(f"The embedder {self.model_id} failed: {message}") from exc
        if self._error is not None:
            with self._lock:
                log.info("embedder %s is back", self.model_id)
                self._failures, self._error = 0, None
        return out


class DualEmbedder:
    """While a migration runs: each text embedded with the new model and the old one, side by side in one vector
    (``[new | old] / √2``, a unit vector whose dot product with another is the mean of the two models' cosines).

    :class:`MigratingIndex` splits it again: the new half is what is stored and what searches the new space, the old
    half searches what the old space still holds.  When the old model cannot be used (a server that is gone), its
    half is zero and the old space is not searched.
    """

    def __init__(self, new: GuardedEmbedder, old: GuardedEmbedder | None) -> None:
        self.new = new
        self.old = old
        self.model_id = new.model_id
        self.new_dim = new.dim
        self.old_dim = old.dim if old is not None else 0
        self.dim = self.new_dim + self.old_dim

    @property
    def last_error(self) -> tuple[str, float] | None:
        """The new model's last failure (the old one's do not stop anything)."""
        return self.new.last_error

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Both halves; raises :class:`ModelUnavailable` only when the new model fails."""
        first = self.new.embed(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, : self.new_dim] = first
        if self.old is not None and self.old.available:
            try:
                out[:, self.new_dim :] = self.old.embed(texts)
            except ModelUnavailable:
                pass  # the old half stays zero: the old space is not searched for these texts
        out /= math.sqrt(2.0)
        return out


def split(vector: npt.NDArray[np.float32], new_dim: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The two halves of a :class:`DualEmbedder` vector, each back at unit length (or zero); a vector of the new
    model alone comes back as it is, with an empty old half."""
    flat = np.asarray(vector, dtype=np.float32).reshape(-1)
    if flat.shape[0] == new_dim:
        return flat, np.zeros(0, dtype=np.float32)
    return _unit(flat[:new_dim]), _unit(flat[new_dim:])


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    out: npt.NDArray[np.float32] = (vector / norm).astype(np.float32) if norm > 0 else np.zeros_like(vector)
    return out


# -- the index while a migration runs --------------------------------------------------------------------------------
class MigratingIndex:
    """The new space for writes and for what it holds; the old space for what is still waiting to be re-embedded.

    Vectors arrive from a :class:`DualEmbedder`: :meth:`add` keeps their new half.  Searches merge the two spaces'
    hits by similarity, the old space's restricted to objects still in the backlog (an object is never found twice).
    It implements :class:`~engine.vectors.base.VectorIndex` around the two indexes, so the code that writes and
    searches vectors does not know a migration is running.
    """

    def __init__(self, store: Store, new: VectorIndex, old: SqliteVecIndex) -> None:
        self._store = store
        self.new = new
        self.old = old
        self.model_id = new.model_id
        self.dim = new.dim
        self.space_id = new.space_id
        self.done = False

    # writes go to the new space only
    def add(self, tx: Tx, items: Sequence[VectorItem]) -> None:
        """Store the new half of each vector in the new space."""
        self.new.add(
            tx,
            [
                VectorItem(i.object_id, i.kind, i.user_id, split(i.vector, self.new.dim)[0], i.content_hash)
                for i in items
            ],
        )

    def delete(self, tx: Tx, object_ids: Collection[int]) -> None:
        """Remove from both spaces."""
        self.new.delete(tx, object_ids)
        if not self.done and self.old.table:
            self.old.delete(tx, object_ids)

    def _pending(self, object_ids: Collection[int]) -> set[int]:
        """Which of ``object_ids`` still wait to be re-embedded (their old vector is the one to search)."""
        return listed_in(self._store, "vector_backlog", self.space_id, object_ids)

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        kinds: Collection[str] | None = None,
        user_id: str | None = None,
    ) -> list[VectorHit]:
        """Nearest neighbours across both spaces (see the class)."""
        new_q, old_q = split(query, self.new.dim)
        hits = self.new.search(new_q, k, kinds=kinds, user_id=user_id)
        if self.done or not old_q.size or not np.any(old_q):
            return hits
        old_hits = self.old.search(old_q, k, kinds=kinds, user_id=user_id)
        pending = self._pending([h.object_id for h in old_hits])
        merged = hits + [h for h in old_hits if h.object_id in pending]
        merged.sort(key=lambda h: -h.similarity)
        return merged[:k]

    def note_question(self, query: npt.NDArray[np.float32]) -> None:
        """The new space's part of the question judges the new space's first pass (the old one is on its way out)."""
        self.new.note_question(split(query, self.new.dim)[0])

    def similarities(self, query: npt.NDArray[np.float32], object_ids: Sequence[int]) -> dict[int, float]:
        """Similarity in whichever space holds each object now."""
        new_q, old_q = split(query, self.new.dim)
        out = self.new.similarities(new_q, object_ids)
        missing = [i for i in object_ids if i not in out]
        if missing and not self.done and old_q.size and np.any(old_q):
            out.update(self.old.similarities(old_q, missing))
        return out

    # the rest is the new space's
    def load_mirror(self) -> int:
        """Load both spaces' mirrors; returns the new space's count."""
        if not self.done and self.old.table:
            self.old.load_mirror()
        return self.new.load_mirror()

    def maintain(self) -> list[ReducedStats]:
        """Upkeep of the new space."""
        return self.new.maintain()

    def after_forget(self) -> None:
        """Rebuild both search sides from the store."""
        self.new.after_forget()
        if not self.done and self.old.table and self.old.mirror.loaded:
            self.old.load_mirror()

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until the new space's searches see every committed write."""
        return self.new.flush(timeout)

    def close(self) -> None:
        """Close both."""
        self.new.close()
        self.old.close()

    @property
    def backend(self) -> str:
        """What answers searches."""
        return self.new.backend if self.done else f"{self.new.backend}, and {self.old.model_id} while re-embedding"

    def count(self) -> int:
        """Vectors in the new space."""
        return self.new.count()


# -- the fill job ----------------------------------------------------------------------------------------------------
class VectorFiller:
    """The ``vectors.fill`` job: embed a batch of the backlog with the active model, store it, queue the next batch;
    when the backlog is empty, end the migration (drop the old space).  An embedder that is down puts the job back
    with back-off instead of failing it — a fill job is never parked for a model outage."""

    def __init__(
        self,
        store: Store,
        embedder: Callable[[], GuardedEmbedder],
        index: Callable[[], VectorIndex],
        on_done: Callable[[], None] = lambda: None,
        *,
        first_backoff_s: float = FIRST_BACKOFF_S,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._index = index
        self._on_done = on_done
        self._first_backoff_s = first_backoff_s

    def __call__(self, jobs: Sequence[Job]) -> list[JobOutcome]:
        """Run (one batch per claimed job; normally one job is queued at a time)."""
        outcomes: list[JobOutcome] = []
        for job in jobs:
            outcomes.append(self._one(job))
        return outcomes

    def _one(self, job: Job) -> JobOutcome:
        index = self._index()
        embedder = self._embedder()
        rows = self._store.query(
            "SELECT object_id, kind, user_id, content_hash FROM vector_backlog WHERE space_id = ? "
            "ORDER BY reason = 'migration', object_id LIMIT ?",
            (index.space_id, FILL_BATCH),
        )
        texts = _texts(self._store, [(int(r[0]), str(r[1])) for r in rows])
        present = [r for r in rows if int(r[0]) in texts]
        gone = [int(r[0]) for r in rows if int(r[0]) not in texts]
        warnings: list[str] = []
        vectors: Matrix | None = None
        if present:
            try:
                vectors = embedder.embed([texts[int(r[0])] for r in present], background=True)
            except ModelUnavailable as exc:
                attempt = int(job.payload.get("attempt", 0)) + 1
                delay = min(MAX_BACKOFF_S, self._first_backoff_s * 2 ** (attempt - 1))
                warnings.append(f"embedder unavailable, {len(present)}+ vectors wait: {exc.message}")

                def later(tx: Tx) -> None:
                    finish_jobs(tx, [job.id])
                    enqueue_fill(tx, delay_s=delay, attempt=attempt)

                self._store.write(later)
                return JobOutcome(job.id, warnings=warnings)

        def write(tx: Tx) -> bool:
            if present and vectors is not None:
                index.add(
                    tx,
                    [VectorItem(int(r[0]), str(r[1]), str(r[2]), vectors[i], str(r[3])) for i, r in enumerate(present)],
                )
            done_ids = [int(r[0]) for r in rows]
            for chunk in chunked(done_ids):
                marks = ",".join("?" * len(chunk))
                tx.execute(
                    f"DELETE FROM vector_backlog WHERE space_id = ? AND object_id IN ({marks})",
                    (index.space_id, *chunk),
                )
            finish_jobs(tx, [job.id])
            left = tx.scalar("SELECT 1 FROM vector_backlog WHERE space_id = ? LIMIT 1", (index.space_id,))
            if left is not None:
                enqueue_fill(tx)
                return False
            return _finish_migration(tx, index)

        finished: bool = self._store.write(write)
        if gone:
            log.debug("%s backlog objects are gone", len(gone))
        if finished:
            self._on_done()
        return JobOutcome(job.id, warnings=warnings)


def _texts(store: Store, keys: Sequence[tuple[int, str]]) -> dict[int, str]:
    by_kind: dict[str, list[int]] = {}
    for oid, kind in keys:
        by_kind.setdefault(kind, []).append(oid)
    out: dict[int, str] = {}
    for kind, ids in by_kind.items():
        sql = SOURCES.get(kind)
        if sql is None:
            continue
        for chunk in chunked(ids):
            for oid, text in store.query(sql.format(marks=",".join("?" * len(chunk))), tuple(chunk)):
                out[int(oid)] = str(text or "")
    return out


def _finish_migration(tx: Tx, index: VectorIndex) -> bool:
    """Drop every space but the active one (their vectors, vec0 tables and registry rows); True when a migration
    ended here."""
    value = tx.scalar("SELECT value FROM meta WHERE key = ?", (MIGRATION_KEY,))
    if value is None:
        return False
    for space_id, table in tx.execute(
        "SELECT id, table_name FROM vector_spaces WHERE id != ?", (index.space_id,)
    ).fetchall():
        tx.execute(f"DROP TRIGGER IF EXISTS {table}_follow")
        tx.execute("DELETE FROM embeddings WHERE space_id = ?", (int(space_id),))
        tx.execute("DELETE FROM vector_backlog WHERE space_id = ?", (int(space_id),))
        tx.execute(f"DROP TABLE IF EXISTS {table}")
        tx.execute("DELETE FROM vector_spaces WHERE id = ?", (int(space_id),))
    info = json.loads(str(value))
    tx.execute("DELETE FROM meta WHERE key = ?", (MIGRATION_KEY,))
    tx.emit("vectors.migration_finished", None, **{"from": info.get("from_model"), "to": info.get("to_model")})
    return True
