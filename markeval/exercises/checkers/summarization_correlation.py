"""Checkers for the summarization chapters: "Do metrics agree with people? Summarization" (14)
and its companion on embedding and set metrics (17)."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["cross_year_k", "ipr_precision", "topic_pearson"]


# --------------------------------------------------------------------------- chapter 16


def _topic_cases(rng):
    """Random (metric, human, topics) triples; the first topic is judged uniformly."""
    cases = []
    for _ in range(8):
        n_topics, size = int(rng.integers(2, 5)), int(rng.integers(3, 7))
        topics = [f"t{k}" for k in range(n_topics) for _ in range(size)]
        metric = rng.normal(size=len(topics)).round(3).tolist()
        human = rng.integers(1, 6, size=len(topics)).astype(float).tolist()
        human[:size] = [3.0] * size  # the first topic is judged uniformly
        if all(np.ptp(human[k * size:(k + 1) * size]) == 0 for k in range(n_topics)):
            human[-1] += 1.0
        cases.append((metric, human, topics))
    return cases


def _mean_topic_pearson(metric, human, topics):
    from markeval.experiments.human_correlation import grouped_correlation

    return grouped_correlation(metric, human, topics, "pearson", n_resamples=0).value


topic_pearson = Question(
    "Per-topic averaged Pearson",
    reference=_mean_topic_pearson,
    cases=_topic_cases, rtol=1e-9, atol=1e-12,
    hints=["Collect the indices of each topic with a dict of lists.",
           "np.ptp(values) == 0 means the correlation is undefined: skip that topic."],
    solution="For each topic t: x, y = metric[idx_t], human[idx_t]; if np.ptp(x) and np.ptp(y): "
             "append np.corrcoef(x, y)[0, 1]; return the mean of the appended values.",
)


# --------------------------------------------------------------------------- chapter 17


def _ipr_precision(reference, candidate, k):
    from markeval.distribution.ipr import improved_precision_recall

    return improved_precision_recall(reference, candidate, k=k, progress=False).precision


def _ipr_cases(rng):
    cases = []
    for _ in range(6):
        d = int(rng.integers(1, 4))
        # Multiples of 1/4 are exact in floating point, so distances tie exactly and some
        # candidates sit on a ball's boundary: inside, because the balls are closed.
        ref = np.round(rng.normal(size=(int(rng.integers(6, 30)), d)) * 4) / 4
        cand = np.round((rng.normal(size=(int(rng.integers(4, 20)), d)) + rng.uniform(0, 2)) * 4) / 4
        cand[0] = ref[0]  # a candidate on a reference point
        cases.append((ref.tolist(), cand.tolist(), int(rng.integers(1, 5))))
    return cases


ipr_precision = Question(
    "IPR precision from scratch",
    reference=_ipr_precision,
    cases=_ipr_cases, rtol=0.0, atol=1e-12,
    hints=["The radius of reference point j is its distance to its k-th nearest *other* "
           "reference point (sort row j of the distance matrix; index 0 is j itself).",
           "A candidate counts when its distance to some reference point is <= that point's "
           "radius (closed balls: compare squared distances with <=).",
           "Precision is the share of candidates that count."],
    solution="R = reference, C = candidate arrays; D_rr = squared distances within R; "
             "r2 = np.sort(D_rr, axis=1)[:, k]; D_cr = squared distances C to R; "
             "return float((D_cr <= r2[None, :]).any(axis=1).mean()).",
)


def _cross_year_k(by_k_a, by_k_b):
    best = max(by_k_a, key=lambda k: (by_k_a[k], -k))  # ties: the smaller K
    return by_k_b[best]


def _cross_cases(rng):
    cases = []
    for _ in range(8):
        ks = sorted(int(k) for k in rng.choice(np.arange(1, 11), int(rng.integers(2, 6)),
                                                replace=False))
        a = {k: float(v) for k, v in zip(ks, rng.uniform(-0.2, 0.8, len(ks)).round(2))}
        b = {k: float(v) for k, v in zip(ks, rng.uniform(-0.2, 0.8, len(ks)).round(2))}
        cases.append((a, b))
    a = {1: 0.5, 2: 0.5, 3: 0.1}  # a tie: the smaller K wins
    cases.append((a, {1: 0.3, 2: 0.4, 3: 0.2}))
    return cases


cross_year_k = Question(
    "Choose K on one year, report on the other",
    reference=_cross_year_k,
    cases=_cross_cases, rtol=0.0, atol=1e-12,
    hints=["Find the K with the largest value in the first mapping.",
           "On a tie, take the smaller K (the cheaper, less tuned choice).",
           "Return the second mapping's value at that K, not the first's."],
    solution="best = max(a, key=lambda k: (a[k], -k)); return b[best].",
)
