"""A new metric joins the studies through the registry alone.

A toy metric of two embedding sets and a toy metric of line-aligned texts are registered
(:func:`markeval.registry.register`) with no edit anywhere else, and every study that takes
metrics of that kind scores them, one ci unit each (narrowed where a whole unit takes a
minute; TAC: its harness on eight summaries of the ci topic):

* two embedding sets: the synthetic experiments (stages ``sensitivity`` and ``word_swap``), the
  generator ladder, WMT17 systems (word samples, ``wmt17_system``), WMT17 per segment
  (``wmt17_segment_sets``) and TAC summaries (``tac_embedding``);
* texts: WMT17 segments (``wmt17_segment``), WMT17 systems and TAC summaries (a summary
  against each reference, averaged).

Their rows must be in the units' results, with the value the toy computes on the same inputs,
and in the tables built from them; the builders of the lines beside the papers must still give
exactly the papers' cells (no paper prints a toy). The studies that reproduce one named
baseline (``wmt17_lexical``: WMT17's SentBLEU and chrF++; ``tac_rouge``: ROUGE) and PRD's seed
study take no other metric.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from markeval import registry
from markeval.experiments import ladder as ladder_study
from markeval.experiments.ranking import (correlation_table, ladder_correlations, ladder_metrics,
                                          ladder_scores)
from markeval.experiments.sensitivity import (sensitivity_inputs, sensitivity_tables,
                                              set_metric_names)
from markeval.reproduce.stages import get_stage


@dataclass(frozen=True)
class ToyResult:
    score: float


def toy_centroid_gap(reference, candidate) -> ToyResult:
    """The distance between the two sets' means: lower is better, 0 for equal sets."""
    gap = np.asarray(reference, float).mean(axis=0) - np.asarray(candidate, float).mean(axis=0)
    return ToyResult(float(np.linalg.norm(gap)))


TOY = registry.MetricInfo("toy_centroid_gap", "toy centroid gap", "distance between set means",
                          f"{__name__}:toy_centroid_gap", "embeddings", False, "both", True, 0.0)


@dataclass(frozen=True)
class ToyTextResult:
    score: float
    scores: tuple


def toy_length_gap(hypotheses, references) -> ToyTextResult:
    """Per hypothesis, how many words its length differs from its (first) reference's."""
    gaps = tuple(float(abs(len(h.split()) - len((r if isinstance(r, str) else r[0]).split())))
                 for h, r in zip(hypotheses, references))
    return ToyTextResult(float(np.mean(gaps)) if gaps else 0.0, gaps)


TOY_TEXTS = registry.MetricInfo("toy_length_gap", "toy length gap", "word count difference",
                                f"{__name__}:toy_length_gap", "texts", False, "quality", True,
                                0.0, items="scores")


@pytest.fixture
def toy():
    registry.register(TOY)
    try:
        yield TOY.name
    finally:
        registry.unregister(TOY.name)


@pytest.fixture
def toys(toy):
    registry.register(TOY_TEXTS)
    try:
        yield toy, TOY_TEXTS.name
    finally:
        registry.unregister(TOY_TEXTS.name)


def test_register_refuses_a_taken_name_and_unregister_an_unknown_one(toy):
    assert toy in set_metric_names() and toy in ladder_metrics()
    assert registry.get(toy) is TOY
    assert pickle.loads(pickle.dumps(TOY)) == TOY  # as a study's worker processes receive it
    with pytest.raises(ValueError, match="already registered"):
        registry.register(TOY)
    with pytest.raises(ValueError, match="'bleu' was not added by register"):
        registry.unregister("bleu")
    with pytest.raises(TypeError, match="MetricInfo"):
        registry.register("toy")


