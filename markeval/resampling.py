"""One bootstrap for every metric: resample the items, recompute the score from their statistics.

A corpus metric that is a function of per-item statistics (BLEU's clipped counts and lengths,
GLEU's matches and totals, ROUGE's per-summary precision/recall/F1) is resampled the way
sacrebleu does it (``_extract_corpus_statistics`` then ``_compute_score_from_stats``): draw
``n`` items with replacement, aggregate their rows of the statistics matrix, and score the
aggregate. Nothing is re-tokenised or re-counted. A replicate is a vector of multiplicities
(how often each item was drawn), so the aggregated statistics of a whole block of replicates
are one matrix product. Statistics that are not sums (a correlation coefficient) get the same
resampled indices through :func:`replicates`.

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
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from markeval._checks import check_resampling

__all__ = ["BootstrapResult", "MAX_DRAWS", "bootstrap", "check_draws", "multiplicities",
           "percentile_interval", "replicates", "resample_indices"]

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
    >>> check_draws(3, 10**12)
    Traceback (most recent call last):
    ...
    ValueError: n_resamples=1000000000000 resamples of 3 items are 3e+12 index draws, beyond the 1e+10 one resampling may take; ask for at most 3333333333 resamples
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
    low, high : float
        The ``(1 - confidence) / 2`` and ``1 - (1 - confidence) / 2`` quantiles of the
        replicates (linear interpolation); NaN without replicates or when every replicate
        was undefined.
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
    >>> r = BootstrapResult(score=0.5, low=0.4, high=0.6, confidence=0.95, n_resamples=1000,
    ...                     seed=0, signature="toy")
    >>> print(r)
    0.5000 [0.4000, 0.6000] (95% CI, 1000 resamples, seed 0)
    >>> (r.ci_low, r.ci_high) == (r.low, r.high), r.item_scores
    (True, None)
    """

    score: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    seed: int | None
    signature: str
    mid: float = math.nan
    mean: float = math.nan
    std: float = math.nan
    n_undefined: int = 0
    higher_is_better: bool = True

    @property
    def ci_low(self) -> float:
        """Alias of ``low`` (the name BLEU's and the correlations' results used)."""
        return self.low

    @property
    def ci_high(self) -> float:
        """Alias of ``high``."""
        return self.high

    @property
    def n_samples(self) -> int:
        """Deprecated alias of ``n_resamples``."""
        warnings.warn("n_samples is deprecated; use n_resamples", DeprecationWarning,
                      stacklevel=2)
        return self.n_resamples

    item_scores = None  # an interval is about the whole corpus, not about its items.

    def __str__(self) -> str:
        text = f"{self.score:.4f}"
        if not math.isnan(self.low):
            text += (f" [{self.low:.4f}, {self.high:.4f}] ({self.confidence:.0%} CI, "
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
    >>> r.low, r.mid, r.high, r.n_undefined
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
        score=float(score), low=low, high=high, confidence=confidence,
        n_resamples=n_resamples, seed=seed if n_resamples else None, signature=signature,
        mid=mid, mean=mean, std=std, n_undefined=int(values.size - defined.size),
        higher_is_better=higher_is_better,
    )


def bootstrap(stats, score: Callable[[np.ndarray], np.ndarray], *, n_resamples: int = 1000,
              confidence: float = 0.95, seed: int = 0, signature: str = "",
              higher_is_better: bool = True) -> BootstrapResult:
    """Percentile bootstrap of a corpus score computed from per-item statistics.

    Parameters
    ----------
    stats : array of shape (n, k)
        One row of sufficient statistics per item (sentence, summary, pair).
    score : callable
        Maps summed statistics, an array of shape ``(m, k)``, to ``m`` scores. Integer
        statistics are summed exactly and passed as int64.
    n_resamples : int, default 1000
        Replicates, at least 1.
    confidence : float, default 0.95
    seed : int, default 0
    signature : str
        The signature to report, resampling settings included.
    higher_is_better : bool, default True

    Returns
    -------
    BootstrapResult
        ``score`` is ``score`` of the sum of all rows.

    Examples
    --------
    GLEU-like statistics (matches, total) of three sentences; the corpus score is the
    ratio of the sums, not the mean of the ratios:

    >>> stats = np.array([[3, 4], [1, 4], [4, 4]])
    >>> ratio = lambda sums: sums[:, 0] / sums[:, 1]
    >>> r = bootstrap(stats, ratio, n_resamples=200, seed=0)
    >>> round(r.score, 4), r.low <= r.score <= r.high, r.n_resamples
    (0.6667, True, 200)
    """
    n_resamples, confidence, seed = check_resampling(n_resamples, confidence, seed, minimum=1)
    stats = np.asarray(stats)
    if stats.ndim != 2 or stats.shape[0] == 0:
        raise ValueError(f"stats must be a non-empty 2-D array (items, statistics), "
                         f"got shape {stats.shape}")
    n = stats.shape[0]
    exact = np.issubdtype(stats.dtype, np.integer)
    rows = stats.astype(np.float64)

    def statistic(indices: np.ndarray) -> np.ndarray:
        # Float sums of integers below 2**53 are exact; rint undoes nothing but the type.
        sums = multiplicities(indices, n).astype(np.float64) @ rows
        return score(np.rint(sums).astype(np.int64) if exact else sums)

    values = replicates(n, statistic, n_resamples=n_resamples, seed=seed)
    actual = float(score(stats.sum(axis=0)[None])[0])
    return percentile_interval(actual, values, confidence=confidence, n_resamples=n_resamples,
                               seed=seed, signature=signature, higher_is_better=higher_is_better)
