"""The generation stages: the ladder (Mark-Evaluate Table 1 analogue) and the sensitivity sweeps.

Unit-level properties on the ``ci`` settings and bad settings; that the committed rows follow
from the code is checked for every stage in ``tests/test_reproduce.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from markeval import registry
from markeval.experiments import ladder, sensitivity
from markeval.experiments.ranking import DEFAULT_K, K_FAMILY, ladder_metrics, ladder_scores
from markeval.experiments.vocabulary import LONG_COLUMNS, encoder_name
from markeval.reproduce.results import load_rows
from markeval.reproduce.stages import get_stage

LADDER = get_stage("ladder")


@pytest.fixture(scope="module")
def ci():
    return LADDER.settings_for("ci")


@pytest.fixture(scope="module")
def round0(ci):
    return LADDER.compute("round-000", ci)


def test_ladder_settings_and_units(ci):
    full = LADDER.settings_for("full")
    assert full["n"] == 1000 and full["default_k"] == DEFAULT_K
    assert LADDER.units(ci) == [f"round-{r:03d}" for r in range(ci["rounds"] + 1)]
    # a full round takes minutes: its check recomputes round 1 for the last generator at the
    # default Ks only, with either encoder
    for stage in (LADDER, get_stage("ladder_mpnet")):
        settings = stage.settings_for("full")
        assert stage.check_units(settings) == ["round-001"] and stage.check_narrowing(ci) == {}
        assert stage.check_narrowing(settings) == {"ks": sorted(set(DEFAULT_K.values())),
                                                   "only": ["collapsed-2"]}


def test_ladder_round_rows(round0, ci):
    # every generator x metric (registry names), no K for the metrics without one and every
    # grid K for the rest; the cross-entropies read no encoder
    assert list(round0.columns) == ["generator", *LONG_COLUMNS]
    for metric, rows in round0.groupby("metric"):
        if metric in K_FAMILY:
            assert set(rows["k"]) == set(ci["ks"]), metric
        else:
            assert rows["k"].isna().all(), metric
        assert rows.groupby(rows["k"].fillna(0))["generator"].nunique().eq(
            round0["generator"].nunique()).all()
    assert set(round0["metric"]) == set(ladder_metrics())
    text = round0["metric"].isin(["forward_ce", "reverse_ce"])
    assert set(round0[text].encoder) == {""}
    assert set(round0[~text].encoder) == {encoder_name(ci["encoder"])}
    bounded = round0[~text & (round0["metric"] != "fid")]
    assert bounded["value"].between(0, 1).all()
    # real text has the best forward CE of the quality ladder's bottom rungs
    fwd = round0[round0["metric"] == "forward_ce"].set_index("generator")["value"]
    assert fwd["real"] < fwd["swap-1"] and fwd["real"] < fwd["ngram-1"]


def test_ladder_scores_and_table1(round0, ci):
    rows = round0.assign(unit="round-000")
    wide = ladder_scores(rows, DEFAULT_K)
    assert list(wide.columns) == ["round", "generator", *ladder_metrics()]
    table = ladder.table1(rows, ci)
    assert set(table["column"]) == set(ladder.TABLE1_COLUMNS)
    best = table[table["K choice"] == "best"].set_index("metric")
    default = table[table["K choice"] == "default"].set_index("metric")
    assert (best["tau"] >= default.loc[best.index, "tau"] - 1e-12).all()  # best K is the max
    assert table[["tau low", "tau high"]].isna().all().all()  # no subset rounds here


@pytest.mark.parametrize("change, match", [
    ({"rounds": -1}, "rounds"), ({"ks": []}, "ks"), ({"ks": [0, 1, 3]}, "ks"),
    ({"default_k": {"ipr": 4, "me": 1}}, "default K"), ({"n": 5}, "too small")])
def test_ladder_bad_settings(ci, change, match):
    with pytest.raises(ValueError, match=match):
        LADDER.units({**ci, **change})


def test_ladder_bad_unit(ci):
    with pytest.raises(ValueError, match="unknown unit"):
        LADDER.compute("topic-3", ci)
    with pytest.raises(ValueError, match="rounds"):
        LADDER.compute("round-099", ci)


# ------------------------------------------------------------------------- sensitivity
SENS = get_stage("sensitivity")
SWAP = get_stage("word_swap")


@pytest.fixture(scope="module")
def sens_ci():
    return SENS.settings_for("ci")


def test_sensitivity_settings_and_units(sens_ci):
    full = SENS.settings_for("full")
    assert (full["n_collapse"], full["n_swap"]) == (4000, 10000)  # the paper's sizes
    assert SWAP.settings_for("full") == full  # one settings dict, two stages
    assert (len(SENS.units(full)), len(SWAP.units(full))) == (40 + 3 * 5, 3 * 11)
    assert len(SENS.units(sens_ci)) == len(sens_ci["ks"]) + 2 * 5
    assert len(SWAP.units(sens_ci)) == 2 * len(sens_ci["ps"])
    for stage in (SENS, SWAP):
        assert set(stage.check_units(sens_ci)) <= set(stage.units(sens_ci))
    assert SENS.check_units(full) == ["k_sweep/K=01", "mode_collapse/seed=0/step=4"]
    assert SWAP.check_units(full) == ["word_swap/seed=0/p=0"]


def test_sensitivity_units_are_the_library_experiments(sens_ci):
    """A stage unit gives the rows of the library's experiment function at that step."""
    from markeval.experiments.sensitivity import k_sweep, mode_collapse, word_swap

    s = sens_ci
    sets = sensitivity.sensitivity_inputs(s["n_collapse"], s["n_swap"], s["pool_per_topic"],
                                s["data_seed"])
    enc = sets["encode"]
    options = dict(me_k=s["me_k"], ipr_k=s["ipr_k"], prd_runs=s["prd_runs"],
                   fid_allow_singular=True, progress=False, n_jobs=1)
    mc = mode_collapse(enc(sets["reference"]), enc(list(sets["pool"]["sentence"])),
                       sets["pool"]["topic"], n=s["n_collapse"], seeds=[1], **options)
    unit = SENS.compute("mode_collapse/seed=1/step=3", s)
    lib = mc[mc["step"] == 3].reset_index(drop=True)
    assert unit["kept"].unique().tolist() == lib["kept"].unique().tolist()
    np.testing.assert_allclose(unit["value"], lib["value"], rtol=1e-12)
    ws = word_swap(enc(sets["ref_10k"]), sets["evaluation"], [0.5], seeds=[0], encoder=enc,
                   **options)
    np.testing.assert_allclose(SENS.compute("word_swap/seed=0/p=0.5", s)["value"], ws["value"],
                               rtol=1e-12)
    ks = k_sweep(enc(sets["ref_10k"]), enc(sets["evaluation"]), [7], progress=False, n_jobs=1)
    rows = SENS.compute("k_sweep/K=07", s).assign(profile="ci", unit="k_sweep/K=07")
    got = sensitivity.sensitivity_tables(rows)["k_sweep"]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), ks, check_dtype=False)


@pytest.mark.parametrize("unit", ["k_sweep/K=6", "mode_collapse/seed=7/step=0", "word/p=1",
                                  "word_swap/seed=0/p=0.3", "mode_collapse"])
def test_sensitivity_bad_units(sens_ci, unit):
    with pytest.raises(ValueError, match="unit"):
        SENS.compute(unit, sens_ci)


@pytest.mark.parametrize("change, match", [({"seeds": []}, "seeds"), ({"ps": [0.0, 1.5]}, "p"),
                                           ({"ks": [0, 2]}, "ks")])
def test_sensitivity_bad_settings(sens_ci, change, match):
    with pytest.raises(ValueError, match=match):
        SENS.units({**sens_ci, **change})


def test_sensitivity_tables():
    rows = pd.concat([load_rows("sensitivity", "ci"), load_rows("word_swap", "ci")])
    tables = sensitivity.sensitivity_tables(rows)
    assert set(tables) == {"k_sweep", "mode_collapse", "word_swap"}
    assert tables["k_sweep"]["score"].between(0, 1).all()
