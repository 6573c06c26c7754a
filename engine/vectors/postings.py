"""Exact search over sparse vectors through per-dimension postings.

The built-in hashing embedder (the default on a machine without a model) gives vectors with ~10 % of their
dimensions set, and questions with ~25 of 384.  A question's similarity to every row is then the sum, over the
question's few dimensions, of that dimension's column — so reading those columns' nonzero entries is the whole
work.  Kept as postings (for each dimension, the rows that have it, ascending, and their values), a 100k-row shelf
answers a question in ~1.2 ms by reading ~2 MB, where the reduced first pass (:mod:`engine.vectors.reduced`) reads
~30 MB for ~2.4 ms and, measured on the benchmark's own questions, keeps only ~83 % of the event shelf's true top 10:
hashing vectors spread their energy over every principal direction, so no small projection holds it.  Postings are
exact — the rows they rank first are the true nearest — so the reduced pass remains only for dense vectors (ONNX).

Postings describe the rows that existed when they were built (``upto``); the mirror scores rows added since then
directly and rebuilds when that tail grows (:meth:`MatrixMirror.search` asks for it off the request path).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

#: Shelves smaller than this are scanned directly (a few ms at most; postings would save nothing worth their upkeep).
MIN_ROWS = 5_000
#: Postings are kept only when at most this fraction of a shelf's entries is nonzero (dense vectors gain nothing).
MAX_DENSITY = 0.25
#: Postings are rebuilt once more rows than this (or a sixteenth of the shelf) were added or rewritten since.
TAIL_ROWS = 2_048
#: Rows read at a time while building (bounds the temporary arrays).
CHUNK_ROWS = 4_096
#: A question takes the postings when reading its dimensions' entries costs less than the scan it replaces:
#: one entry costs about as much as this many multiply-adds of a row-major scan (measured: 100k rows, 24 of 384
#: dimensions — 240k entries — 1.1 ms, against 2.4 ms for the 64-d first pass and its exact rescoring).
ENTRY_COST = 12


def density(vecs: F32, sample: int = 2_000) -> float:
    """The fraction of nonzero entries among (up to) ``sample`` evenly spaced rows."""
    if vecs.shape[0] == 0:
        return 1.0
    step = max(1, vecs.shape[0] // sample)
    rows = vecs[::step]
    return float(np.count_nonzero(rows)) / float(rows.size)


@dataclass(frozen=True, slots=True)
class Postings:
    """For each dimension, the rows below ``upto`` where it is nonzero (ascending) and their values."""

    rows: npt.NDArray[np.int32]
    values: F32
    starts: npt.NDArray[np.int64]  # dimension j's entries are [starts[j], starts[j + 1])
    upto: int
    build_s: float

    @classmethod
    def build(cls, vecs: F32, upto: int, *, start: int = 0) -> Postings:
        """Postings of rows ``start`` to ``upto`` of ``vecs`` (row numbers as in ``vecs``).

        Rows may be rewritten while this reads them (the mirror does not stop writing): such rows are marked stale
        by the mirror and scored directly, so what this records for them does not matter.  Rows are read a few
        thousand at a time, so no single step holds the interpreter for more than a few milliseconds.
        """
        t0 = time.perf_counter()
        dim = vecs.shape[1]
        cols: list[npt.NDArray[np.int16]] = []
        rows: list[npt.NDArray[np.int32]] = []
        values: list[F32] = []
        for first in range(start, upto, CHUNK_ROWS):
            block = vecs[first : min(upto, first + CHUNK_ROWS)]
            r, c = np.nonzero(block)  # row-major: rows ascending
            values.append(block[r, c])
            rows.append((r + first).astype(np.int32))
            cols.append(c.astype(np.int16))
        if rows:
            all_cols = np.concatenate(cols)
            # a stable sort by dimension keeps each dimension's rows ascending (radix sort on 16-bit keys)
            order = np.argsort(all_cols, kind="stable")
            row_array = np.concatenate(rows)[order]
            value_array = np.concatenate(values)[order]
            counts = np.bincount(all_cols, minlength=dim)
        else:
            row_array = np.zeros(0, dtype=np.int32)
            value_array = np.zeros(0, dtype=np.float32)
            counts = np.zeros(dim, dtype=np.int64)
        starts = np.zeros(dim + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        return cls(row_array, value_array, starts, upto, round(time.perf_counter() - t0, 3))

    def extended(self, vecs: F32, upto: int) -> Postings:
        """These postings plus rows ``self.upto`` to ``upto`` of ``vecs``: the rows appended since they were built.

        Reads only the new rows, then lays each dimension's old entries and new ones (higher row numbers, so the
        order stays ascending) side by side: ~15× cheaper than building everything again after 20k appends to 100k.
        """
        t0 = time.perf_counter()
        tail = Postings.build(vecs, upto, start=self.upto)
        old_counts, tail_counts = np.diff(self.starts), np.diff(tail.starts)
        starts = np.zeros_like(self.starts)
        np.cumsum(old_counts + tail_counts, out=starts[1:])
        rows = np.empty(int(starts[-1]), dtype=np.int32)
        values = np.empty(int(starts[-1]), dtype=np.float32)
        new_at, old_at, tail_at = starts.tolist(), self.starts.tolist(), tail.starts.tolist()
        for j in range(len(new_at) - 1):
            a, b = new_at[j], new_at[j + 1]
            middle = a + old_at[j + 1] - old_at[j]
            rows[a:middle], values[a:middle] = (
                self.rows[old_at[j] : old_at[j + 1]],
                self.values[old_at[j] : old_at[j + 1]],
            )
            rows[middle:b], values[middle:b] = (
                tail.rows[tail_at[j] : tail_at[j + 1]],
                tail.values[tail_at[j] : tail_at[j + 1]],
            )
        return Postings(rows, values, starts, upto, round(time.perf_counter() - t0, 3))

    @property
    def nbytes(self) -> int:
        """Memory held."""
        return int(self.rows.nbytes + self.values.nbytes + self.starts.nbytes)

    def cost(self, dims: npt.NDArray[np.intp]) -> int:
        """How many entries a question set on ``dims`` reads."""
        return int((self.starts[dims + 1] - self.starts[dims]).sum())

    def scores(self, query: F32, dims: npt.NDArray[np.intp]) -> F64:
        """``vecs[:upto] @ query`` for a query whose nonzero dimensions are ``dims``, from the postings alone."""
        if dims.size == 0:
            return np.zeros(self.upto, dtype=np.float64)
        lo, hi = self.starts[dims], self.starts[dims + 1]
        rows = np.concatenate([self.rows[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
        values = np.concatenate([self.values[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
        weights = values * np.repeat(query[dims], hi - lo)
        out: F64 = np.bincount(rows, weights=weights, minlength=self.upto).astype(np.float64, copy=False)
        return out
