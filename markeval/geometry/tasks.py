"""Exact k-NN balls and ball counts as independent tile tasks, for processes or a Dask cluster.

The exact counts merge by blocks: a point's ``k`` nearest neighbours are a top-``k`` merge of
its ``k`` nearest in each block of the other points, and a ball count is a sum over blocks
(membership an OR). So the distance matrix is cut into tiles (a block of rows against a block
of columns), each tile is one task that computes its exact partial result
(:func:`knn_task`, :func:`membership_task`: the tile kernels of the in-process path, with the
same float64 recheck), and the caller merges the partial results as they arrive. The merged
result is identical, bit for bit, to the in-process one: every decision is exact.

The tasks run through joblib: in local processes by default, or on a Dask cluster when the
call is made inside joblib's backend setting (as :func:`markeval.experiments.parallel.run_units`
describes, workers started with its ``DASK_WORKER_ENV``)::

    import joblib
    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")
    with joblib.parallel_config(backend="dask"):
        balls = knn_balls(points, k=5, n_jobs=None)    # or mark_evaluate(..., n_jobs=None)

Each task receives only its two blocks (Dask scatters each block once and reuses it for every
tile of its row or column), so a worker never holds a whole set. :mod:`markeval.geometry`'s
functions call these with ``n_jobs`` other than 1.

Examples
--------
>>> import numpy as np
>>> x = np.random.default_rng(0).normal(size=(40, 3))
>>> ids, sq = knn_tiles(x, 2, ("numpy", None, "float64"), (16, 16), n_jobs=2)
>>> from markeval.geometry import knn_balls
>>> bool((ids == knn_balls(x, 2).indices).all())
True
"""

from __future__ import annotations

import numpy as np

from markeval.geometry._kernels import knn_rows, make_ops, membership_counts, merge_nearest

__all__ = ["TASK_TILE", "knn_task", "knn_tiles", "membership_task", "membership_tiles"]

#: Rows × columns of a task's tile by default (inside, the task works in smaller tiles).
TASK_TILE = (8192, 8192)


def knn_task(x_rows: np.ndarray, y_cols: np.ndarray, k: int, self_offset: int | None,
             col_offset: int, arithmetic: tuple):
    """Exact ``k`` nearest of each row among the tile's columns, with global column ids.

    ``self_offset``: when rows and columns are the same set, the global index of the first
    row (each row's own point is excluded); ``arithmetic`` = ``(backend, device, dtype)``.
    Returns ``(ids, sq)``, padded with −1 and inf where the tile has fewer than ``k`` columns.
    """
    ops = make_ops(*arithmetic)
    self_ids = None
    if self_offset is not None:
        self_ids = np.arange(self_offset, self_offset + len(x_rows)) - col_offset
    ids, sq = knn_rows(x_rows, y_cols, k, ops, self_ids=self_ids)
    return np.where(ids >= 0, ids + col_offset, -1), sq


def membership_task(x_rows: np.ndarray, y_cols: np.ndarray, r_cols, r_rows, arithmetic: tuple):
    """Exact ball counts of one tile (see :func:`markeval.geometry._kernels.membership_counts`)."""
    return membership_counts(x_rows, y_cols, make_ops(*arithmetic), r_cols=r_cols, r_rows=r_rows)


def _blocks(a: np.ndarray, size: int) -> list[tuple[int, np.ndarray]]:
    # One array object per block: joblib's Dask backend scatters each object once.
    return [(start, np.ascontiguousarray(a[start:start + size]))
            for start in range(0, len(a), size)]


def _run(tasks, n_jobs, progress: bool, total: int):
    """Yield ``(key, result)`` as tasks finish (any order: the merges do not depend on it)."""
    import joblib
    from tqdm import tqdm

    parallel = joblib.Parallel(n_jobs=-1 if n_jobs is None else n_jobs,
                               return_as="generator_unordered")
    with tqdm(total=total, unit="tile", disable=not progress) as bar:
        for key, result in parallel(joblib.delayed(_keyed)(key, fn, *args)
                                    for key, fn, args in tasks):
            bar.update()
            yield key, result


def _keyed(key, fn, *args):
    return key, fn(*args)


def knn_tiles(x: np.ndarray, k: int, arithmetic: tuple, tile=TASK_TILE, *, n_jobs=None,
              progress: bool = False):
    """Exact k-NN of every row of ``x`` within ``x``, tile by tile as tasks.

    Returns ``(indices, sq_distances)`` as :func:`markeval.geometry.knn_balls` (and equal to
    it).
    """
    make_ops(*arithmetic)  # fail here, not in a worker
    rows, cols = _blocks(x, tile[0]), _blocks(x, tile[1])
    ids = np.full((len(x), k), -1, np.int64)
    sq = np.full((len(x), k), np.inf)
    tasks = ((r0, knn_task, (xr, xc, k, r0, c0, arithmetic))
             for r0, xr in rows for c0, xc in cols)
    for r0, (got_ids, got_sq) in _run(tasks, n_jobs, progress, len(rows) * len(cols)):
        r1 = r0 + len(got_ids)
        ids[r0:r1], sq[r0:r1] = merge_nearest(ids[r0:r1], sq[r0:r1], got_ids, got_sq, k)
    return ids, sq


def membership_tiles(x: np.ndarray, y: np.ndarray, arithmetic: tuple, *, r_cols=None,
                     r_rows=None, tile=TASK_TILE, n_jobs=None, progress: bool = False):
    """Exact ball counts between ``x`` and ``y``, tile by tile as tasks.

    Same arguments and result as :func:`markeval.geometry._kernels.membership_counts`.
    """
    make_ops(*arithmetic)
    rows, cols = _blocks(x, tile[0]), _blocks(y, tile[1])
    totals = {}
    if r_cols is not None:
        totals["col"] = (np.zeros(len(x), np.int64), np.zeros(len(y), np.int64))
    if r_rows is not None:
        totals["row"] = (np.zeros(len(y), np.int64), np.zeros(len(x), np.int64))
    tasks = (((r0, c0), membership_task,
              (xr, yc, None if r_cols is None else r_cols[c0:c0 + len(yc)],
               None if r_rows is None else r_rows[r0:r0 + len(xr)], arithmetic))
             for r0, xr in rows for c0, yc in cols)
    for (r0, c0), got in _run(tasks, n_jobs, progress, len(rows) * len(cols)):
        for kind, (a, b) in got.items():
            # "col": a over the rows, b over the columns; "row": a over columns, b over rows.
            first, second = (r0, c0) if kind == "col" else (c0, r0)
            totals[kind][0][first:first + len(a)] += a
            totals[kind][1][second:second + len(b)] += b
    return totals
