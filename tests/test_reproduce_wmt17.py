"""The WMT17 stages: unit properties and bad settings (consistency: test_reproduce.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from markeval import registry
from markeval.datasets import wmt17_da_systems
from markeval.experiments import wmt17
from markeval.experiments.translation import (every_sentence_as_one_size, sample_size_curve,
                                              segment_correlations, segment_long)
from markeval.experiments.vocabulary import LONG_COLUMNS
from markeval.reproduce.stages import get_stage


@pytest.fixture(scope="module")
def segment():
    return get_stage("wmt17_segment")


@pytest.fixture(scope="module")
def system():
    return get_stage("wmt17_system")


def test_settings_and_units(segment, system):
    ci, full = segment.settings_for("ci"), segment.settings_for("full")
    assert segment.units(full) == wmt17.SEGMENT_PAIRS and full["segments"] is None
    assert ci["segments"] < 560
    s_ci, s_full = system.settings_for("ci"), system.settings_for("full")
    assert s_full["sentences"] is None and max(s_full["word_sizes"]) > max(s_ci["word_sizes"])
    units = system.units(s_ci)
    n_pairs = len(s_ci["pairs"])
    assert len(units) == len(set(units)) == n_pairs * (1 + sum(s_ci["word_draws"]))
    # one unit per pair and subset: every system of the pair inside it
    assert all(u.count("/") in (1, 3) for u in units)
    # In full, the smallest pooled word unit (a sentence unit encodes every sentence) and
    # lv-en's 560 segments, with either encoder.
    assert system.check_units(s_full) == ["word/cs-en/25/0"]
    # dispatched costliest first: more systems, more sentences, a larger subset cost more
    cost = {u: system.cost(u, s_full) for u in system.units(s_full)}
    assert cost["word/zh-en/200/0"] > cost["word/zh-en/100/0"] > cost["word/cs-en/100/0"]
    assert cost["sentence/zh-en"] > cost["sentence/cs-en"] > cost["word/cs-en/25/0"]
    assert segment.check_units(full) == ["lv-en"]
    mpnet = get_stage("wmt17_segment_mpnet")
    assert mpnet.check_units(mpnet.settings_for("full")) == ["lv-en"]


def test_bad_settings(segment, system):
    with pytest.raises(ValueError, match="profile"):
        segment.settings_for("huge")
    settings = system.settings_for("ci")
    with pytest.raises(ValueError, match="size"):
        system.compute("word/cs-en/0/0", settings)
    with pytest.raises(ValueError, match="unit"):
        system.compute("sentence/cs-en/online-B.0", settings)
    with pytest.raises(KeyError):
        system.compute("sentence/xx-en", settings)
    with pytest.raises(ValueError, match="same length"):
        system.units(dict(settings, word_draws=[1]))


def test_set_metrics_equal_the_library_functions(system):
    from markeval import improved_precision_recall, mark_evaluate

    rng = np.random.default_rng(0)
    table = {f"r{i}": v for i, v in enumerate(rng.normal(size=(60, 8)))}
    table.update({f"c{i}": v for i, v in enumerate(rng.normal(size=(50, 8)) + 0.3)})
    refs, cands = [t for t in table if t[0] == "r"], [t for t in table if t[0] == "c"]
    settings = system.settings_for("ci")
    sets = wmt17.set_metrics(lambda texts: np.stack([table[t] for t in texts]), settings)
    scores = sets(cands, refs)
    ref, cand = sets.embed(refs), sets.embed(cands)
    for k in settings["ks"]:  # balls at a smaller K are prefixes of those at the largest
        me = mark_evaluate(ref, cand, k, progress=False)
        assert scores[("me_petersen", k)] == pytest.approx(me.petersen.score)
        assert scores[("me_capture", k)] == pytest.approx(me.capture.score)
        assert scores[("me_schnabel_quality", k)] == pytest.approx(me.schnabel_quality.score)
    ipr = improved_precision_recall(ref, cand, k=settings["ipr_k"], progress=False)
    assert scores[("ipr_precision", settings["ipr_k"])] == pytest.approx(ipr.precision)
    # every score is keyed by its registry name and its K
    assert ("prd_precision", None) in scores and ("me_capture", max(settings["ks"])) in scores
    assert {name for name, _ in scores} <= set(registry.names())


def test_word_unit_scores_every_system(system):
    settings = system.settings_for("ci")
    rows = system.compute("word/cs-en/3/1", settings)
    n_systems = len(wmt17_da_systems("cs-en"))
    assert rows.system.nunique() == n_systems and (rows["size"] == 3).all()
    assert (rows.draw == 1).all() and (rows.level == "word").all()
    # one vocabulary: registry names, K apart, IPR at the IPR paper's k only, FID positive
    assert list(rows.columns[-6:]) == list(LONG_COLUMNS)
    assert set(rows.metric) <= set(registry.names())
    named = rows.groupby("system")[["metric", "k"]].apply(
        lambda t: frozenset(zip(t.metric, t.k.fillna(0).astype(int))))
    assert named.nunique() == 1  # the same metrics for every system
    assert {("fid", 0), ("ipr_precision", settings["ipr_k"]), ("prd_precision", 0),
            ("me_petersen", 1), ("bleu", 0)} <= named.iloc[0]
    assert not ((rows.metric == "ipr_precision") & (rows.k != settings["ipr_k"])).any()
    assert set(rows[rows.metric.isin(["bleu", "bertscore", "moverscore"])].protocol) == {
        "corpus"}
    assert set(rows[~rows.metric.isin(["bleu", "bertscore", "moverscore"])].protocol) == {
        "pooled"}
    assert np.isfinite(rows.value).all() and (rows[rows.metric == "fid"].value > 0).all()


def test_segment_unit_and_compare(segment):
    settings = dict(segment.settings_for("ci"), segments=12)
    rows = segment.compute("fi-en", settings)
    assert list(rows.columns) == ["pair", "sid", "system", "human", *LONG_COLUMNS]
    assert (rows.pair == "fi-en").all() and set(rows.metric) <= set(registry.names())
    assert (rows.protocol == "segment").all() and rows.k.isna().all()
    per_metric = rows.groupby(["metric", "options"]).sid.agg(["size", "nunique"])
    assert (per_metric["size"] == 12).all() and (per_metric["nunique"] == 12).all()
    long = segment_long(rows)
    assert set(wmt17.SEGMENT_ROWS) <= set(zip(rows.metric, rows.options))
    assert len(long) == len(rows)
    # BERTScore F (HMD-F) is the harmonic mean of P and R
    wide = long.pivot(index="sid", columns="metric", values="score")
    p, r = wide["BERTScore (P)"], wide["BERTScore (R)"]
    np.testing.assert_allclose(wide["BERTScore"], 2 * p * r / (p + r), rtol=1e-6)
    corr = segment_correlations(rows)
    assert ((corr.value >= 0) & (corr.value <= 1)).all()


def test_system_compare_has_default_and_best_k(system):
    settings = system.settings_for("ci")
    rows = []
    rng = np.random.default_rng(1)
    for pair in settings["pairs"]:
        for s, human in enumerate(rng.normal(size=4)):
            for level, size in [("sentence", 16), ("word", 3), ("word", 6)]:
                named = [("bleu", None), ("bertscore", None), ("moverscore", None),
                         ("fid", None), ("prd_precision", None),
                         ("ipr_precision", settings["ipr_k"])] + [
                    (m, k) for m in ("me_schnabel_quality", "me_petersen", "me_capture")
                    for k in settings["ks"]]
                rows.append(pd.DataFrame({"pair": pair, "system": f"s{s}", "level": level,
                                          "size": size, "draw": 0, "human": human,
                                          "metric": [m for m, _ in named],
                                          "k": [k for _, k in named], "options": "",
                                          "value": human + rng.normal(size=len(named))}))
    rows = pd.concat(rows, ignore_index=True)
    table = system.compare(rows, settings)
    me = table[(table.table == "Table 2") & (table.column == "ME_Petersen")
               & (table.row == "Average (r)")]
    assert len(me) == 2 and me.setting.str.contains("default K").any()
    assert me.setting.str.contains("best single K").any()
    assert table.our_value.between(-1, 1).all()
    curve = sample_size_curve(rows)
    assert sorted(curve["size"].unique()) == [3, 6]


def test_sample_size_band_is_a_bootstrap_over_systems():
    """The band equals a plain loop: resample each pair's systems, r per pair, mean of pairs."""
    rng = np.random.default_rng(3)
    rows = pd.concat([pd.DataFrame({
        "level": "word", "size": size, "draw": 0, "pair": pair, "system": list("abcdef"),
        "metric": metric, "k": None, "options": "", "value": rng.normal(size=6),
        "human": np.arange(6.0)})
        for size in (25, 50) for pair in ("p1", "p2") for metric in ("bleu", "fid")])
    curve = sample_size_curve(rows, n_resamples=300, confidence=0.9, seed=7)
    assert list(curve.columns) == ["size", "draw", "metric", "average r", "ci_low", "ci_high"]
    assert len(curve) == 4 and (curve.ci_low <= curve["average r"]).all()
    assert (curve["average r"] <= curve.ci_high).all()
    part = rows[(rows["size"] == 50) & (rows.metric == "fid")]
    means = np.zeros(300)
    for i, pair in enumerate(["p1", "p2"]):
        table = part[part.pair == pair].set_index("system")
        pick = np.random.default_rng([7, i]).integers(0, 6, size=(300, 6))
        means += [np.corrcoef(-table.value.to_numpy()[p], table.human.to_numpy()[p])[0, 1]
                  for p in pick]
    means /= 2
    kept = means[np.isfinite(means)]
    row = curve[(curve["size"] == 50) & (curve.metric == "-FID")].iloc[0]
    np.testing.assert_allclose([row.ci_low, row.ci_high], np.quantile(kept, [0.05, 0.95]),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="confidence must be in"):
        sample_size_curve(rows, confidence=1.5)


