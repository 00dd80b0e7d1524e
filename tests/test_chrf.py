"""Tests for chrF and chrF++: parity with sacrebleu 2.6.0 on every WMT17 system, variants,
several references, edge cases, property tests, the bootstrap and bad input.

Tolerance: sacrebleu parity is asserted to 1e-9 absolute on the 0-100 scale (the scoring
repeats sacrebleu's float operations in its order, and in practice agrees exactly); the
per-sentence statistics must be identical integers.

The per-sentence statistics of sacrebleu's chrF++ are counted once per WMT17 system (about
35 s: sacrebleu's counting is the slow part of this file). With one reference per sentence,
chrF's statistics are the first ``3 * 6`` columns of chrF++'s (the reference choice is the
only thing tying the orders together), and the default and ``eps_smoothing`` scores are two
functions of the same statistics; ``test_sacrebleu_public_calls_chrf_and_eps`` checks both
claims on sacrebleu's public calls.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF

from conftest import (assert_checked_by_options, assert_frozen_options,
                      assert_options_reach_every_entry_point, needs_wmt17)
from markeval.datasets import wmt17_pairs
from markeval.lexical.chrf import (
    SMALL,
    CHRFScore,
    CHRFStatistics,
    ChrFOptions,
    chrf,
    chrf_from_statistics,
    chrf_statistics,
    sentence_chrf,
    sentence_chrf_scores,
)
from markeval.resampling import bootstrap, resample_indices

TOL = 1e-9
CHARS = 6 * 3  # columns of the character orders (char_order=6)


def sacre(**kwargs) -> CHRF:
    return CHRF(**kwargs)


def sacre_corpus(metric: CHRF, rows: np.ndarray) -> float:
    """sacrebleu's corpus score of per-sentence statistics ``rows``."""
    return metric._compute_score_from_stats(rows.sum(axis=0).tolist()).score


def sacre_sentences(metric: CHRF, rows: np.ndarray) -> np.ndarray:
    """sacrebleu's sentence score of each row (what ``sentence_score`` computes)."""
    return np.array([metric._compute_f_score(row) for row in rows.tolist()])


def streams(references):
    """Our layout (references[i]: list) to sacrebleu's streams, None where one is missing."""
    width = max(len(r) for r in references)
    return [[r[k] if k < len(r) else None for r in references] for k in range(width)]


# --- The worked example and small cases ---------------------------------------------------------


def test_hand_counted_example():
    # "thecat" vs "thehat": unigrams 5 of 6 match, bigrams 3 of 5, trigrams 1 of 4.
    stats = chrf_statistics(["the cat"], ["the hat"], char_order=3)
    assert stats.matrix.tolist() == [[6, 6, 5, 5, 5, 3, 4, 4, 1]]
    expected = 100 * (5 / 6 + 3 / 5 + 1 / 4) / 3  # P = R, so F-beta = P for every beta
    assert chrf(["the cat"], ["the hat"], char_order=3).score == pytest.approx(expected)
    assert sentence_chrf("the cat", "the hat", char_order=3, beta=7).score == pytest.approx(
        expected)


def test_chrf_plus_plus_word_ngrams_split_punctuation():
    # Words: "Hello", ",", "world", "!" / "(hi" ")" (one mark split off the end first).
    stats = chrf_statistics(["Hello, world!"], ["Hello world !"], char_order=1, word_order=2)
    # char 1-grams: 12 v 11 (the hypothesis' comma has no partner); words: 4 v 3 unigrams
    # (Hello, world, ! match), bigrams: "Hello ," ", world" "world !" v "Hello world"
    # "world !" (1 match).
    assert stats.matrix.tolist() == [[12, 11, 11, 4, 3, 3, 3, 2, 1]]
    theirs = sacre(char_order=1, word_order=2)._extract_corpus_statistics(
        ["Hello, world!"], [["Hello world !"]])
    assert stats.matrix.tolist() == theirs
    # "(hi)" gives "(hi" and ")" (sacrebleu issue #124); "(hi" alone gives "(" and "hi".
    paren = chrf_statistics(["(hi) x"], ["(hi x"], char_order=1, word_order=1)
    assert paren.matrix[0, 3:].tolist() == [3, 3, 1]  # "(hi" ")" "x" v "(" "hi" "x"
    assert paren.matrix.tolist() == sacre(char_order=1, word_order=1)._extract_corpus_statistics(
        ["(hi) x"], [["(hi x"]])


