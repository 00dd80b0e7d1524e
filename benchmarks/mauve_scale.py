"""MAUVE at 10⁴ and 10⁵ samples per set: markeval beside mauve-text on the same features.

For each size ``n`` in ``--sizes``, on real word-level samples (all-MiniLM-L6-v2, 384-d, the
last five layers, WMT17 references against one system's outputs:
``benchmarks/neighbour_data.py``), one run times

1. **mauve-text 0.4.0** (the authors' package, GPL, a test-only dependency that only the
   benchmarks and tests import): ``compute_mauve(p_features=P, q_features=Q, seed=s,
   num_buckets=K, kmeans_num_redo=R, kmeans_max_iter=I)``;
2. **markeval** with the same k-means: ``mauve(P, Q, kmeans="faiss", seed=s + 2, n_seeds=1,
   n_buckets=K, n_init=R, max_iter=I)``, which clusters exactly as mauve-text does
   (``tests/test_mauve.py``). Printed: both wall times, their ratio (theirs / ours), the
   difference of the scores (MAUVE, MAUVE*, frontier integral), whether the two histograms
   hold the same counts, and where markeval's time goes: PCA, k-means, histograms and
   frontier (timed by wrapping the module's two steps during the one call, so nothing runs
   twice);
3. **markeval with its own k-means** (``kmeans="lloyd"``, the same settings) where it fits:
   it holds a few ``2n × K`` float64 matrices (distances, products, memberships), estimated
   at ``LLOYD_ARRAYS`` of them; above ``--lloyd-max-gib`` it is skipped, and the output says
   so (10⁵ per side at 10⁴ buckets would need about 75 GiB);
4. **Mark-Evaluate's index path** on the same two sets: ``mark_evaluate(S, S', k,
   neighbours=IndexSettings(probes=P))``, all four scores, as
   ``benchmarks/mark_evaluate_scale.py`` times it.

Each part's peak resident memory above what the process held before it is printed beside its
time. Both packages get the features as float64: mauve-text would otherwise normalise and
project float32 input in float32 while markeval works in float64, and the clusters would
drift apart. ``--threads`` (default: every core) bounds faiss's OpenMP threads and the BLAS
threads of both sides alike; markeval's own k-means runs its products on one BLAS thread by
design (``markeval/_threads.py``).

**Why the k-means settings differ from mauve-text's defaults.** At 10⁵ points per set,
k-means is nearly all the cost. One iteration assigns every training point to its nearest
centroid: ``2 · 2n · K · d`` flops (``2n`` points, ``K`` buckets, ``d`` the dimensions PCA
keeps: 210 for these samples at 10⁴ per set; faiss trains on at most 256 points per centroid,
which the auto buckets, 20 points per centroid, never reach). faiss (1.15 here) runs up to
``kmeans_max_iter`` iterations for each of ``kmeans_num_redo`` seedings, and stops a seeding
early only at a fixed point (an iteration that leaves the objective unchanged). With the
package's defaults (``K = n/10 = 10⁴``, 500 iterations, 5 seedings) an iteration at 10⁵ is
``2 · 2·10⁵ · 10⁴ · 210 ≈ 8.4·10¹¹`` flops. faiss's k-means ran at 43 GFLOP/s here at 10⁴ per
set (2 threads, two other jobs busy on the 2 cores: the row's ``kmeans_gflops``), so an
iteration at 10⁵ takes about 20 s, and — extrapolations from that rate, not measurements:

* no seeding reaching a fixed point, 2500 iterations: about 13.5 hours per side;
* the seedings here reached a fixed point after 9–10 iterations at 10³ per set, 13–19 at
  2·10³, 17–22 at 5·10³ and 19–23 at 10⁴ (seeds 27–29, one thread, measured once for this
  note): about 11 more per tenfold, so some 30–35 at 10⁵, and the defaults would take about
  5 · 32 · 20 s ≈ 55 minutes per side.

The defaults here keep the buckets (their number defines the statistic: MAUVE moves with it)
and cut the optimisation to **one seeding of at most 30 iterations**: at most
``31 · 8.4·10¹¹ ≈ 2.6·10¹³`` flops, about 10 minutes per side at 10⁵ at the rate above (about
7 at the 62 GFLOP/s one thread reached on a core of its own). At 10⁴ the seeding stops at its
fixed point (23 iterations) before the cap. Each run prints the iterations faiss ran, its
seconds per iteration, the kept seeding's fall of the objective over its last five iterations
(how far from converged it stopped) and its own extrapolation of the defaults' cost; both
sides run the same iterations, so the comparison stays like for like.

Rows are appended to ``--csv`` (a new column widens the file; old rows keep empty cells), each
with the commit and machine that produced it.

    nice -n 10 python benchmarks/mauve_scale.py [--sizes 10000 100000] [--buckets auto]
        [--iterations 30] [--redos 1] [--threads 2] [--seed 25] [--lloyd-max-gib 4]
        [--k 3] [--probes 0] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from geometry import PeakRSS  # noqa: E402  (benchmarks/geometry.py)
from neighbour_data import word_sets  # noqa: E402

#: ``2n × K`` float64 matrices markeval's Lloyd holds at its peak: the distances, the product
#: ``x cᵀ`` and a temporary of the same shape while they combine, the one-hot memberships, and
#: the previous iteration's distances until the new ones replace them (at 10⁴ per set and 10³
#: buckets: 0.75 GiB estimated, a peak of 642 MiB measured).
LLOYD_ARRAYS = 5
#: faiss's ``ClusteringParameters.max_points_per_centroid``: it trains on a sample of at most
#: this many points per centroid (both sides leave it at faiss's default).
FAISS_MAX_POINTS = 256
#: mauve-text's k-means defaults (``kmeans_max_iter``, ``kmeans_num_redo``), for the
#: extrapolation.
PACKAGE_ITERATIONS, PACKAGE_REDOS = 500, 5


class Steps:
    """Seconds and peak memory growth (MiB) of named steps; a step run twice adds up."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.peak: dict[str, float] = {}
        #: per faiss k-means: its objective per iteration and its seconds per iteration
        self.faiss: list[tuple[np.ndarray, float]] = []

    @contextlib.contextmanager
    def __call__(self, name: str):
        with PeakRSS() as mem:
            start = time.perf_counter()
            yield
            took = time.perf_counter() - start
        self.seconds[name] = self.seconds.get(name, 0.0) + took
        self.peak[name] = max(self.peak.get(name, 0.0), mem.peak - mem.base)

    def wrap(self, name: str, function):
        def timed(*args, **kwargs):
            with self(name):
                return function(*args, **kwargs)
        return timed


