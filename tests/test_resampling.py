"""The shared validation helpers and the one bootstrap protocol (markeval.resampling)."""

from __future__ import annotations

import numpy as np
import pytest

from markeval._checks import check_choice, check_resampling, is_texts
from markeval.resampling import (BootstrapResult, bootstrap, multiplicities,
                                 percentile_interval, replicates, resample_indices)


def test_check_choice():
    assert check_choice("b", "mode", ("a", "b")) == "b"
    with pytest.raises(ValueError, match="mode must be one of 'a', 'b', got 'c'"):
        check_choice("c", "mode", ("a", "b"))
    with pytest.raises(TypeError, match=r"mode must be a str \(one of 'a', 'b'\), got int: 3"):
        check_choice(3, "mode", ("a", "b"))
    with pytest.raises(TypeError, match="got bool"):
        check_choice(True, "order", (0, 1))
    with pytest.raises(ValueError, match="order must be one of 0, 1, got"):
        check_choice([1], "order", (0, 1))  # unhashable: refused, not a crash


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


def test_bootstrap_of_summed_statistics():
    stats = np.array([[3, 4], [1, 4], [4, 4], [0, 2]])

    def ratio(sums):
        assert sums.dtype == np.int64  # integer statistics are summed exactly
        return sums[:, 0] / sums[:, 1]

    r = bootstrap(stats, ratio, n_resamples=100, seed=5, signature="toy")
    assert isinstance(r, BootstrapResult) and r.score == 8 / 14 and r.signature == "toy"
    rng = np.random.default_rng(5)
    manual = [ratio(stats[rng.integers(0, 4, 4)].sum(axis=0)[None])[0] for _ in range(100)]
    assert r.low == np.quantile(manual, 0.025) and r.high == np.quantile(manual, 0.975)
    assert (r.mid, r.mean) == (np.median(manual), pytest.approx(np.mean(manual)))
    with pytest.raises(ValueError, match="non-empty 2-D"):
        bootstrap(np.zeros((0, 2)), ratio, n_resamples=10)
    with pytest.raises(ValueError, match="n_resamples must be a positive int"):
        bootstrap(stats, ratio, n_resamples=0)


def test_undefined_replicates_are_dropped_and_counted():
    values = replicates(3, lambda idx: np.where(idx[:, 0] == 0, np.nan, 1.0), n_resamples=30,
                        seed=0)
    r = percentile_interval(1.0, values, confidence=0.9, n_resamples=30, seed=0, signature="s")
    assert r.n_undefined == int(np.isnan(values).sum()) > 0 and r.low == r.high == 1.0
    none = percentile_interval(1.0, np.full(4, np.nan), confidence=0.9, n_resamples=4, seed=0,
                               signature="s")
    assert np.isnan(none.low) and none.n_undefined == 4 and str(none) == "1.0000"
