"""Small numeric kernels shared by the vector mirror, its first pass and recall."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]


def matvec(matrix: F32, vector: F32) -> F32:
    """``matrix @ vector`` computed on the calling thread.

    numpy's ``@`` hands a matrix-vector product to OpenBLAS, which splits anything beyond a few thousand elements
    across every core and lets its threads spin while they wait.  On a two-core machine where the recall channels,
    onnxruntime and SQLite already run side by side, that turned a 1 ms product into 8–12 ms at the 95th percentile
    (the split waits for its slowest half).  ``einsum`` runs single-threaded SIMD loops at memory bandwidth and
    releases the GIL: as fast as one BLAS thread for these shapes, and never slower under load.
    """
    out: F32 = np.einsum("ij,j->i", matrix, vector)
    return out
