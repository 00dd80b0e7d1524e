"""The Vendi score (Friedman & Dieng 2023): the effective number of distinct samples in a set.

Given ``n`` samples and a similarity ``k`` with ``k(x, x) = 1``, let ``K`` be the ``n × n``
similarity matrix and ``λ_1 … λ_n`` the eigenvalues of ``K / n`` (non-negative, summing to 1:
a probability vector). The Vendi score of order ``q`` is the exponential of their Rényi
entropy,

    VS_q = exp( log(Σ_i λ_i^q) / (1 − q) ),

with the limits ``VS_1 = exp(−Σ_i λ_i log λ_i)`` (Shannon; the paper's default) and
``VS_∞ = 1 / max_i λ_i``. ``n`` identical samples score 1 (one eigenvalue, 1), ``n`` samples
with no similarity at all score ``n``; ``q`` sets how much rare directions count (small ``q``:
more, large ``q``: only the dominant ones), and the score never increases with ``q``.

Here ``k`` is the cosine similarity of embeddings (the linear kernel after scaling each row to
unit length), so ``K = X Xᵀ`` for the normalised rows ``X``. ``X Xᵀ / n`` and the ``d × d``
``Xᵀ X / n`` have the same non-zero eigenvalues, so the smaller of the two is decomposed:
memory ``min(n, d)²`` and time ``n · min(n, d)²``, linear in ``n`` for a fixed dimension.

Two numerical choices, both ours (the reference package ``vendi-score`` makes neither):

* eigenvalues below ``m · ε · λ_max`` (``m`` the matrix's size, ``ε`` float64's epsilon) are
  rounding noise of a rank-deficient matrix and count as 0; they are far too small to matter
  for ``q >= 1``, but with ``q < 1`` each adds ``λ^q``, which is not small (``1e-17`` to the
  power 0.5 is ``3e-9``, and there may be ``n`` of them);
* the eigenvalues are divided by their sum, which is 1 up to rounding, so the score stays in
  ``[1, rank K]`` (``rank K <= min(n, d)``).

The sums are arranged so that large ``q`` does not underflow (``Σ λ^q = λ_max^q Σ (λ/λ_max)^q``).

:func:`vendi_score` scores one set; :func:`vendi`, the metric registry's two-set form, scores a
candidate set and reports the reference's score beside it (the score of a set says nothing
about another set: compare the two).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_embeddings, check_number, check_same_dim
from markeval._signature import make_signature
from markeval.geometry._kernels import point_dtype

__all__ = ["VendiResult", "vendi", "vendi_score"]

# Rows of the normalised data held at a time when the d × d Gram matrix is accumulated
# (about 64 MiB of float64): a float32 set (kept float32 when checked) is never copied whole
# into float64.
_BLOCK_BYTES = 1 << 26
# normalize=False takes the rows as unit vectors: farther than this from norm 1 (squared)
# they are refused, since then K has no unit diagonal and the score is not a Vendi score.
# float32 rows scaled to unit length are within about d · 6e-8 of it (d = 384: 2.3e-5).
_UNIT_TOLERANCE = 1e-4


@dataclass(frozen=True)
class VendiResult:
    """The Vendi score of a candidate set, with the reference set's beside it.

    Attributes
    ----------
    score : float
        The candidate set's Vendi score, in ``[1, min(m, d)]``.
    reference_score : float
        The reference set's, in ``[1, min(n, d)]``: the diversity the candidates are to be
        compared with (the two sets are scored separately).
    q : float
        Order of the Rényi entropy (``math.inf`` for the limit).
    n_reference, n_candidate : int
    signature : str
    item_scores : None
        A set-level metric.
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    score: float
    reference_score: float
    q: float
    n_reference: int
    n_candidate: int
    signature: str


def _check_q(q) -> float:
    """``q`` as a float: a positive number, or ``math.inf`` (``check_number`` refuses inf)."""
    if isinstance(q, numbers.Real) and not isinstance(q, (bool, np.bool_)) and q == math.inf:
        return math.inf
    q = check_number(q, "q")
    if q <= 0:
        raise ValueError(f"q must be > 0 (or math.inf), got {q}")
    return q


def _unit_rows(block: np.ndarray, start: int, normalize: bool, name: str) -> np.ndarray:
    """Rows ``start…`` of the samples as float64 unit vectors (checked, never modified)."""
    block = block.astype(np.float64)
    sq_norms = np.einsum("ij,ij->i", block, block)
    if normalize:
        zero = np.flatnonzero(sq_norms == 0.0)
        if zero.size:
            raise ValueError(f"{name} row {start + int(zero[0])} is all zeros: its cosine "
                             "similarity to anything is undefined")
        return block / np.sqrt(sq_norms)[:, None]
    off = np.abs(sq_norms - 1.0)
    if off.max() > _UNIT_TOLERANCE:
        row = int(off.argmax())
        raise ValueError(f"{name} row {start + row} has squared norm {sq_norms[row]:.6g}, not 1: "
                         "with normalize=False the rows must be unit vectors (or pass "
                         "normalize=True)")
    return block


