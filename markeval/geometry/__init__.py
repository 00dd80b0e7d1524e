"""k-nearest-neighbour balls and "which balls contain which points": exact, or from an index.

Improved precision and recall (Kynkäänniemi et al. 2019) and Mark-Evaluate (Mordido & Meinel
2020) both cover a point set ``S`` with balls: the ball of ``s`` is the *closed* ball around
``s`` whose radius is the distance from ``s`` to its ``k``-th nearest neighbour in ``S``. They
then ask, for points of another set, which of those balls contain them. This package answers
exactly that, for any sizes, in memory linear in the number of points:

* :func:`knn_balls` — the ``k`` nearest neighbours of every point of a set and the radius of
  its ball;
* :func:`ball_membership` — for points ``x`` and the balls of ``S``: how many balls contain
  each ``x``, and how many of the ``x`` each ball contains;
* :func:`mutual_membership` — both directions between two ball sets from one shared pass;
* :func:`mutual_balls` — all of it for two point sets at once (what Mark-Evaluate and improved
  precision and recall use); :func:`mutual_balls_at` the same at several ``k`` at once;
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

*Points keep float32:* float32 input (what encoders return) is kept as float32, half the
memory; every distance that decides anything is computed from it in float64.

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
unit roundoff of the arithmetic that computed ``D̃``, the maxima over one tile). A comparison
that ``D̃`` decides with a margin larger than ``e`` is final; the few pairs inside the margin
are recomputed directly in float64 and compared again. Radii are always the direct float64
value. The results are therefore *identical*, bit for bit, to comparing the entries of
:func:`pairwise_sq_distances` — on every backend, in either dtype. float32 arithmetic is faster
but has a wider margin, so more pairs are rechecked; it is the default of the ball functions,
the rechecks being few (:func:`sq_distance_blocks`, whose values are approximate, stays float64).

The work is cut into tiles (a block of rows against a block of columns, see
:mod:`markeval.geometry._kernels`); each tile's result is exact, and tiles merge exactly (a
top-``k`` merge for neighbours, a sum for counts).

Exact or index: ``neighbours``
------------------------------
The exact path computes every distance: time grows with the square of the number of points
(about 11 minutes for all of Mark-Evaluate on 10⁵ × 10⁵ points in 384 dimensions on two CPU
cores). ``neighbours="index"`` (or an :class:`~markeval.geometry.index.IndexSettings`) asks a
neighbour index (faiss-cpu's inverted file) for a short candidate list per point instead and
decides from it with the same exact distances; a ball whose list does not reach past its
radius is searched again, then decided by exact distances. What the index can miss, what its
candidates settle, and the audit that measures the rest (and warns below its gate) are set out
in :mod:`markeval.geometry.index`; the results then carry a
:class:`~markeval.geometry.index.NeighbourReport` (``report``). Exact stays the default.

Backends and tasks
------------------
``backend="numpy"`` (default) runs the tiles with NumPy's BLAS on the CPU.
``backend="torch"`` runs them with PyTorch on ``device`` (``"cpu"``, ``"cuda"``, ...); only the
few near-boundary pairs come back to the CPU for the float64 recheck, so the result equals the
NumPy one exactly. With ``dtype="float32"`` on a GPU, TF32/bf16 matmuls (see
``torch.set_float32_matmul_precision``) are accounted for in the margin.
``n_jobs`` other than 1 runs the exact path's tiles as separate tasks through joblib: local
processes, or a Dask cluster's workers inside ``joblib.parallel_config(backend="dask")``
(:mod:`markeval.geometry.tasks`); the results are identical.

These seven settings (``backend``, ``device``, ``dtype``, ``block_size``, ``progress``,
``neighbours``, ``n_jobs``) also come as one :class:`~markeval.geometry.arithmetic.Arithmetic`
(``arithmetic=``), checked once when it is built.

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

from dataclasses import dataclass

import numpy as np

from markeval._checks import check_embeddings, check_int, check_k, check_same_dim
from markeval.geometry._kernels import (BACKENDS, TILE_BYTES, Tiling, check_distance_range,
                                        direct_sq, knn_rows, membership_counts, point_dtype,
                                        read_only, tile_shape)
from markeval.geometry.arithmetic import (NEIGHBOURS, Arithmetic, check_neighbours,
                                          takes_arithmetic)
from markeval.geometry.index import (AuditSample, IndexAgreementError, IndexAgreementWarning,
                                     IndexSettings, NeighbourReport, default_probes, index_pass)
from markeval.geometry.tasks import knn_tiles, membership_tiles

__all__ = [
    "BACKENDS",
    "NEIGHBOURS",
    "Arithmetic",
    "AuditSample",
    "IndexAgreementError",
    "IndexAgreementWarning",
    "IndexSettings",
    "KNNBalls",
    "Membership",
    "MutualBalls",
    "NeighbourReport",
    "ball_membership",
    "check_neighbours",
    "default_probes",
    "knn_balls",
    "mutual_balls",
    "mutual_balls_at",
    "mutual_membership",
    "mutual_memberships",
    "pairwise_sq_distances",
    "sq_distance_blocks",
]

# sq_distance_blocks recomputes entries below this many error bounds directly (see there).
_NEAR_ZERO_BOUNDS = 1e4


@dataclass(frozen=True, eq=False)
class KNNBalls:
    """The k-NN balls of a point set, from :func:`knn_balls`.

    Attributes
    ----------
    points : numpy.ndarray
        shape ``(n, d)``, the centres (read-only; float32 input stays float32, anything else
        is float64).
    k : int
        Neighbours per ball.
    indices : numpy.ndarray
        int64, shape ``(n, k)``: ``indices[i]`` are the ``k`` nearest neighbours of point ``i``
        within the set, ``i`` itself excluded, nearest first, ties by lower index.
    sq_distances : numpy.ndarray
        float64, shape ``(n, k)``: their squared distances ``Σ (x − y)²`` (direct, float64).
    report : NeighbourReport or None
        How the index path decided these balls (None: the exact path).
    """

    points: np.ndarray
    k: int
    indices: np.ndarray
    sq_distances: np.ndarray
    report: NeighbourReport | None = None

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

    def prefix(self, k: int) -> KNNBalls:
        """The balls at a smaller ``k`` (at most :attr:`k`): each point's first ``k`` neighbours.

        Examples
        --------
        >>> import numpy as np
        >>> balls = knn_balls(np.array([[0.0], [1.0], [3.0], [7.0]]), k=2)
        >>> balls.prefix(1).sq_radii.tolist(), balls.sq_radii.tolist()
        ([1.0, 1.0, 4.0, 16.0], [9.0, 4.0, 9.0, 36.0])
        """
        k = check_int(k, "k", minimum=1)
        if k > self.k:
            raise ValueError(f"k must be at most the balls' k={self.k}, got {k}")
        if k == self.k:
            return self
        return KNNBalls(self.points, k, self.indices[:, :k], self.sq_distances[:, :k],
                        self.report)


@dataclass(frozen=True, eq=False)
class Membership:
    """Which balls contain which points, from :func:`ball_membership`.

    Attributes
    ----------
    balls_per_point : numpy.ndarray
        int64, shape ``(m,)``: for each query point, how many balls contain it.
    points_per_ball : numpy.ndarray
        int64, shape ``(n,)``: for each ball, how many query points it contains.
    report : NeighbourReport or None
        How the index path decided these counts (None: the exact path).
    """

    balls_per_point: np.ndarray
    points_per_ball: np.ndarray
    report: NeighbourReport | None = None

    @property
    def inside_any(self) -> np.ndarray:
        """bool, shape ``(m,)``: the query point lies in at least one ball."""
        return self.balls_per_point > 0


@dataclass(frozen=True, eq=False)
class MutualBalls:
    """The balls of two sets and who is inside whose, from :func:`mutual_balls`.

    Attributes
    ----------
    balls_a, balls_b : KNNBalls
    a_in_b : Membership
        Queries: the points of ``a``; balls: those of ``b``.
    b_in_a : Membership
    report : NeighbourReport or None
        How the index path decided all of it (None: the exact path).
    """

    balls_a: KNNBalls
    balls_b: KNNBalls
    a_in_b: Membership
    b_in_a: Membership
    report: NeighbourReport | None = None


# --------------------------------------------------------------------------- checks


def _points(x, name: str, min_rows: int = 1) -> np.ndarray:
    """Checked embeddings: float32 kept, anything else float64 (see the conventions)."""
    return check_embeddings(x, name, min_rows=min_rows, dtype=point_dtype(x))


def _owned(x: np.ndarray, given) -> np.ndarray:
    """``x`` as an array the result may keep read-only: copied when it is the caller's and the
    caller can still write to it. A read-only array that owns its memory is kept as it is (no
    copy of a large set: 0.9 GB for 3 * 10^5 samples, 384-d, float64)."""
    shared = isinstance(given, np.ndarray) and np.shares_memory(x, given)
    return x.copy() if shared and (given.flags.writeable or given.base is not None) else x


def _check_balls(value, name: str) -> KNNBalls:
    if not isinstance(value, KNNBalls):
        raise TypeError(f"{name} must be a KNNBalls from knn_balls(), got {type(value).__name__}")
    return value


def _index_pass(sets, k: int, memberships, arithmetic: Arithmetic, **options):
    """:func:`~markeval.geometry.index.index_pass` with ``arithmetic``'s settings."""
    return index_pass(sets, k, memberships, arithmetic.index, arithmetic.ops(),
                      block_size=arithmetic.block_size, progress=arithmetic.progress, **options)


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
    x = _points(x, "x")
    y = x if y is None else _points(y, "y")
    check_same_dim(x, y, "x", "y")
    rows, cols = np.divmod(np.arange(x.shape[0] * y.shape[0]), y.shape[0])
    return direct_sq(x, y, rows, cols).reshape(x.shape[0], y.shape[0])