def test_the_synthetic_experiments_score_a_registered_metric(toy):
    """One unit of each experiment in the ci profile (the K sweep scores Mark-Evaluate's
    estimators only; mode collapse and word swap every set metric)."""
    settings = get_stage("sensitivity").settings_for("ci")
    units = {"sensitivity": ["k_sweep/K=01", "mode_collapse/seed=0/step=0"],
             "word_swap": ["word_swap/seed=0/p=0"]}
    rows = pd.concat([get_stage(name).compute(unit, settings).assign(unit=unit)
                      for name, chosen in units.items() for unit in chosen], ignore_index=True)
    mine = rows[rows["metric"] == toy]
    assert sorted(mine["experiment"]) == ["mode_collapse", "word_swap"]
    assert (mine["protocol"] == "pooled").all() and mine["k"].isna().all()
    # p = 0 swaps nothing: the toy of the evaluation set against the reference
    inputs = sensitivity_inputs(settings["n_collapse"], settings["n_swap"],
                                settings["pool_per_topic"], settings["data_seed"])
    expected = toy_centroid_gap(inputs["encode"](inputs["ref_10k"]),
                                inputs["encode"](inputs["evaluation"])).score
    assert mine[mine["experiment"] == "word_swap"]["value"].iloc[0] == pytest.approx(
        expected, rel=1e-12)
    tables = sensitivity_tables(rows)
    for experiment in ("mode_collapse", "word_swap"):
        assert toy in set(tables[experiment]["metric"]), experiment


def test_the_generator_ladder_scores_a_registered_metric(toy):
    stage = get_stage("ladder")
    # one K keeps the k-NN metrics cheap; the toy has none
    settings = {**stage.settings_for("ci"), "ks": [1], "default_k": {"ipr": 1, "me": 1}}
    rows = stage.compute("round-000", settings).assign(unit="round-000")
    ladder, reference, embeddings, _ = ladder_study.ladder_inputs(
        settings["n"], settings["seed"], settings["smollm2"], settings["encoder"])
    mine = rows[rows["metric"] == toy].set_index("generator")["value"]
    assert set(mine.index) == set(ladder.generated) and mine.notna().all()
    for generator, value in mine.items():
        assert value == toy_centroid_gap(reference, embeddings[generator]).score
    # the table builders carry it: the score table, the chain correlations, their table
    assert toy in ladder_scores(rows, settings["default_k"]).columns
    correlations = ladder_correlations(rows, settings["default_k"])
    assert toy in set(correlations["metric"])
    assert toy in correlation_table(correlations).index
    # the lines beside the paper's Table 1 are the paper's cells, the toy among none of them
    lines = ladder_study.ladder_comparison(rows, settings)
    assert set(lines["column"]) == set(ladder_study.TABLE1_COLUMNS)


def _labels(table) -> set:
    return set(table["metric"])


def _lines_unchanged(stage, settings, new_rows, name):
    """The stage's lines beside the papers from its committed ci rows are the same with the
    registered metric's new rows among them (no paper prints it, and its rows break nothing)."""
    from markeval.reproduce.results import load_rows

    committed = load_rows(stage.name, "ci")
    mine = new_rows[new_rows["metric"] == name]
    assert len(mine)
    pd.testing.assert_frame_equal(stage.compare(pd.concat([committed, mine], ignore_index=True),
                                                settings), stage.compare(committed, settings))


def test_wmt17_segments_score_a_registered_texts_metric(toys):
    from markeval.experiments.translation import (segment_correlations, segment_level_scores,
                                                  sentence_subset)
    from markeval.experiments.vocabulary import label

    _, texts = toys
    stage = get_stage("wmt17_segment")
    settings = {**stage.settings_for("ci"), "segments": 6}
    rows = stage.compute("lv-en", settings)
    mine = rows[rows["metric"] == texts].set_index(["sid", "system"])["value"]
    direct = segment_level_scores(
        "lv-en", {"toy": lambda hyps, refs: toy_length_gap(hyps, refs).scores},
        subset=sentence_subset(560, 6), detokenize=settings["detokenize"])
    expected = direct.set_index(["sid", "system"])["score"]
    assert len(mine) == 6 and mine.sort_index().tolist() == expected.sort_index().tolist()
    assert label(texts, oriented=True) in _labels(segment_correlations(rows))
    _lines_unchanged(stage, stage.settings_for("ci"), rows, texts)


