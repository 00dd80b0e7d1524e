"""Assignment 3, embedding metrics: cosine, greedy matching, EMD, idf, and idf on WMT17."""

from __future__ import annotations

import functools
import math

import numpy as np

from markeval.exercises.assignments._cases import pearson, wmt17_judged
from markeval.exercises.assignments._grading import Task, make_task

__all__ = ["ALLOWED", "A3_SEGMENTS", "NUMBER", "TITLE", "tasks", "toy_problem"]

NUMBER = 3
TITLE = "Embedding metrics"
#: What a from-scratch answer may use: the standard library, NumPy and SciPy.
ALLOWED = ("numpy", "scipy")
A3_SEGMENTS = {"ci": 100, "full": 560}  #: judged de-en segments used by Assignment 3, Q6


def _cosine_reference(X, Y):
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    return (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (
        Y / np.linalg.norm(Y, axis=1, keepdims=True)).T


def _vector_cases(rng, with_weights: bool):
    cases = []
    for i in range(14):
        n, m, d = int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(2, 6))
        X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3)
        Y = rng.normal(size=(m, d)) + (rng.normal(size=d) if i % 2 else 0)
        if not with_weights:
            cases.append((X, Y))
            continue
        wx, wy = rng.uniform(0, 2, size=n), rng.uniform(0, 2, size=m)
        if n > 1 and i % 3 == 0:
            wx[0] = 0.0  # a zero-weight token: still a candidate of every match
        if m > 1 and i % 3 == 1:
            wy[-1] = 0.0
        cases.append((X, Y, wx, wy))
    return cases


def _greedy_reference(hyp_vecs, ref_vecs, hyp_w, ref_w):
    from markeval.semantic.greedy import greedy_match

    return greedy_match(hyp_vecs, ref_vecs, hyp_w, ref_w)


def _emd_reference(a, b, cost):
    from markeval.semantic.emd import earth_movers_distance

    return earth_movers_distance(a, b, cost).distance


def _emd_cases(rng):
    cases = [([1, 1], [1, 1], [[0, 3], [1, 2]]), ([1], [1, 1, 2], [[1.0, 2.0, 3.0]]),
             ([2, 1], [1, 2], [[0, 1], [1, 0]])]
    for _ in range(12):
        n, m = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        X, Y = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
        cost = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1))
        cases.append((rng.uniform(0.1, 3, size=n), rng.uniform(0.1, 3, size=m), cost))
    return cases


def toy_problem():
    """Assignment 3, Q4: the toy problem "the the the" against "the cat sat", in 2-D.

    The hypothesis is three copies of ``e1``; the reference is ``e1``, ``e2`` and their unit
    diagonal.

    Returns
    -------
    hyp, ref : numpy.ndarray, shape (3, 2)

    Examples
    --------
    >>> hyp, ref = toy_problem()
    >>> hyp.shape, ref.shape
    ((3, 2), (3, 2))
    """
    hyp = np.array([[1.0, 0.0]] * 3)
    ref = np.array([[1.0, 0.0], [0.0, 1.0], [math.sqrt(0.5), math.sqrt(0.5)]])
    return hyp, ref


def _toy_answer() -> dict:
    """Greedy P and R (uniform weights) and the EMD (Euclidean cost) of :func:`toy_problem`."""
    from markeval.semantic.greedy import greedy_match
    from markeval.semantic.emd import earth_movers_distance

    hyp, ref = toy_problem()
    p, r, _ = greedy_match(hyp, ref, np.ones(3), np.ones(3))
    cost = np.sqrt(((hyp[:, None] - ref[None]) ** 2).sum(-1))
    return {"precision": p, "recall": r,
            "emd": earth_movers_distance(np.ones(3), np.ones(3), cost).distance}


# Words that all-MiniLM-L6-v2's tokenizer keeps whole, so whitespace words are word pieces.
_IDF_WORDS = ("the a cat dog sat on mat rug ran big small red blue house car tree river city "
              "news market game film music school water").split()


