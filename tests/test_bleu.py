"""Tests for BLEU: the slides' and paper's examples, parity with sacrebleu 2.6.0 and NLTK 3.10
on WMT17, property tests, and bad input.

Tolerances: sacrebleu parity is asserted to 1e-9 absolute on the 0-100 scale (the
implementation repeats sacrebleu's float operations, and in practice agrees exactly);
the per-sentence statistics must be identical integers. NLTK parity is asserted to 1e-12
(relative and absolute) on NLTK's 0-1 scale: markeval reports 100x NLTK's value, and the
multiplication may move the last bit.
"""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate import bleu_score as nltk_bleu
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International

from conftest import (assert_checked_by_options, assert_frozen_options,
                      assert_options_reach_every_entry_point, needs_wmt17)
from markeval.datasets import load_wmt17, wmt17_pairs
from markeval.lexical.bleu import (
    BLEUOptions,
    BLEUScore,
    NGramReferences,
    bleu,
    bleu_from_statistics,
    bleu_statistics,
    sentence_bleu,
    sentence_bleu_scores,
)
from markeval.lexical import bleu as bleu_module
from markeval.resampling import bootstrap
from markeval.text import ngram_counts, ngrams, tokenize, tokenize_many

SACRE_TOL = 1e-9
NLTK_TOL = 1e-12
SACRE_SMOOTHING = ("none", "floor", "add-k", "exp")
NLTK_METHODS = tuple(f"nltk{k}" for k in range(8))

CAT_REFS = ["the cat is on the mat", "there is a cat on the mat"]



@pytest.fixture(scope="module")
def sample_lines(wmt17):
    """A fixed sample of (hypothesis, reference, second reference) triples from all pairs."""
    rng = random.Random(2017)
    triples = []
    for pair, (refs, systems) in wmt17.items():
        names = sorted(systems)
        for i in rng.sample(range(len(refs)), 20):
            a, b = rng.sample(names, 2)
            triples.append((systems[a][i], refs[i], systems[b][i]))
    return triples


# --- The slides' and the paper's examples ----------------------------------------------------


def test_modified_unigram_precision_slide():
    # Plain precision: every "the" appears in a reference, 7/7. Clipped: "the" occurs at most
    # twice in one reference, so 2/7. (The slide's "1/7 or 2/7": 1/7 would clip each
    # occurrence separately, per reference, which is not BLEU.)
    hyp = "the the the the the the the"
    plain = sum(1 for w in hyp.split() if any(w in r.split() for r in CAT_REFS))
    assert plain == 7
    result = sentence_bleu(hyp, CAT_REFS, smooth="none", tokenize="none")
    assert (result.counts[0], result.totals[0]) == (2, 7)
    assert result.precisions[0] == pytest.approx(100 * 2 / 7)
    assert result.score == 0.0  # no bigram matches: the geometric mean is 0


def test_slide_one_or_two_sevenths_is_a_matter_of_case():
    # With the references capitalised as on the slide ("The cat ..."), "the" occurs once per
    # reference case-sensitively (1/7) and twice in reference 1 once lower-cased (2/7, the
    # number Papineni et al. report). Clipping takes the max over references, never the sum.
    refs = ["The cat is on the mat", "There is a cat on the mat"]
    hyp = "the the the the the the the"
    assert sentence_bleu(hyp, refs, tokenize="none").counts[0] == 1
    assert sentence_bleu(hyp, refs, tokenize="none", lowercase=True).counts[0] == 2


def test_bigram_table_slide():
    hyp = "The cat the cat on the mat"
    refs = ["The cat is on the mat", "There is a cat on the mat"]
    result = sentence_bleu(hyp, refs, smooth="none", tokenize="none")
    assert (result.counts[1], result.totals[1]) == (4, 6)
    counts = ngram_counts(hyp.split(), 2, min_order=2)
    assert counts[("The", "cat")] == 1 and counts[("the", "cat")] == 1
    assert len(ngrams(hyp.split(), 2)) == 6


def test_papineni_2002_candidates():
    # Papineni et al. (2002), section 2.1: candidate 1 has modified unigram precision 17/18
    # and bigram 10/17; candidate 2 has 8/14 and 1/13 (final periods dropped).
    refs = [
        "It is a guide to action that ensures that the military will forever heed Party commands",
        "It is the guiding principle which guarantees the military forces always being under "
        "the command of the Party",
        "It is the practical guide for the army always to heed the directions of the party",
    ]
    c1 = ("It is a guide to action which ensures that the military always obeys the commands "
          "of the party")
    c2 = "It is to insure the troops forever hearing the activity guidebook that party direct"
    s1 = sentence_bleu(c1, refs, tokenize="none")
    s2 = sentence_bleu(c2, refs, tokenize="none")
    assert (s1.counts[:2], s1.totals[:2]) == ((17, 10), (18, 17))
    assert (s2.counts[:2], s2.totals[:2]) == ((8, 1), (14, 13))


def test_brevity_penalty_by_hand():
    result = sentence_bleu("a b c", "a b c d e f", smooth="none", tokenize="none")
    assert result.bp == pytest.approx(math.exp(1 - 6 / 3))
    assert (result.hyp_len, result.ref_len, result.ratio) == (3, 6, 0.5)
    assert bleu(["a b c d e f g"], ["a b c d e f"], tokenize="none").bp == 1.0


def test_closest_reference_length_ties_go_to_the_shorter():
    # Hypothesis of 5 tokens, references of 4 and 6: both 1 away, the shorter (4) counts.
    refs = ["a b c d e f", "a b c d"]
    ours = sentence_bleu("a b c d x", refs, tokenize="none")
    assert ours.ref_len == 4
    assert sacrebleu.sentence_bleu("a b c d x", refs, tokenize="none").ref_len == 4
    assert nltk_bleu.closest_ref_length([r.split() for r in refs], 5) == 4


