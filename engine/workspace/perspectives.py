"""Perspectives (DESIGN §3a): named instruction prefixes for the embedder, so one workspace item can be found by what
it says about technique, people, time or a project — not only by its general gist.

An item (an observation or an active understanding) is embedded once per perspective, its text behind the
perspective's instruction, and a search embeds the question the same way under every perspective and keeps each
item's best match, reporting which perspective matched.  That only means something when the embedder reads
instructions (instruction-tuned models such as nomic-embed, e5, bge, gte, mxbai, arctic-embed, Qwen3 and Gemma
embeddings).  An embedder that ignores them — the built-in hashing embedder, MiniLM — would give five copies of one
vector, so the perspectives collapse: each item gets one vector (stored under :data:`COLLAPSED`) and a search says so.

Vectors are stored per (item, perspective) with the embedder's model id in ``workspace_vectors``; a change of
embedder re-embeds in the background (the old space is dropped), and a search's matrix lives in memory per user,
rebuilt only when the per-user version that every vector write bumps has moved.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.ai.embedders import Embedder
from engine.errors import NotFound, ValidationError
from engine.store import Tx

#: The background job that embeds what lacks a vector under the current embedder (one queued per user).
PERSPECTIVES_JOB = "workspace.vectors"
#: The key of the one vector an item gets when the perspectives collapse.
COLLAPSED = ""
#: Characters of an item's text that are embedded (an understanding's title, summary and the start of its text).
EMBED_CHARS = 2_000
#: Items embedded per write transaction by the job, and at most per search before it answers.
BATCH = 64
SEARCH_CATCH_UP = 256
MAX_CUSTOM = 16
MAX_INSTRUCTION_CHARS = 300
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")

#: Model-name fragments of embedders trained to follow instructions or task prefixes.
INSTRUCTION_TUNED = (
    "nomic-embed",
    "e5",
    "bge",
    "gte",
    "mxbai-embed",
    "arctic-embed",
    "instructor",
    "qwen3-embedding",
    "embeddinggemma",
    "jina-embeddings-v3",
)


@dataclass(frozen=True, slots=True)
class Perspective:
    """A named instruction prefix; ``builtin`` for the five every workspace has."""

    name: str
    instruction: str
    builtin: bool = True


DEFAULTS: tuple[Perspective, ...] = (
    Perspective("general", "Represent this note about a person's life and work for finding it later:"),
    Perspective("technical", "Represent the technical content of this note (tools, code, systems, methods, skills):"),
    Perspective("relational", "Represent the people in this note and how they relate to each other:"),
    Perspective("temporal", "Represent when the things in this note happened, changed or are planned:"),
    Perspective("project", "Represent the projects, goals, plans and progress in this note:"),
)
_DEFAULT_NAMES = frozenset(p.name for p in DEFAULTS)


def follows_instructions(model_id: str, setting: str = "auto") -> bool:
    """Whether items should be embedded once per perspective: ``setting`` on/off decides; auto asks whether the
    embedder's model is an instruction-tuned family (the built-in hashing and MiniLM embedders are not)."""
    if setting == "on":
        return True
    if setting == "off":
        return False
    name = model_id.split(":", 1)[-1].lower()
    return any(re.search(rf"(^|[^a-z]){re.escape(f)}", name) for f in INSTRUCTION_TUNED)


def perspectives(q: Any, user_id: str) -> list[Perspective]:
    """The five defaults, then the user's own in the order they were added."""
    rows = q.execute(
        "SELECT name, instruction FROM perspectives WHERE user_id = ? ORDER BY created_at, name", (user_id,)
    ).fetchall()
    return [*DEFAULTS, *(Perspective(str(r[0]), str(r[1]), builtin=False) for r in rows)]


def add_perspective(tx: Tx, user_id: str, name: str, instruction: str) -> Perspective:
    """Add (or re-word) one of the user's own perspectives; the background job embeds the items under it."""
    name = str(name).strip().lower()
    if not _NAME.match(name):
        raise ValidationError(
            "name",
            f"a perspective's name is 1–40 lowercase letters, digits, - or _, starting with a letter; got {name!r}.",
            fix="Name it like 'health' or 'side-projects'.",
        )
    if name in _DEFAULT_NAMES:
        raise ValidationError("name", f"'{name}' is one of the built-in perspectives.", fix="Pick another name.")
    instruction = " ".join(str(instruction).split())
    if not instruction or len(instruction) > MAX_INSTRUCTION_CHARS:
        raise ValidationError(
            "instruction",
            f"a perspective's instruction is 1–{MAX_INSTRUCTION_CHARS} characters.",
            fix="Say what to represent, e.g. 'Represent the health matters in this note:'.",
        )
    existing = tx.execute(
        "SELECT instruction FROM perspectives WHERE user_id = ? AND name = ?", (user_id, name)
    ).first()
    if existing is None:
        (count,) = tx.execute("SELECT count(*) FROM perspectives WHERE user_id = ?", (user_id,)).first()
        if int(count) >= MAX_CUSTOM:
            raise ValidationError(
                "name", f"a workspace has at most {MAX_CUSTOM} perspectives of its own.", fix="Remove one first."
            )
        tx.execute(
            "INSERT INTO perspectives(user_id, name, instruction, created_at) VALUES (?, ?, ?, ?)",
            (user_id, name, instruction, time.time()),
        )
    elif str(existing[0]) != instruction:
        tx.execute(
            "UPDATE perspectives SET instruction = ? WHERE user_id = ? AND name = ?", (instruction, user_id, name)
        )
        # the old wording's vectors no longer say what the perspective asks
        tx.execute("DELETE FROM workspace_vectors WHERE user_id = ? AND perspective = ?", (user_id, name))
    return Perspective(name, instruction, builtin=False)


