"""Checkers for the chapter "BLEU and GLEU" (03): clipped n-gram precision and its relatives."""

from __future__ import annotations

from fractions import Fraction

from markeval.exercises import Question

__all__ = ["brevity_penalty", "clip", "modified_precision", "sentence_gleu"]


def _clip_answer():
    from markeval.lexical.bleu import sentence_bleu

    r = sentence_bleu("on the mat the cat sat on the mat", "the cat sat on the mat",
                      tokenize="none", smooth="none")
    return tuple(float(Fraction(r.counts[n], r.totals[n])) for n in (0, 1))


clip = Question(
    "Clipping by hand",
    expected=_clip_answer,
    hints=["Count each word in the hypothesis and in the reference; clip at the reference count.",
           "'the' occurs 3 times in the hypothesis but twice in the reference; 'on' and 'mat' "
           "twice against once.",
           "Bigrams: 'on the' and 'the mat' occur twice in the hypothesis, once in the reference."],
    solution="p1 = 6/9 (the 2, cat 1, sat 1, on 1, mat 1), p2 = 5/8 (on the, the mat, the cat, "
             "cat sat, sat on: 1 each).",
)


def _reference_precision(hypothesis, references, n):
    from markeval.lexical.bleu import bleu_statistics

    s = bleu_statistics([hypothesis], [references], max_order=n, tokenize="none")
    return int(s.counts[0, n - 1]), int(s.totals[0, n - 1])


def _sentence_cases(rng, with_order=True):
    words = "the a cat dog sat on mat rug".split()
    cases = []
    for _ in range(25):
        sentence = lambda: " ".join(rng.choice(words, size=rng.integers(0, 9)))  # noqa: E731
        refs = [sentence() for _ in range(rng.integers(1, 4))]
        cases.append((sentence(), refs, int(rng.integers(1, 5))) if with_order
                     else (sentence(), refs))
    return cases


modified_precision = Question(
    "Modified precision",
    reference=_reference_precision,
    cases=_sentence_cases,
    hints=["Counter(ngrams(tokens, n)) counts the n-grams of one token list.",
           "For each hypothesis n-gram take the maximum of its counts in the single references."],
    solution="modified_precision(hypothesis.split(), [r.split() for r in references], n) from the "
             "'BLEU from scratch' section.",
)


def _brevity_penalty(c, r):
    from markeval.lexical.bleu import sentence_bleu

    return sentence_bleu("x " * c, "x " * r, tokenize="none").bp


brevity_penalty = Question(
    "Brevity penalty",
    reference=_brevity_penalty,
    cases=lambda rng: [(0, 5), (5, 5), (6, 5), (1, 30)] + [
        (int(rng.integers(0, 40)), int(rng.integers(1, 40))) for _ in range(20)],
    hints=["No penalty when the hypothesis is longer than the reference.",
           "Equal lengths give exp(0) = 1; an empty hypothesis gets 0 (its limit)."],
    solution="1.0 if c > r else (math.exp(1 - r / c) if c > 0 else 0.0)",
)


def _sentence_gleu(hypothesis, references):
    from markeval.lexical.gleu import sentence_gleu as gleu

    return gleu(hypothesis, references, tokenize="none").score / 100


sentence_gleu = Question(
    "Sentence GLEU",
    reference=_sentence_gleu,
    cases=lambda rng: _sentence_cases(rng, with_order=False),
    hints=["gleu_from_scratch in the chapter returns (m, h, r) for one reference.",
           "Compute m / max(h, r) for each reference with max(h, r) > 0 and keep the largest."],
    solution="""
def my_sentence_gleu(hypothesis, references):
    best = None
    for reference in references:
        m, h, r = gleu_from_scratch(hypothesis, reference)
        if max(h, r) > 0 and (best is None or m / max(h, r) > best):
            best = m / max(h, r)
    return 0.0 if best is None else best
""",
)
