"""Assignment 2, alignment metrics: METEOR's chunks and alignment, LCS and ROUGE-L, correlations."""

from __future__ import annotations

import numpy as np

from markeval.exercises.assignments._cases import (VOCAB, pearson, toy_sentence, wmt17_judged,
                                                   wmt17_rows)
from markeval.exercises.assignments._grading import Task, make_task

__all__ = ["ALLOWED", "NUMBER", "TITLE", "tasks"]

NUMBER = 2
TITLE = "Alignment metrics"
#: What a from-scratch answer may use: the standard library, NumPy and SciPy.
ALLOWED = ("numpy", "scipy")


def _chunks_reference(alignment):
    """Chunks of a one-to-one alignment: runs of pairs that are adjacent in both texts."""
    pairs = sorted((int(i), int(j)) for i, j in alignment)
    return sum(1 for k, (i, j) in enumerate(pairs) if k == 0 or pairs[k - 1] != (i - 1, j - 1))


def _chunk_cases(rng):
    from markeval.lexical.meteor import meteor

    cases = [[], [(0, 0)], [(0, 0), (1, 1), (2, 2)], [(0, 1), (1, 0)], [(0, 0), (2, 1)],
             [(0, 0), (1, 2)], [(0, 3), (1, 4), (3, 0), (4, 1)]]
    for _ in range(10):  # random partial one-to-one alignments
        n, m = int(rng.integers(1, 12)), int(rng.integers(1, 12))
        k = int(rng.integers(0, min(n, m) + 1))
        hyp = np.sort(rng.choice(n, size=k, replace=False))
        ref = rng.choice(m, size=k, replace=False)
        if rng.random() < 0.5:
            ref = np.sort(ref)  # monotone: chunks break only at gaps
        cases.append([(int(i), int(j)) for i, j in zip(hyp, ref)])
    for hyp, ref, _ in wmt17_rows(rng, 8):  # real METEOR alignments
        cases.append([(i, j) for i, j, _ in meteor(hyp, ref).alignment])
    return [(c,) for c in cases]


def _meteor_cases(rng):
    cases = [("the cat sat on the mat", "the mat the cat sat"), ("a b c", "a b c"),
             ("x y", "a b"), ("the cats", "the cat")]
    cases += [(h, r) for h, r, _ in wmt17_rows(rng, 14)]
    return cases


def _meteor_reference(hypothesis, reference):
    from markeval.lexical.meteor import meteor

    return meteor(hypothesis, reference).score


def _exact_reference(hyp_tokens, ref_tokens):
    from markeval.lexical.meteor import meteor

    r = meteor(" ".join(hyp_tokens), " ".join(ref_tokens), stem=False, synonyms=False)
    return [(i, j) for i, j, _ in r.alignment]


def _exact_cases(rng):
    cases = [("the cat sat on the mat".split(), "the mat the cat sat".split()),
             ("a a b".split(), "a b a".split()), ([], "a".split()), ("x".split(), "y".split())]
    small = ["the", "a", "cat", "sat"]
    for _ in range(12):
        cases.append((rng.choice(small, size=int(rng.integers(1, 9))).tolist(),
                      rng.choice(small, size=int(rng.integers(1, 9))).tolist()))
    cases += [(h.split(), r.split()) for h, r, _ in wmt17_rows(rng, 8)]
    return cases


def _lcs_reference(a, b):
    from markeval.lexical.rouge import rouge

    r = rouge([" ".join(a)], [" ".join(b)], types=["rougeL"], tokenize=str.split)
    return int(round(r["rougeL"].recalls[0] * len(b)))


def _lcs_cases(rng):
    cases = [("a b c d".split(), "a c d".split()), ("a b".split(), "b a".split()),
             ([], ["a"]), ("a b a b a".split(), "b a b".split()),
             ("x a b c y".split(), "a z b c".split())]
    for _ in range(14):
        cases.append((rng.choice(VOCAB[:5], size=int(rng.integers(0, 12))).tolist(),
                      rng.choice(VOCAB[:5], size=int(rng.integers(1, 12))).tolist()))
    cases += [(h.split(), r.split()) for h, r, _ in wmt17_rows(rng, 6)]
    return cases


def _rougel_reference(hypothesis, reference):
    from markeval.lexical.rouge import rouge

    s = rouge([hypothesis], [reference], types=["rougeL"], tokenize=str.split)["rougeL"]
    return (s.precisions[0], s.recalls[0], s.fmeasures[0])


def _rougel_cases(rng):
    cases = [("the cat sat on the mat", "the mat the cat sat"), ("", "a b"), ("a b", "c d"),
             ("police killed the gunman", "the gunman killed police")]
    cases += [(toy_sentence(rng), toy_sentence(rng, 1)) for _ in range(8)]
    cases += [(h, r) for h, r, _ in wmt17_rows(rng, 8)]
    return cases


