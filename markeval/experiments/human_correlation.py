"""Meta-evaluation: how well a metric agrees with human judgements, and whether two metrics differ.

Two procedures recur in every correlation table of the MT and summarisation literature:

* **Correlation per group, then averaged.** Summary-level correlation on TAC is computed per
  topic (a metric's scores for the topic's system summaries against the people's scores of the
  same summaries) and then averaged over topics. A topic where the people (or the metric) gave
  every summary the same score has no correlation at all; :func:`grouped_correlation` reports
  such topics by name and leaves them out of the mean, instead of letting a NaN through.
  The confidence interval resamples *topics* (the unit the average runs over).
* **Williams' test** for two dependent correlations that share one variable (two metrics
  correlated with the same human scores), as WMT's metrics tasks use it: is metric 1's
  correlation with people significantly higher than metric 2's, given how strongly the two
  metrics correlate with each other? :func:`williams_test`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy import stats as _scipy_stats

from markeval._checks import (check_bool, check_choice, check_int, check_list, check_number,
                              check_numbers, check_resampling, check_same_length)
from markeval._signature import make_signature
from markeval._tolerance import constant
from markeval.resampling import BootstrapResult, percentile_interval, replicates
from markeval.stats import METHODS, correlation
from markeval._result import alias

__all__ = ["GroupedCorrelationResult", "WilliamsResult", "grouped_correlation", "williams_test"]


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' test of H0: ρ12 ≤ ρ13 against H1: ρ12 > ρ13 (one-sided).

    Attributes
    ----------
    t : float
        The test statistic, Student-t with ``df`` degrees of freedom under H0.
    df : int
        ``n - 3``.
    p_value : float
        One-sided p-value: small when metric 1 correlates with the human scores
        significantly more strongly than metric 2 does.
    signature : str

    For the result protocol, the headline ``score`` is the p-value, so
    ``higher_is_better`` is False (smaller is stronger evidence); ``item_scores`` is None.
    """

    t: float
    df: int
    p_value: float
    signature: str
    higher_is_better: ClassVar[bool] = False

    score = alias("p_value", "The one-sided p-value.")

    item_scores = None


def _check_r(value, name: str) -> float:
    value = check_number(value, name)
    if not -1.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a correlation in [-1, 1], got {value}")
    return value


#: Tolerance that decides Williams' boundary cases (r23 = ±1, a singular correlation matrix).
#: Correlations computed in float64 carry rounding errors of order 1e-15 that depend on the
#: machine's summation order, so exact comparisons would decide these cases by the last bit;
#: 1e-9 is a million times that error and far closer to ±1 than two different metrics get.
BOUNDARY_TOL = 1e-9


