"""One encoder pass for many metrics: a study's scoring time with and without ``memoize``.

Scores the same WMT17 de-en system outputs against their references with the four encoder
readings a meta-evaluation study makes (chapter 15): BERTScore (last layer), MoverScore v1
(last five layers), word-level Mark-Evaluate samples (last five layers) and pooled sentence
vectors (last layer). "plain" passes the packaged all-MiniLM-L6-v2 to each metric, which then
encodes the texts itself; "memo" passes ``memoize(layers=range(-5, 0))`` of the same encoder, so
each distinct text runs through the model once. The two run interleaved (best of
``--repeats``, a fresh memo each time). Prints both times, their ratio
and the largest difference between the two runs' scores.

    python benchmarks/memoize.py [--n 300] [--repeats 2] [--threads 1] [--smoke]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def study(hyps, refs, model):
    """The encoder-reading part of chapter 15's scoring of one system."""
    from markeval import bertscore, moverscore
    from markeval.encoders import sentence_embeddings
    from markeval.population.samples import word_samples

    return {
        "BERTScore F": bertscore(hyps, refs, model=model, progress=False).sentence_f1,
        "MoverScore v1": moverscore(hyps, refs, model=model, preset="v1",
                                    progress=False).sentence_scores,
        "word samples": np.concatenate([word_samples(hyps, model, progress=False),
                                        word_samples(refs, model, progress=False)]),
        "sentence vectors": sentence_embeddings(hyps + refs, model, progress=False),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="segments (hypothesis-reference pairs)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 4 segments, 1 repeat")
    args = parser.parse_args()
    if args.smoke:
        args.n, args.repeats = 4, 1

    import torch

    from markeval.datasets import wmt17_da_segments
    from markeval.encoders import default_model, memoize

    torch.set_num_threads(args.threads)
    segments = wmt17_da_segments("de-en", with_text=True, detokenize=True).iloc[:args.n]
    hyps, refs = segments["hypothesis"].tolist(), segments["reference"].tolist()
    encoder = default_model()
    study(hyps[:8], refs[:8], encoder)  # warm-up: model load and first-call costs not timed

    times = {"plain": [], "memo": []}
    results = {}
    for _ in range(args.repeats):
        for label in times:
            model = encoder if label == "plain" else memoize(encoder, layers=range(-5, 0))
            start = time.perf_counter()
            results[label] = study(hyps, refs, model)
            times[label].append(time.perf_counter() - start)
    plain, memo = min(times["plain"]), min(times["memo"])
    # np.subtract: the metrics' per-sentence scores are tuples, the samples arrays.
    diff = max(float(np.max(np.abs(np.subtract(results["plain"][k], results["memo"][k]))))
               for k in results["plain"])
    print(f"{args.n} WMT17 de-en segments, BERTScore + MoverScore v1 + word samples + sentence "
          f"vectors, {args.threads} torch thread(s), best of {args.repeats}")
    print(f"plain encoder : {plain:7.2f} s")
    print(f"memoize       : {memo:7.2f} s")
    print(f"memo / plain  : {memo / plain:7.2f}   (largest score difference {diff:.1e})")


if __name__ == "__main__":
    main()