def _largest_disagreements(metric, human, n: int) -> list[int]:
    """Indices of the ``n`` segments where a metric and humans disagree most, worst first.

    Both score lists are turned into fractional ranks ``rankdata(x) / len(x)`` (ties get the
    average rank); the disagreement of a segment is the absolute difference of its two ranks.
    Indices are sorted by decreasing disagreement, ties by increasing index.

    Examples
    --------
    >>> _largest_disagreements([0.1, 0.9, 0.5, 0.4], [0.2, 0.1, 0.6, 0.5], 2)
    [1, 0]
    """
    from scipy.stats import rankdata

    metric, human = np.asarray(metric, float), np.asarray(human, float)
    if metric.shape != human.shape or metric.ndim != 1:
        raise ValueError(f"metric and human must be 1-D of one length, got {metric.shape} "
                         f"and {human.shape}")
    gap = np.abs(rankdata(metric) - rankdata(human)) / len(metric)
    order = sorted(range(len(gap)), key=lambda i: (-gap[i], i))
    return order[: int(n)]


def _disagreement_cases(rng):
    cases = [([0.1, 0.9, 0.5, 0.4], [0.2, 0.1, 0.6, 0.5], 2), ([1, 2, 3], [3, 2, 1], 3),
             ([0.5, 0.5, 0.1, 0.9], [0.2, 0.3, 0.1, 0.9], 2)]
    for _ in range(10):
        size = int(rng.integers(5, 40))
        m = rng.normal(size=size)
        h = m + rng.normal(size=size)
        if rng.random() < 0.4:  # ties
            m, h = np.round(m), np.round(h, 1)
        cases.append((m.tolist(), h.tolist(), int(rng.integers(1, 6))))
    return cases


def _correlations(n: int | None = None) -> dict:
    """Assignment 2, Q6: Pearson r with DA of sentence METEOR, ROUGE-L F1 and sentence BLEU."""
    from markeval.lexical.bleu import bleu_statistics, sentence_bleu_scores
    from markeval.lexical.meteor import corpus_meteor
    from markeval.lexical.rouge import rouge

    seg = wmt17_judged("de-en", n)
    hyps, refs = list(seg["hypothesis"]), list(seg["reference"])
    scores = {
        "meteor": corpus_meteor(hyps, refs, progress=False).scores,
        "rougeL": rouge(hyps, refs, types=["rougeL"])["rougeL"].fmeasures,
        "sentence_bleu": sentence_bleu_scores(bleu_statistics(hyps, refs, tokenize="none")),
    }
    return {k: pearson(v, seg["score"]) for k, v in scores.items()}


def tasks() -> list[Task]:
    """The questions of Assignment 2, in order."""
    return [
        make_task("q1", "Counting chunks", 10, "code",
              answer="my_chunks",
              reference=_chunks_reference, cases=_chunk_cases, allowed=ALLOWED,
              hints=["Sort the pairs by hypothesis position; a new chunk starts unless the pair "
                     "is (i + 1, j + 1) after (i, j).",
                     "No matches: 0 chunks. One match: 1 chunk."]),
        make_task("q2", "METEOR from an alignment", 15, "code",
              answer="my_meteor",
              reference=_meteor_reference, cases=_meteor_cases,
              hints=["P = m / w_t, R = m / w_r, F_mean = P R / (alpha P + (1 - alpha) R).",
                     "penalty = gamma (chunks / m) ** beta; score = (1 - penalty) F_mean; "
                     "no match scores 0."]),
        make_task("q3", "Exact-match alignment", 20, "code",
              answer="my_exact_alignment",
              reference=_exact_reference, cases=_exact_cases, allowed=ALLOWED,
              hints=["Go through the hypothesis from its LAST word to its first.",
                     "Match each word to the LAST still-free identical reference word.",
                     "Return the pairs sorted by hypothesis position."]),
        make_task("q4", "Longest common subsequence", 15, "code",
              answer="my_lcs_length",
              reference=_lcs_reference, cases=_lcs_cases, allowed=ALLOWED,
              hints=["A subsequence need not be contiguous: this is not the longest common "
                     "substring.",
                     "L[i][j] = L[i-1][j-1] + 1 if a[i-1] == b[j-1] else "
                     "max(L[i-1][j], L[i][j-1]), with a table of (len(a)+1) x (len(b)+1)."]),
        make_task("q5", "ROUGE-L", 10, "code",
              answer="my_rouge_l",
              reference=_rougel_reference, cases=_rougel_cases, allowed=ALLOWED,
              hints=["P = LCS / len(hypothesis), R = LCS / len(reference), F = 2PR / (P + R).",
                     "An empty hypothesis, or no common word, gives (0, 0, 0)."]),
        make_task("q6", "Correlation with humans", 15, "value",
              answer="my_correlations",
              expected=lambda: _correlations(), rtol=1e-6,
              hints=["corpus_meteor(...).scores, rouge(..., types=['rougeL'])['rougeL'].fmeasures "
                     "and sentence_bleu_scores(bleu_statistics(..., tokenize='none')) give "
                     "per-segment scores.",
                     "Pearson r with np.corrcoef or markeval.pearson(...).value."]),
        make_task("q7", "Largest disagreements", 10, "code",
              answer="my_disagreements",
              reference=_largest_disagreements, cases=_disagreement_cases,
              hints=["Compare RANKS, not raw scores: the two scales differ.",
                     "scipy.stats.rankdata gives average ranks on ties; divide by the length.",
                     "Sort by decreasing disagreement, ties by index, and keep n."]),
        make_task("q8", "Where metrics and humans disagree", 5, "written"),
    ]

