"""Assignment 1, n-gram metrics from scratch: n-grams, clipping, brevity penalty, BLEU, GLEU, 13a."""

from __future__ import annotations

from collections import Counter

from markeval.exercises.assignments._cases import toy_sentence, wmt17, wmt17_rows
from markeval.exercises.assignments._grading import Task, make_task

__all__ = ["ALLOWED", "A1_SYSTEM", "NUMBER", "TITLE", "tasks"]

NUMBER = 1
TITLE = "n-gram metrics from scratch"
#: What a from-scratch answer may use: the standard library and NumPy.
ALLOWED = ("numpy",)
A1_SYSTEM = "uedin-nmt.4723"  #: the WMT17 de-en system of the tokenisation question

def _ngram_cases(rng):
    cases = [(["a"], 2), ([], 1), (["a", "b", "a", "b"], 2), (["x"] * 5, 3)]
    for _ in range(16):
        cases.append((toy_sentence(rng).split(), int(rng.integers(1, 5))))
    for hyp, _, _ in wmt17_rows(rng, 10):
        cases.append((hyp.split(), int(rng.integers(1, 5))))
    return cases


def _clip_cases(rng):
    cases = [("the the the the the the the",
              ["the cat is on the mat", "there is a cat on the mat"], 1),
             ("on the mat the cat sat on the mat", ["the cat sat on the mat"], 2),
             ("", ["a cat"], 1), ("a cat", ["a cat"], 3)]
    for _ in range(12):
        refs = [toy_sentence(rng, 1) for _ in range(int(rng.integers(1, 4)))]
        cases.append((toy_sentence(rng), refs, int(rng.integers(1, 5))))
    for hyp, ref, other in wmt17_rows(rng, 10):
        refs = [ref, other] if rng.random() < 0.5 else [ref]
        cases.append((hyp, refs, int(rng.integers(1, 5))))
    return cases


def _clip_reference(hypothesis, references, n):
    from markeval.lexical.bleu import bleu_statistics

    s = bleu_statistics([hypothesis], [references], max_order=n, tokenize="none")
    return int(s.counts[0, n - 1]), int(s.totals[0, n - 1])


def _ref_len_reference(c, ref_lengths):
    from markeval.lexical.bleu import bleu_statistics

    s = bleu_statistics([" ".join(["x"] * c)], [[" ".join(["y"] * r) for r in ref_lengths]],
                        max_order=1, tokenize="none")
    return int(s.ref_len[0])


def _ref_len_cases(rng):
    cases = [(5, [5]), (5, [4, 6]), (5, [6, 4]), (0, [3, 1]), (10, [2, 30, 9, 11]), (7, [3, 11])]
    for _ in range(20):
        cases.append((int(rng.integers(0, 30)),
                      [int(x) for x in rng.integers(1, 30, size=int(rng.integers(1, 5)))]))
    return cases


def _bp_reference(c, r):
    from markeval.lexical.bleu import sentence_bleu

    return sentence_bleu(" ".join(["x"] * c), " ".join(["x"] * r), tokenize="none").bp


