"""The divergence frontier of two histograms (markeval.distribution.frontier): MAUVE's curve and
area, the frontier integral, MAUVE*'s smoothed histograms.

(a) By hand: the three-bucket toy, disjoint and equal supports, one point of the curve.
(b) The authors' implementation (mauve-text 0.4.0, test-only): on 400 random pairs of histograms
    (with empty buckets), the curve and the frontier integral agree to 1e-12 and MAUVE to 1e-12.
    Where P = Q mauve-text's area depends on how np.argsort orders tied points (one bucket: 0.75);
    ours follows the curve and gives 1, the value the definition asks for.
(c) Properties: bounds, symmetry, bucket order, and bad input refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from markeval.distribution.frontier import (bucket_histogram, divergence_curve, frontier_area,
                                            frontier_integral, mauve_from_histograms)


def test_the_three_bucket_toy_by_hand():
    # P = (1/2, 1/2, 0), Q = (0, 1/2, 1/2): each lone half costs 1/2 / 4, the shared bucket 0
    assert frontier_integral([0.5, 0.5, 0], [0, 0.5, 0.5]) == 0.5
    assert frontier_integral([1, 0], [0, 1]) == 1.0 and frontier_integral([2, 3], [2, 3]) == 0.0
    # disjoint supports: KL(Q || R) = -log(1 - w), KL(P || R) = -log(w); at w = 1/2 both are
    # log 2, so the curve passes through (2^-c, 2^-c)
    curve = divergence_curve([1, 0], [0, 1], scaling=5, n_weights=3)
    np.testing.assert_allclose(curve[2], [0.5 ** 5, 0.5 ** 5], rtol=1e-12)
    assert curve[0].tolist() == [1.0, 0.0] and curve[-1].tolist() == [0.0, 1.0]
    # equal histograms: every inner point at (1, 1), the area the unit square
    assert mauve_from_histograms([0.2, 0.8], [0.2, 0.8]).score == 1.0


def test_the_area_is_the_polygon_under_the_curve():
    assert frontier_area([[1, 0], [1, 1], [0, 1]]) == 1.0
    assert frontier_area([[1, 0], [0, 0], [0, 1]]) == 0.0
    assert frontier_area([[1, 0], [0, 1]]) == 0.5


def _pairs(n: int):
    rng = np.random.default_rng(61)
    while n:
        k = int(rng.integers(1, 50))
        p, q = (rng.dirichlet(np.full(k, rng.uniform(0.05, 3))) for _ in range(2))
        p[rng.random(k) < 0.2] = 0
        q[rng.random(k) < 0.2] = 0
        if p.sum() and q.sum() and not np.allclose(p / p.sum(), q / q.sum()):
            n -= 1
            yield p / p.sum(), q / q.sum()


def test_parity_with_mauve_text_from_histograms():
    mauve = pytest.importorskip("mauve.compute_mauve")
    from sklearn.metrics import auc

    weights = np.linspace(1e-6, 1 - 1e-6, 25)
    for p, q in _pairs(400):
        theirs = mauve.get_divergence_curve_for_multinomials(p, q, weights, 5)
        x, y = theirs.T
        by_x, by_y = np.argsort(x), np.argsort(y)
        area = 0.5 * (auc(x[by_x], y[by_x]) + auc(y[by_y], x[by_y]))
        ours = mauve_from_histograms(p, q)
        np.testing.assert_allclose(ours.divergence_curve, theirs, rtol=0, atol=1e-12)
        assert ours.score == pytest.approx(area, abs=1e-12)
        assert ours.frontier_integral == pytest.approx(mauve.get_fronter_integral(p, q),
                                                       abs=1e-12)


def test_smoothed_histograms_are_mauve_texts():
    """MAUVE*'s histograms: counts plus 1/2 (Krichevsky-Trofimov), normalised, as mauve-text's
    cluster_feats builds them from its k-means labels."""
    labels = np.array([0, 0, 3, 1, 0])
    np.testing.assert_allclose(bucket_histogram(labels, 5, smoothing=0.5),
                               (np.bincount(labels, minlength=5) + 0.5) / 7.5, rtol=1e-15)
    assert bucket_histogram(labels, 5).tolist() == [0.6, 0.2, 0.0, 0.2, 0.0]


histograms = st.integers(1, 12).flatmap(lambda k: st.tuples(
    *(st.lists(st.floats(0, 10), min_size=k, max_size=k).filter(lambda h: sum(h) > 1e-3)
      for _ in range(2))))


@given(histograms)
def test_bounds_symmetry_and_bucket_order(pair):
    p, q = (np.array(h) for h in pair)
    r = mauve_from_histograms(p, q)
    assert -1e-12 <= r.score <= 1 + 1e-12 and -1e-12 <= r.frontier_integral <= 1 + 1e-12
    swapped = mauve_from_histograms(q, p)
    assert swapped.score == pytest.approx(r.score, abs=1e-9)
    assert swapped.frontier_integral == pytest.approx(r.frontier_integral, abs=1e-12)
    order = np.arange(len(p))[::-1]
    assert mauve_from_histograms(p[order], q[order]).score == pytest.approx(r.score, abs=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: mauve_from_histograms([0.5, -0.5], [0.5, 0.5]), "p must hold finite non-negative"),
    (lambda: mauve_from_histograms([0.5, 0.5], [np.nan, 1]), "q must hold finite non-negative"),
    (lambda: mauve_from_histograms([0, 0], [0.5, 0.5]), "p has no mass"),
    (lambda: mauve_from_histograms([1], [0.5, 0.5]), "same buckets, got 1 and 2"),
    (lambda: mauve_from_histograms([[1.0]], [1.0]), "p must be a non-empty 1-D"),
    (lambda: divergence_curve([1], [1], scaling=0), "scaling must be > 0, got 0"),
    (lambda: divergence_curve([1], [1], n_weights=0), "n_weights"),
    (lambda: bucket_histogram([0, 3], 3), r"labels must lie in \[0, 3\), got 3"),
    (lambda: bucket_histogram([0.5], 3), "labels must be a 1-D array of ints"),
    (lambda: bucket_histogram([0], 3, smoothing=-1), "smoothing must be >= 0"),
    (lambda: frontier_area([[1, 0]]), "curve must have shape"),
])
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
