"""Checkers for the chapter "MoverScore" (08): earth mover's distance and its relaxation."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["emd_line", "relaxed"]


def _emd_line():
    from markeval.semantic.emd import earth_movers_distance

    return earth_movers_distance([0.2, 0.2, 0.6], [0.6, 0.2, 0.2],
                                 [[0, 1, 3], [1, 0, 2], [3, 2, 0]]).distance


emd_line = Question(
    "EMD on a line",
    expected=_emd_line,
    hints=["The points sit at positions 0, 1 and 3: the gaps are 1 and 2.",
           "Cumulative masses: A = (0.2, 0.4, 1), B = (0.6, 0.8, 1)."],
    solution="|0.2 - 0.6| * 1 + |0.4 - 0.8| * 2 = 0.4 + 0.8 = 1.2",
)


relaxed = Question(
    "Relaxed mover distance",
    reference=lambda a, cost: float(np.asarray(a) @ np.asarray(cost).min(axis=1) / np.sum(a)),
    cases=lambda rng: [(rng.random(n) + 0.05, rng.random((n, int(rng.integers(1, 6)))))
                       for n in rng.integers(1, 6, size=20)],
    hints=["Without constraints on the holes, each pile goes to its cheapest hole.",
           "Normalise a to sum 1 first."],
    solution="np.asarray(a) @ np.asarray(cost).min(axis=1) / np.sum(a)",
)
