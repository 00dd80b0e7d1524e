"""Mark-Evaluate speed and memory against its floor, the bare distance computation.

Usage: python benchmarks/mark_evaluate.py [--data random|bbc] [--n 10000] [--dim 384] [--k 5]
                                          [--backend numpy] [--smoke]

Times ``mark_evaluate`` (all four scores: Petersen, Schnabel both ways, CAPTURE) on two sets of
``n`` points, and the floor: one blocked pass of squared distances over each set against
itself and one over the cross pairs (what any exact method must compute), with the same BLAS.
Prints seconds, the ratio, and peak traced Python/NumPy memory (tracemalloc).

``--data random`` (default): two Gaussian sets of dimension ``--dim``. ``--data bbc``: MiniLM
sentence embeddings (384-d) of ``n`` unique BBC sentences from each half of the articles
(``bbc_sentences(split="a")`` against ``split="b"``, seeded sample), encoded once and cached
under ``cache_dir() / "embeddings"`` (the first run embeds ``2 n`` sentences: minutes on a CPU).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from markeval.geometry import sq_distance_blocks
from markeval.population.mark_evaluate import mark_evaluate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from neighbour_data import sentence_sets  # noqa: E402


def _floor(a, b, backend):
    for x, y in ((a, a), (b, b), (a, b)):
        for _ in sq_distance_blocks(x, y, backend=backend):
            pass


def _measure(fn):
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("random", "bbc"), default="random")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 200 points per set (random data: 16 dimensions)")
    args = parser.parse_args()
    if args.smoke:
        args.n, args.dim = 200, 16
    if args.data == "bbc":
        a, b = (s.astype(np.float64) for s in sentence_sets(args.n))
    else:
        rng = np.random.default_rng(0)
        a = rng.normal(size=(args.n, args.dim))
        b = rng.normal(size=(args.n, args.dim)) + 0.05
    _, floor_s, floor_mem = _measure(lambda: _floor(a, b, args.backend))
    result, me_s, me_mem = _measure(
        lambda: mark_evaluate(a, b, args.k, backend=args.backend, progress=False))
    print(f"data={args.data} n={args.n} dim={a.shape[1]} k={args.k} backend={args.backend}")
    print(f"floor (3 distance passes): {floor_s:8.2f} s  peak {floor_mem / 2**20:8.1f} MiB")
    print(f"mark_evaluate (all four):  {me_s:8.2f} s  peak {me_mem / 2**20:8.1f} MiB")
    print(f"ratio: {me_s / floor_s:.2f}x the floor")
    print(f"scores: petersen={result.petersen.score:.4f} "
          f"schnabel_quality={result.schnabel_quality.score:.4f} "
          f"schnabel_diversity={result.schnabel_diversity.score:.4f} "
          f"capture={result.capture.score:.4f}")


if __name__ == "__main__":
    main()
