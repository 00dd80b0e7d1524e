"""Closed-population size estimators from capture counts (no embeddings).

* :func:`lincoln_petersen` — two occasions: ``N = M C / R``;
* :func:`chapman` — Chapman's bias-corrected two-occasion form and its variance;
* :func:`schnabel` — Schnabel's multiple census, ``N = Σ C_t M_t / Σ R_t``;
* :func:`m0_mle` — the maximum-likelihood estimate of model ``M0`` of Otis et al. (1978)
  (equal capture probability on every occasion) with a likelihood-ratio confidence interval.

No recapture means the data carry no information on the population size: the estimate is
``inf`` and ``no_recapture`` is set, instead of a division error or an arbitrary cap.

Counts are named, and ordered, ``(marked, captured, recaptured)`` everywhere. Every estimate
exposes ``score`` (= ``estimate``) for the shared result protocol.

Examples
--------
>>> lincoln_petersen(marked=100, captured=80, recaptured=20).estimate
400.0
>>> m0_mle(occasions=20, captures=80, distinct=20).estimate
20.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import ClassVar

from markeval._checks import check_confidence, check_int, check_list
from markeval._signature import make_signature
from markeval._result import alias

__all__ = [
    "PetersenEstimate",
    "ChapmanEstimate",
    "SchnabelEstimate",
    "M0Estimate",
    "lincoln_petersen",
    "chapman",
    "schnabel",
    "m0_log_likelihood",
    "m0_mle",
]


@dataclass(frozen=True)
class PetersenEstimate:
    """Lincoln–Petersen estimate; ``estimate`` is ``inf`` when ``no_recapture``."""

    estimate: float
    marked: int
    captured: int
    recaptured: int
    no_recapture: bool
    signature: str
    higher_is_better: ClassVar[bool] = True  # protocol default: a size has no better side

    score = alias("estimate", "The estimate (result-protocol name).")

    item_scores = None


@dataclass(frozen=True)
class ChapmanEstimate:
    """Chapman's estimate ``(M+1)(C+1)/(R+1) − 1`` and its variance (Seber 1982, eq. 3.7)."""

    estimate: float
    variance: float
    marked: int
    captured: int
    recaptured: int
    signature: str
    higher_is_better: ClassVar[bool] = True  # protocol default: a size has no better side

    score = alias("estimate", "The estimate (result-protocol name).")

    item_scores = None


@dataclass(frozen=True)
class SchnabelEstimate:
    """Schnabel estimate; ``estimate`` is ``inf`` when ``no_recapture`` (``Σ R_t = 0``)."""

    estimate: float
    sum_cm: float
    sum_r: int
    occasions: int
    no_recapture: bool
    signature: str
    higher_is_better: ClassVar[bool] = True  # protocol default: a size has no better side

    score = alias("estimate", "The estimate (result-protocol name).")

    item_scores = None


@dataclass(frozen=True)
class M0Estimate:
    """Model-M0 MLE (an integer ``N >= distinct``) with its likelihood-ratio interval.

    ``estimate`` and ``ci_high`` are ``inf`` when ``no_recapture`` (``captures == distinct``):
    then the likelihood increases without bound in ``N``.
    """

    estimate: float
    ci_low: float
    ci_high: float
    log_likelihood: float
    occasions: int
    captures: int
    distinct: int
    confidence: float
    no_recapture: bool
    signature: str
    higher_is_better: ClassVar[bool] = True  # protocol default: a size has no better side

    score = alias("estimate", "The estimate (result-protocol name).")

    item_scores = None


def _check_two_occasion(marked, captured, recaptured):
    m = check_int(marked, "marked", minimum=0)
    c = check_int(captured, "captured", minimum=0)
    r = check_int(recaptured, "recaptured", minimum=0)
    if r > min(m, c):
        raise ValueError(
            f"recaptured={r} exceeds min(marked={m}, captured={c}): recaptures are marked "
            "animals among the captured")
    return m, c, r


def lincoln_petersen(marked, captured, recaptured) -> PetersenEstimate:
    """Lincoln–Petersen estimate ``N = M C / R``.

    Parameters
    ----------
    marked : int
        ``M``, animals marked on the first occasion.
    captured : int
        ``C``, animals caught on the second occasion.
    recaptured : int
        ``R``, marked animals among them. ``R = 0`` gives ``inf`` and ``no_recapture=True``.

    Examples
    --------
    >>> lincoln_petersen(10, 15, 5).estimate
    30.0
    >>> lincoln_petersen(10, 15, 0).no_recapture
    True
    """
    m, c, r = _check_two_occasion(marked, captured, recaptured)
    est = math.inf if r == 0 else m * c / r
    return PetersenEstimate(float(est), m, c, r, r == 0, make_signature("lincoln_petersen"))