def remove_perspective(tx: Tx, user_id: str, name: str) -> None:
    """Remove one of the user's own perspectives and its vectors (the built-in five stay)."""
    name = str(name).strip().lower()
    if name in _DEFAULT_NAMES:
        raise ValidationError("name", f"'{name}' is a built-in perspective and cannot be removed.")
    if tx.execute("DELETE FROM perspectives WHERE user_id = ? AND name = ?", (user_id, name)).rowcount == 0:
        raise NotFound("perspective", name)
    tx.execute("DELETE FROM workspace_vectors WHERE user_id = ? AND perspective = ?", (user_id, name))


def keys(found: Sequence[Perspective], instructed: bool) -> list[str]:
    """The vector keys in use: one per perspective, or the one collapsed key."""
    return [p.name for p in found] if instructed else [COLLAPSED]


def prefixed(instruction: str, text: str) -> str:
    """``text`` behind a perspective's instruction (nothing in front when collapsed)."""
    return f"{instruction} {text}" if instruction else text


# -- what lacks a vector -------------------------------------------------------------------------------------------
_ITEMS = (
    "SELECT o.id, o.content FROM observations o WHERE o.user_id = :user AND NOT EXISTS "
    "(SELECT 1 FROM workspace_vectors v WHERE v.object_id = o.id AND v.perspective = :key AND v.model_id = :model) "
    "UNION ALL "
    "SELECT u.id, u.title || '. ' || u.summary || '. ' || u.content FROM understandings u "
    "WHERE u.user_id = :user AND u.status = 'active' AND u.superseded_by IS NULL AND NOT EXISTS "
    "(SELECT 1 FROM workspace_vectors v WHERE v.object_id = u.id AND v.perspective = :key AND v.model_id = :model) "
    "LIMIT :limit"
)


def complete(q: Any, user_id: str, model_id: str, key: str) -> bool:
    """Whether every item seems to have a vector under ``key``: as many vectors as items (two index counts, where
    :func:`missing` reads every item).  Vectors of understandings superseded since the last prune can hide a missing
    one until the job prunes them; a search finds such an item by its words meanwhile."""
    vectors = q.execute(
        "SELECT COUNT(*) FROM workspace_vectors WHERE user_id = ? AND model_id = ? AND perspective = ?",
        (user_id, model_id, key),
    ).scalar()
    items = q.execute(
        "SELECT (SELECT COUNT(*) FROM observations WHERE user_id = ?1) + (SELECT COUNT(*) FROM understandings "
        "WHERE user_id = ?1 AND status = 'active' AND superseded_by IS NULL)",
        (user_id,),
    ).scalar()
    return int(vectors or 0) >= int(items or 0)


def missing(q: Any, user_id: str, model_id: str, key: str, limit: int) -> list[tuple[int, str]]:
    """Items without a vector under ``key`` in ``model_id``'s space (at most ``limit``)."""
    rows = q.execute(_ITEMS, {"user": user_id, "key": key, "model": model_id, "limit": limit}).fetchall()
    return [(int(r[0]), str(r[1])[:EMBED_CHARS]) for r in rows]


def prune(tx: Tx, user_id: str, model_id: str, live_keys: Sequence[str]) -> int:
    """Drop vectors of another embedder, of keys no longer in use, and of understandings no longer active."""
    marks = ",".join("?" for _ in live_keys)
    removed = tx.execute(
        f"DELETE FROM workspace_vectors WHERE user_id = ? AND (model_id != ? OR perspective NOT IN ({marks}))",
        (user_id, model_id, *live_keys),
    ).rowcount
    removed += tx.execute(
        "DELETE FROM workspace_vectors WHERE user_id = ? AND object_id IN (SELECT id FROM understandings "
        "WHERE user_id = ? AND (superseded_by IS NOT NULL OR status != 'active'))",
        (user_id, user_id),
    ).rowcount
    return int(removed)


def store_vectors(
    tx: Tx, user_id: str, model_id: str, key: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]
) -> int:
    """Write one batch of vectors, skipping items deleted since they were read."""
    alive = {
        int(r[0])
        for r in tx.execute(f"SELECT id FROM objects WHERE id IN ({','.join('?' for _ in ids)})", tuple(ids)).fetchall()
    }
    rows = [
        (object_id, key, user_id, model_id, np.asarray(vector, dtype=np.float32).tobytes())
        for object_id, vector in zip(ids, vectors, strict=True)
        if object_id in alive
    ]
    tx.executemany(
        "INSERT OR REPLACE INTO workspace_vectors(object_id, perspective, user_id, model_id, vector) "
        "VALUES (?, ?, ?, ?, ?)",
        rows,
    )
    return len(rows)


