"""The shared validation helpers and the one bootstrap protocol (markeval.resampling)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from markeval._checks import check_resampling, is_texts
from markeval.resampling import (BootstrapResult, ItemScores, SufficientStatistics, bootstrap,
                                 multiplicities, percentile_interval, replicates,
                                 resample_indices)


def test_check_resampling():
    assert check_resampling(0, 0.9, 1) == (0, 0.9, 1)
    with pytest.raises(ValueError, match=r"n_resamples must be >= 0 \(0 means no resampling\)"):
        check_resampling(-1, 0.9, 1)
    with pytest.raises(ValueError, match="n_resamples must be a positive int, got 0"):
        check_resampling(0, 0.9, 1, minimum=1)
    with pytest.raises(TypeError, match="n_resamples must be an int"):
        check_resampling(10.0, 0.9, 1)
    with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1"):
        check_resampling(10, 1.0, 1)
    with pytest.raises(TypeError, match="seed must be a non-negative int, got None"):
        check_resampling(10, 0.9, None)


def test_is_texts():
    pd = pytest.importorskip("pandas")
    assert is_texts(["a"]) and is_texts(("a", "b")) and is_texts(pd.Series(["a"], index=[7]))
    assert is_texts(["a", 1])  # read as texts, so that check_strings names the bad item
    for x in ("a", [], (), np.array(["a"]), np.zeros((2, 2)), [[1.0]], pd.Series([], dtype=str),
              None, {"a"}):
        assert not is_texts(x), x


def test_resampled_indices_do_not_depend_on_the_block_size():
    for legacy in (False, True):
        whole = np.concatenate(list(resample_indices(7, 50, 3, legacy=legacy)))
        blocks = np.concatenate(list(resample_indices(7, 50, 3, legacy=legacy, block_entries=20)))
        assert whole.shape == (50, 7) and np.array_equal(whole, blocks)
    legacy = np.random.RandomState(3)  # rouge-score: one rng.choice(n, size=n) per resample
    loop = np.stack([legacy.choice(np.arange(7), size=7) for _ in range(50)])
    assert np.array_equal(loop, np.concatenate(list(resample_indices(7, 50, 3, legacy=True))))


def test_multiplicities_count_draws():
    idx = np.random.default_rng(0).integers(0, 5, size=(30, 5))
    counts = multiplicities(idx, 5)
    assert counts.sum(axis=1).tolist() == [5] * 30
    assert all(np.array_equal(np.bincount(row, minlength=5), c) for row, c in zip(idx, counts))


@dataclass(frozen=True, eq=False)
class _Ratio(SufficientStatistics):
    """Toy statistics (matches, total) scored as their ratio: the protocol at its smallest."""

    matrix: np.ndarray
    signature: str = "toy|version:0"

    def scores(self, sums, *, float32=False):
        assert sums.dtype == np.int64  # integer statistics are summed exactly
        return sums[:, 0] / sums[:, 1]

    def take(self, indices):
        return _Ratio(self.matrix[indices])


def test_bootstrap_of_summed_statistics():
    stats = _Ratio(np.array([[3, 4], [1, 4], [4, 4], [0, 2]]))
    r = bootstrap(stats, n_resamples=100, seed=5)
    assert isinstance(r, BootstrapResult) and r.score == 8 / 14
    assert r.signature == "toy|bootstrap:100|seed:5|version:0"
    rng = np.random.default_rng(5)
    manual = [stats.take(rng.integers(0, 4, 4)).corpus_score() for _ in range(100)]
    assert r.ci_low == np.quantile(manual, 0.025) and r.ci_high == np.quantile(manual, 0.975)
    assert (r.mid, r.mean) == (np.median(manual), pytest.approx(np.mean(manual)))
    with pytest.raises(ValueError, match="the statistics hold no items"):
        bootstrap(_Ratio(np.zeros((0, 2), dtype=np.int64)), n_resamples=10)
    with pytest.raises(ValueError, match="n_resamples must be a positive int"):
        bootstrap(stats, n_resamples=0)
    with pytest.raises(TypeError, match="stats must be SufficientStatistics"):
        bootstrap(stats.matrix, n_resamples=10)


def test_item_scores_resample_as_their_mean():
    items = ItemScores(np.array([0.1, 0.5, 0.9, 0.3]), "toy|version:0", score=0.45)
    r = bootstrap(items, n_resamples=50, seed=1)
    rng = np.random.default_rng(1)
    manual = [items.items[rng.integers(0, 4, 4)].mean() for _ in range(50)]
    assert r.score == 0.45 and r.mean == pytest.approx(np.mean(manual), abs=1e-12)


def test_undefined_replicates_are_dropped_and_counted():
    values = replicates(3, lambda idx: np.where(idx[:, 0] == 0, np.nan, 1.0), n_resamples=30,
                        seed=0)
    r = percentile_interval(1.0, values, confidence=0.9, n_resamples=30, seed=0, signature="s")
    assert r.n_undefined == int(np.isnan(values).sum()) > 0 and r.ci_low == r.ci_high == 1.0
    none = percentile_interval(1.0, np.full(4, np.nan), confidence=0.9, n_resamples=4, seed=0,
                               signature="s")
    assert np.isnan(none.ci_low) and none.n_undefined == 4 and str(none) == "1.0000"