@takes_arithmetic
def knn_balls(points, k: int, *, backend: str = "numpy", device=None, dtype: str = "float32",
              block_size=None, progress: bool = False, name: str = "points",
              neighbours="exact", n_jobs: int | None = 1,
              arithmetic: Arithmetic | None = None) -> KNNBalls:
    """The ``k`` nearest neighbours of every point within its own set, and its ball's radius.

    Exact by default: equal to sorting each row of :func:`pairwise_sq_distances` (self excluded
    by index, ties by lower index). Memory linear in ``n``.

    Parameters
    ----------
    points : array_like, shape (n, d)
        Finite values, ``n >= 2``.
    k : int
        ``1 <= k <= n − 1``.
    backend : {"numpy", "torch"}
    device : str, optional
        Torch device (``"cuda"``, ...); only ``None``/``"cpu"`` for NumPy.
    dtype : {"float32", "float64"}, default "float32"
        Arithmetic of the distance tiles. The result is exact either way (see Exactness);
        float32 is faster (measured: all of Mark-Evaluate on 10⁴ × 10⁴ word samples in 0.69
        of the float64 time; ``benchmarks/mark_evaluate_scale.py``).
    block_size : int or (int, int), optional
        Rows, or ``(rows, columns)``, per tile; by default tiles of 1,024 × 8,192 (64 MiB in
        float64), and 8,192 × 8,192 per task when ``n_jobs`` is not 1.
    progress : bool, default False
        Show a tqdm bar over tiles (or the index path's steps).
    name : str
        What to call ``points`` in error messages.
    neighbours : {"exact", "index"} or IndexSettings, default "exact"
        ``"index"``: from a neighbour index's candidates (see
        :mod:`markeval.geometry.index`); the result's ``report`` says how the balls were
        decided and what the audit found.
    n_jobs : int or None, default 1
        1: in this process. Otherwise the tiles run as tasks through joblib (None: all cores,
        or all workers of a Dask cluster; see :mod:`markeval.geometry.tasks`); same result.
    arithmetic : Arithmetic, optional
        ``backend``, ``device``, ``dtype``, ``block_size``, ``progress``, ``neighbours`` and
        ``n_jobs`` as one object (:class:`~markeval.geometry.arithmetic.Arithmetic`), instead
        of giving them loosely; giving both is refused.

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
    x = _owned(_points(points, name, min_rows=2), points)
    k = check_k(k, x.shape[0], set_name=name)
    if arithmetic.index is None:  # (index_pass checks the points as faiss reads them)
        check_distance_range([x], [name], arithmetic.dtype)
    if arithmetic.index is not None:
        knn, _, report = _index_pass([x], k, [], arithmetic, knn_sets=(0,), names=[name])
        indices, sq = knn[0]
    elif arithmetic.n_jobs != 1:
        indices, sq = knn_tiles(x, k, (arithmetic.backend, arithmetic.device, arithmetic.dtype),
                                arithmetic.task_tile, n_jobs=arithmetic.n_jobs,
                                progress=arithmetic.progress)
        report = None
    else:
        indices, sq = knn_rows(x, x, k, arithmetic.ops(), self_ids=np.arange(x.shape[0]),
                               block_size=arithmetic.block_size, progress=arithmetic.progress)
        report = None
    return KNNBalls(read_only(x), k, read_only(indices), read_only(sq), report)


def _exact_counts(x, y, r_cols, r_rows, arithmetic: Arithmetic):
    if arithmetic.n_jobs != 1:
        return membership_tiles(x, y, (arithmetic.backend, arithmetic.device, arithmetic.dtype),
                                r_cols=r_cols, r_rows=r_rows, tile=arithmetic.task_tile,
                                n_jobs=arithmetic.n_jobs, progress=arithmetic.progress)
    return membership_counts(x, y, arithmetic.ops(), r_cols=r_cols, r_rows=r_rows,
                             block_size=arithmetic.block_size, progress=arithmetic.progress)


@takes_arithmetic
def ball_membership(queries, balls: KNNBalls, *, backend: str = "numpy", device=None,
                    dtype: str = "float32", block_size=None, progress: bool = False,
                    name: str = "queries", neighbours="exact", n_jobs: int | None = 1,
                    arithmetic: Arithmetic | None = None) -> Membership:
    """Which balls of ``balls`` contain which ``queries`` (closed balls, exact by default).

    Parameters
    ----------
    queries : array_like, shape (m, d)
    balls : KNNBalls
        From :func:`knn_balls`.
    backend, device, dtype, block_size, progress, neighbours, n_jobs, arithmetic
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
    _check_balls(balls, "balls")
    x = _points(queries, name)
    check_same_dim(x, balls.points, name, "the balls' points")
    if arithmetic.index is None:  # (index_pass checks the points as faiss reads them)
        check_distance_range([balls.points, x], ["balls.points", name], arithmetic.dtype)
    if arithmetic.index is not None:
        _, counts, report = _index_pass([balls.points, x], balls.k, [(0, 1)], arithmetic,
                                        radii={0: balls.sq_radii}, names=["balls.points", name])
        per_ball, per_point = counts[(0, 1)]
        return Membership(read_only(per_point), read_only(per_ball), report)
    got = _exact_counts(x, balls.points, balls.sq_radii, None, arithmetic)["col"]
    return Membership(read_only(got[0]), read_only(got[1]))