def embed_missing(
    store: Any,
    embedder: Embedder,
    user_id: str,
    found: Sequence[Perspective],
    instructed: bool,
    *,
    budget: int | None = None,
) -> int:
    """Embed what lacks a vector under each key in use, ``BATCH`` items per short write; at most ``budget`` items
    in all (None: everything, after pruning what is no longer needed — the job's way; a search only tops up, and
    reads nothing more than two counts per key when nothing is missing).  Returns how many vectors were written."""
    live = keys(found, instructed)
    if budget is None:
        store.write(lambda tx: prune(tx, user_id, embedder.model_id, live))
    instructions = {p.name: p.instruction for p in found}
    written = 0
    for key in live:
        while budget is None or written < budget:
            size = BATCH if budget is None else min(BATCH, budget - written)
            with store.snapshot() as snap:
                if budget is not None and complete(snap, user_id, embedder.model_id, key):
                    break
                batch = missing(snap, user_id, embedder.model_id, key, size)
            if not batch:
                break
            matrix = embedder.embed([prefixed(instructions.get(key, ""), text) for _, text in batch])
            ids = [object_id for object_id, _ in batch]
            written += store.write(
                lambda tx, ids=ids, matrix=matrix, key=key: store_vectors(
                    tx, user_id, embedder.model_id, key, ids, matrix
                )
            )
            if len(batch) < size:
                break
    return written


# -- the in-memory matrices ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Matrices:
    version: int
    model_id: str
    ids: dict[str, npt.NDArray[np.int64]]
    vectors: dict[str, npt.NDArray[np.float32]]


class PerspectiveIndex:
    """Each user's vectors as one matrix per key, rebuilt when the user's vector version moves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, _Matrices] = {}

    def matrices(self, q: Any, user_id: str, model_id: str, dim: int) -> _Matrices:
        """The user's vectors of ``model_id`` as one matrix per key, cached until the user's vector version moves;
        vectors of another dimension than ``dim`` are left out."""
        row = q.execute("SELECT version FROM workspace_vector_versions WHERE user_id = ?", (user_id,)).first()
        version = int(row[0]) if row else 0
        with self._lock:
            cached = self._cache.get(user_id)
        if cached is not None and cached.version == version and cached.model_id == model_id:
            return cached
        ids: dict[str, list[int]] = {}
        blobs: dict[str, list[bytes]] = {}
        for object_id, key, blob in q.execute(
            "SELECT object_id, perspective, vector FROM workspace_vectors WHERE user_id = ? AND model_id = ?",
            (user_id, model_id),
        ).fetchall():
            if len(blob) != dim * 4:
                continue
            ids.setdefault(str(key), []).append(int(object_id))
            blobs.setdefault(str(key), []).append(bytes(blob))
        built = _Matrices(
            version,
            model_id,
            {k: np.asarray(v, dtype=np.int64) for k, v in ids.items()},
            {k: np.frombuffer(b"".join(v), dtype=np.float32).reshape(len(v), dim) for k, v in blobs.items()},
        )
        with self._lock:
            self._cache[user_id] = built
        return built

    def best(
        self,
        q: Any,
        user_id: str,
        embedder: Embedder,
        queries: dict[str, npt.NDArray[np.float32]],
        limit: int,
    ) -> dict[int, tuple[float, str]]:
        """The ``limit`` items most similar to the question, each with its best similarity and the key it was
        found under (ties go to the earlier perspective).

        Each perspective's similarities are centred on the first one's mean before they are compared: the same
        instruction in front of the question and of every item raises all of that perspective's similarities
        alike, and without the centring the perspective with the most alike wording would win every item.
        """
        found = self.matrices(q, user_id, embedder.model_id, embedder.dim)
        best: dict[int, tuple[float, str]] = {}
        reference: float | None = None
        for key, vector in queries.items():
            matrix = found.vectors.get(key)
            if matrix is None or not len(matrix):
                continue
            sims = matrix @ vector
            centre = float(sims.mean())
            reference = centre if reference is None else reference
            sims = sims - centre + reference
            top = np.argsort(-sims)[: max(1, limit)]
            for i in top:
                object_id, sim = int(found.ids[key][i]), float(sims[i])
                if object_id not in best or sim > best[object_id][0]:
                    best[object_id] = (sim, key)
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])[:limit]
        return dict(ranked)


def query_vectors(
    embedder: Embedder, question: str, found: Sequence[Perspective], instructed: bool
) -> dict[str, npt.NDArray[np.float32]]:
    """The question embedded once per key in use (one call to the embedder)."""
    live = keys(found, instructed)
    instructions = {p.name: p.instruction for p in found}
    matrix = embedder.embed([prefixed(instructions.get(k, ""), question) for k in live])
    return {k: np.asarray(matrix[i], dtype=np.float32) for i, k in enumerate(live)}
