"""Mark-Evaluate from 10⁴ to 10⁶ samples per set: time and peak memory, exact and index paths.

Two parts, one run, on real word-level samples (all-MiniLM-L6-v2, 384-d, the last five
layers, WMT17 references against one system's outputs: ``benchmarks/neighbour_data.py``):

1. **float32 or float64 for the exact path.** ``mark_evaluate`` (all four scores) exactly
   with float64 tiles and with float32 tiles (the float64 recheck near ball boundaries keeps
   both exact: the script checks the counts are identical), each beside its floor — the bare
   matrix products of the three ``n × n`` distance matrices in that dtype.
2. **The size table.** For each ``n`` in ``--sizes``, in a fresh process (so that its peak
   memory is its own): all four scores with ``neighbours=IndexSettings(probes=P)``, and
   exactly where ``n <= --exact-max``. Prints seconds, the peak resident memory above what
   the process held with its data loaded, that peak per sample (flat when memory is linear in
   ``n``), and the index path's report: the share of balls consistent with their
   candidates, and the audit.

Goals printed at the end: all four scores on 10⁵ × 10⁵ in ≤ 60 s; 10⁶ × 10⁶ runs with
memory linear in ``n``. Rows go to ``--csv``, replacing its rows of the sizes run (the others
are kept, so one size can be remeasured alone).

    nice -n 10 python benchmarks/mark_evaluate_scale.py [--sizes 10000 30000 100000 300000
        1000000] [--probes 0] [--exact-max 30000] [--dtype-n 10000] [--k 3] [--smoke]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from geometry import PeakRSS  # noqa: E402  (benchmarks/geometry.py)
from neighbour_data import word_sets  # noqa: E402


def _floor(a, b, dtype) -> float:
    """Seconds of the three n × n matrix products alone, in ``dtype``, in row blocks."""
    x, y = a.astype(dtype), b.astype(dtype)
    start = time.perf_counter()
    for p, q in ((x, x), (y, y), (x, y)):
        for s in range(0, len(p), 1024):
            p[s:s + 1024] @ q.T
    return time.perf_counter() - start


def dtype_check(n: int, k: int) -> dict:
    from markeval.geometry import mutual_balls
    from markeval.population.mark_evaluate import mark_evaluate_from_balls

    a, b = word_sets(n, progress=False)
    out, kept = {}, {}
    for dtype in ("float64", "float32"):
        start = time.perf_counter()
        g = mutual_balls(a, b, k, dtype=dtype)
        mark_evaluate_from_balls(g.balls_a, g.balls_b, membership=(g.a_in_b, g.b_in_a))
        out[dtype] = time.perf_counter() - start
        out[f"floor_{dtype}"] = _floor(a, b, np.dtype(dtype))
        kept[dtype] = g
    same = all(np.array_equal(getattr(getattr(kept["float64"], s), f),
                              getattr(getattr(kept["float32"], s), f))
               for s, f in (("balls_a", "indices"), ("balls_b", "sq_distances"),
                            ("a_in_b", "balls_per_point"), ("b_in_a", "points_per_ball")))
    print(f"\n1. exact path, n={n} per set, dim={a.shape[1]}, k={k} (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for dtype in ("float64", "float32"):
        print(f"   {dtype} tiles: {out[dtype]:7.1f} s; its matmul floor {out[f'floor_{dtype}']:6.1f}"
              f" s ({out[dtype] / out[f'floor_{dtype}']:.2f}x)")
    print(f"   float32 / float64: {out['float32'] / out['float64']:.2f}; "
          f"float32 exact / float32 floor: {out['float32'] / out['floor_float32']:.2f}; "
          f"counts identical: {same}")
    return dict(out, same=same)


def one_size(n: int, k: int, probes: int, exact: bool) -> dict:
    """Run in a child process: one size, index path (and exact), time and memory."""
    from markeval.geometry import IndexSettings
    from markeval.population.mark_evaluate import mark_evaluate
    from markeval.reproduce.run import commit, machine

    code = commit()  # the code imported now, before a long run during which HEAD may move
    a, b = word_sets(n, progress=False)
    row = dict(n=n, dim=a.shape[1], k=k, probes=probes, data_mib=round((a.nbytes + b.nbytes)
                                                                        / 2**20))
    settings = IndexSettings(probes=probes or None)
    row["probes"] = settings.probes_for(a.shape[1])
    with PeakRSS() as mem:
        start = time.perf_counter()
        r = mark_evaluate(a, b, k, neighbours=settings, progress=False)
        row["index_s"] = round(time.perf_counter() - start, 1)
    row.update(index_peak_mib=round(mem.peak - mem.base), petersen=r.petersen.score,
               consistent_fraction=r.neighbour_report.consistent_fraction,
               fallback=r.neighbour_report.fallback, audited=r.neighbour_report.audited,
               audit_agreed=r.neighbour_report.agreed)
    if exact:
        with PeakRSS() as mem:
            start = time.perf_counter()
            e = mark_evaluate(a, b, k, progress=False)
            row["exact_s"] = round(time.perf_counter() - start, 1)
        row.update(exact_peak_mib=round(mem.peak - mem.base), exact_petersen=e.petersen.score)
    row.update(load=round(os.getloadavg()[0], 1), commit=code, machine=machine())
    return row


def main() -> None:
    from markeval.reproduce.results import PACKAGE_RESULTS  # where chapters read them

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int,
                        default=[10_000, 30_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--probes", type=int, default=0,
                        help="lists probed (default 0: geometry.default_probes of the dimension)")
    parser.add_argument("--exact-max", type=int, default=30_000)
    parser.add_argument("--dtype-n", type=int, default=10_000, help="0: skip part 1")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child's size
    parser.add_argument("--csv", type=Path,
                        default=PACKAGE_RESULTS / "benchmarks" / "mark_evaluate_scale.csv")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: n=300 for both parts, exact too, the rows written "
                        "to a temporary copy of --csv, never to the committed file")
    args = parser.parse_args()
    if args.smoke:
        from _smoke import scratch_copy

        args.sizes, args.dtype_n, args.exact_max = [300], 300, 300
        args.csv = scratch_copy(args.csv)
    if args.one:
        print(json.dumps(one_size(args.one, args.k, args.probes, args.one <= args.exact_max)))
        return

    if args.dtype_n:
        dtype_check(args.dtype_n, args.k)
    print(f"\n2. all four scores, index path (probes={args.probes or 'by dimension'}), "
          f"exact up to n={args.exact_max}; peak = resident memory above the loaded data")
    print(f"{'n':>9} {'index s':>8} {'peak MiB':>9} {'B/sample':>9} {'consistent':>10} "
          f"{'audit':>11} {'exact s':>8} {'load':>5}")
    rows = []
    for n in args.sizes:
        child = subprocess.run([sys.executable, __file__, "--one", str(n), "--probes",
                                str(args.probes), "--exact-max", str(args.exact_max),
                                "--k", str(args.k)], capture_output=True, text=True)
        if child.returncode:
            print(child.stderr[-3000:])
            raise SystemExit(f"n={n} failed")
        row = json.loads(child.stdout.strip().splitlines()[-1])
        row["bytes_per_sample"] = round(row["index_peak_mib"] * 2**20 / (2 * n))
        rows.append(row)
        print(f"{n:9d} {row['index_s']:8.1f} {row['index_peak_mib']:9d} "
              f"{row['bytes_per_sample']:9d} {row['consistent_fraction']:10.4f} "
              f"{row['audit_agreed']:5d}/{row['audited']:<5d} "
              f"{row.get('exact_s', float('nan')):8.1f} {row['load']:5.1f}", flush=True)
    by_n = {r["n"]: r for r in rows}
    if 100_000 in by_n:
        t = by_n[100_000]["index_s"]
        print(f"goal: all four scores on 10^5 x 10^5 in <= 60 s: {t:.0f} s, "
              f"{'met' if t <= 60 else 'NOT met'}")
    if 1_000_000 in by_n:
        per = [r["bytes_per_sample"] for r in rows]
        print(f"goal: 10^6 x 10^6 runs: {by_n[1_000_000]['index_s']:.0f} s, peak "
              f"{by_n[1_000_000]['index_peak_mib']} MiB above the data; bytes per sample "
              f"from {min(per)} to {max(per)} across the sizes (linear when flat)")
    # Rows of sizes not run this time are kept: a size can be remeasured on its own.
    if args.csv.exists():
        with open(args.csv, newline="") as fh:
            rows += [r for r in csv.DictReader(fh) if int(r["n"]) not in by_n]
        rows.sort(key=lambda r: int(r["n"]))
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with open(args.csv, "w", newline="") as fh:
        fields = list(dict.fromkeys(key for r in rows for key in r))
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print(f"written: {args.csv}")


if __name__ == "__main__":
    main()