@takes_arithmetic
def mutual_membership(balls_a: KNNBalls, balls_b: KNNBalls, *, backend: str = "numpy",
                      device=None, dtype: str = "float32", block_size=None,
                      progress: bool = False, neighbours="exact", n_jobs: int | None = 1,
                      arithmetic: Arithmetic | None = None) -> tuple[Membership, Membership]:
    """Both directions at once: points of ``a`` in the balls of ``b``, and of ``b`` in ``a``'s.

    One pass over the cross distances instead of two, with results identical to
    ``ball_membership(balls_a.points, balls_b)`` and ``ball_membership(balls_b.points, balls_a)``.

    Parameters
    ----------
    balls_a, balls_b : KNNBalls
    backend, device, dtype, block_size, progress, neighbours, n_jobs, arithmetic
        As in :func:`knn_balls`.

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
    _check_balls(balls_a, "balls_a")
    _check_balls(balls_b, "balls_b")
    check_same_dim(balls_a.points, balls_b.points, "balls_a", "balls_b")
    if arithmetic.index is None:  # (index_pass checks the points as faiss reads them)
        check_distance_range([balls_a.points, balls_b.points],
                             ["balls_a.points", "balls_b.points"], arithmetic.dtype)
    if arithmetic.index is not None:
        _, counts, report = _index_pass([balls_a.points, balls_b.points], balls_a.k,
                                        [(1, 0), (0, 1)], arithmetic,
                                        radii={0: balls_a.sq_radii, 1: balls_b.sq_radii},
                                        names=["balls_a.points", "balls_b.points"])
        return _memberships(counts, report)
    got = _exact_counts(balls_a.points, balls_b.points, balls_b.sq_radii, balls_a.sq_radii,
                        arithmetic)
    a_in_b = Membership(read_only(got["col"][0]), read_only(got["col"][1]))
    b_in_a = Membership(read_only(got["row"][0]), read_only(got["row"][1]))
    return a_in_b, b_in_a


@takes_arithmetic
def mutual_memberships(balls_a: KNNBalls, balls_b: KNNBalls, ks, *, backend: str = "numpy",
                       device=None, dtype: str = "float32", block_size=None,
                       progress: bool = False, neighbours="exact", n_jobs: int | None = 1,
                       arithmetic: Arithmetic | None = None
                       ) -> dict[int, tuple[Membership, Membership]]:
    """:func:`mutual_membership` of the balls at each ``k`` of ``ks`` (:meth:`KNNBalls.prefix`).

    Exactly ``{k: mutual_membership(balls_a.prefix(k), balls_b.prefix(k)) for k in ks}``. The
    exact path computes them so; the index path searches once for all of them: a centre's
    candidate list that runs past its largest radius settles its balls at every ``k``; each
    ``k``'s memberships carry that ``k``'s audit (:meth:`NeighbourReport.at`).

    Parameters
    ----------
    balls_a, balls_b : KNNBalls
        At the same ``k``, at least every value of ``ks``.
    ks : sequence of int
    backend, device, dtype, block_size, progress, neighbours, n_jobs, arithmetic
        As in :func:`knn_balls`.

    Returns
    -------
    dict
        ``k -> (a_in_b, b_in_a)``, in the order of ``ks``.

    Examples
    --------
    >>> import numpy as np
    >>> a = knn_balls(np.array([[0.0], [1.0], [2.0]]), k=2)
    >>> b = knn_balls(np.array([[1.5], [5.0], [9.0]]), k=2)
    >>> got = mutual_memberships(a, b, [1, 2])
    >>> [got[k][0].balls_per_point.tolist() for k in (1, 2)]
    [[1, 1, 2], [1, 2, 3]]
    """
    _check_balls(balls_a, "balls_a")
    _check_balls(balls_b, "balls_b")
    check_same_dim(balls_a.points, balls_b.points, "balls_a", "balls_b")
    if balls_a.k != balls_b.k:
        raise ValueError(f"balls_a and balls_b must have the same k, got {balls_a.k} and "
                         f"{balls_b.k}")
    ks = [check_int(k, f"ks[{i}]", minimum=1) for i, k in enumerate(ks)]
    if not ks or max(ks) > balls_a.k:
        raise ValueError(f"ks must be a non-empty sequence of k in 1..{balls_a.k} (the balls' "
                         f"k), got {ks}")
    if arithmetic.index is None:
        return {k: mutual_membership(balls_a.prefix(k), balls_b.prefix(k),
                                     arithmetic=arithmetic) for k in ks}
    order = sorted(set(ks))
    columns = [k - 1 for k in order]  # the k-th neighbour's squared distance: the radius at k
    _, counts, report = _index_pass(
        [balls_a.points, balls_b.points], max(order), [(1, 0), (0, 1)], arithmetic,
        radii={0: balls_a.sq_distances[:, columns], 1: balls_b.sq_distances[:, columns]},
        names=["balls_a.points", "balls_b.points"])
    by_k = {k: _memberships({pair: (c[0][:, col], c[1][:, col]) for pair, c in counts.items()},
                            report.at(col, k)) for col, k in enumerate(order)}
    return {k: by_k[k] for k in ks}


def _memberships(counts, report) -> tuple[Membership, Membership]:
    """``(a_in_b, b_in_a)`` from the index pass's counts of sets 0 (a) and 1 (b)."""
    b_balls, a_points = counts[(1, 0)]
    a_balls, b_points = counts[(0, 1)]
    return (Membership(read_only(a_points), read_only(b_balls), report),
            Membership(read_only(b_points), read_only(a_balls), report))