def chapman(marked, captured, recaptured) -> ChapmanEstimate:
    """Chapman's bias-corrected estimate ``(M+1)(C+1)/(R+1) − 1``, finite even when ``R = 0``.

    The variance is ``(M+1)(C+1)(M−R)(C−R) / ((R+1)² (R+2))``.

    Examples
    --------
    >>> e = chapman(10, 15, 5)
    >>> round(e.estimate, 4), round(e.variance, 4)
    (28.3333, 34.9206)
    """
    m, c, r = _check_two_occasion(marked, captured, recaptured)
    est = (m + 1) * (c + 1) / (r + 1) - 1
    var = (m + 1) * (c + 1) * (m - r) * (c - r) / ((r + 1) ** 2 * (r + 2))
    return ChapmanEstimate(float(est), float(var), m, c, r, make_signature("chapman"))


def schnabel(*, marked, captured, recaptured) -> SchnabelEstimate:
    """Schnabel's multiple-census estimate ``N = Σ_t C_t M_t / Σ_t R_t``.

    The counts are keyword-only, named as in :func:`lincoln_petersen`: three sequences of the
    same length, easy to pass in the wrong order by position.

    Parameters
    ----------
    marked, captured, recaptured : sequences of int, one entry per occasion
        ``M_t`` marked animals at large before occasion ``t``, ``C_t`` caught on occasion
        ``t``, ``R_t`` of them already marked. Every unmarked animal caught is marked, so
        the history must satisfy ``M_1 = 0``, ``M_{t+1} = M_t + C_t − R_t`` and
        ``R_t <= min(C_t, M_t)``; anything else is refused, naming the first occasion
        that breaks it.

    Examples
    --------
    Ricker-style census: three occasions of 10 fish, everything caught is marked.

    >>> schnabel(marked=[0, 10, 18], captured=[10, 10, 10], recaptured=[0, 2, 5]).estimate
    40.0
    """
    ms, cs, rs = (check_list(v, name, "a sequence of ints, one per occasion") for v, name in
                  ((marked, "marked"), (captured, "captured"), (recaptured, "recaptured")))
    if not (len(ms) == len(cs) == len(rs)):
        raise ValueError(
            f"marked, captured and recaptured need one entry per occasion, got lengths "
            f"{len(ms)}, {len(cs)}, {len(rs)}")
    if not cs:
        raise ValueError("schnabel needs at least one occasion, got none")
    sum_cm = 0
    sum_r = 0
    for t, (c, r, m) in enumerate(zip(cs, rs, ms)):
        c = check_int(c, f"captured[{t}]", minimum=0)
        r = check_int(r, f"recaptured[{t}]", minimum=0)
        m = check_int(m, f"marked[{t}]", minimum=0)
        if r > min(c, m):
            raise ValueError(
                f"recaptured[{t}]={r} exceeds min(captured[{t}]={c}, marked[{t}]={m})")
        expected = 0 if t == 0 else ms[t - 1] + cs[t - 1] - rs[t - 1]
        if m != expected:
            rule = ("no animal is marked before the first occasion" if t == 0 else
                    f"marked[{t - 1}] + captured[{t - 1}] - recaptured[{t - 1}] = "
                    f"{ms[t - 1]} + {cs[t - 1]} - {rs[t - 1]}: every unmarked animal caught "
                    "is marked")
            raise ValueError(f"marked[{t}]={m} is impossible: it must be {expected} ({rule})")
        sum_cm += c * m
        sum_r += r
    est = math.inf if sum_r == 0 else sum_cm / sum_r
    return SchnabelEstimate(float(est), float(sum_cm), sum_r, len(cs), sum_r == 0,
                            make_signature("schnabel"))


def _xlogx(x: float) -> float:
    return 0.0 if x == 0 else x * math.log(x)


