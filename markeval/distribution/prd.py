"""Precision and recall for distributions, PRD (Sajjadi et al. 2018).

A candidate distribution ``Q`` has precision ``α`` and recall ``β`` with respect to a reference
``P`` when both can be written with a shared component ``μ``: ``P = β μ + (1 − β) ν_P`` and
``Q = α μ + (1 − α) ν_Q``. Over a finite set of states ``Ω`` the frontier of all such pairs is
traced by one parameter ``λ ∈ (0, ∞)`` (the paper's Theorem 2):

    α(λ) = Σ_ω min(λ P(ω), Q(ω)),        β(λ) = α(λ) / λ,

with ``λ = tan θ`` for angles ``θ ∈ (0, π/2)``. Embeddings are made discrete by k-means on the
union of both sets (20 clusters), each set becomes a histogram over the clusters, and the curve
is averaged over 10 clusterings. Two numbers summarise it: ``F_8 = max_λ F_8(α, β)`` weighs
recall (does the candidate cover the reference?), ``F_{1/8}`` weighs precision (are the
candidates where reference points are?).

This follows the authors' ``prd_score.py`` (compare_gan): the same angles (1001 from
``1e-10`` to ``π/2 − 1e-10``), the same ``ε = 1e-10`` in ``F_β``, the same 1.001 sanity bound,
k-means with 10 initialisations on ``[candidate; reference]`` in float64, and the same refusal of
unequal set sizes. It differs in two respects:

* The reference code does not seed its k-means, so its scores change from run to run; here run
  ``i`` is seeded from ``numpy.random.SeedSequence(seed).spawn(num_runs)[i]``: reproducible.
* The reference uses scikit-learn's ``MiniBatchKMeans`` (an approximation, for speed on large
  sets); we run full-batch Lloyd iterations from the best of 10 k-means++ seedings in
  NumPy, on one BLAS thread: more accurate, no scikit-learn dependency, and no thread
  oversubscription (on a busy 2-core machine ``MiniBatchKMeans``' OpenMP threads made it 20×
  slower than single-threaded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import (check_bool, check_embeddings, check_int, check_number, check_same_dim,
                              check_seed)
from markeval._signature import make_signature
from markeval._threads import single_threaded_blas
from markeval._result import alias

__all__ = [
    "PRDResult", "cluster_histograms", "kmeans_labels", "max_f_beta", "prd", "prd_curve",
    "prd_from_histograms",
]

_EPSILON = 1e-10


@dataclass(frozen=True)
class PRDResult:
    """A PRD curve and its two summaries.

    Attributes
    ----------
    precision_curve, recall_curve : tuple of float
        ``α(λ)`` and ``β(λ)`` at ``num_angles`` slopes ``λ = tan θ``, θ increasing from 0 to
        π/2 (so precision rises and recall falls along the tuple). (Not ``precision`` and
        ``recall``: other results use those names for single numbers.)
    f_beta : float
        ``max F_β`` over the curve, ``β = beta`` (8 by default): the recall-like summary.
    f_beta_inv : float
        ``max F_{1/β}``: the precision-like summary.
    beta : float
    num_clusters, num_runs, num_angles : int
        ``num_clusters = num_runs = 0`` when computed from given histograms.
    signature : str
    score : float
        :attr:`f_beta`, the result protocol's headline: ``F_8`` is the summary the paper
        reports first, and it weighs recall (does the candidate cover the reference?), the
        failure (dropped modes) that FID and precision-like scores miss. ``f_beta_inv`` is the
        metric registry's separate precision-like entry.
    item_scores : None
        A set-level metric.
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    precision_curve: tuple[float, ...]
    recall_curve: tuple[float, ...]
    f_beta: float
    f_beta_inv: float
    beta: float
    num_clusters: int
    num_runs: int
    num_angles: int
    signature: str

    score = alias("f_beta")


def _check_histogram(h, name: str) -> np.ndarray:
    h = np.asarray(h, dtype=np.float64)
    if h.ndim != 1 or h.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D histogram, got shape {h.shape}")
    if not np.isfinite(h).all() or (h < 0).any():
        raise ValueError(f"{name} must hold finite non-negative values")
    if abs(h.sum() - 1.0) > 1e-6:
        raise ValueError(f"{name} must sum to 1 (a distribution over bins), sums to {h.sum():.6g}")
    return h


