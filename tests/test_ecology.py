"""Capture–recapture estimators on plain counts: hand-worked values, brute force, simulation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.population.ecology import (
    chapman,
    lincoln_petersen,
    m0_log_likelihood,
    m0_mle,
    schnabel,
)


# ----------------------------------------------------------------- hand-worked counts


def test_lincoln_petersen_by_hand():
    # 100 marked, 80 caught, 20 of them marked: a quarter of the lake is marked, N = 4 * 100.
    e = lincoln_petersen(100, 80, 20)
    assert e.estimate == 400.0 and not e.no_recapture
    assert (e.marked, e.captured, e.recaptured) == (100, 80, 20)
    assert isinstance(e.estimate, float) and e.signature.startswith("lincoln_petersen|")


def test_lincoln_petersen_no_recapture_is_flagged_inf():
    e = lincoln_petersen(10, 15, 0)
    assert e.estimate == math.inf and e.no_recapture


def test_chapman_by_hand():
    # (11 * 16) / 6 − 1 = 28.333…; variance 11·16·5·10 / (6² · 7) = 8800 / 252.
    e = chapman(10, 15, 5)
    assert e.estimate == pytest.approx(176 / 6 - 1, rel=1e-15)
    assert e.variance == pytest.approx(8800 / 252, rel=1e-15)
    # Finite even without recaptures: (11 · 16) / 1 − 1.
    assert chapman(10, 15, 0).estimate == 175.0


def test_schnabel_by_hand():
    # Σ C M = 10·0 + 10·10 + 10·18 = 280, Σ R = 7: N = 40.
    e = schnabel(marked=[0, 10, 18], captured=[10, 10, 10], recaptured=[0, 2, 5])
    assert e.estimate == 40.0 and e.sum_cm == 280.0 and e.sum_r == 7 and e.occasions == 3


def test_schnabel_two_occasions_is_petersen():
    two = schnabel(marked=[0, 50], captured=[50, 40], recaptured=[0, 8])
    assert two.estimate == lincoln_petersen(50, 40, 8).estimate


def test_schnabel_no_recapture():
    e = schnabel(marked=[0, 5], captured=[5, 5], recaptured=[0, 0])
    assert e.estimate == math.inf and e.no_recapture


def test_m0_theorem_a3_numbers():
    """The paper's Theorem A.3 at |S| = 10, K = 1: t = 20, n = 80, M = 20."""
    assert round(m0_log_likelihood(20, 20, 80, 20)) == -158
    assert round(m0_log_likelihood(21, 20, 80, 20)) == -159
    assert m0_mle(20, 80, 20).estimate == 20.0


def test_m0_no_recapture_is_flagged_inf():
    e = m0_mle(5, 12, 12)
    assert e.no_recapture and e.estimate == math.inf and e.ci_high == math.inf
    assert e.ci_low == 12.0


def test_m0_large_estimate_is_not_capped():
    # One recapture among 1001 captures: N̂ is huge, and it is an exact argmax.
    from markeval.population.ecology import _delta

    e = m0_mle(2, 1001, 1000)
    n_hat = int(e.estimate)
    assert n_hat > 100_000
    # Near N̂ = 250000, L(N) ≈ 5207 is the difference of four lgamma and x log x terms of
    # 3e6 to 7e6, each good to about an ulp (5e-10 to 1e-9), while L(N̂) − L(N̂ ± 1) is only
    # ~1e-11: comparing the three L values exactly decides nothing but the last bits of libm's
    # lgamma/log (here all three round to the same float). So the L values are compared within
    # 1e-14 * lgamma(N̂ + 1) ≈ 3e-8, several times their rounding error, and the argmax itself
    # is checked on the steps L(N+1) − L(N) in their non-cancelling form (_delta): +1.2e-11
    # before N̂ and −4.0e-12 at N̂, computed to ~3e-16 (checked against 50-digit arithmetic),
    # 10^4 times their error.
    at = m0_log_likelihood(n_hat, 2, 1001, 1000)
    rounding = 1e-14 * math.lgamma(n_hat + 1)
    assert at >= m0_log_likelihood(n_hat - 1, 2, 1001, 1000) - rounding
    assert at >= m0_log_likelihood(n_hat + 1, 2, 1001, 1000) - rounding
    assert _delta(n_hat - 1, 2, 1001, 1000) > 0 >= _delta(n_hat, 2, 1001, 1000)


# ----------------------------------------------------------------- brute force


@st.composite
def _m0_counts(draw):
    t = draw(st.integers(1, 8))
    m = draw(st.integers(1, 15))
    n = draw(st.integers(m, t * m))
    return t, n, m


