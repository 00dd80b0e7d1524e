"""Summary-level (per topic, then averaged) correlation on a fabricated TAC-layout data set."""

import json

import numpy as np
import pytest

from markeval.datasets import load_tac
from markeval.experiments.summarization import (
    SummaryItem, pairwise_scores, summary_items, summary_level_correlations)
from markeval.stats import correlation
from conftest import use_fake_data


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
    use_fake_data(monkeypatch, tmp_path)
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
    # the MoverScore authors' protocol: every human summary meets all four, its own included
    leaky = [i for i in summary_items(topics, include_human=True, human_references="all")
             if i.is_human]
    assert [i.summ_id for i in leaky] == [i.summ_id for i in humans]
    for item in leaky:
        assert len(item.references) == 4
        assert any(ref.startswith(f"reference {item.summ_id} ") for ref in item.references)


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
    with pytest.raises(ValueError, match="aggregate must be one of 'mean', 'max', got 'median'"):
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
    with pytest.raises(ValueError, match="human_references must be one of 'others', 'all', "
                                         "got 'mine'"):
        summary_items(topics, include_human=True, human_references="mine")


# --------------------------------------------------------------------------- set metrics

from markeval.distribution.ipr import improved_precision_recall  # noqa: E402
from markeval.distribution.prd import prd  # noqa: E402
from markeval.experiments.summarization import set_scores  # noqa: E402
from markeval.experiments.word_set_metrics import WordSetMetrics  # noqa: E402
from markeval.population.mark_evaluate import mark_evaluate  # noqa: E402


def test_set_scores_passes_each_summary_its_reference_set_and_jackknifes_humans(fabricated):
    _, topics = fabricated
    items = summary_items(topics, include_human=True)
    seen = []

    def metric(candidates, references):
        seen.append((candidates, references))
        return {"n_refs": len(references), "words": len(candidates[0].split())}

    out = set_scores(items, metric)
    assert len(seen) == len(items)  # one call per summary, with the whole reference set
    assert all(len(c) == 1 and c[0] == i.text for (c, _), i in zip(seen, items))
    assert out["n_refs"].tolist() == [3.0 if i.is_human else 4.0 for i in items]
    for (_, refs), item in zip(seen, items):
        if item.is_human:  # its own summary is not among its references
            assert not any(r.startswith(f"reference {item.summ_id} ") for r in refs)
    single = set_scores(items, lambda c, r: float(len(c[0].split())))
    assert isinstance(single, np.ndarray) and single.tolist() == out["words"].tolist()


def test_set_scores_bad_input(fabricated):
    _, topics = fabricated
    items = summary_items(topics)
    with pytest.raises(TypeError, match="metric must be a callable"):
        set_scores(items, "ipr")
    with pytest.raises(ValueError, match="no summaries to score"):
        set_scores([], lambda c, r: 1.0)
    with pytest.raises(TypeError, match="must return a float or a mapping name -> float, got str"):
        set_scores(items, lambda c, r: "0.5")
    names = iter([{"a": 1.0}, {"b": 1.0}])
    with pytest.raises(ValueError, match=r"\['b'\] for item 1 but \['a'\] for item 0"):
        set_scores(items, lambda c, r: next(names))
    with pytest.raises(ValueError, match="non-finite 'a' nan for summary '1' of topic 'D01'"):
        set_scores(items, lambda c, r: {"a": float("nan")})


def _fake_embed(dim=6, seed=3):
    """Word -> a fixed random vector; every word of the texts is one sample."""
    rng, table = np.random.default_rng(seed), {}

    def embed(texts):
        words = [w for t in texts for w in t.split()]
        for w in words:
            if w not in table:
                table[w] = rng.normal(size=dim)
        return np.array([table[w] for w in words]).reshape(len(words), dim)

    return embed