@takes_arithmetic
def mutual_balls(points_a, points_b, k: int, *, backend: str = "numpy", device=None,
                 dtype: str = "float32", block_size=None, progress: bool = False,
                 names: tuple[str, str] = ("points_a", "points_b"), neighbours="exact",
                 n_jobs: int | None = 1, arithmetic: Arithmetic | None = None) -> MutualBalls:
    """The k-NN balls of two sets and both memberships: what Mark-Evaluate and IPR count.

    Equal to :func:`knn_balls` of each set followed by :func:`mutual_membership`. With
    ``neighbours="index"`` all of it comes from one index over the union of the two sets,
    searched once per point (each candidate list serves the point's radius and its ball).

    Parameters
    ----------
    points_a, points_b : array_like, shape (n, d) and (m, d)
    k : int
        ``1 <= k < min(n, m)``.
    names : (str, str)
        What to call the two sets in error messages.
    backend, device, dtype, block_size, progress, neighbours, n_jobs, arithmetic
        As in :func:`knn_balls`.

    Returns
    -------
    MutualBalls

    Examples
    --------
    >>> import numpy as np
    >>> r = mutual_balls([[0.0], [1.0], [2.0]], [[1.5], [5.0], [9.0]], 1)
    >>> r.a_in_b.balls_per_point.tolist(), r.balls_b.sq_radii.tolist()
    ([1, 1, 2], [12.25, 12.25, 16.0])
    """
    a = _owned(_points(points_a, names[0], min_rows=2), points_a)
    b = _owned(_points(points_b, names[1], min_rows=2), points_b)
    check_same_dim(a, b, names[0], names[1])
    k = check_k(k, a.shape[0], set_name=names[0])
    check_k(k, b.shape[0], set_name=names[1])
    if arithmetic.index is None:
        balls_a = knn_balls(a, k, name=names[0], arithmetic=arithmetic)
        balls_b = knn_balls(b, k, name=names[1], arithmetic=arithmetic)
        return MutualBalls(balls_a, balls_b,
                           *mutual_membership(balls_a, balls_b, arithmetic=arithmetic))
    knn, counts, report = _index_pass([a, b], k, [(1, 0), (0, 1)], arithmetic,
                                      knn_sets=(0, 1), names=names)
    balls_a = KNNBalls(read_only(a), k, read_only(knn[0][0]), read_only(knn[0][1]), report)
    balls_b = KNNBalls(read_only(b), k, read_only(knn[1][0]), read_only(knn[1][1]), report)
    return MutualBalls(balls_a, balls_b, *_memberships(counts, report), report)


