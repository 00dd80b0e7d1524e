"""markeval.semantic.bertscore: greedy matching, the bertscore() API, baseline rescaling.

Tolerances: parity with the bert-score package (0.3.13, same local MiniLM directory, same
layer) on 500 WMT17 segment pairs ≤ 1e-5 absolute per segment (both compute in float32 on
the same vectors; measured max difference ≈ 3e-7). Hand-made vectors: 1e-12.
"""

from __future__ import annotations

import math
import os
import warnings

from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from conftest import needs_wmt17
from markeval.encoders import TruncationWarning, default_model, resolve_encoder
from markeval.semantic.baseline import compute_baseline, load_baseline
from markeval.semantic.bertscore import BERTScoreResult, bertscore
from markeval.semantic.greedy import greedy_match
from markeval.semantic.tokens import EmptyTextWarning
from markeval.semantic.idf import IDFWeights, idf_weights

PARITY_ATOL = 1e-5
LAYER = 6


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One intra-op thread: on a shared CPU, spinning thread pools cost more than they give."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --------------------------------------------------------------------------- greedy_match


def test_hand_example():
    # cos(x, x) = 1, cos(y, x) = 0, cos(x, (1,1)) = cos(y, (1,1)) = 1/sqrt(2)
    h = [[1.0, 0.0], [0.0, 1.0]]
    r = [[2.0, 0.0], [1.0, 1.0]]
    s = 1 / math.sqrt(2)
    p, rc, f = greedy_match(h, r, [1, 1], [1, 1])
    assert p == pytest.approx((1 + s) / 2, abs=1e-12)
    assert rc == pytest.approx((1 + s) / 2, abs=1e-12)
    assert f == pytest.approx((1 + s) / 2, abs=1e-12)
    # Weights 3 and 1 on the hypothesis side: P = (3*1 + 1*s) / 4
    p, rc, f = greedy_match(h, r, [3, 1], [1, 1])
    assert p == pytest.approx((3 + s) / 4, abs=1e-12)
    assert f == pytest.approx(2 * p * rc / (p + rc), abs=1e-12)