def williams_test(r12: float, r13: float, r23: float, n: int, *,
                  absolute: bool = False) -> WilliamsResult:
    """Williams' test for two correlations that share a variable.

    Variable 1 is the human score, 2 and 3 two metrics scored on the same ``n`` items:
    ``r12`` and ``r13`` are the metrics' correlations with the people, ``r23`` the metrics'
    correlation with each other. The statistic (Williams 1959; Steiger 1980, Eq. 7; used by
    Graham & Baldwin 2014 and the WMT metrics tasks) is

    .. math::

        t = (r_{12} - r_{13}) \\sqrt{\\frac{(n-1)(1+r_{23})}
            {2\\frac{n-1}{n-3}|R| + \\bar r^2 (1-r_{23})^3}},
        \\quad |R| = 1 - r_{12}^2 - r_{13}^2 - r_{23}^2 + 2 r_{12} r_{13} r_{23},
        \\quad \\bar r = (r_{12} + r_{13})/2,

    Student-t with ``n - 3`` degrees of freedom. The more the two metrics agree with each
    other (``r23`` near 1), the smaller a difference in their correlations with the people
    that counts as significant.

    **Boundaries.** Where the formula reads 0/0 the answer is defined by what the data can
    be, with the tolerance :data:`BOUNDARY_TOL` instead of exact float equality:

    * ``r23 >= 1 - tol``: metric 3 is metric 2 up to an increasing linear map, so
      ``r12 - r13`` is 0 in every sample. Its null distribution is a point mass at 0, and
      the test returns ``t = 0``, ``p = 1`` (not 0.5: the observed 0 is certain, not a draw
      from a Student t).
    * With ``absolute=True`` the test compares ``|r12|`` with ``|r13|`` (MoverScore Table 1
      reports absolute correlations, because distances correlate negatively): each metric
      is first turned to correlate positively with the people, which flips ``r23`` when
      exactly one of them is negative. Two metrics that are exact negations of each other
      (``r23 <= -1 + tol``) then have equal ``|r|``: ``t = 0``, ``p = 1``.
    * Signed exact negations (``r23 <= -1 + tol``, ``absolute=False``) raise ``ValueError``:
      ``r13 = -r12`` by construction, so the question reduces to the sign of ``r12``.
    * A variance estimate of 0 otherwise (``|R| = 0`` with ``r13 = -r12``: the human
      score is an exact linear function of the two metrics) raises ``ValueError``.

    Parameters
    ----------
    r12, r13 : float
        Correlation of metric 1 and of metric 2 with the human scores.
    r23 : float
        Correlation between the two metrics.
    n : int
        Number of items (segments or systems), at least 4.
    absolute : bool, default False
        Test ``|rho12| > |rho13|`` instead of ``rho12 > rho13``.

    Returns
    -------
    WilliamsResult

    Raises
    ------
    ValueError
        A correlation outside [-1, 1]; ``n < 4``; three correlations no data set can have
        (``|R| < 0``); the degenerate cases above.

    Examples
    --------
    >>> res = williams_test(0.6, 0.5, 0.8, n=560)
    >>> round(res.t, 3), res.df, round(res.p_value, 5)
    (4.656, 557, 0.0)
    >>> round(williams_test(0.9, 0.8, 0.8, n=6).p_value, 3)  # 6 systems: not significant
    0.281

    A metric and its negation, compared by the size of their correlations:

    >>> res = williams_test(-0.3, 0.3, -1.0, n=560, absolute=True)
    >>> res.t, res.p_value
    (0.0, 1.0)
    """
    r12, r13, r23 = (_check_r(v, name) for v, name in ((r12, "r12"), (r13, "r13"), (r23, "r23")))
    n = check_int(n, "n", minimum=4, why="Williams' test needs n >= 4 items (df = n - 3)")
    absolute = check_bool(absolute, "absolute")
    inputs = f"r12={r12:.6g}, r13={r13:.6g}, r23={r23:.6g}, n={n}"
    det = 1.0 - r12**2 - r13**2 - r23**2 + 2.0 * r12 * r13 * r23
    if det < -BOUNDARY_TOL:
        raise ValueError(
            f"{inputs} cannot come from one data set: their correlation matrix has "
            f"determinant {det:.3g} < 0"
        )
    df = n - 3
    signature = make_signature("williams", n=n, tail="one", absolute=absolute or None)
    if absolute:
        if r12 < 0:
            r12, r23 = -r12, -r23
        if r13 < 0:
            r13, r23 = -r13, -r23
        if r23 <= -1.0 + BOUNDARY_TOL:  # turned to agree with the people, still opposed:
            r23 = -r23                  # only possible when both |r| are 0, so they are equal
    if r23 >= 1.0 - BOUNDARY_TOL:
        return WilliamsResult(0.0, df, 1.0, signature)
    if r23 <= -1.0 + BOUNDARY_TOL:
        raise ValueError(
            f"Williams' test is undefined for {inputs}: the two metrics are exact negations of "
            "each other (r23 = -1), so r13 = -r12 by construction. Compare the sizes of the "
            "correlations (absolute=True gives t = 0, p = 1), or test whether r12 > 0."
        )
    mean_r = (r12 + r13) / 2.0
    denominator = 2.0 * (n - 1) / (n - 3) * max(det, 0.0) + mean_r**2 * (1.0 - r23) ** 3
    if denominator <= BOUNDARY_TOL:
        raise ValueError(
            f"Williams' test is undefined for {inputs}: its variance estimate "
            f"2(n-1)/(n-3)|R| + mean_r^2 (1 - r23)^3 = {denominator:.3g} is 0 within "
            f"{BOUNDARY_TOL:g} (the human score is an exact linear function of the two metrics)"
        )
    t = (r12 - r13) * math.sqrt((n - 1) * (1.0 + r23) / denominator)
    return WilliamsResult(float(t), df, float(_scipy_stats.t.sf(t, df)), signature)


@dataclass(frozen=True)
class GroupedCorrelationResult:
    """A correlation computed within each group and averaged over the groups.

    Attributes
    ----------
    method : str
        ``'pearson'``, ``'kendall'`` or ``'spearman'``.
    value : float
        Mean of the per-group coefficients over the groups where it is defined.
    ci_low, ci_high : float
        Percentile bootstrap interval of that mean, resampling groups; NaN without resamples
        or with fewer than 2 defined groups.
    per_group : tuple of (group, float)
        Each defined group's coefficient, in first-appearance order.
    undefined : tuple of (group, str)
        Groups left out of the mean, each with the reason (a constant score, or fewer than
        3 items).
    n_groups : int
        All groups, defined or not.
    signature : str
    interval : BootstrapResult or None
        The bootstrap in markeval's shared interval shape; None without one.

    ``score`` is ``value``; ``item_scores`` are the defined groups' coefficients (the items
    the mean runs over).
    """

    method: str
    value: float
    ci_low: float
    ci_high: float
    per_group: tuple[tuple[Hashable, float], ...]
    undefined: tuple[tuple[Hashable, str], ...]
    n_groups: int
    signature: str
    interval: BootstrapResult | None = field(default=None, repr=False)
    higher_is_better: ClassVar[bool] = True

    score = alias("value", "Mean of the per-group coefficients (alias of ``value``).")

    @property
    def item_scores(self) -> tuple[float, ...]:
        """The coefficient of each defined group, in first-appearance order."""
        return tuple(v for _, v in self.per_group)

    @property
    def n_defined(self) -> int:
        """Number of groups that entered the mean."""
        return len(self.per_group)