def test_every_sentence_rows_make_one_point_of_the_curve():
    """'all' rows carry their pair's own sentence count; mapped to one size they make one
    point averaged over every pair, equal to the curve of the same rows given one size."""
    rng = np.random.default_rng(5)
    counts = {"p1": 300, "p2": 200}
    rows = pd.concat([pd.DataFrame({
        "level": "word", "size": size, "draw": 0, "pair": pair, "system": list("abcde"),
        "metric": "bleu", "k": None, "options": "", "value": rng.normal(size=5),
        "human": np.arange(5.0)})
        for pair, full in counts.items() for size in (25, full)])
    assert sorted(sample_size_curve(rows, n_resamples=50)["size"]) == [25, 200, 300]
    pooled = every_sentence_as_one_size(rows, counts)
    assert pooled[pooled["size"] == 25].equals(rows[rows["size"] == 25])
    curve = sample_size_curve(pooled, n_resamples=50)
    assert sorted(curve["size"]) == [25, 300]
    same = sample_size_curve(rows.assign(size=rows["size"].where(rows["size"] == 25, 7)),
                             n_resamples=50)
    np.testing.assert_array_equal(curve[curve["size"] == 300].iloc[:, 2:].to_numpy(),
                                  same[same["size"] == 7].iloc[:, 2:].to_numpy())
    with pytest.raises(ValueError, match=r"no count for the pairs \['p2'\]"):
        every_sentence_as_one_size(rows, {"p1": 300})


