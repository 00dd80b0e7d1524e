"""Which neighbour index for Mark-Evaluate's balls: faiss-cpu, hnswlib or usearch, measured.

For each library and setting the script builds an index over one set of real embeddings and
searches it with every point of the set for its ``L`` nearest neighbours (the query the
index path of :mod:`markeval.geometry` makes: a point's ``k`` nearest for its radius, and the
cross candidates whose farthest must lie beyond a ball's radius). It prints

* ``build s`` — building (training included), and ``MiB`` the size of the index serialised
  (the vectors included: ``4 n d`` bytes of it for every library here);
* ``query s`` — all ``n`` searches, 2 threads;
* ``recall@L`` — share of the true ``L`` nearest found, on ``--audit`` seeded queries checked
  against exact float64 distances (self excluded);
* ``kth exact`` — share of those queries whose ``k``-th nearest distance (the ball's radius,
  ``k = --k``) is the exact one;
* ``list exact`` — share whose whole list is the true ``L`` nearest: what makes a ball that
  is consistent with its candidates exact.

Data: ``word`` is Mark-Evaluate's word-level samples (all-MiniLM-L6-v2, last five layers) of
WMT17 references, ``sentence`` MiniLM sentence embeddings of BBC News sentences (see
``benchmarks/neighbour_data.py``). Each row is also written to ``--csv``.

    python benchmarks/neighbour_index.py [--data word sentence] [--n 100000] [--L 16] [--k 5]
        [--smoke]

hnswlib and usearch are not among the project's requirements: ``pip install hnswlib usearch``
before a real run (``--smoke`` skips what is not installed).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from neighbour_data import sentence_sets, word_sets  # noqa: E402

THREADS = 2


def index_mib(index) -> float:
    """Size of the index written out: what it keeps in memory, vectors included."""
    if type(index).__module__.startswith("faiss"):
        import faiss

        return faiss.serialize_index(index).nbytes / 2**20
    if type(index).__module__.startswith("usearch"):
        return len(index.save()) / 2**20
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".bin") as fh:  # hnswlib writes files only
        index.save_index(fh.name)
        return Path(fh.name).stat().st_size / 2**20


def hnswlib_index(x, M, ef_construction):
    import hnswlib

    index = hnswlib.Index(space="l2", dim=x.shape[1])
    index.init_index(len(x), M=M, ef_construction=ef_construction, random_seed=0)
    index.set_num_threads(THREADS)
    index.add_items(x, np.arange(len(x)))

    def search(q, L, ef):
        index.set_ef(max(ef, L))
        return index.knn_query(q, L)[0].astype(np.int64)

    return index, search


def faiss_hnsw_index(x, M, ef_construction):
    import faiss

    faiss.omp_set_num_threads(THREADS)
    index = faiss.IndexHNSWFlat(x.shape[1], M)
    index.hnsw.efConstruction = ef_construction
    index.add(x)

    def search(q, L, ef):
        index.hnsw.efSearch = max(ef, L)
        return index.search(q, L)[1]

    return index, search


def faiss_ivf_index(x, nlist_per_sqrt_n):
    import faiss

    faiss.omp_set_num_threads(THREADS)
    nlist = int(nlist_per_sqrt_n * np.sqrt(len(x)))
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(x.shape[1]), x.shape[1], nlist)
    index.cp.seed = 0
    index.train(x)
    index.add(x)

    def search(q, L, nprobe):
        index.nprobe = nprobe
        return index.search(q, L)[1]

    return index, search


def usearch_index(x, connectivity, expansion_add):
    from usearch.index import Index

    index = Index(ndim=x.shape[1], metric="l2sq", dtype="f32", connectivity=connectivity,
                  expansion_add=expansion_add)
    index.add(np.arange(len(x)), x, threads=THREADS)

    def search(q, L, ef):
        index.expansion_search = max(ef, L)
        return index.search(q, L, threads=THREADS).keys.astype(np.int64)

    return index, search


#: (library, builder, build settings, search settings): HNSW graphs of degree M with
#: construction effort efC, searched with ef; IVF with nlist = c·√n lists, nprobe probed.
CONTENDERS = [
    ("hnswlib", hnswlib_index, dict(M=16, efC=200), [64, 256, 1024]),
    ("hnswlib", hnswlib_index, dict(M=32, efC=200), [256, 1024]),
    ("faiss HNSWFlat", faiss_hnsw_index, dict(M=16, efC=200), [64, 256, 1024]),
    ("faiss IVFFlat", faiss_ivf_index, dict(c=4), [16, 64, 128]),
    ("usearch", usearch_index, dict(M=16, efC=200), [64, 256, 1024]),
]


def module(library: str) -> str:
    """The module a contender imports: the first word of its name."""
    return library.split()[0]


def truth(x, queries, L):
    """Exact ``L`` nearest (self excluded) of each query row, by float64 distance then index.

    Returns the ids and their squared distances, shape ``(len(queries), L)`` each.
    """
    x64 = x.astype(np.float64)
    q = x64[queries]
    # The matmul identity in float64 is off by far less than 1e-6 of these distances; every
    # point within that of the L-th is recomputed directly, so the order below is exact.
    approx = (q**2).sum(1)[:, None] + (x64**2).sum(1)[None, :] - 2.0 * q @ x64.T
    approx[np.arange(len(queries)), queries] = np.inf
    bound = np.partition(approx, L - 1, axis=1)[:, L - 1] * (1 + 1e-6) + 1e-9
    ids, dists = [], []
    for row in range(len(queries)):
        cand = np.flatnonzero(approx[row] <= bound[row])
        d = ((x64[cand] - q[row]) ** 2).sum(1)
        order = np.lexsort((cand, d))[:L]
        ids.append(cand[order])
        dists.append(d[order])
    return np.array(ids), np.array(dists)


def audit(found, queries, x, exact_ids, exact_d, k):
    """recall@L, kth exact, list exact for the audited queries (self dropped from ``found``)."""
    L = exact_ids.shape[1]
    x64 = x.astype(np.float64)
    recall, kth, whole = [], [], []
    for row, q in enumerate(queries):
        ids = [i for i in found[q] if i >= 0 and i != q][:L]
        d = np.sort(((x64[ids] - x64[q]) ** 2).sum(1)) if ids else np.array([np.inf])
        recall.append(len(set(ids) & set(exact_ids[row])) / L)
        kth.append(len(d) >= k and d[k - 1] == exact_d[row, k - 1])
        whole.append(len(d) >= L and np.array_equal(d[:L], exact_d[row]))
    return float(np.mean(recall)), float(np.mean(kth)), float(np.mean(whole))


def main() -> None:
    from markeval.reproduce.results import PACKAGE_RESULTS  # where chapters read them

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", choices=("word", "sentence"),
                        default=["word", "sentence"])
    parser.add_argument("--n", type=int, default=100_000, help="points (sentence: ≤ 18,000)")
    parser.add_argument("--L", type=int, default=16, help="neighbours per search")
    parser.add_argument("--k", type=int, default=5, help="rank of the radius checked")
    parser.add_argument("--audit", type=int, default=1000, help="queries checked exactly")
    parser.add_argument("--csv", type=Path,
                        default=PACKAGE_RESULTS / "benchmarks" / "neighbour_index.csv")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: n=300, 50 audited queries, one search setting per "
                        "index, the libraries not installed skipped; the rows written to a "
                        "temporary copy of --csv, never to the committed file")
    args = parser.parse_args()
    absent = sorted({module(c[0]) for c in CONTENDERS
                     if importlib.util.find_spec(module(c[0])) is None})
    contenders = [c for c in CONTENDERS if module(c[0]) not in absent]
    if args.smoke:
        from _smoke import scratch_copy

        args.n, args.audit, args.csv = 300, 50, scratch_copy(args.csv)
        contenders = [(library, build, settings, searches[:1])
                      for library, build, settings, searches in contenders]
        if absent:
            print(f"not installed, skipped: {', '.join(absent)}")
    elif absent:  # the committed rows compare every library: a run must not drop some
        raise SystemExit(f"not installed: {', '.join(absent)} (pip install {' '.join(absent)})")

    rows = []
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'data':9} {'library':15} {'build':>10} {'search':>7} {'build s':>8} {'MiB':>6} "
          f"{'query s':>8} {'recall@L':>9} {'kth exact':>9} {'list exact':>10}")
    for data in args.data:
        n = args.n if data == "word" else min(args.n, 18_000)
        x = (word_sets(n, progress=False) if data == "word" else sentence_sets(n))[0]
        queries = np.random.default_rng(0).choice(n, min(args.audit, n), replace=False)
        exact_ids, exact_d = truth(x, queries, args.L)
        for library, build, settings, searches in contenders:
            start = time.perf_counter()
            index, search = build(x, *settings.values())
            build_s = time.perf_counter() - start
            mib = index_mib(index)
            for effort in searches:
                search(x[:100], args.L + 1, effort)  # warm-up
                start = time.perf_counter()
                found = search(x, args.L + 1, effort)
                query_s = time.perf_counter() - start
                recall, kth, whole = audit(found, queries, x, exact_ids, exact_d, args.k)
                label = " ".join(f"{key}={v}" for key, v in settings.items())
                knob = "nprobe" if "IVF" in library else "ef"
                rows.append(dict(data=data, n=n, dim=x.shape[1], library=library, build=label,
                                 search=f"{knob}={effort}", build_s=round(build_s, 2),
                                 index_mib=round(mib), query_s=round(query_s, 2), L=args.L,
                                 recall=round(recall, 4), kth_exact=round(kth, 4),
                                 list_exact=round(whole, 4)))
                print(f"{data:9} {library:15} {label:>10} {knob + '=' + str(effort):>7} "
                      f"{build_s:8.1f} {mib:6.0f} {query_s:8.1f} {recall:9.4f} {kth:9.4f} "
                      f"{whole:10.4f}", flush=True)
            del index, search
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with open(args.csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"load average at end: {os.getloadavg()[0]:.1f}; written: {args.csv}")


if __name__ == "__main__":
    main()
