"""The divergence frontier of two histograms: MAUVE's curve, its area and the frontier integral.

Pillutla et al. (NeurIPS 2021; JMLR 2023) compare a model's distribution ``Q`` with the human
one ``P`` through two kinds of error: text the model makes that humans would not (type I,
``KL(Q ‖ R)``) and human text the model misses (type II, ``KL(P ‖ R)``), both measured against a
mixture ``R_λ = λ P + (1 − λ) Q``. Tracing λ over (0, 1) gives the *divergence frontier*; mapped
through ``exp(−c ·)`` it becomes a curve from ``(1, 0)`` to ``(0, 1)``, and **MAUVE** is the
area under it (1 when ``P = Q``). The **frontier integral** summarises the same frontier in
closed form, 0 when ``P = Q`` and 1 when their supports are disjoint.

This module works on histograms (two probability vectors over the same buckets); turning two
sets of embeddings into histograms (quantisation) is a separate step. The settings are those of
the authors' reference implementation (``mauve-text``): ``n_weights = 25`` mixture weights
evenly spaced in ``[1e-6, 1 − 1e-6]``, the two extreme points added, ``c = 5``; its ``mauve``
takes the mean of the areas integrated along either axis, which for this monotone curve is the
area of one polygon, computed here along the curve's own order. MAUVE* (JMLR 2023) is the same
on histograms smoothed with Krichevsky–Trofimov's add-1/2 (:func:`bucket_histogram`).

Examples
--------
Three buckets, by hand: ``P = (1/2, 1/2, 0)`` and ``Q = (0, 1/2, 1/2)`` share half their mass.

>>> p, q = [0.5, 0.5, 0.0], [0.0, 0.5, 0.5]
>>> frontier_integral(p, q)  # 2 x (1/2 / 4 + 0 + 1/2 / 4): the shared bucket costs nothing
0.5
>>> r = mauve_from_histograms(p, q)
>>> round(r.score, 4), r.divergence_curve.shape
(0.0926, (27, 2))
>>> mauve_from_histograms(p, p).score
1.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from markeval._checks import check_int, check_number
from markeval._signature import make_signature

__all__ = ["FrontierResult", "bucket_histogram", "divergence_curve", "frontier_area",
           "frontier_integral", "mauve_from_histograms"]

#: The ends of the mixture weights (λ = 0 and 1 would make one divergence infinite).
_EDGE = 1e-6


def _histogram(values, name: str) -> np.ndarray:
    """``values`` as a probability vector: 1-D, finite, non-negative, a positive total."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D histogram, got shape {x.shape}")
    if not np.isfinite(x).all() or (x < 0).any():
        bad = x[~np.isfinite(x) | (x < 0)][0]
        raise ValueError(f"{name} must hold finite non-negative masses, got {bad!r}")
    total = x.sum()
    if total <= 0:
        raise ValueError(f"{name} has no mass (its entries sum to {total!r})")
    return x / total


def _pair(p, q) -> tuple[np.ndarray, np.ndarray]:
    p, q = _histogram(p, "p"), _histogram(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same buckets, got {p.size} and {q.size}")
    return p, q


def _kl_to_mixtures(a: np.ndarray, mixtures: np.ndarray) -> np.ndarray:
    """``KL(a ‖ r)`` for every row ``r`` of ``mixtures`` (each positive wherever ``a`` is)."""
    support = a > 0
    return (a[support] * np.log(a[support] / mixtures[:, support])).sum(axis=1)


def divergence_curve(p, q, *, scaling: float = 5.0, n_weights: int = 25) -> np.ndarray:
    """The points ``(exp(−c KL(Q ‖ R_λ)), exp(−c KL(P ‖ R_λ)))`` of the divergence frontier.

    Parameters
    ----------
    p, q : array_like, shape (buckets,)
        Histograms of the reference (human) and the candidate (model) distribution; any
        non-negative masses, normalised here.
    scaling : float, default 5
        The constant ``c``.
    n_weights : int, default 25
        Mixture weights λ, evenly spaced in ``[1e-6, 1 − 1e-6]``.

    Returns
    -------
    numpy.ndarray, shape (n_weights + 2, 2)
        In the order of λ, from the extreme point ``(1, 0)`` (λ → 0) to ``(0, 1)`` (λ → 1).

    Examples
    --------
    >>> divergence_curve([0.5, 0.5], [0.5, 0.5], n_weights=3).tolist()
    [[1.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [0.0, 1.0]]
    """
    p, q = _pair(p, q)
    scaling = check_number(scaling, "scaling")
    if not scaling > 0:
        raise ValueError(f"scaling must be > 0, got {scaling!r}")
    n_weights = check_int(n_weights, "n_weights", minimum=1)
    weights = np.linspace(_EDGE, 1 - _EDGE, n_weights)[:, None]
    mixtures = weights * p + (1 - weights) * q
    inner = np.column_stack([_kl_to_mixtures(q, mixtures), _kl_to_mixtures(p, mixtures)])
    return np.exp(-scaling * np.vstack([[0.0, np.inf], inner, [np.inf, 0.0]]))


def frontier_area(curve) -> float:
    """The area under a divergence curve (:func:`divergence_curve`), MAUVE: the polygon from
    ``(0, 0)`` along the curve, by the trapezoid rule in the curve's own order.

    Examples
    --------
    >>> frontier_area([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    0.5
    """
    c = np.asarray(curve, dtype=np.float64)
    if c.ndim != 2 or c.shape[1] != 2 or len(c) < 2:
        raise ValueError(f"curve must have shape (points >= 2, 2), got {c.shape}")
    x, y = c[:, 0], c[:, 1]
    return float(np.sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2))


