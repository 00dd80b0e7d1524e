"""Checkers for the chapter "METEOR" (04): alignments, chunks and the score."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["by_hand", "chunks", "score_from_counts"]


def _meteor_by_hand():
    from markeval import meteor

    return meteor("the cat was sitting on the mat", "the cat sat on the mat").score


by_hand = Question(
    "METEOR by hand",
    expected=_meteor_by_hand,
    atol=5e-4,
    hints=["Five words match exactly: the, cat, on, the, mat.",
           "P = 5/7, R = 5/6; the matches form two chunks, 'the cat' and 'on the mat'.",
           "F_mean = 10PR / (R + 9P); penalty = 0.5 * (2/5)**3."],
    solution="m = 5, P = 5/7, R = 5/6, F_mean = 0.8197, 2 chunks, penalty = 0.5 * 0.4**3 = 0.032, "
             "METEOR = 0.8197 * 0.968 = 0.7934.",
)


def _reference_chunks(alignment):
    pairs = sorted(alignment)
    if not pairs:
        return 0
    return 1 + sum(1 for (i, j), (k, l) in zip(pairs, pairs[1:]) if (k, l) != (i + 1, j + 1))


def _random_alignments(rng):
    cases = [([],), ([(0, 0)],), ([(2, 3), (0, 1), (1, 2)],)]
    for n in (3, 6, 10, 10, 15):
        hyp = rng.permutation(n)[: rng.integers(1, n + 1)]
        ref = rng.permutation(n)[: len(hyp)]
        if rng.random() < 0.5:  # some long monotone runs
            ref = np.sort(ref)
            hyp = np.sort(hyp)
        cases.append(([(int(i), int(j)) for i, j in zip(hyp, ref)],))
    return cases


chunks = Question(
    "Counting chunks", reference=_reference_chunks, cases=_random_alignments,
    hints=["Sort the pairs by hypothesis position first.",
           "A new chunk starts whenever the next pair is not (i + 1, j + 1)."],
    solution="""
def count_chunks(alignment):
    pairs = sorted(alignment)
    if not pairs:
        return 0
    return 1 + sum(1 for (i, j), (k, l) in zip(pairs, pairs[1:]) if (k, l) != (i + 1, j + 1))
""",
)


def _reference_score(m, chunks, hyp_len, ref_len, alpha=0.9, beta=3.0, gamma=0.5):
    if m == 0:
        return 0.0
    p, r = m / hyp_len, m / ref_len
    return p * r / (alpha * p + (1 - alpha) * r) * (1 - gamma * (chunks / m) ** beta)


def _random_counts(rng):
    cases = [(0, 0, 5, 4), (6, 1, 6, 6), (6, 3, 6, 6)]
    for _ in range(8):
        hyp_len, ref_len = (int(x) for x in rng.integers(1, 30, size=2))
        m = int(rng.integers(1, min(hyp_len, ref_len) + 1))
        cases.append((m, int(rng.integers(1, m + 1)), hyp_len, ref_len,
                      float(rng.uniform(0.1, 0.9)), float(rng.uniform(1, 4)),
                      float(rng.uniform(0, 1))))
    return cases


score_from_counts = Question(
    "METEOR from counts", reference=_reference_score, cases=_random_counts,
    hints=["P = m / hyp_len and R = m / ref_len.",
           "F_mean = P R / (alpha P + (1 - alpha) R); penalty = gamma (chunks / m) ** beta."],
    solution="""
def meteor_score(m, chunks, hyp_len, ref_len, alpha=0.9, beta=3.0, gamma=0.5):
    if m == 0:
        return 0.0
    p, r = m / hyp_len, m / ref_len
    return p * r / (alpha * p + (1 - alpha) * r) * (1 - gamma * (chunks / m) ** beta)
""",
)