def m0_log_likelihood(n_pop, occasions, captures, distinct) -> float:
    """Log-likelihood of model M0 at population size ``N``, profiled over ``p = n/(tN)``.

    ``L(N) = ln N! − ln (N−M)! + n ln n + (tN−n) ln(tN−n) − tN ln(tN)`` (Otis et al. 1978,
    up to a constant), with ``t`` occasions, ``n`` captures and ``M`` distinct animals.

    Examples
    --------
    The paper's Theorem A.3 at ``|S| = 10``, ``K = 1``: ``L(20) ≈ −158`` and ``L(21) ≈ −159``.

    >>> round(m0_log_likelihood(20, 20, 80, 20), 2), round(m0_log_likelihood(21, 20, 80, 20), 2)
    (-157.83, -159.12)
    """
    t, n, m = occasions, captures, distinct
    big = t * n_pop
    return (math.lgamma(n_pop + 1) - math.lgamma(n_pop - m + 1) + _xlogx(n) + _xlogx(big - n)
            - _xlogx(big))


def _delta(n_pop: int, t: int, n: int, m: int) -> float:
    """``L(N+1) − L(N)``, in a form that does not cancel for large ``N``."""
    a = t * n_pop - n
    b = t * n_pop
    # (a+t)ln(a+t) − a ln a = t ln(a+t) + a ln(1 + t/a), and likewise for b.
    a_term = 0.0 if a == 0 else a * math.log1p(t / a)
    return (math.log1p(m / (n_pop + 1 - m)) + t * math.log1p(-n / (b + t)) + a_term
            - b * math.log1p(t / b))


def _first_true(pred, lo: int, hi: int | None = None) -> int:
    """Smallest ``N >= lo`` with ``pred(N)`` for a monotone predicate (false…false true…).

    ``hi``, when given, is a point known to satisfy ``pred``; otherwise it is found by doubling
    (no cap: the loop ends because ``pred`` becomes true).
    """
    if pred(lo):
        return lo
    if hi is None:
        step = 1
        while not pred(lo + step):
            step *= 2
        low, high = lo + step // 2, lo + step
    else:
        low, high = lo, hi
    while high - low > 1:
        mid = (low + high) // 2
        if pred(mid):
            high = mid
        else:
            low = mid
    return high


def m0_mle(occasions, captures, distinct, *, confidence: float = 0.95) -> M0Estimate:
    """Exact integer MLE of population size under model M0, with a likelihood-ratio interval.

    ``L(N)`` is unimodal in ``N``: the step ``L(N+1) − L(N)`` is positive, then negative for
    good (it changes sign once; it is *not* monotone: past the MLE it dips and creeps back
    towards 0 from below, so ``L`` is not concave). The MLE is therefore the smallest
    ``N >= M`` with ``L(N+1) − L(N) <= 0``, found by doubling then bisection on that sign: the
    search has no upper cap and cannot stop early. The interval holds every integer ``N >= M`` with
    ``2 (L(N̂) − L(N)) <= χ²₁(confidence)``.

    Parameters
    ----------
    occasions : int
        ``t >= 1``.
    captures : int
        ``n``, total captures over all occasions, ``M <= n <= t M``.
    distinct : int
        ``M >= 1``, distinct animals caught.

    Examples
    --------
    >>> e = m0_mle(occasions=5, captures=30, distinct=20)
    >>> e.estimate, e.ci_low <= e.estimate <= e.ci_high
    (28.0, True)
    >>> m0_mle(occasions=5, captures=20, distinct=20).no_recapture
    True
    """
    t = check_int(occasions, "occasions", minimum=1)
    n = check_int(captures, "captures", minimum=0)
    m = check_int(distinct, "distinct", minimum=1)
    if not (m <= n <= t * m):
        raise ValueError(
            f"captures={n} must lie between distinct={m} and occasions*distinct={t * m}")
    confidence = check_confidence(confidence)
    sig = make_signature("m0_mle", confidence=confidence)
    if n == m:
        # Every animal seen once: L(N) increases for ever, the estimate is unbounded.
        return M0Estimate(math.inf, float(m), math.inf, math.nan, t, n, m, confidence,
                          True, sig)
    mle = _first_true(lambda x: _delta(x, t, n, m) <= 0, m)
    l_max = m0_log_likelihood(mle, t, n, m)
    crit = NormalDist().inv_cdf(0.5 + confidence / 2) ** 2 / 2

    def outside(x: int) -> bool:
        return l_max - m0_log_likelihood(x, t, n, m) > crit

    # Above the MLE, L decreases: the first N outside the region ends it.
    high = _first_true(outside, mle) - 1
    # Below, L increases towards the MLE: the first N inside, in [M, N̂], starts it.
    low = _first_true(lambda x: not outside(x), m, mle)
    return M0Estimate(float(mle), float(low), float(high), float(l_max), t, n, m,
                      confidence, False, sig)
