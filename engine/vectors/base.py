"""The vector index contract: typed items in, typed hits out, writes inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from engine.store.writer import Tx


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

    ``add`` and ``delete`` take the writer's :class:`Tx` so vectors commit or roll back with their base rows.
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

    def count(self) -> int:
        """How many vectors are stored."""
        ...