@takes_arithmetic
def mutual_balls_at(points_a, points_b, ks, *, backend: str = "numpy", device=None,
                    dtype: str = "float32", block_size=None, progress: bool = False,
                    names: tuple[str, str] = ("points_a", "points_b"), neighbours="exact",
                    n_jobs: int | None = 1, arithmetic: Arithmetic | None = None
                    ) -> tuple[KNNBalls, KNNBalls, dict[int, tuple[Membership, Membership]]]:
    """:func:`mutual_balls` at several ``k``: the balls of both sets at the largest ``k`` of
    ``ks``, and both memberships at every ``k`` (the balls at a smaller ``k`` are the first
    neighbours).

    Exactly ``knn_balls`` of each set at ``max(ks)`` followed by :func:`mutual_memberships`.
    With ``neighbours="index"`` all of it comes from one index over the union of the two sets,
    each point searched once, where those three calls build three indexes and search every
    point twice: a candidate list that runs past a ball's ``max(ks)``-th neighbour settles
    its ball at every ``k``.

    Parameters
    ----------
    points_a, points_b : array_like, shape (n, d) and (m, d)
    ks : sequence of int
        Each ``1 <= k < min(n, m)``.
    names, backend, device, dtype, block_size, progress, neighbours, n_jobs, arithmetic
        As in :func:`mutual_balls`.

    Returns
    -------
    (balls_a, balls_b, memberships)
        The :class:`KNNBalls` of each set at ``max(ks)``, and ``k -> (a_in_b, b_in_a)`` in the
        order of ``ks``, as :func:`mutual_memberships` returns them.

    Examples
    --------
    >>> import numpy as np
    >>> a, b, got = mutual_balls_at([[0.0], [1.0], [2.0]], [[1.5], [5.0], [9.0]], [1, 2])
    >>> a.k, [got[k][0].balls_per_point.tolist() for k in (1, 2)]
    (2, [[1, 1, 2], [1, 2, 3]])
    """
    a = _owned(_points(points_a, names[0], min_rows=2), points_a)
    b = _owned(_points(points_b, names[1], min_rows=2), points_b)
    check_same_dim(a, b, names[0], names[1])
    ks = [check_int(k, f"ks[{i}]", minimum=1) for i, k in enumerate(ks)]
    if not ks:
        raise ValueError("ks must be a non-empty sequence of positive ints, got []")
    top = check_k(max(ks), a.shape[0], set_name=names[0])
    check_k(top, b.shape[0], set_name=names[1])
    if arithmetic.index is None:
        balls_a = knn_balls(a, top, name=names[0], arithmetic=arithmetic)
        balls_b = knn_balls(b, top, name=names[1], arithmetic=arithmetic)
        return balls_a, balls_b, mutual_memberships(balls_a, balls_b, ks, arithmetic=arithmetic)
    order = sorted(set(ks))
    knn, counts, report = _index_pass([a, b], top, [(1, 0), (0, 1)], arithmetic,
                                      knn_sets=(0, 1), knn_ranks=order, names=names)
    balls_a = KNNBalls(read_only(a), top, read_only(knn[0][0]), read_only(knn[0][1]), report)
    balls_b = KNNBalls(read_only(b), top, read_only(knn[1][0]), read_only(knn[1][1]), report)
    by_k = {k: _memberships({pair: (c[0][:, col], c[1][:, col]) for pair, c in counts.items()},
                            report.at(col, k)) for col, k in enumerate(order)}
    return balls_a, balls_b, {k: by_k[k] for k in ks}


