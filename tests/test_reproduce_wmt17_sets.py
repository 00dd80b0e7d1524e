"""The WMT17 per-segment set metrics and PRD seed study: their units, checks and analysis."""

from __future__ import annotations

import numpy as np
import pandas as pd

from conftest import needs_wmt17
from markeval.experiments.word_set_metrics import ADAPTATION_RULES
from markeval.experiments.translation import seed_band, segment_set_means
from markeval.experiments.vocabulary import LONG_COLUMNS
from markeval.reproduce.stages import get_stage


def test_per_segment_stages_cover_every_segment_and_check_an_affordable_unit():
    for name in ("wmt17_segment_sets", "wmt17_segment_sets_mpnet"):
        stage = get_stage(name)
        full = stage.settings_for("full")
        assert full["segments"] is None  # every segment of every system, either encoder
        units = stage.units(full)
        assert len(units) == 33 and stage.check_narrowing(full) == {}
    mpnet = get_stage("wmt17_segment_sets_mpnet")
    full = mpnet.settings_for("full")
    # mpnet's check is its cheapest unit: a pair's short last chunk
    cheapest = min(mpnet.units(full), key=lambda unit: mpnet.cost(unit, full))
    assert mpnet.check_units(full) == [cheapest] and cheapest.endswith("/3000")
    minilm = get_stage("wmt17_segment_sets")
    assert minilm.check_units(minilm.settings_for("full")) == ["cs-en/0"]


def test_prd_seed_check_recomputes_one_system_at_one_seed_and_setting_in_full():
    for name in ("wmt17_prd_seeds", "wmt17_prd_seeds_mpnet"):
        stage = get_stage(name)
        ci, full = stage.settings_for("ci"), stage.settings_for("full")
        assert stage.check_units(full) == ["cs-en"] and stage.check_narrowing(ci) == {}
        assert stage.check_narrowing(full) == {"grid": full["grid"][:1], "seeds": 1,
                                               "systems": 1}
        assert stage.row_format == 2  # the vocabulary's columns: old cached units are not read


@needs_wmt17
def test_a_prd_seed_unit_narrowed_to_one_system_gives_that_systems_rows():
    # what makes the full check's narrowing sound: a system's rows do not depend on the
    # others' (ci's small unit, whose embeddings are disk-cached)
    stage = get_stage("wmt17_prd_seeds")
    settings = stage.settings_for("ci")
    every = stage.compute("cs-en", settings)
    first = stage.compute("cs-en", {**settings, "systems": 1})
    assert every["system"].nunique() == 4 and set(first["system"]) == {every["system"][0]}
    pd.testing.assert_frame_equal(first, every[every["system"] == every["system"][0]])


def _unit_rows(unit, segments, value, rules):
    return pd.DataFrame([{"unit": unit, "pair": "xx-en", "system": "s", "human": 0.5,
                          "segments": segments, **dict(zip(ADAPTATION_RULES, rules)),
                          "encoder": "e", "protocol": "segment", "metric": metric, "k": k,
                          "options": np.nan, "value": value}
                         for metric, k in (("prd_precision", np.nan), ("me_petersen", 1.0))])


def test_segment_set_means_weigh_units_by_segments_and_add_rule_counts():
    rows = pd.concat([_unit_rows("a", 500, 0.8, (1, 2, 0)), _unit_rows("b", 5, 0.2, (0, 1, 3))],
                     ignore_index=True)
    means = segment_set_means(rows)
    assert list(means.columns[-len(LONG_COLUMNS):]) == list(LONG_COLUMNS)
    assert len(means) == 2 and (means["segments"] == 505).all()
    np.testing.assert_allclose(means["value"], (500 * 0.8 + 5 * 0.2) / 505, rtol=1e-15)
    assert means[list(ADAPTATION_RULES)].values.tolist() == [[1, 3, 3]] * 2
    assert means["k"].isna().tolist() == [True, False]


def test_seed_band_holds_the_central_seeds():
    rng = np.random.default_rng(0)
    human = rng.normal(size=6)
    rows = pd.DataFrame([{"pair": pair, "system": f"s{i}", "human": human[i], "clusters": 20,
                          "runs": 2, "seed": seed, "value": human[i] + rng.normal(scale=0.5)}
                         for pair in ("aa-en", "bb-en") for seed in range(10)
                         for i in range(6)])
    band = seed_band(rows, confidence=0.8).set_index("pair")
    assert list(band.index) == ["aa-en", "bb-en", "average"] and (band["seeds"] == 10).all()
    assert (band["low"] <= band["median r"]).all() and (band["median r"] <= band["high"]).all()
