"""ROUGE: the slide's example, parity with rouge-score on TAC 2009, LCS read-out, properties.

Parity tolerance is 1e-12 everywhere (in practice the floats are identical: the same
operations in the same order). rouge-score's Python LCS tables take ~25 ms per
summary-reference pair here, so full-TAC parity covers the n-gram types; rougeL and
rougeLsum are compared on a fixed subset (stated in each test) and, exhaustively on
small random texts, through hypothesis.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer, scoring, tokenizers

from markeval.lexical.rouge import _lcs_positions, rouge, rouge_tokenize

TOL = 1e-12
SLIDE_HYP = "A fast brown fox leaps over a sleeping dog."
SLIDE_REF = "The quick brown fox jumps over the lazy dog."


class MemoTokenizer(tokenizers.Tokenizer):
    """rouge-score's own DefaultTokenizer, memoized per text (it is a pure function)."""

    def __init__(self, use_stemmer: bool):
        self._inner = tokenizers.DefaultTokenizer(use_stemmer)
        self._memo: dict[str, list[str]] = {}

    def tokenize(self, text):
        if text not in self._memo:
            self._memo[text] = self._inner.tokenize(text)
        return self._memo[text]


@functools.lru_cache(maxsize=None)
def tac_2009():
    """All TAC 2009 judged summaries (44 topics x 59) as newline-joined texts, 4 references each."""
    from markeval.datasets import DataNotFoundError, load_tac

    try:
        topics = load_tac(2009)
    except DataNotFoundError as err:  # pragma: no cover - the data is there in CI
        pytest.skip(f"TAC 2009 not available: {err}")
    hyps, refs, topic_of = [], [], []
    for k, topic in enumerate(topics):
        references = ["\n".join(r) for r in topic.references]
        for summary in topic.annotations:
            hyps.append("\n".join(summary.sentences))
            refs.append(references)
            topic_of.append(k)
    return hyps, refs, topic_of


def assert_same(ours, theirs, types, indices=None):
    indices = range(len(theirs)) if indices is None else indices
    worst = 0.0
    for t in types:
        for k, i in enumerate(indices):
            o, s = ours[t].pair(k), theirs[i][t]
            worst = max(worst, abs(o.precision - s.precision), abs(o.recall - s.recall),
                        abs(o.fmeasure - s.fmeasure))
    assert worst <= TOL


# --- the slide ----------------------------------------------------------------------------------

def test_slide_example_counts_dog():
    r = rouge([SLIDE_HYP], [SLIDE_REF])
    # brown, fox, over, dog: 4 of 9 unigrams (the slide lists 3 and forgets "dog")
    assert r["rouge1"].recall == pytest.approx(4 / 9) and r["rouge1"].precision == pytest.approx(4 / 9)
    assert r["rouge2"].recall == pytest.approx(1 / 8)  # only "brown fox"
    assert r["rougeL"].recall == pytest.approx(4 / 9)  # LCS: brown fox over dog
    assert r["rougeLsum"].fmeasure == pytest.approx(4 / 9)


def test_slide_example_tokens():
    assert rouge_tokenize(SLIDE_HYP) == "a fast brown fox leaps over a sleeping dog".split()
    assert rouge_tokenize(SLIDE_HYP, use_stemmer=True)[4] == "leap"


# --- parity with rouge-score on TAC 2009 --------------------------------------------------------

@pytest.mark.parametrize("use_stemmer", [True, False])
def test_parity_ngrams_all_tac_2009(use_stemmer):
    """All 2,596 TAC 2009 summaries x 4 references, score_multi, rouge1 and rouge2."""
    hyps, refs, _ = tac_2009()
    types = ["rouge1", "rouge2"]
    scorer = rouge_scorer.RougeScorer(types, tokenizer=MemoTokenizer(use_stemmer))
    theirs = [scorer.score_multi(r, h) for h, r in zip(hyps, refs)]
    ours = rouge(hyps, refs, types, use_stemmer=use_stemmer)
    assert len(hyps) == 2596
    assert_same(ours, theirs, types)


@pytest.mark.parametrize("use_stemmer, offset", [(True, 0), (False, 29)])
def test_parity_lcs_types_tac_2009_subset(use_stemmer, offset):
    """rougeL and rougeLsum, score_multi: one summary per topic (all 44 topics), the
    ``(offset + 7 * topic) % 59``-th of the topic, against its 4 references."""
    hyps, refs, topic_of = tac_2009()
    picked, seen = [], {}
    for i, k in enumerate(topic_of):
        seen[k] = seen.get(k, -1) + 1
        if seen[k] == (offset + 7 * k) % 59:
            picked.append(i)
    assert len(picked) == 44
    types = ["rouge3", "rougeL", "rougeLsum"]
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=use_stemmer)
    theirs = {i: scorer.score_multi(refs[i], hyps[i]) for i in picked}
    ours = rouge([hyps[i] for i in picked], [refs[i] for i in picked], types,
                 use_stemmer=use_stemmer)
    assert_same(ours, theirs, types, picked)


