"""The TAC embedding stage: unit properties and bad settings (consistency: test_reproduce.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from markeval import registry
from markeval.datasets import load_tac
from markeval.experiments import tac
from markeval.experiments.summarization import (MOVERSCORE_STOP_WORDS, moverscore_items,
                                               topic_means)
from markeval.experiments.vocabulary import LONG_COLUMNS
from markeval.reproduce.results import load_rows
from markeval.reproduce.stages import get_stage



@pytest.fixture(scope="module")
def stage():
    return get_stage("tac_embedding")


def test_settings_and_units(stage):
    ci, full = stage.settings_for("ci"), stage.settings_for("full")
    assert full["topics_per_year"] is None and ci["topics_per_year"] == 1
    assert {k: v for k, v in ci.items() if k != "topics_per_year"} == {
        k: v for k, v in full.items() if k != "topics_per_year"}  # a ci unit is a full unit
    units = stage.units(full)
    assert len(units) == len(set(units)) == len(load_tac(2008)) + len(load_tac(2009)) == 92
    assert stage.units(ci) == ["2008/D0801", "2009/D0901"]
    assert set(stage.check_units(ci)) <= set(stage.units(ci))
    # One topic is recomputed in full too, with either encoder.
    assert stage.check_units(full) == ["2009/D0901"] and "2009/D0901" in units
    mpnet = get_stage("tac_embedding_mpnet")
    assert mpnet.check_units(mpnet.settings_for("full")) == ["2009/D0901"]


def test_the_second_encoder_runs_every_topic_too(stage):
    mpnet = get_stage("tac_embedding_mpnet")
    full = mpnet.settings_for("full")
    assert full == {**stage.settings_for("full"), "encoder": "all-mpnet-base-v2"}
    assert mpnet.units(full) == stage.units(full)
    assert tac.BERTSCORE_LAYER == {"all-MiniLM-L6-v2": None, "all-mpnet-base-v2": 9}


def test_the_authors_summaries():
    topic = load_tac(2008)[0]
    items = moverscore_items([topic])
    long = [a for a in topic.annotations if len(a.sentences) > 1]
    assert [i.summ_id for i in items] == [a.summ_id for a in long]
    assert sum(i.is_human for i in items) == sum(a.is_human for a in long) > 0
    # every summary against all four references, a human one against its own too
    assert {len(i.references) for i in items} == {4}
    for item in items:
        if item.is_human:
            assert item.text in item.references
    assert len(moverscore_items([topic], min_sentences=1)) == len(topic.annotations)
    assert len(MOVERSCORE_STOP_WORDS) == 153 and {"the", "a", "wouldn"} <= MOVERSCORE_STOP_WORDS


def test_bad_settings(stage):
    with pytest.raises(ValueError, match="profile"):
        stage.settings_for("huge")
    settings = stage.settings_for("ci")
    with pytest.raises(ValueError, match="stop_words"):
        stage.compute("2009/D0901", {**settings, "stop_words": "nltk"})
    with pytest.raises(ValueError, match="TAC years"):
        stage.units({**settings, "years": [2010]})
    with pytest.raises(ValueError, match="encoder"):
        stage.compute("2009/D0901", {**settings, "encoder": "bert-base-uncased"})
    with pytest.raises(ValueError, match="min_sentences"):
        moverscore_items(load_tac(2009)[:1], min_sentences=0)
    with pytest.raises(ValueError, match="no summary"):
        moverscore_items(load_tac(2009)[:1], min_sentences=10_000)


def test_topic_means_and_best_k():
    rows = pd.DataFrame({
        "unit": ["2009/A", "2009/B", "2009/C"] * 2,
        "year": [2009] * 6, "metric": "me_capture", "k": [1] * 3 + [3] * 3, "options": "",
        "human": ["pyr_score"] * 6, "method": ["kendall"] * 6,
        "value": [0.2, 0.4, np.nan, 0.5, 0.5, 0.5]})
    means = topic_means(rows, n_resamples=200)
    k1, k3 = means.iloc[0], means.iloc[1]
    assert (k1.metric, k3.metric) == ("ME CAPTURE K=1", "ME CAPTURE K=3")
    assert k1.value == pytest.approx(0.3) and k1.n_topics == 2 and k1.undefined == "C"
    assert k1.ci_low <= 0.3 <= k1.ci_high
    assert k3.value == pytest.approx(0.5) and k3.ci_low == k3.ci_high == pytest.approx(0.5)
    assert tac.family_best_k(means, 2009, "me_capture", "pyr_score", "kendall", [1, 3]) == 3


def test_rows_and_comparison(stage):
    rows = load_rows("tac_embedding", "ci")
    assert rows["value"].between(-1, 1).all()
    assert list(rows.columns[-6:]) == list(LONG_COLUMNS)
    assert set(rows["metric"]) <= set(registry.names())
    named = set(zip(rows["metric"], rows["k"].fillna(0), rows["options"].fillna("")))
    assert {("rouge2", 0, "recall"), ("bertscore", 0, ""), ("moverscore", 0, "SMD"),
            ("prd_precision", 0, ""), ("me_petersen", 5, "")} <= named
    # ROUGE needs no encoder; the pairwise metrics average over the references
    assert set(rows[rows.metric.str.startswith("rouge")].encoder.fillna("")) == {""}
    assert set(rows[rows.metric == "bertscore"].protocol) == {"mean over references"}
    assert (rows.groupby("unit")["n_summaries"].nunique() == 1).all()
    table = stage.compare(rows, stage.settings_for("ci"))
    ms = table[table["paper"] == "MoverScore"]
    assert len(ms) == 4 * 2 * 2 * 2  # 4 rows x 2 years x 2 judgements x (r, rho)
    me = table[table["paper"] == "Mark-Evaluate"]
    # BERTScore (r, p), MoverScore and PRD (k, r, p), 4 k-NN families at default and best K
    assert len(me) == 2 * (2 + 3 + 3 + 4 * 3 * 2)
    assert me["setting"].str.contains("default").sum() == me["setting"].str.contains("best").sum()
