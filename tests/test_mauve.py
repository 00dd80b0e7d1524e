"""MAUVE of two sets of embeddings (markeval.distribution.mauve): quantisation and seed band.

(a) By hand: identical sets score 1, sets in opposite directions share no bucket.
(b) The authors' implementation (mauve-text 0.4.0, test-only): with faiss's k-means and the
    same seed (theirs ``s``, ours ``s + 2``) the histograms are equal and MAUVE, MAUVE* and the
    frontier integrals agree to 1e-12; with the project's own k-means the mean over 10 seeds
    lies within the larger of the two seed spreads (standard deviations) of theirs.
(c) The PCA keeps what scikit-learn's keeps (the same number of components, the same
    distances); the seed band is the mean of single-seed runs; bounds; bad input by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.distribution.mauve import auto_buckets, mauve, pca_project, quantize


def _sets(seed: int, n: int = 300, d: int = 32, shift: float = 0.15):
    """A human-like set and a shifted model-like set, anisotropic so that PCA cuts."""
    rng = np.random.default_rng(seed)
    scale = np.linspace(2.0, 0.2, d)
    return (rng.normal(size=(n, d)) * scale,
            rng.normal(size=(n, d)) * scale + shift * rng.normal(size=d))


def test_identical_sets_score_one_and_opposite_sets_near_zero():
    ref, _ = _sets(0)
    r = mauve(ref, ref.copy(), n_seeds=2)
    assert (r.mauve, r.mauve_star, r.frontier_integral) == (1.0, 1.0, 0.0)
    noise = np.random.default_rng(1).normal(size=(200, 4)) * 0.1
    p, q = quantize(noise + [1, 0, 0, 0], noise - [1, 0, 0, 0], n_buckets=4)
    assert not set(p) & set(q)
    r = mauve(noise + [1, 0, 0, 0], noise - [1, 0, 0, 0], n_buckets=4, n_seeds=1)
    # disjoint supports: the curve is (exp(5 log(1-w)), exp(5 log w)) = ((1-w)^5, w^5)
    w = np.linspace(1e-6, 1 - 1e-6, 25)
    np.testing.assert_allclose(r.divergence_curve[1:-1], np.c_[(1 - w) ** 5, w ** 5],
                               rtol=1e-9)
    assert r.frontier_integral == pytest.approx(1.0, abs=1e-12) and r.mauve < 0.01


@pytest.mark.parametrize("seed", [25, 1])
def test_equals_mauve_text_with_the_same_kmeans(seed):
    compute_mauve = pytest.importorskip("mauve").compute_mauve
    pytest.importorskip("faiss")
    p, q = _sets(seed)
    theirs = compute_mauve(p_features=p, q_features=q, seed=seed)
    ours = mauve(p, q, kmeans="faiss", seed=seed + 2, n_seeds=1)
    # the same clusters: the same counts per bucket, up to the clusters' numbering
    assert ours.n_buckets == theirs.num_buckets
    for mine, their in ((ours.runs[0].p_hist, theirs.p_hist), (ours.runs[0].q_hist,
                                                                theirs.q_hist)):
        np.testing.assert_array_equal(np.sort(np.rint(mine * len(p))),
                                      np.sort(np.rint(their * len(p))))
    for field in ("mauve", "mauve_star", "frontier_integral", "frontier_integral_star"):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field), abs=1e-12), field


def test_own_kmeans_within_the_seed_spread_of_mauve_text():
    compute_mauve = pytest.importorskip("mauve").compute_mauve
    p, q = _sets(7)
    theirs = [compute_mauve(p_features=p, q_features=q, seed=s).mauve for s in range(10)]
    ours = mauve(p, q, n_seeds=10)
    spread = max(np.std(theirs, ddof=1), ours.mauve_std)
    assert 0 < spread < 0.1
    assert abs(ours.mauve - np.mean(theirs)) <= spread


def test_pca_keeps_what_scikit_learn_keeps():
    from sklearn.decomposition import PCA

    x, _ = _sets(3, n=120, d=16)
    ours = pca_project(x, 0.9)
    pca = PCA().fit(x)
    keep = int(np.argmax(np.cumsum(pca.explained_variance_ratio_) >= 0.9)) + 1
    theirs = pca.transform(x)[:, :keep]
    assert ours.shape == theirs.shape
    # components are defined up to sign: compare coordinates in absolute value
    np.testing.assert_allclose(np.abs(ours), np.abs(theirs), atol=1e-9)


def test_the_seed_band_is_the_mean_of_single_seed_runs():
    p, q = _sets(5, n=150)
    band = mauve(p, q, n_seeds=3, seed=10)
    singles = [mauve(p, q, n_seeds=1, seed=10 + i) for i in range(3)]
    assert band.seed_scores == tuple(s.mauve for s in singles)
    assert band.mauve == pytest.approx(np.mean(band.seed_scores), rel=1e-15)
    assert band.mauve_star == pytest.approx(np.mean([s.mauve_star for s in singles]), rel=1e-15)
    assert band.mauve_std == pytest.approx(np.std(band.seed_scores, ddof=1), rel=1e-12)
    assert "seeds:3" in band.signature and "seed:10" in band.signature


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(20, 60), m=st.integers(20, 60),
       shift=st.floats(0, 3))
def test_scores_lie_in_their_ranges(seed, n, m, shift):
    rng = np.random.default_rng(seed)
    r = mauve(rng.normal(size=(n, 5)), rng.normal(size=(m, 5)) + shift, n_seeds=2, seed=seed)
    for value in (r.mauve, r.mauve_star, r.frontier_integral, r.frontier_integral_star):
        assert 0.0 <= value <= 1.0
    assert r.n_buckets == auto_buckets(n, m) and 1 <= r.dims <= 5
    assert all(h.sum() == pytest.approx(1.0) for run in r.runs for h in (run.p_hist,
                                                                         run.q_hist))


@pytest.mark.parametrize("kwargs, match", [
    ({"n_buckets": 1}, "n_buckets"),
    ({"n_buckets": 50}, "n_buckets=50 exceeds the 40 points"),
    ({"n_buckets": "many"}, "n_buckets"),
    ({"kmeans": "minibatch"}, "kmeans"),
    ({"n_seeds": 0}, "n_seeds"),
    ({"pca_variance": 1.0}, "variance"),
    ({"seed": -1}, "seed"),
    ({"kmeans": "faiss", "seed": 2**31 - 1, "n_seeds": 2}, "seed must be at most"),
    ({"progress": "yes"}, "progress"),
])
def test_bad_settings_are_refused_by_name(kwargs, match):
    x = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises((ValueError, TypeError), match=match):
        mauve(x, x + 1, **kwargs)


def test_bad_sets_are_refused_by_name():
    x = np.zeros((10, 3))
    with pytest.raises(ValueError, match="candidate"):
        mauve(x, np.zeros((10, 4)))
    with pytest.raises(ValueError, match="reference"):
        mauve(np.zeros((1, 3)), x)
    with pytest.raises(ValueError, match="candidate"):
        mauve(x, [[np.nan, 0, 0]] * 5)