def test_parity_single_reference_and_best_reference():
    """Per-reference scores (``score``) on 20 TAC summaries; best_reference is the argmax."""
    hyps, refs, _ = tac_2009()
    types = ["rouge2", "rougeLsum"]
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=True)
    for i in range(0, 2596, 130):
        per_ref = [rouge([hyps[i]], [r], types, use_stemmer=True) for r in refs[i]]
        theirs = [scorer.score(r, hyps[i]) for r in refs[i]]
        for t in types:
            for o, s in zip(per_ref, theirs):
                assert abs(o[t].fmeasure - s[t].fmeasure) <= TOL
            best = rouge([hyps[i]], [refs[i]], types, use_stemmer=True)[t].best_reference[0]
            assert best == int(np.argmax([s[t].fmeasure for s in theirs]))


def test_bootstrap_matches_rouge_score_aggregator():
    hyps, refs, _ = tac_2009()
    hyps, refs = hyps[:60], refs[:60]
    types = ["rouge1", "rougeL"]
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=True)
    aggregator = scoring.BootstrapAggregator(n_samples=200)
    for h, r in zip(hyps, refs):
        aggregator.add_scores(scorer.score_multi(r, h))
    np.random.seed(3)
    theirs = aggregator.aggregate()
    ours = rouge(hyps, refs, types, use_stemmer=True, n_resamples=200, seed=3)
    for t in types:
        for bound in ("low", "mid", "high"):
            o, s = getattr(ours[t], bound), getattr(theirs[t], bound)
            assert np.allclose([o.precision, o.recall, o.fmeasure], list(s), rtol=0, atol=1e-12)
    assert ours["rouge1"].low.fmeasure < ours["rouge1"].fmeasure < ours["rouge1"].high.fmeasure
    again = rouge(hyps, refs, types, use_stemmer=True, n_resamples=200, seed=3)
    assert again == ours  # seeded: identical


# --- LCS read-out and summary-level LCS against rouge-score's code ---------------------------------

tokens = st.lists(st.integers(0, 3), max_size=12)


@settings(max_examples=300, deadline=None)
@given(tokens, tokens)
def test_lcs_positions_match_rouge_score_backtrack(ref, can):
    masks: dict[int, int] = {}
    for k, t in enumerate(ref):
        masks[t] = masks.get(t, 0) | (1 << k)
    ours = sorted(_lcs_positions(len(ref), masks, can))
    assert ours == rouge_scorer.lcs_ind(ref, can)


words = st.sampled_from(["a", "b", "c", "d", "the", "dogs", "dog"])
sentence = st.lists(words, min_size=0, max_size=8).map(" ".join)
text = st.lists(sentence, min_size=1, max_size=4).map("\n".join)
ALL_TYPES = ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]


@settings(max_examples=150, deadline=None)
@given(text, st.lists(text, min_size=1, max_size=3), st.booleans())
def test_random_texts_match_rouge_score(hyp, refs, use_stemmer):
    if not any(rouge_tokenize(r) for r in refs) or not all(rouge_tokenize(r) for r in refs):
        return  # markeval rejects references without tokens (rouge-score scores them 0)
    theirs = rouge_scorer.RougeScorer(ALL_TYPES, use_stemmer=use_stemmer).score_multi(refs, hyp)
    ours = rouge([hyp], [refs], ALL_TYPES, use_stemmer=use_stemmer)
    assert_same(ours, [theirs], ALL_TYPES)


# --- properties ---------------------------------------------------------------------------------

nonempty = st.lists(words, min_size=1, max_size=10).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(text, nonempty)
def test_bounds_and_rouge_l_symmetry(a, b):
    forward = rouge([a], [b], ALL_TYPES)
    for name in ALL_TYPES:
        for value in (forward[name].precision, forward[name].recall, forward[name].fmeasure):
            assert 0.0 <= value <= 1.0
    if rouge_tokenize(a):
        backward = rouge([b], [a], ["rougeL"])
        assert forward["rougeL"].precision == pytest.approx(backward["rougeL"].recall, abs=1e-15)


def test_any_n():
    r = rouge(["a b c d e f"], ["a b c d e x"], ["rouge5", "rouge6", "rouge12"])
    assert r["rouge5"].recall == 1 / 2 and r["rouge6"].recall == 0.0
    assert r["rouge12"].fmeasure == 0.0


