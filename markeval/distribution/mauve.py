"""MAUVE and MAUVE* of two sets of embeddings (Pillutla et al., NeurIPS 2021; JMLR 2023).

MAUVE compares histograms (:mod:`markeval.distribution.frontier`); two sets of embeddings
become histograms by *quantisation*, the protocol of the authors' ``mauve-text``:

1. each vector is scaled to unit length (L2), and the union ``[candidate; reference]`` is
   projected by PCA onto the fewest leading components that explain ``pca_variance`` (90 %)
   of its variance;
2. k-means with ``n_buckets`` clusters (default ``max(2, round(min(n, m) / 10))``: about ten
   points per bucket and set) runs on the projected union, the best of ``n_init`` seedings;
3. each set's share of points per cluster is its histogram; MAUVE is the area under the
   divergence curve of the two, MAUVE* the same on counts smoothed by add-1/2 (the JMLR
   paper's estimator, less biased on small sets).

The k-means seed alone moves MAUVE by about 0.005–0.01 on a few thousand samples, as much as
the differences papers report, so this function clusters ``n_seeds`` times (k-means seeds
``seed``, ``seed + 1``, …) and reports the mean with its spread over seeds.

Two k-means are available. ``"lloyd"`` (default) is the project's own
(:func:`markeval.distribution.prd.kmeans_labels`: k-means++ seedings, the best refined by
Lloyd's iterations in float64), always installed. ``"faiss"`` is faiss-cpu's
``faiss.Kmeans`` on float32, as ``mauve-text`` runs it (``n_init`` is then faiss's ``nredo``,
each seeding iterated ``max_iter`` times and the best kept): it is the one for 10⁵ points per
set, where Lloyd's full distance matrix (points × buckets) no longer fits, and on the same
features and seed it gives ``mauve-text``'s histograms. ``mauve-text``'s ``seed=s`` seeds its
faiss k-means with ``s + 2``; pass ``seed=s + 2`` here for its numbers.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> human = rng.normal(size=(300, 8))
>>> r = mauve(human, rng.normal(size=(300, 8)), n_seeds=2)
>>> r.score > 0.9, len(r.seed_scores), r.n_buckets
(True, 2, 30)
>>> far = rng.normal(size=(300, 8)) + np.r_[3.0, np.zeros(7)]
>>> mauve(human, far, n_seeds=2).score < 0.1
True
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import (check_bool, check_choice, check_embeddings, check_int,
                              check_number, check_same_dim, check_seed)
from markeval._result import alias
from markeval._threads import single_threaded_blas
from markeval._signature import make_signature
from markeval.distribution.frontier import (FrontierResult, bucket_histogram,
                                            mauve_from_histograms)
from markeval.geometry.index import FAISS_MAX_SEED

__all__ = ["FrontierIntegralResult", "MauveResult", "auto_buckets", "mauve", "pca_project",
           "quantize"]

#: What ``mauve(kmeans=...)`` accepts.
KMEANS = ("lloyd", "faiss")


def auto_buckets(n: int, m: int) -> int:
    """``mauve``'s default number of buckets: ``max(2, round(min(n, m) / 10))``.

    Examples
    --------
    >>> auto_buckets(5000, 5000), auto_buckets(24, 1000), auto_buckets(5, 5)
    (500, 2, 2)
    """
    return max(2, round(min(n, m) / 10))


def pca_project(x, variance: float = 0.9) -> np.ndarray:
    """``x`` on its fewest leading principal components that explain ``variance`` of it.

    The components are the eigenvectors of the covariance matrix (``d × d``: the memory is
    linear in the number of points); the first ``j`` are kept where the cumulative share of
    the eigenvalues first reaches ``variance``. A component's sign is arbitrary, which no
    distance sees.

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [2.0, 0.1], [4.0, -0.1], [6.0, 0.0]])
    >>> pca_project(x).shape  # the second axis holds 0.1 % of the variance
    (4, 1)
    """
    x = check_embeddings(x, "x")
    variance = check_number(variance, "variance")
    if not 0 < variance < 1:
        raise ValueError(f"variance must lie in (0, 1), got {variance!r}")
    centred = x - x.mean(axis=0)
    covariance = centred.T @ centred  # the one large product: BLAS threads pay here
    # a d x d eigendecomposition is too small to gain from threads, and with another process
    # on a 2-core machine OpenBLAS's threads made it 100x slower (3.4 s instead of 0.02 s at
    # d = 384: benchmarks/mauve_scale.py)
    with single_threaded_blas():
        values, vectors = np.linalg.eigh(covariance)
    values, vectors = np.clip(values[::-1], 0.0, None), vectors[:, ::-1]
    total = values.sum()
    if total <= 0:  # every point the same: one axis holds nothing, and is enough
        return centred[:, :1] * 0.0
    keep = int(np.argmax(np.cumsum(values) / total >= variance)) + 1
    return centred @ vectors[:, :keep]


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)  # a zero vector stays zero


def _faiss_labels(x: np.ndarray, k: int, n_init: int, max_iter: int, seed: int) -> np.ndarray:
    try:
        import faiss
    except ImportError:
        raise ImportError('kmeans="faiss" needs faiss-cpu: pip install "markeval[index]" '
                          '(or: pip install faiss-cpu), or use kmeans="lloyd"') from None
    x32 = np.ascontiguousarray(x, dtype=np.float32)
    km = faiss.Kmeans(x32.shape[1], k, niter=max_iter, nredo=n_init, seed=seed,
                      update_index=True, verbose=False)
    # faiss's advice to give it 39 points per centroid does not apply: MAUVE's buckets are
    # meant to hold about ten points of each set
    km.cp.min_points_per_centroid = 1
    km.train(x32)
    return km.index.search(x32, 1)[1].ravel()


def _project(ref: np.ndarray, cand: np.ndarray, pca_variance) -> np.ndarray:
    """The union ``[candidate; reference]``, unit rows, PCA-projected (``mauve-text``'s order)."""
    return pca_project(_unit_rows(np.vstack([cand, ref])), pca_variance)


def _cluster(union: np.ndarray, n_buckets: int, kmeans: str, n_init: int, max_iter: int,
             seed: int) -> np.ndarray:
    if kmeans == "faiss":
        return _faiss_labels(union, n_buckets, n_init, max_iter, seed).astype(np.intp)
    from markeval.distribution.prd import kmeans_labels
    return kmeans_labels(union, n_buckets, n_init=n_init, max_iter=max_iter, seed=seed)


def _check_kmeans(kmeans, n_init, max_iter, seed, n_seeds: int = 1) -> tuple:
    check_choice(kmeans, "kmeans", KMEANS)
    n_init = check_int(n_init, "n_init", minimum=1)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    seed = check_seed(seed)
    if kmeans == "faiss" and seed + n_seeds - 1 > FAISS_MAX_SEED:
        raise ValueError(f"seed must be at most {FAISS_MAX_SEED - n_seeds + 1} with "
                         f"kmeans='faiss' and n_seeds={n_seeds} (faiss's seed is a 32-bit "
                         f"int), got {seed}")
    return kmeans, n_init, max_iter, seed


def quantize(reference, candidate, *, n_buckets: int | str = "auto", pca_variance: float = 0.9,
             kmeans: str = "lloyd", n_init: int = 5, max_iter: int = 500, seed: int = 0
             ) -> tuple[np.ndarray, np.ndarray]:
    """Bucket labels of both sets from one k-means of their PCA-projected union (one seed of
    :func:`mauve`, whose parameters these are).

    Returns
    -------
    reference_labels, candidate_labels : numpy.ndarray of int
        In ``[0, n_buckets)``, one per row.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> noise = 0.1 * rng.normal(size=(40, 3))
    >>> p, q = quantize(noise + [1, 0, 0], noise - [1, 0, 0], n_buckets=2)
    >>> len(set(p) & set(q))  # opposite directions: no bucket shared
    0
    """
    ref, cand, n_buckets = _check_sets(reference, candidate, n_buckets)
    settings = _check_kmeans(kmeans, n_init, max_iter, seed)
    labels = _cluster(_project(ref, cand, pca_variance), n_buckets, *settings)
    return labels[len(cand):], labels[:len(cand)]


def _check_sets(reference, candidate, n_buckets):
    ref = check_embeddings(reference, "reference", min_rows=2)
    cand = check_embeddings(candidate, "candidate", min_rows=2)
    check_same_dim(ref, cand, "reference", "candidate")
    if isinstance(n_buckets, str):
        check_choice(n_buckets, "n_buckets", ("auto",))
        n_buckets = auto_buckets(len(ref), len(cand))
    else:
        n_buckets = check_int(n_buckets, "n_buckets", minimum=2)
    if n_buckets > len(ref) + len(cand):
        raise ValueError(f"n_buckets={n_buckets} exceeds the {len(ref) + len(cand)} points of "
                         "both sets")
    return ref, cand, n_buckets


@dataclass(frozen=True)
class FrontierIntegralResult:
    """The frontier integral of a :func:`mauve` call (``MauveResult.frontier``), lower is
    closer: the registry's ``frontier_integral``.

    Attributes
    ----------
    frontier_integral, frontier_integral_star : float
        Means over seeds, raw and smoothed; the first is :attr:`score`.
    signature : str
    """

    higher_is_better: ClassVar[bool] = False
    item_scores: ClassVar[None] = None

    frontier_integral: float
    frontier_integral_star: float
    signature: str

    score = alias("frontier_integral")


@dataclass(frozen=True)
class MauveResult:
    """MAUVE, MAUVE* and the frontier integrals of two sets, over ``n_seeds`` quantisations.

    Attributes
    ----------
    mauve : float
        The mean over seeds of MAUVE (the area under the divergence curve), in [0, 1], higher
        is closer; also :attr:`score`.
    mauve_star : float
        The same on add-1/2 smoothed histograms (JMLR 2023).
    frontier_integral, frontier_integral_star : float
        Means over seeds, in [0, 1], lower is closer.
    runs, runs_star : tuple of FrontierResult
        One per k-means seed: the histograms (reference ``p_hist``, candidate ``q_hist``), the
        divergence curve and its area, raw and smoothed.
    n_buckets : int
    dims : int
        PCA components kept.
    signature : str
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    mauve: float
    mauve_star: float
    frontier_integral: float
    frontier_integral_star: float
    runs: tuple[FrontierResult, ...]
    runs_star: tuple[FrontierResult, ...]
    n_buckets: int
    dims: int
    signature: str

    score = alias("mauve")

    @property
    def seed_scores(self) -> tuple[float, ...]:
        """MAUVE at each k-means seed."""
        return tuple(r.score for r in self.runs)

    @property
    def seed_scores_star(self) -> tuple[float, ...]:
        """MAUVE* at each k-means seed."""
        return tuple(r.score for r in self.runs_star)

    @property
    def mauve_std(self) -> float:
        """The standard deviation of MAUVE over seeds (0 with one seed)."""
        return _std(self.seed_scores)

    @property
    def mauve_star_std(self) -> float:
        """The standard deviation of MAUVE* over seeds (0 with one seed)."""
        return _std(self.seed_scores_star)

    @property
    def frontier(self) -> FrontierIntegralResult:
        """The frontier integrals as a result of their own (lower is better)."""
        return FrontierIntegralResult(self.frontier_integral, self.frontier_integral_star,
                                      "frontier_integral" + self.signature[len("mauve"):])

    @property
    def divergence_curve(self) -> np.ndarray:
        """The first seed's divergence curve (see
        :func:`markeval.distribution.frontier.divergence_curve`)."""
        return self.runs[0].divergence_curve


def _std(values) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def mauve(reference, candidate, *, n_buckets: int | str = "auto", pca_variance: float = 0.9,
          kmeans: str = "lloyd", n_init: int = 5, max_iter: int = 500, n_seeds: int = 5,
          seed: int = 0, scaling: float = 5.0, n_weights: int = 25, progress: bool = False
          ) -> MauveResult:
    """MAUVE and MAUVE* of candidate (model) embeddings against reference (human) ones.

    Parameters
    ----------
    reference, candidate : array_like, shape (n, d) and (m, d)
        ``P`` (human text) and ``Q`` (model text); the sizes may differ.
    n_buckets : int or "auto", default "auto"
        Clusters of the quantisation; ``"auto"`` is :func:`auto_buckets`.
    pca_variance : float, default 0.9
        The share of the union's variance the PCA keeps.
    kmeans : {"lloyd", "faiss"}, default "lloyd"
        The project's k-means, or faiss-cpu's (``mauve-text``'s; needed at 10⁵ points).
    n_init : int, default 5
        k-means seedings per quantisation, the best kept (faiss's ``nredo``).
    max_iter : int, default 500
        Iterations per seeding at most.
    n_seeds : int, default 5
        Quantisations, with k-means seeds ``seed``, ``seed + 1``, …: the score is their mean,
        and :attr:`MauveResult.mauve_std` their spread.
    seed : int, default 0
    scaling : float, default 5
        The constant ``c`` of ``exp(−c · KL)``.
    n_weights : int, default 25
        Mixture weights along the divergence curve.
    progress : bool, default False
        A progress bar over the seeds.

    Returns
    -------
    MauveResult

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> r = mauve(rng.normal(size=(200, 4)), rng.normal(size=(200, 4)), n_seeds=3)
    >>> round(r.mauve, 2), round(r.mauve_star, 2), r.mauve_std < 0.05
    (0.97, 0.97, True)
    >>> r.signature.split("|")[:4]
    ['mauve', 'buckets:20', 'pca:0.9', 'kmeans:lloyd']
    """
    ref, cand, buckets = _check_sets(reference, candidate, n_buckets)
    n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
    kmeans, n_init, max_iter, seed = _check_kmeans(kmeans, n_init, max_iter, seed, n_seeds)
    progress = check_bool(progress, "progress")
    from tqdm.auto import tqdm

    union = _project(ref, cand, pca_variance)
    runs, runs_star = [], []
    for i in tqdm(range(n_seeds), desc="MAUVE k-means seeds", disable=not progress):
        labels = _cluster(union, buckets, kmeans, n_init, max_iter, seed + i)
        p_labels, q_labels = labels[len(cand):], labels[:len(cand)]
        for smoothing, out in ((0.0, runs), (0.5, runs_star)):
            out.append(mauve_from_histograms(
                bucket_histogram(p_labels, buckets, smoothing=smoothing),
                bucket_histogram(q_labels, buckets, smoothing=smoothing),
                scaling=scaling, n_weights=n_weights))
    return MauveResult(
        mauve=float(np.mean([r.score for r in runs])),
        mauve_star=float(np.mean([r.score for r in runs_star])),
        frontier_integral=float(np.mean([r.frontier_integral for r in runs])),
        frontier_integral_star=float(np.mean([r.frontier_integral for r in runs_star])),
        runs=tuple(runs), runs_star=tuple(runs_star), n_buckets=buckets,
        dims=union.shape[1],
        signature=make_signature("mauve", buckets=buckets, pca=pca_variance, kmeans=kmeans,
                                 init=n_init, iter=max_iter, seeds=n_seeds, seed=seed,
                                 c=scaling, weights=n_weights))
