"""Run small dense linear algebra on one BLAS thread.

FID's 384 × 384 eigendecompositions, PRD's k-means products and MoverScore's per-pair
transport problems are too small to gain from threads, and on a busy 2-core machine — or
right after PyTorch, whose OpenMP threads keep spinning for a while — OpenBLAS threads
competing for the cores made them 10 to 100 times slower. threadpoolctl comes with
scikit-learn; without it nothing is limited.
"""

from __future__ import annotations

import contextlib
import functools

__all__ = ["single_threaded_blas"]


@functools.lru_cache(maxsize=1)
def _controller():
    """threadpoolctl's view of the loaded BLAS libraries, found once: finding them reads the
    process's memory map, ~15 ms a call, more than a small PRD or k-NN block takes."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def single_threaded_blas():
    """Context manager limiting BLAS/LAPACK to one thread (a no-op without threadpoolctl)."""
    controller = _controller()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")
