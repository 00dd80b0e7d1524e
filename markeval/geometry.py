"""Exact k-nearest-neighbour balls and "which balls contain which points", in row blocks.

Improved precision and recall (Kynkäänniemi et al. 2019) and Mark-Evaluate (Mordido & Meinel
2020) both cover a point set ``S`` with balls: the ball of ``s`` is the *closed* ball around
``s`` whose radius is the distance from ``s`` to its ``k``-th nearest neighbour in ``S``. They
then ask, for points of another set, which of those balls contain them. This module answers
exactly that, for any sizes, in memory ``O(block × n)``:

* :func:`knn_balls` — the ``k`` nearest neighbours of every point of a set and the radius of
  its ball (one pass over the set against itself);
* :func:`ball_membership` — for points ``x`` and the balls of ``S``: how many balls contain
  each ``x``, and how many of the ``x`` each ball contains (one pass);
* :func:`mutual_membership` — both directions between two ball sets from one shared pass;
* :func:`pairwise_sq_distances` — the brute-force full matrix (small inputs, and the reference
  the fast functions are exact against).

Conventions
-----------
*Self is excluded by index, not by distance.* The paper's ``NN_k(s, S)`` lists ``s`` itself
first and then ``k`` neighbours; we return only the ``k`` neighbours. A *duplicate* of ``s``
(another row with the same coordinates) is a neighbour at distance 0, so a point with ``k``
duplicates has radius 0 and its ball is the single point ``{s}`` (closed, so the duplicates and
any other copy of ``s`` are inside it).

*Ties are broken by index.* When several points are at the ``k``-th distance, the radius is the
same whichever is chosen; the neighbour list takes the lowest indices.

*Membership is closed:* ``x`` is inside the ball of ``s`` when ``‖x − s‖² ≤ r_k(s)²``, and all
comparisons are made between squared distances (taking square roots could merge two different
squared distances into one float).

Exactness
---------
Distances come from the matmul identity ``‖x − y‖² = ‖x‖² + ‖y‖² − 2 x·y``, which is what
reaches BLAS speed, but the identity cancels: its result is off by up to about ``d·u·(‖x‖+‖y‖)²``
(``u`` the unit roundoff), far more than the rounding of the direct sum, and enough to flip a
``≤`` between a distance and a radius that are equal or nearly so (duplicates, integer
coordinates, or a query that *is* a neighbour of the centre). So every decision is made in two
steps. After centring the data (which shrinks the norms, hence the error) the identity gives
``D̃`` with a proven bound ``|D̃ − D| ≤ e`` where ``D`` is the *direct* squared distance
``Σ (x_i − y_i)²`` in float64 (``e = 2 (d + 8) (u_c + u_64) (‖x−μ‖ + max ‖y−μ‖)²``, ``u_c`` the
unit roundoff of the arithmetic that computed ``D̃``). A comparison that ``D̃`` decides with a
margin larger than ``e`` is final; the few pairs inside the margin are recomputed directly in
float64 and compared again. Radii are always the direct float64 value. The results are
therefore *identical*, bit for bit, to comparing the entries of :func:`pairwise_sq_distances`
— on every backend, in either dtype. float32 arithmetic is faster but has a wider margin, so
more pairs are rechecked.

Backends
--------
``backend="numpy"`` (default) runs the blocks with NumPy's BLAS on the CPU.
``backend="torch"`` runs them with PyTorch on ``device`` (``"cpu"``, ``"cuda"``, ...); only the
few near-boundary pairs come back to the CPU for the float64 recheck, so the result equals the
NumPy one exactly. With ``dtype="float32"`` on a GPU, TF32/bf16 matmuls (see
``torch.set_float32_matmul_precision``) are accounted for in the margin.

There is no FAISS backend: its exact index (``IndexFlatL2``) is this same float32 GEMM, it has
no search for "inside a ball of its own radius" (radii differ per centre), and its approximate
indices would miss neighbours, which changes the counts Mark-Evaluate is made of.

Examples
--------
>>> import numpy as np
>>> S = np.array([[0.0], [1.0], [3.0], [6.0]])
>>> balls = knn_balls(S, k=1)
>>> balls.radii.tolist(), balls.indices[:, 0].tolist()
([1.0, 1.0, 2.0, 3.0], [1, 0, 1, 2])
>>> m = ball_membership(np.array([[2.0], [10.0]]), balls)
>>> m.balls_per_point.tolist(), m.inside_any.tolist(), m.points_per_ball.tolist()
([2, 0], [True, False], [0, 1, 1, 0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from markeval._checks import (check_bool, check_choice, check_embeddings, check_int, check_k,
                              check_same_dim)

__all__ = [
    "BACKENDS",
    "KNNBalls",
    "Membership",
    "ball_membership",
    "knn_balls",
    "mutual_membership",
    "pairwise_sq_distances",
    "sq_distance_blocks",
]

BACKENDS = ("numpy", "torch")
_DTYPES = ("float64", "float32")
# One distance block (rows × columns float64) is kept under this; a pass holds ~3 such arrays.
_BLOCK_BYTES = 64 * 2**20
# The direct recheck gathers (pairs × d) differences at a time, kept under this.
_RECHECK_BYTES = 16 * 2**20
_U64 = 2.0**-53
# sq_distance_blocks recomputes entries below this many error bounds directly (see there).
_NEAR_ZERO_BOUNDS = 1e4


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class KNNBalls:
    """The k-NN balls of a point set, from :func:`knn_balls`.

    Attributes
    ----------
    points : numpy.ndarray
        float64, shape ``(n, d)``, the centres (read-only copy of the input).
    k : int
        Neighbours per ball.
    indices : numpy.ndarray
        int64, shape ``(n, k)``: ``indices[i]`` are the ``k`` nearest neighbours of point ``i``
        within the set, ``i`` itself excluded, nearest first, ties by lower index.
    sq_distances : numpy.ndarray
        float64, shape ``(n, k)``: their squared distances ``Σ (x − y)²`` (direct, float64).
    """

    points: np.ndarray
    k: int
    indices: np.ndarray
    sq_distances: np.ndarray

    @property
    def sq_radii(self) -> np.ndarray:
        """Squared radius of each ball: the squared distance to the ``k``-th neighbour."""
        return self.sq_distances[:, -1]

    @property
    def radii(self) -> np.ndarray:
        """Radius of each ball, ``sqrt(sq_radii)`` (compare squared values, not these)."""
        return np.sqrt(self.sq_radii)

    def __len__(self) -> int:
        return self.points.shape[0]

    def __repr__(self) -> str:
        n, d = self.points.shape
        return f"KNNBalls(n={n}, dim={d}, k={self.k})"


@dataclass(frozen=True, eq=False)
class Membership:
    """Which balls contain which points, from :func:`ball_membership`.

    Attributes
    ----------
    balls_per_point : numpy.ndarray
        int64, shape ``(m,)``: for each query point, how many balls contain it.
    points_per_ball : numpy.ndarray
        int64, shape ``(n,)``: for each ball, how many query points it contains.
    """

    balls_per_point: np.ndarray
    points_per_ball: np.ndarray

    @property
    def inside_any(self) -> np.ndarray:
        """bool, shape ``(m,)``: the query point lies in at least one ball."""
        return self.balls_per_point > 0


# --------------------------------------------------------------------------- backends


class _NumpyOps:
    """Block arithmetic with NumPy on the CPU."""

    def __init__(self, dtype: str):
        self.dtype = np.dtype(dtype)
        self.unit_roundoff = float(np.finfo(self.dtype).eps) / 2

    def put(self, a: np.ndarray):
        return np.ascontiguousarray(a, dtype=self.dtype)

    def sq_norms(self, a):
        return np.einsum("ij,ij->i", a, a)

    def sqrt(self, a):
        return np.sqrt(a)

    def sq_dist_block(self, xb_m2, xb_sq, y, y_sq):
        block = xb_m2 @ y.T
        block += y_sq[None, :]
        block += xb_sq[:, None]
        return block

    def exclude_self(self, block, start: int) -> None:
        rows = np.arange(block.shape[0])
        block[rows, rows + start] = np.inf

    def kth_smallest(self, block, k: int):
        return np.partition(block, k - 1, axis=1)[:, k - 1]

    def abs_(self, block):
        return np.abs(block, out=block)

    def nonzero(self, mask) -> tuple[np.ndarray, np.ndarray]:
        return np.nonzero(mask)

    def count(self, mask, axis: int) -> np.ndarray:
        return np.count_nonzero(mask, axis=axis).astype(np.int64)

    def numpy(self, a) -> np.ndarray:
        return np.asarray(a, dtype=np.float64)


class _TorchOps:
    """Block arithmetic with PyTorch on ``device``; results come back as NumPy arrays."""

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

    def put(self, a: np.ndarray):
        # torch.tensor copies, so read-only inputs (KNNBalls arrays) raise no warning.
        return self.torch.tensor(a, dtype=self.dtype, device=self.device)

    def sq_norms(self, a):
        return (a * a).sum(dim=1)

    def sqrt(self, a):
        return self.torch.sqrt(a)

    def sq_dist_block(self, xb_m2, xb_sq, y, y_sq):
        block = xb_m2 @ y.T
        block.add_(y_sq[None, :])
        block.add_(xb_sq[:, None])
        return block

    def exclude_self(self, block, start: int) -> None:
        rows = self.torch.arange(block.shape[0], device=self.device)
        block[rows, rows + start] = float("inf")

    def kth_smallest(self, block, k: int):
        return self.torch.kthvalue(block, k, dim=1).values

    def abs_(self, block):
        return block.abs_()

    def nonzero(self, mask) -> tuple[np.ndarray, np.ndarray]:
        rows, cols = self.torch.nonzero(mask, as_tuple=True)
        return rows.cpu().numpy(), cols.cpu().numpy()

    def count(self, mask, axis: int) -> np.ndarray:
        return mask.sum(dim=axis).cpu().numpy().astype(np.int64)

    def numpy(self, a) -> np.ndarray:
        return a.detach().to("cpu", self.torch.float64).numpy()


def _ops(backend: str, device, dtype: str):
    check_choice(backend, "backend", BACKENDS)
    check_choice(dtype, "dtype", _DTYPES)
    if backend == "numpy":
        if device not in (None, "cpu"):
            raise ValueError(
                f"backend='numpy' runs on the CPU only, got device={device!r}; "
                "use backend='torch' for a GPU"
            )
        return _NumpyOps(dtype)
    return _TorchOps(dtype, device)


# --------------------------------------------------------------------------- shared steps


def _direct_sq(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``Σ (x[rows] − y[cols])²`` in float64, pair by pair, in bounded memory.

    This is the definition every decision in the module agrees with.
    """
    out = np.empty(len(rows), dtype=np.float64)
    step = max(1, _RECHECK_BYTES // (8 * x.shape[1]))
    for start in range(0, len(rows), step):
        stop = start + step
        diff = x[rows[start:stop]] - y[cols[start:stop]]
        np.einsum("ij,ij->i", diff, diff, out=out[start:stop])
    return out


def _block_rows(block_size, n_rows: int, n_cols: int) -> int:
    if block_size is None:
        return max(1, min(n_rows, _BLOCK_BYTES // (8 * max(n_cols, 1))))
    return min(check_int(block_size, "block_size", minimum=1), n_rows)


class _Pass:
    """One blocked pass of ``rows`` against ``cols``: centred copies on the backend + margins."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, ops, block_size, progress: bool):
        self.ops = ops
        # Any centre is valid for the error bound; the mean of all points makes the norms small.
        mu = np.concatenate([rows, cols]).mean(axis=0) if rows is not cols else cols.mean(axis=0)
        self.x = ops.put(rows - mu)
        self.y = self.x if rows is cols else ops.put(cols - mu)
        # Scaling by −2 is exact in binary floating point, and saves a pass over each block.
        self.x_m2 = self.x * -2.0
        self.x_sq = ops.sq_norms(self.x)
        self.y_sq = self.x_sq if rows is cols else ops.sq_norms(self.y)
        d = rows.shape[1]
        # |D̃ − D| <= coeff · (‖x−μ‖ + max‖y−μ‖)²; see the module docstring. The norms here
        # are themselves rounded, which the +8 in (d + 8) more than covers.
        coeff = 2.0 * (d + 8) * (ops.unit_roundoff + _U64)
        if (d + 8) * ops.unit_roundoff >= 0.5:
            raise ValueError(
                f"dtype too coarse for dimension {d}: the matmul error bound is meaningless; "
                "use dtype='float64'"
            )
        max_norm = float(ops.numpy(ops.sqrt(self.y_sq)).max())
        self.margin = coeff * (ops.sqrt(self.x_sq) + max_norm) ** 2
        self.step = _block_rows(block_size, rows.shape[0], cols.shape[0])
        self.progress = progress

    def blocks(self):
        n = self.x.shape[0]
        starts = range(0, n, self.step)
        if self.progress:
            from tqdm import tqdm

            starts = tqdm(starts, total=math.ceil(n / self.step), unit="block")
        for start in starts:
            stop = min(start + self.step, n)
            block = self.ops.sq_dist_block(self.x_m2[start:stop], self.x_sq[start:stop], self.y,
                                           self.y_sq)
            yield start, stop, block, self.margin[start:stop]


def _check_backend_args(backend, device, dtype, block_size, progress):
    ops = _ops(backend, device, dtype)
    _block_rows(block_size, 1, 1)  # validate early, before any work
    check_bool(progress, "progress")
    return ops


# --------------------------------------------------------------------------- public API


def pairwise_sq_distances(x, y=None) -> np.ndarray:
    """All squared distances ``Σ (x_i − y_j)²``, computed directly in float64 (brute force).

    Memory is ``n × m`` floats: use it for small sets, for teaching, and as the reference the
    blocked functions agree with exactly.

    Parameters
    ----------
    x : array_like, shape (n, d)
    y : array_like, shape (m, d), optional
        Defaults to ``x``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n, m)``.

    Examples
    --------
    >>> pairwise_sq_distances([[0, 0], [3, 4]]).tolist()
    [[0.0, 25.0], [25.0, 0.0]]
    """
    x = check_embeddings(x, "x")
    y = x if y is None else check_embeddings(y, "y")
    check_same_dim(x, y, "x", "y")
    rows, cols = np.divmod(np.arange(x.shape[0] * y.shape[0]), y.shape[0])
    return _direct_sq(x, y, rows, cols).reshape(x.shape[0], y.shape[0])


def knn_balls(points, k: int, *, backend: str = "numpy", device=None, dtype: str = "float64",
              block_size: int | None = None, progress: bool = False,
              name: str = "points") -> KNNBalls:
    """The ``k`` nearest neighbours of every point within its own set, and its ball's radius.

    Exact: equal to sorting each row of :func:`pairwise_sq_distances` (self excluded by index,
    ties by lower index). Memory ``O(block_size × n)``.

    Parameters
    ----------
    points : array_like, shape (n, d)
        Finite values, ``n >= 2``.
    k : int
        ``1 <= k <= n − 1``.
    backend : {"numpy", "torch"}
    device : str, optional
        Torch device (``"cuda"``, ...); only ``None``/``"cpu"`` for NumPy.
    dtype : {"float64", "float32"}
        Arithmetic of the distance blocks (the result is exact either way).
    block_size : int, optional
        Rows per block; default keeps one ``rows × n`` float64 block under 64 MiB.
    progress : bool, default False
        Show a tqdm bar over blocks.
    name : str
        What to call ``points`` in error messages.

    Returns
    -------
    KNNBalls

    Examples
    --------
    Three points at 0, 1 and a duplicate of 1: the duplicate is a neighbour at distance 0.

    >>> balls = knn_balls([[0.0], [1.0], [1.0]], k=1)
    >>> balls.indices.tolist(), balls.sq_radii.tolist()
    ([[1], [2], [1]], [1.0, 0.0, 0.0])
    """
    x = check_embeddings(points, name, min_rows=2)
    k = check_k(k, x.shape[0], set_name=name)
    ops = _check_backend_args(backend, device, dtype, block_size, progress)
    n = x.shape[0]
    indices = np.empty((n, k), dtype=np.int64)
    sq_dist = np.empty((n, k), dtype=np.float64)
    run = _Pass(x, x, ops, block_size, progress)
    for start, stop, block, margin in run.blocks():
        ops.exclude_self(block, start)
        # The k-th smallest approximate value is within e of the true one, so every point whose
        # direct distance is <= the true k-th lies within kth + 2e: a complete candidate set.
        bound = ops.kth_smallest(block, k) + 2.0 * margin
        rows, cols = ops.nonzero(block <= bound[:, None])
        del block
        d = _direct_sq(x, x, rows + start, cols)
        order = np.lexsort((cols, d, rows))
        rows, cols, d = rows[order], cols[order], d[order]
        counts = np.bincount(rows, minlength=stop - start)
        first = np.cumsum(counts) - counts
        take = first[:, None] + np.arange(k)
        indices[start:stop] = cols[take]
        sq_dist[start:stop] = d[take]
    return KNNBalls(_read_only(x.copy()), k, _read_only(indices), _read_only(sq_dist))


def _membership_pass(run: _Pass, x: np.ndarray, y: np.ndarray, r_cols, r_rows):
    """Count, in one pass, row points inside column balls and/or column points in row balls.

    ``r_cols``: squared radii of the balls centred on the columns (rows are the queries).
    ``r_rows``: squared radii of the balls centred on the rows (columns are the queries).
    Returns ``(rows_in_col_balls, col_balls_hits, cols_in_row_balls, row_balls_hits)``, the
    last two or first two None when the corresponding radii are None.
    """
    ops = run.ops
    n_rows, n_cols = x.shape[0], y.shape[0]
    out = {}
    if r_cols is not None:
        out["col"] = (np.zeros(n_rows, np.int64), np.zeros(n_cols, np.int64),
                      ops.put(r_cols), r_cols)
    if r_rows is not None:
        out["row"] = (np.zeros(n_cols, np.int64), np.zeros(n_rows, np.int64),
                      ops.put(r_rows), r_rows)
    # Rounding the radii to the block dtype moves them by up to u_c·r²: widen the margin.
    widen = {kind: 2.0 * ops.unit_roundoff * float(v[3].max()) for kind, v in out.items()}
    for start, stop, block, margin in run.blocks():
        for kind, (queries_hit, balls_hit, radii_dev, radii) in out.items():
            e = (margin + widen[kind])[:, None]
            if kind == "col":  # row point i in the ball of column point j
                gap = block - radii_dev[None, :]
            else:  # column point j in the ball of row point i
                gap = block - radii_dev[start:stop, None]
            inside = gap < -e  # D <= D̃ + e < r²: certainly inside
            n_in_rows, n_in_cols = ops.count(inside, 1), ops.count(inside, 0)
            del inside
            rows, cols = ops.nonzero(ops.abs_(gap) <= e)
            del gap
            d = _direct_sq(x, y, rows + start, cols)
            hit = d <= (radii[cols] if kind == "col" else radii[rows + start])
            row_hits = n_in_rows + np.bincount(rows[hit], minlength=stop - start)
            col_hits = n_in_cols + np.bincount(cols[hit], minlength=n_cols)
            if kind == "col":
                queries_hit[start:stop] += row_hits
                balls_hit += col_hits
            else:
                queries_hit += col_hits
                balls_hit[start:stop] += row_hits
    return {kind: Membership(_read_only(q), _read_only(b)) for kind, (q, b, _, _) in out.items()}


def ball_membership(queries, balls: KNNBalls, *, backend: str = "numpy", device=None,
                    dtype: str = "float64", block_size: int | None = None,
                    progress: bool = False, name: str = "queries") -> Membership:
    """Which balls of ``balls`` contain which ``queries`` (closed balls, exact).

    Parameters
    ----------
    queries : array_like, shape (m, d)
    balls : KNNBalls
        From :func:`knn_balls`.
    backend, device, dtype, block_size, progress
        As in :func:`knn_balls`.
    name : str
        What to call ``queries`` in error messages.

    Returns
    -------
    Membership
        ``balls_per_point[i]`` = number of balls containing ``queries[i]``;
        ``points_per_ball[j]`` = number of queries inside the ball of ``balls.points[j]``.

    Examples
    --------
    A set is always inside its own balls (each point is the centre of one):

    >>> import numpy as np
    >>> S = np.random.default_rng(0).normal(size=(50, 3))
    >>> bool(ball_membership(S, knn_balls(S, k=3)).inside_any.all())
    True
    """
    if not isinstance(balls, KNNBalls):
        raise TypeError(f"balls must be a KNNBalls from knn_balls(), got {type(balls).__name__}")
    x = check_embeddings(queries, name)
    check_same_dim(x, balls.points, name, "the balls' points")
    ops = _check_backend_args(backend, device, dtype, block_size, progress)
    run = _Pass(x, balls.points, ops, block_size, progress)
    return _membership_pass(run, x, balls.points, balls.sq_radii, None)["col"]


def mutual_membership(balls_a: KNNBalls, balls_b: KNNBalls, *, backend: str = "numpy",
                      device=None, dtype: str = "float64", block_size: int | None = None,
                      progress: bool = False) -> tuple[Membership, Membership]:
    """Both directions at once: points of ``a`` in the balls of ``b``, and of ``b`` in ``a``'s.

    One pass over the cross distances instead of two, with results identical to
    ``ball_membership(balls_a.points, balls_b)`` and ``ball_membership(balls_b.points, balls_a)``.

    Returns
    -------
    (Membership, Membership)
        ``a_in_b`` (queries = points of ``a``, balls of ``b``) and ``b_in_a``.

    Examples
    --------
    >>> import numpy as np
    >>> a = knn_balls(np.array([[0.0], [1.0], [2.0]]), k=1)
    >>> b = knn_balls(np.array([[1.5], [5.0], [9.0]]), k=1)
    >>> a_in_b, b_in_a = mutual_membership(a, b)
    >>> a_in_b.balls_per_point.tolist(), b_in_a.balls_per_point.tolist()
    ([1, 1, 2], [2, 0, 0])
    """
    for arg, value in (("balls_a", balls_a), ("balls_b", balls_b)):
        if not isinstance(value, KNNBalls):
            raise TypeError(
                f"{arg} must be a KNNBalls from knn_balls(), got {type(value).__name__}")
    check_same_dim(balls_a.points, balls_b.points, "balls_a", "balls_b")
    ops = _check_backend_args(backend, device, dtype, block_size, progress)
    run = _Pass(balls_a.points, balls_b.points, ops, block_size, progress)
    out = _membership_pass(run, balls_a.points, balls_b.points, balls_b.sq_radii, balls_a.sq_radii)
    return out["col"], out["row"]


def sq_distance_blocks(x, y, *, backend: str = "numpy", device=None, dtype: str = "float64",
                       block_size: int | None = None, progress: bool = False):
    """Yield ``(start, stop, block)``: approximate squared distances of ``x[start:stop]`` to ``y``.

    The matmul identity, clipped at 0, as a float64 NumPy array of shape
    ``(stop − start, len(y))``; the error is up to about ``d·u·(‖x‖+‖y‖)²`` (see the module
    docstring), so use it for scores that are continuous in the distances, not for ``≤`` tests.
    Entries within ``10⁴`` error bounds of zero are recomputed directly in float64, so every
    entry is within ``10⁻⁴`` of the exact value relatively, and a duplicate point gives exactly
    0 on every machine (not 0 on one BLAS and 1e-16 on another).

    Examples
    --------
    >>> [(a, b, blk.round(6).tolist()) for a, b, blk in sq_distance_blocks([[0.0], [2.0]], [[1.0]])]
    [(0, 2, [[1.0], [1.0]])]
    """
    x = check_embeddings(x, "x")
    y = check_embeddings(y, "y")
    check_same_dim(x, y, "x", "y")
    ops = _check_backend_args(backend, device, dtype, block_size, progress)
    run = _Pass(x, y, ops, block_size, progress)
    for start, stop, block, margin in run.blocks():
        block = np.maximum(ops.numpy(block), 0.0)
        rows, cols = np.nonzero(block <= _NEAR_ZERO_BOUNDS * ops.numpy(margin)[:, None])
        block[rows, cols] = _direct_sq(x, y, rows + start, cols)
        yield start, stop, block