@takes_arithmetic
def sq_distance_blocks(x, y, *, backend: str = "numpy", device=None, dtype: str = "float64",
                       block_size: int | None = None, progress: bool = False,
                       arithmetic: Arithmetic | None = None):
    """Yield ``(start, stop, block)``: approximate squared distances of ``x[start:stop]`` to ``y``.

    The matmul identity, clipped at 0, as a float64 NumPy array of shape
    ``(stop − start, len(y))``; the error is up to about ``d·u·(‖x‖+‖y‖)²`` (see the module
    docstring), so use it for scores that are continuous in the distances, not for ``≤`` tests.
    Entries within ``10⁴`` error bounds of zero are recomputed directly in float64, so every
    entry is within ``10⁻⁴`` of the exact value relatively, and a duplicate point gives exactly
    0 on every machine (not 0 on one BLAS and 1e-16 on another).

    ``backend``, ``device``, ``dtype``, ``block_size``, ``progress`` and ``arithmetic`` are as
    in :func:`knn_balls` (``neighbours`` and ``n_jobs`` do not apply); the settings are checked
    at the call, before the first block.

    Examples
    --------
    >>> [(a, b, blk.round(6).tolist()) for a, b, blk in sq_distance_blocks([[0.0], [2.0]], [[1.0]])]
    [(0, 2, [[1.0], [1.0]])]
    """
    x = _points(x, "x")
    y = _points(y, "y")
    check_same_dim(x, y, "x", "y")
    ops = arithmetic.ops()
    # Whole rows per block (one column tile as wide as y), a block under 64 MiB by default.
    rows = (max(1, TILE_BYTES // (8 * y.shape[0])) if arithmetic.block_size is None
            else tile_shape(arithmetic.block_size, x.shape[0], y.shape[0])[0])
    tiling = Tiling(x, y, ops, (rows, y.shape[0]))
    for r0, r1, c0, c1 in tiling.tiles(arithmetic.progress):
        block = np.maximum(ops.numpy(tiling.block(r0, r1, c0, c1)), 0.0)
        e = tiling.margin(r0, r1, c0, c1)
        r_idx, c_idx = np.nonzero(block <= _NEAR_ZERO_BOUNDS * e)
        block[r_idx, c_idx] = direct_sq(x, y, r_idx + r0, c_idx)
        yield r0, r1, block
