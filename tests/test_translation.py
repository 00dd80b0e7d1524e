"""System- and segment-level meta-evaluation on WMT17 DA (real data) and its bad inputs."""

import re

import numpy as np
import pandas as pd
import pytest

import markeval
from markeval.datasets import load_wmt17, wmt17_da_segments, wmt17_da_systems
from markeval.experiments.translation import (
    correlations_by_pair, metric_agreement, segment_level_scores, sentence_subset,
    system_level_scores)
from markeval.stats import pearson
from conftest import needs_wmt17, use_fake_data


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
    assert row.significant and row.p_value < 0.05 and row.undefined == ""
    back = tests[(tests.metric_a == "length") & (tests.metric_b == "sentbleu")].iloc[0]
    assert back.t == pytest.approx(-row.t) and not back.significant
    # With signs, a metric and its negation have r13 = -r12 by construction: no test exists,
    # and the table says why instead of raising (or not, by the last bit of r23).
    negation = tests[(tests.metric_a == "length") & (tests.metric_b == "negative length")].iloc[0]
    assert np.isnan(negation.t) and np.isnan(negation.p_value) and not negation.significant
    assert "exact negations" in negation.undefined
    # By size, they are the same metric: t = 0, p = 1 in both directions.
    sizes = metric_agreement(table, absolute=True)
    same = sizes[sizes.metric_a.isin(["length", "negative length"])
                 & sizes.metric_b.isin(["length", "negative length"])]
    assert len(same) == 2 and (same.t == 0.0).all() and (same.p_value == 1.0).all()
    assert (sizes.undefined == "").all()


def test_metric_agreement_reports_flat_and_duplicated_metrics():
    rng = np.random.default_rng(0)
    human = rng.standard_normal(30)
    good = human + rng.standard_normal(30)
    metrics = {"good": good, "copy": 2 * good + 1, "flat": np.ones(30),
               "noise": rng.standard_normal(30)}
    table = pd.DataFrame([("p", f"s{i}", name, float(v[i]), float(human[i]))
                          for name, v in metrics.items() for i in range(30)],
                         columns=["pair", "system", "metric", "score", "human"])
    tests = metric_agreement(table).set_index(["metric_a", "metric_b"])
    assert len(tests) == 12
    assert tests.loc[("good", "copy"), ["t", "p_value"]].tolist() == [0.0, 1.0]
    flat = tests.loc[("flat", "good")]
    assert np.isnan(flat.t) and not flat.significant
    assert flat.undefined == "flat: constant metric score (1 for all 30 items)"
    assert tests.loc[("good", "flat")].undefined == "flat: constant metric score (1 for all 30 items)"
    assert tests.loc[("good", "noise")].significant and tests.loc[("good", "noise")].undefined == ""


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
    with pytest.raises(TypeError, match="absolute must be True or False, got str: 'yes'"):
        metric_agreement(broken, absolute="yes")
    with pytest.raises(TypeError, match="absolute must be True or False, got int: 1"):
        correlations_by_pair(broken, absolute=1)


@needs_wmt17
def test_bad_subset_and_short_metric_output():
    with pytest.raises(ValueError, match=r"subset must hold indices in \[0, 3004\)"):
        system_level_scores("de-en", {"bleu": _bleu}, subset=[5000])
    with pytest.raises(ValueError, match="returned 1 scores for 560 segments"):
        segment_level_scores("de-en", {"short": lambda h, r: [0.0]})


@needs_wmt17
def test_a_metric_family_gives_one_row_per_label_and_segments_can_be_subset():
    subset = sentence_subset(len(load_wmt17("cs-en").references), 40)
    family = system_level_scores("cs-en", {"n": lambda h, r: {"bleu": _bleu(h, r),
                                                             "length": _length(h, r)}},
                                 subset=subset)
    single = system_level_scores("cs-en", {"n bleu": _bleu, "n length": _length}, subset=subset)
    pd.testing.assert_frame_equal(family, single)
    full = segment_level_scores("cs-en", {"len": _sentence_length})
    part = segment_level_scores("cs-en", {"m": lambda h, r: {"len": _sentence_length(h, r)}},
                                subset=[3, 1, 7])
    assert part["sid"].tolist() == full["sid"].iloc[[3, 1, 7]].tolist()
    assert part["score"].tolist() == full["score"].iloc[[3, 1, 7]].tolist()
    assert part["metric"].unique().tolist() == ["m len"]
    with pytest.raises(ValueError, match=r"subset must hold positions in \[0, 560\)"):
        segment_level_scores("cs-en", {"len": _sentence_length}, subset=[560])
    with pytest.raises(ValueError, match="metric 'e' returned an empty mapping"):
        segment_level_scores("cs-en", {"e": lambda h, r: {}}, subset=[0])


