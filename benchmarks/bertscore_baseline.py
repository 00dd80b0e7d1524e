"""Recompute the packaged BERTScore baseline of the default model (about a minute on 2 cores).

Random pairs of BBC News sentences, ``markeval.datasets.bbc_sentences(unique=True)``, scored
by :func:`markeval.semantic.baseline.compute_baseline`; the numbers and their provenance are
written to ``markeval/semantic/bertscore_baseline.json`` (or ``--output``), the file
:func:`markeval.semantic.baseline.load_baseline` reads. With the defaults (2000 pairs, seed 0)
it reproduces the committed values.

    python benchmarks/bertscore_baseline.py [--n-pairs 2000] [--seed 0] [--output FILE] [--smoke]
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

from markeval.datasets import bbc_sentences
from markeval.semantic.baseline import BASELINE_FILE, compute_baseline


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-pairs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=BASELINE_FILE)
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run (8 pairs), written to a temporary copy of the "
                        "output, never to the committed file")
    args = parser.parse_args(argv)
    if args.smoke:
        from _smoke import scratch_copy

        args.n_pairs, args.output = 8, scratch_copy(args.output)

    sentences = list(bbc_sentences(unique=True)["sentence"])
    result = compute_baseline(sentences, n_pairs=args.n_pairs, seed=args.seed)
    entry = {  # provenance first, then the numbers
        "corpus": f"BBC News body sentences, markeval.datasets.bbc_sentences(unique=True) "
        f"({len(sentences)} sentences, all five topics)",
        "method": "mean BERTScore P/R/F (no idf) over random pairs of distinct sentences, "
        "markeval.semantic.baseline.compute_baseline",
        "n_pairs": result.n_pairs,
        "seed": result.seed,
        "date": datetime.date.today().isoformat(),
        "layers": {str(k): [round(x, 6) for x in v] for k, v in result.values.items()},
    }
    data = {"format": 1, "models": {result.model: entry}}
    args.output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    for layer, (p, r, f) in result.values.items():
        print(f"layer {layer}: P={p:.4f} R={r:.4f} F={f:.4f}")


if __name__ == "__main__":
    main()
