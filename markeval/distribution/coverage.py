"""Density and coverage (Naeem et al. 2020): k-NN balls of the reference set only.

Improved precision and recall (:mod:`markeval.distribution.ipr`) trust the balls of *both*
sets, so one outlier with a huge ball inflates precision (candidate outliers) or recall
(reference outliers), and neither says how many candidates crowd a region. Naeem, Oh, Uh, Choi
and Yoo ("Reliable Fidelity and Diversity Metrics for Generative Models", ICML 2020) use the
reference balls alone. With ``r_i`` the distance from reference point ``x_i`` to its ``k``-th
nearest neighbour among the *other* reference points, ``N`` reference and ``M`` candidate
points ``y_j``:

* **density** = ``(1 / (k M)) Σ_j Σ_i 1[‖y_j − x_i‖ < r_i]``: how many reference balls hold
  each candidate, on average, over ``k``. Around 1 when the candidates are distributed like the
  reference (each reference point lies in ``k`` balls other than its own on average); above 1
  when candidates crowd the dense regions of the reference; not bounded by 1.
* **coverage** = ``(1 / N) Σ_i 1[min_j ‖y_j − x_i‖ < r_i]``: the share of reference balls
  that hold at least one candidate, in [0, 1].

The balls are *open* (strict ``<``), as in the authors' package ``prdc``; elsewhere
:mod:`markeval.geometry` counts closed balls. A candidate equal to a reference point is inside
that point's ball only when the radius is positive, so coverage of a set against itself is 1
unless some point is repeated more than ``k`` times (then its radius is 0). The paper uses
``k = 5``.

The counts are exact and computed in tiles by :mod:`markeval.geometry`: one pass over the
reference set for the radii, one over the candidate-reference distances for the counts,
memory linear in the data. ``neighbours="index"`` takes both from a neighbour index instead
(:mod:`markeval.geometry.index`); the result's ``neighbour_report`` then says how the balls
were decided and what the audit against exact distances found.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from markeval._checks import check_embeddings, check_k, check_same_dim
from markeval._result import alias
from markeval._signature import make_signature
from markeval.geometry import (Arithmetic, KNNBalls, NeighbourReport, ball_membership,
                               knn_balls)
from markeval.geometry._kernels import point_dtype, read_only
from markeval.geometry.arithmetic import takes_arithmetic

__all__ = ["DensityCoverageResult", "density_coverage"]


@dataclass(frozen=True)
class DensityCoverageResult:
    """Density and coverage of a candidate set against a reference set.

    Attributes
    ----------
    density : float
        Mean number of reference balls holding a candidate, over ``k`` (>= 0, not bounded).
    coverage : float
        Share of reference balls holding at least one candidate, in [0, 1].
    k : int
    n_reference, n_candidate : int
    signature : str
    neighbour_report : NeighbourReport or None
        How ``neighbours="index"`` decided the radii and the counts: the reports of the two
        passes (the reference's balls, then the candidates in them), added. None: the exact
        path.
    score : float
        :attr:`density`, the result protocol's headline: the fidelity half, as precision is
        IPR's. Coverage (diversity) matters as much; the metric registry lists it as a metric
        of its own.
    item_scores : None
        A set-level metric.
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    density: float
    coverage: float
    k: int
    n_reference: int
    n_candidate: int
    signature: str
    neighbour_report: NeighbourReport | None = None

    score = alias("density")


def _open(balls: KNNBalls) -> KNNBalls:
    """The same balls, open: ``‖y − x‖ < r`` tested as the geometry's closed test.

    The geometry decides ``D <= r²`` exactly between float64 values (``D`` the direct squared
    distance). For floats ``D < r²`` is ``D <= r²⁻``, the next float below ``r²``, so lowering
    each squared radius by one ulp turns every closed decision into the open one, exactly, on
    every backend. A zero radius becomes the smallest negative float: nothing is inside.
    """
    sq = balls.sq_distances.copy()
    sq[:, -1] = np.nextafter(sq[:, -1], -np.inf)
    return replace(balls, sq_distances=read_only(sq))


@takes_arithmetic
def density_coverage(reference, candidate, *, k: int = 5, backend: str = "numpy", device=None,
                     dtype: str = "float64", block_size=None, progress: bool = False,
                     neighbours="exact", n_jobs: int | None = 1,
                     arithmetic: Arithmetic | None = None) -> DensityCoverageResult:
    """Density and coverage of ``candidate`` against ``reference`` (open k-NN balls).

    Parameters
    ----------
    reference : array_like, shape (n, d)
        Finite embeddings, at least ``k + 1`` rows (each ball needs ``k`` other points).
    candidate : array_like, shape (m, d)
        Finite embeddings, at least one row.
    k : int, default 5
        Neighbour rank that sets each reference ball's radius (the paper's default);
        ``1 <= k < n``.
    backend, device, dtype, block_size, progress, neighbours, n_jobs, arithmetic
        How the distances are computed, as in :func:`markeval.geometry.knn_balls` (or all of
        them as one :class:`~markeval.geometry.Arithmetic`). The counts are exact on every
        backend and in either dtype; ``dtype`` defaults to float64 here.

    Returns
    -------
    DensityCoverageResult

    Examples
    --------
    Reference points 0, 1, 2, 3 and 10 on a line, k = 1: the radii are 1, 1, 1, 1 and 7, and
    the balls are open, so 0.5 lies in the balls of 0 and 1, 1 only in its own (the balls of 0
    and 2 stop short of it), and 6 in the ball of 10 alone: 4 ball hits over 3 candidates.
    The balls of 0, 1 and 10 hold a candidate; those of 2 and 3 do not.

    >>> import numpy as np
    >>> ref = np.array([[0.0], [1.0], [2.0], [3.0], [10.0]])
    >>> r = density_coverage(ref, np.array([[0.5], [1.0], [6.0]]), k=1)
    >>> round(r.density, 4), r.coverage
    (1.3333, 0.6)
    >>> r.signature  # doctest: +ELLIPSIS
    'density_coverage|k:1|version:...'
    """
    # float32 points stay float32, as in the geometry (half the memory; every decision is
    # made in float64 from them either way).
    ref = check_embeddings(reference, "reference", min_rows=2, dtype=point_dtype(reference))
    cand = check_embeddings(candidate, "candidate", dtype=point_dtype(candidate))
    check_same_dim(ref, cand, "reference", "candidate")
    k = check_k(k, ref.shape[0], set_name="reference")
    balls = knn_balls(ref, k, name="reference", arithmetic=arithmetic)
    inside = ball_membership(cand, _open(balls), name="candidate", arithmetic=arithmetic)
    report = (None if balls.report is None or inside.report is None
              else balls.report + inside.report)
    return DensityCoverageResult(
        density=float(inside.balls_per_point.sum() / (k * cand.shape[0])),
        coverage=float((inside.points_per_ball > 0).mean()),
        k=k,
        n_reference=ref.shape[0],
        n_candidate=cand.shape[0],
        signature=make_signature("density_coverage", k=k,
                                 neighbours=None if report is None else report.method),
        neighbour_report=report,
    )