def test_names_and_signatures():
    result = chrf(["a b c"], ["a b d"], word_order=2)
    assert isinstance(result, CHRFScore)
    assert result.name == "chrF2++" and str(result).startswith("chrF2++ = ")
    assert result.signature.startswith("chrF2++|nrefs:1|lowercase:no|eff:yes|nc:6|nw:2|space:no|")
    assert result.item_scores is None and CHRFScore.higher_is_better
    assert (result.char_order, result.word_order, result.beta) == (6, 2, 2)
    other = chrf(["a b c"], [["a b d", "a"]], beta=1, lowercase=True, eps_smoothing=True,
                 whitespace=True)
    assert other.signature.startswith("chrF1|nrefs:2|lowercase:yes|eff:no|nc:6|nw:0|space:yes|")
    varying = chrf(["a", "b"], [["a"], ["b", "c"]])
    assert "|nrefs:var|" in varying.signature
    # sacrebleu's own name of the variant
    assert sacre(word_order=2).corpus_score(["a b c"], [["a b d"]]).name == result.name


EDGE_CASES = [
    ("", "a reference"),
    ("a hypothesis", ""),
    ("", ""),
    ("   ", "x"),
    ("x", "   "),
    ("ab", "abc"),  # shorter than most orders
    ("abc", "ab"),  # the reference is: those orders count no hypothesis n-grams either
    ("a", "a"),
    ("a b", "b a"),
    ("aaaaaaa", "aaa"),
    ("Hello, world!", "hello world"),
    ("(a) b.", "(a b) ."),
    ("x.", "."),
    ("日本語のテキスト", "日本語テキスト"),
    ("tab\there\nnew line", "tab here new\u00a0line"),
]


@pytest.mark.parametrize("word_order", [0, 2])
@pytest.mark.parametrize("eps_smoothing", [False, True])
@pytest.mark.parametrize("whitespace", [False, True])
def test_edge_cases_match_sacrebleu(word_order, eps_smoothing, whitespace):
    kwargs = dict(word_order=word_order, eps_smoothing=eps_smoothing, whitespace=whitespace)
    metric = sacre(**kwargs)
    for hyp, ref in EDGE_CASES:
        theirs = metric.sentence_score(hyp, [ref]).score
        assert sentence_chrf(hyp, ref, **kwargs).score == pytest.approx(theirs, abs=TOL), (
            hyp, ref)
        theirs_stats = metric._extract_corpus_statistics([hyp], [[ref]])
        assert chrf_statistics([hyp], [ref], **kwargs).matrix.tolist() == theirs_stats
    hyps, refs = [h for h, _ in EDGE_CASES], [r for _, r in EDGE_CASES]
    assert chrf(hyps, refs, **kwargs).score == pytest.approx(
        metric.corpus_score(hyps, [refs]).score, abs=TOL)


def test_empty_and_identical():
    assert chrf([""], ["abc"]).score == 0.0
    assert chrf(["abc"], [""]).score == 0.0
    assert chrf([""], [""]).score == 0.0
    assert sentence_chrf("a", "a").score == 100.0  # only order 1 exists: effective order 1
    # eps smoothing averages over all six orders, five of them undefined
    assert sentence_chrf("a", "a", eps_smoothing=True).score == pytest.approx(100 / 6)