def _corpus_cases(rng):
    cases = [(["the cat sat on the mat"], [["the cat sat on the mat"]]),
             (["the cat", "a dog sat on the rug today"],
              [["the cat sat on the mat", "a cat sat on a mat"], ["a dog sat on the rug"]])]
    for size in (20, 30, 40):  # real system output, one reference per line
        rows = wmt17_rows(rng, size)
        cases.append(([h for h, _, _ in rows], [[r] for _, r, _ in rows]))
    rows = wmt17_rows(rng, 25)  # two references: the human one and another system's output
    cases.append(([h for h, _, _ in rows], [[r, o] for _, r, o in rows]))
    rows = wmt17_rows(rng, 25)  # short hypotheses: the brevity penalty matters
    cases.append(([" ".join(h.split()[: max(1, len(h.split()) // 2)]) for h, _, _ in rows],
                  [[r] for _, r, _ in rows]))
    return cases


def _corpus_reference(hypotheses, references):
    from markeval.lexical.bleu import bleu

    return bleu(hypotheses, references, tokenize="none", smooth="none").score


def _gleu_cases(rng):
    cases = [("the cat sat", ["the cat sat"]), ("", ["a cat"]), ("a", ["b"]),
             ("the cat", ["the cat sat on the mat", "the cat"])]
    for _ in range(12):
        refs = [toy_sentence(rng) for _ in range(int(rng.integers(1, 4)))]
        cases.append((toy_sentence(rng), refs))
    for hyp, ref, other in wmt17_rows(rng, 10):
        cases.append((hyp, [ref, other] if rng.random() < 0.5 else [ref]))
    return cases


def _gleu_reference(hypothesis, references):
    from markeval.lexical.gleu import sentence_gleu

    return sentence_gleu(hypothesis, references, tokenize="none").score / 100


def _13a_cases(rng):
    cases = ["Hello, world!", "It costs $3.50, or 1,000.5 yen.", "well-known 2017-18 results.",
             "A &quot;quoted&quot; word &amp; more", "the victim &apos;s brother",
             "e-mail: a@b.com (see p.5)", "end.", "U.S. troops", "5-4 win"]
    cases += [h for h, _, _ in wmt17_rows(rng, 12, detokenize=True)]
    cases += [h for h, _, _ in wmt17_rows(rng, 8)]  # as distributed: Moses escapes
    return [(c,) for c in cases]


def _13a_reference(line):
    from markeval.text import tokenize

    return tokenize(line, "13a")


def _tokenization_table() -> dict:
    """Assignment 1, Q8: BLEU of :data:`A1_SYSTEM` under four tokenisation settings (de-en)."""
    from markeval.lexical.bleu import bleu

    raw, detok = wmt17("de-en", False), wmt17("de-en", True)
    out = {}
    for name, data, tok in (("none/escaped", raw, "none"), ("13a/escaped", raw, "13a"),
                            ("13a/detokenized", detok, "13a"), ("none/detokenized", detok, "none")):
        out[name] = bleu(list(data.systems[A1_SYSTEM]), [[r] for r in data.references],
                         tokenize=tok).score
    return out


def tasks() -> list[Task]:
    """The questions of Assignment 1, in order."""
    return [
        make_task("q1", "n-gram counts", 10, "code",
              answer="my_ngrams",
              reference=lambda tokens, n: Counter(tuple(tokens[i:i + n])
                                                  for i in range(len(tokens) - n + 1)),
              cases=_ngram_cases, allowed=ALLOWED,
              hints=["A sentence of L tokens has max(0, L - n + 1) n-grams of order n.",
                     "Counter(tuple(tokens[i:i + n]) for i in ...) counts them."]),
        make_task("q2", "Clipped n-gram matches", 15, "code",
              answer="my_clipped_matches",
              reference=_clip_reference, cases=_clip_cases, allowed=ALLOWED,
              hints=["Clip each hypothesis n-gram at its largest count in ONE reference.",
                     "The maximum is over references, the minimum is with the hypothesis count; "
                     "summing over references over-credits repeated words.",
                     "The second number is the number of hypothesis n-grams, clipped or not."]),
        make_task("q3", "Closest reference length", 10, "code",
              answer="my_closest_ref_length",
              reference=_ref_len_reference, cases=_ref_len_cases, allowed=ALLOWED,
              hints=["Minimise |r - c| over the reference lengths.",
                     "On a tie (one shorter, one longer by the same amount) take the shorter."]),
        make_task("q4", "Brevity penalty", 5, "code",
              answer="my_brevity_penalty",
              reference=_bp_reference, allowed=ALLOWED,
              cases=lambda rng: [(0, 5), (5, 5), (6, 5), (1, 30)] + [
                  (int(rng.integers(0, 40)), int(rng.integers(1, 40))) for _ in range(20)],
              hints=["1 when c > r, exp(1 - r/c) otherwise.",
                     "An empty hypothesis gets 0, the limit of exp(1 - r/c) as c -> 0."]),
        make_task("q5", "Corpus BLEU", 20, "code",
              answer="my_corpus_bleu",
              reference=_corpus_reference, cases=_corpus_cases, rtol=1e-7,
              allowed=ALLOWED,
              hints=["Sum matches and totals over the corpus BEFORE dividing; do not average "
                     "sentence scores.",
                     "references[i] is the LIST of references of hypotheses[i].",
                     "BP uses the summed hypothesis length and the summed closest reference "
                     "lengths; a zero precision makes the score 0.",
                     "Return 100 * BP * exp(mean of log p_n)."]),
        make_task("q6", "Sentence GLEU", 15, "code",
              answer="my_sentence_gleu",
              reference=_gleu_reference, cases=_gleu_cases, allowed=ALLOWED,
              hints=["For one reference: m / max(h, r), with m the clipped matches of orders 1-4 "
                     "and h, r the n-gram totals of hypothesis and reference.",
                     "With several references keep the best score; a pair with no n-grams at "
                     "all scores 0."]),
        make_task("q7", "13a tokenizer", 15, "code",
              answer="my_tokenize_13a",
              reference=_13a_reference, cases=_13a_cases, allowed=ALLOWED,
              hints=["Unescape only &quot; &amp; &lt; &gt; (not &apos;), then pad ASCII "
                     "punctuation and symbols other than . , ' - with spaces.",
                     "A period or comma is split off unless it has a digit on BOTH sides; a dash "
                     "is split off after a digit."]),
        make_task("q8", "Tokenisation pitfalls (table)", 5, "value",
              answer="my_table",
              expected=_tokenization_table, rtol=1e-6,
              hints=["Use markeval.bleu with tokenize='none' or '13a' on the files as "
                     "distributed and on load_wmt17('de-en', detokenize=True)."]),
        make_task("q8b", "Tokenisation pitfalls (explanation)", 5, "written"),
    ]

