"""The default vector index: vectors recorded in ``vault.db`` (sqlite-vec), searched in an in-memory mirror.

The record is a :class:`~engine.vectors.space.VectorSpace` (one ``vec0`` table per model, written inside the
writer's transaction); once a write commits, the :class:`~engine.vectors.matrix.MatrixMirror` learns it, and so do
the followers — the copies of the mirror in recall's helper processes.  Until the mirror is loaded (in the
background after a vault opens) searches scan the vec0 table exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.store.store import Store
from engine.store.writer import Tx
from engine.vectors.base import VectorHit, VectorItem
from engine.vectors.matrix import MatrixMirror, Row
from engine.vectors.reduced import ReducedStats, Reducer
from engine.vectors.space import VectorSpace

log = logging.getLogger(__name__)

#: What a follower of the index learns, in commit order: ``("upsert", rows)``, ``("delete", object_ids)``,
#: ``("reload",)`` (re-read everything from the store) or ``("reducers", {kind: Reducer | None})`` (a first pass
#: fitted, or dropped for exact scanning).
VectorChange = tuple[Any, ...]


class SqliteVecIndex:
    """Vectors of one model in the vault database, searched through an in-memory mirror once it is loaded."""

    def __init__(self, store: Store, model_id: str, dim: int) -> None:
        self.space = VectorSpace(store, model_id, dim)
        self.model_id = model_id
        self.dim = dim
        self.space_id = self.space.space_id
        self.table = self.space.table
        self.mirror = MatrixMirror(dim)
        self._followers: list[Callable[[VectorChange], None]] = []

    def follow(self, follower: Callable[[VectorChange], None]) -> Callable[[], None]:
        """Call ``follower`` with every change the search side learns, in order; returns the way to stop.

        Copies of the mirror in other processes (:mod:`engine.recall.processes`) keep in step this way.  A follower
        is called on the writer's thread right after COMMIT and must not block.
        """
        self._followers.append(follower)

        def stop() -> None:
            if follower in self._followers:
                self._followers.remove(follower)

        return stop

    def _tell(self, change: VectorChange) -> None:
        for follower in list(self._followers):
            try:
                follower(change)
            except Exception:
                log.exception("a follower of the vector index failed")

    def held(self) -> int:
        """Vectors in the in-memory mirror (0 until it is loaded)."""
        return self.mirror.count()

    def first_passes(self) -> dict[str, Reducer]:
        """The mirror's fitted first pass of each shelf (what a copy is sent when it starts)."""
        return self.mirror.reducers()

    def learn(self, changes: Sequence[VectorChange]) -> None:
        """Apply what a :meth:`follow`-er was told, in order: how a copy of this index in another process keeps in
        step with the original."""
        for change in changes:
            if change[0] == "upsert":
                self.mirror.upsert(change[1])
            elif change[0] == "delete":
                self.mirror.delete(change[1])
            elif change[0] == "reload":
                self.load_mirror()
            elif change[0] == "reducers":
                for kind, reducer in change[1].items():
                    self.mirror.install(kind, reducer)

    def load_mirror(self) -> int:
        """Read every vector of this space into the in-memory mirror; returns how many."""
        self.mirror.rebuild(self.space.rows)
        return self.mirror.count()

    def similarities(self, query: npt.NDArray[np.float32], object_ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each stored vector among ``object_ids``."""
        if self.mirror.loaded:
            return self.mirror.similarities(query, object_ids)
        return self.space.similarities(query, object_ids)

    def add(self, tx: Tx, items: Sequence[VectorItem]) -> None:
        """Replace-or-insert the vectors of ``items`` inside ``tx``; the mirror learns them at COMMIT."""
        if not items:
            return
        rows, _hashes = self.space.insert(tx, items)
        tx.after_commit(lambda: self._committed_upsert(rows))

    def delete(self, tx: Tx, object_ids: Collection[int]) -> None:
        """Remove the vectors of ``object_ids`` inside ``tx``; the mirror forgets them at COMMIT."""
        ids = self.space.remove(tx, object_ids)
        tx.after_commit(lambda: self._committed_delete(ids))

    def _committed_upsert(self, rows: list[Row]) -> None:
        self.mirror.upsert(rows)
        self._tell(("upsert", rows))

    def _committed_delete(self, object_ids: list[int]) -> None:
        self.mirror.delete(object_ids)
        self._tell(("delete", object_ids))

    def note_question(self, query: npt.NDArray[np.float32]) -> None:
        """A question's vector, about to be searched with: the mirror judges its first pass on such questions.

        Called where the question is embedded (this process), not where it is ranked (perhaps a helper process),
        so the copy that fits the first pass is the one that sees the questions.
        """
        self.mirror.remember_question(query)

    def maintain(self) -> list[ReducedStats]:
        """Periodic upkeep off the request path: fit the mirror's first pass where a shelf has grown, or judge it
        again on the questions asked since; followers learn every first pass fitted or dropped."""
        if not self.mirror.loaded:
            return []
        before = self.mirror.reducers()
        fitted = self.mirror.maintain()
        after = self.mirror.reducers()
        changed = {k: after.get(k) for k in before.keys() | after.keys() if before.get(k) is not after.get(k)}
        if changed:
            self._tell(("reducers", changed))
        return fitted

    def after_forget(self) -> None:
        """Cascaded deletions bypass :meth:`delete`: rebuild the search side from the store."""
        if self.mirror.loaded:
            self.load_mirror()
        self._tell(("reload",))

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until searches see every committed write (the mirror is updated at COMMIT: at once)."""
        del timeout
        return True

    def close(self) -> None:
        """Release what the index holds besides the store (nothing here)."""

    @property
    def backend(self) -> str:
        """What answers searches, for ``cairn doctor`` and health."""
        return "sqlite-vec (in-memory mirror)" if self.mirror.loaded else "sqlite-vec"

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        kinds: Collection[str] | None = None,
        user_id: str | None = None,
    ) -> list[VectorHit]:
        """KNN with metadata filters: the in-memory mirror when loaded, else vec0."""
        if not self.table or k <= 0:
            return []
        if self.mirror.loaded:
            return [
                VectorHit(oid, kind, sim)
                for oid, kind, sim in self.mirror.search(query, k, kinds=kinds, user_id=user_id)
            ]
        return self.space.search(query, k, kinds=kinds, user_id=user_id)

    def count(self) -> int:
        """Number of stored vectors in this space."""
        return self.space.count()
