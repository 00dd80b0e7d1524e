"""Density and coverage: counts by hand, the definition by brute force, parity with prdc 0.2,
properties, backends, bad input."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from markeval.distribution.coverage import DensityCoverageResult, density_coverage


def brute(ref, cand, k):
    """The paper's definition on full distance matrices: open balls, self excluded by index."""
    def sq(a, b):
        return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)

    within = sq(ref, ref)
    np.fill_diagonal(within, np.inf)
    radii = np.sort(within, axis=1)[:, k - 1]
    inside = sq(cand, ref) < radii[None, :]  # (m, n): candidate j in the ball of reference i
    return inside.sum() / (k * len(cand)), inside.any(axis=0).mean()


# --- by hand ------------------------------------------------------------------------------------


def test_points_on_a_line_by_hand():
    # Reference 0, 2, 4, 6 with k = 2: the second-nearest other point is 4 away from 0 and 6,
    # 2 away from 2 and 4 (radii 4, 2, 2, 4). Candidate 1 is inside the balls of 0 (1 < 4) and
    # 2 (1 < 2), not 4's (3 < 2 fails) nor 6's (5 < 4 fails); candidate 5 is inside those of 4
    # and 6; candidate 20 is inside none: 4 hits / (k = 2 times 3 candidates). Every ball
    # holds a candidate: those of 0 and 2 hold 1, those of 4 and 6 hold 5.
    ref = np.array([[0.0], [2.0], [4.0], [6.0]])
    r = density_coverage(ref, np.array([[1.0], [5.0], [20.0]]), k=2)
    assert (r.density, r.coverage) == (4 / 6, 1.0)
    assert (r.k, r.n_reference, r.n_candidate) == (2, 4, 3)
    # k = 1 (all radii 2): candidate 1 is in the balls of 0 and 2, 5 in those of 4 and 6
    r1 = density_coverage(ref, np.array([[1.0], [5.0], [20.0]]), k=1)
    assert (r1.density, r1.coverage) == (4 / 3, 1.0)


def test_balls_are_open():
    # Radii 1 (k = 1, points 0 1 2 3): a candidate at distance exactly 1 is outside. 0.0 is
    # inside its own ball only (the balls of 1 end at 0); 2.5 is inside those of 2 and 3.
    ref = np.array([[0.0], [1.0], [2.0], [3.0]])
    r = density_coverage(ref, np.array([[0.0], [2.5]]), k=1)
    assert (r.density, r.coverage) == (3 / 2, 3 / 4)
    r = density_coverage(ref, np.array([[4.0], [-1.0]]), k=1)  # on the boundary of 3 and 0
    assert (r.density, r.coverage) == (0.0, 0.0)


def test_a_point_repeated_more_than_k_times_has_an_empty_ball():
    # Three copies of 0 with k = 2: radius 0, and an open ball of radius 0 holds nothing, not
    # even a candidate at 0 itself. The ball of 5 (radius 5) holds the candidate 5; the
    # candidate 0 is on its boundary, outside.
    ref = np.array([[0.0], [0.0], [0.0], [5.0]])
    r = density_coverage(ref, np.array([[0.0], [5.0]]), k=2)
    assert (r.density, r.coverage) == (1 / 4, 1 / 4)
    # With k = 3 the copies' balls reach 5 (radius 5): each holds 0 (5 is on the boundary).
    r = density_coverage(ref, np.array([[0.0], [5.0]]), k=3)
    assert (r.density, r.coverage) == (4 / 6, 1.0)


def test_equal_sets_have_full_coverage_and_far_sets_none():
    x = np.random.default_rng(0).normal(size=(100, 8))
    same = density_coverage(x, x.copy())
    assert same.coverage == 1.0 and 0.5 < same.density < 1.5
    far = density_coverage(x, x + 100)
    assert (far.density, far.coverage) == (0.0, 0.0)