def test_geometric_mean_by_hand():
    result = bleu(["a b c d e"], ["a b c d f"], smooth="none", tokenize="none")
    assert result.counts == (4, 3, 2, 1) and result.totals == (5, 4, 3, 2)
    by_hand = 100 * (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert result.score == pytest.approx(by_hand, abs=1e-12)


def test_identical_is_100_and_empty_hypothesis_is_0():
    assert bleu(["the cat is on the mat"], [CAT_REFS]).score == pytest.approx(100.0)
    empty = sentence_bleu("", CAT_REFS)
    assert empty.score == 0.0 and empty.hyp_len == 0 and empty.bp == 0.0
    corpus = bleu(["", "the cat is on the mat"], ["a b", CAT_REFS])
    assert 0.0 < corpus.score < 100.0


def test_result_is_frozen_with_plain_python_types():
    result = bleu(["the cat sat on the mat"], ["the cat sat on a mat"])
    assert isinstance(result, BLEUScore)
    for value in (result.score, result.bp, result.ratio, *result.precisions):
        assert type(value) is float
    for value in (result.hyp_len, result.ref_len, *result.counts, *result.totals):
        assert type(value) is int
    with pytest.raises(AttributeError):
        result.score = 0.0
    assert result.signature.startswith("bleu|nrefs:1|tok:13a|lowercase:no|smooth:exp|eff:no")
    assert str(result).startswith("BLEU = ")


def test_nltk6_corpus_quirk_exceeds_100():
    # NLTK's method6 divides the corpus-wide match count by the n-gram count of the *last*
    # sentence only, so corpus scores can exceed 1 (100 here).
    hyps = ["a b c d e f g h", "a b c d e f g h", "a b c d"]
    refs = ["a b c d e f g h", "a b c d e f g x", "a b c d"]
    ours = bleu(hyps, refs, smooth="nltk6", tokenize="none").score
    theirs = nltk_bleu.corpus_bleu(
        [[r.split()] for r in refs], [h.split() for h in hyps],
        smoothing_function=nltk_bleu.SmoothingFunction().method6,
    )
    assert ours / 100 == pytest.approx(theirs, rel=NLTK_TOL)
    assert ours > 100


# --- Tokenizers ------------------------------------------------------------------------------


@needs_wmt17
def test_tokenizers_match_sacrebleu_on_wmt17_lines(wmt17):
    rng = random.Random(13)
    lines = []
    for pair in wmt17_pairs():
        refs, systems = wmt17[pair]
        data = load_wmt17(pair)
        for i in rng.sample(range(len(refs)), 150):
            lines += [refs[i], systems[sorted(systems)[0]][i], data.sources[i]]
    for lowercase in (False, True):
        prepared = [(x.lower() if lowercase else x).rstrip() for x in lines]
        for name, theirs in (("13a", Tokenizer13a()), ("intl", TokenizerV14International())):
            expected = [tuple(theirs(x).split()) for x in prepared]
            assert tokenize_many(lines, name, lowercase=lowercase) == expected


# Pieces that exercise every rule: symbols, digits next to . , -, entities, line breaks.
_PIECES = list(" \t\n-.,;:!?&'\"$%/()[]{}<>09aZé€–—…«»\u00a0\u2028") + [
    "&quot;", "&amp;", "&lt;", "&gt;", "&apos;", "<skipped>", "-\n", "3.5", "1,000", "9-"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=20).map("".join), min_size=1,
                max_size=8))
def test_tokenizers_match_sacrebleu_on_random_text(texts):
    t13a, tintl = Tokenizer13a(), TokenizerV14International()
    assert tokenize_many(texts, "13a") == [tuple(t13a(x.rstrip()).split()) for x in texts]
    assert tokenize_many(texts, "intl") == [tuple(tintl(x.rstrip()).split()) for x in texts]
    assert tokenize_many(texts, "none") == [tuple(x.split()) for x in texts]


def test_tokenize_examples():
    assert tokenize("Hello, world!") == ["Hello", ",", "world", "!"]
    assert tokenize("It costs $3.50, not 4.") == ["It", "costs", "$", "3.50", ",", "not", "4", "."]
    assert tokenize("the cat &apos;s", "13a") == ["the", "cat", "&", "apos", ";", "s"]
    assert tokenize("A B", "none", lowercase=True) == ["a", "b"]


# --- Parity with sacrebleu on WMT17 -------------------------------------------------------------


def _sacre_scores(stats_sum, max_order=4):
    """sacrebleu's BLEU.compute_bleu for every smoothing x effective order, from its own sums."""
    out = {}
    for smooth in SACRE_SMOOTHING:
        for eff in (False, True):
            correct = list(stats_sum[2 : 2 + max_order])
            total = list(stats_sum[2 + max_order :])
            out[smooth, eff] = BLEU.compute_bleu(
                correct, total, int(stats_sum[0]), int(stats_sum[1]),
                smooth_method=smooth, effective_order=eff, max_ngram_order=max_order,
            )
    return out


def _check_against_sacrebleu(ours_stats, sacre_stats):
    ours = np.column_stack(
        [ours_stats.hyp_len, ours_stats.ref_len, ours_stats.counts, ours_stats.totals]
    )
    np.testing.assert_array_equal(ours, np.asarray(sacre_stats, dtype=np.int64))
    expected = _sacre_scores(np.asarray(sacre_stats).sum(axis=0).tolist())
    for (smooth, eff), theirs in expected.items():
        mine = bleu_from_statistics(ours_stats, smooth=smooth, effective_order=eff)
        assert mine.score == pytest.approx(theirs.score, abs=SACRE_TOL), (smooth, eff)
        assert mine.bp == pytest.approx(theirs.bp, abs=SACRE_TOL)
        assert mine.precisions == pytest.approx(theirs.precisions, abs=SACRE_TOL)
        assert (mine.hyp_len, mine.ref_len) == (theirs.sys_len, theirs.ref_len)