def _eigenvalues(x: np.ndarray, normalize: bool, name: str) -> np.ndarray:
    """The eigenvalues of ``K / n`` that are not rounding noise, as probabilities."""
    n, d = x.shape
    if d < n:  # X Xᵀ / n and Xᵀ X / n share their non-zero eigenvalues: take the d × d one
        gram = np.zeros((d, d))
        step = max(1, _BLOCK_BYTES // (8 * d))
        for start in range(0, n, step):
            rows = _unit_rows(x[start:start + step], start, normalize, name)
            gram += rows.T @ rows
    else:
        rows = _unit_rows(x, 0, normalize, name)
        gram = rows @ rows.T
    w = np.linalg.eigvalsh(gram / n)
    w = w[w > w[-1] * gram.shape[0] * np.finfo(np.float64).eps]
    return w / w.sum()


def _exp_renyi(p: np.ndarray, q: float) -> float:
    """``exp`` of the order-``q`` Rényi entropy of the probabilities ``p`` (all > 0)."""
    if q == 1.0:
        return math.exp(-float(np.sum(p * np.log(p))))
    top = float(p.max())
    if q == math.inf:
        return 1.0 / top
    # log Σ p^q = q log p_max + log Σ (p / p_max)^q; the last sum is >= 1, so no underflow.
    log_sum = q * math.log(top) + math.log(float(np.sum((p / top) ** q)))
    return math.exp(log_sum / (1.0 - q))


def vendi_score(samples, *, q: float = 1.0, normalize: bool = True) -> float:
    """The Vendi score of one set of embeddings under the cosine similarity.

    Parameters
    ----------
    samples : array_like, shape (n, d)
        Finite embeddings, at least one row; no row of zeros when ``normalize``.
    q : float, default 1.0
        Order of the Rényi entropy: any ``q > 0``, or ``math.inf``; 1 is Shannon's (the
        paper's default).
    normalize : bool, default True
        Scale each row to unit length (the cosine similarity). False: the rows already have
        unit length (checked, to within 1e-4 in squared norm) and are used as they are.

    Returns
    -------
    float
        In ``[1, min(n, d)]``: the effective number of distinct samples.

    Examples
    --------
    Three orthogonal directions (whatever their lengths) are three distinct samples; the same
    direction three times is one; two of one kind and one of another fall in between, the
    closer to 1 the larger ``q``.

    >>> import math
    >>> import numpy as np
    >>> round(vendi_score(np.diag([1.0, 2.0, 3.0])), 12), round(vendi_score(np.ones((3, 4))), 12)
    (3.0, 1.0)
    >>> x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> [round(vendi_score(x, q=q), 4) for q in (0.5, 1.0, 2.0, math.inf)]
    [1.9428, 1.8899, 1.8, 1.5]
    """
    x = check_embeddings(samples, "samples", dtype=point_dtype(samples))
    return _exp_renyi(_eigenvalues(x, check_bool(normalize, "normalize"), "samples"),
                      _check_q(q))


def vendi(reference, candidate, *, q: float = 1.0, normalize: bool = True) -> VendiResult:
    """The Vendi score of ``candidate``, and of ``reference`` to compare it with.

    The two-set form of :func:`vendi_score` that the metric registry calls: each set is scored
    on its own (the score needs no reference), and both are returned.

    Parameters
    ----------
    reference, candidate : array_like, shape (n, d) and (m, d)
        Finite embeddings of one space (the same ``d``), at least one row each.
    q, normalize
        As in :func:`vendi_score`.

    Returns
    -------
    VendiResult

    Examples
    --------
    >>> import numpy as np
    >>> r = vendi(np.eye(4), np.array([[1.0, 0, 0, 0], [2.0, 0, 0, 0], [0, 1.0, 0, 0]]))
    >>> round(r.score, 4), round(r.reference_score, 12)
    (1.8899, 4.0)
    >>> r.signature  # doctest: +ELLIPSIS
    'vendi|kernel:cosine|q:1.0|version:...'
    """
    ref = check_embeddings(reference, "reference", dtype=point_dtype(reference))
    cand = check_embeddings(candidate, "candidate", dtype=point_dtype(candidate))
    check_same_dim(ref, cand, "reference", "candidate")
    q = _check_q(q)
    normalize = check_bool(normalize, "normalize")
    return VendiResult(
        score=_exp_renyi(_eigenvalues(cand, normalize, "candidate"), q),
        reference_score=_exp_renyi(_eigenvalues(ref, normalize, "reference"), q),
        q=q,
        n_reference=ref.shape[0],
        n_candidate=cand.shape[0],
        signature=make_signature("vendi", kernel="cosine" if normalize else "linear", q=q),
    )