def frontier_integral(p, q) -> float:
    """The frontier integral of Pillutla et al. (JMLR 2023): 0 for equal histograms, 1 for
    disjoint supports (lower is closer).

    Per bucket, with masses ``a = p_i`` and ``b = q_i``: nothing where both are 0 or equal;
    ``max(a, b) / 4`` where one is 0; otherwise ``(a + b) / 4 − a b (log a − log b) / (2 (a −
    b))``. The sum is doubled, so that disjoint supports give 1.

    Examples
    --------
    >>> frontier_integral([1.0, 0.0], [0.0, 1.0]), frontier_integral([0.3, 0.7], [0.3, 0.7])
    (1.0, 0.0)
    """
    p, q = _pair(p, q)
    both = (p > 0) & (q > 0)
    # Equal masses contribute 0 (the limit of the general term); they would divide by 0.
    general = both & (np.abs(p - q) > 1e-8)
    a, b = p[general], q[general]
    shared = (a + b) / 4 - a * b * (np.log(a) - np.log(b)) / (2 * (a - b))
    alone = (p[~both].sum() + q[~both].sum()) / 4
    return float(2 * (shared.sum() + alone))


def bucket_histogram(labels, n_buckets: int, *, smoothing: float = 0.0) -> np.ndarray:
    """The histogram of bucket ``labels`` (ints in ``[0, n_buckets)``), each count plus
    ``smoothing`` (Krichevsky–Trofimov: 0.5, MAUVE*), normalised.

    Examples
    --------
    >>> bucket_histogram([0, 0, 2], 3).round(4).tolist()
    [0.6667, 0.0, 0.3333]
    >>> bucket_histogram([0, 0, 2], 3, smoothing=0.5).tolist()  # (2.5, 0.5, 1.5) / 4.5
    [0.5555555555555556, 0.1111111111111111, 0.3333333333333333]
    """
    n_buckets = check_int(n_buckets, "n_buckets", minimum=1)
    smoothing = check_number(smoothing, "smoothing")
    if smoothing < 0:
        raise ValueError(f"smoothing must be >= 0, got {smoothing!r}")
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be a 1-D array of ints, got {labels.dtype} of shape "
                         f"{labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= n_buckets):
        bad = labels[(labels < 0) | (labels >= n_buckets)][0]
        raise ValueError(f"labels must lie in [0, {n_buckets}), got {int(bad)}")
    return _histogram(np.bincount(labels, minlength=n_buckets) + smoothing, "labels")


@dataclass(frozen=True)
class FrontierResult:
    """MAUVE and the frontier integral of two histograms.

    Attributes
    ----------
    score : float
        MAUVE, the area under :attr:`divergence_curve`, in [0, 1] (1: the same histogram).
    frontier_integral : float
        In [0, 1], lower is closer.
    divergence_curve : numpy.ndarray, shape (n_weights + 2, 2)
    p_hist, q_hist : numpy.ndarray
        The normalised histograms (reference, candidate).
    signature : str
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    score: float
    frontier_integral: float
    divergence_curve: np.ndarray = field(repr=False)
    p_hist: np.ndarray = field(repr=False)
    q_hist: np.ndarray = field(repr=False)
    signature: str


def mauve_from_histograms(p, q, *, scaling: float = 5.0, n_weights: int = 25
                          ) -> FrontierResult:
    """MAUVE (the area under :func:`divergence_curve`) and :func:`frontier_integral` of two
    histograms, ``p`` the reference (human) and ``q`` the candidate (model).

    Examples
    --------
    >>> r = mauve_from_histograms([0.7, 0.2, 0.1], [0.1, 0.2, 0.7])
    >>> round(r.score, 4), round(r.frontier_integral, 4)
    (0.2191, 0.346)
    """
    p, q = _pair(p, q)
    curve = divergence_curve(p, q, scaling=scaling, n_weights=n_weights)
    curve.flags.writeable = False
    p.flags.writeable = q.flags.writeable = False
    return FrontierResult(frontier_area(curve), frontier_integral(p, q), curve, p, q,
                          make_signature("mauve", buckets=p.size, c=scaling,
                                         weights=n_weights))
