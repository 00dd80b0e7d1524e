"""Meta-evaluation helpers: Williams' test and per-group (per-topic) averaged correlation."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from markeval.experiments.human_correlation import grouped_correlation, williams_test
from markeval.stats import correlation, pearson


def _steiger_t2(r12, r13, r23, n):
    # Steiger (1980), Eq. 7, written out independently of the implementation.
    det_r = (1 - r12 * r12 - r13 * r13 - r23 * r23) + 2 * r12 * r13 * r23
    rbar = 0.5 * (r12 + r13)
    return (r12 - r13) * math.sqrt(
        ((n - 1) * (1 + r23)) / (2 * ((n - 1) / (n - 3)) * det_r + rbar**2 * (1 - r23) ** 3))


@given(st.floats(-0.9, 0.9), st.floats(-0.9, 0.9), st.floats(-0.9, 0.9), st.integers(4, 5000))
def test_williams_matches_steiger_formula(r12, r13, r23, n):
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    assume(det > 1e-9)  # a valid matrix
    res = williams_test(r12, r13, r23, n)
    # |R| is a difference of terms of size ~1 rounded to ~1e-16, and t depends on it through
    # the variance: another order of the same operations moves t by up to ~1e-16 / |R|.
    assert res.t == pytest.approx(_steiger_t2(r12, r13, r23, n), rel=1e-12 + 1e-15 / det,
                                  abs=1e-12)
    assert res.df == n - 3 and 0.0 <= res.p_value <= 1.0


def test_williams_is_antisymmetric_and_one_sided():
    a = williams_test(0.7, 0.5, 0.6, n=30)
    b = williams_test(0.5, 0.7, 0.6, n=30)
    assert a.t == pytest.approx(-b.t)
    assert a.p_value + b.p_value == pytest.approx(1.0)
    assert williams_test(0.5, 0.5, 0.6, n=30).p_value == pytest.approx(0.5)


def test_williams_size_under_the_null_by_simulation():
    # Two metrics equally correlated with the human score: the test should reject at the
    # nominal 5 % rate. 4000 simulated data sets of n = 40; binomial sd of the rate ≈ 0.0034.
    rng = np.random.default_rng(0)
    n, sims = 40, 4000
    human = rng.standard_normal((sims, n))
    shared = rng.standard_normal((sims, n))
    m1 = 0.6 * human + 0.6 * shared + 0.5 * rng.standard_normal((sims, n))
    m2 = 0.6 * human + 0.6 * shared + 0.5 * rng.standard_normal((sims, n))

    def r(a, b):
        a = a - a.mean(axis=1, keepdims=True)
        b = b - b.mean(axis=1, keepdims=True)
        return (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))

    r12, r13, r23 = r(human, m1), r(human, m2), r(m1, m2)
    p = np.array([williams_test(*triple, n=n).p_value for triple in zip(r12, r13, r23)])
    assert abs((p < 0.05).mean() - 0.05) < 0.015


@pytest.mark.parametrize("args, match", [
    ((1.2, 0.5, 0.5, 10), "r12 must be a correlation in"),
    ((0.5, "0.4", 0.5, 10), "r13 must be a number, got str: '0.4'"),
    ((0.5, 0.4, 0.5, 3), "needs n >= 4"),
    ((0.5, 0.4, 0.5, 10.0), "n must be an int"),
    ((0.9, -0.9, 0.9, 10), "determinant"),
    ((0.3, -0.3, -1.0, 560), r"r12=0\.3, r13=-0\.3, r23=-1, n=560: the two metrics are exact "
                             "negations"),
    ((0.5, -0.5, 0.5, 20), r"r12=0\.5, r13=-0\.5, r23=0\.5, n=20: its variance estimate"),
])
def test_williams_bad_input(args, match):
    with pytest.raises((TypeError, ValueError), match=match):
        williams_test(*args)
    with pytest.raises(TypeError, match="absolute must be True or False, got str: 'no'"):
        williams_test(0.5, 0.4, 0.5, 10, absolute="no")


# Rounding of correlations computed from data is of order 1e-16 per coefficient and depends on
# the machine's summation order; the boundary answers must not.
_ROUNDING = st.floats(-4e-16, 4e-16)


@given(st.floats(-0.99, 0.99), _ROUNDING, st.integers(4, 5000))
def test_one_metric_twice_gives_t0_p1_whatever_the_rounding(r, eps, n):
    for absolute in (False, True):
        res = williams_test(r, r + eps, 1.0 - abs(eps), n, absolute=absolute)
        assert (res.t, res.p_value, res.df) == (0.0, 1.0, n - 3)


@given(st.floats(-0.99, 0.99), _ROUNDING, st.integers(4, 5000))
def test_exact_negations_tie_in_size_and_are_refused_with_signs(r, eps, n):
    res = williams_test(r, -r + eps, -1.0 + abs(eps), n, absolute=True)
    assert (res.t, res.p_value) == (0.0, 1.0)
    with pytest.raises(ValueError, match="exact negations"):
        williams_test(r, -r + eps, -1.0 + abs(eps), n)


def test_absolute_compares_the_metrics_turned_to_agree_with_people():
    # Negating a metric flips its correlation with people and with the other metric.
    signed = williams_test(0.6, 0.5, 0.8, n=50)
    for r12, r13, r23 in ((-0.6, 0.5, -0.8), (0.6, -0.5, -0.8), (-0.6, -0.5, 0.8)):
        res = williams_test(r12, r13, r23, n=50, absolute=True)
        assert res.t == pytest.approx(signed.t, rel=1e-12)
        assert res.p_value == pytest.approx(signed.p_value, rel=1e-9)
        assert "absolute:yes" in res.signature
    assert "absolute" not in signed.signature


def test_boundary_from_real_vectors_is_machine_independent():
    rng = np.random.default_rng(3)
    human = rng.standard_normal(560)
    metric = 0.2 * human + rng.standard_normal(560)
    r12 = np.corrcoef(metric, human)[0, 1]
    for other, r23 in ((3 * metric + 1, np.corrcoef(metric, 3 * metric + 1)[0, 1]),
                       (-metric, np.corrcoef(metric, -metric)[0, 1])):
        r13 = np.corrcoef(other, human)[0, 1]
        res = williams_test(r12, r13, r23, n=560, absolute=True)
        assert (res.t, res.p_value) == (0.0, 1.0)


def test_grouped_correlation_averages_per_group_and_reports_undefined_groups():
    rng = np.random.default_rng(1)
    metric, human, groups = [], [], []
    for g in range(6):
        x = rng.standard_normal(12)
        metric += list(x)
        human += list(x + rng.standard_normal(12))
        groups += [f"topic{g}"] * 12
    metric += [1.0, 2.0, 3.0]
    human += [5.0, 5.0, 5.0]  # every summary of this topic got the same human score
    groups += ["flat"] * 3
    res = grouped_correlation(metric, human, groups, "pearson", n_resamples=200, seed=3)
    expected = [pearson(metric[12 * g:12 * g + 12], human[12 * g:12 * g + 12], n_resamples=0).value
                for g in range(6)]
    assert res.value == pytest.approx(np.mean(expected), abs=1e-12)
    assert [g for g, _ in res.per_group] == [f"topic{g}" for g in range(6)]
    assert res.undefined == (("flat", "constant human score (5 for all 3 items)"),)
    assert res.n_groups == 7 and res.n_defined == 6
    assert res.ci_low <= res.value <= res.ci_high
    assert not math.isnan(res.value)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=3, max_size=8, unique=True),
       st.sampled_from(["pearson", "kendall", "spearman"]))
def test_grouped_correlation_of_one_group_is_the_plain_correlation(xs, method):
    ys = [x**3 - x for x in xs]
    assume(np.ptp(ys) > 0)
    res = grouped_correlation(xs, ys, ["g"] * len(xs), method, n_resamples=0)
    assert res.value == pytest.approx(correlation(xs, ys, method, n_resamples=0).value, abs=1e-12)
    assert math.isnan(res.ci_low)


def test_grouped_correlation_bad_input():
    with pytest.raises(ValueError, match="undefined in every one of the 1 groups"):
        grouped_correlation([1, 2, 3], [4, 4, 4], ["t"] * 3)
    with pytest.raises(ValueError, match="method must be one of"):
        grouped_correlation([1, 2, 3], [1, 2, 3], ["t"] * 3, "cosine")
    with pytest.raises(ValueError, match="human score nan at index 1"):
        grouped_correlation([1, 2, 3], [1, float("nan"), 3], ["t"] * 3)
    with pytest.raises(ValueError, match="metric has 3 items but groups has 2"):
        grouped_correlation([1, 2, 3], [1, 2, 3], ["t"] * 2)


def test_a_score_constant_up_to_rounding_is_undefined_but_small_scores_are_not():
    from markeval.experiments.human_correlation import undefined_reason

    human = np.array([0.1, 0.4, 0.2])
    assert undefined_reason(np.array([0.3, 0.3 + 5e-17, 0.3 - 5e-17]), human).startswith(
        "constant metric score")
    assert undefined_reason(np.array([0.0, 1e-300, 3e-300]), human) is None


def test_results_follow_the_protocol():
    from markeval._result import MetricResult

    w = williams_test(0.6, 0.5, 0.8, n=560)
    assert isinstance(w, MetricResult) and w.score == w.p_value and not w.higher_is_better
    g = grouped_correlation([1, 2, 3, 1, 2, 4, 5, 6, 7], [1, 2, 3, 3, 2, 1, 4, 5, 7],
                            ["a"] * 3 + ["b"] * 3 + ["c"] * 3, n_resamples=100, seed=1)
    assert isinstance(g, MetricResult) and g.score == g.value
    assert g.item_scores == tuple(v for _, v in g.per_group)
    assert (g.interval.ci_low, g.interval.ci_high) == (g.ci_low, g.ci_high)
