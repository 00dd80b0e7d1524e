"""Checkers for the chapter "Evaluating generated text" (01): correlations with people."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["kendall_b", "length_agreement", "pearson", "tau_by_hand"]


def _kendall(x, y):
    from markeval.stats import kendall

    return kendall(x, y, n_resamples=0).value


def _pearson(x, y):
    from markeval.stats import pearson

    return pearson(x, y, n_resamples=0).value


tau_by_hand = Question(
    "Kendall's tau by hand",
    expected=lambda: _kendall([0.3, 0.2, 0.8, 0.6], [0.1, 0.4, 0.7, 0.9]),
    atol=5e-4,  # answers rounded to three decimals pass
    hints=["A pair (i, j) is concordant when m and h order it the same way.",
           "Segments 1-2 and 3-4 are swapped by the metric; every other pair is concordant.",
           "tau = (C - D) / 6."],
    solution="C = 4 concordant pairs, D = 2 discordant pairs (1-2 and 3-4): tau = (4 - 2) / 6 = 1/3.",
)


def _pearson_cases(rng):
    return [
        (rng.normal(size=n).tolist(), (rng.normal(size=n) + rng.integers(0, 2) * np.arange(n)).tolist())
        for n in (3, 4, 10, 50)
    ] + [(rng.integers(0, 3, 20).astype(float).tolist(), rng.normal(size=20).tolist())]


pearson = Question(
    "Pearson's r",
    reference=_pearson,
    cases=_pearson_cases,
    hints=["Subtract each list's mean first.",
           "r = sum(dx*dy) / sqrt(sum(dx*dx) * sum(dy*dy)); math.sqrt and zip are all you need."],
    solution='''
def my_pearson(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    dx = [a - mx for a in x]
    dy = [b - my for b in y]
    num = sum(a * b for a, b in zip(dx, dy))
    return num / math.sqrt(sum(a * a for a in dx) * sum(b * b for b in dy))
''',
)

kendall_b = Question(
    "Kendall's tau-b",
    reference=_kendall,
    cases=lambda rng: [(rng.integers(0, k, n).tolist(), rng.integers(0, k, n).tolist())
                       for n, k in ((5, 10), (12, 3), (30, 4), (40, 2))],
    hints=["Count C (concordant), D (discordant), pairs tied only in x, pairs tied only in y.",
           "A pair tied in both x and y counts in neither factor of the denominator.",
           "tau_b = (C - D) / sqrt((C + D + T_x) * (C + D + T_y))."],
    solution="kendall_tau_b in the chapter's toy-example cell is one solution: compare it with "
             "the definition of tau_b.",
)


def _length_agreement_de_en():
    """Pearson r of min(|h|/|y|, |y|/|h|) with DA on the judged WMT17 de-en segments."""
    from markeval.datasets import wmt17_da_segments

    seg = wmt17_da_segments("de-en", with_text=True)
    ratio = np.array([len(h.split()) / len(r.split())
                      for h, r in zip(seg["hypothesis"], seg["reference"])])
    return _pearson(np.minimum(ratio, 1 / ratio), seg["score"].to_numpy())


length_agreement = Question(
    "Length agreement, de-en",
    expected=_length_agreement_de_en,  # reads the data at check time, not at import
    atol=5e-4,
    hints=["np.minimum(ratio, 1 / ratio) on the 'length ratio' column of seg."],
    solution="agreement = np.minimum(seg['length ratio'], 1 / seg['length ratio']); then "
             "pearson(agreement[seg.pair == p], seg.score[seg.pair == p]) for each pair p.",
)
