"""CausalLMScorer: the packaged SmolLM2 offline, exactness of windows and batches, bad input."""

from __future__ import annotations

import math
import random
import socket

import numpy as np
import pytest
import torch

from markeval.encoders.causal_lm import CausalLMScorer, load_causal_lm, smollm2_path
from markeval.lexical.perplexity import perplexity

FLUENT = [
    "The government said it would publish the report next week.",
    "Shares in the company rose sharply after the results were announced.",
    "The film won three awards at the ceremony in London on Sunday.",
]
LONG = (
    "Quarterly profits at US media giant TimeWarner jumped 76% to $1.13bn for the three months to "
    "December, from $639m a year earlier. The firm, which is now one of the biggest investors in "
    "Google, benefited from sales of high-speed internet connections and higher advert sales."
)


@pytest.fixture(scope="module")
def scorer():
    """SmolLM2 loaded once on the CPU (the checks below feed it CPU tensors), with every
    network connection refused while it loads."""

    def refuse(*args, **kwargs):
        raise OSError("network access attempted while loading an offline model")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        return CausalLMScorer(device="cpu")


def _full_pass(scorer, text):
    """Reference log-probs: one plain forward pass over prefix + text."""
    ids = [scorer.prefix_id] + scorer.tokenizer(text, add_special_tokens=False)["input_ids"]
    x = torch.tensor([ids])
    with torch.inference_mode():
        logits = scorer.model(x).logits[0, :-1].double()
    return ids, logits, torch.log_softmax(logits, -1).gather(-1, x[0, 1:, None])[:, 0].numpy()


def test_packaged_model_loads_offline_and_is_cached(scorer):
    assert smollm2_path().name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert type(scorer.model).__name__ == "LlamaForCausalLM"
    assert scorer.model.config.vocab_size == 49152
    assert scorer.prefix == "<|endoftext|>"
    model, tokenizer = load_causal_lm(device="cpu")
    assert model is scorer.model and tokenizer is scorer.tokenizer  # lru_cache: loaded once
    assert scorer.device == "cpu"
    if not torch.cuda.is_available():  # the default, "auto", is the CPU here: the same model
        assert load_causal_lm()[0] is scorer.model


def test_fluent_text_beats_word_shuffled_text(scorer):
    rng = random.Random(0)
    shuffled = []
    for s in FLUENT:
        words = s.split()
        rng.shuffle(words)
        shuffled.append(" ".join(words))
    fluent = scorer.perplexity(FLUENT, progress=False).sequence_perplexities
    mixed = scorer.perplexity(shuffled, progress=False).sequence_perplexities
    for a, b in zip(fluent, mixed):
        assert a * 5 < b


def test_logprobs_match_a_full_pass_and_torch_cross_entropy(scorer):
    (scored,) = scorer.score([LONG], progress=False)
    ids, logits, expected = _full_pass(scorer, LONG)
    assert scored.token_ids == tuple(ids[1:])
    assert "".join(scored.tokens) == LONG
    # Tolerances: the float32 forward pass may take another kernel with an attention mask.
    np.testing.assert_allclose(scored.logprobs, expected, atol=1e-4)
    ce = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:])).item()
    assert perplexity(logprobs=[scored.logprobs]).cross_entropy_nats == pytest.approx(ce, abs=1e-5)
    with torch.inference_mode():
        loss = scorer.model(torch.tensor([ids]), labels=torch.tensor([ids])).loss.item()
    assert scorer.perplexity([LONG], progress=False).perplexity == pytest.approx(math.exp(loss), rel=1e-4)


