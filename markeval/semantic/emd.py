"""Exact Earth Mover's Distance between two weighted point sets.

The Earth Mover's Distance (EMD, Rubner et al. 2000) is the optimal value of the
transportation linear programme

.. math::

    \\min_{F \\ge 0} \\sum_{i,j} F_{ij} C_{ij}
    \\quad\\text{s.t.}\\quad \\sum_j F_{ij} = a_i,\\; \\sum_i F_{ij} = b_j,

with the masses ``a`` and ``b`` each normalised to sum 1. It is solved exactly by the network
simplex of POT (``ot.emd``), which returns an optimal flow ``F``; the distance is
``sum(F * C)``. MoverScore (:mod:`markeval.semantic.moverscore`) is built on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._signature import make_signature
from markeval._result import alias

__all__ = ["EMDResult", "earth_movers_distance", "optimal_flow"]

# The network simplex stops after this many pivots; sentence-sized problems (a few hundred
# points) need far fewer, and POT's default (1e5) can be hit by document-sized ones.
_MAX_ITER = 10_000_000


@dataclass(frozen=True, eq=False)
class EMDResult:
    """An optimal transport between two weighted point sets.

    Attributes
    ----------
    distance : float
        ``sum(flow * cost)``: the minimal cost of moving the mass of ``a`` onto ``b``.
    flow : numpy.ndarray
        float64, shape ``(len(a), len(b))``, read-only: ``flow[i, j]`` is the mass moved from
        point ``i`` of the first set to point ``j`` of the second. Rows sum to the normalised
        ``a``, columns to the normalised ``b``.
    signature : str
        The solver (POT's exact network simplex).
    score : float
        :attr:`distance` (the result protocol's headline; lower is better).
    item_scores : None
        One transport has no per-item scores.
    """

    higher_is_better: ClassVar[bool] = False
    item_scores: ClassVar[None] = None

    distance: float
    flow: np.ndarray
    signature: str

    score = alias("distance", "The headline score, :attr:`distance`.")


def _check_mass(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a 1-D array of numbers: {err}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of weights, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        i = int(np.argmin(np.isfinite(arr)))
        raise ValueError(f"{name}[{i}] is {arr[i]}: weights must be finite")
    if (arr < 0).any():
        i = int(np.argmin(arr))
        raise ValueError(f"{name}[{i}] = {arr[i]} is negative: weights must be >= 0")
    total = arr.sum()
    if total <= 0:
        raise ValueError(f"{name} has total mass 0: at least one weight must be positive")
    return arr / total


def _check_cost(cost, n: int, m: int) -> np.ndarray:
    try:
        arr = np.asarray(cost, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"cost must be a 2-D array of numbers: {err}") from None
    if arr.shape != (n, m):
        raise ValueError(
            f"cost has shape {arr.shape} but a has {n} and b has {m} points: it must be ({n}, {m})"
        )
    if not np.isfinite(arr).all():
        i, j = map(int, np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"cost[{i}, {j}] is {arr[i, j]}: costs must be finite")
    return arr


def optimal_flow(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """An optimal flow for validated, normalised masses (no checks: MoverScore's hot path)."""
    import ot

    # The two normalised masses may differ in the last bit; POT wants them equal.
    b = b * (a.sum() / b.sum())
    return ot.emd(a, b, cost, numItermax=_MAX_ITER)


def earth_movers_distance(a, b, cost) -> EMDResult:
    """Exact EMD between masses ``a`` (on ``len(a)`` points) and ``b`` under ``cost``.

    Parameters
    ----------
    a : array, shape (n,)
        Non-negative weights of the first point set; normalised here to sum 1.
    b : array, shape (m,)
        Non-negative weights of the second point set; normalised here to sum 1.
    cost : array, shape (n, m)
        ``cost[i, j]``: the cost of moving one unit of mass from point ``i`` to point ``j``
        (any finite numbers; a metric for a true distance).

    Returns
    -------
    EMDResult
        The distance and an optimal flow (the flow need not be unique; the distance is).

    Raises
    ------
    ValueError
        NaN/inf or negative weights, zero total mass, a cost matrix of the wrong shape or with
        NaN/inf entries.

    Examples
    --------
    Two points of mass 1/2 each on a line at 0 and 1, moved onto points at 0 and 3:

    >>> cost = [[0, 3], [1, 2]]
    >>> r = earth_movers_distance([1, 1], [1, 1], cost)
    >>> round(r.distance, 4), r.flow.tolist()   # 0 -> 0 and 1 -> 3: (0 + 2) / 2
    (1.0, [[0.5, 0.0], [0.0, 0.5]])
    """
    a = _check_mass(a, "a")
    b = _check_mass(b, "b")
    cost = _check_cost(cost, a.size, b.size)
    flow = optimal_flow(a, b, cost)
    flow.setflags(write=False)
    return EMDResult(distance=float((flow * cost).sum()), flow=flow,
                     signature=make_signature("emd", solver="pot-emd"))
