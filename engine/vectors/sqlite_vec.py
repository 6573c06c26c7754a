"""sqlite-vec implementation of :class:`VectorIndex`: one ``vec0`` table per embedding model.

Each model gets a row in ``vector_spaces`` and its own ``vec_<n>`` table (dimensions are fixed per table).  The
``embeddings`` table records which object has a vector in which space; deleting that row (directly, or by cascade
when the object is deleted) removes the vector through a trigger.  ``INSERT OR REPLACE`` is broken on vec0, so a
replacement is a delete followed by an insert.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.store import chunked
from engine.store.store import Store
from engine.store.writer import Tx
from engine.vectors.base import VectorHit, VectorItem
from engine.vectors.matrix import MatrixMirror, Row
from engine.vectors.reduced import ReducedStats

log = logging.getLogger(__name__)

#: What a follower of the index learns, in commit order: ``("upsert", rows)``, ``("delete", object_ids)``,
#: ``("reload",)`` (re-read everything from the store) or ``("reducers", {kind: Reducer | None})`` (a first pass
#: fitted, or dropped for exact scanning).
VectorChange = tuple[Any, ...]


class SqliteVecIndex:
    """Vectors of one model in the vault database, searched through an in-memory mirror once it is loaded."""

    def __init__(self, store: Store, model_id: str, dim: int) -> None:
        self._store = store
        self.model_id = model_id
        self.dim = dim
        self.space_id, self.table = self._ensure_space()
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

    def load_mirror(self) -> int:
        """Read every vector of this space into the in-memory mirror; returns how many."""
        if not self.table:
            self.mirror.rebuild(list)
            return 0
        count = 0

        def read() -> Iterator[Row]:
            nonlocal count
            for rows in self._store.stream(f"SELECT rowid, kind, user_id, embedding FROM {self.table}"):
                count += len(rows)
                for r in rows:
                    yield int(r[0]), str(r[1]), str(r[2]), np.frombuffer(r[3], dtype=np.float32)

        self.mirror.rebuild(read)
        return count

    def similarities(self, query: npt.NDArray[np.float32], object_ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each stored vector among ``object_ids``."""
        if self.mirror.loaded:
            return self.mirror.similarities(query, object_ids)
        out: dict[int, float] = {}
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        for chunk in chunked(object_ids):
            marks = ",".join("?" * len(chunk))
            for oid, blob in self._store.query(
                f"SELECT rowid, embedding FROM {self.table} WHERE rowid IN ({marks})", tuple(chunk)
            ):
                out[int(oid)] = float(np.frombuffer(blob, dtype=np.float32) @ q)
        return out

    def _ensure_space(self) -> tuple[int, str]:
        rows = self._store.query("SELECT id, dim, table_name FROM vector_spaces WHERE model_id = ?", (self.model_id,))
        if rows:
            space_id, dim, table = rows[0]
            if int(dim) != self.dim:
                raise ValueError(f"vector space {self.model_id} has dim {dim}, not {self.dim}")
            return int(space_id), str(table)
        if self._store.writer is None:
            return 0, ""
        space: tuple[int, str] = self._store.write(self._create_space)
        return space

    def _create_space(self, tx: Tx) -> tuple[int, str]:
        existing = tx.execute("SELECT id, table_name FROM vector_spaces WHERE model_id = ?", (self.model_id,)).first()
        if existing is not None:
            return int(existing[0]), str(existing[1])
        space_id = int(tx.scalar("SELECT COALESCE(MAX(id), 0) + 1 FROM vector_spaces"))
        table = f"vec_{space_id}"
        tx.execute(
            "INSERT INTO vector_spaces(id, model_id, dim, table_name, created_at) VALUES (?, ?, ?, ?, ?)",
            (space_id, self.model_id, self.dim, table, tx.now),
        )
        create_vec_table(tx, table, self.dim)
        tx.execute(
            f"CREATE TRIGGER {table}_follow AFTER DELETE ON embeddings WHEN old.space_id = {space_id} "
            f"BEGIN DELETE FROM {table} WHERE rowid = old.object_id; END"
        )
        return space_id, table

    def add(self, tx: Tx, items: Sequence[VectorItem]) -> None:
        """Replace-or-insert the vectors of ``items`` inside ``tx``."""
        if not items:
            return
        # an object created in this transaction has no vector to replace: skipping the look saves a statement per
        # new fact, which is most of what storing one costs beside its own row
        stale = [item.object_id for item in items if item.object_id not in tx.fresh]
        if stale:
            self.delete(tx, stale)
        tx.fresh.difference_update(item.object_id for item in items)  # from now on they have a vector to replace
        tx.executemany(
            "INSERT INTO embeddings(object_id, space_id, kind, user_id, content_hash, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(i.object_id, self.space_id, i.kind, i.user_id, i.content_hash, tx.now) for i in items],
        )
        tx.executemany(
            f"INSERT INTO {self.table}(rowid, embedding, kind, user_id) VALUES (?, ?, ?, ?)",
            [(i.object_id, _blob(i.vector, self.dim), i.kind, i.user_id) for i in items],
        )
        rows = [(i.object_id, i.kind, i.user_id, np.asarray(i.vector, dtype=np.float32)) for i in items]
        hashes = {i.object_id: i.content_hash for i in items}
        tx.after_commit(lambda: self._committed_upsert(rows, hashes))

    def delete(self, tx: Tx, object_ids: Collection[int]) -> None:
        """Remove the vectors of ``object_ids`` inside ``tx`` (the trigger clears the vec0 rows)."""
        for chunk in chunked(object_ids):
            marks = ",".join("?" * len(chunk))
            tx.execute(f"DELETE FROM embeddings WHERE space_id = ? AND object_id IN ({marks})", (self.space_id, *chunk))
        ids = list(object_ids)
        tx.after_commit(lambda: self._committed_delete(ids))

    def _committed_upsert(self, rows: list[Row], hashes: dict[int, str]) -> None:
        """After COMMIT: the search side learns the vectors just stored (here the in-memory mirror)."""
        del hashes  # the mirror has no use for them; the Chroma index keeps them to compare with the store
        self.mirror.upsert(rows)
        self._tell(("upsert", rows))

    def _committed_delete(self, object_ids: list[int]) -> None:
        """After COMMIT: the search side forgets the vectors just deleted."""
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
        sql = f"SELECT rowid, distance, kind FROM {self.table} WHERE embedding MATCH ? AND k = ?"
        params: list[object] = [_blob(query, self.dim), int(k)]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        rows = self._store.query(sql, params)
        # a vector with no direction (a question of no indexed words under hashing) has no cosine distance: NULL
        return [VectorHit(int(r[0]), str(r[2]), 1.0 - float(r[1])) for r in rows if r[1] is not None]

    def count(self) -> int:
        """Number of stored vectors in this space."""
        if not self.table:
            return 0
        return int(self._store.scalar(f"SELECT COUNT(*) FROM {self.table}") or 0)


