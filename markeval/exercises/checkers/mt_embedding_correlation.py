"""Checkers for the chapter "Embedding and set metrics against people: machine translation"."""

from __future__ import annotations

import numpy as np

from markeval.exercises import Question

__all__ = ["best_k", "hard_soft", "samples"]


def _expected_max_r(n, rho, rho_k, n_k, seed, trials=1000):
    """Mean over simulated data sets of the largest of ``n_k`` sample correlations with DA.

    Human scores ``h``; a shared metric part ``z`` with corr(z, h) = rho / sqrt(rho_k); each
    K variant adds its own noise so that variants correlate ``rho_k`` with each other and
    ``rho`` with ``h``.
    """
    rng = np.random.default_rng(seed)
    a = rho / np.sqrt(rho_k)
    maxima = np.empty(trials)
    for t in range(trials):
        h = rng.normal(size=n)
        z = a * h + np.sqrt(1 - a**2) * rng.normal(size=n)
        ms = np.sqrt(rho_k) * z + np.sqrt(1 - rho_k) * rng.normal(size=(n_k, n))
        maxima[t] = max(np.corrcoef(m, h)[0, 1] for m in ms)
    return float(maxima.mean())


best_k = Question(
    "Expected best-of-K correlation",
    reference=_expected_max_r,
    cases=[(9, 0.6, 0.9, 3, 0), (16, 0.8, 0.95, 3, 1), (5, 0.5, 0.8, 4, 2)],
    atol=0.02,  # two simulations with different random streams agree to about ±0.01
    rtol=0.0,
    hints=["Build the K variants from one shared part plus independent noise: "
           "m_k = sqrt(rho_k) z + sqrt(1 - rho_k) e_k gives corr(m_j, m_k) = rho_k.",
           "Choose corr(z, h) = rho / sqrt(rho_k), so that corr(m_k, h) = rho.",
           "Per simulated data set keep the *largest* of the n_k sample correlations; average "
           "those maxima over about 1,000 data sets."],
    solution="See the chapter's solution block: simulate h, z and n_k variants, take the maximum "
             "sample correlation per data set, average.",
)

samples = Question(
    "Word-level samples of one output",
    expected=14 * 5,
    hints=["Each word piece contributes one vector per selected layer.",
           "The special tokens [CLS] and [SEP] are not samples."],
    solution="14 pieces x 5 layers = 70 samples.",
)


def _hard_soft_gap(hyps, refs, human):
    from markeval import bertscore, moverscore

    soft = moverscore(hyps, refs, preset=None, layers=[-1], remove_subwords=False,
                      remove_punctuation=False, progress=False).sentence_scores
    hard = bertscore(hyps, refs, progress=False).sentence_f1
    return float(np.corrcoef(soft, human)[0, 1] - np.corrcoef(hard, human)[0, 1])


def _segments(rng):
    """Two random sets of 25 judged WMT17 segments (data read at check time, not import)."""
    from markeval.datasets import wmt17_da_segments

    out = []
    for pair in ("de-en", "zh-en"):
        seg = wmt17_da_segments(pair, with_text=True, detokenize=True)
        idx = np.sort(rng.choice(len(seg), 25, replace=False))
        part = seg.iloc[idx]
        out.append((part["hypothesis"].tolist(), part["reference"].tolist(),
                    part["score"].tolist()))
    return out


hard_soft = Question(
    "Soft minus hard alignment on the same vectors",
    reference=_hard_soft_gap,
    cases=_segments,
    atol=1e-6,
    rtol=0.0,
    hints=["moverscore(..., preset=None, layers=[-1], remove_subwords=False, "
           "remove_punctuation=False) keeps every word piece of the last layer, as BERTScore.",
           "Correlate each metric's sentence scores with the human scores; return soft − hard."],
    solution="np.corrcoef(moverscore(...same vectors...).sentence_scores, human)[0, 1] - "
             "np.corrcoef(bertscore(hyps, refs).sentence_f1, human)[0, 1]",
)