@settings(max_examples=150, deadline=None)
@given(_m0_counts())
def test_m0_mle_is_brute_force_argmax(counts):
    t, n, m = counts
    e = m0_mle(t, n, m)
    if n == m:
        assert e.no_recapture and e.estimate == math.inf
        return
    grid = np.arange(m, 20_000)
    ll = np.array([m0_log_likelihood(int(x), t, n, m) for x in grid])
    best = float(ll.max())
    n_hat = int(e.estimate)
    assert n_hat < grid[-1]  # the grid is wide enough for these counts
    assert m0_log_likelihood(n_hat, t, n, m) >= best - 1e-9 * abs(best)
    # The smallest maximiser: every smaller N is strictly worse (up to rounding).
    assert np.all(ll[: n_hat - m] < best + 1e-9 * abs(best))
    # The likelihood-ratio interval: inside at its ends, outside just beyond them.
    crit = 3.841458820694124 / 2
    lo, hi = int(e.ci_low), int(e.ci_high)
    assert lo <= n_hat <= hi
    assert e.log_likelihood - m0_log_likelihood(lo, t, n, m) <= crit
    assert e.log_likelihood - m0_log_likelihood(hi, t, n, m) <= crit
    assert e.log_likelihood - m0_log_likelihood(hi + 1, t, n, m) > crit
    if lo > m:
        assert e.log_likelihood - m0_log_likelihood(lo - 1, t, n, m) > crit


# ----------------------------------------------------------------- simulation


def test_estimators_recover_a_known_lake():
    """A closed lake of 300 fish, equal catchability: the estimators land near 300 on average."""
    rng = np.random.default_rng(0)
    n_fish, t, p, runs = 300, 6, 0.2, 200
    m0, chap, schn = [], [], []
    for _ in range(runs):
        caught = rng.random((t, n_fish)) < p
        marked = np.zeros(n_fish, bool)
        cs, rs, ms = [], [], []
        for occ in caught:
            cs.append(int(occ.sum()))
            rs.append(int((occ & marked).sum()))
            ms.append(int(marked.sum()))
            marked |= occ
        m0.append(m0_mle(t, int(caught.sum()), int(caught.any(axis=0).sum())).estimate)
        chap.append(chapman(int(caught[0].sum()), int(caught[1].sum()),
                            int((caught[0] & caught[1]).sum())).estimate)
        schn.append(schnabel(marked=ms, captured=cs, recaptured=rs).estimate)
    for estimates in (m0, chap, schn):
        assert abs(np.mean(estimates) / n_fish - 1) < 0.05
    # Six occasions beat two: the spread of M0 and Schnabel is below Chapman's.
    assert np.std(m0) < np.std(chap) and np.std(schn) < np.std(chap)


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize("args, err, match", [
    ((10, 5, 6), ValueError, "recaptured=6 exceeds"),
    ((-1, 5, 0), ValueError, "marked must be a non-negative int, got -1"),
    ((10, 5.5, 1), TypeError, "captured must be an int"),
    ((True, 5, 1), TypeError, "marked must be an int"),
])
def test_two_occasion_bad_input(args, err, match):
    for fn in (lincoln_petersen, chapman):
        with pytest.raises(err, match=match):
            fn(*args)


def test_schnabel_bad_input():
    with pytest.raises(ValueError, match="one entry per occasion"):
        schnabel(marked=[0, 1], captured=[1, 2], recaptured=[0])
    with pytest.raises(ValueError, match="at least one occasion"):
        schnabel(marked=[], captured=[], recaptured=[])
    with pytest.raises(ValueError, match=r"recaptured\[1\]=3 exceeds"):
        schnabel(marked=[0, 2], captured=[5, 5], recaptured=[0, 3])
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument"):
        schnabel(marked=[0, 2], captured=[5, 5])
    with pytest.raises(TypeError, match="takes 0 positional arguments"):  # easy to swap
        schnabel([5, 5], [0, 3], [0, 5])


def test_estimates_follow_the_result_protocol():
    from markeval._result import MetricResult

    estimates = [lincoln_petersen(10, 15, 5), chapman(10, 15, 5), m0_mle(5, 30, 20),
                 schnabel(marked=[0, 10], captured=[10, 10], recaptured=[0, 2])]
    for e in estimates:
        assert isinstance(e, MetricResult)
        assert e.score == e.estimate and e.item_scores is None and e.higher_is_better


def test_m0_bad_input():
    with pytest.raises(ValueError, match="captures=5 must lie between"):
        m0_mle(2, 5, 6)
    with pytest.raises(ValueError, match="captures=13 must lie between"):
        m0_mle(2, 13, 6)
    with pytest.raises(ValueError, match="occasions must be a positive int, got 0"):
        m0_mle(0, 5, 5)
    with pytest.raises(ValueError, match="confidence"):
        m0_mle(3, 8, 5, confidence=1.0)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(1, 150), st.data())
def test_m0_step_changes_sign_once(t, m, data):
    """The search relies on L(N+1) − L(N) changing sign once (it is not monotone)."""
    from markeval.population.ecology import _delta

    n = data.draw(st.integers(m + 1, t * m))
    mle = int(m0_mle(t, n, m).estimate)
    steps = np.array([_delta(x, t, n, m) for x in range(m, 3 * mle + 50)])
    signs = steps > 0
    assert not (np.diff(signs.astype(int)) > 0).any()   # never negative → positive
    assert mle == m + int(signs.sum())
