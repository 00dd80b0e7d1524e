"""Checkers for the chapter "Do metrics agree with people? Machine translation"."""

from __future__ import annotations

from markeval.exercises import Question

__all__ = ["subset_r", "williams"]


def _williams_t():
    from markeval.experiments.human_correlation import williams_test

    return williams_test(0.95, 0.90, 0.97, 10).t


williams = Question(
    "Williams' t by hand",
    expected=_williams_t,
    atol=5e-3,  # a hand computation carries three or four digits
    hints=["|R| = 1 - r12² - r13² - r23² + 2 r12 r13 r23.",
           "t = (r12 - r13) sqrt((n-1)(1+r23) / (2 (n-1)/(n-3) |R| + rbar² (1-r23)³)), "
           "rbar = (r12 + r13) / 2."],
    solution="|R| = 1 - 0.9025 - 0.81 - 0.9409 + 2(0.95)(0.90)(0.97) = 0.0053; rbar = 0.925; "
             "t = 0.05 sqrt(9 * 1.97 / (2 * 9/7 * 0.0053 + 0.925² * 0.03³)) ≈ 1.80, "
             "p ≈ 0.057 with 7 degrees of freedom.",
)


def _subset_r(pair, size, seed):
    from markeval import bleu
    from markeval.datasets import load_wmt17
    from markeval.experiments.translation import (correlations_by_pair, sentence_subset,
                                                  system_level_scores)

    subset = sentence_subset(len(load_wmt17(pair).references), size, seed=seed)
    table = system_level_scores(pair, {"BLEU": lambda h, r: bleu(h, r).score}, subset=subset,
                                progress=False)
    return float(correlations_by_pair(table, n_resamples=0).value.iloc[0])


subset_r = Question(
    "BLEU on a fixed subset",
    reference=_subset_r,
    cases=[("cs-en", 50, 0), ("tr-en", 80, 1)],
    rtol=1e-9, atol=1e-9,
    hints=["load_wmt17(pair, detokenize=True) gives outputs and references; "
           "wmt17_da_systems(pair) the DA scores and system names.",
           "The DA names equal the output names on this copy of WMT17.",
           "Score the same sentences (sentence_subset(n, size, seed=seed)) for every system."],
    solution="Use system_level_scores(pair, {'BLEU': ...}, subset=sentence_subset(...)) and "
             "correlations_by_pair(table, n_resamples=0).",
)