def test_the_second_encoder_reads_the_papers_layers():
    segment, system = get_stage("wmt17_segment_mpnet"), get_stage("wmt17_system_mpnet")
    full = segment.settings_for("full")
    assert full["encoder"] == "all-mpnet-base-v2" and full["segments"] is None
    assert segment.units(full) == wmt17.SEGMENT_PAIRS
    # BERT's last five layers beside mpnet's last five, layer for layer; MiniLM's from the top
    table6 = {m: rows for m, rows in wmt17.segment_rows("all-mpnet-base-v2").items()
              if rows[0][0] == "Table 6"}
    assert {m for m in table6 if m[1].startswith("layer")} == {
        wmt17.layer_metric(n) for n in range(8, 13)}
    assert table6[("moverscore", "layer 9")] == [("Table 6", "Wmd-1 + BERT + Layer 9")]
    assert wmt17.segment_rows("all-MiniLM-L6-v2")[wmt17.layer_metric(2)] == [
        ("Table 6", "Wmd-1 + BERT + Layer 8")]
    assert wmt17.ENCODER_LAYERS["all-mpnet-base-v2"] == {"layers": 12, "same": 9}
    # a stated subset at system level: 500 sentences, one draw of 50
    s_full = system.settings_for("full")
    assert (s_full["sentences"], s_full["word_sizes"], s_full["word_draws"]) == (500, [50], [1])
    assert system.check_units(s_full) == ["word/cs-en/50/0"]
    assert segment.check_units(full) == ["lv-en"]
    # the MiniLM stages keep their settings (their finished units stay valid)
    assert get_stage("wmt17_system").settings_for("full")["encoder"] == "all-MiniLM-L6-v2"


# --- the curve beyond 200 sentences (wmt17_word_curve) -----------------------------------


def test_word_curve_units_are_one_system_at_one_size():
    from markeval.reproduce.stages.wmt17_word_curve import unit_size

    curve = get_stage("wmt17_word_curve")
    full = curve.settings_for("full")
    assert full["neighbours"] == "index"
    assert all(size == "all" or size > 200 for size in full["word_sizes"])
    units = curve.units(full)
    systems = {pair: list(wmt17_da_systems(pair).system) for pair in full["pairs"]}
    assert len(units) == len(set(units)) == (len(full["word_sizes"])
                                             * sum(map(len, systems.values())))
    for unit in units:
        level, pair, size, system = unit.split("/")
        assert level == "word" and system in systems[pair]
        assert size == "all" or unit_size(size) > 200
    # the settings that only pick units stay out of the cache key: a new size keeps the others
    assert set(curve.selection) == {"pairs", "word_sizes"}
    # dispatched costliest first: every sentence of cs-en (3005) > of zh-en (2001) > 400
    cost = [curve.cost(f"word/{pair}/{size}/online-A.0", full)
            for pair, size in (("cs-en", "all"), ("zh-en", "all"), ("cs-en", "400"))]
    assert cost == sorted(cost, reverse=True) and len(set(cost)) == 3
    assert unit_size("all") is None and unit_size("25") == 25
    for bad in ("0", "-3", "some"):
        with pytest.raises(ValueError, match=f"size must be a positive number of sentences or "
                                             f"'all', got '{bad}'"):
            unit_size(bad)
    with pytest.raises(ValueError, match="unit must be 'word/<pair>/<size>/<system>', got"):
        curve.compute("word/cs-en/400", full)


