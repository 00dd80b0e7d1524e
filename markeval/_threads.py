"""Run small dense linear algebra on one BLAS thread.

FID's 384 × 384 eigendecompositions, PRD's k-means products and MoverScore's per-pair
transport problems are too small to gain from threads, and on a busy 2-core machine — or
right after PyTorch, whose OpenMP threads keep spinning for a while — OpenBLAS threads
competing for the cores made them 10 to 100 times slower. threadpoolctl comes with
scikit-learn; without it nothing is limited.
"""

from __future__ import annotations

import contextlib

__all__ = ["single_threaded_blas"]


def single_threaded_blas():
    """Context manager limiting BLAS/LAPACK to one thread (a no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
