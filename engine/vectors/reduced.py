"""A reduced-dimension first pass for large shelves of the vector mirror, with its recall measured.

An exact scan of 200k 384-d vectors is ~77 M multiply-adds per query — 15–30 ms on two cores, mostly memory
traffic.  Projecting every vector once onto its top principal components (e.g. 96 of 384 dimensions) makes the
first pass 4× cheaper; the best few thousand rows of that pass are then scored exactly, so the final similarities
and order are the true ones for every row the first pass keeps.

What the first pass may lose is measured, not assumed: after fitting, the index checks recall@k against the
exact answer on sample queries and picks the cheapest (dimensions, pool) that keeps recall ≥ 0.99 on every set it
is given; if none does, the shelf keeps exact scanning.  Two sets:

- data vectors and blends of two (:data:`RECALL_K` = 30), always available;
- **questions recall actually asked** (:data:`QUESTION_K` = 60, the depth recall's vector channel asks a shelf
  for), which the mirror remembers as they come (:meth:`engine.vectors.matrix.MatrixMirror.remember_question`).

Data samples alone were not enough: on the benchmark vaults their recall was 0.997–1.000 while real questions kept
only 0.853 (hashing) and 0.980 (ONNX MiniLM) of an event shelf's exact top 60 with 64 dimensions.  A question
shares with a long turn what lies outside the top principal components (a rare word, a name), and neither a data
vector nor a blend of two shows that.  Questions cannot be sampled from the vault (it stores answers, not the
questions to come), so until enough have been asked the caller offers only the larger choices
(:data:`CAUTIOUS_CHOICES`), and lets real questions earn the cheaper ones.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.vectors.ops import matvec

F32 = npt.NDArray[np.float32]

#: Shelves smaller than this are scanned exactly (fast enough, nothing to gain).
MIN_VECTORS = 40_000
TARGET_RECALL = 0.99
#: k of the check on data vectors and blends.
RECALL_K = 30
#: k of the check on questions: recall's vector channel asks each shelf for twice its depth, and depth is ≥ 30.
QUESTION_K = 60
#: (fraction of the dimensions kept, first-pass pool); 384-d vectors try 64, 96, 128 and 192 dimensions.
CHOICES = ((6, 3000), (4, 3000), (3, 3000), (2, 4000))
#: What a dense shelf may use before real questions were checked (128 and 192 of 384 dimensions): the choices that
#: kept ≥ 0.99 of real questions' top 60 in every measurement so far, at a third of the exact scan's cost or less.
CAUTIOUS_CHOICES = CHOICES[2:]
#: Every SAMPLE_STEP-th first-pass score estimates the pool's threshold (see :func:`top_by_sampled_threshold`).
SAMPLE_STEP = 16
#: Questions are scored exactly this many at a time while measuring (bounds the temporary similarity matrix).
_QUESTION_CHUNK = 32


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
    """How the first pass was fitted and what it measured.

    ``recall`` is recall@30 on data vectors and blends; ``question_recall`` recall@60 on the ``questions`` remembered
    questions it was last checked on (None when it was fitted before any was asked).
    """

    vectors: int
    dims: int
    pool: int
    recall: float
    fit_s: float
    question_recall: float | None = None
    questions: int = 0


def exact_thresholds(vecs: F32, queries: F32, k: int) -> F32:
    """Each query's exact ``k``-th best similarity over ``vecs``, less a hair (a tie with it counts as found).

    A few queries are scored at once (one matrix product each): this runs off the request path, where a product
    over all of them at once would hold hundreds of MB.
    """
    n = vecs.shape[0]
    k = max(1, min(k, n))
    out = np.empty(queries.shape[0], dtype=np.float32)
    for start in range(0, queries.shape[0], _QUESTION_CHUNK):
        sims = vecs @ queries[start : start + _QUESTION_CHUNK].T
        out[start : start + sims.shape[1]] = np.partition(sims, n - k, axis=0)[n - k] - 1e-6
    return out


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

    def recall(self, vecs: F32, reduced: F32, queries: F32, thresholds: F32, k: int) -> float:
        """The share of each query's exact top ``k`` (given by ``thresholds``) that first pass and rescoring find."""
        if queries.shape[0] == 0:
            return 1.0
        hits = 0
        take = max(1, min(k, vecs.shape[0]))
        for q, threshold in zip(queries, thresholds, strict=True):
            rows = self.candidates(reduced, q, take)
            sims = matvec(vecs[rows], q)
            best = sims[np.argpartition(-sims, take - 1)[:take]]
            hits += int((best >= threshold).sum())
        return hits / float(take * queries.shape[0])

    def question_recall(self, vecs: F32, reduced: F32, questions: F32) -> float:
        """Recall@:data:`QUESTION_K` of this first pass on ``questions`` over ``vecs`` (projected as ``reduced``)."""
        return self.recall(vecs, reduced, questions, exact_thresholds(vecs, questions, QUESTION_K), QUESTION_K)

    @classmethod
    def fit(
        cls,
        vecs: F32,
        *,
        questions: F32 | None = None,
        choices: Sequence[tuple[int, int]] = CHOICES,
        seed: int = 7,
    ) -> Reducer | None:
        """Fit on ``vecs`` (unit rows): the cheapest of ``choices`` whose recall reaches the target on the data
        samples and on ``questions`` (when given); None when none does."""
        t0 = time.perf_counter()
        rng = np.random.default_rng(seed)
        n = vecs.shape[0]
        sample = vecs[rng.choice(n, size=min(n, 20_000), replace=False)]
        # principal directions from the (dim × dim) covariance: an eigendecomposition of it costs a fraction of an
        # SVD of the sample itself (which also computes the sample's own 20,000 × dim factor, unused here)
        centred = (sample - sample.mean(axis=0)).astype(np.float64)
        _values, vectors = np.linalg.eigh(centred.T @ centred)
        vt = vectors[:, ::-1].T  # rows: directions by decreasing variance
        picks = rng.choice(n, size=96, replace=False)
        blends = vecs[picks[:48]] + vecs[picks[48:]]
        queries = np.vstack(
            [vecs[rng.choice(n, size=48, replace=False)], blends / np.linalg.norm(blends, axis=1, keepdims=True)]
        ).astype(np.float32)
        exact = exact_thresholds(vecs, queries, RECALL_K)
        asked = np.ascontiguousarray(questions, dtype=np.float32) if questions is not None and len(questions) else None
        asked_exact = exact_thresholds(vecs, asked, QUESTION_K) if asked is not None else None
        for divisor, pool in choices:
            dims = vecs.shape[1] // divisor
            if dims < 8:
                continue
            projection = np.ascontiguousarray(vt[:dims].T, dtype=np.float32)
            reducer = cls(projection, pool, ReducedStats(n, dims, pool, 0.0, 0.0))
            reduced = reducer.project(vecs)
            recall = reducer.recall(vecs, reduced, queries, exact, RECALL_K)
            if recall < TARGET_RECALL:
                continue
            on_questions = None
            if asked is not None and asked_exact is not None:
                on_questions = reducer.recall(vecs, reduced, asked, asked_exact, QUESTION_K)
                if on_questions < TARGET_RECALL:
                    continue
            reducer.stats = ReducedStats(
                n,
                dims,
                pool,
                round(recall, 4),
                round(time.perf_counter() - t0, 2),
                None if on_questions is None else round(on_questions, 4),
                0 if asked is None else asked.shape[0],
            )
            return reducer
        return None
