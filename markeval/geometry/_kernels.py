"""The exact tile kernels behind :mod:`markeval.geometry`: distances, k nearest, ball counts.

Every computation of the package is a loop over *tiles*: a block of rows of ``x`` against a
block of rows of ``y``. A tile's squared distances come from the matmul identity on centred
copies (BLAS speed), every decision they cannot make with a margin above their proven error
is made again on direct float64 distances (:func:`direct_sq`), so each tile's result is
exact; tiles then merge exactly (a top-``k`` merge for neighbours, a sum for counts). The same
tile functions run in this process (:func:`knn_rows`, :func:`membership_counts`) and as
separate tasks (:mod:`markeval.geometry.tasks`).

Tiles are at most ``block_rows × block_cols`` (default 1,024 × 8,192 float64 values, 64 MiB):
wide enough that BLAS packs each column block once per 1,024 rows instead of once per row
block, and small enough that a tile's temporaries are reused, not page-faulted in afresh.
"""

from __future__ import annotations

import math

import numpy as np

from markeval._checks import check_choice, check_int

BACKENDS = ("numpy", "torch")
DTYPES = ("float64", "float32")
#: One tile (rows × columns float64) is kept under this.
TILE_BYTES = 64 * 2**20
#: Columns per tile by default (rows then fill TILE_BYTES).
TILE_COLS = 8192
# knn_tile first bounds the k-th nearest from this many columns (see there).
_SAMPLE_COLS = 256
# The direct recheck gathers (pairs × d) differences at a time, kept under this.
_RECHECK_BYTES = 16 * 2**20
_U64 = 2.0**-53
# check_distance_range reads the points in slices of this many rows (bounded temporaries).
_SCAN_ROWS = 1 << 14


def check_distance_range(sets, names, dtype: str, *, about_origin: bool = False) -> None:
    """Refuse, naming the sets, points whose squared distances ``dtype`` cannot hold.

    A squared distance between two points of the sets is at most ``B²``, ``B`` the diagonal
    of their bounding box: ``√(Σ_j range_j²)`` where the tiles centre the points first (an
    offset costs nothing), ``2 √(Σ_j max|x_j|²)`` where the arithmetic reads the points as
    given (``about_origin``: faiss). The matmul identity adds terms up to ``4 B²``, so ``2 B``
    must stay below the square root of the dtype's largest value; beyond it a distance becomes
    ``inf`` or ``nan`` and every decision made on it is void.
    """
    low = high = None
    for x in sets:
        for start in range(0, len(x), _SCAN_ROWS):
            part = np.asarray(x[start:start + _SCAN_ROWS], dtype=np.float64)
            if about_origin:
                part = np.abs(part)
            low = part.min(axis=0) if low is None else np.minimum(low, part.min(axis=0))
            high = part.max(axis=0) if high is None else np.maximum(high, part.max(axis=0))
    if high is None:
        return
    with np.errstate(over="ignore"):
        bound = (2 * float(np.sqrt(np.sum(np.square(high)))) if about_origin
                 else float(np.sqrt(np.sum(np.square(high - low)))))
    if 2 * bound <= math.sqrt(float(np.finfo(dtype).max)):
        return
    limit = math.sqrt(float(np.finfo(dtype).max)) / 2
    if about_origin:
        hint = ", or centre them: the neighbour index reads them as given"
    elif np.dtype(dtype) == np.float32 and 2 * bound <= math.sqrt(float(np.finfo(np.float64).max)):
        hint = ", or pass dtype='float64'"
    else:
        hint = ""
    raise ValueError(f"{' and '.join(names)}: the points lie up to {bound:.3g} apart, beyond "
                     f"{limit:.3g}, the most whose squared distances {np.dtype(dtype)} "
                     f"arithmetic holds (rescale the points{hint})")


def read_only(a: np.ndarray) -> np.ndarray:
    """``a``, made read-only (results are shared, not copied)."""
    a.flags.writeable = False
    return a


def point_dtype(x) -> np.dtype:
    """float32 input stays float32 (half the memory, exact in float64 arithmetic); else float64."""
    return np.dtype(np.float32) if np.asarray(x).dtype == np.float32 else np.dtype(np.float64)


# --------------------------------------------------------------------------- backends


