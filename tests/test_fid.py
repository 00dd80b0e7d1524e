"""FID: closed forms, the pytorch-fid formula as reference, properties and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.distribution.fid import FIDResult, fid, frechet_distance, gaussian_stats


def exact_sample(rng, n, mean, cov):
    """n points whose sample mean and (ddof=1) covariance are exactly ``mean`` and ``cov``."""
    z = rng.normal(size=(n, len(mean)))
    z -= z.mean(axis=0)
    # Whiten the sample so that its covariance is exactly I, then colour it with chol(cov).
    w = np.linalg.cholesky(np.cov(z, rowvar=False))
    z = np.linalg.solve(w, z.T).T
    return z @ np.linalg.cholesky(cov).T + mean


def pytorch_fid_formula(mu1, s1, mu2, s2, eps=1e-6):
    """The formula of pytorch-fid / the TTUR reference code: scipy sqrtm of the product."""
    covmean = scipy.linalg.sqrtm(s1.dot(s2))  # pytorch-fid passes disp=False (deprecated)
    if not np.isfinite(covmean).all():
        offset = np.eye(s1.shape[0]) * eps
        covmean = scipy.linalg.sqrtm((s1 + offset).dot(s2 + offset))
    if np.iscomplexobj(covmean):
        assert np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3)
        covmean = covmean.real
    diff = mu1 - mu2
    return diff.dot(diff) + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean)


def test_identical_sets_give_zero():
    x = np.random.default_rng(0).normal(size=(300, 20))
    r = fid(x, x.copy())
    assert isinstance(r, FIDResult)
    assert r.mean_term == 0.0  # x.copy() has the same bits: the same means, exactly
    assert r.value == pytest.approx(0.0, abs=1e-10)
    assert (r.n_reference, r.n_candidate, r.dim) == (300, 300, 20)
    assert all(type(v) is float for v in (r.value, r.mean_term, r.covariance_term))


def test_shifted_set_gives_squared_shift():
    x = np.random.default_rng(1).normal(size=(200, 5))
    delta = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    r = fid(x, x + delta)
    assert r.mean_term == pytest.approx(delta @ delta, rel=1e-12)
    assert r.covariance_term == pytest.approx(0.0, abs=1e-10)


def test_gaussians_with_diagonal_covariances_closed_form():
    """FID = ‖μ1 − μ2‖² + Σ (√a_i − √b_i)² when both covariances are diagonal."""
    rng = np.random.default_rng(2)
    a, b = np.array([1.0, 4.0, 9.0, 0.25]), np.array([4.0, 4.0, 1.0, 1.0])
    mu1, mu2 = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 1.0, 0.0, 3.0])
    x = exact_sample(rng, 500, mu1, np.diag(a))
    y = exact_sample(rng, 700, mu2, np.diag(b))
    want = ((mu1 - mu2) ** 2).sum() + ((np.sqrt(a) - np.sqrt(b)) ** 2).sum()
    assert want == 1 + 4 + 1 + 4 + 0.25
    assert fid(x, y).value == pytest.approx(want, rel=1e-10)


def test_parity_with_pytorch_fid_formula_on_non_commuting_covariances():
    rng = np.random.default_rng(3)
    d = 12
    m1, m2 = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    s1, s2 = m1 @ m1.T + 0.1 * np.eye(d), m2 @ m2.T + 0.1 * np.eye(d)
    mu1, mu2 = rng.normal(size=d), rng.normal(size=d)
    got = frechet_distance(mu1, s1, mu2, s2)
    assert got == pytest.approx(pytorch_fid_formula(mu1, s1, mu2, s2), rel=1e-9)
    x, y = exact_sample(rng, 100, mu1, s1), exact_sample(rng, 150, mu2, s2)
    assert fid(x, y).value == pytest.approx(got, rel=1e-9)


def test_singular_covariances_are_handled_without_complex_numbers():
    """n <= d: rank-deficient covariances. Commuting case has the closed form."""
    s1 = np.diag([4.0, 1.0, 0.0, 0.0])
    s2 = np.diag([1.0, 0.0, 9.0, 0.0])
    assert frechet_distance(np.zeros(4), s1, np.zeros(4), s2) == pytest.approx(1 + 1 + 9)
    x = np.random.default_rng(4).normal(size=(5, 10))
    r = fid(x, x[::-1], allow_singular=True)
    assert r.value == pytest.approx(0.0, abs=1e-10)
    assert "singular:allowed" in r.signature


def test_gaussian_stats_match_numpy():
    x = np.random.default_rng(5).normal(size=(50, 3))
    mu, sigma = gaussian_stats(x)
    np.testing.assert_allclose(mu, x.mean(0))
    np.testing.assert_allclose(sigma, np.cov(x, rowvar=False), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.floats(0.1, 10.0))
def test_non_negative_and_scales_quadratically(seed, d, scale):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(d + 5, d)) * rng.uniform(0.5, 2, size=d)
    y = rng.normal(size=(d + 8, d)) + rng.normal(size=d)
    a = fid(x, y).value
    assert a >= 0
    assert fid(scale * x, scale * y).value == pytest.approx(scale**2 * a, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize(
    ("ref", "cand", "kwargs", "error", "match"),
    [
        (np.zeros((5, 2)), np.full((5, 2), np.nan), {}, ValueError, "candidate contains 10 non-finite"),
        (np.zeros((5, 2)), np.zeros((5, 3)), {}, ValueError, "reference has dimension 2 but candidate has dimension 3"),
        (np.zeros((1, 2)), np.zeros((5, 2)), {}, ValueError, "reference has 1 row.*at least 2 samples"),
        (np.zeros((0, 2)), np.zeros((5, 2)), {}, ValueError, "reference has 0 rows"),
        (np.zeros((10, 384)), np.zeros((500, 384)), {}, ValueError,
         "reference has 10 samples in dimension 384: FID needs at least dim \\+ 1 = 385"),
        (np.zeros((3, 2)), [[1.0, 2.0]], {"allow_singular": True}, ValueError, "candidate has 1 row"),
    ],
)
def test_fid_bad_input(ref, cand, kwargs, error, match):
    with pytest.raises(error, match=match):
        fid(ref, cand, **kwargs)


def test_frechet_distance_bad_input():
    eye = np.eye(2)
    with pytest.raises(ValueError, match="sigma1 is not positive semi-definite"):
        frechet_distance([0, 0], np.diag([1.0, -1.0]), [0, 0], eye)
    with pytest.raises(ValueError, match="sigma2 is not symmetric"):
        frechet_distance([0, 0], eye, [0, 0], [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"sigma1 must have shape \(2, 2\)"):
        frechet_distance([0, 0], np.eye(3), [0, 0], eye)
    with pytest.raises(ValueError, match="mu1 has dimension 2 but mu2 has dimension 3"):
        frechet_distance([0, 0], eye, [0, 0, 0], np.eye(3))
    with pytest.raises(ValueError, match="must be finite"):
        frechet_distance([0, np.inf], eye, [0, 0], eye)


def test_result_protocol():
    x = np.random.default_rng(0).normal(size=(50, 3))
    r = fid(x, x + 1.0)
    assert r.score == r.value and r.item_scores is None and FIDResult.higher_is_better is False
