"""perplexity / cross_entropy: slide examples, torch parity, properties, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.lexical.perplexity import (
    cross_entropy,
    distribution_cross_entropy,
    forward_cross_entropy,
    perplexity,
    reverse_cross_entropy,
)

# ---------------------------------------------------------------- slide values


@pytest.mark.parametrize(
    ("word", "p", "ppl", "bits"),
    [("mushrooms", 0.1, 10.0, 3.3219), ("pepperoni", 0.1, 10.0, 3.3219),
     ("anchovies", 0.01, 100.0, 6.6439), ("fried rice", 0.0001, 10_000.0, 13.2877)],
)
def test_pizza_shannon_game(word, p, ppl, bits):
    # "I always order pizza with cheese and ___": one predicted word, perplexity 1/p.
    assert perplexity([p]).perplexity == pytest.approx(ppl)
    assert round(cross_entropy([p]), 4) == bits


def test_call_routing_slide_and_its_erratum():
    # Operator, Sales, Tech Support 1/4 each; 30,000 names 1/120,000 each: perplexity 52.6.
    meant = perplexity([1 / 4, 1 / 4, 1 / 4, 1 / 120_000]).perplexity
    printed = perplexity([1 / 4, 1 / 4, 1 / 4, 1 / 120]).perplexity
    assert round(meant, 1) == 52.6
    assert round(printed, 2) == 9.36  # the product as printed on the slide cannot give 52.6
    # The same 52.6 as 2 ** entropy of the whole routing distribution (branching factor).
    p = np.array([1 / 4] * 3 + [1 / 120_000] * 30_000)
    assert 2 ** distribution_cross_entropy(p, p) == pytest.approx(meant, rel=1e-9)


def test_digits_branching_factor():
    assert perplexity([0.1] * 7).perplexity == pytest.approx(10.0)
    assert 2 ** distribution_cross_entropy([0.1] * 10, [0.1] * 10) == pytest.approx(10.0)


def test_micro_and_macro_averages_by_hand():
    # Sequence A: two tokens at 1/2 (ppl 2); sequence B: one token at 1/8 (ppl 8).
    r = perplexity([[0.5, 0.5], [0.125]])
    assert r.sequence_perplexities == pytest.approx((2.0, 8.0))
    assert r.mean_sequence_perplexity == pytest.approx(5.0)
    assert r.perplexity == pytest.approx((0.5 * 0.5 * 0.125) ** (-1 / 3))  # 2^(5/3) = 3.17
    assert (r.n_tokens, r.n_units, r.n_sequences) == (3, 3, 2)
    assert r.cross_entropy_bits == pytest.approx(5 / 3)
    assert float(r) == r.perplexity


def test_bases_and_inputs_agree():
    p = np.array([0.5, 0.2, 0.9, 0.01])
    ref = perplexity(p).perplexity
    assert perplexity(logprobs=np.log(p)).perplexity == pytest.approx(ref)
    assert perplexity(logprobs=np.log2(p), logprob_base=2).perplexity == pytest.approx(ref)
    assert perplexity(logprobs=np.log10(p), logprob_base=10).perplexity == pytest.approx(ref)
    assert cross_entropy(p, base=math.e) == pytest.approx(math.log(ref))
    assert perplexity(p.tolist()).perplexity == pytest.approx(ref)  # list and array layouts
    assert perplexity(np.array([p, p])).perplexity == pytest.approx(ref)


def test_n_units_turns_subword_nll_into_per_word():
    # 6 sub-word tokens of 1/2 for a 3-word text: per-token ppl 2, per-word ppl 4.
    r = perplexity([[0.5] * 6], n_units=[3])
    assert r.perplexity == pytest.approx(4.0)
    assert (r.n_tokens, r.n_units) == (6, 3)
    assert perplexity([0.5] * 6, n_units=3).perplexity == pytest.approx(4.0)


# ----------------------------------------------------------------- torch parity


def test_matches_torch_cross_entropy_on_the_same_logits():
    gen = torch.Generator().manual_seed(0)
    lengths = [5, 17, 1, 40]
    logits = [torch.randn(n, 50, generator=gen) * 3 for n in lengths]
    targets = [torch.randint(0, 50, (n,), generator=gen) for n in lengths]
    logprobs = [torch.log_softmax(x.double(), -1).gather(-1, t[:, None])[:, 0].numpy()
                for x, t in zip(logits, targets)]
    r = perplexity(logprobs=logprobs)
    # torch's mean over all tokens of all sequences is the micro average.
    loss = torch.nn.functional.cross_entropy(torch.cat(logits).double(), torch.cat(targets))
    assert r.cross_entropy_nats == pytest.approx(loss.item(), rel=1e-12)
    assert r.perplexity == pytest.approx(math.exp(loss.item()), rel=1e-12)
    for x, t, ppl in zip(logits, targets, r.sequence_perplexities):
        one = torch.nn.functional.cross_entropy(x.double(), t).exp().item()
        assert ppl == pytest.approx(one, rel=1e-12)


# ------------------------------------------------------------------- properties

probs = st.floats(min_value=1e-6, max_value=1.0)
sequences = st.lists(st.lists(probs, min_size=1, max_size=20), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(sequences)
def test_properties(seqs):
    r = perplexity(seqs)
    assert r.perplexity >= 1.0 - 1e-12
    assert r.perplexity == pytest.approx(2 ** r.cross_entropy_bits, rel=1e-9)
    assert r.perplexity == pytest.approx(2 ** cross_entropy(seqs), rel=1e-9)
    flat = [p for s in seqs for p in s]
    assert r.perplexity == pytest.approx(perplexity(flat).perplexity, rel=1e-9)  # micro = pooled
    assert perplexity(flat[::-1]).perplexity == pytest.approx(perplexity(flat).perplexity, rel=1e-9)
    assert min(r.sequence_perplexities) - 1e-9 <= r.mean_sequence_perplexity <= max(r.sequence_perplexities) + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(probs, min_size=4, max_size=4), min_size=1, max_size=6))
def test_macro_at_least_micro_for_equal_lengths(seqs):
    r = perplexity(seqs)  # Jensen: mean of exp >= exp of mean
    assert r.mean_sequence_perplexity >= r.perplexity * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1e-4, max_value=1.0), st.integers(1, 30))
def test_constant_probability(p, n):
    assert perplexity([p] * n).perplexity == pytest.approx(1 / p, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=2, max_size=8), st.lists(st.floats(0.01, 1.0), min_size=2, max_size=8))
def test_gibbs_inequality(a, b):
    n = min(len(a), len(b))
    p, q = np.array(a[:n]) / sum(a[:n]), np.array(b[:n]) / sum(b[:n])
    assert distribution_cross_entropy(p, q) >= distribution_cross_entropy(p, p) - 1e-9


def test_cross_entropy_infinite_where_q_misses_support():
    assert distribution_cross_entropy([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert distribution_cross_entropy([1.0, 0.0], [1.0, 0.0]) == 0.0


# ---------------------------------------------------------- forward / reverse CE

REAL = [s.split() for s in [
    "the cat sat on the mat", "a dog ran in the park", "the bird sang a song",
    "my cat likes the sun", "the dog ate a bone", "a bird flew over the park",
]] * 3


def test_forward_and_reverse_cross_entropy_separate_collapse_from_diversity():
    # A collapsed generator repeats the real sentence the real-text LM likes best.
    per_sentence = forward_cross_entropy(REAL[:6], REAL, order=2).sequence_perplexities
    collapsed = [REAL[int(np.argmin(per_sentence))]] * 18
    diverse = REAL
    fwd_c = forward_cross_entropy(collapsed, REAL, order=2).cross_entropy_bits
    fwd_d = forward_cross_entropy(diverse, REAL, order=2).cross_entropy_bits
    rev_c = reverse_cross_entropy(collapsed, REAL, order=2).cross_entropy_bits
    rev_d = reverse_cross_entropy(diverse, REAL, order=2).cross_entropy_bits
    assert fwd_c < fwd_d  # forward CE rewards the fluent collapsed generator...
    assert rev_c > rev_d  # ...reverse CE exposes its missing diversity


def test_reverse_cross_entropy_uses_the_real_vocabulary():
    a = reverse_cross_entropy([["the", "cat"]] * 4, REAL, order=1)
    b = reverse_cross_entropy([["a", "dog"]] * 4, REAL, order=1)
    assert a.signature == b.signature  # same vocabulary size for both generators


# -------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"probabilities": []}, ValueError, "empty"),
        ({"probabilities": [[0.5], []]}, ValueError, r"probabilities\[1\] is empty"),
        ({"probabilities": [0.5, 0.0]}, ValueError, r"probabilities\[0\]\[1\] = 0.0: a zero probability .* smooth"),
        ({"probabilities": [0.5, -0.1]}, ValueError, r"must be in \(0, 1\]"),
        ({"probabilities": [0.5, 1.5]}, ValueError, "above 1"),
        ({"probabilities": [0.5, float("nan")]}, ValueError, "NaN"),
        ({"probabilities": [0.5, [0.5]]}, TypeError, "mixes numbers and sequences"),
        ({"probabilities": "0.5"}, TypeError, "not a single str: '0.5'"),
        ({"logprobs": [-1.0, -math.inf]}, ValueError, "zero probability"),
        ({"logprobs": [-1.0, 0.5]}, ValueError, "above 0"),
        ({"logprobs": [-1.0], "logprob_base": 1}, ValueError, "logprob_base"),
        ({"logprobs": [-1.0], "logprob_base": -2}, ValueError, "logprob_base"),
        ({}, TypeError, "exactly one"),
        ({"probabilities": [0.5], "logprobs": [-1.0]}, TypeError, "exactly one"),
        ({"probabilities": [[0.5], [0.5]], "n_units": [1]}, ValueError, "n_units has 1 items"),
        ({"probabilities": [0.5], "n_units": [0]}, ValueError, "n_units must be a positive int, got 0"),
    ],
)
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        perplexity(**kwargs)


def test_bad_distributions():
    with pytest.raises(ValueError, match="p has 2 items but q has 3"):
        distribution_cross_entropy([0.5, 0.5], [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="must sum to 1"):
        distribution_cross_entropy([0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        distribution_cross_entropy([1.5, -0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="base"):
        cross_entropy([0.5], base=1)


# ---------------------------------------------------------------- shape and layering


def test_result_follows_the_metric_result_protocol():
    from markeval._result import MetricResult
    from markeval.lexical.perplexity import PerplexityResult

    r = perplexity([[0.5, 0.5], [0.25]])
    assert isinstance(r, MetricResult)
    assert r.score == r.perplexity and r.item_scores == r.sequence_perplexities == (2.0, 4.0)
    assert PerplexityResult.higher_is_better is False and r.signature.startswith("perplexity|")


def test_language_model_modules_import_downwards_only():
    """perplexity -> ngram_lm -> _perplexity_result (and causal_lm -> _perplexity_result): no cycle."""
    import ast
    import importlib
    from pathlib import Path

    def imports(module):
        path = Path(importlib.import_module(module).__file__)
        return {node.module for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom)}

    assert "markeval.lexical.perplexity" not in imports("markeval.lexical.ngram_lm")
    assert "markeval.lexical.perplexity" not in imports("markeval.encoders.causal_lm")
    assert not imports("markeval.lexical._perplexity_result") & {
        "markeval.lexical.perplexity", "markeval.lexical.ngram_lm", "markeval.encoders.causal_lm"}
