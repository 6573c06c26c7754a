"""Chroma as the search side of the vector index: an HNSW collection, embedded in the vault folder or on a server.

Why this shape.  The vault's promises — an acknowledged write is durable, a forgotten item is gone, nothing is
half-written — rest on one SQLite transaction holding a row and its vector together.  Chroma cannot join that
transaction, so here it is an *index*, not the record: vectors are still written to ``vault.db`` (sqlite-vec, with
their rows, exactly as :class:`~engine.vectors.sqlite_vec.SqliteVecIndex` does) and, once committed, pushed to a
Chroma collection that answers nearest-neighbour searches.  What Chroma brings is an approximate index whose search
time grows slowly with the number of vectors, and the option to run it as a separate server (``chroma run``) so the
vault process no longer holds every vector in memory — the in-memory mirror is not loaded with this backend.

What keeps the two in step:

* pushes run on one background thread, in commit order, so the writer never waits on Chroma;
* a push that fails (server down, disk full) marks the collection *stale*: searches fall back to sqlite-vec's exact
  scan (slower, never wrong) and the thread reconciles — every stored id and content hash compared with the
  collection, missing or changed vectors pushed from ``vault.db``, extra ones deleted — at start-up, after a
  failure, and every 30 s while stale;
* hits are checked against the store before they are returned, so a vector deleted a moment ago never surfaces;
* a forget (whose cascaded deletions bypass :meth:`delete`) drops and rebuilds the collection from the store:
  Chroma's own files may keep the bytes of deleted vectors, a dropped collection's files go with it.

Only vectors and two filter fields (``kind``, ``user_id``) plus the content hash reach Chroma — never text.  Query
and stored vectors are always passed as embeddings: given texts, Chroma would try to download a model of its own.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from engine.errors import EnvironmentProblem
from engine.store.store import Store
from engine.store.writer import Tx, chunked
from engine.vectors.base import VectorHit
from engine.vectors.matrix import Row
from engine.vectors.reduced import ReducedStats
from engine.vectors.sqlite_vec import SqliteVecIndex

log = logging.getLogger(__name__)

#: Vectors per Chroma request (upserts, deletes and pages of ids while reconciling).
BATCH = 2_000
#: How often a stale collection is reconciled again, in seconds.
RETRY_S = 30.0
#: Nearest neighbours asked of Chroma beyond ``k``, so hits dropped by the store check still leave ``k``.
SPARE = 8


@dataclass(frozen=True, slots=True)
class ChromaTarget:
    """Where the collection lives: ``path`` (embedded, in the vault folder) or ``url`` (a Chroma server)."""

    path: Path | None = None
    url: str | None = None

    def describe(self) -> str:
        """For logs, ``cairn doctor`` and health: the server URL or the folder."""
        return f"Chroma server {self.url}" if self.url else f"Chroma (embedded, {self.path})"


def chroma_target(url: str, path: Path) -> ChromaTarget:
    """The target named by the ``vectors.chroma_url`` setting (validated by the settings): empty means embedded
    in the vault folder at ``path``."""
    return ChromaTarget(url=url.rstrip("/")) if url else ChromaTarget(path=path)


def require_chromadb() -> None:
    """Fail early, with the fix, when the Chroma backend is chosen but its package is missing.

    Raises:
        EnvironmentProblem: ``chromadb`` is not installed (it is the ``chroma`` extra).
    """
    try:
        import chromadb  # noqa: F401
    except ImportError as exc:
        raise EnvironmentProblem(
            "vectors.backend is chroma, but the chromadb package is not installed",
            fix="Install the extra: pip install 'cairn[chroma]' — or set vectors.backend = \"sqlite-vec\".",
        ) from exc


def connect(target: ChromaTarget) -> Any:
    """A Chroma client for ``target``, telemetry off (a server client checks the server is there)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if target.url is not None:
        parts = urlsplit(target.url)
        port = parts.port or (443 if parts.scheme == "https" else 8000)
        return chromadb.HttpClient(
            host=parts.hostname or "127.0.0.1", port=port, ssl=parts.scheme == "https", settings=settings
        )
    assert target.path is not None
    target.path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(target.path), settings=settings)


def collection_name(vault_id: str, model_id: str) -> str:
    """One collection per vault and embedding model (a server may hold several vaults' collections)."""
    model = re.sub(r"[^a-zA-Z0-9._-]+", "-", model_id).strip("-._") or "model"
    return f"cairn-{vault_id}-{model}"[:200]


@dataclass
class _Op:
    kind: str  # upsert | delete | reconcile | rebuild | flush
    rows: list[Row] = field(default_factory=list)
    hashes: dict[int, str] = field(default_factory=dict)
    ids: list[int] = field(default_factory=list)
    done: threading.Event | None = None


