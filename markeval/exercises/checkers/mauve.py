"""Checkers for the chapter "MAUVE and the divergence frontier": the frontier by hand, the
frontier integral, MAUVE*'s smoothing."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["frontier_integral", "frontier_point", "smoothed"]


def _point(p, q, weight):
    from markeval.distribution.frontier import divergence_curve

    # n_weights=3: the inner points sit at 1e-6, 1/2 and 1 - 1e-6; the middle one is λ = 1/2
    assert weight == 0.5
    return tuple(float(v) for v in divergence_curve(p, q, n_weights=3)[2])


frontier_point = Question(
    "The frontier at λ = 1/2",
    expected=lambda: _point([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], 0.5),
    hints=["R = (P + Q) / 2 = (1/4, 1/2, 1/4).",
           "KL(Q ‖ R) = Σ q log(q / r) over the buckets where q > 0.",
           "Each coordinate is exp(−5 · KL); by symmetry both are equal."],
    solution="KL(Q ‖ R) = 1/2 log(1/2 / 1/2) + 1/2 log(1/2 / 1/4) = (log 2) / 2, and "
             "KL(P ‖ R) is the same. exp(−5 (log 2) / 2) = 2^(−5/2) ≈ 0.1768 for both "
             "coordinates.",
    rtol=1e-6,
)


def _frontier_integral(p, q):
    from markeval.distribution.frontier import frontier_integral as reference

    return reference(p, q)


def _histogram_pairs(rng):
    cases = []
    for m in rng.integers(2, 12, size=15):
        p, q = rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m) * 0.5)
        p[rng.random(m) < 0.25] = 0.0  # empty buckets: the lone-mass branch
        cases.append(((p / p.sum()).tolist(), q.tolist()))
    cases.append(([0.5, 0.5], [0.5, 0.5]))
    cases.append(([1.0, 0.0], [0.0, 1.0]))
    return cases


frontier_integral = Question(
    "Frontier integral",
    reference=_frontier_integral,
    cases=_histogram_pairs,
    hints=["Sum over buckets, then double the sum.",
           "A bucket where only one histogram has mass a adds a / 4.",
           "Where both have mass a ≠ b: (a + b) / 4 − a b (log a − log b) / (2 (a − b)); "
           "equal masses add 0."],
    solution="total = 0; for a, b in zip(p, q): if a == 0 or b == 0: total += (a + b) / 4 "
             "elif abs(a - b) > 1e-8: total += (a + b) / 4 - a * b * (math.log(a) - "
             "math.log(b)) / (2 * (a - b)); return 2 * total",
    rtol=1e-9, atol=1e-12,
)


def _smoothed():
    from markeval.distribution.frontier import bucket_histogram

    return bucket_histogram(np.array([0, 0, 0, 1]), 3, smoothing=0.5).tolist()


smoothed = Question(
    "MAUVE*'s histogram",
    expected=_smoothed,
    hints=["Count the labels per bucket: (3, 1, 0).",
           "Add 1/2 to every count, then divide by the new total."],
    solution="(3.5, 1.5, 0.5) / 5.5 = (0.636, 0.273, 0.091): the empty bucket gets mass, so "
             "no KL is infinite.",
    rtol=1e-9,
)
