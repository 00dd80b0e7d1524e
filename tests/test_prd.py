"""PRD: the reference code's analytic cases, F_β, clustering, seeding and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.distribution.prd import (
    PRDResult,
    cluster_histograms,
    kmeans_labels,
    max_f_beta,
    prd,
    prd_curve,
    prd_from_histograms,
)

# The first four cases are those of the authors' prd_score_test.py (compare_gan).


def test_no_overlap_gives_zero_everywhere():
    precision, recall = prd_curve([1, 0], [0, 1])
    np.testing.assert_array_equal(precision, 0)
    np.testing.assert_array_equal(recall, 0)


def test_perfect_overlap_gives_one_at_45_degrees():
    precision, recall = prd_curve([1, 0], [1, 0], num_angles=11)
    assert precision[5] == pytest.approx(1) and recall[5] == pytest.approx(1)


def test_low_precision_high_recall():
    precision, recall = prd_curve([1, 0], [0.5, 0.5])  # reference, candidate
    assert max(precision) == pytest.approx(0.5) and max(recall) == pytest.approx(1)


def test_high_precision_low_recall():
    precision, recall = prd_curve([0.5, 0.5], [1, 0])
    assert max(precision) == pytest.approx(1) and max(recall) == pytest.approx(0.5)


def test_curve_formula_by_hand():
    """α(λ) = Σ min(λ P, Q) and β = α / λ at λ = tan θ."""
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.4, 0.0])
    precision, recall = prd_curve(p, q, num_angles=7)
    for theta, a, b in zip(np.linspace(1e-10, math.pi / 2 - 1e-10, 7), precision, recall):
        lam = math.tan(theta)
        want = min(lam * 0.2, 0.6) + min(lam * 0.3, 0.4) + 0.0
        assert a == pytest.approx(min(want, 1)) and b == pytest.approx(min(want / lam, 1))


def test_mode_dropping_histograms():
    """P uniform over 10 modes, Q uniform over 5 of them: precision 1, recall 1/2."""
    p = np.full(10, 0.1)
    q = np.r_[np.full(5, 0.2), np.zeros(5)]
    r = prd_from_histograms(p, q)
    assert max(r.precision_curve) == pytest.approx(1) and max(r.recall_curve) == pytest.approx(0.5)
    # F_8 ≈ recall, F_1/8 ≈ precision: the best point of the curve is (α, β) = (1, 0.5) at
    # λ = 2, which the 1001 angles miss by a little (hence 1e-4).
    assert r.f_beta == pytest.approx(65 * 0.5 / (64 + 0.5), rel=1e-4)
    assert r.f_beta_inv == pytest.approx((1 + 1 / 64) * 0.5 / (1 / 64 + 0.5), rel=1e-4)
    assert r.num_clusters == 0 and len(r.precision_curve) == 1001


def test_max_f_beta_formula():
    p, r = np.array([1.0, 0.8, 0.2]), np.array([0.1, 0.5, 0.9])
    for beta in (1.0, 8.0, 1 / 8):
        want = max((1 + beta**2) * a * b / (beta**2 * a + b + 1e-10) for a, b in zip(p, r))
        assert max_f_beta(p, r, beta) == pytest.approx(want, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=8), st.integers(0, 2**16))
def test_curve_bounds_and_symmetry(weights, seed):
    """Swapping P and Q swaps precision and recall (and reverses the angle order)."""
    rng = np.random.default_rng(seed)
    p = np.asarray(weights) + 1e-3
    p /= p.sum()
    q = rng.dirichlet(np.ones(len(p)))
    a1, b1 = prd_curve(p, q, num_angles=101)
    a2, b2 = prd_curve(q, p, num_angles=101)
    assert ((0 <= a1) & (a1 <= 1) & (0 <= b1) & (b1 <= 1)).all()
    np.testing.assert_allclose(a1, b2[::-1], atol=1e-7)
    np.testing.assert_allclose(b1, a2[::-1], atol=1e-7)


def test_disjoint_supports_give_zero():
    rng = np.random.default_rng(1)
    ref, cand = rng.normal(size=(150, 3)), rng.normal(size=(150, 3)) + 20
    r = prd(ref, cand, num_runs=3)
    assert r.f_beta == 0.0 and r.f_beta_inv == 0.0


def test_mode_dropping_embeddings():
    """Reference on 4 far-apart modes, candidate on 2 of them: high F_1/8, F_8 near 1/2."""
    rng = np.random.default_rng(2)
    modes = np.array([[0, 0], [30, 0], [0, 30], [30, 30]], dtype=float)
    ref = np.vstack([m + rng.normal(size=(100, 2)) for m in modes])
    cand = np.vstack([m + rng.normal(size=(200, 2)) for m in modes[:2]])
    r = prd(ref, cand, num_runs=3)
    assert r.f_beta_inv > 0.9
    assert r.f_beta == pytest.approx(65 * 0.5 / 64.5, abs=0.05)


def test_seeded_and_reproducible():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(120, 4)), rng.normal(size=(120, 4)) + 0.5
    assert prd(a, b, num_runs=2, seed=7) == prd(a, b, num_runs=2, seed=7)
    assert prd(a, b, num_runs=2, seed=7).signature.startswith(
        "prd|angles:1001|beta:8.0|clusters:20|runs:2|kmeans:lloyd++|seed:7|version:")


def test_kmeans_recovers_separated_clusters_and_hist_sums():
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(5, 3)) * 50
    x = np.repeat(centres, 30, axis=0) + rng.normal(size=(150, 3))
    labels = kmeans_labels(x, 5, seed=1)
    # Each true cluster gets exactly one label, and the labels differ between clusters.
    assert all(len(set(labels[i * 30:(i + 1) * 30])) == 1 for i in range(5))
    assert len(set(labels)) == 5
    p, q = cluster_histograms(x[:75], x[75:], num_clusters=5)
    assert p.sum() == pytest.approx(1) and q.sum() == pytest.approx(1)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.integers(1, 64), st.integers(0, 2**32 - 1))
def test_kmeans_sums_in_slices_are_the_whole_arrays_bits(n, d, slice_values, seed):
    """The squared norms and variances that k-means starts from are summed in slices (no
    temporary the size of the data) with every bit of the whole-array expression, from slices
    of one row or two columns up to one slice in all."""
    from markeval.distribution import prd as module

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) * rng.uniform(1e-3, 1e3) + rng.uniform(-5, 5, size=d)
    original = module._SLICE_VALUES
    module._SLICE_VALUES = slice_values
    try:
        norms, variances = module._row_sq_norms(x), module._column_variances(x)
    finally:
        module._SLICE_VALUES = original
    assert np.array_equal(norms, (x**2).sum(axis=1))
    assert np.array_equal(variances, x.var(axis=0))


def test_kmeans_with_fewer_distinct_points_than_clusters():
    """Two distinct points, three clusters: k-means++ must still place three centres."""
    x = np.zeros((10, 2))
    x[5:] = 1.0
    labels = kmeans_labels(x, 3)
    assert labels.shape == (10,) and len(set(labels[:5])) == 1 and len(set(labels[5:])) == 1


def test_balance():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(100, 2)), rng.normal(size=(120, 2))
    with pytest.raises(ValueError, match="reference has 100 points but candidate has 120"):
        prd(a, b)
    assert 0 <= prd(a, b, enforce_balance=False, num_runs=1).f_beta <= 1


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: prd_curve([0.5, 0.6], [0.5, 0.5]), ValueError, "reference_hist must sum to 1"),
        (lambda: prd_curve([1.5, -0.5], [0.5, 0.5]), ValueError, "finite non-negative"),
        (lambda: prd_curve([1.0], [0.5, 0.5]), ValueError, "has 1 bins but candidate_hist has 2"),
        (lambda: prd_curve([], []), ValueError, "non-empty 1-D"),
        (lambda: prd_curve([1.0], [1.0], num_angles=1), ValueError, "num_angles must be >= 2"),
        (lambda: prd(np.zeros((5, 2)), np.zeros((5, 2))), ValueError, "num_clusters=20 exceeds the 10 points"),
        (lambda: prd(np.zeros((30, 2)), np.zeros((30, 3))), ValueError, "dimension 2 but candidate has dimension 3"),
        (lambda: prd(np.full((30, 2), np.inf), np.zeros((30, 2))), ValueError, "reference contains 60 non-finite"),
        (lambda: prd(np.zeros((0, 2)), np.zeros((0, 2))), ValueError, "reference has 0 rows"),
        (lambda: prd(np.zeros((30, 2)), np.zeros((30, 2)), num_runs=0), ValueError, "num_runs must be a positive int, got 0"),
        (lambda: prd(np.zeros((30, 2)), np.zeros((30, 2)), num_clusters=2.5), TypeError, "num_clusters must be an int"),
        (lambda: max_f_beta([0.5], [1.5]), ValueError, "in \\[0, 1\\]"),
        (lambda: max_f_beta([0.5], [0.5], beta=0), ValueError, "beta must be a positive number"),
    ],
)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_result_protocol():
    r = prd_from_histograms([0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], num_angles=5)
    assert r.score == r.f_beta and r.item_scores is None and PRDResult.higher_is_better
    assert len(r.precision_curve) == len(r.recall_curve) == 5
