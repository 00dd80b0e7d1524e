"""Checkers for the chapter "Distribution metrics" (09): IPR, FID and PRD."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["by_hand", "fid_1d", "ipr_precision", "prd_curve"]


def _ipr(reference, candidate, k):
    from markeval.distribution.ipr import improved_precision_recall

    return improved_precision_recall(reference, candidate, k=k, progress=False)


by_hand = Question(
    "IPR by hand",
    expected=lambda: (lambda r: (r.precision, r.recall))(
        _ipr([[0.0], [1.0], [3.0], [7.0]], [[2.0], [2.5], [6.0]], 1)),
    hints=["Reference radii: 0 → 1, 1 → 1, 3 → 2, 7 → 4.",
           "Candidate radii: 2 → 0.5, 2.5 → 0.5, 6 → 3.5."],
    solution="Reference balls [-1, 1], [0, 2], [1, 5], [3, 11]: 2, 2.5 and 6 are all inside, "
             "precision 3/3 = 1. Candidate balls [1.5, 2.5], [2, 3], [2.5, 9.5]: they hold "
             "3 and 7 but not 0 or 1, recall 2/4 = 0.5.",
)


def _fid_1d(x, y):
    from markeval.distribution.fid import fid

    return fid(np.c_[x], np.c_[y]).value


fid_1d = Question(
    "FID in 1-D",
    reference=_fid_1d,
    cases=lambda rng: [(rng.normal(rng.uniform(-2, 2), rng.uniform(0.1, 3),
                                   size=rng.integers(2, 30)).tolist(),
                        rng.normal(rng.uniform(-2, 2), rng.uniform(0.1, 3),
                                   size=rng.integers(2, 30)).tolist()) for _ in range(20)],
    hints=["Use statistics.mean and statistics.stdev (n - 1 in the denominator)."],
    solution="(mean(x) - mean(y)) ** 2 + (stdev(x) - stdev(y)) ** 2",
)


def _prd_curve(p, q, n):
    from markeval.distribution.prd import prd_curve as curve

    return curve(p, q, num_angles=n)


prd_curve = Question(
    "PRD curve",
    reference=_prd_curve,
    cases=lambda rng: [(rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m) * 0.3),
                        int(rng.integers(2, 50))) for m in rng.integers(2, 10, size=15)],
    hints=["lambdas = np.tan(np.linspace(1e-10, np.pi / 2 - 1e-10, num_angles))",
           "np.minimum(lambdas[:, None] * p[None, :], q[None, :]).sum(axis=1) is alpha.",
           "Recall is alpha / lambdas; clip both to [0, 1] against rounding."],
    solution="lambdas = np.tan(np.linspace(1e-10, np.pi / 2 - 1e-10, num_angles)); "
             "alpha = np.minimum(lambdas[:, None] * p, q).sum(axis=1); "
             "return np.clip(alpha, 0, 1), np.clip(alpha / lambdas, 0, 1)",
    rtol=1e-7, atol=1e-9,
)


def _sets_with_duplicates(rng):
    cases = []
    for _ in range(12):
        ref = rng.integers(-3, 4, size=(int(rng.integers(5, 25)), 2)).astype(float)
        cand = rng.integers(-4, 5, size=(int(rng.integers(2, 20)), 2)).astype(float)
        cases.append((ref, cand, int(rng.integers(1, 4))))
    return cases


ipr_precision = Question(
    "Improved precision",
    reference=lambda ref, cand, k: _ipr(ref, cand, k).precision,
    cases=_sets_with_duplicates,
    hints=["Sort each row of the reference's own distance matrix: column 0 is the point itself.",
           "A duplicate of a point is a neighbour at distance 0: take column k of the sorted "
           "rows, do not drop zeros.",
           "Compare with <= (closed balls)."],
    solution="ipr_from_scratch(reference, candidate, k)[0] from the chapter.",
)
