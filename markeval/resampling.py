"""One bootstrap for every metric: resample the items, recompute the score from their statistics.

A corpus metric that is a function of per-item statistics (BLEU's clipped counts and lengths,
GLEU's matches and totals, chrF's character n-gram counts, TER's edits and lengths) follows one
path, sacrebleu's (``_extract_corpus_statistics`` then ``_compute_score_from_stats``): a
:class:`SufficientStatistics` object holds one row per item (:attr:`~SufficientStatistics.matrix`)
and scores any row of column sums (:meth:`~SufficientStatistics.scores`). The corpus score is
the score of all rows summed, a sentence score that of one row, a bootstrap replicate that of
``n`` rows drawn with replacement, and the paired tests of :mod:`markeval.significance` score
resampled and swapped sums the same way. Nothing is re-tokenised or re-counted. A replicate is a
vector of multiplicities (how often each item was drawn), so the sums of a whole block of
replicates are one matrix product. A metric whose corpus score is the mean of item scores
(METEOR, the ROUGE types) is resampled through :class:`ItemScores`. Statistics that are not sums
(a correlation coefficient) get the same resampled indices through :func:`replicates`.

Every interval is reported in one shape, :class:`BootstrapResult`: the score on the actual
data, the percentile interval ``low``/``high`` at ``confidence``, the median ``mid`` of the
replicates (rouge-score reports it), their mean and standard deviation, and the settings.

Random streams: ``numpy.random.default_rng(seed)``; ROUGE asks for numpy's legacy
``RandomState(seed)`` (``legacy=True``), which is what rouge-score's ``BootstrapAggregator``
consumes. Either way the indices drawn do not depend on how the replicates are split into
blocks, so results are identical whatever the memory budget.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_resampling
from markeval._signature import extend_signature

__all__ = ["BootstrapResult", "ItemScores", "MAX_DRAWS", "SufficientStatistics", "bootstrap",
           "check_draws", "exact_dtype", "multiplicities", "percentile_interval", "replicates",
           "resample_indices", "resampled_scores"]

#: Upper bound on the entries of one block of resampled indices (about 32 MB of int64).
BLOCK_ENTRIES = 4_000_000
#: The most index draws (resamples x items) one resampling may ask for: a minute or two of
#: drawing and summing on one core. Beyond it no printed digit changes: 10,000 items allow
#: 10**6 resamples, whose p-value step (1e-6) is below the four decimals a table shows.
MAX_DRAWS = 10**10


def check_draws(n: int, n_resamples: int, what: str = "resamples") -> None:
    """Refuse ``n_resamples`` resamples of ``n`` items when they exceed :data:`MAX_DRAWS`.

    Examples
    --------
    >>> check_draws(3000, 10_000)
    >>> check_draws(3, 10**12)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: n_resamples=1000000000000 resamples of 3 items are 3e+12 index draws, ...
    """
    if n * n_resamples > MAX_DRAWS:
        raise ValueError(f"n_resamples={n_resamples} {what} of {n} items are "
                         f"{n * n_resamples:.3g} index draws, beyond the {MAX_DRAWS:.0e} one "
                         f"resampling may take; ask for at most {MAX_DRAWS // max(n, 1)} {what}")


@dataclass(frozen=True)
class BootstrapResult:
    """A score with its percentile bootstrap confidence interval.

    Attributes
    ----------
    score : float
        The statistic on the actual data (not a resample).
    ci_low, ci_high : float
        The ``(1 - confidence) / 2`` and ``1 - (1 - confidence) / 2`` quantiles of the
        replicates (linear interpolation); NaN without replicates or when every replicate
        was undefined. Every interval of markeval has these names (a correlation's, a
        table's columns).
    confidence : float
        Coverage of the interval, in (0, 1).
    n_resamples : int
        Replicates drawn (0: no interval).
    seed : int or None
        Seed of the resampling (None when nothing was resampled).
    signature : str
        The signature of the score, resampling settings included.
    mid : float
        Median of the replicates (rouge-score's ``mid``; NaN where not computed).
    mean, std : float
        Mean and standard deviation (``ddof=1``; 0 for a single replicate) of the replicates.
    n_undefined : int
        Replicates dropped because the statistic is undefined on them (a constant
        resample has no correlation); the interval uses the others.
    higher_is_better : bool
        Orientation of the score (True for every metric resampled in markeval).

    Examples
    --------
    >>> r = BootstrapResult(score=0.5, ci_low=0.4, ci_high=0.6, confidence=0.95,
    ...                     n_resamples=1000, seed=0, signature="toy")
    >>> print(r)
    0.5000 [0.4000, 0.6000] (95% CI, 1000 resamples, seed 0)
    >>> r.item_scores is None
    True
    """

    score: float
    ci_low: float
    ci_high: float
    confidence: float
    n_resamples: int
    seed: int | None
    signature: str
    mid: float = math.nan
    mean: float = math.nan
    std: float = math.nan
    n_undefined: int = 0
    higher_is_better: bool = True

    item_scores = None  # an interval is about the whole corpus, not about its items.

    def __str__(self) -> str:
        text = f"{self.score:.4f}"
        if not math.isnan(self.ci_low):
            text += (f" [{self.ci_low:.4f}, {self.ci_high:.4f}] ({self.confidence:.0%} CI, "
                     f"{self.n_resamples} resamples, seed {self.seed})")
        return text


def resample_indices(n: int, n_resamples: int, seed: int, *, legacy: bool = False,
                     block_entries: int = BLOCK_ENTRIES) -> Iterator[np.ndarray]:
    """Blocks of bootstrap resamples: int arrays of shape ``(rows, n)`` with values in [0, n).

    Row ``b`` of the concatenated blocks is resample ``b``; the blocks hold at most
    ``block_entries`` indices (one row at least). ``legacy=True`` draws from
    ``numpy.random.RandomState(seed)`` as ``rng.choice(n, size=n)`` per resample would.
    A request beyond :data:`MAX_DRAWS` is refused here, before anything is drawn.

    Examples
    --------
    >>> [block.tolist() for block in resample_indices(3, 2, seed=0, block_entries=3)]
    [[[2, 1, 1]], [[0, 0, 0]]]
    """
    check_draws(n, n_resamples)
    rng = np.random.RandomState(seed) if legacy else np.random.default_rng(seed)
    draw = rng.randint if legacy else rng.integers
    rows = max(1, block_entries // max(n, 1))
    return (draw(0, n, size=(min(rows, n_resamples - start), n))
            for start in range(0, n_resamples, rows))


def multiplicities(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` items occurs in each row of ``indices``: shape ``(rows, n)``.

    Examples
    --------
    >>> multiplicities(np.array([[2, 1, 1], [0, 0, 2]]), 3).tolist()
    [[0, 2, 1], [2, 0, 1]]
    """
    rows = indices.shape[0]
    flat = (indices + (np.arange(rows) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n)


def replicates(n: int, statistic: Callable[[np.ndarray], np.ndarray], *, n_resamples: int,
               seed: int, legacy: bool = False,
               block_entries: int = BLOCK_ENTRIES) -> np.ndarray:
    """``statistic`` of every resample: ``statistic(indices)`` maps a ``(rows, n)`` block of
    resampled indices to ``rows`` values (NaN where undefined); the blocks are concatenated.

    Examples
    --------
    >>> x = np.array([1.0, 2.0, 3.0, 4.0])
    >>> replicates(4, lambda idx: x[idx].mean(axis=1), n_resamples=3, seed=0).tolist()
    [3.0, 1.25, 3.0]
    """
    blocks = [statistic(idx) for idx in resample_indices(n, n_resamples, seed, legacy=legacy,
                                                         block_entries=block_entries)]
    return np.concatenate(blocks) if blocks else np.zeros(0)


def percentile_interval(score: float, values: np.ndarray, *, confidence: float,
                        n_resamples: int, seed: int | None, signature: str,
                        higher_is_better: bool = True,
                        percent: bool = False) -> BootstrapResult:
    """The :class:`BootstrapResult` of ``score`` from its replicates ``values``.

    NaN replicates (undefined statistics) are dropped and counted in ``n_undefined``.
    ``percent=True`` reads the quantiles as ``np.percentile`` at ``100 * q``, as
    rouge-score does: ``100 * q / 100`` is not always ``q`` in floating point (at
    ``confidence=0.68``, say), and the bounds then differ in their last bit.

    Examples
    --------
    >>> r = percentile_interval(2.5, np.array([2.0, 2.5, 3.0, np.nan]), confidence=0.5,
    ...                         n_resamples=4, seed=0, signature="toy")
    >>> r.ci_low, r.mid, r.ci_high, r.n_undefined
    (2.25, 2.5, 2.75, 1)
    """
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    low = mid = high = mean = std = math.nan
    if defined.size:
        alpha = (1.0 - confidence) / 2
        q = np.array([alpha, 0.5, 1 - alpha])
        bounds = np.percentile(defined, 100 * q) if percent else np.quantile(defined, q)
        low, mid, high = (float(b) for b in bounds)
        mean = float(defined.mean())
        std = float(defined.std(ddof=1)) if defined.size > 1 else 0.0
    return BootstrapResult(
        score=float(score), ci_low=low, ci_high=high, confidence=confidence,
        n_resamples=n_resamples, seed=seed if n_resamples else None, signature=signature,
        mid=mid, mean=mean, std=std, n_undefined=int(values.size - defined.size),
        higher_is_better=higher_is_better,
    )


class SufficientStatistics(ABC):
    """Per-item sufficient statistics of a corpus metric, and the one way from them to scores.

    Subclasses (:class:`~markeval.lexical.bleu.BLEUStatistics`, GLEU's, chrF's, TER's,
    :class:`ItemScores`) hold one row per item and every setting their score depends on, so
    that :meth:`scores` needs nothing but sums of rows.

    Attributes
    ----------
    matrix : ndarray, shape (n, k)
        One row of statistics per item; integers where they are counts.
    signature : str
        The signature of scores computed from these statistics.
    higher_is_better : bool
        Whether a higher score is better (TER: False).
    """

    matrix: np.ndarray
    signature: str
    higher_is_better: ClassVar[bool] = True

    @abstractmethod
    def scores(self, sums, *, float32: bool = False) -> np.ndarray:
        """The score of every row of ``sums`` (m, k), each a sum of rows of :attr:`matrix`.

        ``float32=True`` asks for sacrebleu's bootstrap arithmetic, which casts statistics to
        float32 before it sums and scores them (used by the paired tests, so their p-values
        are sacrebleu's; metrics whose float32 scores equal their float64 ones ignore it).
        """

    @abstractmethod
    def take(self, indices) -> SufficientStatistics:
        """The statistics of the items at ``indices`` (in that order; repeats allowed)."""

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def corpus_score(self) -> float:
        """The score of all items: the score of the column sums of :attr:`matrix`."""
        if len(self) == 0:
            raise ValueError("the statistics hold no items")
        return float(self.scores(self.matrix.sum(axis=0, keepdims=True))[0])

    def item_scores(self) -> np.ndarray:
        """The score of every item on its own (sentence scores)."""
        return np.asarray(self.scores(self.matrix), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class ItemScores(SufficientStatistics):
    """A corpus score that is the mean of item scores (METEOR, ROUGE F-measures, BERTScore).

    Attributes
    ----------
    items : ndarray of float, shape (n,)
    signature : str
    higher_is_better : bool
    score : float, optional
        The metric's own corpus score, when its arithmetic differs from NumPy's mean in the
        last bit (METEOR's ``sum / len``); default the mean.

    Examples
    --------
    >>> s = ItemScores(np.array([0.2, 0.4, 0.9]), "toy", True)
    >>> round(s.corpus_score(), 4), s.scores(np.array([[1.5]])).tolist()
    (0.5, [0.5])
    """

    items: np.ndarray
    signature: str
    higher_is_better: bool = True
    score: float | None = None

    @property
    def matrix(self) -> np.ndarray:
        return np.asarray(self.items, dtype=np.float64)[:, None]

    def scores(self, sums, *, float32: bool = False) -> np.ndarray:
        return np.asarray(sums, dtype=np.float64)[:, 0] / len(self)

    def take(self, indices) -> ItemScores:
        return ItemScores(np.asarray(self.items)[np.asarray(indices, dtype=np.int64)],
                          self.signature, self.higher_is_better)

    def corpus_score(self) -> float:
        return float(self.score) if self.score is not None else super().corpus_score()


def exact_dtype(bound: float) -> type:
    """The float type whose matrix products sum integers exactly when no partial sum exceeds
    ``bound`` in magnitude: float32 below 2**24 (twice as fast as float64), else float64
    (exact below 2**53).

    Examples
    --------
    >>> exact_dtype(3000 * 120).__name__, exact_dtype(2.0**24).__name__
    ('float32', 'float64')
    """
    return np.float32 if bound < 2**24 else np.float64


def _summing(stats: SufficientStatistics, float32: bool) -> tuple[np.ndarray, bool, type | None]:
    """How resampled sums of ``stats.matrix`` are taken, decided once for all blocks:
    ``(rows, product, dtype)``. With ``product`` the sums are the multiplicities times
    ``rows`` (exact for integer statistics, whose sums are then cast to ``dtype``; None: float
    sums, kept as they are); otherwise float32 ``rows`` are summed item after item, as
    sacrebleu's bootstrap does."""
    rows = stats.matrix
    if not np.issubdtype(rows.dtype, np.integer):
        if float32 and not isinstance(stats, ItemScores):
            return rows.astype(np.float32), False, None
        return rows.astype(np.float64), True, None
    dtype = exact_dtype(len(rows) * float(np.abs(rows).max(initial=0)))
    if float32 and dtype is not np.float32:  # sums beyond float32's integers: sacrebleu rounds
        return rows.astype(np.float32), False, None
    return rows.astype(dtype), True, np.float32 if float32 else np.int64


def resampled_scores(statistics: Sequence[SufficientStatistics], blocks, *,
                     float32: bool = False) -> list[np.ndarray]:
    """The scores of each statistics object on every resample of ``blocks``.

    Parameters
    ----------
    statistics : sequence of SufficientStatistics
        Of the same ``n`` items (several systems on one test set share the resamples).
    blocks : iterable of int arrays of shape (rows, n)
        Resampled indices, e.g. :func:`resample_indices`.
    float32 : bool
        sacrebleu's bootstrap arithmetic (see :meth:`SufficientStatistics.scores`).

    Returns
    -------
    list of ndarray
        One array of scores per statistics object, one score per resample.
    """
    plans = [_summing(stats, float32) for stats in statistics]
    out: list[list[np.ndarray]] = [[] for _ in statistics]
    for indices in blocks:
        weights = {}  # the block's multiplicities, shared by the objects summed in one type
        for j, (stats, (rows, product, dtype)) in enumerate(zip(statistics, plans)):
            if not product:
                sums = rows[indices].sum(axis=1)
            else:
                if rows.dtype not in weights:
                    weights[rows.dtype] = multiplicities(indices, len(rows)).astype(rows.dtype)
                sums = weights[rows.dtype] @ rows
                if dtype is not None:
                    sums = sums.astype(dtype, copy=False)
            out[j].append(np.asarray(stats.scores(sums, float32=float32), dtype=np.float64))
    return [np.concatenate(o) if o else np.zeros(0) for o in out]


def bootstrap(stats: SufficientStatistics, *, n_resamples: int = 1000,
              confidence: float = 0.95, seed: int = 0) -> BootstrapResult:
    """Percentile bootstrap confidence interval of a corpus score, resampling its items.

    Each replicate draws ``len(stats)`` items with replacement and scores the sum of their
    statistics (Koehn, 2004), so nothing is re-tokenised or re-counted.

    Parameters
    ----------
    stats : SufficientStatistics
        From :func:`~markeval.lexical.bleu.bleu_statistics`,
        :func:`~markeval.lexical.gleu.gleu_statistics`,
        :func:`~markeval.lexical.chrf.chrf_statistics`,
        :func:`~markeval.lexical.ter.ter_statistics`, or :class:`ItemScores`.
    n_resamples : int, default 1000
        Replicates, at least 1.
    confidence : float, default 0.95
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    BootstrapResult
        ``score`` is the corpus score; the signature adds ``bootstrap`` and ``seed``.

    Examples
    --------
    GLEU's statistics of three sentences; the corpus score is the ratio of the summed matches
    and totals, not the mean of the sentence ratios:

    >>> from markeval.lexical.gleu import gleu_statistics
    >>> stats = gleu_statistics(["the cat sat on the mat", "a dog", "it rained all day"],
    ...                         ["the cat sat on a mat", "a dog barked", "it rained all day"])
    >>> ci = bootstrap(stats, n_resamples=200, seed=1)
    >>> round(ci.score, 2), ci.ci_low <= ci.score <= ci.ci_high, ci.n_resamples
    (70.59, True, 200)
    """
    if not isinstance(stats, SufficientStatistics):
        raise TypeError(f"stats must be SufficientStatistics (e.g. from bleu_statistics), got "
                        f"{type(stats).__name__}")
    n_resamples, confidence, seed = check_resampling(n_resamples, confidence, seed, minimum=1)
    actual = stats.corpus_score()
    blocks = resample_indices(len(stats), n_resamples, seed)
    values = resampled_scores([stats], blocks)[0]
    return percentile_interval(
        actual, values, confidence=confidence, n_resamples=n_resamples, seed=seed,
        signature=extend_signature(stats.signature, bootstrap=n_resamples, seed=seed),
        higher_is_better=stats.higher_is_better)