@contextlib.contextmanager
def watched(steps: Steps):
    """Time markeval's PCA and k-means steps and faiss's k-means training (either package's)
    during one call, by wrapping the functions ``mauve`` calls: the parts of the very run
    whose total is reported, with nothing run a second time."""
    import faiss

    import markeval.distribution.mauve as module

    train = faiss.Kmeans.train

    def timed_train(self, x, *args, **kwargs):
        with steps("faiss_train"):
            out = train(self, x, *args, **kwargs)
        # faiss records its iterations from the start through the seeding it keeps (the
        # best), each with the seconds since the start: iterations of later seedings are run
        # but not recorded, so the seconds per iteration come from the record
        stats = self.iteration_stats
        steps.faiss.append((np.asarray(self.obj), stats[-1]["time"] / len(stats)))
        return out

    with mock.patch.object(module, "_project", steps.wrap("pca", module._project)), \
            mock.patch.object(module, "_cluster", steps.wrap("kmeans", module._cluster)), \
            mock.patch.object(faiss.Kmeans, "train", timed_train):
        yield


def estimate(n: int, buckets: int, dims: int, iterations: int) -> float:
    """Flops of faiss's k-means on ``2n`` points: ``iterations`` assignments of the training
    sample (at most ``FAISS_MAX_POINTS`` per centroid), then one of every point."""
    trained = min(2 * n, FAISS_MAX_POINTS * buckets)
    return 2.0 * buckets * dims * (trained * iterations + 2 * n)


def seedings(objectives: np.ndarray) -> list[np.ndarray]:
    """faiss's recorded objective per iteration split into seedings: within one it never
    rises (beyond rounding), and a new one starts from random centroids, far above where the
    last ended (about twice as high, on these samples)."""
    return np.split(objectives, np.flatnonzero(objectives[1:] > 1.1 * objectives[:-1]) + 1)


def objective_tail(runs: list[np.ndarray]) -> float:
    """The kept seeding's (the last recorded) relative fall over its last five iterations:
    0 when faiss stopped at a fixed point; NaN with fewer than six iterations."""
    kept = runs[-1]
    return float((kept[-6] - kept[-1]) / kept[-1]) if len(kept) >= 6 else float("nan")


def same_counts(ours, theirs, n: int) -> bool:
    """Whether two histograms hold the same counts per bucket, up to the buckets' numbering."""
    return bool(np.array_equal(np.sort(np.rint(np.asarray(ours) * n)),
                               np.sort(np.rint(np.asarray(theirs) * n))))