def test_wmt17_systems_score_registered_metrics(toys):
    from markeval.datasets import load_wmt17, wmt17_da_systems, wmt17_system_match
    from markeval.experiments.translation import system_correlations
    from markeval.experiments.vocabulary import label
    from markeval.experiments.wmt17 import sentence_subset_of

    sets, texts = toys
    stage = get_stage("wmt17_system")
    settings = stage.settings_for("ci")
    rows = stage.compute("word/cs-en/3/0", settings)
    data = load_wmt17("cs-en", detokenize=settings["detokenize"])
    keep = sentence_subset_of("cs-en", 3, 0)
    mapping = wmt17_system_match("cs-en").mapping
    for system in wmt17_da_systems("cs-en")["system"]:
        mine = rows[rows["system"] == system].set_index("metric")
        hyps = [data.systems[mapping[system]][i] for i in keep]
        assert mine.loc[texts, "value"] == toy_length_gap(
            hyps, [data.references[i] for i in keep]).score
        assert mine.loc[texts, "protocol"] == "corpus"
        assert mine.loc[sets, "protocol"] == "pooled" and np.isfinite(mine.loc[sets, "value"])
    corr = system_correlations(rows, "word", size=3)
    assert {label(sets, oriented=True), label(texts, oriented=True)} <= _labels(corr)
    for name in toys:
        _lines_unchanged(stage, settings, rows, name)


def test_wmt17_per_segment_sets_score_a_registered_set_metric(toy):
    from markeval.experiments.translation import segment_set_correlations
    from markeval.experiments.vocabulary import label

    stage = get_stage("wmt17_segment_sets")
    settings = {**stage.settings_for("ci"), "segments": 3}
    rows = stage.compute("cs-en/0", settings)
    mine = rows[rows["metric"] == toy]
    assert len(mine) == rows["system"].nunique() and mine["value"].notna().all()
    assert mine["k"].isna().all()
    corr = segment_set_correlations(rows, settings["ipr_k"])
    assert label(toy, oriented=True) in _labels(corr)
    _lines_unchanged(stage, stage.settings_for("ci"), rows, toy)


def test_tac_scores_registered_metrics(toys):
    """The TAC harness on eight summaries of the ci topic (the whole unit takes a minute:
    the year's idf and every K of four): the pairwise toy against each reference, averaged;
    the set toy on the summary's samples against the references' pooled ones."""
    from markeval.datasets import load_tac
    from markeval.encoders import memoize
    from markeval.experiments.summarization import (embedding_scores, moverscore_idf,
                                                    moverscore_items, pairwise_scores,
                                                    topic_means)
    from markeval.experiments.tac import topic_rows
    from markeval.experiments.vocabulary import label
    from markeval.stats import correlation

    sets, texts = toys
    stage = get_stage("tac_embedding")
    settings = stage.settings_for("ci")
    topic = next(t for t in load_tac(2009) if t.topic_id == "D0901")
    items = moverscore_items([topic], min_sentences=settings["min_sentences"])[:8]
    model = memoize(settings["encoder"], layers=range(-5, 0))
    scores, _ = embedding_scores(items, model, moverscore_idf([topic], model), ks=(1,),
                                 prd_clusters=settings["prd_clusters"], prd_runs=1, n_jobs=1)
    rows = topic_rows(2009, scores, items, encoder=settings["encoder"]).assign(
        unit="2009/D0901")
    mine = rows[rows["metric"].isin([sets, texts])]
    assert dict(zip(mine["metric"], mine["protocol"])) == {
        sets: "pooled references", texts: "mean over references"}
    # the pairwise toy: each summary against each reference, averaged, then correlated
    values = pairwise_scores(items, lambda h, r: toy_length_gap(h, r).scores)
    expected = correlation(values, [i.responsiveness for i in items], "pearson",
                           n_resamples=0).value
    got = mine[(mine["metric"] == texts) & (mine["human"] == "responsiveness")
               & (mine["method"] == "pearson")]["value"]
    assert got.tolist() == [expected]
    assert {label(sets), label(texts)} <= set(topic_means(rows)["metric"])
    for name in toys:
        _lines_unchanged(stage, settings, rows, name)