def undefined_reason(x: np.ndarray, y: np.ndarray) -> str | None:
    """Why the correlation of ``x`` with ``y`` is undefined (too few items, a constant side),
    or None when it is defined."""
    if x.size < 3:
        return f"{x.size} item(s); a correlation needs at least 3"
    for name, values in (("metric", x), ("human", y)):
        if constant(values):  # a metric score equal up to rounding noise carries no order
            return f"constant {name} score ({values[0]:g} for all {values.size} items)"
    return None


def grouped_correlation(metric: Sequence[float], human: Sequence[float],
                        groups: Sequence[Hashable], method: str = "pearson", *,
                        n_resamples: int = 1000, confidence: float = 0.95,
                        seed: int = 0) -> GroupedCorrelationResult:
    """Correlate metric and human scores within each group, then average over groups.

    This is the summary-level correlation of the summarisation literature (TAC: group =
    topic; items = the topic's summaries). Groups where the coefficient is undefined — the
    people or the metric gave every item the same score, or fewer than 3 items — are listed
    in ``undefined`` with the reason and left out of the mean.

    Parameters
    ----------
    metric, human : sequence of float
        Paired scores, one pair per item; finite.
    groups : sequence of hashable
        Group label of each item.
    method : {'pearson', 'kendall', 'spearman'}
    n_resamples : int, default 1000
        Bootstrap resamples of the defined groups' coefficients (0: no interval).
    confidence : float, default 0.95
    seed : int, default 0

    Returns
    -------
    GroupedCorrelationResult

    Raises
    ------
    ValueError
        Lengths differ, non-finite scores, unknown method, or no group has a defined
        correlation.

    Examples
    --------
    >>> res = grouped_correlation([1, 2, 3, 1, 2, 3, 5, 6, 7], [1, 2, 3, 3, 2, 1, 4, 4, 4],
    ...                           ["a", "a", "a", "b", "b", "b", "c", "c", "c"], n_resamples=0)
    >>> round(res.value, 6), [(g, round(r, 6)) for g, r in res.per_group]
    (0.0, [('a', 1.0), ('b', -1.0)])
    >>> res.undefined
    (('c', 'constant human score (4 for all 3 items)'),)
    """
    check_choice(method, "method", METHODS)
    metric_arr = check_numbers(metric, "metric")
    human_arr = check_numbers(human, "human")
    groups = check_list(groups, "groups", "a sequence of group labels")
    n_resamples, confidence, seed = check_resampling(n_resamples, confidence, seed)
    check_same_length(metric_arr, human_arr, "metric", "human")
    check_same_length(metric_arr, groups, "metric", "groups")
    for name, values in (("metric", metric_arr), ("human", human_arr)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ValueError(f"{name} score {values[bad[0]]} at index {int(bad[0])} is not finite")
    order: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        order.setdefault(g, []).append(i)
    defined, undefined = [], []
    for g, idx in order.items():
        x, y = metric_arr[idx], human_arr[idx]
        reason = undefined_reason(x, y)
        if reason is None:
            defined.append((g, correlation(x, y, method, n_resamples=0).value))
        else:
            undefined.append((g, reason))
    if not defined:
        raise ValueError(
            f"the {method} correlation is undefined in every one of the {len(order)} groups, "
            f"e.g. group {undefined[0][0]!r}: {undefined[0][1]}"
        )
    values = np.array([v for _, v in defined])
    signature = make_signature(
        f"grouped-{method}", groups=len(order), defined=values.size,
        resamples=n_resamples or None, seed=seed if n_resamples else None,
    )
    interval = None
    if n_resamples and values.size >= 2:  # resample the groups' coefficients
        means = replicates(values.size, lambda idx: values[idx].mean(axis=1),
                           n_resamples=n_resamples, seed=seed)
        interval = percentile_interval(values.mean(), means, confidence=confidence,
                                       n_resamples=n_resamples, seed=seed, signature=signature)
    low, high = (interval.ci_low, interval.ci_high) if interval else (math.nan, math.nan)
    return GroupedCorrelationResult(method, float(values.mean()), low, high, tuple(defined),
                                    tuple(undefined), len(order), signature, interval)