def test_empty_hypothesis_scores_zero():
    r = rouge(["", "!!!"], ["a b", "a b"])
    assert r["rouge1"].fmeasures == (0.0, 0.0) and r["rougeLsum"].fmeasure == 0.0


def test_multi_ref_mean_averages_the_references():
    hyps, refs, _ = tac_2009()
    hyps, refs = hyps[:30], refs[:30]
    types = ["rouge2", "rougeLsum"]
    mean = rouge(hyps, refs, types, multi_ref="mean", use_stemmer=True)
    singles = [rouge(hyps, [r[k] for r in refs], types, use_stemmer=True) for k in range(4)]
    for t in types:
        expected = np.mean([s_[t].recalls for s_ in singles], axis=0)
        assert np.allclose(mean[t].recalls, expected, rtol=0, atol=1e-15)
        assert mean[t].best_reference is None
    assert "multi_ref:mean" in mean.signature


def test_means_and_types():
    r = rouge(["a b", "a c"], [["a b", "x"], "a b"], ["rouge1", "rougeL"])
    assert r.types == ("rouge1", "rougeL")
    assert r["rouge1"].fmeasures == (1.0, 0.5) and r["rouge1"].fmeasure == 0.75
    assert r["rouge1"].best_reference == (0, 0)
    assert r["rouge1"].low is None
    assert "tok:rouge-score" in r.signature and "stem:no" in r.signature


# --- tokenizers ---------------------------------------------------------------------------------

def test_rouge_score_tokenizer_deletes_non_ascii():
    assert rouge_tokenize("Der Bär läuft über die Straße") == [
        "der", "b", "r", "l", "uft", "ber", "die", "stra", "e"]
    assert rouge_tokenize("东京今天很热") == []
    with pytest.raises(ValueError, match="tokenize='unicode'"):
        rouge(["东京今天很热"], ["东京今天很冷"])


def test_unicode_tokenizer():
    assert rouge_tokenize("Der Bär läuft über die Straße", "unicode") == [
        "der", "bär", "läuft", "über", "die", "straße"]
    assert rouge_tokenize("东京今天很热", "unicode") == list("东京今天很热")
    assert rouge_tokenize("हिन्दी भाषा", "unicode") == ["हिन्दी", "भाषा"]  # virama kept
    assert rouge_tokenize("ﬁne CAFÉ", "unicode") == ["fine", "café"]  # NFKC, lower-case
    r = rouge(["东京今天很热"], ["东京今天很冷"], ["rouge1", "rouge2"], tokenize="unicode")
    assert r["rouge1"].recall == 5 / 6 and r["rouge2"].recall == 4 / 5