def prd_curve(reference_hist, candidate_hist, *, num_angles: int = 1001
              ) -> tuple[np.ndarray, np.ndarray]:
    """The PRD curve ``(α(λ), β(λ))`` of two distributions over the same bins.

    Parameters
    ----------
    reference_hist, candidate_hist : array_like, shape (bins,)
        ``P`` and ``Q``: non-negative, each summing to 1.
    num_angles : int, default 1001
        Slopes ``λ = tan θ`` for ``θ`` evenly spaced in ``[1e-10, π/2 − 1e-10]``.

    Returns
    -------
    precision, recall : numpy.ndarray, shape (num_angles,)

    Examples
    --------
    ``Q`` covers half of ``P``'s mass: perfect precision, recall 1/2 (the paper's Fig. 1 idea).

    >>> p, r = prd_curve([0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], num_angles=5)
    >>> [round(float(v), 4) for v in p], [round(float(v), 4) for v in r]
    ([0.0, 0.2071, 0.5, 1.0, 1.0], [0.5, 0.5, 0.5, 0.4142, 0.0])
    """
    ref = _check_histogram(reference_hist, "reference_hist")
    cand = _check_histogram(candidate_hist, "candidate_hist")
    if ref.shape != cand.shape:
        raise ValueError(f"reference_hist has {ref.size} bins but candidate_hist has {cand.size}")
    num_angles = check_int(num_angles, "num_angles", minimum=2)
    slopes = np.tan(np.linspace(_EPSILON, math.pi / 2 - _EPSILON, num_angles))
    precision = np.minimum(ref[None, :] * slopes[:, None], cand[None, :]).sum(axis=1)
    recall = precision / slopes
    # As in the reference code: rounding may push a value just above 1, more is a bug.
    top = max(precision.max(), recall.max())
    if top > 1.001:
        raise ArithmeticError(f"PRD value {top} > 1.001: this should not happen")
    return np.clip(precision, 0.0, 1.0), np.clip(recall, 0.0, 1.0)


def max_f_beta(precision, recall, beta: float = 8.0) -> float:
    """``max F_β`` over a PRD curve: ``(1+β²) α β_r / (β² α + β_r + 1e-10)`` maximised.

    Examples
    --------
    >>> max_f_beta([1.0, 0.5], [0.5, 1.0], beta=1.0)  # doctest: +ELLIPSIS
    0.666666666...
    """
    p = np.asarray(precision, dtype=np.float64)
    r = np.asarray(recall, dtype=np.float64)
    if p.shape != r.shape or p.ndim != 1 or p.size == 0:
        raise ValueError(
            f"precision and recall must be 1-D of equal length, got {p.shape}, {r.shape}")
    if not ((0 <= p) & (p <= 1) & (0 <= r) & (r <= 1)).all():
        raise ValueError("precision and recall values must lie in [0, 1]")
    if not check_number(beta, "beta") > 0:
        raise ValueError(f"beta must be a positive number, got {beta!r}")
    f = (1 + beta**2) * p * r / (beta**2 * p + r + _EPSILON)
    return float(f.max())


def _result(precision, recall, beta, num_clusters, num_runs, num_angles, **sig) -> PRDResult:
    return PRDResult(
        precision_curve=tuple(float(v) for v in precision),
        recall_curve=tuple(float(v) for v in recall),
        f_beta=max_f_beta(precision, recall, beta),
        f_beta_inv=max_f_beta(precision, recall, 1.0 / beta),
        beta=float(beta),
        num_clusters=num_clusters,
        num_runs=num_runs,
        num_angles=num_angles,
        signature=make_signature("prd", angles=num_angles, beta=beta, **sig),
    )


def prd_from_histograms(reference_hist, candidate_hist, *, num_angles: int = 1001,
                        beta: float = 8.0) -> PRDResult:
    """PRD curve and ``F_β`` / ``F_{1/β}`` of two given histograms (no clustering).

    Examples
    --------
    Disjoint supports: nothing is shared, both summaries are 0.

    >>> r = prd_from_histograms([1.0, 0.0], [0.0, 1.0])
    >>> r.f_beta, r.f_beta_inv
    (0.0, 0.0)
    """
    precision, recall = prd_curve(reference_hist, candidate_hist, num_angles=num_angles)
    return _result(precision, recall, beta, 0, 0, num_angles)


