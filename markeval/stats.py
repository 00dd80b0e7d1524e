"""Correlation between a metric and human judgements, with bootstrap confidence intervals.

A metric is judged by how well its scores agree with people's. This module
computes the three coefficients used for that — Pearson's *r* (linear agreement),
Spearman's *ρ* (Pearson on ranks) and Kendall's *τ*-b (pairwise order agreement,
ties corrected as in :func:`scipy.stats.kendalltau`) — and a paired percentile
bootstrap confidence interval for each: resample the (metric, human) pairs with
replacement, recompute the coefficient, and read the interval off the quantiles.

The bootstrap is vectorised. Pearson and Spearman work on a matrix of resampled
indices (one row per resample; ranks are computed row-wise in numpy), so 1000
resamples of 560 pairs take well under a second. Kendall's τ-b needs every pair of
points: a resample is the original points with multiplicities ``c`` (how often each
was drawn), and the concordance sum and the two tie corrections are quadratic forms
``cᵀ M c`` in ``n × n`` sign matrices, so the whole bootstrap is three matrix
products — ``O(B n²)`` time, with the sign matrices built in column blocks so that
no temporary exceeds a few million entries. That is quick for ``n`` up to a few
thousand (n = 560, B = 1000: a fraction of a second). The Kendall point estimate is
``O(n²)`` as well (about a second at n = 5000; scipy's is ``O(n log n)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from markeval._checks import check_choice, check_numbers, check_resampling, check_same_length
from markeval._rowwise import pearson_rows
from markeval._signature import make_signature
from markeval.resampling import BootstrapResult, multiplicities, percentile_interval, replicates
from markeval._result import alias

__all__ = ["METHODS", "Correlation", "correlation", "kendall", "pearson", "spearman"]

METHODS = ("pearson", "kendall", "spearman")

_SYMBOLS = {"pearson": "r", "kendall": "τ", "spearman": "ρ"}
# Upper bound on the entries of one temporary array, so memory stays ~100 MB at most.
_BLOCK_ENTRIES = 4_000_000


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its bootstrap confidence interval.

    Attributes
    ----------
    method : str
        ``'pearson'``, ``'kendall'`` (τ-b) or ``'spearman'``.
    value : float
        The coefficient on all ``n`` pairs, in [-1, 1].
    ci_low, ci_high : float
        Percentile bootstrap interval; NaN when ``n_resamples`` is 0 or when every
        resample was undefined.
    n : int
        Number of (x, y) pairs.
    confidence : float
        Coverage of the interval, e.g. 0.95.
    n_resamples : int
        Bootstrap resamples drawn.
    n_undefined : int
        Resamples dropped because x or y was constant in them (the coefficient is
        undefined there); the interval uses the other ``n_resamples - n_undefined``.
    signature : str
        Settings that reproduce the numbers.
    interval : BootstrapResult or None
        The same interval in the shape every markeval bootstrap shares (with the median
        and the spread of the replicates); None without resamples.

    ``score`` is ``value`` (the result-protocol name); ``item_scores`` is None.
    """

    method: str
    value: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float
    n_resamples: int
    n_undefined: int
    signature: str
    interval: BootstrapResult | None = field(default=None, repr=False)
    higher_is_better: ClassVar[bool] = True

    score = alias("value", "The coefficient (alias of ``value``).")

    item_scores = None  # a correlation describes the whole set of pairs.

    def __str__(self) -> str:
        text = f"{_SYMBOLS[self.method]} = {self.value:.3f}"
        if not math.isnan(self.ci_low):
            text += f" [{self.ci_low:.3f}, {self.ci_high:.3f}]"
        return text + f" (n={self.n})"


def _as_vector(values, name: str) -> np.ndarray:
    arr = check_numbers(values, name)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name} contains {bad.size} non-finite value(s): {arr[i]} at index {i}; "
            "drop or impute them first"
        )
    return arr


