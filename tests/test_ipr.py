"""Improved precision and recall: brute force on random sets, properties, realism, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from markeval.distribution.ipr import IPRResult, improved_precision_recall, realism_scores


def brute_ipr(ref, cand, k):
    """The paper's definition with full distance matrices (self excluded by index)."""
    def sq(a, b):
        return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)

    def radii(x):
        d = sq(x, x)
        np.fill_diagonal(d, np.inf)
        return np.sort(d, axis=1)[:, k - 1]

    precision = (sq(cand, ref) <= radii(ref)[None, :]).any(axis=1).mean()
    recall = (sq(ref, cand) <= radii(cand)[None, :]).any(axis=1).mean()
    return precision, recall


@pytest.mark.parametrize("seed", range(5))
def test_matches_brute_force_on_random_sets(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 10))
    ref = rng.normal(size=(int(rng.integers(5, 80)), d))
    cand = rng.normal(size=(int(rng.integers(5, 80)), d)) * rng.uniform(0.5, 2) + rng.uniform(-1, 1)
    k = int(rng.integers(1, 5))
    r = improved_precision_recall(ref, cand, k=k, block_size=7)
    assert (r.precision, r.recall) == brute_ipr(ref, cand, k)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3).flatmap(lambda d: st.tuples(
    arrays(np.int64, st.tuples(st.integers(3, 20), st.just(d)), elements=st.integers(-2, 2)),
    arrays(np.int64, st.tuples(st.integers(3, 20), st.just(d)), elements=st.integers(-2, 2)))),
    st.integers(1, 2))
def test_matches_brute_force_with_ties_and_duplicates(sets, k):
    ref, cand = (a.astype(float) for a in sets)
    r = improved_precision_recall(ref, cand, k=k)
    assert (r.precision, r.recall) == brute_ipr(ref, cand, k)


def test_identical_and_far_apart_sets():
    x = np.random.default_rng(0).normal(size=(100, 8))
    r = improved_precision_recall(x, x + 100)
    assert (r.precision, r.recall) == (0.0, 0.0)
    assert (r.k, r.n_reference, r.n_candidate, r.realism) == (3, 100, 100, None)


def test_swapping_sets_swaps_precision_and_recall():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(60, 3)), rng.normal(size=(90, 3)) + 0.7
    ab, ba = improved_precision_recall(a, b), improved_precision_recall(b, a)
    assert (ab.precision, ab.recall) == (ba.recall, ba.precision)


def test_dropped_mode_lowers_recall_not_precision():
    rng = np.random.default_rng(2)
    modes = np.array([[0.0, 0.0], [20.0, 0.0]])
    ref = np.vstack([m + rng.normal(size=(200, 2)) for m in modes])
    cand = modes[0] + rng.normal(size=(400, 2))
    r = improved_precision_recall(ref, cand)
    assert r.precision > 0.9 and 0.4 < r.recall < 0.55


def test_torch_backend_gives_identical_counts():
    pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(120, 16)), rng.normal(size=(100, 16)) + 0.2
    want = improved_precision_recall(a, b)
    got = improved_precision_recall(a, b, backend="torch", dtype="float32", block_size=40)
    assert (got.precision, got.recall) == (want.precision, want.recall)


def test_realism_against_brute_force():
    rng = np.random.default_rng(4)
    ref, cand = rng.normal(size=(80, 5)), rng.normal(size=(30, 5)) * 1.3
    k = 3
    d = np.sqrt(((ref[:, None] - ref[None]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    radii = np.sort(d, axis=1)[:, k - 1]
    kept = radii <= np.median(radii)
    dist = np.sqrt(((cand[:, None] - ref[None, kept]) ** 2).sum(-1))
    want = (radii[kept][None, :] / dist).max(axis=1)
    got = realism_scores(ref, cand, k=k, block_size=9)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    r = improved_precision_recall(ref, cand, k=k, realism=True)
    np.testing.assert_allclose(r.realism, want, rtol=1e-9)
    assert all(type(v) is float for v in r.realism)
    # Realism >= 1 means "inside a kept ball", so such a candidate counts for precision.
    inside_kept = (dist <= radii[kept][None, :]).any(axis=1)
    np.testing.assert_array_equal(want >= 1, inside_kept)


def test_realism_of_a_copy_of_a_reference_point_is_infinite():
    ref = np.array([[0.0], [1.0], [2.0], [3.0]])
    assert realism_scores(ref, np.array([[1.0], [0.5]]), k=1).tolist() == [np.inf, 2.0]


@pytest.mark.parametrize(
    ("ref", "cand", "k", "error", "match"),
    [
        (np.zeros((5, 2)), np.zeros((3, 2)), 3, ValueError, "k=3 is too large for candidate of 3 points"),
        (np.zeros((3, 2)), np.zeros((5, 2)), 3, ValueError, "k=3 is too large for reference of 3 points"),
        (np.zeros((5, 2)), np.zeros((5, 4)), 1, ValueError, "reference has dimension 2 but candidate has dimension 4"),
        (np.zeros((0, 2)), np.zeros((5, 2)), 1, ValueError, "reference has 0 rows; at least 2"),
        (np.zeros((5, 2)), [[0.0, 1.0]], 1, ValueError, "candidate has 1 rows; at least 2"),
        (np.zeros((5, 2)), np.full((5, 2), np.nan), 1, ValueError, "candidate contains 10 non-finite"),
        (np.zeros((5, 2)), np.zeros((5, 2)), 0, ValueError, "k must be >= 1"),
        (np.zeros((5, 2)), np.zeros((5, 2)), "3", TypeError, "k must be an int"),
    ],
)
def test_bad_input(ref, cand, k, error, match):
    with pytest.raises(error, match=match):
        improved_precision_recall(ref, cand, k=k)


def test_result_protocol():
    ref = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    r = improved_precision_recall(ref, np.array([[0.5], [1.5], [9.0], [9.5]]), k=1,
                                  progress=False)
    assert r.score == r.precision == 0.5 and r.item_scores is None and IPRResult.higher_is_better