def one_size(n: int, args, code: str, machine: str) -> dict:
    from mauve import compute_mauve

    from markeval.distribution.mauve import auto_buckets, mauve, pca_project
    from markeval.geometry import IndexSettings
    from markeval.population.mark_evaluate import mark_evaluate

    a, b = word_sets(n, progress=False)
    p, q = a.astype(np.float64), b.astype(np.float64)
    buckets = auto_buckets(n, n) if args.buckets == "auto" else int(args.buckets)
    # the dimensions PCA keeps set the k-means cost: known before the long part starts
    start = time.perf_counter()
    union = np.vstack([q, p])
    dims = pca_project(union / np.linalg.norm(union, axis=1, keepdims=True)).shape[1]
    del union
    pca_alone = time.perf_counter() - start
    flops = estimate(n, buckets, dims, args.iterations * args.redos)
    row = dict(n=n, dim=a.shape[1], pca_dims=dims, buckets=buckets, iterations=args.iterations,
               redos=args.redos, seed=args.seed, threads=args.threads,
               kmeans_gflop=round(flops / 1e9, 1))
    print(f"\nn={n} per set, dim={a.shape[1]} -> {dims} after PCA ({pca_alone:.1f} s); "
          f"{buckets} buckets, {args.iterations} iterations x {args.redos} seedings; faiss "
          f"k-means at most ~{flops / 1e9:,.0f} GFLOP per side (2 * points * buckets * dims * "
          f"iterations * seedings); load average {os.getloadavg()[0]:.1f}", flush=True)
    settings = dict(n_buckets=buckets, n_init=args.redos, max_iter=args.iterations)

    theirs_steps = Steps()
    with watched(theirs_steps), theirs_steps("total"):
        theirs = compute_mauve(p_features=p, q_features=q, seed=args.seed, num_buckets=buckets,
                               kmeans_num_redo=args.redos, kmeans_max_iter=args.iterations)
    ours_steps = Steps()
    with watched(ours_steps), ours_steps("total"):
        ours = mauve(p, q, kmeans="faiss", seed=args.seed + 2, n_seeds=1, **settings)
    t, o = theirs_steps.seconds, ours_steps.seconds
    diffs = {f: abs(getattr(ours, f) - getattr(theirs, f))
             for f in ("mauve", "mauve_star", "frontier_integral", "frontier_integral_star")}
    same = (same_counts(ours.runs[0].p_hist, theirs.p_hist, n)
            and same_counts(ours.runs[0].q_hist, theirs.q_hist, n))
    # faiss stops a seeding early only at a fixed point (an iteration that leaves the
    # objective unchanged); the iterations it ran, on either side, from the seconds they took
    (objectives, per_iteration), theirs_per_iteration = ours_steps.faiss[-1], \
        theirs_steps.faiss[-1][1]
    ran = round(o["faiss_train"] / per_iteration)
    ran_theirs = round(t["faiss_train"] / theirs_per_iteration)
    # the package's defaults: auto buckets, 500 iterations x 5 seedings; an iteration's cost
    # is linear in the buckets and in the points trained on
    auto = auto_buckets(n, n)
    scale = (min(2 * n, FAISS_MAX_POINTS * auto) * auto
             / (min(2 * n, FAISS_MAX_POINTS * buckets) * buckets))
    rest = t["total"] - t["faiss_train"]
    # at most: every seeding runs all its iterations, no fixed point reached
    most = per_iteration * scale * PACKAGE_ITERATIONS * PACKAGE_REDOS + rest
    # where the recorded seedings reached a fixed point before the cap, the defaults'
    # seedings would stop after about as many iterations (at the same buckets)
    runs = seedings(objectives)
    to_fixed = float(np.mean([len(r) for r in runs]))
    if all(len(r) < args.iterations for r in runs):
        fixed = per_iteration * scale * to_fixed * PACKAGE_REDOS + rest
        fixed_note = f"~{fixed / 60:.1f} min at this run's {to_fixed:.0f} iterations a seeding"
    else:
        fixed, fixed_note = float("nan"), "this run's seedings stopped at the cap"
    tail = objective_tail(runs)
    fall = ("objective tail: n/a (fewer than six iterations)" if np.isnan(tail) else
            f"objective fell {tail:.3%} over the kept seeding's last five iterations")
    row.update(
        theirs_s=round(t["total"], 2), ours_s=round(o["total"], 2),
        ratio=round(t["total"] / o["total"], 3),
        theirs_mauve=theirs.mauve, ours_mauve=ours.mauve, mauve_diff=diffs["mauve"],
        theirs_mauve_star=theirs.mauve_star, ours_mauve_star=ours.mauve_star,
        mauve_star_diff=diffs["mauve_star"],
        max_frontier_diff=max(diffs["frontier_integral"], diffs["frontier_integral_star"]),
        same_histograms=same, iterations_run=ran, iterations_run_theirs=ran_theirs,
        theirs_kmeans_s=round(t["faiss_train"], 2),
        theirs_rest_s=round(t["total"] - t["faiss_train"], 2),
        ours_pca_s=round(o["pca"], 2), ours_kmeans_s=round(o["kmeans"], 2),
        ours_train_s=round(o["faiss_train"], 2),
        ours_rest_s=round(o["total"] - o["pca"] - o["kmeans"], 3),
        kmeans_gflops=round(2 * min(2 * n, FAISS_MAX_POINTS * buckets) * buckets * dims
                            / 1e9 / per_iteration, 1),
        s_per_iteration=round(per_iteration, 3), objective_tail=tail,
        extrapolated_default_max_s=round(most),
        extrapolated_default_fixed_point_s=round(fixed) if fixed == fixed else fixed,
        theirs_peak_mib=round(theirs_steps.peak["total"]),
        ours_peak_mib=round(ours_steps.peak["total"]),
        ours_pca_peak_mib=round(ours_steps.peak["pca"]),
        ours_kmeans_peak_mib=round(ours_steps.peak["kmeans"]))
    print(f"  mauve-text {t['total']:8.1f} s (k-means {t['faiss_train']:.1f} s, the rest "
          f"{row['theirs_rest_s']:.1f} s), peak {row['theirs_peak_mib']} MiB\n"
          f"  markeval   {o['total']:8.1f} s (PCA {o['pca']:.1f} s, k-means {o['kmeans']:.1f} s"
          f" of which faiss's training {o['faiss_train']:.1f} s, histograms and frontier "
          f"{row['ours_rest_s']:.3f} s), peak {row['ours_peak_mib']} MiB (PCA "
          f"{row['ours_pca_peak_mib']}, k-means {row['ours_kmeans_peak_mib']})\n"
          f"  ratio theirs / ours {row['ratio']:.2f}; MAUVE {theirs.mauve:.6f} vs "
          f"{ours.mauve:.6f}: |diff| {diffs['mauve']:.1e}, MAUVE* {diffs['mauve_star']:.1e}, "
          f"frontier integrals {row['max_frontier_diff']:.1e}; same histograms: {same}\n"
          f"  faiss ran ~{ran} of {args.iterations * args.redos} iterations (mauve-text's: "
          f"~{ran_theirs}; a seeding stops at a fixed point), {row['kmeans_gflops']:.0f} GFLOP/s,"
          f" {per_iteration:.2f} s per iteration; {fall}\n  extrapolated, not measured: "
          f"mauve-text's defaults ({auto} buckets, {PACKAGE_ITERATIONS} iterations x "
          f"{PACKAGE_REDOS} seedings) per side: at most ~{most / 3600:.2f} h (no fixed point);"
          f" {fixed_note}", flush=True)

    need = LLOYD_ARRAYS * 8 * 2 * n * buckets / 2**30
    if need <= args.lloyd_max_gib:
        lloyd_steps = Steps()
        with watched(lloyd_steps), lloyd_steps("total"):
            lloyd = mauve(p, q, kmeans="lloyd", seed=args.seed + 2, n_seeds=1, **settings)
        s = lloyd_steps.seconds
        row.update(lloyd_s=round(s["total"], 2), lloyd_pca_s=round(s["pca"], 2),
                   lloyd_kmeans_s=round(s["kmeans"], 2),
                   lloyd_rest_s=round(s["total"] - s["pca"] - s["kmeans"], 3),
                   lloyd_mauve=lloyd.mauve, lloyd_mauve_star=lloyd.mauve_star,
                   lloyd_peak_mib=round(lloyd_steps.peak["total"]),
                   lloyd_estimated_gib=round(need, 2), lloyd_note="run")
        print(f"  markeval lloyd {s['total']:6.1f} s (PCA {s['pca']:.1f} s, k-means "
              f"{s['kmeans']:.1f} s on one BLAS thread), peak {row['lloyd_peak_mib']} MiB "
              f"(estimated {need:.2f} GiB); MAUVE {lloyd.mauve:.6f}, MAUVE* "
              f"{lloyd.mauve_star:.6f} (other clusters than faiss's: not equal to them)",
              flush=True)
    else:
        row.update(lloyd_estimated_gib=round(need, 2),
                   lloyd_note=f"skipped: ~{need:.0f} GiB > {args.lloyd_max_gib:g} GiB")
        print(f"  markeval lloyd skipped: its {LLOYD_ARRAYS} matrices of {2 * n} x {buckets} "
              f"float64 need ~{need:.1f} GiB, above --lloyd-max-gib {args.lloyd_max_gib:g}",
              flush=True)

    index = IndexSettings(probes=args.probes or None)
    with PeakRSS() as mem:
        start = time.perf_counter()
        me = mark_evaluate(a, b, args.k, neighbours=index, progress=False)
        me_s = time.perf_counter() - start
    row.update(me_k=args.k, me_probes=index.probes_for(a.shape[1]), me_index_s=round(me_s, 2),
               me_peak_mib=round(mem.peak - mem.base), me_petersen=me.petersen.score,
               me_schnabel_quality=me.schnabel_quality.score,
               me_schnabel_diversity=me.schnabel_diversity.score, me_capture=me.capture.score,
               load=round(os.getloadavg()[0], 1), commit=code, machine=machine)
    print(f"  Mark-Evaluate index path (k={args.k}, probes={row['me_probes']}, all four "
          f"scores) {me_s:6.1f} s, peak {row['me_peak_mib']} MiB; Petersen "
          f"{me.petersen.score:.4f}", flush=True)
    return row