def test_sliding_window_scores_each_token_once_with_its_window_context(scorer):
    ids, _, full = _full_pass(scorer, LONG)
    (win,) = scorer.score([LONG], max_length=16, stride=8, progress=False)
    assert len(win.logprobs) == len(ids) - 1
    # Window [0, 16) scores targets 1..15 exactly as the full pass does ...
    np.testing.assert_allclose(win.logprobs[:15], full[:15], atol=1e-4)
    # ... and window [8, 24) scores targets 16..23 from the 16 tokens it sees.
    x = torch.tensor([ids[8:24]])
    with torch.inference_mode():
        lp = torch.log_softmax(scorer.model(x).logits[0].double(), -1)
    expected = lp[7:15].gather(-1, x[0, 8:16, None])[:, 0].numpy()
    np.testing.assert_allclose(win.logprobs[15:23], expected, atol=1e-4)
    # A window as long as the text is a full pass.
    (fits,) = scorer.score([LONG], max_length=len(ids), stride=1, progress=False)
    np.testing.assert_allclose(fits.logprobs, full, atol=1e-4)


def test_batching_with_padding_changes_nothing(scorer):
    texts = [LONG, FLUENT[0], "Hello."]
    one = scorer.score(texts, batch_size=1, progress=False)
    many = scorer.score(texts, batch_size=3, progress=False)
    for a, b in zip(one, many):
        assert a.token_ids == b.token_ids
        # Padded float32 batches use other matmul blocking: differences of ~1e-4 nats.
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-3)


def test_per_word_units(scorer):
    r = scorer.perplexity(FLUENT, n_units=[len(s.split()) for s in FLUENT], progress=False)
    nll = sum(s.nll for s in scorer.score(FLUENT, progress=False))
    assert r.perplexity == pytest.approx(math.exp(nll / sum(len(s.split()) for s in FLUENT)), rel=1e-9)
    assert r.n_tokens > r.n_units


def test_no_prefix_leaves_the_first_token_unscored():
    plain = CausalLMScorer(prefix=None)  # same cached model
    (s,) = plain.score([FLUENT[0]], progress=False)
    ids = plain.tokenizer(FLUENT[0], add_special_tokens=False)["input_ids"]
    assert s.token_ids == tuple(ids[1:])


def test_local_directory_model(tmp_path, scorer):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=scorer.model.config.vocab_size, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=64)
    LlamaForCausalLM(config).save_pretrained(tmp_path)
    scorer.tokenizer.save_pretrained(tmp_path)
    tiny = CausalLMScorer(tmp_path)
    assert tiny.prefix == scorer.tokenizer.bos_token  # "auto" for a non-packaged model
    (s,) = tiny.score([FLUENT[1]], max_length=64, progress=False)
    ids, _, expected = _full_pass(tiny, FLUENT[1])
    np.testing.assert_allclose(s.logprobs, expected, atol=1e-5)
    with pytest.raises(ValueError, match=r"max_length must be an int in \[2, 64\]"):
        tiny.score([FLUENT[1]], max_length=128)


def test_bad_input(scorer):
    with pytest.raises(ValueError, match=r"texts\[1\] is empty"):
        scorer.score(["fine", ""])
    with pytest.raises(TypeError, match="not a single str"):
        scorer.score("a text")
    with pytest.raises(ValueError, match="1 <= stride < max_length=8"):
        scorer.score(["a text"], max_length=8, stride=8)
    with pytest.raises(ValueError, match="batch_size"):
        scorer.score(["a text"], batch_size=0)
    with pytest.raises(ValueError, match="n_units has 1 items"):
        scorer.perplexity(["a text", "another"], n_units=[2])
    with pytest.raises(ValueError, match="not a single token"):
        CausalLMScorer(prefix="<no such token>")
    with pytest.raises(ValueError, match="single token and there is no prefix"):
        CausalLMScorer(prefix=None).score(["Hello"])


def test_progress_bar_is_on_by_default():
    """Scoring a corpus takes minutes on a CPU: like every long-running function, it shows a bar."""
    import inspect

    assert inspect.signature(CausalLMScorer.score).parameters["progress"].default is True


def test_hub_name_offline_gives_a_clear_error():
    with pytest.raises(OSError, match="local_files_only=False to download it when online"):
        load_causal_lm("markeval-tests/no-such-model")
