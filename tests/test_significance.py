"""Paired significance tests: parity with sacrebleu 2.6.0's ``--paired-bs`` / ``--paired-ar``.

Agreement: markeval draws sacrebleu's own random indices (``default_rng(12345)``) and repeats
its arithmetic (float32 statistics in the bootstrap), so for BLEU on the 11 WMT17 de-en
systems the scores, p-values, bootstrap means and CI half-widths are *identical* (asserted
with ``==``). chrF's scorer works in float64 where sacrebleu's bootstrap works in float32:
the p-values are identical on WMT17 de-en, the means and CIs agree to 1e-4 (observed 1e-5).
TER likewise (tolerance 1e-4), when its module exists.
"""

from __future__ import annotations

import importlib.util
import logging

import numpy as np
import pytest

from conftest import needs_wmt17
from markeval.lexical.bleu import bleu
from markeval.significance import (DEFAULT_RESAMPLES, MIN_SENTENCES, SignificanceResult,
                                   SystemComparison, paired_significance)

logging.getLogger("sacrebleu").setLevel(logging.ERROR)

REFS = ["the cat sat on the mat", "a dog barked at the postman", "it rained all day long",
        "we went to the beach", "she reads a book every night", "the train was late again"]
BASE = ["the cat sat on a mat", "a dog barked at postman", "it rained all day",
        "we went to a beach", "she reads books every night", "the train is late again"]
OTHER = ["the cat sat on the mat", "the dog barked at the postman", "it rained all day long",
         "we went to the beach", "she read a book each night", "a train was late"]


@pytest.fixture(scope="module")
def de_en():
    from markeval.datasets import load_wmt17

    data = load_wmt17("de-en")
    named = [(name, list(hyps)) for name, hyps in data.systems.items()]
    return named, list(data.references)


def _sacrebleu(named, refs, metric, test, n_samples=0, n_ar_confidence=-1):
    from sacrebleu.significance import PairedTest

    _, scores = PairedTest(named, {"m": metric}, references=None, test_type=test,
                           n_samples=n_samples, n_ar_confidence=n_ar_confidence)()
    return list(scores.values())[1]


@needs_wmt17
def test_bleu_paired_bootstrap_is_sacrebleus(de_en):
    from sacrebleu.metrics import BLEU

    named, refs = de_en
    assert len(named) == 11
    ours = paired_significance(named[0], dict(named[1:]), [[r] for r in refs], progress=False)
    theirs = _sacrebleu(named, refs, BLEU(references=[refs], force=True), "bs")
    assert ours.n_resamples == 1000 and ours.seed == 12345
    for row, ref in zip(ours.rows, theirs):
        assert row.score == ref.score
        assert row.p_value == ref.p_value
        assert row.mean == ref.mean
        assert row.ci == ref.ci
    assert ours.rows[0].p_value is None
    assert sum(r.significant() for r in ours.rows[1:]) == 9  # TALP-UPC and online-G are not


@needs_wmt17
def test_bleu_approximate_randomization_is_sacrebleus(de_en):
    from sacrebleu.metrics import BLEU

    named, refs = de_en
    ours = paired_significance(named[0], dict(named[1:]), [[r] for r in refs], test="ar",
                               n_resamples=2000, progress=False)
    # n_ar_confidence=0: sacrebleu's 1000 bootstrap resamples for the intervals, as ours.
    theirs = _sacrebleu(named, refs, BLEU(references=[refs], force=True), "ar", 2000, 0)
    for row, ref in zip(ours.rows, theirs):
        assert (row.score, row.p_value, row.mean, row.ci) == (ref.score, ref.p_value,
                                                               ref.mean, ref.ci)
    assert "test:ar|n:2000|bs:1000|seed:12345" in ours.signature


@needs_wmt17
@pytest.mark.skipif(importlib.util.find_spec("markeval.lexical.chrf") is None,
                    reason="chrF not written yet")
# chrF in `make test`; chrF++ (the same resampling code, word bigrams added) in `make test-full`
@pytest.mark.parametrize("word_order", [0, pytest.param(2, marks=pytest.mark.slow)])
def test_chrf_paired_tests_agree_with_sacrebleu(de_en, word_order):
    from sacrebleu.metrics import CHRF

    named, refs = de_en
    named = named[:5]
    for test, n in (("bs", 300), ("ar", 1000)):
        ours = paired_significance(named[0], dict(named[1:]), [[r] for r in refs],
                                   metric="chrf", test=test, n_resamples=n, progress=False,
                                   options={"word_order": word_order})
        theirs = _sacrebleu(named, refs, CHRF(word_order=word_order, references=[refs]), test,
                            n, 0)
        for row, ref in zip(ours.rows, theirs):
            assert row.score == pytest.approx(ref.score, abs=1e-9)
            assert row.p_value == ref.p_value
            assert row.mean == pytest.approx(ref.mean, abs=1e-4)
            assert row.ci == pytest.approx(ref.ci, abs=1e-4)


