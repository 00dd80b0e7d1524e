"""Improved precision and recall (Kynkäänniemi et al. 2019), and the realism score.

Each set approximates its own manifold by the union of its k-NN balls: around every point a
closed ball reaching to its ``k``-th nearest neighbour in the same set. Then

* **precision** = share of candidate points inside at least one ball of the reference set
  (are the candidates realistic?);
* **recall** = share of reference points inside at least one ball of the candidate set
  (does the candidate set cover the reference?).

The paper uses ``k = 3``. All ball tests are exact and run in tiles through
:mod:`markeval.geometry` (three passes: each set against itself for the radii, then one shared
pass over the cross distances for both directions); ``neighbours="index"`` takes them from a
neighbour index instead (:mod:`markeval.geometry.index`), and the result's
``neighbour_report`` says how the balls were decided and what an audit against exact distances
found, and ``estimated_error`` what that audit implies for the two scores. The realism scores
are always computed from all distances.

The *realism score* of a candidate ``x`` (the paper's Sec. 5) is
``max_j r_j / ‖x − r_j‖`` over reference points ``r_j`` with ball radius ``r_j``: above 1
exactly when ``x`` is inside some ball. As in the paper, the half of the reference balls with
the largest radii is discarded first (radius above the median), because a few outliers with huge
balls would make everything near them look "realistic". The authors' code computes the same
ratio with *squared* distances (so its scores are the squares of the paper's formula, with the
same ranking); we follow the paper's formula.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_embeddings, check_same_dim
from markeval._signature import make_signature
from markeval.geometry import (Arithmetic, MutualBalls, NeighbourReport, knn_balls,
                               mutual_balls, sq_distance_blocks)
from markeval.geometry.arithmetic import takes_arithmetic
from markeval._result import alias

__all__ = ["IPRResult", "improved_precision_recall",
           "improved_precision_recall_from_balls", "realism_scores"]


@dataclass(frozen=True)
class IPRResult:
    """Improved precision and recall of a candidate set against a reference set.

    Attributes
    ----------
    precision : float
        Share of candidates inside some reference ball.
    recall : float
        Share of references inside some candidate ball.
    k : int
    n_reference, n_candidate : int
    realism : tuple of float or None
        Per-candidate realism scores when asked for (``realism=True``), else None.
    signature : str
    neighbour_report : NeighbourReport or None
        How ``neighbours="index"`` decided the balls (None: the exact path).
    estimated_error : (float, float) or None
        The audit's estimate of ``(precision, recall)`` minus the exact path's: the mean, over
        the audited points of each set, of the index path's "inside some ball" minus the
        exact one's (the difference estimator of the share's error). None on the exact path
        or without an audit.
    score : float
        :attr:`precision`, the result protocol's headline. One number has to be chosen, and
        precision is the quality half (are the candidates realistic?), the one the paper's
        realism score refines; recall (coverage, diversity) is as important, and the metric
        registry lists it as a metric of its own.
    item_scores : None
        A set-level metric (per-candidate realism is :attr:`realism`).
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    precision: float
    recall: float
    k: int
    n_reference: int
    n_candidate: int
    realism: tuple[float, ...] | None
    signature: str
    neighbour_report: NeighbourReport | None = None
    estimated_error: tuple[float, float] | None = None

    score = alias("precision")


def _check_sets(reference, candidate):
    # k is checked against each set by knn_balls, the one place that uses it.
    ref = check_embeddings(reference, "reference", min_rows=2)
    cand = check_embeddings(candidate, "candidate", min_rows=2)
    check_same_dim(ref, cand, "reference", "candidate")
    return ref, cand


def _realism(ref_balls, cand, arithmetic: Arithmetic) -> np.ndarray:
    sq_radii = ref_balls.sq_radii
    kept = sq_radii <= np.median(sq_radii)
    radii = np.sqrt(sq_radii[kept])
    out = np.empty(len(cand))
    for start, stop, block in sq_distance_blocks(cand, ref_balls.points[kept],
                                                 arithmetic=arithmetic):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = radii[None, :] / np.sqrt(block)
        # A candidate equal to a kept reference point is infinitely realistic (0/0 included).
        ratio[block == 0.0] = np.inf
        out[start:stop] = ratio.max(axis=1)
    return out


@takes_arithmetic
def realism_scores(reference, candidate, k: int = 3, *, backend: str = "numpy", device=None,
                   dtype: str = "float64", block_size: int | None = None,
                   progress: bool = True, arithmetic: Arithmetic | None = None) -> np.ndarray:
    """Realism score of each candidate: ``max_j r_j / ‖x − r_j‖`` over the smaller half of balls.

    ``backend``, ``device``, ``dtype``, ``block_size``, ``progress`` or all of them as
    ``arithmetic``: as in :func:`markeval.geometry.knn_balls` (exact balls; the distances to
    them are approximate, float64 by default).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(candidate),)``; ``inf`` for a candidate equal to a kept
        reference point (distances near zero are computed exactly, on every machine).

    Examples
    --------
    >>> import numpy as np
    >>> ref = np.array([[0.0], [1.0], [2.0], [3.0], [50.0]])
    >>> realism_scores(ref, np.array([[1.5], [2.5], [10.0]]), k=1,
    ...                progress=False).round(3).tolist()
    [2.0, 2.0, 0.143]
    """
    ref, cand = _check_sets(reference, candidate)
    return _realism(knn_balls(ref, k, name="reference", arithmetic=arithmetic), cand,
                    arithmetic)