class ChromaIndex(SqliteVecIndex):
    """Vectors recorded in ``vault.db`` (sqlite-vec) and searched in a Chroma collection kept in step with it."""

    def __init__(
        self,
        store: Store,
        model_id: str,
        dim: int,
        target: ChromaTarget,
        *,
        client_factory: Callable[[ChromaTarget], Any] = connect,
    ) -> None:
        super().__init__(store, model_id, dim)
        require_chromadb()
        self.target = target
        self._connect = client_factory
        self._client: Any = None  # connected on first use: a server that is down must not stop the vault opening
        self._name = collection_name(self._vault_id(), model_id)
        self._collection: Any = None
        self._stale = True  # until the first reconciliation says the collection matches the store
        self._failure = ""
        self._ops: queue.Queue[_Op | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed = False

    # -- state -----------------------------------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """What answers searches right now."""
        state = "in step" if not self._stale else f"catching up, searches use sqlite-vec ({self._failure or 'start'})"
        return f"{self.target.describe()}, collection {self._name}: {state}"

    @property
    def stale(self) -> bool:
        """True while the collection may differ from the store (searches then use sqlite-vec)."""
        return self._stale

    def chroma_count(self) -> int:
        """Vectors in the Chroma collection (asks Chroma)."""
        return int(self._ensure_collection().count())

    # -- lifecycle -------------------------------------------------------------------------------------------------
    def load_mirror(self) -> int:
        """Start keeping the collection in step (the first reconciliation runs in the background).

        Stands in for the mirror load of the sqlite-vec backend: with Chroma nothing is held in memory.
        """
        self._start()
        self._ops.put(_Op("reconcile"))
        return self.count()

    def maintain(self) -> list[ReducedStats]:
        """Periodic upkeep: reconcile again when the collection is stale (the thread also retries on its own)."""
        if self._stale and self._thread is not None:
            self._ops.put(_Op("reconcile"))
        return []

    def after_forget(self) -> None:
        """Drop and rebuild the collection from the store; until done, searches use sqlite-vec (never the old data)."""
        self._stale = True
        self._failure = "rebuilding after a forget"
        self._start()
        done = threading.Event()
        self._ops.put(_Op("rebuild", done=done))
        done.wait(300)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every push queued so far has been tried; False if ``timeout`` passed first."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._ops.put(_Op("flush", done=done))
        return done.wait(timeout)

    def close(self) -> None:
        """Finish queued pushes and stop the thread (the collection is reconciled at the next start anyway)."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._ops.put(None)
            self._thread.join(30)

    def _start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="vault-chroma", daemon=True)
            self._thread.start()

    # -- writes (after COMMIT, from the writer thread: queued, never waited for) ------------------------------------
    def _committed_upsert(self, rows: list[Row], hashes: dict[int, str]) -> None:
        if self._thread is None:
            self._stale = True  # not started yet: the start-up reconciliation picks these up from the store
            return
        self._ops.put(_Op("upsert", rows=rows, hashes=hashes))

    def _committed_delete(self, object_ids: list[int]) -> None:
        if self._thread is None:
            self._stale = True
            return
        self._ops.put(_Op("delete", ids=object_ids))

    # -- search ----------------------------------------------------------------------------------------------------
    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        kinds: Collection[str] | None = None,
        user_id: str | None = None,
    ) -> list[VectorHit]:
        """KNN in the Chroma collection when it is in step; sqlite-vec's exact scan otherwise."""
        if not self.table or k <= 0:
            return []
        if self._stale:
            return super().search(query, k, kinds=kinds, user_id=user_id)
        clauses: list[dict[str, Any]] = []
        if kinds:
            clauses.append({"kind": {"$in": sorted(kinds)}})
        if user_id is not None:
            clauses.append({"user_id": user_id})
        where = None if not clauses else clauses[0] if len(clauses) == 1 else {"$and": clauses}
        vector = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        try:
            found = self._ensure_collection().query(
                query_embeddings=vector, n_results=k + SPARE, where=where, include=["distances", "metadatas"]
            )
        except Exception as exc:  # Chroma unreachable or failing: answer from the store, catch up later
            self._mark_stale(f"search failed: {exc}")
            return super().search(query, k, kinds=kinds, user_id=user_id)
        ids = [int(i) for i in found["ids"][0]]
        live = self._live(ids)
        hits = [
            VectorHit(oid, str(meta["kind"]), 1.0 - float(dist))
            for oid, dist, meta in zip(ids, found["distances"][0], found["metadatas"][0], strict=True)
            if oid in live
        ]
        return hits[:k]

    def _live(self, object_ids: Sequence[int]) -> set[int]:
        """Which of ``object_ids`` still have a vector in the store (a deletion may not have reached Chroma yet)."""
        if not object_ids:
            return set()
        marks = ",".join("?" * len(object_ids))
        rows = self._store.query(
            f"SELECT object_id FROM embeddings WHERE space_id = ? AND object_id IN ({marks})",
            (self.space_id, *object_ids),
        )
        return {int(r[0]) for r in rows}

    # -- the push thread -------------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            try:
                op = self._ops.get(timeout=RETRY_S)
            except queue.Empty:
                if self._stale and not self._closed:
                    self._reconcile()
                continue
            if op is None:
                return
            try:
                if op.kind == "upsert":
                    self._push(op.rows, op.hashes)
                elif op.kind == "delete":
                    for chunk in chunked(op.ids, BATCH):
                        self._ensure_collection().delete(ids=[str(i) for i in chunk])
                elif op.kind == "reconcile":
                    self._reconcile()
                elif op.kind == "rebuild":
                    self._rebuild()
            except Exception as exc:
                self._mark_stale(f"{op.kind} failed: {exc}")
            finally:
                if op.done is not None:
                    op.done.set()

    def _push(self, rows: Sequence[Row], hashes: dict[int, str]) -> None:
        collection = self._ensure_collection()
        for start in range(0, len(rows), BATCH):
            part = rows[start : start + BATCH]
            collection.upsert(
                ids=[str(r[0]) for r in part],
                embeddings=np.stack([np.asarray(r[3], dtype=np.float32) for r in part]),
                metadatas=[{"kind": r[1], "user_id": r[2], "hash": hashes.get(r[0], "")} for r in part],
            )

    def _reconcile(self) -> None:
        """Make the collection hold exactly the store's vectors (by id and content hash)."""
        if not self.table:
            self._stale = False
            return
        started = time.perf_counter()
        try:
            collection = self._ensure_collection()
            stored = {
                int(oid): str(h or "")
                for oid, h in self._store.query(
                    "SELECT object_id, content_hash FROM embeddings WHERE space_id = ?", (self.space_id,)
                )
            }
            held: dict[int, str] = {}
            offset = 0
            while True:
                page = collection.get(include=["metadatas"], limit=BATCH, offset=offset)
                for oid, meta in zip(page["ids"], page["metadatas"], strict=True):
                    held[int(oid)] = str((meta or {}).get("hash", ""))
                if len(page["ids"]) < BATCH:
                    break
                offset += BATCH
            extra = [oid for oid in held if oid not in stored]
            missing = [oid for oid, h in stored.items() if held.get(oid) != h]
            for chunk in chunked(extra, BATCH):
                collection.delete(ids=[str(i) for i in chunk])
            for chunk in chunked(missing, BATCH):
                self._push(self._read_rows(chunk), {oid: stored[oid] for oid in chunk})
        except Exception as exc:
            self._mark_stale(f"catching up failed: {exc}")
            return
        self._stale = False
        self._failure = ""
        log.info(
            "Chroma collection %s in step with the vault: %s pushed, %s removed, %.1f s",
            self._name,
            len(missing),
            len(extra),
            time.perf_counter() - started,
        )

    def _rebuild(self) -> None:
        """Drop the collection (its files, and any bytes of forgotten vectors in them) and refill it."""
        try:
            self._client_now().delete_collection(self._name)
        except Exception as exc:  # absent already is fine; anything else is reported by the refill
            log.debug("dropping %s: %s", self._name, exc)
        self._collection = None
        self._reconcile()

    def _read_rows(self, object_ids: Sequence[int]) -> list[Row]:
        marks = ",".join("?" * len(object_ids))
        return [
            (int(oid), str(kind), str(user), np.frombuffer(blob, dtype=np.float32))
            for oid, kind, user, blob in self._store.query(
                f"SELECT rowid, kind, user_id, embedding FROM {self.table} WHERE rowid IN ({marks})",
                tuple(object_ids),
            )
        ]

    def _client_now(self) -> Any:
        if self._client is None:
            self._client = self._connect(self.target)
        return self._client

    def _ensure_collection(self) -> Any:
        if self._collection is None:
            self._collection = self._client_now().get_or_create_collection(
                self._name, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
        return self._collection

    def _mark_stale(self, reason: str) -> None:
        if not self._stale:
            log.warning("Chroma is out of step with the vault (%s); searches use sqlite-vec meanwhile", reason)
        self._stale = True
        self._failure = reason
        self._collection = None  # reconnect next time (the server may have restarted with a new collection id)
        if self.target.url is not None:
            self._client = None

    def _vault_id(self) -> str:
        """A random id kept in the vault's ``meta`` table: the collection's name survives moving the vault folder."""
        rows = self._store.query("SELECT value FROM meta WHERE key = 'vault_id'")
        if rows:
            return str(rows[0][0])
        if self._store.writer is None:
            return "readonly"

        def write(tx: Tx) -> str:
            import secrets

            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('vault_id', ?) ON CONFLICT(key) DO NOTHING",
                (secrets.token_hex(6),),
            )
            return str(tx.scalar("SELECT value FROM meta WHERE key = 'vault_id'"))

        vault_id: str = self._store.write(write)
        return vault_id
