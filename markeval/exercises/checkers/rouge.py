"""Checkers for the chapter "ROUGE" (05): n-gram recall and the longest common subsequence."""

from __future__ import annotations

from collections import Counter

from markeval.exercises import Question

__all__ = ["by_hand", "lcs_length", "rouge_n_recall"]


def _rouge2_recall():
    from markeval import rouge

    return rouge(["the cat sat on the mat"], ["the cat was on the mat"], ["rouge2"])["rouge2"].recall


by_hand = Question(
    "ROUGE-2 by hand",
    expected=_rouge2_recall,
    atol=5e-4,
    hints=["List the reference bigrams: there are five.",
           "Shared: 'the cat', 'on the', 'the mat'."],
    solution="Reference bigrams: the cat, cat was, was on, on the, the mat (5). Three are in the "
             "hypothesis: recall = 3/5 = 0.6.",
)


def _lcs_length_bits(a, b):
    """The bit-parallel LCS length of the chapter (and of markeval's ROUGE-L)."""
    masks = {}
    for k, w in enumerate(a):
        masks[w] = masks.get(w, 0) | (1 << k)
    v = (1 << len(a)) - 1
    for w in b:
        u = v & masks.get(w, 0)
        v = (v + u) | (v - u)
    return len(a) - (v & ((1 << len(a)) - 1)).bit_count()


lcs_length = Question(
    "LCS length", reference=_lcs_length_bits,
    cases=lambda rng: [([], ["a"]), (["a"], ["a"])] + [
        (rng.choice(list("abcde"), size=rng.integers(0, 15)).tolist(),
         rng.choice(list("abcde"), size=rng.integers(0, 15)).tolist()) for _ in range(10)],
    hints=["t[i][j] = t[i-1][j-1] + 1 when a[i-1] == b[j-1], else max(t[i-1][j], t[i][j-1]).",
           "Start from a table of zeros with len(a) + 1 rows and len(b) + 1 columns."],
    solution="lcs_table(a, b)[-1][-1], with lcs_table as defined in this chapter.",
)


def _ngram_counts(tokens, n):
    return Counter(tuple(tokens[k:k + n]) for k in range(len(tokens) - n + 1))


def _best_recall(hypothesis, references, n):
    h = _ngram_counts(hypothesis, n)
    best = 0.0
    for ref in references:
        r = _ngram_counts(ref, n)
        if r:
            best = max(best, sum(min(c, h[g]) for g, c in r.items()) / sum(r.values()))
    return best


rouge_n_recall = Question(
    "Clipped ROUGE-N recall", reference=_best_recall,
    cases=lambda rng: [
        (rng.choice(list("abc"), size=rng.integers(1, 12)).tolist(),
         [rng.choice(list("abcd"), size=rng.integers(1, 12)).tolist()
          for _ in range(rng.integers(1, 4))],
         int(rng.integers(1, 4))) for _ in range(12)],
    hints=["Count n-grams with a Counter of tuples.",
           "A reference n-gram counted c times matches at most min(c, its count in the hypothesis)."],
    solution="""
def rouge_n_recall(hypothesis, references, n):
    h = ngram_counts(hypothesis, n)
    best = 0.0
    for ref in references:
        r = ngram_counts(ref, n)
        if r:
            best = max(best, sum(min(c, h[g]) for g, c in r.items()) / sum(r.values()))
    return best
""",
)