def _rank_rows(a: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share their mean rank) along each row, like scipy's rankdata."""
    rows, n = a.shape
    order = np.argsort(a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, axis=1)
    positions = np.broadcast_to(np.arange(n), (rows, n))
    starts_group = np.ones((rows, n), dtype=bool)
    starts_group[:, 1:] = s[:, 1:] != s[:, :-1]
    ends_group = np.ones((rows, n), dtype=bool)
    ends_group[:, :-1] = starts_group[:, 1:]
    # First and last sorted position of the tie group that each sorted position belongs to.
    first = np.maximum.accumulate(np.where(starts_group, positions, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends_group, positions, n)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((rows, n))
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


def _spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return pearson_rows(_rank_rows(a), _rank_rows(b))


def _kendall_counts(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Kendall τ-b of the multisets that take point ``i`` ``counts[k, i]`` times.

    With ``sx[i, j] = sign(x_i - x_j)`` (likewise ``sy``), the concordance sum over
    pairs of drawn points is ``cᵀ (sx ∘ sy) c / 2``, and the numbers of pairs not
    tied in x (in y) are ``cᵀ |sx| c / 2`` (``cᵀ |sy| c / 2``): repeated draws of one
    point are tied in both and drop out. τ-b is the first over the geometric mean
    of the other two.
    """
    n = x.size
    concordance = np.zeros(counts.shape[0])
    untied_x = np.zeros(counts.shape[0])
    untied_y = np.zeros(counts.shape[0])
    width = max(1, _BLOCK_ENTRIES // max(n, counts.shape[0]))
    for start in range(0, n, width):
        cols = slice(start, start + width)
        sx = np.sign(x[:, None] - x[None, cols])
        sy = np.sign(y[:, None] - y[None, cols])
        c_cols = counts[:, cols]
        concordance += np.einsum("kj,kj->k", counts @ (sx * sy), c_cols)
        untied_x += np.einsum("kj,kj->k", counts @ np.abs(sx), c_cols)
        untied_y += np.einsum("kj,kj->k", counts @ np.abs(sy), c_cols)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = concordance / np.sqrt(untied_x * untied_y)
    return np.where((untied_x == 0) | (untied_y == 0), np.nan, np.clip(tau, -1.0, 1.0))


def _bootstrap(method: str, x: np.ndarray, y: np.ndarray, n_resamples: int,
               seed: int) -> np.ndarray:
    """The coefficient on ``n_resamples`` paired resamples (NaN where undefined)."""
    n = x.size

    def coefficient(idx: np.ndarray) -> np.ndarray:
        if method == "kendall":
            return _kendall_counts(x, y, multiplicities(idx, n).astype(np.float64))
        if method == "spearman":
            return _spearman_rows(x[idx], y[idx])
        return pearson_rows(x[idx], y[idx])

    # A quarter of the shared block size: ranks and centred copies add a few temporaries.
    return replicates(n, coefficient, n_resamples=n_resamples, seed=seed,
                      block_entries=_BLOCK_ENTRIES // 4)


def correlation(x, y, method: str = "pearson", *, n_resamples: int = 1000,
                confidence: float = 0.95, seed: int = 0) -> Correlation:
    """Correlation of paired scores with a percentile bootstrap confidence interval.

    Parameters
    ----------
    x, y : sequence of float
        Paired scores, e.g. a metric's and the human judgements of the same
        segments (or systems). Same length, at least 3, finite, neither constant.
    method : {'pearson', 'kendall', 'spearman'}
        Pearson's r, Kendall's τ-b (ties corrected, as ``scipy.stats.kendalltau``)
        or Spearman's ρ (Pearson on average ranks).
    n_resamples : int, default 1000
        Paired bootstrap resamples (pairs drawn with replacement); 0 skips the
        interval (``ci_low`` and ``ci_high`` are NaN).
    confidence : float, default 0.95
        Coverage of the percentile interval.
    seed : int, default 0
        Seed of the resampling, for reproducible intervals.

    Returns
    -------
    Correlation
        Resamples in which x or y is constant are dropped and counted in
        ``n_undefined``.

    Raises
    ------
    TypeError
        Non-numeric input or settings of the wrong type.
    ValueError
        Unknown method, lengths that differ, fewer than 3 pairs, NaN or infinite
        values, constant x or y (the correlation is undefined), settings out of range.

    See Also
    --------
    pearson, kendall, spearman

    Examples
    --------
    >>> c = correlation([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], method="spearman")
    >>> print(c)
    ρ = 0.800 [0.111, 1.000] (n=5)
    >>> c.n_resamples, c.n_undefined  # resamples that drew one point 5 times
    (1000, 2)
    """
    check_choice(method, "method", METHODS)
    x = _as_vector(x, "x")
    y = _as_vector(y, "y")
    check_same_length(x, y, "x", "y")
    if x.size < 3:
        raise ValueError(f"a correlation needs at least 3 pairs, got {x.size}")
    n_resamples, confidence, seed = check_resampling(n_resamples, confidence, seed)
    for name, values in (("x", x), ("y", y)):
        if np.ptp(values) == 0:
            raise ValueError(
                f"the {method} correlation is undefined because {name} is constant "
                f"(all {values.size} values equal {values[0]:g})"
            )
    if method == "kendall":
        value = _kendall_counts(x, y, np.ones((1, x.size)))[0]
    elif method == "spearman":
        value = _spearman_rows(x[None], y[None])[0]
    else:
        value = pearson_rows(x[None], y[None])[0]
    signature = make_signature(
        method, n=x.size, ci="percentile" if n_resamples else "none",
        confidence=confidence if n_resamples else None,
        resamples=n_resamples if n_resamples else None, seed=seed if n_resamples else None,
    )
    if not n_resamples:
        return Correlation(method, float(value), math.nan, math.nan, int(x.size), confidence,
                           0, 0, signature)
    interval = percentile_interval(value, _bootstrap(method, x, y, n_resamples, seed),
                                   confidence=confidence, n_resamples=n_resamples, seed=seed,
                                   signature=signature)
    return Correlation(method, float(value), interval.ci_low, interval.ci_high, int(x.size),
                       confidence, n_resamples, interval.n_undefined, signature, interval)


def pearson(x, y, *, n_resamples: int = 1000, confidence: float = 0.95,
            seed: int = 0) -> Correlation:
    """Pearson's r with a paired bootstrap confidence interval.

    .. math:: r = \\frac{\\sum_i (x_i - \\bar x)(y_i - \\bar y)}
              {\\sqrt{\\sum_i (x_i - \\bar x)^2}\\sqrt{\\sum_i (y_i - \\bar y)^2}}

    Parameters and errors are those of :func:`correlation`.

    Returns
    -------
    Correlation

    Examples
    --------
    Deviations from the means are (-1.5, -0.5, 0.5, 1.5) and (-1.5, 0.5, -0.5, 1.5):
    their products sum to 4 and each sums of squares to 5, so r = 4 / 5.

    >>> r = pearson([1, 2, 3, 4], [1, 3, 2, 4], n_resamples=0)
    >>> round(r.value, 9), r.ci_low
    (0.8, nan)

    With six points the 95% interval is wide:

    >>> print(pearson([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6]))
    r = 0.886 [0.522, 0.991] (n=6)
    """
    return correlation(x, y, "pearson", n_resamples=n_resamples, confidence=confidence,
                       seed=seed)


def kendall(x, y, *, n_resamples: int = 1000, confidence: float = 0.95,
            seed: int = 0) -> Correlation:
    """Kendall's τ-b with a paired bootstrap confidence interval.

    .. math:: \\tau_b = \\frac{C - D}{\\sqrt{(C + D + T_x)(C + D + T_y)}}

    with C concordant pairs, D discordant pairs, and ``T_x`` (``T_y``) pairs tied
    only in x (only in y); as :func:`scipy.stats.kendalltau` (``variant='b'``).
    Parameters and errors are those of :func:`correlation`. Time and memory grow
    as ``n²`` (see the module notes).

    Returns
    -------
    Correlation

    Examples
    --------
    Of the 6 pairs of points below, 5 are ordered alike by x and y and 1 is not:

    >>> tau = kendall([1, 2, 3, 4], [1, 3, 2, 4], n_resamples=0)
    >>> round(tau.value, 4)
    0.6667
    """
    return correlation(x, y, "kendall", n_resamples=n_resamples, confidence=confidence,
                       seed=seed)


def spearman(x, y, *, n_resamples: int = 1000, confidence: float = 0.95,
             seed: int = 0) -> Correlation:
    """Spearman's ρ (Pearson's r on average ranks) with a paired bootstrap interval.

    Parameters and errors are those of :func:`correlation`.

    Returns
    -------
    Correlation

    Examples
    --------
    A monotone relation has ρ = 1 even when it is far from linear:

    >>> spearman([1, 2, 3, 4], [1, 10, 100, 1000], n_resamples=0).value
    1.0

    Tied values share the mean of their ranks: x's ranks are (1, 2.5, 2.5, 4).

    >>> round(spearman([1, 2, 2, 3], [1, 2, 3, 4], n_resamples=0).value, 4)
    0.9487
    """
    return correlation(x, y, "spearman", n_resamples=n_resamples, confidence=confidence,
                       seed=seed)