def test_beta_weighs_recall():
    # The hypothesis is a prefix of the reference: precision 1, recall low.
    short = [sentence_chrf("the cat", "the cat sat on the mat", beta=b).score for b in (1, 2, 3)]
    assert short[0] > short[1] > short[2]
    # chrF2 is not symmetric; chrF1 (the harmonic mean) is, with one reference.
    hyp, ref = "the cat sat", "the cat sat on the mat"
    assert sentence_chrf(hyp, ref).score != sentence_chrf(ref, hyp).score
    assert sentence_chrf(hyp, ref, beta=1).score == pytest.approx(
        sentence_chrf(ref, hyp, beta=1).score, abs=1e-12)
    # A float beta gives sacrebleu's numbers too (its factor beta**2 is then a float).
    assert sentence_chrf("a cat sat", "the cat sat down", beta=1.5).score == pytest.approx(
        sacre(beta=1.5).sentence_score("a cat sat", ["the cat sat down"]).score, abs=TOL)


# --- Several references -------------------------------------------------------------------------


def test_multiple_references_constructed():
    # The second reference is the hypothesis itself: chosen, score 100.
    assert sentence_chrf("the cat sat", ["a dog ran", "the cat sat"]).score == 100.0
    hyps = ["the cat sat on the mat", "a dog barked", "it rained"]
    refs = [["the cat is on the mat", "there is a cat on the mat"],
            ["the dog barked loudly", "a dog barked", "dogs bark"],
            ["it was raining"]]
    for kwargs in ({}, {"word_order": 2}, {"eps_smoothing": True, "word_order": 2},
                   {"beta": 1}):
        metric = sacre(**kwargs)
        theirs = metric._extract_corpus_statistics(hyps, streams(refs))
        ours = chrf_statistics(hyps, refs, **kwargs)
        assert ours.matrix.tolist() == theirs and ours.n_refs is None
        assert chrf(hyps, refs, **kwargs).score == pytest.approx(
            metric.corpus_score(hyps, streams(refs)).score, abs=TOL)
        for hyp, r in zip(hyps, refs):
            assert sentence_chrf(hyp, r, **kwargs).score == pytest.approx(
                metric.sentence_score(hyp, r).score, abs=TOL)


_tiny = st.text(alphabet="ab c", max_size=7)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_tiny, st.lists(_tiny, min_size=1, max_size=3)), min_size=1,
                max_size=6),
       st.booleans())
def test_multiple_references_random_match_sacrebleu(cases, eps):
    # A tiny alphabet makes equal sentence scores (ties between references) common:
    # sacrebleu keeps the first best reference.
    hyps = [h for h, _ in cases]
    refs = [r for _, r in cases]
    for word_order in (0, 2):
        metric = sacre(char_order=3, word_order=word_order, eps_smoothing=eps)
        ours = chrf_statistics(hyps, refs, char_order=3, word_order=word_order,
                               eps_smoothing=eps)
        assert ours.matrix.tolist() == metric._extract_corpus_statistics(hyps, streams(refs))


@needs_wmt17
def test_multiple_references_wmt17(wmt17):
    # Other systems' outputs as second and third references; and a varying number.
    refs, systems = wmt17["de-en"]
    names = sorted(systems)
    n = 300
    hyps = systems[names[0]][:n]
    multi = [[refs[i], systems[names[1]][i], systems[names[2]][i]] for i in range(n)]
    varying = [[refs[i]] + ([systems[names[1]][i]] if i % 2 else []) for i in range(n)]
    for references in (multi, varying):
        for word_order in (0, 2):
            metric = sacre(word_order=word_order)
            theirs = metric._extract_corpus_statistics(hyps, streams(references))
            ours = chrf_statistics(hyps, references, word_order=word_order)
            np.testing.assert_array_equal(ours.matrix, np.array(theirs))
            assert chrf_from_statistics(ours).score == pytest.approx(
                metric.corpus_score(hyps, streams(references)).score, abs=TOL)