def _split_final_periods(tokens):
    """Tokens as the files' tokenizer wrote them, where sacremoses' tokenizer differs.

    It keeps "away." whole before a lower-case word (the files are lower-cased), and splits a
    run of untranslated Chinese characters into single characters.
    """
    out = []
    for tok in tokens:
        if len(tok) > 1 and tok.endswith(".") and tok.strip("."):
            out.extend([tok[:-1], "."])
        else:
            out.append(tok)
    return re.sub(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])", "", " ".join(out)).split()


@needs_wmt17
@pytest.mark.parametrize("pair", ["cs-en", "de-en", "zh-en"])
def test_detokenizer_round_trip(pair):
    """Detokenized text re-tokenizes (sacremoses, escaping on) to the files' tokens."""
    from sacremoses import MosesTokenizer

    tokenize = MosesTokenizer("en").tokenize
    raw, detok = load_wmt17(pair), load_wmt17(pair, detokenize=True)
    system = sorted(raw.systems)[0]
    lines = list(zip(raw.references + raw.systems[system], detok.references + detok.systems[system]))
    same = np.mean([_split_final_periods(tokenize(d, escape=True)) == _split_final_periods(r.split())
                    for r, d in lines])
    assert same >= 0.98, f"{pair}: only {same:.3f} of the lines survive the round trip"
    # And detokenizing is idempotent on text it produced itself.
    from sacremoses import MosesDetokenizer
    again = MosesDetokenizer("en").detokenize
    for _, d in lines[:300]:
        assert again(tokenize(d, escape=False)) == again(tokenize(again(tokenize(d, escape=False)), escape=False))


def test_pipeline_on_a_tiny_fake_wmt17_layout(tmp_path, monkeypatch):
    """Loader, system and segment tables and correlations on files written here."""
    from markeval.datasets import _sources

    folder = tmp_path / "wmt17"
    for rel in _sources.WMT17.files:  # every file must exist for the folder to count
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("x .\ny .\nz .\n", encoding="utf-8")
    systems = _sources.WMT17_SYSTEMS["cs-en"]
    (folder / _sources.wmt17_reference_file("cs-en")).write_text(
        "the cat sat .\nit rained .\nwe won &apos;t go .\n", encoding="utf-8")
    # System i repeats a word i times per line: its mean length grows with i.
    for i, system in enumerate(systems):
        lines = [" ".join(["word"] * (i + 1) + ["."]) for _ in range(3)]
        (folder / _sources.wmt17_system_file("cs-en", system)).write_text(
            "\n".join(lines) + "\n", encoding="utf-8")
    human = [0.3, -0.1, 0.5, 0.2]
    (folder / "DA-syslevel.csv").write_text(
        "LP HUMAN SYSTEM\n" + "".join(f"cs-en {h} {s}\n" for h, s in zip(human, systems)))
    seg_rows = [(systems[0], 1, 0.4), (systems[1], 2, -0.2), (systems[2], 3, 0.9)]
    (folder / "DA-seglevel.csv").write_text(
        "LP DATA SYSTEM SID HUMAN\n"
        + "".join(f"cs-en newstest2017 {s} {sid} {h}\n" for s, sid, h in seg_rows))
    use_fake_data(monkeypatch, tmp_path)

    data = load_wmt17("cs-en", detokenize=True)
    assert data.references == ("the cat sat.", "it rained.", "we won't go.")
    table = system_level_scores("cs-en", {"length": _length})
    # System i writes i + 1 words; detokenized, the period joins the last one.
    assert table["score"].tolist() == [1.0, 2.0, 3.0, 4.0]
    corr = correlations_by_pair(table, n_resamples=0).iloc[0]
    assert corr.n == 4 and corr.value == pytest.approx(np.corrcoef([1, 2, 3, 4], human)[0, 1])
    seg = segment_level_scores("cs-en", {"length": _sentence_length})
    assert seg["score"].tolist() == [1.0, 2.0, 3.0] and seg["human"].tolist() == [0.4, -0.2, 0.9]
    assert correlations_by_pair(seg, n_resamples=0).iloc[0].value == pytest.approx(
        np.corrcoef([1, 2, 3], [0.4, -0.2, 0.9])[0, 1])