def append_rows(path: Path, rows: list[dict]) -> None:
    """Append ``rows``; when they bring new columns, rewrite the file with the union of the
    columns (older rows get empty cells), so that no row is read under the wrong header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old, fields = [], list(dict.fromkeys(key for r in rows for key in r))
    if path.exists():
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            old = list(reader)
            header = list(reader.fieldnames or [])
        if set(fields) <= set(header):
            with open(path, "a", newline="") as fh:
                csv.DictWriter(fh, fieldnames=header).writerows(rows)
            return
        fields = list(dict.fromkeys(header + fields))
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(old + rows)


def main() -> None:
    from markeval.reproduce.results import PACKAGE_RESULTS  # where chapters read them
    from markeval.reproduce.run import commit, machine

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--buckets", default="auto",
                        help="k-means clusters: 'auto' (n/10, both packages' default) or a count")
    parser.add_argument("--iterations", type=int, default=30,
                        help="k-means iterations per seeding (mauve-text's default: 500)")
    parser.add_argument("--redos", type=int, default=1,
                        help="k-means seedings, the best kept (mauve-text's default: 5)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="faiss OpenMP and BLAS threads, both sides (default: every core)")
    parser.add_argument("--seed", type=int, default=25,
                        help="mauve-text's seed (its default); markeval gets seed + 2")
    parser.add_argument("--lloyd-max-gib", type=float, default=4.0,
                        help="skip markeval's own k-means where its matrices need more")
    parser.add_argument("--k", type=int, default=3, help="Mark-Evaluate's k")
    parser.add_argument("--probes", type=int, default=0,
                        help="Mark-Evaluate's probes (default 0: by dimension)")
    parser.add_argument("--csv", type=Path,
                        default=PACKAGE_RESULTS / "benchmarks" / "mauve_scale.csv")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: n=2000, 3 iterations x 2 seedings, the row appended "
                        "to a temporary copy of --csv, never to the committed file")
    args = parser.parse_args()
    if args.smoke:
        from _smoke import scratch_copy

        args.sizes, args.iterations, args.redos = [2000], 3, 2  # two: the seedings split
        args.csv = scratch_copy(args.csv)
    if args.buckets != "auto" and not args.buckets.isdigit():
        parser.error(f"--buckets takes 'auto' or a whole number, got {args.buckets!r}")

    import faiss
    import mauve  # noqa: F401  (imports torch and transformers: seconds, kept out of the timings)
    from threadpoolctl import threadpool_limits

    code = commit()  # the code imported now, before a long run during which HEAD may move
    faiss.omp_set_num_threads(args.threads)
    rows = []
    with threadpool_limits(limits=args.threads):
        print(f"{args.threads} threads for faiss (OpenMP) and BLAS, both sides; "
              f"{os.cpu_count()} cores; seeds: mauve-text {args.seed}, markeval "
              f"{args.seed + 2}; buckets {args.buckets}, {args.iterations} iterations x "
              f"{args.redos} seedings (mauve-text's defaults: auto, {PACKAGE_ITERATIONS} x "
              f"{PACKAGE_REDOS})")
        for n in args.sizes:
            rows.append(one_size(n, args, code, machine()))
    append_rows(args.csv, rows)
    print(f"\nappended {len(rows)} rows to {args.csv}")


if __name__ == "__main__":
    main()