# --- Parity with sacrebleu on every WMT17 system ----------------------------------------------


@pytest.fixture(scope="module")
def sacre_stats(wmt17):
    """sacrebleu's chrF++ statistics of a pair's systems, {system: shape (sentences, 24)}."""

    def of(pair):
        refs, systems = wmt17[pair]
        metric = sacre(word_order=2, references=[refs])
        return {name: np.array(metric._extract_corpus_statistics(hyps, None), dtype=np.int64)
                for name, hyps in systems.items()}

    return of


# `make test` checks every system of cs-en (4 systems); `make test-full` all seven pairs.
@needs_wmt17
@pytest.mark.parametrize("pair", [pytest.param(p, marks=() if p == "cs-en" else pytest.mark.slow)
                                  for p in wmt17_pairs()])
def test_sacrebleu_parity_every_wmt17_system(wmt17, sacre_stats, pair):
    # Every system of the pair, whole corpus: identical per-sentence statistics for chrF and
    # chrF++; corpus scores within 1e-9 with the default and with eps smoothing; every sentence
    # score (eps smoothing: every 7th) within 1e-9.
    metrics = {(w, eps): sacre(word_order=w, eps_smoothing=eps)
               for w in (0, 2) for eps in (False, True)}
    refs, systems = wmt17[pair]
    all_theirs = sacre_stats(pair)
    worst = 0.0
    for name, hyps in systems.items():
        theirs = all_theirs[name]
        for word_order in (0, 2):
            stats = chrf_statistics(hyps, refs, word_order=word_order)
            cols = theirs if word_order else theirs[:, :CHARS]
            np.testing.assert_array_equal(stats.matrix, cols, err_msg=f"{pair} {name}")
            for eps in (False, True):
                metric = metrics[word_order, eps]
                if eps:
                    stats = CHRFStatistics(**{**vars(stats), "eps_smoothing": True})
                corpus = chrf_from_statistics(stats).score - sacre_corpus(metric, cols)
                rows = slice(None, None, 1 + 6 * eps)  # eps: every 7th sentence (time)
                sentences = (stats.scores(stats.matrix[rows])
                             - sacre_sentences(metric, cols[rows]))
                worst = max(worst, abs(corpus), float(np.abs(sentences).max()))
    assert len(systems) >= 4
    assert worst <= TOL, worst
    print(f"\nchrF/chrF++ parity, {pair}: {len(systems)} systems, max |diff| {worst:.1e}")


@needs_wmt17
def test_sacrebleu_public_calls_chrf_and_eps(wmt17):
    # sacrebleu's public calls against ours: corpus_score on one cs-en system (chrF, and
    # chrF++ with eps smoothing), sentence_score on a sample of every pair (all four kinds).
    kinds = [{}, {"word_order": 2}, {"eps_smoothing": True},
             {"word_order": 2, "eps_smoothing": True}]
    refs, systems = wmt17["cs-en"]
    hyps = systems[sorted(systems)[0]]
    for kwargs in (kinds[0], kinds[3]):
        assert chrf(hyps, refs, **kwargs).score == pytest.approx(
            sacre(**kwargs).corpus_score(hyps, [refs]).score, abs=TOL)
    rng = random.Random(23)
    for pair, (refs, systems) in wmt17.items():
        hyps = systems[rng.choice(sorted(systems))]
        idx = rng.sample(range(len(refs)), 12)
        for kwargs in kinds:
            metric = sacre(**kwargs)
            for i in idx:
                assert sentence_chrf(hyps[i], refs[i], **kwargs).score == pytest.approx(
                    metric.sentence_score(hyps[i], [refs[i]]).score, abs=TOL)
        sub = [hyps[i] for i in idx]
        scores = sentence_chrf_scores(sub, [refs[i] for i in idx], word_order=2)
        assert np.allclose(scores, [sacre(word_order=2).sentence_score(h, [refs[i]]).score
                                    for h, i in zip(sub, idx)], atol=TOL, rtol=0)


