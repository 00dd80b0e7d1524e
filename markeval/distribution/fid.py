"""Fréchet distance between Gaussians fitted to two embedding sets (Heusel et al. 2017).

FID fits a Gaussian ``N(μ, Σ)`` to each set and reports the squared 2-Wasserstein (Fréchet)
distance between the two Gaussians (Dowson & Landau 1982):

    FID = ‖μ_r − μ_c‖² + tr Σ_r + tr Σ_c − 2 tr (Σ_r Σ_c)^{1/2}.

Sufficient statistics first: :func:`gaussian_stats` gives ``(μ, Σ)`` of one set (cache it for
a fixed reference), :func:`frechet_distance` the distance between two Gaussians, and
:func:`fid` both at once on embeddings.

The matrix square root
----------------------
``Σ_r Σ_c`` is not symmetric, and the usual ``scipy.linalg.sqrtm`` of it returns complex
values with small imaginary parts (pytorch-fid discards them below 1e-3 and adds ``1e-6·I``
when the product is singular). Only the *trace* of the root is needed, and ``Σ_r Σ_c`` is
similar to the symmetric ``A Σ_c A`` with ``A = Σ_r^{1/2}`` (``Σ_r Σ_c = A (A Σ_c A) A^{-1}``
when ``A`` is invertible, and by continuity otherwise), so

    tr (Σ_r Σ_c)^{1/2} = Σ_i sqrt(λ_i(A Σ_c A)),

two symmetric eigendecompositions with real results, no imaginary part to check and no ``ε``
to add, singular covariances included. Eigenvalues that rounding makes slightly negative are
clipped at 0; a clearly negative one means an input was not a covariance and is an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_embeddings, check_same_dim
from markeval._signature import make_signature
from markeval._threads import single_threaded_blas
from markeval._result import alias

__all__ = ["FIDResult", "fid", "frechet_distance", "gaussian_stats"]

# A symmetric PSD matrix computed in float64 can show eigenvalues down to about
# −d·eps·λ_max; anything below −_PSD_TOL·λ_max is a genuinely indefinite input.
_PSD_TOL = 1e-8


@dataclass(frozen=True)
class FIDResult:
    """FID of a candidate set against a reference set.

    Attributes
    ----------
    value : float
        ``mean_term + covariance_term`` (in squared embedding units, as in the paper; no
        square root).
    mean_term : float
        ``‖μ_r − μ_c‖²``.
    covariance_term : float
        ``tr Σ_r + tr Σ_c − 2 tr (Σ_r Σ_c)^{1/2}`` (>= 0).
    n_reference, n_candidate, dim : int
    signature : str
    score : float
        :attr:`value` (the result protocol's headline; a distance, so lower is better).
    item_scores : None
        FID compares whole sets.
    """

    higher_is_better: ClassVar[bool] = False
    item_scores: ClassVar[None] = None

    value: float
    mean_term: float
    covariance_term: float
    n_reference: int
    n_candidate: int
    dim: int
    signature: str

    score = alias("value", "The headline score, :attr:`value`.")


def _check_samples(x: np.ndarray, name: str, allow_singular: bool) -> None:
    n, d = x.shape
    if n < 2:
        raise ValueError(
            f"{name} has {n} row(s): a covariance needs at least 2 samples "
            f"(and dim + 1 = {d + 1} for a full-rank one)"
        )
    if n <= d and not allow_singular:
        raise ValueError(
            f"{name} has {n} samples in dimension {d}: FID needs at least dim + 1 = {d + 1} "
            f"for a full-rank covariance (with fewer it has rank <= {n - 1} and FID is strongly "
            "biased); pass allow_singular=True to compute it anyway"
        )


def gaussian_stats(x, *, name: str = "x") -> tuple[np.ndarray, np.ndarray]:
    """Mean and unbiased covariance (``ddof=1``, as NumPy's ``np.cov``) of the rows of ``x``.

    Parameters
    ----------
    x : array_like, shape (n, d)
        ``n >= 2``.
    name : str
        What to call ``x`` in error messages.

    Returns
    -------
    mean : numpy.ndarray, shape (d,)
    covariance : numpy.ndarray, shape (d, d)

    Examples
    --------
    >>> mu, sigma = gaussian_stats([[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]])
    >>> mu.tolist(), sigma.tolist()
    ([1.0, 1.0], [[1.0, 0.0], [0.0, 3.0]])
    """
    x = check_embeddings(x, name)
    _check_samples(x, name, allow_singular=True)
    mu = x.mean(axis=0)
    centred = x - mu
    return mu, centred.T @ centred / (x.shape[0] - 1)


def _psd_sqrt(sigma: np.ndarray, name: str) -> np.ndarray:
    """Symmetric square root of a positive semi-definite matrix via ``eigh``."""
    lam, vec = np.linalg.eigh(sigma)
    _check_psd(lam, name)
    return (vec * np.sqrt(np.clip(lam, 0.0, None))) @ vec.T


def _check_psd(lam: np.ndarray, name: str) -> None:
    top = max(float(lam.max()), 0.0)
    if lam.min() < -_PSD_TOL * max(top, 1e-300):
        raise ValueError(
            f"{name} is not positive semi-definite (smallest eigenvalue {lam.min():.3g}, "
            f"largest {top:.3g}): it is not a covariance matrix"
        )


#: Largest magnitude of an embedding value used as is. ``sigma1^(1/2) sigma2 sigma1^(1/2)``
#: grows as the fourth power of the values, so values much above 1e77 overflow float64;
#: beyond this bound the inputs are divided by a power of two first (see :func:`_scale`).
_SAFE_MAGNITUDE = 2.0**60


def _scale(magnitude: float) -> float:
    """A power of two that brings ``magnitude`` below 1 when it exceeds the safe bound, else 1.

    FID(x / s, y / s) = FID(x, y) / s**2, and dividing by a power of two changes no
    significant bit, so the distance of large embeddings is computed on scaled ones and
    multiplied back. Inputs below the bound are untouched, bit for bit.
    """
    return 1.0 if magnitude <= _SAFE_MAGNITUDE else 2.0 ** math.frexp(magnitude)[1]


def _scaled_back(terms: tuple[float, float], scale: float, what: str) -> tuple[float, float]:
    out = tuple(term * scale * scale for term in terms)
    if not all(math.isfinite(term) for term in out):
        raise ValueError(f"FID overflows float64: {what}, and FID grows as their square; "
                         "rescale the embeddings")
    return out


def _terms(mu1, sigma1, mu2, sigma2) -> tuple[float, float]:
    with single_threaded_blas():
        root1 = _psd_sqrt(sigma1, "sigma1")
        middle = root1 @ sigma2 @ root1
        lam = np.linalg.eigvalsh((middle + middle.T) / 2)
    _check_psd(lam, "sigma1^(1/2) sigma2 sigma1^(1/2)")
    trace_root = float(np.sqrt(np.clip(lam, 0.0, None)).sum())
    mean_term = float(((mu1 - mu2) ** 2).sum())
    # The Bures term is >= 0 exactly; rounding can leave a tiny negative for equal inputs.
    cov_term = max(float(np.trace(sigma1) + np.trace(sigma2)) - 2.0 * trace_root, 0.0)
    return mean_term, cov_term


def _check_gaussian(mu, sigma, name: str) -> tuple[np.ndarray, np.ndarray]:
    mu = np.asarray(mu, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    if mu.ndim != 1:
        raise ValueError(f"mu{name} must be 1-D (dim,), got shape {mu.shape}")
    if sigma.shape != (mu.size, mu.size):
        raise ValueError(
            f"sigma{name} must have shape ({mu.size}, {mu.size}) to match mu{name}, "
            f"got {sigma.shape}"
        )
    if not (np.isfinite(mu).all() and np.isfinite(sigma).all()):
        raise ValueError(f"mu{name} and sigma{name} must be finite")
    if not np.allclose(sigma, sigma.T, rtol=1e-10, atol=1e-12 * max(np.abs(sigma).max(), 1.0)):
        raise ValueError(f"sigma{name} is not symmetric: it is not a covariance matrix")
    return mu, sigma


def frechet_distance(mu1, sigma1, mu2, sigma2) -> float:
    """Squared Fréchet (2-Wasserstein) distance between ``N(mu1, sigma1)`` and ``N(mu2, sigma2)``.

    Examples
    --------
    Diagonal covariances commute, so the root is elementwise:
    ``(1−0)² + (3−2)² + (√4 − √1)² + (√9 − √9)² = 3``.

    >>> frechet_distance([0.0, 2.0], [[4.0, 0.0], [0.0, 9.0]], [1.0, 3.0], [[1.0, 0.0], [0.0, 9.0]])
    3.0
    """
    mu1, sigma1 = _check_gaussian(mu1, sigma1, "1")
    mu2, sigma2 = _check_gaussian(mu2, sigma2, "2")
    if mu1.size != mu2.size:
        raise ValueError(f"mu1 has dimension {mu1.size} but mu2 has dimension {mu2.size}")
    peak = max(float(np.abs(mu1).max(initial=0.0)), float(np.abs(mu2).max(initial=0.0)),
               *(math.sqrt(float(np.abs(sigma).max(initial=0.0))) for sigma in (sigma1, sigma2)))
    scale = _scale(peak)
    terms = _terms(mu1 / scale, sigma1 / scale**2, mu2 / scale, sigma2 / scale**2)
    mean_term, cov_term = _scaled_back(terms, scale, f"the means and deviations reach {peak:.3g}")
    return mean_term + cov_term


def fid(reference, candidate, *, allow_singular: bool = False) -> FIDResult:
    """Fréchet Inception Distance, here on any embeddings (e.g. sentence embeddings).

    Parameters
    ----------
    reference, candidate : array_like, shape (n, d) and (m, d)
        Finite embeddings; each set needs ``d + 1`` rows for a full-rank covariance.
    allow_singular : bool, default False
        Accept sets with ``2 <= n <= d`` rows (singular covariance, biased FID).

    Returns
    -------
    FIDResult

    Examples
    --------
    Shifting a set by a vector ``δ`` leaves the covariance unchanged, so FID = ``‖δ‖²``:

    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(500, 4))
    >>> result = fid(x, x + [3.0, 0.0, 4.0, 0.0])
    >>> round(result.value, 9), round(result.covariance_term, 9)
    (25.0, 0.0)
    >>> result.signature  # doctest: +ELLIPSIS
    'fid|cov:unbiased|sqrt:eigh|version:...'
    """
    ref = check_embeddings(reference, "reference")
    cand = check_embeddings(candidate, "candidate")
    check_same_dim(ref, cand, "reference", "candidate")
    allow_singular = check_bool(allow_singular, "allow_singular")
    _check_samples(ref, "reference", allow_singular)
    _check_samples(cand, "candidate", allow_singular)
    peak = max(float(np.abs(ref).max()), float(np.abs(cand).max()))
    scale = _scale(peak)
    mu1, sigma1 = gaussian_stats(ref / scale, name="reference")
    mu2, sigma2 = gaussian_stats(cand / scale, name="candidate")
    mean_term, cov_term = _scaled_back(_terms(mu1, sigma1, mu2, sigma2), scale,
                                       f"the embeddings reach {peak:.3g}")
    return FIDResult(
        value=mean_term + cov_term,
        mean_term=mean_term,
        covariance_term=cov_term,
        n_reference=int(ref.shape[0]),
        n_candidate=int(cand.shape[0]),
        dim=int(ref.shape[1]),
        signature=make_signature("fid", cov="unbiased", sqrt="eigh",
                                 singular="allowed" if allow_singular else None),
    )
