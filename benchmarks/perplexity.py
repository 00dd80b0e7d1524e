"""Perplexity throughput: n-gram LMs on BBC News, and SmolLM2 on CPU.

Rows (train on BBC article half 'a', ~480k tokens; score half 'b', ~490k tokens; 13a tokens):

- Trigram counting: ``NGramLM(3).fit`` (numpy ids + unique/bincount, Kneser–Ney tables
  included) vs a dict-of-Counters loop that only counts the 1-, 2- and 3-grams.
- Trigram Kneser–Ney training and scoring vs NLTK 3.10 ``KneserNeyInterpolated`` (the
  anchor). NLTK scores one token per Python call, so it scores only the first
  ``--nltk-tokens`` test tokens; tokens/s are compared. NLTK's KN differs in details
  (no uniform floor, other padding), so only speed is compared, not values.
- SmolLM2-135M (packaged GGUF): load time, then ``CausalLMScorer.score`` on ``--texts``
  test sentences, batched, vs a plain loop of one forward pass per sentence (the anchor).

Prints CPU seconds of this process (``time.process_time``, best of ``--repeats``, the two
sides alternating; on a shared machine wall time mostly measures the neighbours) and
tokens per CPU second. torch uses all cores, so its CPU seconds are summed over threads.

    python benchmarks/perplexity.py [--repeats 2] [--texts 64] [--nltk-tokens 200] [--smoke]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import torch

from markeval.datasets import bbc_sentences
from markeval.encoders.causal_lm import CausalLMScorer
from markeval.lexical.ngram_lm import BOS, EOS, NGramLM
from markeval.text import tokenize_many


def best_of(fn, repeats: int):
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def counter_trigrams(sentences):
    counts = [Counter(), Counter(), Counter()]
    for s in sentences:
        padded = [BOS, BOS, *s, EOS]
        for i in range(2, len(padded)):
            for m in range(3):
                counts[m][tuple(padded[i - m: i + 1])] += 1
    return counts


def line(label: str, seconds: float, tokens: int) -> None:
    print(f"  {label:<44} {seconds:8.2f} s CPU  {tokens / seconds:12,.0f} tokens/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--texts", type=int, default=64)
    parser.add_argument("--nltk-tokens", type=int, default=200)
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 200 training and 50 test sentences, 20 NLTK tokens, "
                        "4 texts for SmolLM2, 1 repeat")
    args = parser.parse_args()

    train = bbc_sentences(split="a")["sentence"].tolist()
    test = bbc_sentences(split="b")["sentence"].tolist()
    if args.smoke:
        args.repeats, args.texts, args.nltk_tokens = 1, 4, 20
        train, test = train[:200], test[:50]
    train = [list(s) for s in tokenize_many(train)]
    test = [list(s) for s in tokenize_many(test)]
    n_train = sum(len(s) + 1 for s in train)
    n_test = sum(len(s) + 1 for s in test)
    print(f"BBC: {len(train):,} training sentences ({n_train:,} tokens incl. </s>), "
          f"{len(test):,} test sentences ({n_test:,} tokens)")

    print("\nn-gram language models (trigram)")
    t_fit, lm = best_of(lambda: NGramLM(order=3).fit(train), args.repeats)
    t_count, _ = best_of(lambda: counter_trigrams(train), args.repeats)
    line("markeval NGramLM(3).fit (KN tables)", t_fit, n_train)
    line("dict-of-Counters: counting only", t_count, n_train)
    print(f"  ratio markeval / Counters: {t_fit / t_count:.2f}")
    t_score, result = best_of(lambda: lm.perplexity(test), args.repeats)
    line("markeval perplexity (score)", t_score, n_test)
    print(f"  (perplexity {result.perplexity:.1f})")

    from nltk.lm import KneserNeyInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline

    def nltk_fit():
        model = KneserNeyInterpolated(3)
        model.fit(*padded_everygram_pipeline(3, train))
        return model

    t_nltk_fit, nltk_lm = best_of(nltk_fit, 1)
    line("NLTK KneserNeyInterpolated(3).fit", t_nltk_fit, n_train)
    pairs = []
    for s in test:
        padded = [BOS, BOS, *s, EOS]
        pairs.extend((padded[i], tuple(padded[i - 2: i])) for i in range(2, len(padded)))
        if len(pairs) >= args.nltk_tokens:
            break
    pairs = pairs[: args.nltk_tokens]
    t_nltk_score, _ = best_of(lambda: [nltk_lm.logscore(w, ctx) for w, ctx in pairs], 1)
    line(f"NLTK logscore ({len(pairs):,} tokens)", t_nltk_score, len(pairs))
    print(f"  ratio markeval / NLTK, training: {t_fit / t_nltk_fit:.3f}; scoring per token: "
          f"{(t_score / n_test) / (t_nltk_score / len(pairs)):.5f}")

    print(f"\nSmolLM2-135M on CPU ({torch.get_num_threads()} torch threads)")
    start, wall = time.process_time(), time.perf_counter()
    scorer = CausalLMScorer(device="cpu")  # the plain loop's tensors are made on the CPU
    print(f"  load (GGUF de-quantisation): {time.process_time() - start:.1f} s CPU, "
          f"{time.perf_counter() - wall:.1f} s wall")
    texts = bbc_sentences(split="b")["sentence"].tolist()[: args.texts]
    n_sub = sum(len(scorer.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts)

    def plain_loop():
        nll = 0.0
        for text in texts:
            ids = torch.tensor([[scorer.prefix_id, *scorer.tokenizer(text, add_special_tokens=False)["input_ids"]]])
            with torch.inference_mode():
                nll += scorer.model(ids, labels=ids).loss.item() * (ids.shape[1] - 1)
        return nll

    t_ours = t_loop = float("inf")
    for _ in range(args.repeats):  # alternate, so that load spikes hit both sides alike
        t, scores = best_of(lambda: scorer.score(texts, batch_size=16), 1)
        t_ours = min(t_ours, t)
        t, nll = best_of(plain_loop, 1)
        t_loop = min(t_loop, t)
    line(f"CausalLMScorer.score, batch 16 ({len(texts)} texts)", t_ours, n_sub)
    line("plain loop, one forward per text", t_loop, n_sub)
    ours_nll = sum(s.nll for s in scores)
    print(f"  ratio markeval / loop: {t_ours / t_loop:.2f}; total NLL differs by {abs(ours_nll - nll):.2e} nats")


if __name__ == "__main__":
    main()