def _idf_cases(rng):
    cases = [["the cat sat", "the dog sat", "the cat ran"], ["cat"], ["a a a", "a"]]
    for _ in range(8):
        docs = int(rng.integers(1, 8))
        cases.append([" ".join(rng.choice(_IDF_WORDS[: int(rng.integers(3, 25))],
                                          size=int(rng.integers(1, 9))).tolist())
                      for _ in range(docs)])
    return [(c,) for c in cases]


def _idf_reference(corpus):
    from markeval.semantic.idf import idf_weights

    return dict(idf_weights(corpus).weights)




@functools.lru_cache(maxsize=2)
def _idf_correlations(n: int) -> dict:
    """Assignment 3, Q6: Pearson r with DA of BERTScore F1 without and with idf (first n)."""
    from markeval.semantic.bertscore import bertscore
    from markeval.semantic.idf import idf_weights

    seg = wmt17_judged("de-en", n)
    hyps, refs = list(seg["hypothesis"]), list(seg["reference"])
    plain = bertscore(hyps, refs, progress=False).sentence_f1
    weighted = bertscore(hyps, refs, idf=idf_weights(refs), progress=False).sentence_f1
    return {"plain": pearson(plain, seg["score"]), "idf": pearson(weighted, seg["score"])}


def _segments() -> int:
    from markeval.profile import current_profile

    return A3_SEGMENTS[current_profile()]


def tasks() -> list[Task]:
    """The questions of Assignment 3, in order."""
    return [
        make_task("q1", "Cosine similarity matrix", 10, "code",
              answer="my_cosine_matrix",
              reference=_cosine_reference, cases=lambda rng: _vector_cases(rng, False),
              rtol=1e-7, atol=1e-9, allowed=ALLOWED,
              hints=["Normalise every ROW to unit length, then one matrix product.",
                     "The result has shape (len(X), len(Y))."]),
        make_task("q2", "Greedy matching (BERTScore)", 20, "code",
              answer="my_greedy_match",
              reference=_greedy_reference, cases=lambda rng: _vector_cases(rng, True),
              rtol=1e-7, atol=1e-9, allowed=ALLOWED,
              hints=["Precision: each HYPOTHESIS token takes its best reference token "
                     "(a max over the reference axis), weighted by the hypothesis weights.",
                     "Every token is a candidate of the max, even one whose own weight is 0.",
                     "F = 2PR / (P + R), and 0 when P + R = 0."]),
        make_task("q3", "Earth Mover's Distance", 20, "code",
              answer="my_emd",
              reference=_emd_reference, cases=_emd_cases, rtol=1e-6, atol=1e-9,
              allowed=ALLOWED,
              hints=["Normalise a and b to sum 1 first.",
                     "A linear programme: minimise sum F*C subject to row sums a, column sums "
                     "b, F >= 0 (scipy.optimize.linprog with A_eq).",
                     "Sending every unit to its nearest point is a lower bound, not the EMD."]),
        make_task("q4", "Greedy vs EMD on a toy problem", 10, "value",
              answer="my_toy",
              expected=_toy_answer,
              rtol=1e-6,
              hints=["A dict with keys 'precision', 'recall' and 'emd'.",
                     "Three hypothesis tokens may all take the same reference token in greedy "
                     "matching; in a transport each reference token receives exactly 1/3."]),
        make_task("q4b", "Greedy vs EMD (explanation)", 5, "written"),
        make_task("q5", "Inverse document frequency", 15, "code",
              answer="my_idf",
              reference=_idf_reference, cases=_idf_cases, rtol=1e-9,
              allowed=ALLOWED,
              hints=["df(w) counts DOCUMENTS that contain w at least once.",
                     "idf(w) = log((M + 1) / (df(w) + 1)) with M documents."]),
        make_task("q6", "idf on WMT17 (correlations)", 15, "value",
              answer="my_idf_correlations",
              expected=lambda: _idf_correlations(_segments()), rtol=1e-4,
              hints=["idf weights from the references: idf_weights(references); pass them as "
                     "bertscore(..., idf=weights).",
                     "Use the first A3_SEGMENTS[profile] judged segments of wmt17_judged()."]),
        make_task("q6b", "idf effects (explanation)", 5, "written"),
    ]

