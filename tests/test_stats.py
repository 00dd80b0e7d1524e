"""Correlations with bootstrap intervals: scipy parity, hand values, properties, bad input."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from markeval.stats import METHODS, Correlation, correlation, kendall, pearson, spearman

SCIPY = {
    "pearson": lambda x, y: scipy.stats.pearsonr(x, y).statistic,
    "kendall": lambda x, y: scipy.stats.kendalltau(x, y).statistic,
    "spearman": lambda x, y: scipy.stats.spearmanr(x, y).statistic,
}
FUNCTIONS = {"pearson": pearson, "kendall": kendall, "spearman": spearman}


def _random_pairs(rng, n, ties):
    if ties:  # few distinct values: many ties in x, in y and in both
        x = rng.integers(0, 4, n).astype(float)
        y = x + rng.integers(-2, 3, n)
    else:
        x = rng.normal(size=n)
        y = 0.5 * x + rng.normal(size=n)
    return x, y


# --- values -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ties", [False, True], ids=["continuous", "ties"])
def test_parity_with_scipy(method, ties):
    """Point estimates equal scipy's to 1e-12 on random data, with and without ties."""
    rng = np.random.default_rng(7)
    for n in (3, 4, 10, 57, 560):
        x, y = _random_pairs(rng, n, ties)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        ours = correlation(x, y, method, n_resamples=0).value
        assert ours == pytest.approx(SCIPY[method](x, y), abs=1e-12, rel=0)


def test_hand_values():
    # Deviations (-1.5, -.5, .5, 1.5) and (-1.5, .5, -.5, 1.5): r = 4 / 5.
    assert pearson([1, 2, 3, 4], [1, 3, 2, 4], n_resamples=0).value == pytest.approx(0.8, abs=1e-15)
    # 6 pairs: 5 concordant, 1 discordant, no ties: tau = 4 / 6.
    assert kendall([1, 2, 3, 4], [1, 3, 2, 4], n_resamples=0).value == pytest.approx(2 / 3, abs=1e-15)
    # Ranks (1, 2.5, 2.5, 4) vs (1, 2, 3, 4): 4.5 / sqrt(4.5 * 5).
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4], n_resamples=0).value == pytest.approx(
        4.5 / math.sqrt(22.5), abs=1e-15)
    # tau-b with a tie: of 6 pairs, 5 concordant and 1 tied in x only -> 5 / sqrt(5 * 6).
    assert kendall([1, 2, 2, 3], [1, 3, 2, 4], n_resamples=0).value == pytest.approx(
        5 / math.sqrt(30), abs=1e-15)


def test_result_is_plain_and_frozen():
    c = pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert isinstance(c, Correlation)
    for field in ("value", "ci_low", "ci_high", "confidence"):
        assert type(getattr(c, field)) is float
    for field in ("n", "n_resamples", "n_undefined"):
        assert type(getattr(c, field)) is int
    assert (c.method, c.n, c.n_resamples, c.confidence) == ("pearson", 5, 1000, 0.95)
    with pytest.raises(AttributeError):
        c.value = 0.0
    assert c.signature.startswith("pearson|n:5|ci:percentile|confidence:0.95|resamples:1000|seed:0|")
    assert str(c).startswith("r = 0.800 [")


def test_no_resamples_gives_nan_interval():
    c = kendall([1, 2, 3, 4], [1, 3, 2, 4], n_resamples=0)
    assert math.isnan(c.ci_low) and math.isnan(c.ci_high)
    assert (c.n_resamples, c.n_undefined) == (0, 0)
    assert "ci:none" in c.signature and "seed" not in c.signature
    assert str(c) == "τ = 0.667 (n=4)"


# --- bootstrap ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_interval_contains_estimate_and_is_deterministic(method):
    rng = np.random.default_rng(3)
    x, y = _random_pairs(rng, 200, ties=method == "kendall")
    a = correlation(x, y, method)
    assert -1 <= a.ci_low < a.value < a.ci_high <= 1
    assert a == correlation(x, y, method)
    b = correlation(x, y, method, seed=1)
    assert (b.ci_low, b.ci_high) != (a.ci_low, a.ci_high)
    assert b.value == a.value