@needs_wmt17
@pytest.mark.skipif(importlib.util.find_spec("markeval.lexical.ter") is None,
                    reason="TER not written yet")
def test_ter_paired_tests_agree_with_sacrebleu(de_en):
    from sacrebleu.metrics import TER

    named, refs = de_en
    named, refs = [(n, h[:400]) for n, h in named[:4]], refs[:400]
    for test, n in (("bs", 300), ("ar", 500)):
        ours = paired_significance(named[0], dict(named[1:]), [[r] for r in refs],
                                   metric="ter", test=test, n_resamples=n, progress=False)
        theirs = _sacrebleu(named, refs, TER(references=[refs]), test, n, 0)
        assert not ours.higher_is_better
        for row, ref in zip(ours.rows, theirs):
            assert row.score == pytest.approx(ref.score, abs=1e-9)
            assert row.p_value == ref.p_value
            assert row.mean == pytest.approx(ref.mean, abs=1e-4)
            assert row.ci == pytest.approx(ref.ci, abs=1e-4)


def _bleu_of(hyps, refs):
    return bleu(hyps, [[r] for r in refs]).score


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_tiny_case_by_hand(test):
    """Re-score the resampled *texts* in a loop (no statistics): the same p-value."""
    n, b = len(REFS), 50
    rng = np.random.default_rng(7)
    delta = abs(_bleu_of(OTHER, REFS) - _bleu_of(BASE, REFS))
    if test == "bs":
        idx = rng.choice(n, size=(b, n), replace=True)
        a = np.array([_bleu_of([BASE[i] for i in row], [REFS[i] for i in row]) for row in idx])
        s = np.array([_bleu_of([OTHER[i] for i in row], [REFS[i] for i in row]) for row in idx])
        diffs = np.abs(s - a)
        null = diffs - diffs.mean()
        expected_mean = np.sort(s).mean()
    else:
        swap = rng.integers(2, size=(b, n), dtype=bool)
        null = []
        for row in swap:
            a = [x if on else y for x, y, on in zip(BASE, OTHER, row)]
            o = [y if on else x for x, y, on in zip(BASE, OTHER, row)]
            null.append(abs(_bleu_of(a, REFS) - _bleu_of(o, REFS)))
        null = np.array(null)
    expected = (int((null > delta).sum()) + 1) / (b + 1)
    result = paired_significance(("base", BASE), {"other": OTHER}, REFS, test=test,
                                 n_resamples=b, seed=7, progress=False)
    assert result["other"].p_value == pytest.approx(expected, abs=1e-12)
    assert result["other"].score == pytest.approx(_bleu_of(OTHER, REFS), abs=1e-12)
    if test == "bs":
        assert result["other"].mean == pytest.approx(expected_mean, abs=1e-4)  # float32 sums


def test_p_value_formula_and_ci_ranks():
    result = paired_significance(("base", BASE), {"other": OTHER}, REFS, n_resamples=40,
                                 progress=False)
    row = result["other"]
    # (c + 1) / (n + 1) with 0 <= c <= n
    assert round(row.p_value * 41) == pytest.approx(row.p_value * 41, abs=1e-9)
    assert row.ci_low <= row.mean <= row.ci_high
    assert row.ci == pytest.approx((row.ci_high - row.ci_low) / 2)


def test_a_system_against_itself():
    ar = paired_significance(("base", BASE), {"same": list(BASE)}, REFS, test="ar",
                             n_resamples=300, progress=False)
    assert ar["same"].p_value == 1.0
    assert ar["same"].score == ar.baseline.score
    bs = paired_significance(("base", BASE), {"same": list(BASE)}, REFS, n_resamples=300,
                             progress=False)
    # delta = 0: p = 1 (sacrebleu's strict count would give 1 / 301 here).
    assert bs["same"].p_value == 1.0
    assert (bs["same"].mean, bs["same"].ci) == (bs.baseline.mean, bs.baseline.ci)


def test_identical_systems_get_identical_rows():
    result = paired_significance(("base", BASE), {"x": OTHER, "y": list(OTHER)}, REFS,
                                 test="ar", n_resamples=200, progress=False)
    x, y = result["x"], result["y"]
    assert (x.score, x.mean, x.ci_low, x.ci_high, x.p_value) == (
        y.score, y.mean, y.ci_low, y.ci_high, y.p_value)


