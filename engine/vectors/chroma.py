"""Chroma as the search side of the vector index: an HNSW collection, embedded in the vault folder or on a server.

Why this shape. The vault's promises — an acknowledged write is durable, a forgotten item is gone, nothing is half-
written — rest on one SQLite transaction holding a row and its vector together. Chroma cannot join that transaction,
so here it is an *index*, not the record: vectors are still written to ``vault.db`` (sqlite-vec, with their rows, in
the :class:`~engine.vectors.space.VectorSpace` the default index records them in too) and, once committed, pushed to
a Chroma collection that answers nearest-neighbour searches. What Chroma brings is an approximate index whose search
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

Only vectors, their kind (one collection per kind), ``user_id`` and the content hash reach Chroma — never text.  Query
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

from engine.errors import EnvironmentProblem, VaultDamaged
from engine.permissions import private_dir
from engine.store import chunked
from engine.store.store import Store
from engine.store.writer import Tx
from engine.vectors.base import VectorHit, VectorItem
from engine.vectors.matrix import Row
from engine.vectors.reduced import ReducedStats
from engine.vectors.space import VectorSpace

log = logging.getLogger(__name__)

#: Vectors per Chroma request (upserts, deletes and pages of ids while reconciling).
BATCH = 2_000
#: How often a stale collection is reconciled again, in seconds.
RETRY_S = 30.0
#: Nearest neighbours asked of Chroma beyond ``k``, so hits dropped by the store check still leave ``k``.
SPARE = 8
#: Each collection is asked for this many times ``k`` neighbours, up to OVERFETCH_CAP: HNSW searches at least that
#: wide, which finds more of the true top ``k``; recall's wide searches (k of 60 and more) are wide already.
OVERFETCH = 4
OVERFETCH_CAP = 120


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
    private_dir(target.path)
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


class ChromaIndex:
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
        require_chromadb()
        self._store = store
        self.space = VectorSpace(store, model_id, dim)
        self.model_id = model_id
        self.dim = dim
        self.space_id = self.space.space_id
        self.target = target
        self._connect = client_factory
        self._client: Any = None  # connected on first use: a server that is down must not stop the vault opening
        self._name = collection_name(self._vault_id(), model_id)
        self._collections: dict[str, Any] = {}  # one collection per kind: no metadata filter on kind
        self._kinds: set[str] = set()  # kinds with vectors in Chroma
        self._users: set[str] = set()  # users with vectors in Chroma (or about to have)
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
        return f"{self.target.describe()}, collections {self._name}-*: {state}"

    @property
    def stale(self) -> bool:
        """True while the collection may differ from the store (searches then use sqlite-vec)."""
        return self._stale

    def chroma_count(self) -> int:
        """Vectors in the Chroma collections (asks Chroma)."""
        return sum(int(self._collection(kind).count()) for kind in self._chroma_kinds())

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

    # -- writes: recorded in the transaction; pushed after COMMIT (from the writer thread: queued, never waited for)
    def add(self, tx: Tx, items: Sequence[VectorItem]) -> None:
        """Record the vectors of ``items`` inside ``tx``; they are pushed to Chroma once it commits."""
        if not items:
            return
        rows, hashes = self.space.insert(tx, items)
        tx.after_commit(lambda: self._committed_upsert(rows, hashes))

    def delete(self, tx: Tx, object_ids: Collection[int]) -> None:
        """Remove the vectors of ``object_ids`` inside ``tx``; Chroma is told once it commits."""
        ids = self.space.remove(tx, object_ids)
        tx.after_commit(lambda: self._committed_delete(ids))

    def count(self) -> int:
        """Vectors recorded in the store (what Chroma holds once in step: :meth:`chroma_count`)."""
        return self.space.count()

    def note_question(self, query: npt.NDArray[np.float32]) -> None:
        """Chroma's index is not tuned on questions."""
        del query

    def similarities(self, query: npt.NDArray[np.float32], object_ids: Sequence[int]) -> dict[int, float]:
        """Similarity to each of ``object_ids``, read from the store (exact; Chroma has no lookup by id)."""
        return self.space.similarities(query, object_ids)

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
        """KNN in the kinds' Chroma collections when they are in step; sqlite-vec's exact scan otherwise.

        No metadata filter when it would keep everything: a ``where`` clause makes Chroma scan its metadata
        (~150 ms at 60k vectors, against ~1 ms for the index alone), so each kind has its own collection and the
        user filter is sent only when the vault holds more than one user's vectors.  Each collection is asked
        for ``OVERFETCH`` × ``k`` neighbours (at most OVERFETCH_CAP, at least ``k`` + SPARE) — a wider search
        finds more of the true top ``k`` — and the merged hits keep only rows the store still has, of the right
        user.
        """
        if not self.space.table or k <= 0:
            return []
        if self._stale:
            return self.space.search(query, k, kinds=kinds, user_id=user_id)
        wanted = sorted(self._kinds if kinds is None else set(kinds) & self._kinds)
        if user_id is not None and user_id not in self._users:
            return []  # nothing of this user has reached Chroma (or exists)
        where = {"user_id": user_id} if user_id is not None and len(self._users) > 1 else None
        vector = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        found: list[tuple[float, int, str, str]] = []
        try:
            for kind in wanted:
                answer = self._collection(kind).query(
                    query_embeddings=vector,
                    n_results=max(min(k * OVERFETCH, OVERFETCH_CAP), k + SPARE),
                    where=where,
                    include=["distances", "metadatas"],
                )
                for oid, dist, meta in zip(
                    answer["ids"][0], answer["distances"][0], answer["metadatas"][0], strict=True
                ):
                    found.append((float(dist), int(oid), kind, str((meta or {}).get("user_id", ""))))
        except Exception as exc:  # Chroma unreachable or failing: answer from the store, catch up later
            self._mark_stale(f"search failed: {exc}")
            return self.space.search(query, k, kinds=kinds, user_id=user_id)
        found.sort()
        live = self.space.live([oid for _d, oid, _k, _u in found])
        hits = [
            VectorHit(oid, kind, 1.0 - dist)
            for dist, oid, kind, user in found
            if oid in live and (user_id is None or user == user_id)
        ]
        return hits[:k]

    def chroma_ids(self) -> dict[int, tuple[str, str]]:
        """Every id in the collections, with its kind and content hash (asks Chroma, page by page)."""
        held: dict[int, tuple[str, str]] = {}
        for kind in self._chroma_kinds():
            collection = self._collection(kind)
            offset = 0
            while True:
                page = collection.get(include=["metadatas"], limit=BATCH, offset=offset)
                for oid, meta in zip(page["ids"], page["metadatas"], strict=True):
                    held[int(oid)] = (kind, str((meta or {}).get("hash", "")))
                    self._users.add(str((meta or {}).get("user_id", "")))
                if len(page["ids"]) < BATCH:
                    break
                offset += BATCH
        return held

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
                    for kind in self._kinds:
                        for chunk in chunked(op.ids, BATCH):
                            self._collection(kind).delete(ids=[str(i) for i in chunk])
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
        by_kind: dict[str, list[Row]] = {}
        for row in rows:
            by_kind.setdefault(row[1], []).append(row)
        # Users are known before their vectors arrive: a search that skips the user filter because one user
        # is known must never see another user's vector.
        self._users.update(r[2] for r in rows)
        for kind, part_rows in by_kind.items():
            collection = self._collection(kind)
            self._kinds.add(kind)
            for start in range(0, len(part_rows), BATCH):
                part = part_rows[start : start + BATCH]
                collection.upsert(
                    ids=[str(r[0]) for r in part],
                    embeddings=np.stack([np.asarray(r[3], dtype=np.float32) for r in part]),
                    metadatas=[{"user_id": r[2], "hash": hashes.get(r[0], "")} for r in part],
                )

    def _reconcile(self) -> None:
        """Make the collections hold exactly the store's vectors (by id, kind and content hash)."""
        if not self.space.table:
            self._stale = False
            return
        started = time.perf_counter()
        try:
            stored: dict[int, tuple[str, str]] = {}
            for oid, h, kind, user in self.space.hashes():
                stored[oid] = (kind, h)
                self._users.add(user)
            held = self.chroma_ids()
            extra = [(oid, kind) for oid, (kind, _h) in held.items() if stored.get(oid, ("", ""))[0] != kind]
            missing = [oid for oid, entry in stored.items() if held.get(oid) != entry]
            for kind in {kind for _oid, kind in extra}:
                for chunk in chunked([oid for oid, k in extra if k == kind], BATCH):
                    self._collection(kind).delete(ids=[str(i) for i in chunk])
            for chunk in chunked(missing, BATCH):
                self._push(self.space.read(chunk), {oid: stored[oid][1] for oid in chunk})
            self._kinds = {kind for kind, _h in stored.values()} | self._kinds
        except Exception as exc:
            self._mark_stale(f"catching up failed: {exc}")
            return
        self._stale = False
        self._failure = ""
        log.info(
            "Chroma collections %s-* in step with the vault: %s pushed, %s removed, %.1f s",
            self._name,
            len(missing),
            len(extra),
            time.perf_counter() - started,
        )

    def _rebuild(self) -> None:
        """Drop the collections (their files, and any bytes of forgotten vectors in them) and refill them."""
        for kind in self._chroma_kinds():
            try:
                self._client_now().delete_collection(f"{self._name}-{kind}")
            except Exception as exc:  # absent already is fine; anything else is reported by the refill
                log.debug("dropping %s-%s: %s", self._name, kind, exc)
        self._collections.clear()
        self._kinds = set()
        self._users = set()
        self._reconcile()

    def _client_now(self) -> Any:
        if self._client is None:
            self._client = self._connect(self.target)
        return self._client

    def _chroma_kinds(self) -> set[str]:
        """The kinds that have a collection in Chroma (including kinds the store no longer has)."""
        prefix = f"{self._name}-"
        names = [getattr(c, "name", c) for c in self._client_now().list_collections()]
        return {str(n)[len(prefix) :] for n in names if str(n).startswith(prefix)} | self._kinds

    def _collection(self, kind: str) -> Any:
        collection = self._collections.get(kind)
        if collection is None:
            collection = self._client_now().get_or_create_collection(
                f"{self._name}-{kind}", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
            )
            self._collections[kind] = collection
        return collection

    def _mark_stale(self, reason: str) -> None:
        if not self._stale:
            log.warning("Chroma is out of step with the vault (%s); searches use sqlite-vec meanwhile", reason)
        self._stale = True
        self._failure = reason
        self._collections.clear()  # reconnect next time (the server may have restarted with new collection ids)
        if self.target.url is not None:
            self._client = None

    def _vault_id(self) -> str:
        """The vault's random id (:meth:`Store.vault_id`): the collection's name survives moving the vault folder."""
        try:
            return self._store.vault_id()
        except VaultDamaged:  # read-only, and the id was never made
            return "readonly"