@needs_wmt17
def test_sacrebleu_parity_every_system_tokenize_none(wmt17):
    # Every into-English system file, whole corpus: identical per-sentence statistics and
    # identical corpus scores for every smoothing method with and without effective order.
    for pair, (refs, systems) in wmt17.items():
        metric = BLEU(tokenize="none", force=True, references=[refs])
        prepared = NGramReferences(refs, tokenize="none")
        for name, hyps in systems.items():
            sacre_stats = metric._extract_corpus_statistics(hyps, None)
            _check_against_sacrebleu(bleu_statistics(hyps, prepared), sacre_stats)


@needs_wmt17
def test_sacrebleu_parity_every_system_tokenize_13a(wmt17):
    # 13a tokenisation costs sacrebleu ~0.1 ms a line, so every system file is checked on a
    # fixed sample of 300 lines per pair (the same lines for all its systems).
    rng = random.Random(0)
    for pair, (refs, systems) in wmt17.items():
        idx = sorted(rng.sample(range(len(refs)), 300))
        sub_refs = [refs[i] for i in idx]
        metric = BLEU(tokenize="13a", force=True, references=[sub_refs])
        prepared = NGramReferences(sub_refs, tokenize="13a")
        for name, hyps in systems.items():
            sub = [hyps[i] for i in idx]
            sacre_stats = metric._extract_corpus_statistics(sub, None)
            _check_against_sacrebleu(bleu_statistics(sub, prepared), sacre_stats)


@needs_wmt17
def test_sacrebleu_corpus_bleu_end_to_end(wmt17):
    # The public functions, whole corpus, sacrebleu's default 13a: one system of de-en and
    # one of zh-en, plus lowercase and non-default smoothing values on de-en.
    for pair in ("de-en", "zh-en"):
        refs, systems = wmt17[pair]
        hyps = systems[sorted(systems)[0]]
        theirs = sacrebleu.corpus_bleu(hyps, [refs], force=True)
        ours = bleu(hyps, refs)
        assert ours.score == pytest.approx(theirs.score, abs=SACRE_TOL)
        assert ours.counts == tuple(theirs.counts) and ours.totals == tuple(theirs.totals)
    refs, systems = wmt17["de-en"]
    hyps = systems["uedin-nmt.4723"]
    for kwargs in ({"smooth": "floor", "smooth_value": 0.5}, {"smooth": "add-k", "smooth_value": 2}):
        theirs = sacrebleu.corpus_bleu(
            hyps, [refs], smooth_method=kwargs["smooth"], smooth_value=kwargs["smooth_value"],
            lowercase=True, tokenize="none",
        )
        ours = bleu(hyps, refs, lowercase=True, tokenize="none", **kwargs)
        assert ours.score == pytest.approx(theirs.score, abs=SACRE_TOL)