@needs_wmt17
@pytest.mark.parametrize("variant", [{"lowercase": True, "word_order": 2},
                                     {"whitespace": True},
                                     {"whitespace": True, "lowercase": True, "word_order": 2,
                                      "eps_smoothing": True}])
def test_sacrebleu_variants_cs_en(wmt17, variant):
    # Every cs-en system, on its first 1500 sentences (the last variant: 500).
    refs, systems = wmt17["cs-en"]
    n = 500 if len(variant) > 2 else 1500
    metric = sacre(**variant, references=[refs[:n]])
    for name, hyps in systems.items():
        theirs = np.array(metric._extract_corpus_statistics(hyps[:n], None))
        stats = chrf_statistics(hyps[:n], refs[:n], **variant)
        np.testing.assert_array_equal(stats.matrix, theirs, err_msg=name)
        assert chrf_from_statistics(stats).score == pytest.approx(
            sacre_corpus(metric, theirs), abs=TOL)
        assert np.allclose(stats.scores(stats.matrix), sacre_sentences(metric, theirs),
                           atol=TOL, rtol=0)


@needs_wmt17
def test_counting_methods_agree(wmt17):
    # The three ways of counting (packed windows, dense renumbering, dicts for a few
    # sentences) give the same statistics.
    refs, systems = wmt17["zh-en"]
    hyps = systems[sorted(systems)[0]][:300]
    for word_order in (0, 2):
        counts = [chrf_statistics(hyps, refs[:300], word_order=word_order, _method=method).matrix
                  for method in ("packed", "general", "counter")]
        np.testing.assert_array_equal(counts[0], counts[1])
        np.testing.assert_array_equal(counts[0], counts[2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab c.(", max_size=12),
                          st.text(alphabet="ab c.(", max_size=12)), min_size=1, max_size=10),
       st.booleans())
def test_counting_methods_agree_on_random_text(pairs, whitespace):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    counts = [chrf_statistics(hyps, refs, char_order=4, word_order=2, whitespace=whitespace,
                              _method=method).matrix for method in ("packed", "general", "counter")]
    np.testing.assert_array_equal(counts[0], counts[1])
    np.testing.assert_array_equal(counts[0], counts[2])


@pytest.mark.parametrize("alphabet,char_order", [(900, 6), (5000, 6), (60, 12)])
def test_large_alphabets_and_orders_match_sacrebleu(alphabet, char_order):
    # 900 symbols: 10-bit symbols, the pairs are sorted in chunks; 5000 symbols, or order 12:
    # the keys do not fit in 63 bits and the general path counts.
    rng = random.Random(alphabet)
    chars = [chr(0x4E00 + i) for i in range(alphabet)]
    hyps, refs = [], []
    for _ in range(40):
        ref = "".join(rng.choice(chars[:300] if rng.random() < 0.5 else chars)
                      for _ in range(rng.randint(0, 30)))
        hyp = "".join(c for c in ref if rng.random() < 0.8) + rng.choice(chars) * 3
        hyps.append(hyp)
        refs.append(ref)
    metric = sacre(char_order=char_order)
    ours = chrf_statistics(hyps, refs, char_order=char_order)
    assert ours.matrix.tolist() == metric._extract_corpus_statistics(hyps, [refs])
    assert chrf(hyps, refs, char_order=char_order).score == pytest.approx(
        metric.corpus_score(hyps, [refs]).score, abs=TOL)


# --- Properties -----------------------------------------------------------------------------------


_sentence = st.text(alphabet=st.sampled_from(list("abcde .,!(") + ["ä", "\t"]), max_size=25)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_sentence, _sentence), min_size=1, max_size=6), st.randoms(),
       st.sampled_from([0, 1, 2]), st.booleans())