def _kmeans_pp(x: np.ndarray, x_sq: np.ndarray, k: int, n_init: int,
               rng: np.random.Generator) -> list[tuple[np.ndarray, float]]:
    """``n_init`` k-means++ seedings (Arthur & Vassilvitskii 2007), run side by side.

    Each new centre of a seeding is drawn with probability proportional to the squared
    distance to its nearest centre so far. The seedings advance together, so that each step
    is one matrix product for all of them (ten matrix-vector products, each reading every
    point, made this a quarter of the word-level reproduction's time). The random draws are
    taken first, in the order a one-by-one run would take them (per seeding a start index,
    then ``k - 1`` uniforms that pick along the cumulative distribution, as
    ``rng.choice(p=...)`` does): the same centres as seeding one after the other.

    Returns each seeding's centres and inertia (sum of squared distances to the nearest
    centre).
    """
    n = len(x)
    starts, uniforms = [], []
    for _ in range(n_init):
        starts.append(int(rng.integers(n)))
        uniforms.append(rng.random(k - 1))
    chosen = np.empty((n_init, k), dtype=np.intp)
    chosen[:, 0] = starts

    def sq_dist(centres):  # (n_init, n): each seeding's new centre to every point
        return np.maximum(x_sq[None, :] - 2 * (x[centres] @ x.T) + x_sq[centres][:, None], 0.0)

    d2 = sq_dist(chosen[:, 0])
    for step in range(1, k):
        for i in range(n_init):
            total = d2[i].sum()
            if total > 0:
                cdf = (d2[i] / total).cumsum()
                cdf /= cdf[-1]
                chosen[i, step] = cdf.searchsorted(uniforms[i][step - 1], side="right")
            else:  # every point coincides with a centre: any choice is as good
                chosen[i, step] = int(uniforms[i][step - 1] * n)
        d2 = np.minimum(d2, sq_dist(chosen[:, step]))
    return [(x[chosen[i]].copy(), float(d2[i].sum())) for i in range(n_init)]


# Rows or columns a slice: ``x**2`` or ``x - mean`` of a slice stays near 64 MiB (at 600,000
# word samples, 384-d, the whole array's temporary was 1.8 GB, the peak of a PRD).
_SLICE_VALUES = 1 << 23


