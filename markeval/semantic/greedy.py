"""Greedy cosine matching of token vectors: the arithmetic core of BERTScore.

Everything here takes arrays (:class:`~markeval.semantic.tokens.WeightedTokens` or plain
vectors and weights); :func:`markeval.semantic.bertscore.bertscore` encodes texts and calls
:func:`greedy_scores`, and :mod:`markeval.semantic.baseline` calls :func:`match`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from markeval.semantic.tokens import WeightedTokens

__all__ = ["greedy_match", "greedy_scores", "match", "unit_rows"]


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (rows must be non-zero)."""
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    total = weights.sum()
    return float(values @ weights / total) if total > 0 else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r != 0 else 0.0


def greedy_match(hyp_vecs, ref_vecs, hyp_w, ref_w) -> tuple[float, float, float]:
    """Greedy cosine matching: BERTScore's P, R and F for one pair of token sequences.

    .. math::

        P = \\frac{\\sum_i w^h_i \\max_j \\cos(h_i, r_j)}{\\sum_i w^h_i},\\quad
        R = \\frac{\\sum_j w^r_j \\max_i \\cos(h_i, r_j)}{\\sum_j w^r_j},\\quad
        F = \\frac{2PR}{P+R}

    The maxima run over *all* rows, whatever their weight (tokens with weight 0, such as
    special tokens, can still be matched). A side whose weights sum to 0 gives 0.

    Parameters
    ----------
    hyp_vecs : array, shape (n, d)
        Hypothesis token vectors (any length: rows are normalised here).
    ref_vecs : array, shape (m, d)
    hyp_w : array, shape (n,)
        Non-negative weights of the hypothesis tokens.
    ref_w : array, shape (m,)

    Returns
    -------
    (precision, recall, f1) : tuple of float

    Examples
    --------
    Hypothesis tokens along the x- and y-axes, reference tokens along x and at 45°:

    >>> h = [[1, 0], [0, 1]]
    >>> r = [[2, 0], [1, 1]]
    >>> p, r_, f = greedy_match(h, r, [1, 1], [1, 1])
    >>> round(p, 4), round(r_, 4), round(f, 4)   # P = (1 + 0.7071)/2, R = (1 + 0.7071)/2
    (0.8536, 0.8536, 0.8536)
    >>> [round(v, 4) for v in greedy_match(h, r, [1, 0], [1, 1])]  # y-token weighs 0
    [1.0, 0.8536, 0.921]
    """
    hyp_vecs = _check_vectors(hyp_vecs, "hyp_vecs")
    ref_vecs = _check_vectors(ref_vecs, "ref_vecs")
    if hyp_vecs.shape[1] != ref_vecs.shape[1]:
        raise ValueError(
            f"hyp_vecs has dimension {hyp_vecs.shape[1]} but ref_vecs has dimension "
            f"{ref_vecs.shape[1]}"
        )
    hyp_w = _check_weights(hyp_w, len(hyp_vecs), "hyp_w")
    ref_w = _check_weights(ref_w, len(ref_vecs), "ref_w")
    return match(unit_rows(hyp_vecs), unit_rows(ref_vecs), hyp_w, ref_w)


def match(hyp_unit, ref_unit, hyp_w, ref_w) -> tuple[float, float, float]:
    """:func:`greedy_match` on rows already of unit length, without checks (the hot path)."""
    sim = hyp_unit @ ref_unit.T
    p = _weighted_mean(sim.max(axis=1), hyp_w)
    r = _weighted_mean(sim.max(axis=0), ref_w)
    return p, r, _f1(p, r)


def _check_vectors(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"{name} must be a non-empty 2-D array (tokens, dim), got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    norms = np.linalg.norm(arr, axis=1)
    if (norms == 0).any():
        raise ValueError(f"{name} row {int(np.argmin(norms))} is the zero vector: cosine undefined")
    return arr


def _check_weights(w, n: int, name: str) -> np.ndarray:
    arr = np.asarray(w, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) (one weight per token), got {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ValueError(f"{name} must be finite and non-negative, got {arr.tolist()}")
    return arr



def greedy_scores(hypotheses: Sequence[WeightedTokens],
                  references: Sequence[Sequence[WeightedTokens]]) -> tuple[np.ndarray, int]:
    """P, R and F of each hypothesis against its references: the best of each over them.

    The core of BERTScore on arrays. ``references[i]`` holds the references of
    ``hypotheses[i]``; the maxima are element-wise (P, R and F may come from different
    references). A pair with an empty side (no token of its own) scores 0. Each distinct
    object is normalised once, so pass the same :class:`WeightedTokens` for a repeated text.

    Returns
    -------
    scores : numpy.ndarray
        float64, shape ``(len(hypotheses), 3)``: columns P, R, F.
    n_empty : int
        Pairs scored 0 because a side was empty.

    Examples
    --------
    >>> special = np.array([False, False])
    >>> h = WeightedTokens(np.array([[1.0, 0.0], [0.0, 1.0]]), np.ones(2), special)
    >>> r = WeightedTokens(np.array([[2.0, 0.0], [1.0, 1.0]]), np.ones(2), special)
    >>> scores, n_empty = greedy_scores([h], [[r, h]])
    >>> scores.round(4).tolist(), n_empty
    ([[1.0, 1.0, 1.0]], 0)
    """
    units: dict[int, np.ndarray] = {}

    def unit(tokens: WeightedTokens) -> np.ndarray:
        if id(tokens) not in units:
            units[id(tokens)] = unit_rows(np.asarray(tokens.vectors, dtype=np.float64))
        return units[id(tokens)]

    scores = np.zeros((len(hypotheses), 3))
    n_empty = 0
    for i, (hyp, group) in enumerate(zip(hypotheses, references)):
        best = np.full(3, -np.inf)
        for ref in group:
            if hyp.empty or ref.empty:
                n_empty += 1
                pair = (0.0, 0.0, 0.0)
            else:
                pair = match(unit(hyp), unit(ref), hyp.weights, ref.weights)
            best = np.maximum(best, pair)
        scores[i] = best
    return scores, n_empty
