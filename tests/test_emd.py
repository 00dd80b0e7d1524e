"""Exact Earth Mover's Distance: hand-computed values, the LP optimum, invariances, bad inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog

from markeval.semantic.emd import earth_movers_distance


def lp_emd(a, b, cost):
    """The transportation LP solved by HiGHS: min <F, C> s.t. F 1 = a, F^T 1 = b, F >= 0."""
    a = np.asarray(a, float) / np.sum(a)
    b = np.asarray(b, float) / np.sum(b)
    n, m = len(a), len(b)
    rows = np.kron(np.eye(n), np.ones(m))  # sum_j F_ij
    cols = np.kron(np.ones(n), np.eye(m))  # sum_i F_ij
    res = linprog(np.asarray(cost, float).ravel(), A_eq=np.vstack([rows, cols]),
                  b_eq=np.concatenate([a, b]), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def test_hand_computed_3x3():
    # Masses (0.5, 0.3, 0.2) -> (0.4, 0.4, 0.2) on the line: points 0, 1, 2 -> 0, 1, 2,
    # cost |i - j|. Point 0 keeps 0.4 and sends 0.1 to point 1; point 1 keeps 0.3; point 2
    # keeps 0.2. Cost 0.1 * 1 = 0.1 (moving mass one step right is unavoidable: the first
    # point holds 0.1 too much and every other point is full).
    cost = np.abs(np.subtract.outer(np.arange(3), np.arange(3))).astype(float)
    r = earth_movers_distance([5, 3, 2], [4, 4, 2], cost)
    assert r.distance == pytest.approx(0.1, abs=1e-12)
    np.testing.assert_allclose(r.flow, [[0.4, 0.1, 0], [0, 0.3, 0], [0, 0, 0.2]], atol=1e-12)


def test_flow_marginals_and_read_only():
    rng = np.random.default_rng(0)
    a, b, c = rng.random(4), rng.random(6), rng.random((4, 6))
    r = earth_movers_distance(a, b, c)
    np.testing.assert_allclose(r.flow.sum(axis=1), a / a.sum(), atol=1e-12)
    np.testing.assert_allclose(r.flow.sum(axis=0), b / b.sum(), atol=1e-12)
    assert isinstance(r.distance, float) and not r.flow.flags.writeable


# Masses are 0 or at least 0.01: HiGHS works to a feasibility tolerance of 1e-7 and would
# treat a mass of 1e-8 as 0 (the exact network simplex does not), so tinier masses test linprog.
masses = st.integers(1, 6).flatmap(lambda n: arrays(
    np.float64, n, elements=st.one_of(st.just(0.0), st.floats(0.01, 10)))).filter(
    lambda x: x.sum() > 0)


@settings(max_examples=60, deadline=None)
@given(a=masses, b=masses, seed=st.integers(0, 2**31 - 1))
def test_equals_linprog(a, b, seed):
    cost = np.random.default_rng(seed).random((len(a), len(b))) * 5
    r = earth_movers_distance(a, b, cost)
    assert r.distance == pytest.approx(lp_emd(a, b, cost), abs=1e-8)


@settings(max_examples=40, deadline=None)
@given(a=masses, b=masses, seed=st.integers(0, 2**31 - 1))
def test_permutation_invariance_and_symmetry(a, b, seed):
    rng = np.random.default_rng(seed)
    cost = rng.random((len(a), len(b)))
    p, q = rng.permutation(len(a)), rng.permutation(len(b))
    d = earth_movers_distance(a, b, cost).distance
    permuted = earth_movers_distance(a[p], b[q], cost[np.ix_(p, q)]).distance
    assert permuted == pytest.approx(d, abs=1e-10)
    assert earth_movers_distance(b, a, cost.T).distance == pytest.approx(d, abs=1e-10)


def test_identical_sets_distance_zero():
    x = np.random.default_rng(1).normal(size=(5, 3))
    cost = np.linalg.norm(x[:, None] - x[None], axis=-1)
    r = earth_movers_distance(np.ones(5), np.full(5, 2.0), cost)  # masses are normalised
    assert r.distance == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "cost", "error", "match"),
    [
        ([1, np.nan], [1], [[0], [1]], ValueError, r"a\[1\] is nan: weights must be finite"),
        ([1, 1], [1, np.inf], [[0, 1], [1, 0]], ValueError, r"b\[1\] is inf"),
        ([1, -1], [1], [[0], [1]], ValueError, r"a\[1\] = -1.0 is negative"),
        ([0, 0], [1], [[0], [1]], ValueError, "a has total mass 0"),
        ([], [1], np.zeros((0, 1)), ValueError, "non-empty 1-D"),
        ([[1, 2]], [1], [[0]], ValueError, "non-empty 1-D"),
        ([1, 1], [1], [[0, 1]], ValueError, r"cost has shape \(1, 2\) but a has 2 and b has 1"),
        ([1], [1], [[np.nan]], ValueError, r"cost\[0, 0\] is nan"),
        (["x"], [1], [[0]], TypeError, "a must be a 1-D array of numbers"),
    ],
)
def test_bad_inputs(a, b, cost, error, match):
    with pytest.raises(error, match=match):
        earth_movers_distance(a, b, cost)


def test_result_protocol():
    r = earth_movers_distance([1, 1], [1, 1], [[0, 3], [1, 2]])
    assert r.score == r.distance == 1.0 and r.item_scores is None
    assert type(r).higher_is_better is False and r.signature.startswith("emd|")