def test_word_set_metrics_equal_the_library_metrics_at_every_k():
    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(300)]
    refs = [" ".join(rng.choice(vocab[:200], 40)) for _ in range(4)]
    cand = [" ".join(rng.choice(vocab[100:], 35))]
    embed = _fake_embed()
    scorer = WordSetMetrics(embed, ks=(1, 3, 5), prd_clusters=5, prd_runs=2, seed=4)
    got = scorer(cand, refs)
    R, C = embed(refs), embed(cand)
    for k in (1, 3, 5):
        me = mark_evaluate(R, C, k=k)
        assert got[("me_petersen", k)] == me.petersen.score
        assert got[("me_schnabel_quality", k)] == me.schnabel_quality.score
        assert got[("me_capture", k)] == me.capture.score
        assert got[("ipr_precision", k)] == improved_precision_recall(R, C, k=k).precision
    # PRD: the reference samples subsampled to the summary's size with the same seed.
    pick = np.sort(np.random.default_rng(4).choice(len(R), len(C), replace=False))
    assert got[("prd_precision", None)] == prd(R[pick], C, num_clusters=5, num_runs=2,
                                               seed=4).f_beta_inv
    assert list(got) == scorer.names and len(set(got.values())) > 3
    # Deterministic, and the cached reference geometry gives the same numbers on a new call.
    assert scorer(cand, refs) == got == WordSetMetrics(embed, ks=(5, 1, 3), prd_clusters=5,
                                                      prd_runs=2, seed=4)(cand, refs)


def test_word_set_metrics_through_a_neighbour_index():
    """An index that probes every list settles exact balls: the same scores as exact. One
    that probes one of many lists misses neighbours: other scores (so it is used)."""
    pytest.importorskip("faiss")
    from markeval.geometry import IndexSettings

    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(400)]
    refs = [" ".join(rng.choice(vocab[:300], 300)) for _ in range(4)]
    cand = [" ".join(rng.choice(vocab[100:], 400))]
    embed = _fake_embed(dim=8)
    exact = WordSetMetrics(embed, ks=(1, 3), prd_clusters=5, prd_runs=1)(cand, refs)
    everything = IndexSettings(probes=10_000, audit=0)
    scorer = WordSetMetrics(embed, ks=(1, 3), prd_clusters=5, prd_runs=1,
                            neighbours=everything)
    assert scorer(cand, refs) == exact
    poor = IndexSettings(candidates=8, escalate=1, lists_per_sqrt_n=4, probes=1, audit=0)
    missed = WordSetMetrics(embed, ks=(1, 3), prd_clusters=5, prd_runs=1,
                            neighbours=poor)(cand, refs)
    assert missed[("prd_precision", None)] == exact[("prd_precision", None)] and missed != exact


def test_word_set_metrics_reuse_the_reference_set_and_score_short_summaries_zero():
    calls = []
    base = _fake_embed()

    def embed(texts):
        calls.append(tuple(texts))
        return base(texts)

    refs = ["a b c d e f g h", "i j k l m n o p"]
    scorer = WordSetMetrics(embed, ks=(1, 2), prd_clusters=3, prd_runs=1)
    scorer(["a b c d"], refs)
    scorer(["e f g h i"], refs)
    assert calls.count(tuple(refs)) == 1  # the reference samples are embedded once
    zero = scorer(["a b"], refs)  # 2 samples < min_samples = max(K_max + 1, clusters) = 3
    assert set(zero.values()) == {0.0} and scorer.n_too_short == 1
    assert scorer([""], refs)[("prd_precision", None)] == 0.0 and scorer.n_too_short == 2


def test_word_set_metrics_bad_input():
    with pytest.raises(TypeError, match="embed must be a callable"):
        WordSetMetrics("minilm")
    with pytest.raises(ValueError, match=r"ks\[0\] must be a positive int, got 0"):
        WordSetMetrics(_fake_embed(), ks=(0, 1))
    with pytest.raises(ValueError, match="ks has repeated values"):
        WordSetMetrics(_fake_embed(), ks=(1, 1))
    with pytest.raises(ValueError, match="dtype must be one of 'float32', 'float64'"):
        WordSetMetrics(_fake_embed(), dtype="float16")
    with pytest.raises(ValueError, match=r"neighbours must be one of \('exact', 'index'\) or "
                                         r"an IndexSettings, got 'fast'"):
        WordSetMetrics(_fake_embed(), neighbours="fast")
    with pytest.raises(ValueError, match="the references give 2 samples; at least 20 are needed"):
        WordSetMetrics(_fake_embed())(["a b c"], ["x y"])


def test_pipeline_with_set_scores_reports_the_constant_topic(fabricated):
    data, topics = fabricated
    items = summary_items(topics)
    scores = set_scores(items, lambda c, r: {"words": float(len(c[0].split()))})
    table = summary_level_correlations(scores, items, methods=["kendall"], n_resamples=0)
    row = table[table.human == "responsiveness"].iloc[0]
    assert row.undefined == "D03" and row.n_topics == 2