def _row_sq_norms(x: np.ndarray) -> np.ndarray:
    """``(x**2).sum(axis=1)`` in slices of rows: each row is summed alone, so the same bits."""
    step = max(1, _SLICE_VALUES // max(1, x.shape[1]))
    return np.concatenate([(x[i:i + step] ** 2).sum(axis=1) for i in range(0, len(x), step)])


def _column_variances(x: np.ndarray) -> np.ndarray:
    """``x.var(axis=0)`` in slices of columns, with the same bits.

    NumPy reduces a block of two or more columns row after row, as it does the whole array;
    a single column on its own it sums pairwise (other bits), so no slice is one column wide
    unless ``x`` is.
    """
    d = x.shape[1]
    step = max(2, _SLICE_VALUES // max(1, len(x)))
    bounds = [*range(0, d, step), d]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        del bounds[-2]  # a last column alone joins the slice before it
    return np.concatenate([x[:, a:b].var(axis=0) for a, b in zip(bounds, bounds[1:])])


def _lloyd(x: np.ndarray, x_sq: np.ndarray, centres: np.ndarray, max_iter: int, tol: float):
    """Lloyd iterations until no label changes or the centres move by less than ``tol``.

    ``tol`` is scikit-learn's: 1e-4 × the mean per-dimension variance, on the squared shift.
    """
    labels = None
    rows = np.arange(len(x))
    for _ in range(max_iter):
        # 2 (x c^T), not (2 x) c^T: the same numbers (doubling is exact) without an n × d
        # temporary, the largest array of an iteration
        d2 = x_sq[:, None] - 2 * (x @ centres.T) + (centres**2).sum(axis=1)[None, :]
        new = d2.argmin(axis=1)
        if labels is not None and (new == labels).all():
            break
        labels = new
        member = np.zeros((len(centres), len(x)))
        member[labels, rows] = 1.0
        # An emptied cluster restarts at the point farthest from its centre (a different point
        # for each); a cluster emptied by that move keeps its old centre for this round.
        far = d2[rows, labels]
        for j in np.flatnonzero(member.sum(axis=1) == 0):
            worst = int(far.argmax())
            far[worst] = -np.inf
            member[:, worst] = 0.0
            member[j, worst] = 1.0
        counts = member.sum(axis=1)[:, None]
        moved = centres
        centres = np.where(counts > 0, (member @ x) / np.maximum(counts, 1.0), centres)
        if ((centres - moved) ** 2).sum() <= tol:
            break
    d2 = x_sq[:, None] - 2 * (x @ centres.T) + (centres**2).sum(axis=1)[None, :]
    labels = d2.argmin(axis=1)
    return labels, float(d2[rows, labels].sum())


def kmeans_labels(x, num_clusters: int, *, n_init: int = 10, max_iter: int = 300,
                  seed: int | np.random.SeedSequence = 0) -> np.ndarray:
    """Cluster labels from k-means: the best of ``n_init`` k-means++ seedings, refined by Lloyd.

    As in scikit-learn's ``MiniBatchKMeans(n_init=...)``, which the PRD reference code uses, the
    ``n_init`` trials are seedings compared by inertia; only the best one is iterated.

    Examples
    --------
    >>> kmeans_labels([[0.0], [0.1], [5.0], [5.1]], 2).tolist()
    [1, 1, 0, 0]
    """
    x = check_embeddings(x, "x")
    num_clusters = check_int(num_clusters, "num_clusters", minimum=1)
    if num_clusters > len(x):
        raise ValueError(f"num_clusters={num_clusters} exceeds the {len(x)} points to cluster")
    rng = np.random.default_rng(seed)
    x_sq = _row_sq_norms(x)
    tol = 1e-4 * float(_column_variances(x).mean())
    n_init = check_int(n_init, "n_init", minimum=1)
    with single_threaded_blas():
        seeds = _kmeans_pp(x, x_sq, num_clusters, n_init, rng)
        centres = min(seeds, key=lambda seed_and_inertia: seed_and_inertia[1])[0]
        return _lloyd(x, x_sq, centres, max_iter, tol)[0]


def cluster_histograms(reference, candidate, *, num_clusters: int = 20,
                       seed: int | np.random.SeedSequence = 0) -> tuple[np.ndarray, np.ndarray]:
    """One clustering of ``[candidate; reference]`` into histograms ``(P, Q)``.

    Returns
    -------
    reference_hist, candidate_hist : numpy.ndarray, shape (num_clusters,)
        Share of each set's points in each cluster.

    Examples
    --------
    >>> p, q = cluster_histograms([[0.0], [0.1], [5.0], [5.1]], [[0.0], [0.2], [0.1], [0.3]],
    ...                           num_clusters=2)
    >>> sorted(p.tolist()), sorted(q.tolist())
    ([0.5, 0.5], [0.0, 1.0])
    """
    ref = check_embeddings(reference, "reference")
    cand = check_embeddings(candidate, "candidate")
    check_same_dim(ref, cand, "reference", "candidate")
    labels = kmeans_labels(np.vstack([cand, ref]), num_clusters, seed=seed)
    cand_hist = np.bincount(labels[: len(cand)], minlength=num_clusters) / len(cand)
    ref_hist = np.bincount(labels[len(cand):], minlength=num_clusters) / len(ref)
    return ref_hist, cand_hist


def prd(reference, candidate, *, num_clusters: int = 20, num_runs: int = 10,
        num_angles: int = 1001, beta: float = 8.0, enforce_balance: bool = True,
        seed: int = 0) -> PRDResult:
    """PRD of candidate embeddings against reference embeddings (Sajjadi et al. 2018).

    Parameters
    ----------
    reference, candidate : array_like, shape (n, d) and (m, d)
    num_clusters : int, default 20
        At least 2: a single cluster holds every point, and any two sets would score 1.
    num_runs : int, default 10
        Independent clusterings; the curves are averaged, then summarised.
    num_angles : int, default 1001
    beta : float, default 8
        ``f_beta`` = ``F_8`` (recall-like), ``f_beta_inv`` = ``F_{1/8}`` (precision-like).
    enforce_balance : bool, default True
        Refuse ``n != m``, as the paper's code does: the clusters are fitted to the union, so
        the bigger set would shape them.
    seed : int, default 0
        A non-negative int; run ``i`` clusters with the ``i``-th child of
        ``numpy.random.SeedSequence(seed)``.

    Returns
    -------
    PRDResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(400, 2))
    >>> same, shifted = rng.normal(size=(400, 2)), rng.normal(size=(400, 2)) + 8
    >>> r = prd(ref, same, num_runs=2)
    >>> r.f_beta > 0.9 and r.f_beta_inv > 0.9
    True
    >>> r = prd(ref, shifted, num_runs=2)
    >>> round(r.f_beta, 4), round(r.f_beta_inv, 4)
    (0.0, 0.0)
    """
    ref = check_embeddings(reference, "reference")
    cand = check_embeddings(candidate, "candidate")
    check_same_dim(ref, cand, "reference", "candidate")
    num_clusters = check_int(num_clusters, "num_clusters", minimum=2, why=(
        "num_clusters must be >= 2: one cluster holds every point, so any two sets, however "
        "far apart, get precision = recall = 1"))
    seed = check_seed(seed)
    if check_bool(enforce_balance, "enforce_balance") and len(ref) != len(cand):
        raise ValueError(
            f"reference has {len(ref)} points but candidate has {len(cand)}: PRD clusters their "
            "union, so unequal sizes bias the clusters; subsample to equal sizes or pass "
            "enforce_balance=False (not recommended)"
        )
    num_runs = check_int(num_runs, "num_runs", minimum=1)
    num_angles = check_int(num_angles, "num_angles", minimum=2)
    precisions, recalls = [], []
    for run_seed in np.random.SeedSequence(seed).spawn(num_runs):
        ref_hist, cand_hist = cluster_histograms(ref, cand, num_clusters=num_clusters,
                                                 seed=run_seed)
        p, r = prd_curve(ref_hist, cand_hist, num_angles=num_angles)
        precisions.append(p)
        recalls.append(r)
    return _result(np.mean(precisions, axis=0), np.mean(recalls, axis=0), beta,
                   num_clusters, num_runs, num_angles, clusters=num_clusters, runs=num_runs,
                   kmeans="lloyd++", seed=seed)
