"""The record of one embedding model's vectors in ``vault.db``: what every vector index keeps, whatever searches.

Each model gets a row in ``vector_spaces`` and its own ``vec_<n>`` table (dimensions are fixed per table).  The
``embeddings`` table records which object has a vector in which space; deleting that row (directly, or by cascade
when the object is deleted) removes the vector through a trigger.  ``INSERT OR REPLACE`` is broken on vec0, so a
replacement is a delete followed by an insert.

Why a class of its own.  The vault's promises — an acknowledged write is durable, a forgotten item is gone, nothing
is half-written — rest on one SQLite transaction holding a row and its vector together, so every backend records
its vectors here, inside the writer's transaction.  What differs between backends is only what answers searches
once a write has committed: an in-memory mirror (:class:`~engine.vectors.sqlite_vec.SqliteVecIndex`) or a Chroma
collection (:class:`~engine.vectors.chroma.ChromaIndex`).  Both hold a :class:`VectorSpace`; neither is a kind of
the other.  The exact scan of the vec0 table is what either falls back to.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from engine.store import chunked
from engine.store.store import Store
from engine.store.writer import Tx
from engine.vectors.base import VectorHit, VectorItem
from engine.vectors.matrix import Row


class VectorSpace:
    """One model's vectors in ``vault.db``: registered on first use, written inside the caller's transaction."""

    def __init__(self, store: Store, model_id: str, dim: int) -> None:
        self._store = store
        self.model_id = model_id
        self.dim = dim
        self.space_id, self.table = self._ensure()

    def _ensure(self) -> tuple[int, str]:
        rows = self._store.query("SELECT id, dim, table_name FROM vector_spaces WHERE model_id = ?", (self.model_id,))
        if rows:
            space_id, dim, table = rows[0]
            if int(dim) != self.dim:
                raise ValueError(f"vector space {self.model_id} has dim {dim}, not {self.dim}")
            return int(space_id), str(table)
        if self._store.writer is None:
            return 0, ""  # a read-only vault without this space: nothing stored, nothing found
        space: tuple[int, str] = self._store.write(self._create)
        return space

    def _create(self, tx: Tx) -> tuple[int, str]:
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

    # -- writes, inside the writer's transaction ---------------------------------------------------------------------
    def insert(self, tx: Tx, items: Sequence[VectorItem]) -> tuple[list[Row], dict[int, str]]:
        """Replace-or-insert the vectors of ``items``; returns what the search side learns once ``tx`` commits:
        the rows and each object's content hash."""
        # an object created in this transaction has no vector to replace: skipping the look saves a statement per
        # new fact, which is most of what storing one costs beside its own row
        stale = [item.object_id for item in items if item.object_id not in tx.fresh]
        if stale:
            self.remove(tx, stale)
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
        return rows, {i.object_id: i.content_hash for i in items}

    def remove(self, tx: Tx, object_ids: Collection[int]) -> list[int]:
        """Remove the vectors of ``object_ids`` inside ``tx`` (the trigger clears the vec0 rows); returns the ids."""
        for chunk in chunked(object_ids):
            marks = ",".join("?" * len(chunk))
            tx.execute(f"DELETE FROM embeddings WHERE space_id = ? AND object_id IN ({marks})", (self.space_id, *chunk))
        return list(object_ids)

    # -- reads -----------------------------------------------------------------------------------------------------
    def rows(self) -> Iterator[Row]:
        """Every stored vector, streamed (what a search side loads from)."""
        if not self.table:
            return
        for rows in self._store.stream(f"SELECT rowid, kind, user_id, embedding FROM {self.table}"):
            for r in rows:
                yield int(r[0]), str(r[1]), str(r[2]), np.frombuffer(r[3], dtype=np.float32)

    def read(self, object_ids: Sequence[int]) -> list[Row]:
        """The stored vectors of ``object_ids`` (those that have one)."""
        out: list[Row] = []
        for chunk in chunked(object_ids):
            marks = ",".join("?" * len(chunk))
            out.extend(
                (int(oid), str(kind), str(user), np.frombuffer(blob, dtype=np.float32))
                for oid, kind, user, blob in self._store.query(
                    f"SELECT rowid, kind, user_id, embedding FROM {self.table} WHERE rowid IN ({marks})", tuple(chunk)
                )
            )
        return out

    def live(self, object_ids: Sequence[int]) -> set[int]:
        """Which of ``object_ids`` have a vector in this space now."""
        return listed_in(self._store, "embeddings", self.space_id, object_ids)

    def hashes(self) -> Iterator[tuple[int, str, str, str]]:
        """``(object_id, content_hash, kind, user_id)`` of every vector recorded in this space."""
        for oid, h, kind, user in self._store.query(
            "SELECT object_id, content_hash, kind, user_id FROM embeddings WHERE space_id = ?", (self.space_id,)
        ):
            yield int(oid), str(h or ""), str(kind), str(user)

    def similarities(self, query: npt.NDArray[np.float32], object_ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each stored vector among ``object_ids``, read from the table."""
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        return {oid: float(vector @ q) for oid, _kind, _user, vector in self.read(object_ids)}

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        kinds: Collection[str] | None = None,
        user_id: str | None = None,
    ) -> list[VectorHit]:
        """Exact KNN over the vec0 table, with the kind and user filters."""
        if not self.table or k <= 0:
            return []
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


def listed_in(store: Store, table: str, space_id: int, object_ids: Collection[int]) -> set[int]:
    """Which of ``object_ids`` a per-space table (``embeddings``, ``vector_backlog``) lists for ``space_id``."""
    found: set[int] = set()
    for chunk in chunked(list(object_ids)):
        marks = ",".join("?" * len(chunk))
        found.update(
            int(r[0])
            for r in store.query(
                f"SELECT object_id FROM {table} WHERE space_id = ? AND object_id IN ({marks})", (space_id, *chunk)
            )
        )
    return found


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
