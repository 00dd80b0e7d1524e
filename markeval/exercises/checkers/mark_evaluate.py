"""Checkers for the chapter "Mark-Evaluate" (11): the ME estimators on embeddings."""

from __future__ import annotations

import math

import numpy as np

from markeval.exercises import Question

__all__ = ["by_hand", "capture_limit", "petersen"]


def _me_petersen(S, Sp, k):
    from markeval.population.mark_evaluate import me_petersen

    return me_petersen(S, Sp, k, progress=False)


def _petersen_by_hand():
    r = _me_petersen(np.array([[0.0], [1.0], [2.0], [10.0]]),
                     np.array([[1.5], [11.0], [12.0], [13.0]]), 1)
    return r.marked, r.captured, r.recaptured, r.score


by_hand = Question(
    "ME_Petersen by hand",
    expected=_petersen_by_hand,
    hints=["Radii of S: 1, 1, 1, 8 (10's nearest is 2). Radii of S': 9.5, 1, 1, 1.",
           "Which s' lie in a ball of S? Which s lie in a ball of S'?"],
    solution="f(s', S): 1.5 (in [0,2]) and 11, 12 (in 10's ball [2, 18]), 13 too → a = 4. "
             "f(s, S'): 1.5's ball [-8, 11] holds 0, 1, 2, 10 → b = 4. M = 8, C = 8, R = 8, "
             "P̂ = 8, score 1.",
)


def _pairs(rng):
    out = []
    for _ in range(15):
        n, n_p, d = int(rng.integers(3, 30)), int(rng.integers(3, 30)), int(rng.integers(1, 5))
        out.append((rng.normal(size=(n, d)), rng.normal(size=(n_p, d)) + rng.uniform(0, 3),
                    int(rng.integers(1, min(n, n_p)))))
    return out


petersen = Question(
    "ME_Petersen from scratch",
    reference=lambda S, Sp, k: _me_petersen(S, Sp, k).score, cases=_pairs,
    hints=["Radius² of s: sort its row of squared distances (diagonal set to "
           "inf) and take entry k − 1.",
           "a = number of s' with any (cross[:, j] <= r2_S); b likewise."],
    solution="""
def my_me_petersen(S, Sp, k):
    def r2(x):
        d = pairwise_sq_distances(x)
        np.fill_diagonal(d, np.inf)
        return np.sort(d, axis=1)[:, k - 1]
    cross = pairwise_sq_distances(S, Sp)
    a = int((cross <= r2(S)[:, None]).any(axis=0).sum())   # s' in a ball of S
    b = int((cross <= r2(Sp)[None, :]).any(axis=1).sum())  # s in a ball of S'
    M, C, R = len(S) + a, len(Sp) + b, a + b
    P = len(S) + len(Sp)
    return 0.0 if R == 0 else 1 - min(abs(M * C / R - P) / P, 1)
""",
)


def _fixed_point(c):
    """Solve x = 1 − exp(−c x) on (0, 1]."""
    x = 0.5
    for _ in range(500):
        x = 1 - math.exp(-c * x)
    return x


capture_limit = Question(
    "disjoint CAPTURE limit, K = 4", expected=lambda: 2 - 1 / _fixed_point(5), atol=5e-4,
    hints=["Iterate x ← 1 − exp(−5x) from x = 0.5."],
    solution="x ≈ 0.99302, limit 2 − 1/x ≈ 0.993",
)
