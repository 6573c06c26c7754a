"""An in-memory copy of the vectors, kept in step with the store, for fast exact nearest-neighbour search.

sqlite-vec's vec0 scans at ~0.5 µs per vector on these machines (47 ms at 100k, 430 ms at 1M), while a numpy matrix
product over the same float32 vectors runs at memory bandwidth (~10× faster).  The store stays the source of truth:
the mirror is loaded from it (in the background after a vault opens), updated only after a write commits, and can be
rebuilt from it at any time.  Searches are exact (no ANN approximation), so results equal vec0's: sparse shelves
(the hashing embedder's) read only the question's dimensions through postings (:mod:`engine.vectors.postings`);
large dense shelves add a first pass whose recall is measured (:mod:`engine.vectors.reduced`) — on data samples
and on the questions recall has actually asked, which the mirror remembers (see :meth:`MatrixMirror.remember_question`).

A rebuild reads the store for a while (seconds at 200k vectors) while writes keep committing: those writes are
recorded meanwhile and replayed onto the rebuilt copy, so none is lost.  A fitted first pass outlives a rebuild or a
compaction (its basis still describes the kind's vectors); fitting is one at a time, so two callers (the vault's
loader and a benchmark, say) never fit the same shelf twice side by side.

Vectors are grouped per kind (fact, event, episode, span, …) so a search pays only for the kinds it asks for.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from engine.vectors import postings as sparse
from engine.vectors.ops import matvec
from engine.vectors.postings import Postings
from engine.vectors.questions import MIN_QUESTIONS, QuestionMemory, due, judge
from engine.vectors.reduced import MIN_VECTORS, SAMPLE_STEP, ReducedStats, Reducer, top_by_sampled_threshold

log = logging.getLogger(__name__)

F32 = npt.NDArray[np.float32]
Row = tuple[int, str, str, F32]
_Op = tuple[Literal["upsert"], list[Row]] | tuple[Literal["delete"], list[int]]


@dataclass(slots=True)
class _Shelf:
    """The vectors of one kind: rows, their object ids and user codes; deleted rows have id -1."""

    vecs: F32
    ids: npt.NDArray[np.int64]
    users: npt.NDArray[np.int32]
    n: int = 0
    row_of: dict[int, int] = field(default_factory=dict)
    dead: int = 0
    user_codes: set[int] = field(default_factory=set)
    reducer: Reducer | None = None
    reduced: F32 | None = None  # rows projected by ``reducer`` (kept in step with ``vecs``)
    generation: int = 0  # bumped when row numbers change (compaction): a fitted reducer no longer applies
    postings: Postings | None = None  # exact search for sparse vectors (rows below ``postings.upto``)
    stale: set[int] = field(default_factory=set)  # rows below ``postings.upto`` rewritten since it was built
    pending: set[int] | None = None  # rows rewritten since a build in progress read them
    dense_at: int = 0  # the shelf's size when its vectors were found too dense for postings (retried at twice it)
    fitted_at: int = 0  # the shelf's size at the last fit (which may have found exact scanning best)
    asked_at: int = -1  # questions seen when the first pass was last judged on questions (-1: never)


class MatrixMirror:
    """Exact cosine KNN over unit vectors held in memory.  Thread-safe.

    ``min_vectors`` is the size from which a shelf gets a first pass (:data:`engine.vectors.reduced.MIN_VECTORS`;
    smaller in tests, which would otherwise need shelves of that size to show a fit's behaviour).
    """

    def __init__(self, dim: int, *, min_vectors: int = MIN_VECTORS) -> None:
        self.dim = dim
        self.min_vectors = min_vectors
        self._shelves: dict[str, _Shelf] = {}
        self._users: dict[str, int] = {}
        self._lock = threading.RLock()
        self._maintaining = threading.Lock()
        self._rebuilding = threading.Lock()
        self._journal: list[_Op] | None = None  # writes seen while a rebuild reads the store
        self._postings_building = threading.Lock()
        self._questions = QuestionMemory(dim)
        self.loaded = False

    # -- writing -------------------------------------------------------------------------------------------------
    def upsert(self, rows: Iterable[Row]) -> None:
        """Insert or replace ``(object_id, kind, user_id, vector)`` rows.

        When a shelf's postings fall far enough behind, they are extended in the background now, while writes come
        in, rather than by the first search after a burst of writes (which would pay for it in its latency)."""
        touched: set[str] = set()
        with self._lock:
            if self._journal is not None:
                rows = list(rows)
                self._journal.append(("upsert", rows))
            for object_id, kind, user_id, vector in rows:
                touched.add(kind)
                shelf = self._shelf(kind)
                row = shelf.row_of.get(object_id)
                if row is None:
                    if shelf.n == shelf.vecs.shape[0]:
                        self._grow(shelf)
                    row = shelf.n
                    shelf.n += 1
                    shelf.row_of[object_id] = row
                else:
                    if shelf.postings is not None and row < shelf.postings.upto:
                        shelf.stale.add(row)
                    if shelf.pending is not None:
                        shelf.pending.add(row)
                shelf.vecs[row] = vector
                if shelf.reducer is not None and shelf.reduced is not None:
                    shelf.reduced[row] = shelf.reducer.project_one(np.asarray(vector, dtype=np.float32))
                shelf.ids[row] = object_id
                code = self._user_code(user_id)
                shelf.users[row] = code
                shelf.user_codes.add(code)
            wanted = self.loaded and any(self._wants_postings(self._shelves[kind]) for kind in touched)
        if wanted:
            self._build_postings_soon()

    def delete(self, object_ids: Collection[int]) -> None:
        """Forget the vectors of ``object_ids`` (any kind)."""
        with self._lock:
            if self._journal is not None:
                self._journal.append(("delete", list(object_ids)))
            for shelf in self._shelves.values():
                for object_id in object_ids:
                    row = shelf.row_of.pop(object_id, None)
                    if row is not None:
                        shelf.ids[row] = -1
                        shelf.vecs[row] = 0.0
                        if shelf.reduced is not None:
                            shelf.reduced[row] = 0.0
                        shelf.dead += 1
                if shelf.dead > 1024 and shelf.dead > shelf.n // 4:
                    self._compact(shelf)

    def rebuild(self, read: Callable[[], Iterable[Row]]) -> None:
        """Rebuild from the rows ``read()`` returns (the store's), losing no write that commits meanwhile.

        Writes are recorded from before ``read`` starts and replayed onto the rebuilt copy (upserts and deletes are
        idempotent, so replaying one the read already saw is harmless).  Rebuilds run one at a time.
        """
        with self._rebuilding:
            with self._lock:
                self._journal = []
            try:
                self.replace_all(read())
            finally:
                with self._lock:
                    self._journal = None

    def replace_all(self, rows: Iterable[Row]) -> None:
        """Rebuild from scratch (used at load and after a forget), keeping each kind's fitted first pass (and what
        was last decided about it: a shelf found best scanned exactly is not fitted again for the reload alone)."""
        fresh = MatrixMirror(self.dim, min_vectors=self.min_vectors)
        fresh.upsert(rows)
        with self._lock:
            fitted = {kind: s.reducer for kind, s in self._shelves.items() if s.reducer is not None}
            marks = {kind: (s.fitted_at, s.asked_at) for kind, s in self._shelves.items()}
        for kind, (fitted_at, asked_at) in marks.items():
            shelf = fresh._shelves.get(kind)
            if shelf is not None:
                shelf.fitted_at, shelf.asked_at = fitted_at, asked_at
        for kind, reducer in fitted.items():
            shelf = fresh._shelves.get(kind)
            if shelf is not None:
                reduced = np.zeros((shelf.vecs.shape[0], reducer.projection.shape[1]), dtype=np.float32)
                reduced[: shelf.n] = reducer.project(shelf.vecs[: shelf.n])
                shelf.reducer, shelf.reduced = reducer, reduced
        with self._lock:
            for op in self._journal or ():
                if op[0] == "upsert":
                    fresh.upsert(op[1])
                else:
                    fresh.delete(op[1])
            self._shelves, self._users = fresh._shelves, fresh._users
            self._journal = None
            self.loaded = True
            wanted = any(self._wants_postings(s) for s in self._shelves.values())
        if wanted:
            self._build_postings_soon()

    # -- reading -------------------------------------------------------------------------------------------------
    def search(
        self,
        query: F32,
        k: int,
        *,
        kinds: Collection[str] | None = None,
        user_id: str | None = None,
        only: Collection[int] | None = None,
    ) -> list[tuple[int, str, float]]:
        """The ``k`` most similar ``(object_id, kind, similarity)``, optionally restricted to ``only`` ids."""
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        dims = np.flatnonzero(q)
        wanted = False
        with self._lock:
            user_code = self._users.get(user_id, -2) if user_id is not None else None
            shelves = [(kind, s) for kind, s in self._shelves.items() if kinds is None or kind in kinds]
            snapshot = [
                (
                    kind,
                    s.vecs[: s.n],
                    s.ids[: s.n],
                    s.users[: s.n],
                    s.dead > 0,
                    user_code is not None and s.user_codes != {user_code},
                    s.reducer,
                    s.reduced[: s.n] if s.reduced is not None else None,
                    s.postings,
                    np.fromiter(s.stale, dtype=np.int64, count=len(s.stale)) if s.stale else None,
                )
                for kind, s in shelves
            ]
            wanted = any(self._wants_postings(s) for _kind, s in shelves)
        if wanted:
            self._build_postings_soon()
        only_array = np.fromiter(only, dtype=np.int64) if only is not None else None
        # each shelf's best rows are gathered as arrays and merged once: building a tuple per candidate (twice k of
        # them per shelf) and sorting those in Python cost more interpreter time than the scan around it
        found: list[tuple[int, npt.NDArray[np.int64], F32]] = []
        for position, entry in enumerate(snapshot):
            _kind, all_vecs, all_ids, all_users, has_dead, mixed_users, reducer, reduced, postings, stale = entry
            n = all_vecs.shape[0]
            if n == 0:
                continue
            # A sparse shelf's postings are exact; its first pass is judged on data samples only, and a long question
            # (more dimensions than the postings repay) lost 5 % of its exact top 60 to it.  So a shelf with postings
            # chooses between two exact searches, the postings and the full scan, whichever costs less.
            exact_postings = postings is not None and only_array is None
            if postings is not None and only_array is None and postings.cost(dims) * sparse.ENTRY_COST <= n * self.dim:
                rows = self._postings_candidates(
                    postings, stale, q, dims, all_vecs, all_ids, all_users, has_dead, mixed_users, user_code, k
                )
                vecs = np.take(all_vecs, rows, axis=0)
                ids, users = all_ids[rows], all_users[rows]
            elif reducer is not None and reduced is not None and only_array is None and not exact_postings:
                # rows in file order, copied with take(): a third cheaper than fancy indexing in random order
                rows = np.sort(reducer.candidates(reduced, q, k))
                vecs = np.take(all_vecs, rows, axis=0)
                ids, users = all_ids[rows], all_users[rows]
            else:
                vecs, ids, users = all_vecs, all_ids, all_users
            sims = matvec(vecs, q)
            # Masks cost as much as the product itself on large shelves: build one only when something must go.
            mask = None
            if has_dead:
                mask = ids >= 0
            if mixed_users:
                mask = (users == user_code) if mask is None else mask & (users == user_code)
            if only_array is not None:
                inside = np.isin(ids, only_array)
                mask = inside if mask is None else mask & inside
            if mask is not None:
                sims = np.where(mask, sims, -np.inf)
                available = int(mask.sum())
            else:
                available = int(sims.shape[0])
            take = min(k, available)
            if take <= 0:
                continue
            top = np.argpartition(-sims, take - 1)[:take]
            top_sims = sims[top]
            keep = top_sims > -np.inf
            found.append((position, ids[top][keep], top_sims[keep]))
        if not found:
            return []
        kinds_found = np.concatenate([np.full(len(f[1]), f[0], dtype=np.int32) for f in found])
        ids_found = np.concatenate([f[1] for f in found])
        sims_found = np.concatenate([f[2] for f in found])
        order = np.argsort(-sims_found, kind="stable")[:k]
        names = [entry[0] for entry in snapshot]
        return [
            (object_id, names[position], similarity)
            for object_id, position, similarity in zip(
                ids_found[order].tolist(), kinds_found[order].tolist(), sims_found[order].tolist(), strict=True
            )
        ]

    @staticmethod
    def _postings_candidates(
        postings: Postings,
        stale: npt.NDArray[np.int64] | None,
        q: F32,
        dims: npt.NDArray[np.intp],
        all_vecs: F32,
        all_ids: npt.NDArray[np.int64],
        all_users: npt.NDArray[np.int32],
        has_dead: bool,
        mixed_users: bool,
        user_code: int | None,
        k: int,
    ) -> npt.NDArray[np.int64]:
        """The rows holding the best ``2 k`` exact similarities among those the search may return, in file order.

        Postings give every row's exact similarity (rows added or rewritten since they were built are scored
        directly); the caller rescores these few rows from the vectors, so the similarities it reports are computed
        exactly as on a shelf without postings.
        """
        n = all_vecs.shape[0]
        upto = min(postings.upto, n)
        sims = postings.scores(q, dims)[:upto]
        if n > upto:
            sims = np.concatenate([sims, matvec(all_vecs[upto:], q)])
        if stale is not None:
            stale = stale[stale < n]
            sims[stale] = matvec(all_vecs[stale], q)
        if has_dead or mixed_users:
            mask = all_ids >= 0 if has_dead else None
            if mixed_users:
                mine = all_users == user_code
                mask = mine if mask is None else mask & mine
            assert mask is not None
            sims = np.where(mask, sims, -np.inf)
        wanted = min(n, 2 * k)
        if wanted >= n:
            return np.arange(n, dtype=np.int64)
        rows = top_by_sampled_threshold(sims, wanted) if n >= SAMPLE_STEP * wanted // 2 else None
        if rows is None:
            rows = np.argpartition(sims, n - wanted)[n - wanted :].astype(np.int64)
        return np.sort(rows)

    def _wants_postings(self, shelf: _Shelf) -> bool:
        """True when ``shelf`` should get postings built, or rebuilt because much was added or rewritten since."""
        if shelf.n < sparse.MIN_ROWS or (shelf.dense_at and shelf.n < 2 * shelf.dense_at):
            return False
        if shelf.postings is None:
            return True
        upto = shelf.postings.upto
        return shelf.n - upto > max(sparse.TAIL_ROWS, upto // 16) or len(shelf.stale) > sparse.TAIL_ROWS

    def _build_postings_soon(self) -> None:
        """Build the postings the shelves want on a background thread (one at a time), off the request path."""
        if not self._postings_building.acquire(blocking=False):
            return

        def run() -> None:
            try:
                self._build_postings()
            except Exception:  # a failed build leaves the shelves searched as before; the next search retries
                log.exception("building vector postings failed")
            finally:
                self._postings_building.release()

        threading.Thread(target=run, name="vector-postings", daemon=True).start()

    def build_postings(self) -> list[str]:
        """Build now the postings the shelves want (see :mod:`engine.vectors.postings`); the kinds that got them."""
        with self._postings_building:
            return self._build_postings()

    def _build_postings(self) -> list[str]:
        built: list[str] = []
        with self._lock:
            todo = [kind for kind, s in self._shelves.items() if self._wants_postings(s)]
        for kind in todo:
            with self._lock:
                shelf = self._shelves.get(kind)
                if shelf is None or not self._wants_postings(shelf):
                    continue
                generation, upto, vecs, base = shelf.generation, shelf.n, shelf.vecs, shelf.postings
                if len(shelf.stale) > sparse.TAIL_ROWS:
                    base = None  # many rows rewritten: read everything again rather than score them one by one
                shelf.pending = set()
            if base is None and sparse.density(vecs[:upto]) > sparse.MAX_DENSITY:
                with self._lock:
                    shelf.dense_at, shelf.pending = upto, None
                continue
            postings = base.extended(vecs, upto) if base is not None else Postings.build(vecs, upto)
            with self._lock:
                pending, shelf.pending = shelf.pending, None
                if self._shelves.get(kind) is not shelf or shelf.generation != generation or pending is None:
                    continue  # replaced or compacted meanwhile: row numbers changed, built again on a later search
                # rows rewritten while this read them; extended postings also keep the old ones' stale rows
                stale = {row for row in pending if row < upto}
                if base is not None and shelf.postings is base:
                    stale |= shelf.stale
                shelf.postings, shelf.stale = postings, stale
            built.append(kind)
            log.debug(
                "vector postings for %s: %s rows, %.1f MB, %.2f s", kind, upto, postings.nbytes / 1e6, postings.build_s
            )
        return built

    def similarities(self, query: F32, object_ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each of ``object_ids`` that has a vector."""
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        out: dict[int, float] = {}
        with self._lock:
            for shelf in self._shelves.values():
                rows = [(oid, shelf.row_of[oid]) for oid in object_ids if oid in shelf.row_of]
                if rows:
                    sims = matvec(shelf.vecs[[r for _, r in rows]], q)
                    out.update({oid: float(s) for (oid, _), s in zip(rows, sims, strict=True)})
        return out

    def remember_question(self, vector: F32) -> None:
        """Keep ``vector``, a question recall searches with, to judge the first passes by (see
        :mod:`engine.vectors.questions`: the latest 256, in memory only)."""
        self._questions.note(vector)

    def questions(self) -> F32:
        """The remembered question vectors (oldest first), one per row."""
        return self._questions.latest()[0]

    def maintain(self) -> list[ReducedStats]:
        """Fit or judge again the reduced first pass of every large shelf, and build the postings of sparse shelves
        that want them (off the request path).  Returns the stats of the first passes fitted.

        A large shelf is fitted when it has none yet or has grown by a quarter; a dense one is also judged on the
        questions remembered (:mod:`engine.vectors.questions` says when, and why sparse ones are not).  Calls run
        one at a time: a second caller waits for the first, then finds the shelves fitted.  A fit is installed on
        the shelf of that kind as it is when the fit ends, even if a rebuild replaced it meanwhile.
        """
        fitted: list[ReducedStats] = []
        with self._maintaining:
            asked, seen = self._questions.latest()
            with self._lock:
                kinds = [kind for kind, s in self._shelves.items() if s.n >= self.min_vectors]
            for kind in kinds:
                stats = self._maintain_shelf(kind, asked, seen)
                if stats is not None:
                    fitted.append(stats)
        self.build_postings()
        return fitted

    def _maintain_shelf(self, kind: str, asked: F32, seen: int) -> ReducedStats | None:
        """Fit or judge the first pass of one shelf (see :meth:`maintain`); the stats of a first pass fitted."""
        enough = asked.shape[0] >= MIN_QUESTIONS
        with self._lock:
            shelf = self._shelves.get(kind)
            if shelf is None or shelf.n < self.min_vectors:
                return None
            current = shelf.reducer
            last = max(shelf.fitted_at, current.stats.vectors if current is not None else 0)
            grown = last == 0 or shelf.n > last * 1.25
            dense = sparse.density(shelf.vecs[: shelf.n]) > sparse.MAX_DENSITY
            if not grown and not (dense and due(shelf.asked_at, seen, asked.shape[0])):
                return None
            vecs = shelf.vecs[: shelf.n].copy()
            reduced = shelf.reduced[: shelf.n].copy() if current is not None and shelf.reduced is not None else None
        outcome = (
            judge(vecs, current, reduced, asked if enough else None, grown=grown)
            if dense
            else Reducer.fit(vecs)  # sparse: fitted on the data as always (questions judge dense shelves only)
        )
        with self._lock:
            now = self._shelves.get(kind)
            if now is not None:
                if dense and enough:
                    now.asked_at = seen
                if outcome != "kept":
                    now.fitted_at = vecs.shape[0]
        if isinstance(outcome, Reducer):
            return outcome.stats if self.install(kind, outcome) else None
        if outcome is None and current is not None and self.install(kind, None):
            log.info("vector first pass of %s dropped: no choice keeps its recall; scanned exactly", kind)
        return None

    def install(self, kind: str, reducer: Reducer | None) -> bool:
        """Give the current shelf of ``kind`` the first pass ``reducer`` (None: none, scan exactly), projecting its
        rows outside the lock.

        Also how a copy of this mirror in another process takes the first pass fitted here (fitting is seconds of
        CPU; doing it once keeps every copy's candidates, and so its answers, the same)."""
        if reducer is None:
            with self._lock:
                shelf = self._shelves.get(kind)
                if shelf is None:
                    return False
                shelf.reducer, shelf.reduced = None, None
                return True
        for _attempt in range(3):
            with self._lock:
                shelf = self._shelves.get(kind)
                if shelf is None:
                    return False
                generation, n, vecs = shelf.generation, shelf.n, shelf.vecs
            reduced = np.zeros((vecs.shape[0], reducer.projection.shape[1]), dtype=np.float32)
            reduced[:n] = reducer.project(vecs[:n])
            with self._lock:
                if self._shelves.get(kind) is not shelf or shelf.generation != generation:
                    continue  # replaced or compacted while projecting: row numbers changed, project again
                if shelf.vecs.shape[0] != reduced.shape[0]:  # grew meanwhile
                    bigger = np.zeros((shelf.vecs.shape[0], reduced.shape[1]), dtype=np.float32)
                    bigger[:n] = reduced[:n]
                    reduced = bigger
                if shelf.n > n:  # rows added meanwhile
                    reduced[n : shelf.n] = reducer.project(shelf.vecs[n : shelf.n])
                shelf.reducer, shelf.reduced = reducer, reduced
                return True
        return False

    def reducers(self) -> dict[str, Reducer]:
        """The fitted first pass of each shelf that has one."""
        with self._lock:
            return {kind: s.reducer for kind, s in self._shelves.items() if s.reducer is not None}

    def reduced_stats(self) -> dict[str, ReducedStats]:
        """The fitted first pass of each shelf that has one (diagnostics, benchmarks)."""
        with self._lock:
            return {kind: s.reducer.stats for kind, s in self._shelves.items() if s.reducer is not None}

    def count(self) -> int:
        """Live vectors held."""
        with self._lock:
            return sum(len(s.row_of) for s in self._shelves.values())

    # -- internals -----------------------------------------------------------------------------------------------
    def _shelf(self, kind: str) -> _Shelf:
        shelf = self._shelves.get(kind)
        if shelf is None:
            shelf = _Shelf(
                np.zeros((1024, self.dim), dtype=np.float32),
                np.full(1024, -1, dtype=np.int64),
                np.zeros(1024, dtype=np.int32),
            )
            self._shelves[kind] = shelf
        return shelf

    def _user_code(self, user_id: str) -> int:
        code = self._users.get(user_id)
        if code is None:
            code = len(self._users)
            self._users[user_id] = code
        return code

    @staticmethod
    def _grow(shelf: _Shelf) -> None:
        # Searches hold references to the old arrays; growing makes new ones instead of resizing in place.
        cap = shelf.vecs.shape[0] * 2
        vecs = np.zeros((cap, shelf.vecs.shape[1]), dtype=np.float32)
        vecs[: shelf.n] = shelf.vecs[: shelf.n]
        ids = np.full(cap, -1, dtype=np.int64)
        ids[: shelf.n] = shelf.ids[: shelf.n]
        users = np.zeros(cap, dtype=np.int32)
        users[: shelf.n] = shelf.users[: shelf.n]
        if shelf.reduced is not None:
            reduced = np.zeros((cap, shelf.reduced.shape[1]), dtype=np.float32)
            reduced[: shelf.n] = shelf.reduced[: shelf.n]
            shelf.reduced = reduced
        shelf.vecs, shelf.ids, shelf.users = vecs, ids, users

    @staticmethod
    def _compact(shelf: _Shelf) -> None:
        live = np.nonzero(shelf.ids[: shelf.n] >= 0)[0]
        cap = max(1024, int(len(live) * 1.5))
        vecs = np.zeros((cap, shelf.vecs.shape[1]), dtype=np.float32)
        ids = np.full(cap, -1, dtype=np.int64)
        users = np.zeros(cap, dtype=np.int32)
        vecs[: len(live)] = shelf.vecs[live]
        ids[: len(live)] = shelf.ids[live]
        users[: len(live)] = shelf.users[live]
        if shelf.reduced is not None:  # the fitted basis still applies: keep the projected rows of the live ones
            reduced = np.zeros((cap, shelf.reduced.shape[1]), dtype=np.float32)
            reduced[: len(live)] = shelf.reduced[live]
            shelf.reduced = reduced
        shelf.vecs, shelf.ids, shelf.users, shelf.n, shelf.dead = vecs, ids, users, len(live), 0
        shelf.generation += 1
        shelf.postings, shelf.stale, shelf.pending = None, set(), None  # row numbers changed: built again later
        shelf.user_codes = {int(u) for u in np.unique(users[: len(live)])}
        shelf.row_of = {int(oid): row for row, oid in enumerate(ids[: len(live)])}
