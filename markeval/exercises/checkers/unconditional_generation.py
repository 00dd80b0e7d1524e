"""Checkers for the chapter "Unconditional generation" (15): cross-entropies and rankings."""

from __future__ import annotations

from markeval.exercises import Question

__all__ = ["forward_ce", "partial_tau"]

# The chapter's toy corpus of real text: four sentences, three copies each.
REAL = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["the", "cat", "ran"]] * 3


def _forward_ce():
    from markeval.lexical.perplexity import forward_cross_entropy

    return forward_cross_entropy([["the", "dog", "sat"]], REAL, order=2, smoothing="mle",
                                 min_count=1).cross_entropy_bits


forward_ce = Question(
    "Forward CE of 'the dog sat'",
    expected=_forward_ce,
    hints=["Four tokens: the, dog, sat, </s>.", "P(the|<s>) = 9/12, P(dog|the) = 3/9."],
    solution="-(log2(9/12) + log2(3/9) + log2(1) + log2(1)) / 4 = 0.5000",
    rtol=1e-6,
)


def _tau_cases(rng):
    cases = []
    for _ in range(20):
        names = [f"g{i}" for i in range(8)]
        values = {g: float(rng.integers(0, 4)) for g in names}
        chains = {f"c{j}": tuple(rng.choice(names, size=rng.integers(2, 5), replace=False).tolist())
                  for j in range(rng.integers(1, 4))}
        cases.append((values, chains))
    return cases


def _partial_order_tau(values, chains):
    from markeval.experiments.ranking import partial_order_tau

    return partial_order_tau(values, chains)


partial_tau = Question(
    "partial-order tau", reference=_partial_order_tau, cases=_tau_cases,
    hints=["np.sign(values[a] - values[b]) for a before b in a chain."],
    solution="sum of signs over the ordered pairs, divided by their number",
)