def test_zero_weight_rows_are_still_matched():
    # The reference's second row weighs 0 (a special token) but is the hypothesis' best match.
    p, r, _ = greedy_match([[0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [1], [1, 0])
    assert p == pytest.approx(1.0) and r == pytest.approx(0.0)


def test_zero_weight_side_scores_zero():
    assert greedy_match([[1.0, 0.0]], [[1.0, 0.0]], [0], [1]) == (0.0, 1.0, 0.0)


vectors = st.integers(1, 6).flatmap(
    lambda n: arrays(np.float64, (n, 3), elements=st.floats(-1, 1, allow_subnormal=False))
)


@settings(max_examples=60, deadline=None)
@given(vectors, vectors, st.randoms(use_true_random=False))
def test_permuting_hypothesis_tokens_changes_nothing(h, r, rnd):
    """Given fixed token vectors, matching ignores order (uniform weights)."""
    h = h + np.array([0, 0, 3.0])  # keep rows away from the zero vector
    r = r + np.array([0, 0, 3.0])
    order = list(range(len(h)))
    rnd.shuffle(order)
    a = greedy_match(h, r, np.ones(len(h)), np.ones(len(r)))
    b = greedy_match(h[order], r, np.ones(len(h)), np.ones(len(r)))
    np.testing.assert_allclose(a, b, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(vectors, vectors)
def test_swap_exchanges_precision_and_recall_and_bounds(h, r):
    h = h + np.array([0, 0, 3.0])
    r = r + np.array([0, 0, 3.0])
    p, rc, f = greedy_match(h, r, np.ones(len(h)), np.ones(len(r)))
    p2, rc2, f2 = greedy_match(r, h, np.ones(len(r)), np.ones(len(h)))
    assert p == pytest.approx(rc2) and rc == pytest.approx(p2) and f == pytest.approx(f2)
    assert -1 - 1e-12 <= min(p, rc) and max(p, rc, f) <= 1 + 1e-12
    same = greedy_match(h, h, np.ones(len(h)), np.ones(len(h)))
    np.testing.assert_allclose(same, 1.0, atol=1e-12)


@pytest.mark.parametrize("args, match", [
    (([[1.0]], [[1.0, 0.0]], [1], [1]), "dimension 1 but ref_vecs has dimension 2"),
    (([[0.0, 0.0]], [[1.0, 0.0]], [1], [1]), "hyp_vecs row 0 is the zero vector"),
    (([[1.0, 0.0]], [[1.0, 0.0]], [1, 1], [1]), r"hyp_w must have shape \(1,\)"),
    (([[1.0, 0.0]], [[1.0, 0.0]], [1], [-1]), "ref_w must be finite and non-negative"),
    (([], [[1.0, 0.0]], [], [1]), "hyp_vecs must be a non-empty 2-D array"),
    (([[np.nan, 0.0]], [[1.0, 0.0]], [1], [1]), "hyp_vecs contains NaN"),
])
def test_greedy_match_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        greedy_match(*args)


# --------------------------------------------------------------------------- bertscore()


def test_identical_texts_score_one():
    texts = ["the cat sat on the mat", "Stocks fell sharply on Monday."]
    w = idf_weights(texts)
    s = bertscore(texts, texts, idf=w, progress=False)
    np.testing.assert_allclose([s.precision, s.recall, s.f1], 1.0, atol=1e-6)


def test_result_types_and_signature():
    s = bertscore(["a cat sat"], ["the cat sat"], progress=False, layer=4)
    assert type(s.f1) is float and all(type(x) is float for x in s.sentence_recall)
    device = default_model().device  # "auto": the GPU where there is one
    assert s.signature.startswith(
        f"bertscore|model:sentence-transformers/all-MiniLM-L6-v2|device:{device}|layer:4|"
        "idf:no|rescale:no|")
    s = bertscore(["a cat sat"], ["the cat sat"], progress=False, layer=-1,
                  idf=idf_weights(["the cat sat", "a dog"]))
    assert "|layer:6|idf:yes(M=2)|" in s.signature


def test_result_protocol():
    s = bertscore(["a cat sat", "stocks fell"], ["the cat sat", "prices dropped"],
                  progress=False)
    assert s.score == s.f1 and s.item_scores == s.sentence_f1
    assert BERTScoreResult.higher_is_better is True


def test_corpus_score_is_mean_of_segments():
    s = bertscore(["a cat sat", "dogs bark", "rain"], ["the cat sat", "a dog barked", "sun"],
                  progress=False)
    assert s.f1 == pytest.approx(np.mean(s.sentence_f1))
    assert s.precision == pytest.approx(np.mean(s.sentence_precision))


def test_multiple_references_take_elementwise_max():
    hyp = ["the cat sat on the mat"]
    r1, r2 = "a cat was sitting on the mat", "the feline sat"
    both = bertscore(hyp, [[r1, r2]], progress=False)
    one = bertscore(hyp * 2, [r1, r2], progress=False)
    assert both.sentence_precision[0] == max(one.sentence_precision)
    assert both.sentence_recall[0] == max(one.sentence_recall)
    assert both.sentence_f1[0] == max(one.sentence_f1)


def test_empty_text_scores_zero_with_warning():
    # empty hypothesis, empty reference, blank (white-space only) hypothesis, a normal pair
    with pytest.warns(EmptyTextWarning, match="3 hypothesis-reference pairs have an empty side"):
        s = bertscore(["", "a cat", "  ", "a cat"], ["the cat", "", "the cat", "the cat"],
                      progress=False)
    assert s.sentence_f1[:3] == (0.0, 0.0, 0.0) and s.sentence_recall[2] == 0.0
    assert s.sentence_f1[3] > 0.5


def test_long_text_warns_truncation():
    long = " ".join(["word"] * 300)
    with pytest.warns(TruncationWarning, match="longer than 256 word pieces"):
        bertscore([long], ["word"], progress=False)


def test_rescale_is_affine_with_packaged_baseline():
    hyps, refs = ["a cat sat on a mat", "stocks fell"], ["the cat sat on the mat", "oil rose"]
    raw = bertscore(hyps, refs, progress=False)
    b = load_baseline(default_model().name, 6)
    res = bertscore(hyps, refs, progress=False, rescale=True)
    for x, y in zip(raw.sentence_f1, res.sentence_f1):
        assert y == pytest.approx((x - b[2]) / (1 - b[2]), abs=1e-12)
    expected = (raw.sentence_precision[0] - b[0]) / (1 - b[0])
    assert res.sentence_precision[0] == pytest.approx(expected)
    assert "rescale:yes|baseline:" in res.signature
    custom = bertscore(hyps, refs, progress=False, rescale=True, baseline=(0.5, 0.5, 0.5))
    assert custom.f1 == pytest.approx((raw.f1 - 0.5) / 0.5)


def test_compute_baseline_small():
    s = ["The match ended in a draw.", "Oil prices rose.", "The film won awards.", "Rain."]
    b = compute_baseline(s, layers=[6, 5], n_pairs=4, seed=1, progress=False)
    assert set(b.values) == {5, 6} and b.n_pairs == 4
    again = compute_baseline(s, layers=[6, 5], n_pairs=4, seed=1, progress=False)
    assert b.values == again.values  # seeded
    with pytest.raises(ValueError, match="at least 2 are needed"):
        compute_baseline(["one"], n_pairs=3)
    with pytest.raises(ValueError, match="n_pairs must be a positive int"):
        compute_baseline(s, n_pairs=0)


@pytest.mark.parametrize("kwargs, err, match", [
    ({"layer": 7}, ValueError, r"layer 7 does not exist: .* hidden states 0..6"),
    ({"layer": "last"}, TypeError, "layer must be an int"),
    ({"idf": True}, TypeError, "idf=True would hide which corpus"),
    ({"idf": {"cat": 1.0}}, TypeError, "idf must be None, False or an IDFWeights"),
    ({"idf": IDFWeights({}, 1.0, 1, "other-model")}, ValueError, "tokenizer of 'other-model'"),
    ({"baseline": (0.1, 0.1, 0.1)}, ValueError, "only used with rescale=True"),
    ({"rescale": True, "baseline": (0.1, 1.0, 0.1)}, ValueError, "three finite floats below 1"),
    ({"rescale": True, "baseline": 0.3}, TypeError, "baseline must be three floats"),
])
def test_bad_options(kwargs, err, match):
    with pytest.raises(err, match=match):
        bertscore(["a"], ["b"], progress=False, **kwargs)


def test_bad_texts():
    with pytest.raises(ValueError, match="references has 1 entries but there are 2 hypotheses"):
        bertscore(["a", "b"], ["c"], progress=False)
    with pytest.raises(TypeError, match="hypotheses must be a list of strings, not a single str"):
        bertscore("a b", ["c"], progress=False)
    with pytest.raises(ValueError, match=r"references\[0\] is an empty list"):
        bertscore(["a"], [[]], progress=False)


def test_unknown_model_baseline():
    with pytest.raises(ValueError, match="no packaged BERTScore baseline for model 'x'"):
        load_baseline("x", 6)
    with pytest.raises(ValueError, match="no baseline for layer 9"):
        load_baseline(default_model().name, 9)


# --------------------------------------------------------------------------- parity


@pytest.fixture(scope="module")
def parity_data(wmt17):
    """500 WMT17 segment pairs: 250 de-en and 250 zh-en, first system of each."""
    hyps, refs = [], []
    for pair in ("de-en", "zh-en"):
        references, systems = wmt17[pair]
        outputs = systems[sorted(systems)[0]]
        hyps += outputs[:250]
        refs += references[:250]
    return hyps, refs


@pytest.fixture(scope="module")
def bert_score_scores(parity_data):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local directory: never the network
    from bert_score import BERTScorer

    hyps, refs = parity_data
    path = str(default_model().path)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for idf in (False, True):
            scorer = BERTScorer(model_type=path, num_layers=LAYER, idf=idf,
                                idf_sents=refs if idf else None, batch_size=64)
            out[idf] = np.stack([t.numpy() for t in scorer.score(hyps, refs)], axis=1)
        # Multiple references: the first 40 hypotheses against two references each.
        multi = [[refs[i], refs[i + 1]] for i in range(40)]
        out["multi"] = np.stack([t.numpy() for t in scorer.score(hyps[:40], multi)], axis=1)
    return out


@needs_wmt17
@pytest.mark.parametrize("use_idf", [False, True])
def test_parity_with_bert_score(parity_data, bert_score_scores, use_idf, tmp_path_factory):
    hyps, refs = parity_data
    idf = idf_weights(refs) if use_idf else False
    enc = resolve_encoder(cache_dir=tmp_path_factory.getbasetemp() / "emb")
    ours = bertscore(hyps, refs, layer=LAYER, idf=idf, progress=False, model=enc)
    got = np.column_stack([ours.sentence_precision, ours.sentence_recall, ours.sentence_f1])
    np.testing.assert_allclose(got, bert_score_scores[use_idf], rtol=0, atol=PARITY_ATOL)


@needs_wmt17
def test_parity_multiple_references(parity_data, bert_score_scores, tmp_path_factory):
    hyps, refs = parity_data
    multi = [[refs[i], refs[i + 1]] for i in range(40)]
    enc = resolve_encoder(cache_dir=tmp_path_factory.getbasetemp() / "emb")
    ours = bertscore(hyps[:40], multi, layer=LAYER, idf=idf_weights(refs), progress=False,
                     model=enc)
    got = np.column_stack([ours.sentence_precision, ours.sentence_recall, ours.sentence_f1])
    np.testing.assert_allclose(got, bert_score_scores["multi"], rtol=0, atol=PARITY_ATOL)


def test_baseline_command_writes_a_loadable_file(tmp_path, capsys):
    import runpy

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bertscore_baseline.py"
    main = runpy.run_path(str(script))["main"]
    out = tmp_path / "baseline.json"
    main(["--n-pairs", "3", "--seed", "1", "--output", str(out)])
    assert "layer 6: P=" in capsys.readouterr().out
    p, r, f = load_baseline(default_model().name, 6, path=out)
    assert all(-1 <= x <= 1 for x in (p, r, f))


def test_packaged_baseline_provenance():
    import json

    from markeval.semantic.baseline import BASELINE_FILE

    entry = json.loads(BASELINE_FILE.read_text())["models"][default_model().name]
    assert entry["n_pairs"] == 2000 and entry["seed"] == 0 and "BBC" in entry["corpus"]
    assert sorted(map(int, entry["layers"])) == list(range(7))


def test_baseline_does_not_import_bertscore():
    """The baselines sit below BERTScore: no import cycle, not even a lazy one."""
    import ast

    import markeval.semantic.baseline as baseline

    tree = ast.parse(Path(baseline.__file__).read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "markeval.semantic.bertscore" not in modules