def test_callable_tokenizer():
    r = rouge(["A b"], ["a B"], ["rouge1"], tokenize=str.split)
    assert r["rouge1"].fmeasure == 0.0
    assert "tok:split" in r.signature


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, message", [
    (dict(types="rouge1"), TypeError, "not a single str"),
    (dict(types=()), ValueError, "at least one ROUGE type"),
    (dict(types=("rouge0",)), ValueError, "unknown ROUGE type 'rouge0'"),
    (dict(types=("rougeX",)), ValueError, "unknown ROUGE type"),
    (dict(types=("rouge1", "rouge1")), ValueError, "more than once"),
    (dict(use_stemmer="yes"), TypeError, "use_stemmer must be True or False"),
    (dict(multi_ref="max"), ValueError, "multi_ref must be one of"),
    (dict(tokenize="moses"), ValueError, "tokenize must be one of"),
    (dict(n_resamples=-1), ValueError, "n_resamples must be >= 0"),
    (dict(n_resamples=1.5), TypeError, "n_resamples must be an int"),
    (dict(n_resamples=10, confidence=1.5), ValueError, "confidence must be strictly between 0 and 1, got 1.5"),
    (dict(n_resamples=10, seed="x"), TypeError, "seed must be an int"),
    (dict(n_resamples=10, seed=2**32), ValueError, "seed must be < 2\\*\\*32"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        rouge(["a b"], ["a b"], **kwargs)


def test_bad_texts():
    with pytest.raises(TypeError, match="not a single str"):
        rouge("a b", ["a b"])
    with pytest.raises(ValueError, match="hypotheses is empty"):
        rouge([], [])
    with pytest.raises(ValueError, match="2 entries but there are 1 hypotheses"):
        rouge(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="transposed"):
        rouge(["a", "b", "c"], [["a", "b", "c"], ["a", "b", "c"]])
    with pytest.raises(TypeError, match=r"hypotheses\[1\] must be a str"):
        rouge(["a", 3], ["a", "b"])
    with pytest.raises(TypeError, match=r"references\[0\]\[1\] must be a str"):
        rouge(["a"], [["a", None]])
    with pytest.raises(ValueError, match=r"references\[0\]\[0\] has no tokens"):
        rouge(["a"], [""])
    with pytest.raises(ValueError, match=r"references\[0\] is an empty list"):
        rouge(["a"], [[]])
    with pytest.raises(TypeError, match="text must be a str"):
        rouge_tokenize(["a"])
    with pytest.raises(KeyError, match="was not computed"):
        rouge(["a"], ["a"], ["rouge1"])["rouge2"]


# --- Result protocol, shared interval, renamed keywords ---------------------------------------------


def test_results_follow_the_protocol():
    from markeval._result import MetricResult

    r = rouge(["the cat sat", "a dog"], ["the cat sat down", "a dog barked"], ["rougeL", "rouge1"],
              n_resamples=50)
    assert isinstance(r, MetricResult) and isinstance(r["rouge1"], MetricResult)
    assert r.score == r["rougeL"].fmeasure and r.item_scores == r["rougeL"].fmeasures
    t = r["rouge1"]
    assert t.score == t.fmeasure and t.signature == r.signature
    assert (t.interval.ci_low, t.interval.mid, t.interval.ci_high) == (
        t.low.fmeasure, t.mid.fmeasure, t.high.fmeasure)
    assert t.interval.n_resamples == 50 and t.interval.score == t.fmeasure
    assert rouge(["a b"], ["a b"], ["rouge1"])["rouge1"].interval is None


# --- the MoverScore authors' TAC ROUGE: pooled references, \w+ tokens, Snowball stems ---------

def test_pool_by_hand():
    # hypothesis unigrams: the x2, cat, sat, on, mat (6); matches 3 with each reference
    r = rouge(["the cat sat on the mat"], [["the cat sat", "a dog sat on a mat"]], ["rouge1"],
              multi_ref="pool")
    assert r["rouge1"].recall == 6 / 9 and r["rouge1"].precision == 6 / 12
    assert r["rouge1"].best_reference is None and "multi_ref:pool" in r.signature


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("a b c d e".split()), max_size=12).map(" ".join),
       st.lists(st.sampled_from("a b c d e".split()), min_size=1, max_size=12).map(" ".join))
def test_pool_of_one_reference_is_that_reference(hyp, ref):
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    pooled = rouge([hyp], [[ref]], types, multi_ref="pool")
    single = rouge([hyp], [ref], types)
    for t in types:
        assert pooled[t].pair(0) == single[t].pair(0)


def _authors_rouge_recall(summary: list[str], references: list[list[str]], n: int) -> float:
    """ROUGE-N recall as the MoverScore authors' webservice computes it, written from its
    description: NLTK's \\w+ tokenizer, Snowball stems, counts summed over the references."""
    from collections import Counter

    from nltk.stem.snowball import SnowballStemmer
    from nltk.tokenize import RegexpTokenizer

    tokenizer, stemmer = RegexpTokenizer(r"\w+"), SnowballStemmer("english")

    def grams(sentences):
        words = [stemmer.stem(w).lower() for s in sentences for w in tokenizer.tokenize(s)]
        return Counter(zip(*[words[i:] for i in range(n)])), max(len(words) - n + 1, 0)

    peer, _ = grams(summary)
    matches = total = 0
    for reference in references:
        counts, size = grams(reference)
        matches += sum(min(v, counts[g]) for g, v in peer.items())
        total += size
    return matches / total if total else 0.0


def test_pool_words_snowball_equals_the_authors_rouge_on_tac_2009():
    """Every judged TAC 2009 summary of 6 topics (354), ROUGE-1 and ROUGE-2, to 1e-12."""
    from markeval.datasets import load_tac

    topics = load_tac(2009)[:6]
    summaries = [(a.sentences, t.references) for t in topics for a in t.annotations]
    hyps = [" ".join(s) for s, _ in summaries]
    refs = [[" ".join(r) for r in refs] for _, refs in summaries]
    ours = rouge(hyps, refs, ["rouge1", "rouge2"], multi_ref="pool", tokenize="words",
                 use_stemmer=True, empty_reference="zero")
    for n in (1, 2):
        theirs = [_authors_rouge_recall(list(s), [list(r) for r in refs], n)
                  for s, refs in summaries]
        assert np.allclose(ours[f"rouge{n}"].recalls, theirs, rtol=0, atol=TOL)


def test_words_tokenizer():
    assert rouge_tokenize("Bär's gave_out 5,000!", "words") == ["bär", "s", "gave_out", "5", "000"]
    assert rouge_tokenize("Running dogs", "words", use_stemmer=True) == ["run", "dog"]
