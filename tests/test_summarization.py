"""Summary-level (per topic, then averaged) correlation on a fabricated TAC-layout data set."""

import json

import numpy as np
import pytest

from markeval.datasets import load_tac
from markeval.experiments.summarization import (
    SummaryItem, pairwise_scores, summary_items, summary_level_correlations)
from markeval.stats import correlation


def _fabricate(root, year):
    """Three topics in the TAC JSON layout; topic D03 has constant responsiveness."""
    rng = np.random.default_rng(7)
    data = {}
    for topic, constant in (("D01", False), ("D02", False), ("D03", True)):
        # Some real ids carry a '.txt' suffix; the jackknife must still find the summarizer.
        refs = [{"id": f"{topic}-A.M.100.A.{who}" + (".txt" if who in "BD" else ""), "text": [f"reference {who} of {topic} ."]}
                for who in "ABCD"]
        annotations = []
        for k in range(6):
            annotations.append({"summ_id": k + 1, "topic_id": topic,
                                "text": ["word " * (k + 1)] if k else [],  # one empty summary
                                "pyr_score": float(rng.uniform()), "pyr_mod_score": 0.1,
                                "responsiveness": 3.0 if constant else float(rng.integers(1, 6))})
        for who in "AB":
            annotations.append({"summ_id": who, "topic_id": topic, "text": [f"human {who} ."],
                                "pyr_score": 0.9, "pyr_mod_score": None, "responsiveness": 5.0})
        data[topic] = {"references": refs, "annotations": annotations}
    folder = root / "tac"
    folder.mkdir(parents=True, exist_ok=True)
    name = {2008: "tac.08.mds.gen.resp-pyr.json", 2009: "tac.09.mds.gen.resp-pyr.json"}[year]
    (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return data


@pytest.fixture
def fabricated(tmp_path, monkeypatch):
    data = _fabricate(tmp_path, 2008)
    _fabricate(tmp_path, 2009)  # the loader wants the whole data set's files in the folder
    monkeypatch.setenv("MARKEVAL_DATA", str(tmp_path))
    return data, load_tac(2008)


def _length(hyps, refs):
    return [float(len(h.split())) for h in hyps]


def test_items_exclude_humans_by_default_and_jackknife_them_when_included(fabricated):
    _, topics = fabricated
    items = summary_items(topics)
    assert len(items) == 18 and not any(i.is_human for i in items)
    assert all(len(i.references) == 4 for i in items)
    assert items[0].text == ""  # the empty summary is kept, not dropped
    with_humans = summary_items(topics, include_human=True)
    humans = [i for i in with_humans if i.is_human]
    assert len(humans) == 6
    for item in humans:
        assert len(item.references) == 3
        assert all(not ref.startswith(f"reference {item.summ_id} ") for ref in item.references)


def test_pipeline_correlates_per_topic_then_averages_and_reports_the_constant_topic(fabricated):
    data, topics = fabricated
    items = summary_items(topics)
    lengths = pairwise_scores(items, _length)
    table = summary_level_correlations({"length": lengths}, items, n_resamples=0)
    assert len(table) == 2 * 3
    # Direct computation from the JSON the test wrote.
    for human in ("pyr_score", "responsiveness"):
        for method in ("pearson", "kendall", "spearman"):
            per_topic = []
            for topic in ("D01", "D02", "D03"):
                peers = [a for a in data[topic]["annotations"] if isinstance(a["summ_id"], int)]
                x = [len(" ".join(a["text"]).split()) for a in peers]
                y = [a[human] for a in peers]
                if np.ptp(y) > 0:
                    per_topic.append(correlation(x, y, method, n_resamples=0).value)
            row = table[(table.human == human) & (table.method == method)].iloc[0]
            assert row.value == pytest.approx(np.mean(per_topic), abs=1e-12)
            assert row.n_topics == len(per_topic)
            assert row.undefined == ("D03" if human == "responsiveness" else "")
    assert not table.value.isna().any()


def test_rescaling_responsiveness_changes_no_per_topic_correlation(fabricated):
    _, topics = fabricated
    items = summary_items(topics)
    lengths = pairwise_scores(items, _length)
    rescaled = [SummaryItem(i.topic, i.summ_id, i.is_human, i.text, i.references, i.pyr_score,
                            (i.responsiveness - 1) / 4) for i in items]
    a = summary_level_correlations({"m": lengths}, items, human=["responsiveness"], n_resamples=0)
    b = summary_level_correlations({"m": lengths}, rescaled, human=["responsiveness"],
                                   n_resamples=0)
    np.testing.assert_allclose(a.value, b.value, atol=1e-12)


def test_aggregate_mean_and_max_over_references():
    item = SummaryItem("t", "1", False, "a b", ("r1", "r2", "r3"), 0.1, 1.0)
    calls = []

    def per_reference(hyps, refs):
        calls.append(len(hyps))
        return [float(r[1]) for r in refs]

    assert pairwise_scores([item], per_reference).tolist() == [2.0]
    assert pairwise_scores([item], per_reference, aggregate="max").tolist() == [3.0]
    assert calls == [3, 3]  # one batched call per scoring


def test_bad_input(fabricated):
    _, topics = fabricated
    items = summary_items(topics)
    with pytest.raises(ValueError, match="aggregate must be one of mean, max, got 'median'"):
        pairwise_scores(items, _length, aggregate="median")
    with pytest.raises(ValueError, match="one score per pair"):
        pairwise_scores(items, lambda h, r: [1.0])
    with pytest.raises(ValueError, match="non-finite score nan for pair 0"):
        pairwise_scores(items, lambda h, r: [float("nan")] * len(h))
    with pytest.raises(TypeError, match="metric must be a callable"):
        pairwise_scores(items, "rouge1")
    with pytest.raises(ValueError, match="metric 'm' has 2 scores for 18 summaries"):
        summary_level_correlations({"m": [1, 2]}, items)
    with pytest.raises(ValueError, match="unknown human score 'pyramid'"):
        summary_level_correlations({"m": np.zeros(18)}, items, human=["pyramid"])
    with pytest.raises(ValueError, match="topics are empty"):
        summary_items([])
