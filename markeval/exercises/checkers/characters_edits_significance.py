"""Checkers for the chapter "Characters, edits and significance" (18): chrF and TER by hand."""

from __future__ import annotations

from collections import Counter

from markeval.exercises import Question

__all__ = ["char_ngram_statistics", "chrf_by_hand", "ter_by_hand"]


def _chrf_answer():
    from markeval.lexical.chrf import chrf

    return chrf(["the mat"], ["a mat"], char_order=2).score


chrf_by_hand = Question(
    "chrF by hand",
    expected=_chrf_answer,
    atol=0.05,
    hints=["Remove the spaces first: 'themat' against 'amat'.",
           "Unigrams: 3 of the hypothesis' 6 match (a, m, t, each clipped), out of 4 in the "
           "reference. Bigrams: 'ma' and 'at' match, of 5 and 3.",
           "Average precision and recall over the two orders, then F_beta with beta = 2, times 100."],
    solution="P = (3/6 + 2/5) / 2 = 0.45, R = (3/4 + 2/3) / 2 = 0.7083; "
             "chrF2 = 100 * 5PR / (4P + R) = 63.54.",
)


def _char_statistics(hypothesis, reference, n):
    def grams(text):
        chars = text.replace(" ", "")
        return Counter(chars[i:i + n] for i in range(len(chars) - n + 1))

    h, r = grams(hypothesis), grams(reference)
    return sum(h.values()), sum(r.values()), sum((h & r).values())


def _string_cases(rng):
    letters = list("abc d")
    cases = [("", "ab", 1), ("ab", "", 2), ("a b", "ab", 2)]
    for _ in range(20):
        text = lambda: "".join(rng.choice(letters, size=rng.integers(0, 12)))  # noqa: E731
        cases.append((text(), text(), int(rng.integers(1, 4))))
    return cases


char_ngram_statistics = Question(
    "Character n-gram statistics",
    reference=_char_statistics,
    cases=_string_cases,
    hints=["chrF (with sacreBLEU's default whitespace=False) deletes the spaces before it cuts "
           "character n-grams.",
           "Counter(a) & Counter(b) keeps each n-gram with the smaller of its two counts."],
    solution="Counter over text.replace(' ', '')[i:i + n] for both texts; return the two totals "
             "and the total of their intersection.",
)


def _ter_answer():
    from markeval.lexical.ter import ter

    return ter(["a cat on the mat sat"], ["the cat sat on the mat"]).score


ter_by_hand = Question(
    "TER with a shift",
    expected=_ter_answer,
    atol=0.05,
    hints=["Without shifts the two sentences need many substitutions; look for a block of words "
           "that appears in both, in another place.",
           "Count a block shift as one edit, whatever its length, then count the word edits left.",
           "TER = 100 x edits / reference words."],
    solution="Shift 'sat' to after 'cat' (1 edit), then substitute 'a' by 'the' (1 edit): "
             "2 edits over 6 reference words, TER = 33.33. Word edits alone need 3 (a→the, insert "
             "'sat' after 'cat', delete the last 'sat'): 50.0.",
)
