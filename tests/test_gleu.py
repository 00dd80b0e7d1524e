"""Tests for GLEU: hand-computed examples, parity with NLTK 3.10 on WMT17, properties, bad input.

Tolerance: markeval reports GLEU on a 0-100 scale; ``score / 100`` must match NLTK's
``corpus_gleu``/``sentence_gleu`` to 1e-12 absolute (the same integer counts are divided,
only the scaling by 100 may move the last bit).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.gleu_score import corpus_gleu as nltk_corpus_gleu
from nltk.translate.gleu_score import sentence_gleu as nltk_sentence_gleu

from conftest import (assert_checked_by_options, assert_frozen_options,
                      assert_options_reach_every_entry_point, needs_wmt17)
from markeval.lexical.gleu import (
    GLEUOptions,
    GLEUScore,
    NGramReferences,
    gleu,
    gleu_from_statistics,
    gleu_statistics,
    sentence_gleu,
    sentence_gleu_scores,
)

NLTK_TOL = 1e-12



# --- Hand-computed examples ------------------------------------------------------------------


def test_gleu_is_min_of_precision_and_recall_by_hand():
    # Hypothesis: 7 tokens -> 7+6+5+4 = 22 n-grams; reference: 6 tokens -> 18 n-grams.
    # Matches (clipped): unigrams the x2, cat, on, mat = 5; bigrams "the cat", "on the",
    # "the mat" = 3; trigram "on the mat" = 1; no 4-gram: 9 in all. GLEU = 9 / max(22, 18).
    result = sentence_gleu("the cat the cat on the mat", "the cat is on the mat",
                           tokenize="none")
    assert (result.matches, result.hyp_ngrams, result.ref_ngrams, result.total) == (9, 22, 18, 22)
    assert result.score == pytest.approx(100 * 9 / 22)
    assert result.score == pytest.approx(100 * min(9 / 22, 9 / 18))


def test_short_hypothesis_loses_recall_not_precision():
    # "the cat" is a perfect prefix: precision 3/3, but the reference has 18 n-grams.
    result = sentence_gleu("the cat", "the cat is on the mat", tokenize="none")
    assert (result.matches, result.total) == (3, 18)


def test_best_reference_is_chosen_first_on_ties():
    # Two references give the same ratio: the first is kept (NLTK's max()).
    stats = gleu_statistics(["a b c"], [["a b x", "a b y"]], tokenize="none")
    assert stats.matches.tolist() == [3] and stats.ref_ngrams.tolist() == [6]
    better_second = gleu_statistics(["a b c"], [["x y z", "a b c"]], tokenize="none")
    assert better_second.matches.tolist() == [6]


def test_corpus_gleu_is_not_the_mean_of_sentence_gleu():
    hyps = ["a b c d e f g h", "x"]
    refs = ["a b c d e f g h", "y"]
    corpus = gleu(hyps, refs, tokenize="none")
    sentences = [sentence_gleu(h, r, tokenize="none").score for h, r in zip(hyps, refs)]
    assert corpus.score == pytest.approx(100 * 26 / 27)  # 26 matches of 26 + 1 n-grams
    assert np.mean(sentences) == pytest.approx(50.0)


def test_min_and_max_len():
    result = sentence_gleu("a b c", "a b d", min_len=2, max_len=3, tokenize="none")
    assert (result.matches, result.total) == (1, 3)  # bigrams a b|b c, trigram a b c


def test_empty_inputs_score_zero_without_crashing():
    assert sentence_gleu("", "a b c").score == 0.0
    assert sentence_gleu("", "").score == 0.0  # no n-grams anywhere: 0, as NLTK
    assert gleu(["", "a b"], ["", "a b"], tokenize="none").score == 100.0
    assert sentence_gleu("a", "a", min_len=2).total == 0


def test_result_type_and_signature():
    result = gleu(["the cat sat"], ["the cat sat"])
    assert isinstance(result, GLEUScore)
    assert type(result.score) is float and type(result.matches) is int
    assert result.signature.startswith("gleu|nrefs:1|tok:13a|lowercase:no|min_len:1|max_len:4")
    assert str(result).startswith("GLEU = 100.00")
    with pytest.raises(AttributeError):
        result.score = 1.0


# --- Parity with NLTK on WMT17 ------------------------------------------------------------------


@needs_wmt17
def test_nltk_corpus_gleu_parity(wmt17):
    # All eleven de-en systems and the first system of every other pair, whole corpus.
    for pair, (refs, systems) in wmt17.items():
        names = sorted(systems) if pair == "de-en" else sorted(systems)[:1]
        prepared = NGramReferences(refs, tokenize="none")
        refs_tokens = [[r.split()] for r in refs]
        for name in names:
            hyps = systems[name]
            theirs = nltk_corpus_gleu(refs_tokens, [h.split() for h in hyps])
            assert gleu(hyps, prepared).score / 100 == pytest.approx(theirs, abs=NLTK_TOL)


@needs_wmt17
def test_nltk_corpus_gleu_parity_multiple_references_and_orders(wmt17):
    refs, systems = wmt17["tr-en"]
    names = sorted(systems)
    hyps = systems[names[0]]
    # Reference counts vary from 1 to 3 (other systems' outputs serve as extra references).
    multi = [[refs[i]] + [systems[names[k]][i] for k in range(1, 1 + i % 3)]
             for i in range(len(refs))]
    multi_tokens = [[r.split() for r in rs] for rs in multi]
    for min_len, max_len in ((1, 4), (2, 3), (1, 1)):
        theirs = nltk_corpus_gleu(multi_tokens, [h.split() for h in hyps], min_len, max_len)
        ours = gleu(hyps, multi, min_len=min_len, max_len=max_len, tokenize="none")
        assert ours.score / 100 == pytest.approx(theirs, abs=NLTK_TOL)
        assert "nrefs:var" in ours.signature


@needs_wmt17
def test_nltk_sentence_gleu_parity(wmt17):
    rng = random.Random(4)
    for pair, (refs, systems) in wmt17.items():
        names = sorted(systems)
        for i in rng.sample(range(len(refs)), 40):
            hyp = systems[rng.choice(names)][i]
            if rng.random() < 0.3:
                hyp = " ".join(hyp.split()[: rng.randint(0, 3)])
            candidates = [refs[i]] + [systems[n][i] for n in rng.sample(names, 2)]
            these = candidates[: rng.randint(1, 3)]
            for min_len, max_len in ((1, 4), (2, 4)):
                theirs = nltk_sentence_gleu([r.split() for r in these], hyp.split(),
                                            min_len, max_len)
                ours = sentence_gleu(hyp, these, min_len=min_len, max_len=max_len,
                                     tokenize="none")
                assert ours.score / 100 == pytest.approx(theirs, abs=NLTK_TOL), (hyp, these)


# --- Statistics and properties -----------------------------------------------------------------


@needs_wmt17
def test_statistics_route_and_sentence_scores(wmt17):
    refs, systems = wmt17["fi-en"]
    hyps = systems[sorted(systems)[0]]
    stats = gleu_statistics(hyps, refs)
    assert gleu_from_statistics(stats) == gleu(hyps, refs) == gleu(hyps, NGramReferences(refs))
    scores = sentence_gleu_scores(stats)
    for i in range(0, len(hyps), 101):
        assert scores[i] == sentence_gleu(hyps[i], refs[i]).score
    assert gleu_from_statistics(stats.take(range(10))) == gleu(hyps[:10], refs[:10])


_word = st.sampled_from("the a cat dog sat on mat rug is was".split())
_sentence = st.lists(_word, min_size=0, max_size=10).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_sentence, _sentence, _sentence), min_size=1, max_size=8), st.randoms())
def test_properties_bounds_permutation_identity_and_nltk(rows, rnd):
    hyps = [r[0] for r in rows]
    refs = [[r[1], r[2]] for r in rows]
    score = gleu(hyps, refs, tokenize="none").score
    assert 0.0 <= score <= 100.0
    theirs = nltk_corpus_gleu([[r.split() for r in rs] for rs in refs], [h.split() for h in hyps])
    assert score / 100 == pytest.approx(theirs, abs=NLTK_TOL)


# --- Bad input ----------------------------------------------------------------------------------


def test_transposed_reference_layout_is_rejected():
    with pytest.raises(ValueError, match="transposed"):
        gleu(["a", "b"], [["a", "b"]])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: gleu([], []), ValueError, "hypotheses is empty"),
        (lambda: gleu(["a", b"b"], ["a", "b"]), TypeError, r"hypotheses\[1\] must be a str"),
        (lambda: gleu(["a"], [1]), TypeError, r"references\[0\] must be a str or a list"),
        (lambda: sentence_gleu(None, "a"), TypeError, "hypothesis must be a str"),
        (lambda: gleu(["a"], ["a"], min_len=0), ValueError, "min_len must be a positive int"),
        (lambda: gleu(["a"], ["a"], min_len=3, max_len=2), ValueError, "must be >= min_len"),
        (lambda: gleu(["a"], ["a"], tokenize="spm"), ValueError, "tokenize must be one of"),
        (lambda: gleu_from_statistics([1, 2]), TypeError, "GLEUStatistics"),
        (lambda: sentence_gleu("a", NGramReferences(["a"])), TypeError, "one sentence"),
    ],
)
def test_bad_input_raises_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- Result protocol and the shared bootstrap ------------------------------------------------------


def test_results_follow_the_protocol_and_bootstrap():
    from markeval._result import MetricResult
    from markeval.resampling import bootstrap

    hyps = ["the cat sat on the mat", "a dog", "it rained all day"]
    refs = ["the cat sat on a mat", "a dog barked", "it rained all day"]
    stats = gleu_statistics(hyps, refs)
    corpus = gleu_from_statistics(stats)
    assert isinstance(corpus, MetricResult) and corpus.item_scores is None
    per_sentence = sentence_gleu_scores(stats)
    assert isinstance(per_sentence, MetricResult) and len(per_sentence.item_scores) == 3
    ci = bootstrap(stats, n_resamples=40, seed=2)
    assert ci.score == corpus.score and ci.ci_low <= ci.mid <= ci.ci_high
    assert "bootstrap:40|seed:2" in ci.signature
    # A replicate is corpus GLEU of the resampled sentences.
    rng = np.random.default_rng(2)
    scores = [gleu_from_statistics(stats.take(rng.integers(0, 3, 3))).score for _ in range(40)]
    assert ci.mean == pytest.approx(np.mean(scores), abs=1e-9)


# --- Options ------------------------------------------------------------------------------------

OPTIONS = GLEUOptions(min_len=2, max_len=3, tokenize="none", lowercase=True)


def test_options_are_frozen_and_hashable():
    assert_frozen_options(OPTIONS)


def test_every_entry_point_scores_the_same_options_alike():
    hyps, refs = ["A b c D", "b c"], [["a b c d e", "a b d"], ["c b"]]
    stats = assert_options_reach_every_entry_point(
        OPTIONS, hyps, refs, gleu, gleu_statistics, gleu_from_statistics, sentence_gleu)
    assert list(sentence_gleu_scores(stats)) == list(stats.item_scores())
    assert stats.signature.startswith("gleu|nrefs:var|tok:none|lowercase:yes|min_len:2|max_len:3|")


@pytest.mark.parametrize("bad", [{"min_len": 0}, {"min_len": 3, "max_len": 2},
                                 {"tokenize": "spm"}, {"lowercase": "yes"}])
def test_a_bad_option_is_refused_by_the_options_alone(bad):
    assert_checked_by_options(GLEUOptions, bad, gleu, gleu_statistics, sentence_gleu)