class NumpyOps:
    """Tile arithmetic with NumPy on the CPU."""

    def __init__(self, dtype: str):
        self.dtype = np.dtype(dtype)
        self.unit_roundoff = float(np.finfo(self.dtype).eps) / 2

    def put(self, a: np.ndarray, shift=None):
        """``a − shift`` in the tile dtype, converted in slices (no full float64 temporary)."""
        out = np.empty(a.shape, dtype=self.dtype)
        step = max(1, _RECHECK_BYTES // (8 * max(a.shape[1], 1)))
        for start in range(0, a.shape[0], step):
            part = a[start:start + step].astype(np.float64)
            out[start:start + step] = part if shift is None else part - shift
        return out

    def sq_norms(self, a):
        return np.einsum("ij,ij->i", a, a)

    def matmul_into(self, a, b, out):
        return np.matmul(a, b.T, out=out)

    def empty(self, rows: int, cols: int):
        return np.empty((rows, cols), dtype=self.dtype)

    def set_inf(self, block, rows: np.ndarray, cols: np.ndarray) -> None:
        block[rows, cols] = np.inf

    def kth_smallest(self, block, k: int):
        return np.partition(block, k - 1, axis=1)[:, k - 1]

    def nonzero(self, mask) -> tuple[np.ndarray, np.ndarray]:
        return np.nonzero(mask)

    def index(self, a: np.ndarray):
        return a

    def count(self, mask, axis: int) -> np.ndarray:
        return np.count_nonzero(mask, axis=axis).astype(np.int64)

    def numpy(self, a) -> np.ndarray:
        return np.asarray(a, dtype=np.float64)


class TorchOps:
    """Tile arithmetic with PyTorch on ``device``; results come back as NumPy arrays."""

    def __init__(self, dtype: str, device):
        import torch

        self.torch = torch
        self.device = torch.device("cpu" if device is None else device)
        self.dtype = getattr(torch, dtype)
        self.unit_roundoff = float(torch.finfo(self.dtype).eps) / 2
        if self.dtype == torch.float32 and self.device.type == "cuda":
            # TF32 keeps 10 mantissa bits and bf16 7: the margin must cover the real matmul.
            precision = torch.get_float32_matmul_precision()
            if precision == "medium":
                self.unit_roundoff = 2.0**-8
            elif precision == "high" or torch.backends.cuda.matmul.allow_tf32:
                self.unit_roundoff = 2.0**-11

    def put(self, a: np.ndarray, shift=None):
        out = self.torch.empty(a.shape, dtype=self.dtype, device=self.device)
        step = max(1, _RECHECK_BYTES // (8 * max(a.shape[1], 1)))
        for start in range(0, a.shape[0], step):
            part = a[start:start + step].astype(np.float64)
            part = part if shift is None else part - shift
            out[start:start + step] = self.torch.from_numpy(part)
        return out

    def sq_norms(self, a):
        return (a * a).sum(dim=1)

    def matmul_into(self, a, b, out):
        return self.torch.matmul(a, b.T, out=out)

    def empty(self, rows: int, cols: int):
        return self.torch.empty((rows, cols), dtype=self.dtype, device=self.device)

    def set_inf(self, block, rows: np.ndarray, cols: np.ndarray) -> None:
        block[self.torch.as_tensor(rows, device=self.device),
              self.torch.as_tensor(cols, device=self.device)] = float("inf")

    def kth_smallest(self, block, k: int):
        return self.torch.kthvalue(block, k, dim=1).values

    def nonzero(self, mask) -> tuple[np.ndarray, np.ndarray]:
        rows, cols = self.torch.nonzero(mask, as_tuple=True)
        return rows.cpu().numpy(), cols.cpu().numpy()

    def index(self, a: np.ndarray):
        return self.torch.as_tensor(a, device=self.device)

    def count(self, mask, axis: int) -> np.ndarray:
        return mask.sum(dim=axis).cpu().numpy().astype(np.int64)

    def numpy(self, a) -> np.ndarray:
        return a.detach().to("cpu", self.torch.float64).numpy()


def make_ops(backend: str, device, dtype: str):
    """The tile arithmetic for ``backend`` on ``device`` in ``dtype`` (checked)."""
    check_choice(backend, "backend", BACKENDS)
    check_choice(dtype, "dtype", DTYPES)
    if backend == "numpy":
        if device not in (None, "cpu"):
            raise ValueError(
                f"backend='numpy' runs on the CPU only, got device={device!r}; "
                "use backend='torch' for a GPU"
            )
        return NumpyOps(dtype)
    return TorchOps(dtype, device)


def tile_shape(block_size, n_rows: int, n_cols: int) -> tuple[int, int]:
    """``(rows, cols)`` of a tile: ``block_size`` is None, rows, or ``(rows, cols)``."""
    if block_size is None:
        cols = max(1, min(n_cols, TILE_COLS))
        return max(1, min(n_rows, TILE_BYTES // (8 * cols))), cols
    if isinstance(block_size, tuple) and len(block_size) == 2:
        rows = check_int(block_size[0], "block_size[0]", minimum=1)
        cols = check_int(block_size[1], "block_size[1]", minimum=1)
        return min(rows, max(n_rows, 1)), min(cols, max(n_cols, 1))
    if isinstance(block_size, tuple):
        raise ValueError(f"block_size must be an int or a pair (rows, columns), got {block_size}")
    rows = check_int(block_size, "block_size", minimum=1)
    return min(rows, max(n_rows, 1)), max(1, min(n_cols, TILE_BYTES // (8 * rows)))


# --------------------------------------------------------------------------- distances


def direct_sq(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``Σ (x[rows] − y[cols])²`` in float64, pair by pair, in bounded memory.

    This is the definition every decision in the package agrees with (float32 points are
    converted exactly before subtracting).
    """
    out = np.empty(len(rows), dtype=np.float64)
    step = max(1, _RECHECK_BYTES // (8 * x.shape[1]))
    for start in range(0, len(rows), step):
        stop = start + step
        diff = np.subtract(x[rows[start:stop]], y[cols[start:stop]], dtype=np.float64)
        np.einsum("ij,ij->i", diff, diff, out=out[start:stop])
    return out


class Tiling:
    """Centred copies of ``x`` and ``y`` on the backend, and each tile's approximate distances.

    ``D̃ = ‖x−μ‖² + ‖y−μ‖² − 2 (x−μ)·(y−μ)`` with ``|D̃ − D| ≤ margin`` proven for each tile
    (``D`` the direct float64 value; see :mod:`markeval.geometry`).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, ops, block_size=None):
        self.ops = ops
        same = x is y
        # Any centre is valid for the error bound; the mean of all points makes norms small.
        total = x.sum(axis=0, dtype=np.float64) + (0.0 if same else y.sum(axis=0, dtype=np.float64))
        mu = total / (x.shape[0] + (0 if same else y.shape[0]))
        self.x = ops.put(x, mu)
        self.y = self.x if same else ops.put(y, mu)
        self.x_sq = ops.sq_norms(self.x)
        self.y_sq = self.x_sq if same else ops.sq_norms(self.y)
        self.x_norm = np.sqrt(ops.numpy(self.x_sq))
        self.y_norm = self.x_norm if same else np.sqrt(ops.numpy(self.y_sq))
        d = x.shape[1]
        # |D̃ − D| <= coeff · (‖x−μ‖ + ‖y−μ‖)²; see the package docstring. The norms here are
        # themselves rounded, which the +8 in (d + 8) more than covers.
        if (d + 8) * ops.unit_roundoff >= 0.5:
            raise ValueError(
                f"dtype too coarse for dimension {d}: the matmul error bound is meaningless; "
                "use dtype='float64'"
            )
        self.coeff = 2.0 * (d + 8) * (ops.unit_roundoff + _U64)
        self.rows, self.cols = tile_shape(block_size, x.shape[0], y.shape[0])
        self._buffers: dict = {}

    def tiles(self, progress: bool = False, row_range=None):
        """Yield ``(r0, r1, c0, c1)`` over all tiles (rows ``row_range`` only, if given)."""
        r_lo, r_hi = row_range or (0, self.x.shape[0])
        n_cols = self.y.shape[0]
        spans = [(r0, min(r0 + self.rows, r_hi), c0, min(c0 + self.cols, n_cols))
                 for r0 in range(r_lo, r_hi, self.rows) for c0 in range(0, n_cols, self.cols)]
        if progress:
            from tqdm import tqdm

            return tqdm(spans, unit="tile")
        return spans

    def block(self, r0: int, r1: int, c0: int, c1: int):
        """Approximate squared distances of rows ``r0:r1`` to columns ``c0:c1`` (reused buffer)."""
        shape = (r1 - r0, c1 - c0)
        out = self._buffers.get(shape)
        if out is None:
            self._buffers.clear()  # at most one shape of buffer alive (edges are rare)
            out = self._buffers[shape] = self.ops.empty(*shape)
        self.ops.matmul_into(self.x[r0:r1] * -2.0, self.y[c0:c1], out)
        out += self.y_sq[None, c0:c1]
        out += self.x_sq[r0:r1, None]
        return out

    def margin(self, r0: int, r1: int, c0: int, c1: int) -> float:
        """Proven bound on ``|D̃ − D|`` over the tile."""
        return self.coeff * (float(self.x_norm[r0:r1].max()) + float(self.y_norm[c0:c1].max()))**2


# --------------------------------------------------------------------------- k nearest


def merge_nearest(ids_a, d_a, ids_b, d_b, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest of two candidate lists per row, by distance then lower index.

    Missing entries are ``−1`` with distance ``inf``; lists of exact values merge exactly.
    """
    ids = np.concatenate([ids_a, ids_b], axis=1)
    d = np.concatenate([d_a, d_b], axis=1)
    # inf entries are padding: any order among them is fine, real ids come first.
    order = np.lexsort((ids, d), axis=1)[:, :k]
    return np.take_along_axis(ids, order, axis=1), np.take_along_axis(d, order, axis=1)


def _nearest_of_candidates(rows, cols, d, n_rows: int, k: int):
    """Per row the ``k`` smallest ``(d, col)`` among candidate pairs; padded with −1/inf."""
    order = np.lexsort((cols, d, rows))
    rows, cols, d = rows[order], cols[order], d[order]
    counts = np.bincount(rows, minlength=n_rows)
    first = np.cumsum(counts) - counts
    rank = np.arange(len(rows)) - first[rows]
    keep = rank < k
    ids = np.full((n_rows, k), -1, dtype=np.int64)
    out = np.full((n_rows, k), np.inf)
    ids[rows[keep], rank[keep]] = cols[keep]
    out[rows[keep], rank[keep]] = d[keep]
    return ids, out


def knn_tile(tiling: Tiling, x, y, r0, r1, c0, c1, k: int, self_ids, best_kth=None):
    """Exact ``k`` nearest of rows ``r0:r1`` among columns ``c0:c1``: ``(ids, sq)`` padded.

    ``self_ids[i]`` is the column that is row ``i`` itself (excluded), −1 for none.
    ``best_kth`` (optional, per row): an exact distance the final ``k``-th nearest is known
    not to exceed; columns that cannot beat it are not rechecked.
    """
    ops = tiling.ops
    block = tiling.block(r0, r1, c0, c1)
    e = tiling.margin(r0, r1, c0, c1)
    n_rows = r1 - r0
    if self_ids is not None:
        own = self_ids[r0:r1]
        hit = np.flatnonzero((own >= c0) & (own < c1))
        ops.set_inf(block, hit, own[hit] - c0)
    # A column whose approximate value exceeds (true k-th) + e cannot be among the k nearest.
    # The tile's own k-th approximate value is within e of a true distance, so tile k-th + 2e
    # bounds the tile's true k-th from above; best_kth + e uses what earlier tiles found.
    # A k-th smallest over the first columns only is a looser bound (the k smallest of a
    # subset are no nearer than those of the tile) that costs a fraction of a full selection;
    # the candidates it lets through are then cut to the tile's own k-th.
    sampled = min(c1 - c0, max(_SAMPLE_COLS, 4 * k))
    if best_kth is not None and np.isfinite(best_kth).all():
        bound, tighten = best_kth + e, False  # earlier tiles already bound the k-th
    elif c1 - c0 > k:
        bound = ops.numpy(ops.kth_smallest(block[:, :sampled], k)) + 2.0 * e
        if best_kth is not None:
            bound = np.minimum(bound, best_kth + e)
        tighten = sampled < c1 - c0
    else:
        bound, tighten = np.full(n_rows, np.inf), False
    bound_dev = ops.put(bound[:, None]) if not isinstance(ops, NumpyOps) else bound[:, None]
    mask = block <= bound_dev
    if not np.isfinite(bound).all():
        mask &= block < math.inf  # the excluded self is inf, and so is a bound of inf
    rows, cols = ops.nonzero(mask)
    if tighten:
        # The tile's k-th smallest approximate value, row by row, among the candidates.
        values = ops.numpy(block[ops.index(rows), ops.index(cols)])
        order = np.lexsort((values, rows))
        counts = np.bincount(rows, minlength=n_rows)
        first = np.cumsum(counts) - counts
        has_k = counts >= k
        kth = np.full(n_rows, np.inf)
        kth[has_k] = values[order][first[has_k] + k - 1]
        keep = values <= np.minimum(bound, kth + 2.0 * e)[rows]
        rows, cols = rows[keep], cols[keep]
    d = direct_sq(x, y, rows + r0, cols + c0)
    return _nearest_of_candidates(rows, cols + c0, d, n_rows, k)


def knn_rows(x: np.ndarray, y: np.ndarray, k: int, ops, *, self_ids=None, block_size=None,
             progress: bool = False, rows: np.ndarray | None = None):
    """Exact ``k`` nearest rows of ``y`` for every row of ``x`` (or of ``x[rows]``).

    Nearest first, ties by lower index, ``self_ids[i]`` (the row of ``y`` that is ``x[i]``,
    or −1) excluded. Returns ``(indices, sq_distances)``, int64 and float64 of shape
    ``(n, k)``, padded with −1 and inf where fewer than ``k`` columns are eligible.
    """
    if rows is not None:
        x = x[rows]
        self_ids = None if self_ids is None else self_ids[rows]
    tiling = Tiling(x, y, ops, block_size)
    n = x.shape[0]
    ids = np.full((n, k), -1, dtype=np.int64)
    dist = np.full((n, k), np.inf)
    for r0, r1, c0, c1 in tiling.tiles(progress):
        known = dist[r0:r1, k - 1]
        got = knn_tile(tiling, x, y, r0, r1, c0, c1, k, self_ids,
                       None if c0 == 0 else known)
        ids[r0:r1], dist[r0:r1] = merge_nearest(ids[r0:r1], dist[r0:r1], *got, k)
    return ids, dist


# --------------------------------------------------------------------------- ball counts


def membership_tile(tiling: Tiling, x, y, r0, r1, c0, c1, r_cols=None, r_rows=None,
                    r_cols_dev=None, r_rows_dev=None):
    """Exact ball counts of one tile: ``{"col": (x hits, col-ball hits), "row": (...)}``.

    ``r_cols``: squared radii of balls centred on the columns (the rows are the queries);
    ``r_rows``: of balls centred on the rows (the columns are the queries). Closed balls:
    inside when the direct squared distance is ``<=`` the squared radius.
    """
    ops = tiling.ops
    block = tiling.block(r0, r1, c0, c1)
    out = {}
    for kind, radii, dev in (("col", r_cols, r_cols_dev), ("row", r_rows, r_rows_dev)):
        if radii is None:
            continue
        if kind == "col":
            r = radii[c0:c1]
            r_dev = (dev[c0:c1] if dev is not None else r)[None, :]
        else:
            r = radii[r0:r1]
            r_dev = (dev[r0:r1] if dev is not None else r)[:, None]
        # Rounding the radii to the tile dtype moves them by up to u_c·r²: widen the margin.
        e = tiling.margin(r0, r1, c0, c1) + 2.0 * ops.unit_roundoff * float(r.max())
        inside = block < r_dev - e  # D <= D̃ + e < r²: certainly inside
        row_hits, col_hits = ops.count(inside, 1), ops.count(inside, 0)
        del inside
        rows, cols = ops.nonzero((block >= r_dev - e) & (block <= r_dev + e))
        d = direct_sq(x, y, rows + r0, cols + c0)
        hit = d <= (r[cols] if kind == "col" else r[rows])
        row_hits += np.bincount(rows[hit], minlength=r1 - r0)
        col_hits += np.bincount(cols[hit], minlength=c1 - c0)
        out[kind] = (row_hits, col_hits)
    return out


def membership_counts(x: np.ndarray, y: np.ndarray, ops, *, r_cols=None, r_rows=None,
                      block_size=None, progress: bool = False):
    """Exact ball counts between the rows of ``x`` and of ``y`` in one pass of tiles.

    Returns ``{"col": (x_in_col_balls, col_ball_counts), "row": (y_in_row_balls,
    row_ball_counts)}`` (int64 arrays) for the radii given: ``r_cols`` are the squared radii
    of balls centred on ``y``, ``r_rows`` of balls centred on ``x``.
    """
    tiling = Tiling(x, y, ops, block_size)
    n, m = x.shape[0], y.shape[0]
    dev = {name: (None if r is None or isinstance(ops, NumpyOps) else ops.put(r[:, None])[:, 0])
           for name, r in (("col", r_cols), ("row", r_rows))}
    totals = {}
    if r_cols is not None:
        totals["col"] = (np.zeros(n, np.int64), np.zeros(m, np.int64))
    if r_rows is not None:
        totals["row"] = (np.zeros(m, np.int64), np.zeros(n, np.int64))
    for r0, r1, c0, c1 in tiling.tiles(progress):
        got = membership_tile(tiling, x, y, r0, r1, c0, c1, r_cols, r_rows, dev["col"],
                              dev["row"])
        if "col" in got:
            totals["col"][0][r0:r1] += got["col"][0]
            totals["col"][1][c0:c1] += got["col"][1]
        if "row" in got:
            totals["row"][0][c0:c1] += got["row"][1]
            totals["row"][1][r0:r1] += got["row"][0]
    return totals
