"""The vector index contract: typed items in, typed hits out, writes inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from engine.store.writer import Tx
from engine.vectors.reduced import ReducedStats


@dataclass(frozen=True, slots=True)
class VectorItem:
    """One vector to store, keyed by the global id of the object it embeds."""

    object_id: int
    kind: str
    user_id: str
    vector: npt.NDArray[np.float32]
    content_hash: str


@dataclass(frozen=True, slots=True)
class VectorHit:
    """One nearest neighbour: the object id, its kind, and cosine similarity (1 = same direction)."""

    object_id: int
    kind: str
    similarity: float


@runtime_checkable
class VectorIndex(Protocol):
    """Stores unit vectors of one embedding model (``model_id``, ``dim``) and finds nearest neighbours.

    What every caller types against; the backends (:class:`~engine.vectors.sqlite_vec.SqliteVecIndex`,
    :class:`~engine.vectors.chroma.ChromaIndex`, and :class:`~engine.vectors.migration.MigratingIndex` while the
    embedder changes) implement it side by side, none a kind of another.  ``add`` and ``delete`` take the writer's
    :class:`Tx` so vectors commit or roll back with their base rows; what answers searches learns a write once it
    has committed.
    """

    model_id: str
    dim: int
    #: The space's id in ``vector_spaces`` (what the backlog of vectors still to make is keyed by).
    space_id: int

    def add(self, tx: Tx, items: Sequence[VectorItem]) -> None:
        """Insert or replace the vectors of ``items``."""
        ...

    def delete(self, tx: Tx, object_ids: Collection[int]) -> None:
        """Remove the vectors of ``object_ids`` (missing ids are ignored)."""
        ...

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        kinds: Collection[str] | None = None,
        user_id: str | None = None,
    ) -> list[VectorHit]:
        """The ``k`` most similar stored vectors, optionally only of ``kinds`` and ``user_id``."""
        ...

    def similarities(self, query: npt.NDArray[np.float32], object_ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each stored vector among ``object_ids`` (those without one left out)."""
        ...

    def note_question(self, query: npt.NDArray[np.float32]) -> None:
        """A question's vector about to be searched with (a search side may tune itself on real questions)."""
        ...

    def count(self) -> int:
        """How many vectors are stored."""
        ...

    # -- lifecycle, driven by the vault ------------------------------------------------------------------------------
    def load_mirror(self) -> int:
        """Make the search side ready (load what it holds in memory, or start keeping it in step); returns the
        number of vectors stored."""
        ...

    def maintain(self) -> list[ReducedStats]:
        """Periodic upkeep off the request path; returns the first passes fitted, if the search side has them."""
        ...

    def after_forget(self) -> None:
        """A forget deleted rows by cascade, past :meth:`delete`: rebuild the search side from the store."""
        ...

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until searches see every committed write; False if ``timeout`` passed first."""
        ...

    def close(self) -> None:
        """Release what the index holds besides the store."""
        ...

    @property
    def backend(self) -> str:
        """What answers searches right now, in words (``cairn doctor``, health)."""
        ...
