"""Checkers for the chapter "BERTScore" (07): greedy matching and baseline rescaling."""

from __future__ import annotations

import math

import numpy as np

from markeval.exercises import Question

__all__ = ["by_hand", "greedy", "rescale"]


def _at(*degrees):
    """Unit vectors in the plane at the given angles (the chapter's toy tokens)."""
    return np.array([[math.cos(math.radians(d)), math.sin(math.radians(d))] for d in degrees])


def _greedy_match(hyp_vecs, ref_vecs, hyp_w, ref_w):
    from markeval.semantic.greedy import greedy_match

    return greedy_match(hyp_vecs, ref_vecs, hyp_w, ref_w)


by_hand = Question(
    "BERTScore by hand",
    expected=lambda: _greedy_match(_at(0, 60, 90), _at(0, 45, 90), np.ones(3), np.ones(3)),
    hints=["The best partner of the 60° token is now the 45° token: cos 15°.",
           "Precision and recall are both (1 + cos 15° + 1) / 3."],
    solution="P = R = F = (2 + cos(15°)) / 3 ≈ 0.9886",
    rtol=1e-3, atol=1e-3,
)


def _greedy_cases(rng):
    cases = []
    for _ in range(20):
        n, m, d = (int(x) for x in rng.integers(1, 8, size=3))
        cases.append((rng.normal(size=(n, d)) + 2, rng.normal(size=(m, d)) + 2,
                      rng.uniform(0.1, 2, size=n), rng.uniform(0.1, 2, size=m)))
    return cases


greedy = Question(
    "Greedy matching",
    reference=_greedy_match,
    cases=_greedy_cases,
    hints=["Normalise the rows first; then hyp @ ref.T is the cosine matrix.",
           "Precision: maxima of rows, weighted by hyp_w; recall: maxima of columns."],
    solution="sim = unit(h) @ unit(r).T; p = sim.max(1) @ hw / hw.sum(); "
             "r = sim.max(0) @ rw / rw.sum(); f = 2pr/(p+r)",
    rtol=1e-9, atol=1e-12,
)


def _rescaled():
    """Raw F = 0.60 rescaled with the packaged F baseline of the default model's last layer."""
    from markeval.encoders import default_model
    from markeval.semantic.baseline import load_baseline

    encoder = default_model()
    b_f = load_baseline(encoder.name, encoder.num_layers)[2]
    return (0.60 - b_f) / (1 - b_f)


rescale = Question(
    "Rescaling",
    expected=_rescaled,
    hints=["(x - b) / (1 - b) with b the F baseline of layer 6."],
    solution="(0.60 - 0.171) / (1 - 0.171) ≈ 0.517",
    rtol=1e-3, atol=1e-3,
)