@needs_wmt17
def test_sacrebleu_multi_reference_and_variable_references(wmt17):
    refs, systems = wmt17["de-en"]
    names = sorted(systems)
    n = 600
    hyps = systems[names[0]][:n]
    multi = [[refs[i], systems[names[1]][i], systems[names[2]][i]] for i in range(n)]
    for tok in ("13a", "none"):
        theirs = sacrebleu.corpus_bleu(hyps, [list(s) for s in zip(*multi)], tokenize=tok,
                                       force=True)
        ours = bleu(hyps, multi, tokenize=tok)
        assert ours.score == pytest.approx(theirs.score, abs=SACRE_TOL)
        assert (ours.hyp_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
    # A varying number of references (sacrebleu: None in a stream).
    varying = [[refs[i]] + ([systems[names[1]][i]] if i % 2 else []) for i in range(n)]
    streams = [[r[0] for r in varying], [r[1] if len(r) > 1 else None for r in varying]]
    ours = bleu(hyps, varying)
    assert ours.score == pytest.approx(sacrebleu.corpus_bleu(hyps, streams).score, abs=SACRE_TOL)
    assert "nrefs:var" in ours.signature


@needs_wmt17
def test_sacrebleu_sentence_bleu_parity(sample_lines):
    # 140 sentences from all pairs, plus truncated (0-4 token) versions against two
    # references, so that zero counts, missing orders and the brevity penalty all occur.
    rng = random.Random(5)
    cases = []
    for hyp, ref, other in sample_lines:
        cases.append((hyp, [ref]))
        cases.append((" ".join(hyp.split()[: rng.randint(0, 4)]), [ref, other]))
    worst = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for hyp, refs in cases:
            for tok in ("13a", "none"):
                for smooth in SACRE_SMOOTHING:
                    for eff in (True, False):
                        theirs = sacrebleu.sentence_bleu(
                            hyp, refs, smooth_method=smooth, tokenize=tok,
                            use_effective_order=eff,
                        ).score
                        ours = sentence_bleu(hyp, refs, smooth=smooth, tokenize=tok,
                                             effective_order=eff).score
                        worst = max(worst, abs(ours - theirs))
    assert worst <= SACRE_TOL


# --- Parity with NLTK on WMT17 ------------------------------------------------------------------


@pytest.fixture
def memoised_nltk(monkeypatch):
    """NLTK recomputes the same clipped counts for every smoothing method; memoise its pure
    ``modified_precision`` (keyed by object identity of the token lists, which the test
    keeps alive) so that eight methods cost one pass. NLTK's own code still computes every
    value."""
    original = nltk_bleu.modified_precision
    memo = {}

    def cached(references, hypothesis, n):
        key = (id(references), id(hypothesis), n)
        if key not in memo:
            memo[key] = original(references, hypothesis, n)
        return memo[key]

    monkeypatch.setattr(nltk_bleu, "modified_precision", cached)
    return nltk_bleu


def _nltk(method, refs_tokens, hyps_tokens, sentence=False):
    smoothing = getattr(nltk_bleu.SmoothingFunction(), f"method{method}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # method0 warns about zero counts
        if sentence:
            return nltk_bleu.sentence_bleu(refs_tokens, hyps_tokens, smoothing_function=smoothing)
        return nltk_bleu.corpus_bleu(refs_tokens, hyps_tokens, smoothing_function=smoothing)


@needs_wmt17
def test_nltk_corpus_bleu_parity_each_method(wmt17, memoised_nltk):
    # One system of three pairs (whole corpus), then a corpus reversed: NLTK's methods 5-7
    # smooth with the last sentence, so the order matters and both orders must agree.
    for pair in ("cs-en", "de-en", "zh-en"):
        refs, systems = wmt17[pair]
        hyps = systems[sorted(systems)[-1]]
        prepared = NGramReferences(refs, tokenize="none")
        refs_tokens = [[r.split()] for r in refs]
        hyps_tokens = [h.split() for h in hyps]
        for method in range(8):
            ours = bleu(hyps, prepared, smooth=f"nltk{method}").score / 100
            theirs = _nltk(method, refs_tokens, hyps_tokens)
            assert ours == pytest.approx(theirs, rel=NLTK_TOL, abs=NLTK_TOL), (pair, method)
    refs, systems = wmt17["cs-en"]
    hyps = systems[sorted(systems)[0]][::-1]
    refs = refs[::-1]
    refs_tokens = [[r.split()] for r in refs]
    hyps_tokens = [h.split() for h in hyps]
    for method in (5, 6, 7):
        ours = bleu(hyps, refs, smooth=f"nltk{method}", tokenize="none").score / 100
        assert ours == pytest.approx(_nltk(method, refs_tokens, hyps_tokens), rel=NLTK_TOL)


@needs_wmt17
def test_nltk_sentence_bleu_parity_each_method(sample_lines):
    rng = random.Random(7)
    cases = []
    for hyp, ref, other in sample_lines:
        cases.append((hyp, [ref, other]))
        cases.append((" ".join(hyp.split()[: rng.randint(1, 5)]), [ref]))
    checked = 0
    for hyp, refs in cases:
        refs_tokens = [r.split() for r in refs]
        for method in range(8):
            try:
                theirs = _nltk(method, refs_tokens, hyp.split(), sentence=True)
            except AssertionError:  # method6 asserts a non-zero trigram precision
                with pytest.raises(ValueError, match="trigram"):
                    sentence_bleu(hyp, refs, smooth=f"nltk{method}", tokenize="none")
                continue
            ours = sentence_bleu(hyp, refs, smooth=f"nltk{method}", tokenize="none").score
            assert ours / 100 == pytest.approx(theirs, rel=NLTK_TOL, abs=NLTK_TOL), (hyp, method)
            checked += 1
    assert checked > 1700


def test_nltk_parity_other_orders_and_parameters():
    hyps = ["the cat sat on the mat today", "a dog", "it is what it is"]
    refs = [["the cat sat on a mat", "a cat sat on the mat today"], ["the dog"], ["it is"]]
    refs_tokens = [[r.split() for r in rs] for rs in refs]
    hyps_tokens = [h.split() for h in hyps]
    for order in (2, 3, 5):
        for method in (1, 2, 3, 4, 5, 7):
            theirs = nltk_bleu.corpus_bleu(
                refs_tokens, hyps_tokens, weights=(1 / order,) * order,
                smoothing_function=getattr(nltk_bleu.SmoothingFunction(), f"method{method}"),
            )
            ours = bleu(hyps, refs, max_order=order, smooth=f"nltk{method}", tokenize="none")
            assert ours.score / 100 == pytest.approx(theirs, rel=NLTK_TOL), (order, method)
    smoothing = nltk_bleu.SmoothingFunction(epsilon=0.3, alpha=2, k=3)
    for method, value in ((1, 0.3), (4, 3), (6, 2), (7, 3)):
        theirs = nltk_bleu.corpus_bleu(refs_tokens, hyps_tokens,
                                       smoothing_function=getattr(smoothing, f"method{method}"))
        ours = bleu(hyps, refs, smooth=f"nltk{method}", smooth_value=value, tokenize="none")
        assert ours.score / 100 == pytest.approx(theirs, rel=NLTK_TOL), method


# --- Statistics, sentence scores, bootstrap -----------------------------------------------------


@needs_wmt17
def test_statistics_route_equals_direct_calls(wmt17):
    refs, systems = wmt17["lv-en"]
    hyps = systems[sorted(systems)[0]]
    stats = bleu_statistics(hyps, refs)
    assert bleu_from_statistics(stats) == bleu(hyps, refs)
    prepared = NGramReferences(refs)
    assert bleu(hyps, prepared) == bleu(hyps, refs)
    scores = sentence_bleu_scores(stats)
    for i in range(0, len(hyps), 97):
        assert scores[i] == sentence_bleu(hyps[i], refs[i]).score
    nltk_scores = sentence_bleu_scores(bleu_statistics(hyps[:50], refs[:50], max_order=5,
                                                       tokenize="none"),
                                       smooth="nltk7", max_order=4)
    for i in range(50):
        assert nltk_scores[i] == sentence_bleu(hyps[i], refs[i], smooth="nltk7",
                                               tokenize="none").score


def test_bootstrap_is_seeded_and_brackets_the_score():
    rng = random.Random(3)
    words = "the a cat dog sat ran on under mat rug".split()
    refs = [" ".join(rng.choices(words, k=8)) for _ in range(60)]
    hyps = [" ".join(w if rng.random() < 0.7 else rng.choice(words) for w in r.split())
            for r in refs]
    stats = bleu_statistics(hyps, refs, tokenize="none")
    first = bootstrap(stats, n_resamples=300, seed=11)
    assert first == bootstrap(stats, n_resamples=300, seed=11)
    assert first != bootstrap(stats, n_resamples=300, seed=12)
    assert first.ci_low < first.score < first.ci_high
    assert first.score == bleu(hyps, refs, tokenize="none").score
    assert "bootstrap:300|seed:11" in first.signature
    # A replicate is the corpus score of resampled sentences.
    idx = np.random.default_rng(0).integers(0, len(hyps), len(hyps))
    resampled = bleu([hyps[i] for i in idx], [refs[i] for i in idx], tokenize="none")
    assert bleu_from_statistics(stats.take(idx)).score == resampled.score
    # NLTK's order-free methods bootstrap too (on NLTK's 0-100 equivalent scale).
    nltk3 = bootstrap(stats.with_scoring(smooth="nltk3"), n_resamples=50)
    assert nltk3.score == bleu(hyps, refs, tokenize="none", smooth="nltk3").score


# --- Properties ---------------------------------------------------------------------------------

_word = st.sampled_from("the a cat dog sat on mat rug is was big".split())
_sentence = st.lists(_word, min_size=0, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_sentence, _sentence, _sentence), min_size=1, max_size=8), st.randoms())
def test_permutation_invariance_and_bounds(rows, rnd):
    hyps = [r[0] for r in rows]
    refs = [[r[1], r[2]] for r in rows]
    for smooth in SACRE_SMOOTHING + ("nltk1", "nltk2", "nltk3", "nltk4"):
        score = bleu(hyps, refs, smooth=smooth, tokenize="none").score
        assert 0.0 <= score <= 100.0 + 1e-9
    for hyp, ref in zip(hyps, refs):
        assert 0.0 <= sentence_bleu(hyp, ref).score <= 100.0 + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_sentence, _sentence), min_size=1, max_size=6))