def improved_precision_recall(reference, candidate, k: int = 3, *, realism: bool = False,
                              backend: str = "numpy", device=None, dtype: str | None = None,
                              block_size: int | None = None, progress: bool = True,
                              neighbours="exact", n_jobs: int | None = 1) -> IPRResult:
    """Improved precision and recall of ``candidate`` against ``reference`` (k-NN balls).

    Parameters
    ----------
    reference, candidate : array_like, shape (n, d) and (m, d)
        Finite embeddings, at least ``k + 1`` rows each.
    k : int, default 3
        Neighbour rank that sets each ball's radius (the paper's default).
    realism : bool, default False
        Also return each candidate's realism score.
    backend, device, block_size
        Passed to :mod:`markeval.geometry`; the counts are exact on every backend.
    dtype : {None, "float32", "float64"}
        Arithmetic of the distance tiles; None: geometry's default (float32) for the ball
        counts (exact either way) and float64 for the realism scores (approximate values).
    neighbours : {"exact", "index"} or geometry.IndexSettings, default "exact"
        ``"index"``: the ball counts from a neighbour index (see the module docstring).
    n_jobs : int or None, default 1
        Exact path only: run the distance tiles as tasks (local processes, or a Dask cluster
        inside ``joblib.parallel_config(backend="dask")``); the same result.
    progress : bool, default True
        Show a progress bar for each pass over the distances.

    Returns
    -------
    IPRResult

    Examples
    --------
    Reference points 0..4 on a line with k = 1 (all radii 1) cover [−1, 5], so two of the four
    candidates are inside; the candidates' balls ([−0.5, 1.5], [0.5, 2.5], and two small ones
    around 9) hold the reference points 0, 1 and 2.

    >>> import numpy as np
    >>> ref = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    >>> cand = np.array([[0.5], [1.5], [9.0], [9.5]])
    >>> r = improved_precision_recall(ref, cand, k=1, progress=False)
    >>> r.precision, r.recall
    (0.5, 0.6)
    >>> r.signature  # doctest: +ELLIPSIS
    'ipr|k:1|version:...'
    """
    realism = check_bool(realism, "realism")
    # dtype=None is two dtypes (see above), so it is not an Arithmetic's: no arithmetic= here.
    arithmetic = Arithmetic(backend=backend, device=device, block_size=block_size,
                            progress=progress, neighbours=neighbours, n_jobs=n_jobs,
                            **({} if dtype is None else {"dtype": dtype}))
    # The sets, their dimension and k are checked there, naming the sets as here.
    g = mutual_balls(reference, candidate, k, names=("reference", "candidate"),
                     arithmetic=arithmetic)
    scores = None
    if realism:
        scores = tuple(float(v) for v in _realism(
            g.balls_a, g.balls_b.points, replace(arithmetic, dtype=dtype or "float64")))
    return improved_precision_recall_from_balls(g, realism=scores)


def improved_precision_recall_from_balls(balls: MutualBalls, *,
                                         realism: tuple[float, ...] | None = None) -> IPRResult:
    """Improved precision and recall from both sets' balls and memberships drawn beforehand.

    The array core of :func:`improved_precision_recall`, for code that already holds
    ``mutual_balls(reference, candidate, k)`` (Mark-Evaluate's geometry is the same).

    Parameters
    ----------
    balls : geometry.MutualBalls
        ``mutual_balls(reference, candidate, k)``: set ``a`` the reference, ``b`` the
        candidate.
    realism : tuple of float, optional
        Realism scores to carry (see :func:`realism_scores`).

    Examples
    --------
    >>> import numpy as np
    >>> from markeval.geometry import mutual_balls
    >>> g = mutual_balls([[0.0], [1.0], [2.0], [3.0], [4.0]], [[0.5], [1.5], [9.0], [9.5]], 1)
    >>> r = improved_precision_recall_from_balls(g)
    >>> r.precision, r.recall
    (0.5, 0.6)
    """
    g, report = balls, balls.report
    return IPRResult(
        precision=float(g.b_in_a.inside_any.mean()),
        recall=float(g.a_in_b.inside_any.mean()),
        k=g.balls_a.k,
        n_reference=len(g.balls_a),
        n_candidate=len(g.balls_b),
        realism=realism,
        signature=make_signature("ipr", k=g.balls_a.k,
                                 neighbours=None if report is None else report.method),
        neighbour_report=report,
        estimated_error=_estimated_error(g),
    )


def _estimated_error(g) -> tuple[float, float] | None:
    """``(precision, recall)`` errors from the audit (sets 0: reference, 1: candidate)."""
    sample = None if g.report is None else g.report.sample
    if sample is None or not {(0, 1), (1, 0)} <= sample.per_point.keys():
        return None

    def share_error(queries_in_balls, pair, queries: int) -> float:
        rows = sample.rows[queries]
        exact = sample.per_point[pair][:, 0] > 0
        return float(queries_in_balls.inside_any[rows].mean() - exact.mean())

    return (share_error(g.b_in_a, (0, 1), 1), share_error(g.a_in_b, (1, 0), 0))