@pytest.mark.parametrize("method", METHODS)
def test_bootstrap_matches_a_plain_loop(method):
    """The vectorised bootstrap equals resampling pairs one at a time and calling scipy."""
    rng = np.random.default_rng(11)
    x, y = _random_pairs(rng, 40, ties=True)
    c = correlation(x, y, method, n_resamples=200, seed=5)
    draws = np.random.default_rng(5).integers(0, 40, size=(200, 40))
    values = []
    for idx in draws:
        xs, ys = x[idx], y[idx]
        if np.ptp(xs) and np.ptp(ys):
            values.append(SCIPY[method](xs, ys))
    low, high = np.quantile(values, [0.025, 0.975])
    assert c.n_undefined == 200 - len(values)
    assert c.ci_low == pytest.approx(low, abs=1e-12)
    assert c.ci_high == pytest.approx(high, abs=1e-12)


def test_wider_confidence_gives_wider_interval():
    rng = np.random.default_rng(0)
    x, y = _random_pairs(rng, 50, ties=False)
    narrow = spearman(x, y, confidence=0.5)
    wide = spearman(x, y, confidence=0.99)
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high


def test_undefined_resamples_are_dropped_and_counted():
    # Only the last x differs: every resample that misses it is constant in x.
    x = [0.0] * 9 + [1.0]
    y = list(range(10))
    c = pearson(x, y, n_resamples=500, seed=4)
    draws = np.random.default_rng(4).integers(0, 10, size=(500, 10))
    assert c.n_undefined == int((~(draws == 9).any(axis=1)).sum()) > 0
    assert -1 <= c.ci_low <= c.ci_high <= 1


def test_all_resamples_undefined_gives_nan_interval():
    # One resample that misses the only point with x = 1 is constant in x.
    seed = next(s for s in range(100)
                if 2 not in np.random.default_rng(s).integers(0, 3, size=(1, 3))[0])
    c = pearson([0.0, 0.0, 1.0], [1.0, 2.0, 3.0], n_resamples=1, seed=seed)
    assert c.n_undefined == 1
    assert math.isnan(c.ci_low) and math.isnan(c.ci_high)
    assert not math.isnan(c.value)


def test_kendall_large_input_is_blocked():
    """n larger than one block of the n x n sign matrices still equals scipy."""
    rng = np.random.default_rng(2)
    x, y = _random_pairs(rng, 2500, ties=True)
    c = kendall(x, y, n_resamples=3)
    assert c.value == pytest.approx(SCIPY["kendall"](x, y), abs=1e-12)
    assert c.n_undefined == 0 and -1 < c.ci_low <= c.ci_high < 1


# --- properties ---------------------------------------------------------------------------

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
pairs = st.integers(3, 30).flatmap(
    lambda n: st.tuples(st.lists(finite, min_size=n, max_size=n),
                        st.lists(finite, min_size=n, max_size=n)))


def _defined(x, y):
    return np.ptp(x) > 0 and np.ptp(y) > 0


@settings(max_examples=60, deadline=None)
@given(pairs, st.sampled_from(METHODS))
def test_symmetric_and_bounded(xy, method):
    x, y = xy
    assume(_defined(x, y))
    a = correlation(x, y, method, n_resamples=20)
    b = correlation(y, x, method, n_resamples=20)
    assert a.value == pytest.approx(b.value, abs=1e-12)
    for v in (a.value, a.ci_low, a.ci_high):
        assert math.isnan(v) or -1.0 <= v <= 1.0


small_ints = st.integers(-20, 20)  # small integers: ties, and exact arithmetic under x**3
int_pairs = st.integers(3, 30).flatmap(
    lambda n: st.tuples(st.lists(small_ints, min_size=n, max_size=n),
                        st.lists(small_ints, min_size=n, max_size=n)))