def test_random_corpora_match_sacrebleu(rows):
    hyps = [r[0] for r in rows]
    refs = [r[1] for r in rows]
    for smooth in SACRE_SMOOTHING:
        theirs = sacrebleu.corpus_bleu(hyps, [refs], smooth_method=smooth, tokenize="none")
        assert bleu(hyps, refs, smooth=smooth, tokenize="none").score == pytest.approx(
            theirs.score, abs=SACRE_TOL)


# --- One scoring function: every BLEU score from sums, bit for bit sacrebleu's ----------------

# (smooth, smooth_value) pairs, defaults resolved as BLEUScoring holds them.
_SACRE_SETTINGS = (("none", None), ("exp", None), ("floor", 0.1), ("floor", 0.5), ("floor", 0),
                   ("add-k", 1), ("add-k", 0), ("add-k", 2), ("add-k", 0.5))
_STORED = 5  # orders in the random rows; max_order scores the first 1..5 of them
# Random rows need not come from text: small counts make zeros common (and counts above
# totals, matches without n-grams, orders without n-grams before orders with), large ones
# corpus-sized sums.
_stat = st.one_of(st.integers(0, 4), st.integers(0, 100_000))
_row = st.tuples(_stat, _stat, st.lists(_stat, min_size=_STORED, max_size=_STORED),
                 st.lists(_stat, min_size=_STORED, max_size=_STORED))
# (sys_len, ref_len, counts, totals) rows that every example scores too.
_EDGE_ROWS = (
    (0, 0, [0] * 5, [0] * 5),                    # empty hypothesis and reference: BP 1
    (0, 7, [0] * 5, [0] * 5),                    # empty hypothesis: BP 0
    (3, 9, [0] * 5, [3, 2, 1, 0, 0]),            # no match: score 0 and every precision 0
    (2, 5, [1, 1, 0, 0, 0], [2, 1, 0, 0, 0]),    # too short for 3-grams (effective order 2)
    (1, 1, [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]),    # one token: add-k smooths orders 2+ anyway
    (4, 4, [0, 2, 0, 0, 0], [4, 3, 2, 1, 0]),    # no unigram match but bigram ones
    (0, 3, [2, 0, 0, 0, 0], [0, 0, 0, 0, 0]),    # matches, no n-grams (t == 0 at order 1)
    (5, 5, [3, 1, 2, 0, 0], [5, 0, 3, 2, 1]),    # n-grams again after an order without
    (9, 4, [9, 8, 7, 6, 5], [9, 8, 7, 6, 5]),    # perfect and long: BP 1, score 100
)


def _matrix(rows, dtype=np.int64):
    """Rows in BLEUStatistics.matrix layout: lengths, counts, totals, max(1, totals)."""
    return np.array([[h, r, *c, *t, *(max(1, x) for x in t)] for h, r, c, t in rows],
                    dtype=dtype)


def _sacrebleu(row, max_order, smooth, value, effective, dtype=None):
    """sacrebleu's compute_bleu on one (sys_len, ref_len, counts, totals) row; ``dtype``
    np.float32 hands it float32 arrays, as its paired bootstrap does."""
    h, r, c, t = row
    c, t = list(c[:max_order]), list(t[:max_order])  # compute_bleu adds add-k's k in place
    if dtype is not None:
        c, t = np.array(c, dtype=dtype), np.array(t, dtype=dtype)
    return BLEU.compute_bleu(c, t, h, r, smooth_method=smooth, smooth_value=value,
                             effective_order=effective, max_ngram_order=max_order)


@settings(max_examples=300, deadline=None)
@given(st.lists(_row, min_size=0, max_size=8), st.integers(1, _STORED),
       st.sampled_from(_SACRE_SETTINGS), st.booleans())
