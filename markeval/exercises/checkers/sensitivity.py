"""Checkers for the chapter "Sensitivity" (12): word swaps and trend verdicts."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["flat", "swaps"]


def _distinct_swaps(text="a b a", draws=200):
    """How many different texts ``swap_words(text, 1.0, rng)`` returns over many seeds."""
    from markeval.experiments.sensitivity import swap_words

    return len({swap_words(text, 1.0, np.random.default_rng(seed)) for seed in range(draws)})


swaps = Question(
    "Swaps by hand",
    expected=_distinct_swaps,
    hints=["The chosen words are a, b, a: how many distinct orders do they have?",
           "One of those orders is the original, and the permutation is redrawn until it changes."],
    solution="The multiset {a, a, b} has 3!/2! = 3 distinct orders; the original 'a b a' is "
             "excluded, leaving 'a a b' and 'b a a': 2.",
)


def _is_flat(means, tol):
    from markeval.experiments.sensitivity_verdicts import classify_trend

    return classify_trend(means, flat_tolerance=tol)["observed"] == "flat"


flat = Question(
    "Flatness",
    reference=_is_flat,
    cases=lambda rng: [((1 + rng.normal(scale=rng.choice([0.01, 0.05, 0.2]),
                                        size=rng.integers(2, 8))).round(4).tolist(),
                        float(rng.choice([0.02, 0.05, 0.1]))) for _ in range(30)],
    hints=["scale = abs(means[0]) or 1.0",
           "max(abs(m - means[0]) for m in means) / scale <= tolerance"],
    solution="scale = abs(means[0]) if means[0] != 0 else 1.0; "
             "return max(abs(m - means[0]) for m in means) / scale <= tolerance",
)