def test_properties(pairs, rnd, word_order, eps):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    kwargs = dict(word_order=word_order, eps_smoothing=eps)
    score = chrf(hyps, refs, **kwargs).score
    assert 0.0 <= score <= 100.0
    # parity with sacrebleu on arbitrary short text
    assert score == pytest.approx(sacre(**kwargs).corpus_score(hyps, [refs]).score, abs=TOL)
    # the order of the sentence pairs does not matter
    order = list(range(len(pairs)))
    rnd.shuffle(order)
    assert chrf([hyps[i] for i in order], [refs[i] for i in order], **kwargs).score == score
    # identical text scores 100 (default smoothing) when it has a non-space character
    if "".join(hyps).split():
        assert chrf(hyps, hyps, word_order=word_order).score == pytest.approx(100.0, abs=1e-9)
    else:
        assert chrf(hyps, hyps, word_order=word_order).score == 0.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), min_size=24, max_size=24), min_size=1,
                max_size=5),
       st.booleans(), st.sampled_from([1, 2, 0.5, 3.0]))
def test_scores_of_sums_match_sacrebleu(rows, eps, beta):
    # The vectorised scorer on arbitrary statistics (zeros included) against sacrebleu's.
    rows = np.array(rows, dtype=np.int64)
    rows[:, 2::3] = np.minimum(rows[:, 2::3], np.minimum(rows[:, 0::3], rows[:, 1::3]))
    stats = CHRFStatistics(rows, 6, 2, beta, False, False, eps, 1)
    metric = sacre(word_order=2, beta=beta, eps_smoothing=eps)
    theirs = sacre_sentences(metric, rows)
    assert np.allclose(stats.scores(rows), theirs, atol=TOL, rtol=0)  # a few rows: Python
    many = np.tile(rows, (SMALL, 1))  # numpy
    assert np.allclose(stats.scores(many), np.tile(theirs, SMALL), atol=TOL, rtol=0)


# --- Statistics, sentence scores, bootstrap ----------------------------------------------------


def test_statistics_take_and_sentence_scores():
    hyps = ["the cat sat on a mat", "a dog barked at me", "it rained all day long", ""]
    refs = ["the cat sat on the mat", "the dog barked at me", "it rained all day", "x"]
    stats = chrf_statistics(hyps, refs, word_order=2)
    assert len(stats) == 4 and stats.matrix.shape == (4, 24)
    assert stats.hyp_counts.shape == stats.ref_counts.shape == stats.matches.shape == (4, 8)
    part = stats.take([2, 0, 0])
    assert part.matrix.tolist() == stats.matrix[[2, 0, 0]].tolist()
    scores = sentence_chrf_scores(hyps, refs, word_order=2)
    assert len(scores) == 4 and scores.item_scores == scores.scores
    for i, (h, r) in enumerate(zip(hyps, refs)):
        assert scores[i] == sentence_chrf(h, r, word_order=2).score
        assert chrf_from_statistics(stats.take([i])).score == scores[i]
    assert scores.score == pytest.approx(np.mean(scores.scores))
    assert scores.signature == chrf(hyps, refs, word_order=2).signature


def test_bootstrap_is_percentiles_of_resampled_corpus_scores():
    hyps = ["the cat sat on a mat", "a dog barked at me", "it rained all day long",
            "we go home", "nothing here"]
    refs = ["the cat sat on the mat", "the dog barked at me", "it rained all day",
            "we went home", "something there"]
    stats = chrf_statistics(hyps, refs)
    ci = bootstrap(stats, n_resamples=300, confidence=0.9, seed=4)
    assert ci.score == chrf(hyps, refs).score
    indices = np.concatenate(list(resample_indices(len(stats), 300, seed=4)))
    values = [chrf_from_statistics(stats.take(row)).score for row in indices]
    low, high = np.quantile(values, [0.05, 0.95])
    assert ci.ci_low == pytest.approx(low, abs=1e-9)
    assert ci.ci_high == pytest.approx(high, abs=1e-9)
    assert ci.n_resamples == 300 and ci.seed == 4 and "|bootstrap:300|seed:4|" in ci.signature
    assert bootstrap(stats, n_resamples=300, confidence=0.9, seed=4) == ci