def create_vec_table(tx: Tx, table: str, dim: int) -> None:
    """The vec0 table of one vector space (cosine distance, with kind and user as metadata filters)."""
    tx.execute(
        f"CREATE VIRTUAL TABLE {table} USING vec0("
        f"embedding float[{dim}] distance_metric=cosine, kind text, user_id text)"
    )


def rebuild_vec_table(tx: Tx, table: str) -> None:
    """Rewrite a vec0 table with only its live vectors.

    vec0 marks deleted vectors invalid but leaves their bytes inside its chunk blobs; forgetting must not leave
    them in the file.  Live rows go through a TEMP table (memory, never the vault file), the old table is dropped
    (its pages are zeroed by ``secure_delete``) and recreated.
    """
    row = tx.execute("SELECT dim FROM vector_spaces WHERE table_name = ?", (table,)).first()
    if row is None:
        return
    tx.execute("DROP TABLE IF EXISTS temp.vec_rebuild")
    tx.execute(f"CREATE TEMP TABLE vec_rebuild AS SELECT rowid AS id, embedding, kind, user_id FROM {table}")
    tx.execute(f"DROP TABLE {table}")
    create_vec_table(tx, table, int(row[0]))
    tx.execute(
        f"INSERT INTO {table}(rowid, embedding, kind, user_id) "
        "SELECT id, embedding, kind, user_id FROM temp.vec_rebuild"
    )
    tx.execute("DROP TABLE temp.vec_rebuild")


def _blob(vector: npt.NDArray[np.float32], dim: int) -> bytes:
    array = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
    if array.shape[0] != dim:
        raise ValueError(f"vector has {array.shape[0]} dimensions, the index {dim}")
    return array.tobytes()