@settings(max_examples=60, deadline=None)
@given(int_pairs, st.sampled_from(["kendall", "spearman"]))
def test_rank_methods_ignore_monotone_transforms(xy, method):
    x, y = (np.asarray(v, dtype=float) for v in xy)
    assume(_defined(x, y))
    base = correlation(x, y, method, n_resamples=0).value
    up = x ** 3 + 2 * x + 7  # strictly increasing
    assert correlation(up, y, method, n_resamples=0).value == pytest.approx(base, abs=1e-12)
    assert correlation(np.exp(y / 5), up, method, n_resamples=0).value == pytest.approx(base, abs=1e-12)
    assert correlation(-x, y, method, n_resamples=0).value == pytest.approx(-base, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(pairs)
def test_pearson_ignores_affine_maps(xy):
    x, y = map(np.asarray, xy)
    assume(_defined(x, y) and np.std(x) > 1e-3 * (1 + np.abs(x).max()))
    base = pearson(x, y, n_resamples=0).value
    assert pearson(2.5 * x - 4, y, n_resamples=0).value == pytest.approx(base, abs=1e-9)
    assert pearson(-x, y, n_resamples=0).value == pytest.approx(-base, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(pairs, st.sampled_from(METHODS))
def test_permuting_pairs_changes_nothing(xy, method):
    x, y = map(np.asarray, xy)
    assume(_defined(x, y))
    perm = np.random.default_rng(0).permutation(len(x))
    a = correlation(x, y, method, n_resamples=0).value
    b = correlation(x[perm], y[perm], method, n_resamples=0).value
    assert a == pytest.approx(b, abs=1e-12)


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("func", [pearson, kendall, spearman])
def test_mismatched_lengths_name_both(func):
    with pytest.raises(ValueError, match="x has 4 items but y has 3"):
        func([1, 2, 3, 4], [1, 2, 3])


def test_too_few_points():
    with pytest.raises(ValueError, match="at least 3 pairs, got 2"):
        pearson([1, 2], [2, 1])


@pytest.mark.parametrize("bad, where", [(float("nan"), "nan at index 2"),
                                        (float("inf"), "inf at index 2")])
def test_non_finite_values_name_the_index(bad, where):
    with pytest.raises(ValueError, match=f"y contains 1 non-finite value\\(s\\): {where}"):
        spearman([1, 2, 3, 4], [1, 2, bad, 4])


@pytest.mark.parametrize("method", METHODS)
def test_constant_input_is_undefined(method):
    with pytest.raises(ValueError, match=f"the {method} correlation is undefined because x is constant"):
        correlation([2, 2, 2, 2], [1, 2, 3, 4], method)
    with pytest.raises(ValueError, match="because y is constant"):
        correlation([1, 2, 3, 4], [0.1, 0.1, 0.1, 0.1], method)


def test_non_numeric_input():
    with pytest.raises(TypeError, match=re.escape("x[0] must be a real number, got str: 'a'")):
        pearson(["a", "b", "c"], [1, 2, 3])
    with pytest.raises(TypeError, match="x must be a sequence of numbers, got str: '123'"):
        pearson("123", [1, 2, 3])
    with pytest.raises(TypeError, match=re.escape("y[0] must be a real number, got NoneType: None")):
        kendall([1, 2, 3], [None, 1, 2])
    with pytest.raises(TypeError, match=re.escape("x[0] must be a real number, got complex: 1j")):
        kendall([1j, 2, 3], [0, 1, 2])
    with pytest.raises(ValueError, match=re.escape("x must be a flat sequence of numbers, got shape (3, 1)")):
        pearson([[1], [2], [3]], [1, 2, 3])


def test_bad_settings():
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    with pytest.raises(ValueError, match="method must be one of 'pearson', 'kendall', 'spearman', got 'tau'"):
        correlation(x, y, "tau")
    with pytest.raises(ValueError, match="n_resamples must be >= 0"):
        pearson(x, y, n_resamples=-1)
    with pytest.raises(TypeError, match="n_resamples must be an int, got float"):
        pearson(x, y, n_resamples=10.0)
    with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1, got 95"):
        pearson(x, y, confidence=95)
    with pytest.raises(TypeError, match="seed must be a non-negative int, got None"):
        pearson(x, y, seed=None)


def test_result_protocol_and_shared_interval_shape():
    from markeval._result import MetricResult

    c = pearson([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6], n_resamples=200, seed=3)
    assert isinstance(c, MetricResult) and c.score == c.value and c.item_scores is None
    assert (c.interval.ci_low, c.interval.ci_high) == (c.ci_low, c.ci_high)
    assert c.interval.n_undefined == c.n_undefined and c.interval.seed == 3
    assert c.interval.ci_low <= c.interval.mid <= c.interval.ci_high
    assert pearson([1, 2, 3], [1, 3, 2], n_resamples=0).interval is None
