"""Pearson r of many pairs of series at once, row by row: the bootstraps' inner loop.

Shared by :mod:`markeval.stats` (its bootstrap intervals) and
:mod:`markeval.experiments.translation` (the sample-size study's bootstrap over systems).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pearson_rows"]


def pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r of each row of ``a`` with the same row of ``b``; NaN where a row is constant."""
    am = a - a.mean(axis=1, keepdims=True)
    bm = b - b.mean(axis=1, keepdims=True)
    # Test constancy exactly: the mean of equal floats need not equal them, so a
    # constant row can centre to tiny non-zero values and fake an r of ±1.
    constant = (np.ptp(a, axis=1) == 0) | (np.ptp(b, axis=1) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        # Scale by the largest deviation before squaring, as scipy does, against overflow.
        am /= np.abs(am).max(axis=1, keepdims=True)
        bm /= np.abs(bm).max(axis=1, keepdims=True)
        r = np.einsum("ij,ij->i", am, bm) / (
            np.linalg.norm(am, axis=1) * np.linalg.norm(bm, axis=1)
        )
    r = np.clip(r, -1.0, 1.0)
    r[constant] = np.nan
    return r