def test_result_shape():
    r = density_coverage(np.eye(4), np.eye(4)[:2], k=2)
    assert isinstance(r, DensityCoverageResult) and r.score == r.density
    assert r.item_scores is None and DensityCoverageResult.higher_is_better is True
    assert r.signature.startswith("density_coverage|k:2|version:")
    assert r.neighbour_report is None
    assert isinstance(r.density, float) and isinstance(r.coverage, float)


# --- the definition -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_on_random_sets(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 10))
    ref = rng.normal(size=(int(rng.integers(8, 80)), d))
    cand = rng.normal(size=(int(rng.integers(1, 80)), d)) * rng.uniform(0.5, 2) + 0.4
    k = int(rng.integers(1, 6))
    r = density_coverage(ref, cand, k=k, block_size=7)
    assert (r.density, r.coverage) == pytest.approx(brute(ref, cand, k), abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3).flatmap(lambda d: st.tuples(
    arrays(np.int64, st.tuples(st.integers(4, 16), st.just(d)), elements=st.integers(-2, 2)),
    arrays(np.int64, st.tuples(st.integers(1, 16), st.just(d)), elements=st.integers(-2, 2)))),
    st.integers(1, 3))
def test_matches_brute_force_with_ties_and_duplicates(sets, k):
    # Integer points: many distances equal a radius exactly, where open and closed differ.
    ref, cand = (a.astype(float) for a in sets)
    r = density_coverage(ref, cand, k=k)
    assert (r.density, r.coverage) == pytest.approx(brute(ref, cand, k), abs=1e-15)


# --- parity with prdc 0.2 -----------------------------------------------------------------------


def _prdc(ref, cand, k):
    prdc = pytest.importorskip("prdc")
    with contextlib.redirect_stdout(io.StringIO()):  # it prints the set sizes
        return prdc.compute_prdc(ref, cand, k)


@pytest.mark.parametrize("seed", range(12))
def test_parity_with_prdc_on_gaussian_sets(seed):
    # The same counts from the same definition: the two floats differ only in how the count is
    # divided (prdc: mean over candidates of sum / k; ours: total / (k m)), by an ulp or two,
    # so 1e-12 is room, not slack (measured at most 1.2e-16). prdc also draws the candidates'
    # balls (for its precision and recall), so it needs k + 2 <= m as well as k + 2 <= n.
    rng = np.random.default_rng(100 + seed)
    d = int(rng.integers(1, 40))
    ref = rng.normal(size=(int(rng.integers(12, 160)), d))
    cand = rng.normal(size=(int(rng.integers(12, 160)), d)) * rng.uniform(0.6, 1.5) + 0.3
    k = int(rng.integers(1, 10))
    theirs = _prdc(ref, cand, k)
    ours = density_coverage(ref, cand, k=k)
    assert ours.density == pytest.approx(float(theirs["density"]), rel=0, abs=1e-12)
    assert ours.coverage == pytest.approx(float(theirs["coverage"]), rel=0, abs=1e-12)


def test_parity_with_prdc_at_the_papers_k_on_a_larger_set():
    rng = np.random.default_rng(7)
    ref, cand = rng.normal(size=(600, 64)), rng.normal(size=(500, 64)) * 1.1 + 0.05
    theirs = _prdc(ref, cand, 5)
    ours = density_coverage(ref, cand)  # k = 5 by default, as the paper
    assert ours.k == 5
    assert (ours.density, ours.coverage) == pytest.approx(
        (float(theirs["density"]), float(theirs["coverage"])), rel=0, abs=1e-12)


# --- properties ---------------------------------------------------------------------------------

_sets = st.integers(0, 2**32 - 1).map(lambda seed: (
    np.random.default_rng(seed), np.random.default_rng(seed).normal(size=(25, 3)),
    np.random.default_rng(seed + 1).normal(size=(18, 3)) + 0.4))


@settings(max_examples=25, deadline=None)
@given(_sets, st.integers(1, 6))
def test_permutations_of_either_set_change_nothing(sets, k):
    rng, ref, cand = sets
    want = density_coverage(ref, cand, k=k)
    got = density_coverage(ref[rng.permutation(len(ref))], cand[rng.permutation(len(cand))],
                           k=k)
    assert (got.density, got.coverage) == (want.density, want.coverage)  # the same counts