def test_the_scoring_function_is_sacrebleus_bit_for_bit(rows, max_order, setting, effective):
    rows = list(rows) + list(_EDGE_ROWS)
    smooth, value = setting
    for dtype, float32 in ((np.int64, False), (np.float32, True)):
        scores, precisions, bp = bleu_module._scores_from_sums(
            _matrix(rows, dtype), max_order, smooth, value, effective, float32=float32)
        assert precisions.shape == (len(rows), max_order)
        for i, row in enumerate(rows):
            theirs = _sacrebleu(row, max_order, smooth, value, effective,
                                np.float32 if float32 else None)
            assert scores[i] == theirs.score, (row, float32)
            assert precisions[i].tolist() == [float(p) for p in theirs.precisions], (row, float32)
            assert bp[i] == theirs.bp, (row, float32)


def _assert_sacrebleu_scores(hyps, refs, tokenize):
    """Corpus and sentence BLEU through the statistics equal sacrebleu's metric objects."""
    stats = bleu_statistics(hyps, refs, tokenize=tokenize)
    streams = [list(s) for s in zip(*refs)]
    for smooth, value in _SACRE_SETTINGS:
        for effective in (False, True):
            metric = BLEU(tokenize=tokenize, smooth_method=smooth, smooth_value=value,
                          effective_order=effective)
            theirs = metric.corpus_score(hyps, streams)
            ours = bleu_from_statistics(stats, smooth=smooth, smooth_value=value,
                                        effective_order=effective)
            assert (ours.score, list(ours.precisions), ours.bp) == (
                theirs.score, theirs.precisions, theirs.bp), (smooth, value, effective)
            sentences = sentence_bleu_scores(stats, smooth=smooth, smooth_value=value,
                                             effective_order=effective)
            assert list(sentences) == [metric.sentence_score(h, list(r)).score
                                       for h, r in zip(hyps, refs)], (smooth, value, effective)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_sentence, _sentence, _sentence), min_size=1, max_size=6))
def test_random_sentences_score_as_sacrebleu_bit_for_bit(rows):
    _assert_sacrebleu_scores([r[0] for r in rows], [(r[1], r[2]) for r in rows], "none")


@needs_wmt17
def test_wmt17_sentences_score_as_sacrebleu_bit_for_bit(sample_lines):
    # Whole sentences and 0-4 token prefixes, so that missing orders and zero matches occur.
    rng = random.Random(61)
    hyps = [h for h, _, _ in sample_lines]
    hyps += [" ".join(h.split()[: rng.randint(0, 4)]) for h in hyps]
    refs = [(r, o) for _, r, o in sample_lines] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_sacrebleu_scores(hyps, refs, "13a")


def _spied(monkeypatch):
    """Count the calls of the one scoring function."""
    calls = []
    real = bleu_module._scores_from_sums

    def spy(*args, **kwargs):
        calls.append(args[0].shape[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(bleu_module, "_scores_from_sums", spy)
    return calls


@pytest.mark.parametrize("smooth", SACRE_SMOOTHING + ("nltk3", "nltk7"))
def test_corpus_sentence_and_resample_scores_share_one_function(smooth, monkeypatch):
    rng = random.Random(7)
    words = "the a cat dog sat ran on under mat rug".split()
    refs = [" ".join(rng.choices(words, k=rng.randint(1, 9))) for _ in range(40)]
    hyps = [" ".join(w if rng.random() < 0.6 else rng.choice(words) for w in r.split()[:
             rng.randint(0, 9)]) for r in refs]
    stats = bleu_statistics(hyps, refs, tokenize="none", smooth=smooth)
    calls = _spied(monkeypatch)
    corpus = stats.corpus_score()
    items = stats.item_scores()
    assert corpus == bleu(hyps, refs, tokenize="none", smooth=smooth).score
    assert items[3] == sentence_bleu(hyps[3], refs[3], tokenize="none", smooth=smooth).score
    # One call each: the corpus (one row), the sentences (one vectorised call), and the two
    # direct calls.
    assert calls == [1, len(hyps), 1, 1]
    if smooth == "nltk7":  # needs the last sentence, which scores() of sums does not have
        return
    assert stats.scores(stats.matrix.sum(axis=0, keepdims=True)).tolist() == [corpus]
    # scores() scores a corpus (effective order off by default), item_scores() sentences
    # (BLEUScoring.effective(True): on by default): the same function, each setting.
    for effective in ((None, True, False) if smooth in SACRE_SMOOTHING else (None,)):
        scored = stats.with_scoring(effective_order=effective)
        sentences = scored.with_scoring(effective_order=scored.scoring.effective(True))
        assert sentences.scores(stats.matrix).tolist() == scored.item_scores().tolist()
    assert bootstrap(stats, n_resamples=5).n_resamples == 5
    assert calls[-1] == 5  # the resamples: one call, one row each


# --- Bad input ----------------------------------------------------------------------------------


def test_transposed_reference_layout_is_rejected():
    hyps = ["a b", "c d", "e f"]
    sacrebleu_layout = [["a b", "c d", "e f"]]
    with pytest.raises(ValueError, match="transposed"):
        bleu(hyps, sacrebleu_layout)
    with pytest.raises(ValueError, match="transposed"):
        bleu(hyps, NGramReferences(sacrebleu_layout))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: bleu([], []), ValueError, "hypotheses is empty"),
        (lambda: bleu("a b c", ["a b c"]), TypeError, "not a single str"),
        (lambda: bleu(["a", 3], ["a", "b"]), TypeError, r"hypotheses\[1\] must be a str"),
        (lambda: bleu(["a"], [["a", None]]), TypeError, r"references\[0\]\[1\] must be a str"),
        (lambda: bleu(["a"], [[]]), ValueError, r"references\[0\] is an empty list"),
        (lambda: bleu(["a", "b"], ["a"]), ValueError, "1 entries but there are 2"),
        (lambda: sentence_bleu(["a"], ["a"]), TypeError, "hypothesis must be a str"),
        (lambda: bleu(["a"], ["a"], smooth="laplace"), ValueError, "unknown smooth"),
        (lambda: bleu(["a"], ["a"], smooth="exp", smooth_value=1), ValueError, "no smooth_value"),
        (lambda: bleu(["a"], ["a"], smooth="floor", smooth_value=-1), ValueError, ">= 0"),
        (lambda: bleu(["a"], ["a"], smooth="nltk1", effective_order=True), ValueError,
         "effective_order"),
        (lambda: bleu(["a"], ["a"], tokenize="moses"), ValueError, "tokenize must be one of"),
        (lambda: bleu(["a"], ["a"], max_order=0), ValueError, "max_order"),
        (lambda: bleu(["a"], NGramReferences(["a"]), tokenize="none"), ValueError, "conflicts"),
        (lambda: sentence_bleu("a b", "a c", smooth="nltk6"), ValueError, "trigram"),
        (lambda: bootstrap(bleu_statistics(["a"], ["a"], smooth="nltk5")),
         ValueError, "order of sentences"),
        (lambda: bleu_from_statistics(bleu_statistics(["a"], ["a"]), smooth="nltk5"),
         ValueError, "needs statistics up to order 5, but these stop at 4"),
        (lambda: bleu_from_statistics("stats"), TypeError, "BLEUStatistics"),
        (lambda: bootstrap(bleu_statistics(["a"], ["a"]), confidence=1.0), ValueError,
         "strictly between"),
        (lambda: bootstrap(bleu_statistics(["a"], ["a"]), n_resamples=0), ValueError,
         "n_resamples must be a positive int, got 0"),
    ],
)
def test_bad_input_raises_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- Result protocol, shared bootstrap ------------------------------------------------------------


