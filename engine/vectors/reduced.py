"""A reduced-dimension first pass for large shelves of the vector mirror, with its recall measured.

An exact scan of 200k 384-d vectors is ~77 M multiply-adds per query — 15–30 ms on two cores, mostly memory
traffic.  Projecting every vector once onto its top principal components (e.g. 96 of 384 dimensions) makes the
first pass 4× cheaper; the best few thousand rows of that pass are then scored exactly, so the final similarities
and order are the true ones for every row the first pass keeps.

What the first pass may lose is measured, not assumed: after fitting, the index checks recall@k against the
exact answer on sample queries (data vectors and blends of two data vectors, which sit off the data manifold the
way questions sit away from statements) and picks the cheapest (dimensions, pool) that keeps recall ≥ 0.99.  If
none does, the shelf keeps exact scanning.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.vectors.ops import matvec

F32 = npt.NDArray[np.float32]

#: Shelves smaller than this are scanned exactly (fast enough, nothing to gain).
MIN_VECTORS = 40_000
TARGET_RECALL = 0.99
RECALL_K = 30
#: (fraction of the dimensions kept, first-pass pool); 384-d vectors try 64, 96, 128 and 192 dimensions.
CHOICES = ((6, 3000), (4, 3000), (3, 3000), (2, 4000))
#: Every SAMPLE_STEP-th first-pass score estimates the pool's threshold (see :func:`top_by_sampled_threshold`).
SAMPLE_STEP = 16


def top_by_sampled_threshold(coarse: npt.NDArray[np.floating[Any]], pool: int) -> npt.NDArray[np.int64] | None:
    """The rows of the ``pool`` highest scores, found without partitioning all of ``coarse``; None to fall back.

    A full ``argpartition`` of 100k scores costs ~0.8 ms per shelf and query, more than the first pass itself.  A
    strided sample (every 16th score) gives a threshold a little below the pool's lowest score; one comparison keeps
    the rows above it (≈1.3 × ``pool``), and a partition of those few thousand picks the exact top ``pool`` — the
    same rows a full partition picks.  When the estimate overshoots (fewer than ``pool`` rows pass) the caller
    partitions everything, so the answer never depends on the sample.
    """
    sample = coarse[::SAMPLE_STEP]
    keep = pool * 5 // (4 * SAMPLE_STEP) + 8
    if keep >= sample.size:
        return None
    threshold = np.partition(sample, sample.size - keep)[sample.size - keep]
    rows = np.flatnonzero(coarse >= threshold)
    if rows.size < pool:
        return None
    if rows.size > pool:
        rows = rows[np.argpartition(coarse[rows], rows.size - pool)[rows.size - pool :]]
    return rows.astype(np.int64)


@dataclass(frozen=True, slots=True)
class ReducedStats:
    """How the first pass was fitted and what it measured."""

    vectors: int
    dims: int
    pool: int
    recall: float
    fit_s: float


class Reducer:
    """A projection onto the top principal directions, and the rows projected with it."""

    def __init__(self, projection: F32, pool: int, stats: ReducedStats) -> None:
        self.projection = projection  # (dim, dims)
        self.pool = pool
        self.stats = stats

    def project(self, vecs: F32) -> F32:
        """Rows in the reduced space."""
        return np.ascontiguousarray(vecs @ self.projection, dtype=np.float32)

    def project_one(self, vector: F32) -> F32:
        """One vector in the reduced space (the query, or a row written after the fit)."""
        out: F32 = np.einsum("ij,i->j", self.projection, vector)
        return out

    def candidates(self, reduced: F32, query: F32, k: int) -> npt.NDArray[np.int64]:
        """Row numbers of the best first-pass scores (a pool well beyond ``k``).

        The products run on the calling thread (:func:`engine.vectors.ops.matvec` says why); the pool is taken
        from the top of the unnegated scores, which spares a copy of them.
        """
        coarse = matvec(reduced, self.project_one(query))
        n = reduced.shape[0]
        pool = min(n, max(self.pool, k * 30))
        if pool >= n:
            return np.arange(n, dtype=np.int64)
        if n >= SAMPLE_STEP * pool // 2:
            rows = top_by_sampled_threshold(coarse, pool)
            if rows is not None:
                return rows
        return np.argpartition(coarse, n - pool)[n - pool :].astype(np.int64)

    @classmethod
    def fit(cls, vecs: F32, *, seed: int = 7) -> Reducer | None:
        """Fit on ``vecs`` (unit rows); None when no choice reaches the recall target."""
        t0 = time.perf_counter()
        rng = np.random.default_rng(seed)
        n = vecs.shape[0]
        sample = vecs[rng.choice(n, size=min(n, 20_000), replace=False)]
        _u, _s, vt = np.linalg.svd(sample - sample.mean(axis=0), full_matrices=False)
        picks = rng.choice(n, size=96, replace=False)
        blends = vecs[picks[:48]] + vecs[picks[48:]]
        queries = np.vstack(
            [vecs[rng.choice(n, size=48, replace=False)], blends / np.linalg.norm(blends, axis=1, keepdims=True)]
        ).astype(np.float32)
        exact = [float(np.partition(-(vecs @ q), RECALL_K - 1)[RECALL_K - 1]) * -1.0 - 1e-6 for q in queries]
        for divisor, pool in CHOICES:
            dims = vecs.shape[1] // divisor
            if dims < 8:
                continue
            projection = np.ascontiguousarray(vt[:dims].T, dtype=np.float32)
            reducer = cls(projection, pool, ReducedStats(n, dims, pool, 0.0, 0.0))
            reduced = reducer.project(vecs)
            hits = 0
            for q, threshold in zip(queries, exact, strict=True):
                rows = reducer.candidates(reduced, q, RECALL_K)
                sims = matvec(vecs[rows], q)
                best = sims[np.argpartition(-sims, RECALL_K - 1)[:RECALL_K]]
                hits += int((best >= threshold).sum())
            recall = hits / (RECALL_K * len(queries))
            if recall >= TARGET_RECALL:
                reducer.stats = ReducedStats(n, dims, pool, round(recall, 4), round(time.perf_counter() - t0, 2))
                return reducer
        return None
