"""A new metric joins the studies through the registry alone.

A toy metric of two embedding sets is registered (:func:`markeval.registry.register`) with no
edit anywhere else, and the studies that take metrics of that kind score it: the synthetic
experiments (stages ``sensitivity`` and ``word_swap``) and the generator ladder. Its rows must
be in the units' results, with the value the toy computes on the same sets, and in the tables
built from them; the builders of the lines beside the papers must still give exactly the
papers' cells (no paper prints the toy).

Not yet here (issue #61): the WMT17 and TAC studies score a fixed set of metrics
(``WordSetMetrics``: PRD, IPR, Mark-Evaluate), and no study takes a pairwise (texts) metric
from the registry, so a toy pairwise metric has no study to join.
"""

from __future__ import annotations

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


@pytest.fixture
def toy():
    registry.register(TOY)
    try:
        yield TOY.name
    finally:
        registry.unregister(TOY.name)


def test_register_refuses_a_taken_name_and_unregister_an_unknown_one(toy):
    assert toy in set_metric_names() and toy in ladder_metrics()
    assert registry.get(toy) is TOY
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