def _toy_stats():
    hyps = ["the cat sat on a mat", "a dog barked at me", "it rained all day long"]
    refs = ["the cat sat on the mat", "the dog barked at me", "it rained all day"]
    return bleu_statistics(hyps, refs)


def test_results_follow_the_protocol():
    from markeval._result import MetricResult
    from markeval.resampling import BootstrapResult

    stats = _toy_stats()
    corpus = bleu_from_statistics(stats)
    assert isinstance(corpus, MetricResult) and corpus.higher_is_better
    assert corpus.item_scores is None
    per_sentence = sentence_bleu_scores(stats)
    assert isinstance(per_sentence, MetricResult)
    assert per_sentence.item_scores == tuple(per_sentence) and len(per_sentence) == 3
    assert per_sentence.score == pytest.approx(np.mean(np.asarray(per_sentence)), abs=1e-12)
    assert per_sentence.signature == sentence_bleu("a b", "a b").signature
    ci = bootstrap(stats, n_resamples=50)
    assert isinstance(ci, BootstrapResult) and isinstance(ci, MetricResult)
    assert ci.ci_low <= ci.mid <= ci.ci_high
    assert ci.n_resamples == 50 and ci.seed == 0 and ci.item_scores is None


def test_bootstrap_equals_a_loop_over_resampled_corpora():
    """The shared bootstrap draws default_rng(seed).integers(0, n, n) per replicate."""
    stats = _toy_stats()
    ci = bootstrap(stats, n_resamples=20, seed=4, confidence=0.8)
    rng = np.random.default_rng(4)
    scores = [bleu_from_statistics(stats.take(rng.integers(0, len(stats), len(stats)))).score
              for _ in range(20)]
    low, high = np.quantile(scores, [0.1, 0.9])
    assert (ci.ci_low, ci.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert ci.mean == pytest.approx(np.mean(scores), abs=1e-9)


# --- The char and zh tokenizers (sacrebleu's, no downloaded model) -----------------------------

ZH_TEXTS = [
    "猫坐在垫子上。It's 3.5m.",
    "我们在2017年去了北京，天气很好！",
    "  他说：“你好，世界。” ",
    "他的电话是 123-456，价格 $3.50。",
    "今天下午三点，我们在图书馆见面。",
    "这本书的作者是一位年轻的女作家。",
    "人工智能正在改变我们的生活方式",
    ".5 前面有一个点",
    "日本語のテキストも、ひらがな混じり。",
    "ｆｕｌｌ　ｗｉｄｔｈ ＡＢＣ，数学：α+β=γ → 结果…",
    "Hello, World! &quot;quoted&quot; x.y,z 1,000.5 5-4",
]


def test_zh_character_ranges_are_sacrebleus():
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    from markeval.text import _ZH_CHARS

    mismatched = [cp for cp in range(0x30000) if not 0xD800 <= cp < 0xE000
                  and TokenizerZh._is_chinese_char(chr(cp)) != bool(_ZH_CHARS.fullmatch(chr(cp)))]
    assert mismatched == []


@pytest.mark.parametrize("name", ["zh", "char"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_char_and_zh_tokenizers_match_sacrebleu(name, lowercase):
    from sacrebleu.tokenizers.tokenizer_char import TokenizerChar
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    theirs = TokenizerZh() if name == "zh" else TokenizerChar()
    for text in ZH_TEXTS + CAT_REFS:
        prepared = (text.lower() if lowercase else text).rstrip()
        expected = tuple(theirs(prepared).split())
        assert tokenize_many([text], name, lowercase=lowercase)[0] == expected, text


@pytest.mark.parametrize("name", ["zh", "char"])
def test_char_and_zh_bleu_match_sacrebleu(name):
    hyps = ZH_TEXTS
    refs = ["猫坐在垫子上面。It is 3.5 m.", "我们2017年去了北京，天气很好。", "他说：“世界你好。”",
            "他的电话号码是123-456，价格为 $3.50。", "今天三点我们在图书馆见面。",
            "这本书的作者是年轻女作家。", "人工智能改变了我们的生活方式", "前面有一个点",
            "日本語のテキスト、ひらがな混じり。", "full width ABC，数学：α+β=γ", "Hello World!"]
    expected = sacrebleu.corpus_bleu(hyps, [refs], tokenize=name)
    ours = bleu(hyps, refs, tokenize=name)
    assert ours.score == pytest.approx(expected.score, abs=SACRE_TOL)
    assert list(ours.counts) == list(expected.counts)
    assert ours.signature.split("|")[2] == f"tok:{name}"
    for h, r in zip(hyps, refs):
        assert sentence_bleu(h, [r], tokenize=name).score == pytest.approx(
            sacrebleu.sentence_bleu(h, [r], tokenize=name).score, abs=SACRE_TOL)


def test_model_tokenizers_are_refused_by_name():
    for name in ("ja-mecab", "ko-mecab", "flores101", "flores200", "spm"):
        with pytest.raises(ValueError, match="tokenize"):
            bleu(["a"], ["a"], tokenize=name)


# --- NLTK's weights -------------------------------------------------------------------------------

WEIGHTS = [(0.333, 0.333, 0.334), (0.5, 0.5), (0.25,) * 4, (1.0,), (0.1, 0.2, 0.3, 0.2, 0.2),
           (0.7, 0.3, 0.0, 0.0), (2, -1)]


@needs_wmt17
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("method", range(8))
def test_weights_match_nltk(weights, method):
    if method == 6 and len(weights) < 3:
        pytest.skip("NLTK's method6 needs three orders")
    data = load_wmt17("de-en")
    hyps, refs = list(data.systems["KIT.4951"])[:300], list(data.references)[:300]
    smoothing = getattr(nltk_bleu.SmoothingFunction(), f"method{method}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = nltk_bleu.corpus_bleu([[r.split()] for r in refs], [h.split() for h in hyps],
                                         weights=weights, smoothing_function=smoothing)
        ours = bleu(hyps, refs, weights=weights, smooth=f"nltk{method}", tokenize="none")
        assert ours.score / 100 == pytest.approx(expected, rel=NLTK_TOL, abs=NLTK_TOL)
        assert len(ours.counts) == len(weights)
        for h, r in zip(hyps[:20], refs[:20]):
            want = nltk_bleu.sentence_bleu([r.split()], h.split(), weights=weights,
                                           smoothing_function=smoothing)
            got = sentence_bleu(h, [r], weights=weights, smooth=f"nltk{method}", tokenize="none")
            assert got.score / 100 == pytest.approx(want, rel=NLTK_TOL, abs=NLTK_TOL)


def test_uniform_weights_are_the_default():
    refs = [CAT_REFS]
    hyp = ["the cat the cat on the mat"]
    plain = bleu(hyp, refs, smooth="nltk1")
    weighted = bleu(hyp, refs, smooth="nltk1", weights=(0.25,) * 4)
    assert plain.score == weighted.score
    assert "weights:0.25,0.25,0.25,0.25" in weighted.signature
    stats = bleu_statistics(hyp, refs)
    assert bleu_from_statistics(stats, smooth="nltk1", weights=(0.5, 0.5)).score == bleu(
        hyp, refs, smooth="nltk1", weights=(0.5, 0.5)).score


def test_nltk_zero_overlap_warning_is_an_option():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sentence_bleu("a b c", ["a b d"], smooth="nltk0", tokenize="none")  # silent by default
    with pytest.warns(UserWarning) as caught:
        sentence_bleu("a b c", ["a b d"], smooth="nltk0", tokenize="none", warn=True)
    with pytest.warns(UserWarning) as nltk_caught:
        nltk_bleu.sentence_bleu([["a", "b", "d"]], ["a", "b", "c"])
    assert [str(w.message) for w in caught] == [str(w.message) for w in nltk_caught]


@pytest.mark.parametrize("kwargs, match", [
    ({"weights": (0.5, 0.5)}, "NLTK's option"),
    ({"weights": (), "smooth": "nltk1"}, "non-empty"),
    ({"weights": "0.5", "smooth": "nltk1"}, "weights"),
    ({"weights": ((0.5, 0.5), (1.0,)), "smooth": "nltk1"}, "several weightings"),
    ({"weights": (0.5, float("nan")), "smooth": "nltk1"}, "finite"),
    ({"weights": (0.5, 0.5), "smooth": "nltk1", "max_order": 4}, "len\\(weights\\)=2"),
    ({"warn": "yes", "smooth": "nltk0"}, "warn"),
])
def test_bad_weights_are_named(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bleu(["a b c"], ["a b c"], **kwargs)


# --- Options ------------------------------------------------------------------------------------

OPTIONS = BLEUOptions(max_order=3, smooth="floor", tokenize="none", lowercase=True)


def test_options_are_frozen_and_hashable():
    assert_frozen_options(OPTIONS)
    assert BLEUOptions(smooth="nltk1", weights=[0.5, 0.5]).weights == (0.5, 0.5)  # hashable


@pytest.mark.parametrize("bad", [{"smooth": "laplace"}, {"max_order": 0}, {"lowercase": "yes"},
                                 {"smooth": "exp", "smooth_value": 1}, {"tokenize": "moses"}])
def test_a_bad_option_is_refused_by_the_options_alone(bad):
    assert_checked_by_options(BLEUOptions, bad, bleu, bleu_statistics, sentence_bleu)


def test_every_entry_point_scores_the_same_options_alike():
    hyps, refs = ["The cat sat on it", "a dog"], [["the cat sat on", "A cat sat"], ["a dog ran"]]
    stats = assert_options_reach_every_entry_point(
        OPTIONS, hyps, refs, bleu, bleu_statistics, bleu_from_statistics, sentence_bleu)
    assert list(sentence_bleu_scores(stats)) == list(stats.item_scores())
    rescored = bleu_statistics(hyps, refs, tokenize="none").with_scoring(max_order=3,
                                                                         smooth="floor")
    assert stats.scoring == OPTIONS.scoring == rescored.scoring