def test_defaults_result_shape_and_table():
    result = paired_significance(("base", BASE), {"other": OTHER}, REFS, test="ar",
                                 progress=False)
    assert result.n_resamples == DEFAULT_RESAMPLES["ar"] == 10000
    assert isinstance(result, SignificanceResult)
    assert all(isinstance(r, SystemComparison) for r in result.rows)
    assert [r.name for r in result.rows] == ["base", "other"]
    assert result.baseline.is_baseline and result.baseline.significant() is None
    frame = result.to_frame()
    assert list(frame.index) == ["base", "other"] and frame.loc["base", "baseline"]
    text = str(result)
    assert "Baseline: base" in text and "BLEU (μ ± 95% CI)" in text
    assert "approximate randomization test with 10000 trials" in text
    assert result.signature.startswith("bleu|nrefs:1|tok:13a")
    with pytest.raises(KeyError, match="no system named 'nope'"):
        result["nope"]


def test_options_reach_the_metric():
    plain = paired_significance(("base", BASE), {"other": OTHER}, REFS, n_resamples=20,
                                progress=False)
    floor = paired_significance(("base", BASE), {"other": OTHER}, REFS, n_resamples=20,
                                progress=False, options={"smooth": "floor", "tokenize": "none"})
    assert "smooth:floor" in floor.signature and "tok:none" in floor.signature
    expected = bleu(OTHER, REFS, smooth="floor", tokenize="none").score
    assert floor["other"].score == expected
    assert plain.signature != floor.signature


def test_item_score_metric_resamples_its_sentence_scores():
    result = paired_significance(("base", BASE), {"other": OTHER}, REFS, metric="rouge1",
                                 test="bs", n_resamples=100, progress=False)
    from markeval import registry

    r = registry.get("rouge1").compute(OTHER, REFS)
    assert result["other"].score == r.fmeasure
    items = np.array(r.fmeasures)
    idx = np.random.default_rng(12345).choice(len(REFS), size=(100, len(REFS)))
    assert result["other"].mean == pytest.approx(np.sort(items[idx].mean(axis=1)).mean(),
                                                 abs=1e-12)
    assert result.signature.startswith("rouge")


