"""Can the inverted file prove its own recall? The triangle-inequality bound, measured.

The index path (:mod:`markeval.geometry.index`) searches an inverted file: k-means lists over
the union of both sets, ``probes`` of them scanned per query. A ball of centre ``q`` and radius
``r`` could skip list ``j`` *provably* when the triangle inequality shows that the list holds
no point inside the ball::

    d(q, c_j) − R_j > r        (c_j the list's centroid, R_j its farthest point from c_j)

A ball all of whose other lists are skipped so would be proven: its radius, neighbours and
members would follow from the lists scanned, whatever the index's recall. This script
measures, on real word samples, for every centre of both sets **at its exact radius** (the best
case: the index path only knows a radius from its candidates, never smaller), how many lists
the bound cannot skip, and the share of balls that scanning at most ``P`` lists would prove.
The row goes to ``--csv`` (replacing the row of the same model and size), with the commit and
machine that produced it.

    nice -n 10 python benchmarks/triangle_bound.py [--n 25000] [--model minilm] [--k 3] [--smoke]
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from neighbour_data import word_sets  # noqa: E402

#: Rows of centres against the centroids at a time.
BLOCK = 4096


def unskippable_lists(points: np.ndarray, radii: np.ndarray, seed: int = 0):
    """Per point, the lists of the index path's inverted file that the bound cannot skip for
    its ball (``radii``: the balls' exact radii); and the number of lists."""
    import faiss

    n, d = points.shape
    # The inverted file as the index path builds it (markeval.geometry.index._Faiss).
    lists = max(1, min(n // 39, int(math.sqrt(n))))
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, lists)
    index.cp.seed = seed
    index.cp.max_points_per_centroid = 64
    index.cp.min_points_per_centroid = 1
    index.train(points)
    centroids = index.quantizer.reconstruct_n(0, lists).astype(np.float64)
    own = index.quantizer.search(points, 1)[1][:, 0]
    x = points.astype(np.float64)
    reach = np.zeros(lists)
    np.maximum.at(reach, own, np.linalg.norm(x - centroids[own], axis=1))
    must = np.empty(n, np.int64)
    for start in range(0, n, BLOCK):
        block = x[start:start + BLOCK]
        sq = ((block ** 2).sum(1)[:, None] + (centroids ** 2).sum(1)[None, :]
              - 2 * block @ centroids.T)
        to_centroid = np.sqrt(np.maximum(sq, 0.0))
        # A list is skipped only with room to spare (1e-6 relative), against rounding.
        skip = to_centroid - reach[None, :] > radii[start:start + BLOCK, None] * (1 + 1e-6)
        must[start:start + BLOCK] = lists - skip.sum(axis=1)
    return must, lists


def main() -> None:
    from markeval.geometry import knn_balls
    from markeval.reproduce.results import PACKAGE_RESULTS
    from markeval.reproduce.run import commit, machine

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=25_000, help="word samples per set")
    parser.add_argument("--model", default="minilm", choices=["minilm", "mpnet"])
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--csv", type=Path,
                        default=PACKAGE_RESULTS / "benchmarks" / "triangle_bound.csv")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: n=300, the row written to a temporary copy of "
                        "--csv, never to the committed file")
    args = parser.parse_args()
    if args.smoke:
        from _smoke import scratch_copy

        args.n, args.csv = 300, scratch_copy(args.csv)
    code = commit()  # the code imported now, before the run
    a, b = word_sets(args.n, args.model)
    radii = np.concatenate([knn_balls(s, args.k).radii for s in (a, b)])
    must, lists = unskippable_lists(np.concatenate([a, b]), radii)
    print(f"{args.model} word samples, {args.n} per set, {a.shape[1]}-d, k={args.k}: "
          f"{lists} lists")
    print("lists the bound cannot skip, per ball (at its exact radius): "
          + ", ".join(f"{q}th percentile {np.percentile(must, q):.0f}" for q in (5, 50, 95)))
    row = dict(model=args.model, n=args.n, dim=a.shape[1], k=args.k, lists=lists,
               **{f"unskippable_p{q}": float(np.percentile(must, q)) for q in (5, 50, 95)})
    for probes in (32, 128, lists):
        print(f"balls proven by scanning at most {probes} lists: {np.mean(must <= probes):.2%}")
    row.update(proven_at_32=float(np.mean(must <= 32)), proven_at_128=float(np.mean(must <= 128)),
               commit=code, machine=machine())
    rows = []
    if args.csv.exists():
        with open(args.csv, newline="") as fh:
            rows = [r for r in csv.DictReader(fh)
                    if (r["model"], int(r["n"])) != (args.model, args.n)]
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with open(args.csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(row))
        writer.writeheader()
        writer.writerows(rows + [row])
    print(f"written: {args.csv}")


if __name__ == "__main__":
    main()