# --- Bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("call,exc,match", [
    (lambda: chrf("a cat", ["a cat"]), TypeError, "hypotheses"),
    (lambda: chrf(["a", "b"], ["a"]), ValueError, "references has 1 entries"),
    (lambda: chrf([], []), ValueError, "hypotheses is empty"),
    (lambda: chrf(["a"], [None]), TypeError, r"references\[0\]"),
    (lambda: chrf(["a"], [[]]), ValueError, r"references\[0\]"),
    (lambda: chrf([1], ["a"]), TypeError, r"hypotheses\[0\]"),
    (lambda: chrf(["a"], ["a"], char_order=0), ValueError, "char_order"),
    (lambda: chrf(["a"], ["a"], char_order=2.0), TypeError, "char_order"),
    (lambda: chrf(["a"], ["a"], word_order=-1), ValueError, "word_order"),
    (lambda: chrf(["a"], ["a"], beta=0), ValueError, "beta"),
    (lambda: chrf(["a"], ["a"], beta=-2), ValueError, "beta"),
    (lambda: chrf(["a"], ["a"], beta="2"), TypeError, "beta"),
    (lambda: chrf(["a"], ["a"], beta=float("nan")), ValueError, "beta"),
    (lambda: chrf(["a"], ["a"], lowercase="yes"), TypeError, "lowercase"),
    (lambda: chrf(["a"], ["a"], whitespace=1), TypeError, "whitespace"),
    (lambda: chrf(["a"], ["a"], eps_smoothing=None), TypeError, "eps_smoothing"),
    (lambda: sentence_chrf(["a"], "a"), TypeError, "hypothesis"),
    (lambda: sentence_chrf("a", [1]), TypeError, r"references\[0\]"),
    (lambda: sentence_chrf("a", []), ValueError, "references"),
    (lambda: sentence_chrf_scores(["a"], ["a"], lowercase="no"), TypeError, "lowercase"),
    (lambda: chrf_from_statistics([[1, 1, 1]]), TypeError, "CHRFStatistics"),
    (lambda: bootstrap("stats"), TypeError, "SufficientStatistics"),
    (lambda: bootstrap(chrf_statistics(["a"], ["a"]), n_resamples=0), ValueError,
     "n_resamples"),
    (lambda: chrf_statistics(["a"], ["a"]).scores(np.zeros((2, 5))), ValueError, "sums"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- Options ------------------------------------------------------------------------------------

OPTIONS = ChrFOptions(char_order=4, word_order=2, beta=1, lowercase=True, whitespace=True,
                      eps_smoothing=True)


def test_options_are_frozen_and_hashable():
    assert_frozen_options(OPTIONS)


@pytest.mark.parametrize("bad", [{"char_order": 0}, {"beta": "2"}, {"eps_smoothing": None}])
def test_a_bad_option_is_refused_by_the_options_alone(bad):
    assert_checked_by_options(ChrFOptions, bad, chrf, chrf_statistics, sentence_chrf,
                              lambda **o: sentence_chrf_scores(["a"], ["a"], **o))


def test_every_entry_point_scores_the_same_options_alike():
    hyps, refs = ["The cat sat.", "a dog"], [["the cat sat", "The cat sat!"], ["A dog barked"]]
    stats = assert_options_reach_every_entry_point(
        OPTIONS, hyps, refs, chrf, chrf_statistics, chrf_from_statistics, sentence_chrf)
    assert stats.options == OPTIONS and stats.signature == OPTIONS.signature(n_refs=None)
    scores = sentence_chrf_scores(hyps, refs, **dataclasses.asdict(OPTIONS))
    assert list(scores) == list(stats.item_scores())