@pytest.mark.parametrize("kwargs, match", [
    ({"test": "t"}, "test"),
    ({"n_resamples": 0}, "n_resamples"),
    ({"seed": -1}, "seed"),
    ({"confidence": 95}, "confidence"),
    ({"metric": "fid"}, "fid"),
    ({"metric": "blue"}, "blue"),
    ({"options": {"smooth": "nope"}}, "smooth"),
])
def test_bad_settings_are_named(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        paired_significance(("base", BASE), {"other": OTHER}, REFS, progress=False, **kwargs)


def test_bad_systems_are_named():
    with pytest.raises(TypeError, match="baseline"):
        paired_significance(BASE, {"other": OTHER}, REFS)
    with pytest.raises(TypeError, match="systems"):
        paired_significance(("base", BASE), {}, REFS)
    with pytest.raises(ValueError, match=r"systems\['short'\] has 2 lines"):
        paired_significance(("base", BASE), {"short": OTHER[:2]}, REFS)
    with pytest.raises(ValueError, match="baseline's name"):
        paired_significance(("base", BASE), {"base": OTHER}, REFS)
    with pytest.raises(TypeError, match=r"systems\['x'\]"):
        paired_significance(("base", BASE), {"x": [1] * len(BASE)}, REFS)
    with pytest.raises(ValueError, match="references"):
        paired_significance(("base", BASE), {"other": OTHER}, REFS[:3])


# --- what the tests refuse ------------------------------------------------------------------

@pytest.mark.parametrize("test", ["bs", "ar"])
def test_fewer_than_six_sentences_are_refused_at_the_boundary(test):
    # 2 / 2**5 = 1/16 > 0.05: no outcome on five sentences could be evidence.
    with pytest.raises(ValueError, match="need at least 6 sentences .* the test set has 5"):
        paired_significance(("base", BASE[:5]), {"other": OTHER[:5]}, REFS[:5], test=test,
                            progress=False)
    with pytest.raises(ValueError, match="the test set has 1"):
        paired_significance(("base", BASE[:1]), {"other": OTHER[:1]}, REFS[:1], test=test,
                            progress=False)
    six = paired_significance(("base", BASE), {"other": OTHER}, REFS, test=test,
                              n_resamples=200, progress=False)
    assert 0 < six["other"].p_value <= 1
    assert MIN_SENTENCES == 6 and 2 / 2**6 <= 0.05 < 2 / 2**5


def test_options_are_checked_as_the_metric_checks_them():
    call = dict(baseline=("base", BASE), systems={"other": OTHER}, references=REFS,
                n_resamples=20, progress=False)
    with pytest.raises(TypeError, match="lowercase must be True or False, got str: 'no'"):
        paired_significance(**call, options={"lowercase": "no"})
    with pytest.raises(TypeError, match="options must be a dict of bleu's keyword arguments.*"
                                        "got str: 'abc'"):
        paired_significance(**call, options="abc")
    with pytest.raises(TypeError, match=r"unknown option 'lowercased' for metric='bleu' \(its "
                                        r"options: effective_order, lowercase, max_order"):
        paired_significance(**call, options={"lowercased": True})
    with pytest.raises(TypeError, match="unknown option 'types' for metric='chrf'"):
        paired_significance(**call, metric="chrf", options={"types": ("rouge2",)})
    with pytest.raises(ValueError, match=r"metric='rouge1' fixes types=\('rouge1',\), so options "
                                         r"cannot set types=\('rouge2',\)"):
        paired_significance(**call, metric="rouge1", options={"types": ("rouge2",)})
    with pytest.raises(ValueError, match="metric='chrf\\+\\+' fixes word_order=2"):
        paired_significance(**call, metric="chrf++", options={"word_order": 0})
    with pytest.raises(ValueError, match="beta must have a finite square"):
        paired_significance(**call, metric="chrf", options={"beta": 1e200})
    assert "lowercase:no" in paired_significance(**call, options={"lowercase": False}).signature
    assert "lowercase:yes" in paired_significance(**call, options={"lowercase": True}).signature


def test_chrf_plus_plus_is_resampled_through_chrf_statistics():
    call = dict(baseline=("base", BASE), systems={"other": OTHER}, references=REFS,
                n_resamples=50, progress=False)
    plus = paired_significance(**call, metric="chrf++")
    chrf2 = paired_significance(**call, metric="chrf", options={"word_order": 2})
    assert [r.p_value for r in plus.rows] == [r.p_value for r in chrf2.rows]
    assert plus.signature == chrf2.signature and plus.signature.startswith("chrF2++")


@pytest.mark.parametrize("test, n, match", [
    ("bs", 10**12, r"n_resamples=1000000000000 resamples of 6 items are 6e\+12 index draws, "
                   r"beyond the 1e\+10 one resampling may take; ask for at most 1666666666"),
    ("ar", 10**12, "trials of 6 items are 6e\\+12 index draws"),
    ("ar", 10**9, r"1000000000 trials of 6 sentences need a 5.59 GiB swap matrix .* ask for at "
                  r"most 357913941 trials"),
])
def test_requests_out_of_reach_are_refused_before_any_work(test, n, match):
    with pytest.raises(ValueError, match=match):
        paired_significance(("base", BASE), {"other": OTHER}, REFS, test=test, n_resamples=n,
                            progress=False)


def test_every_statistics_metric_takes_one_path():
    # GLEU joined the paired tests by declaring its statistics in the registry: its corpus
    # score and its bootstrap mean come from the same SufficientStatistics as gleu()'s.
    from markeval import gleu, registry
    from markeval.resampling import bootstrap

    result = paired_significance(("base", BASE), {"other": OTHER}, REFS, metric="gleu",
                                 n_resamples=200, progress=False)
    assert result["other"].score == gleu(OTHER, REFS).score
    stats = registry.get("gleu").statistics_function(OTHER, REFS)
    assert result["other"].mean == pytest.approx(
        bootstrap(stats, n_resamples=200, seed=12345).mean, abs=1e-9)
    assert {m.name for m in registry.metrics() if m.statistics} == {
        "bleu", "gleu", "chrf", "chrf++", "ter"}


@pytest.mark.parametrize("metric", ["bleu", "gleu"])
def test_references_are_prepared_once_for_all_systems(monkeypatch, metric):
    # #60: preparing BLEU's n-gram tables again for every system had doubled the test's time.
    from markeval.lexical import _ngram

    built = []
    init = _ngram.NGramReferences.__init__

    def counting(self, *args, **kwargs):
        built.append(args)
        init(self, *args, **kwargs)

    monkeypatch.setattr(_ngram.NGramReferences, "__init__", counting)
    result = paired_significance(("base", BASE), {"other": OTHER, "again": OTHER[::-1]}, REFS,
                                 metric=metric, options={"tokenize": "none"}, n_resamples=20,
                                 progress=False)
    assert len(built) == 1 and "tok:none" in result.signature
