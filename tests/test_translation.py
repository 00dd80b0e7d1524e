"""System- and segment-level meta-evaluation on WMT17 DA (real data) and its bad inputs."""

import numpy as np
import pandas as pd
import pytest

import markeval
from markeval.datasets import load_wmt17, wmt17_da_segments, wmt17_da_systems
from markeval.experiments.translation import (
    correlations_by_pair, metric_agreement, segment_level_scores, sentence_subset,
    system_level_scores)
from markeval.stats import pearson
from conftest import needs_wmt17


def _bleu(hyps, refs):
    return markeval.bleu(hyps, refs).score


def _length(hyps, refs):
    return float(np.mean([len(h.split()) for h in hyps]))


def _sentence_length(hyps, refs):
    return [float(len(h.split())) for h in hyps]


def test_sentence_subset_is_fixed_sorted_and_unique():
    a = sentence_subset(3004, 200, seed=1)
    assert a.tolist() == sentence_subset(3004, 200, seed=1).tolist()
    assert len(set(a.tolist())) == 200 and (np.diff(a) > 0).all()
    assert sentence_subset(5, 10).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="size must be a positive int or None, got 0"):
        sentence_subset(5, 0)


@needs_wmt17
def test_system_level_scores_and_correlation_match_a_direct_computation():
    subset = sentence_subset(len(load_wmt17("cs-en").references), 300)
    table = system_level_scores("cs-en", {"bleu": _bleu, "length": _length}, subset=subset)
    da = wmt17_da_systems("cs-en")
    assert table["system"].unique().tolist() == da["system"].tolist()
    data = load_wmt17("cs-en", detokenize=True)
    refs = [data.references[i] for i in subset]
    direct = [markeval.bleu([data.systems[s][i] for i in subset], refs).score for s in da["system"]]
    np.testing.assert_allclose(table[table.metric == "bleu"]["score"], direct, rtol=0, atol=1e-12)
    corr = correlations_by_pair(table, n_resamples=0)
    expected = pearson(direct, da["score"].tolist(), n_resamples=0).value
    assert corr.set_index("metric").loc["bleu", "value"] == pytest.approx(expected, abs=1e-12)


@needs_wmt17
def test_segment_level_absolute_correlation_and_williams_on_real_segments():
    table = segment_level_scores("tr-en", {
        "length": _sentence_length,
        "negative length": lambda h, r: [-x for x in _sentence_length(h, r)],
        "sentbleu": lambda h, r: [markeval.sentence_bleu(a, [b]).score for a, b in zip(h, r)],
    })
    assert len(table) == 3 * len(wmt17_da_segments("tr-en"))
    corr = correlations_by_pair(table, absolute=True, n_resamples=200).set_index("metric")
    # A distance and its negation are the same metric once the sign is dropped.
    assert corr.loc["length", "value"] == pytest.approx(corr.loc["negative length", "value"])
    assert corr.loc["length", "ci_low"] == pytest.approx(corr.loc["negative length", "ci_low"])
    assert (corr["value"] >= 0).all() and (corr["ci_low"] >= 0).all()
    assert corr.loc["sentbleu", "value"] > corr.loc["length", "value"]
    tests = metric_agreement(table)
    row = tests[(tests.metric_a == "sentbleu") & (tests.metric_b == "length")].iloc[0]
    assert row.significant and row.p_value < 0.05
    back = tests[(tests.metric_a == "length") & (tests.metric_b == "sentbleu")].iloc[0]
    assert back.t == pytest.approx(-row.t) and not back.significant


def test_a_constant_metric_is_reported_not_raised():
    table = pd.DataFrame({"pair": ["p"] * 4, "system": list("abcd"), "metric": ["flat"] * 4,
                          "score": [1.0] * 4, "human": [0.1, 0.4, 0.2, 0.3]})
    row = correlations_by_pair(table).iloc[0]
    assert np.isnan(row.value) and row.n == 4
    assert row.undefined == "constant metric score (1 for all 4 items)"


def test_bad_input():
    with pytest.raises(TypeError, match="metrics must be a non-empty mapping"):
        system_level_scores("de-en", {})
    with pytest.raises(TypeError, match="metric 'bleu' must be callable, got str"):
        segment_level_scores("de-en", {"bleu": "bleu"})
    with pytest.raises(TypeError, match="table must be a DataFrame with columns"):
        correlations_by_pair(pd.DataFrame({"x": [1]}))
    broken = pd.DataFrame({"pair": ["p"] * 5, "system": list("abcde"),
                           "metric": ["m"] * 3 + ["n"] * 2, "score": range(5),
                           "human": range(5)})
    with pytest.raises(ValueError, match="pair p: the metrics were not scored on the same items"):
        metric_agreement(broken)


@needs_wmt17
def test_bad_subset_and_short_metric_output():
    with pytest.raises(ValueError, match=r"subset must hold indices in \[0, 3004\)"):
        system_level_scores("de-en", {"bleu": _bleu}, subset=[5000])
    with pytest.raises(ValueError, match="returned 1 scores for 560 segments"):
        segment_level_scores("de-en", {"short": lambda h, r: [0.0]})