def test_a_word_curve_unit_is_its_systems_rows_of_the_whole_pair():
    """A system's rows do not depend on the other systems of its pair: one system alone gives
    the rows the whole pair's computation gives it (exact balls, so bit for bit)."""
    curve = get_stage("wmt17_word_curve")
    settings = dict(curve.settings_for("ci"), neighbours="exact")
    whole = wmt17.score_systems("word", "cs-en", 4, 0, settings)
    one = curve.compute("word/cs-en/4/online-A.0", settings)
    pd.testing.assert_frame_equal(one, whole[whole.system == "online-A.0"].reset_index(drop=True))
    with pytest.raises(KeyError, match=r"systems \['online-Z'\] are not among cs-en's"):
        wmt17.score_systems("word", "cs-en", 4, 0, settings, systems=["online-Z"])


def test_recent_system_unit_applies_the_small_set_rule_and_equals_the_library():
    """wmt17_system_recent: MAUVE only where a subset gives enough buckets, every other metric
    at every size; each value is the library function's on the subset's sentence vectors."""
    from markeval import mark_evaluate, mauve
    from markeval.datasets import load_wmt17, wmt17_system_match
    from markeval.encoders import sentence_embeddings

    stage = get_stage("wmt17_system_recent")
    full = stage.settings_for("full")
    assert stage.units(full) == wmt17.SYSTEM_PAIRS and None in full["sizes"]
    settings = dict(stage.settings_for("ci"), sizes=[20, 40], draws=[1, 1],
                    metrics=["me_petersen", "mauve"], mauve_min_buckets=3)
    rows = stage.compute("cs-en", settings)
    assert list(rows.columns) == ["pair", "system", "level", "size", "draw", "human",
                                  *LONG_COLUMNS]
    assert set(rows.system) == set(wmt17_da_systems("cs-en").system)
    # 20 sentences: auto_buckets 2 < 3, no MAUVE; 40: 4 buckets
    assert set(rows[rows["size"] == 20].metric) == {"me_petersen"}
    assert set(rows[rows["size"] == 40].metric) == {"me_petersen", "mauve"}
    assert rows[rows.metric == "me_petersen"].k.eq(1).all() and rows[
        rows.metric == "mauve"].k.isna().all()
    # the library on the same vectors (encoded as the unit does: every needed sentence at once)
    data = load_wmt17("cs-en", detokenize=True)
    keep = wmt17.sentence_subset_of("cs-en", 40, 0)
    needed = np.unique(np.concatenate([wmt17.sentence_subset_of("cs-en", 20, 0), keep]))
    system = "online-A.0"
    outputs = data.systems[wmt17_system_match("cs-en").mapping[system]]
    ref, cand = (sentence_embeddings([texts[i] for i in needed], progress=False
                                     ).astype(np.float64)[np.searchsorted(needed, keep)]
                 for texts in (data.references, outputs))
    got = rows[(rows.system == system) & (rows["size"] == 40)].set_index("metric").value
    me = mark_evaluate(ref, cand, 1, progress=False)
    assert got["me_petersen"] == pytest.approx(me.petersen.score, abs=1e-12)
    assert got["mauve"] == pytest.approx(mauve(ref, cand, seed=0).mauve, abs=1e-12)
    with pytest.raises(KeyError, match="pair 'de-en' is not in this profile's pairs"):
        stage.compute("de-en", settings)
    with pytest.raises(ValueError, match="sizes and draws must have the same length"):
        stage.units(dict(settings, draws=[1]))


def test_the_sentence_level_curve_reads_sentence_rows_only():
    rows = pd.DataFrame({"level": ["sentence"] * 4 + ["word"] * 4, "size": 100, "draw": 0,
                         "pair": "p1", "system": list("abcd") * 2, "metric": "mauve", "k": None,
                         "options": "", "value": [1.0, 2.0, 3.0, 5.0, 4.0, 3.0, 2.0, 1.0],
                         "human": [1.0, 2.0, 3.0, 4.0] * 2})
    sentence = sample_size_curve(rows, level="sentence", n_resamples=20)
    word = sample_size_curve(rows, n_resamples=20)
    assert sentence["average r"].iloc[0] > 0.9 and word["average r"].iloc[0] == pytest.approx(-1)
    with pytest.raises(ValueError, match="level"):
        sample_size_curve(rows, level="segment")
