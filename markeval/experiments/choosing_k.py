"""Choosing the neighbourhood size ``K`` the way the papers' "best K" columns do.

Mark-Evaluate reports its estimators at a default ``K`` and at the best single ``K`` of a
grid. Every reproduction stage picks that ``K`` by one rule, this one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["best_k"]


def best_k(values: Mapping[int, float]) -> int:
    """The ``K`` with the highest value; ties go to the smaller ``K``, and NaN never wins.

    Parameters
    ----------
    values : mapping of int to float
        One value per ``K`` of the grid (a mean correlation, a pooled τ), higher is better.

    Returns
    -------
    int
        The chosen ``K``. When every value is NaN nothing is better than anything, and the
        smallest ``K`` is returned (its value is NaN too, so the table shows it undefined).

    Examples
    --------
    >>> best_k({1: 0.90, 3: 0.93, 10: 0.93})
    3
    >>> best_k({1: float("nan"), 3: 0.5})
    3
    """
    if not values:
        raise ValueError("values must hold at least one K, got an empty mapping")

    def rank(k: int) -> tuple[float, int]:
        value = float(values[k])
        return (-math.inf if math.isnan(value) else value, -k)

    return int(max(values, key=rank))