@settings(max_examples=25, deadline=None)
@given(_sets, st.integers(1, 6))
def test_bounds(sets, k):
    _, ref, cand = sets
    r = density_coverage(ref, cand, k=k)
    assert 0.0 <= r.coverage <= 1.0
    assert 0.0 <= r.density <= len(ref) / k  # a candidate is in at most every ball


# --- backends and neighbours --------------------------------------------------------------------


def test_float32_points_and_arithmetic_give_the_exact_counts():
    # float32 points stay float32 and every decision is made in float64 from them; the torch
    # backend runs the same tiles (tests/test_geometry.py), with the same rechecks.
    rng = np.random.default_rng(3)
    ref, cand = (rng.normal(size=(120, 16)).astype(np.float32),
                 (rng.normal(size=(90, 16)) + 0.2).astype(np.float32))
    want = brute(ref.astype(float), cand.astype(float), 4)
    for dtype in ("float32", "float64"):
        got = density_coverage(ref, cand, k=4, dtype=dtype, block_size=33)
        assert (got.density, got.coverage) == pytest.approx(want, abs=1e-15)


def test_the_index_path_scanning_every_list_is_exact_with_ties():
    pytest.importorskip("faiss")
    from markeval.geometry import IndexSettings

    # Integer points, many ties at the radii: the open balls hold on the index path too.
    rng = np.random.default_rng(4)
    ref = rng.integers(-3, 4, size=(300, 3)).astype(float)
    cand = rng.integers(-3, 4, size=(200, 3)).astype(float)
    want = density_coverage(ref, cand, k=5)
    got = density_coverage(ref, cand, k=5, neighbours=IndexSettings(probes=10_000, audit=50))
    assert (got.density, got.coverage) == (want.density, want.coverage) == brute(ref, cand, 5)
    report = got.neighbour_report  # the two passes' (radii, then counts), added
    assert report is not None and report.audited == report.agreed > 0
    assert "|neighbours:faiss-ivf" in got.signature


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ref, cand, k, err, match", [
    (np.zeros((5, 2)), np.zeros((3, 2)), 5, ValueError, r"k=5 is too large for reference of 5"),
    (np.zeros((5, 2)), np.zeros((3, 2)), 0, ValueError, r"k must be >= 1, got 0"),
    (np.zeros((5, 2)), np.zeros((3, 2)), 2.0, TypeError, r"k must be an int, got float"),
    (np.zeros((1, 2)), np.zeros((3, 2)), 1, ValueError, r"reference has 1 rows"),
    (np.zeros((5, 2)), np.zeros((0, 2)), 1, ValueError, r"candidate has 0 rows"),
    (np.zeros((5, 2)), np.zeros((3, 3)), 1, ValueError,
     r"reference has dimension 2 but candidate has dimension 3"),
    (np.array([[0.0, np.nan]] * 5), np.zeros((3, 2)), 1, ValueError,
     r"reference contains 5 non-finite values \(first: NaN at row 0, column 1\)"),
    (np.zeros((5, 2)), np.array([[np.inf, 0.0]]), 1, ValueError,
     r"candidate contains 1 non-finite"),
    (np.zeros(5), np.zeros((3, 2)), 1, ValueError, r"reference must be 2-D"),
    ("the cat", np.zeros((3, 2)), 1, TypeError, r"reference must be a 2-D array"),
    (np.zeros((5, 2)), "the cat", 1, TypeError, r"candidate must be a 2-D array"),
])
def test_bad_input_is_refused_naming_the_argument(ref, cand, k, err, match):
    with pytest.raises(err, match=match):
        density_coverage(ref, cand, k=k)


def test_bad_arithmetic_is_refused_naming_the_argument():
    x = np.zeros((5, 2))
    with pytest.raises(ValueError, match="dtype"):
        density_coverage(x, x, k=1, dtype="float16")
    with pytest.raises(ValueError, match="neighbours must be one of"):
        density_coverage(x, x, k=1, neighbours="approximate")
