"""Mark-Evaluate's counts from the neighbour index against the exact ones, on real word samples.

For each encoder and size ``n`` (samples per set) the script computes the k-NN balls of the
two sets and who is inside whose ball twice: exactly (``neighbours="exact"``, float32 tiles)
and from the index (``neighbours=IndexSettings(probes=P)``), and prints

* per sample (of ``2 n``), the share whose counts agree: ``neighbours`` (its ``k`` nearest in
  its own set: the Schnabel censuses' catch), ``marked`` (inside some ball of the other set:
  Petersen's marks), ``captured`` (other-set points its ball holds: CAPTURE's and Schnabel's
  captures), ``recaptured`` (other-set balls holding it), and ``all`` of them at once;
* the largest difference of the four Mark-Evaluate scores and of improved precision and
  recall (computed from the same balls) from the exact ones;
* the index path's own account: balls consistent with their candidates, exact fallbacks, its
  audit, and the audit's estimate of each score's error beside the true error;
* both wall times.

Data: :func:`neighbour_data.word_sets` (WMT17 references against a system's outputs, word
samples of the last five layers). The exact results are kept under
``cache_root()/benchmarks`` (they take minutes at 10⁵), so a rerun with other probes reuses
them. Rows go to ``--csv`` (appended), each with the commit and machine that produced it.

    nice -n 10 python benchmarks/neighbour_agreement.py [--models minilm mpnet]
        [--sizes 25000 100000] [--k 3] [--probes 32 128] [--smoke]   (probes default: by dimension)
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from neighbour_data import word_sets  # noqa: E402

FIELDS = ("ia", "sa", "ib", "sb", "abp", "app", "bbp", "bpp")


def _arrays(g) -> dict:
    return dict(ia=g.balls_a.indices, sa=g.balls_a.sq_distances, ib=g.balls_b.indices,
                sb=g.balls_b.sq_distances, abp=g.a_in_b.balls_per_point,
                app=g.a_in_b.points_per_ball, bbp=g.b_in_a.balls_per_point,
                bpp=g.b_in_a.points_per_ball)


def exact_arrays(a, b, k, path: Path):
    """The exact path's arrays, computed once and kept in ``path``."""
    from markeval.geometry import mutual_balls

    if path.exists():
        with np.load(path) as z:
            return {f: z[f] for f in FIELDS}, float(z["seconds"])
    start = time.perf_counter()
    got = _arrays(mutual_balls(a, b, k, progress=True))
    seconds = time.perf_counter() - start
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, seconds=seconds, **got)
    return got, seconds


def scores(x: dict, k: int) -> dict:
    """The four ME scores and IPR's precision and recall from the arrays."""
    from markeval.geometry import KNNBalls, Membership
    from markeval.population.mark_evaluate import mark_evaluate_from_balls

    pts = np.zeros((len(x["ia"]), 1))
    balls = KNNBalls(pts, k, x["ia"], x["sa"])
    balls_prime = KNNBalls(np.zeros((len(x["ib"]), 1)), k, x["ib"], x["sb"])
    me = mark_evaluate_from_balls(balls, balls_prime, membership=(
        Membership(x["abp"], x["app"]), Membership(x["bbp"], x["bpp"])))
    return {"petersen": me.petersen.score, "schnabel_quality": me.schnabel_quality.score,
            "schnabel_diversity": me.schnabel_diversity.score, "capture": me.capture.score,
            # a = reference, b = candidate: precision = candidates inside reference balls.
            "ipr_precision": float((x["bbp"] > 0).mean()),
            "ipr_recall": float((x["abp"] > 0).mean())}


def estimated_errors(me, ipr) -> dict:
    """What the index path's audit estimates each score's error to be."""
    out = {name: getattr(me, name).estimated_error
           for name in ("petersen", "schnabel_quality", "schnabel_diversity", "capture")}
    out["ipr_precision"], out["ipr_recall"] = ipr.estimated_error
    return out


def agreement(e: dict, i: dict) -> dict:
    """Shares of the 2 n samples whose counts agree (see the module docstring)."""
    parts = {
        "neighbours": [(e["ia"] == i["ia"]).all(1), (e["ib"] == i["ib"]).all(1)],
        "marked": [(e["abp"] > 0) == (i["abp"] > 0), (e["bbp"] > 0) == (i["bbp"] > 0)],
        "captured": [e["app"] == i["app"], e["bpp"] == i["bpp"]],
        "recaptured": [e["abp"] == i["abp"], e["bbp"] == i["bbp"]],
    }
    out = {name: float(np.concatenate(v).mean()) for name, v in parts.items()}
    everything = [np.logical_and.reduce([v[side] for v in parts.values()]) for side in (0, 1)]
    out["all"] = float(np.concatenate(everything).mean())
    return out


def main() -> None:
    from markeval.cache import cache_root
    from markeval.distribution.ipr import improved_precision_recall_from_balls
    from markeval.geometry import IndexAgreementWarning, IndexSettings, mutual_balls
    from markeval.population.mark_evaluate import mark_evaluate_from_balls
    from markeval.reproduce.run import commit, machine

    from markeval.reproduce.results import PACKAGE_RESULTS  # where chapters read them

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["minilm", "mpnet"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[25_000, 100_000])
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--probes", nargs="+", type=int, default=[None],
                        help="lists probed (default: geometry.default_probes of the dimension)")
    parser.add_argument("--csv", type=Path,
                        default=PACKAGE_RESULTS / "benchmarks" / "neighbour_agreement.csv")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: minilm, n=300, the rows appended to a temporary "
                        "copy of --csv, never to the committed file")
    args = parser.parse_args()
    if args.smoke:
        from _smoke import scratch_copy

        args.models, args.sizes, args.csv = ["minilm"], [300], scratch_copy(args.csv)

    code = commit()  # the code imported now, before a long run during which HEAD may move
    rows = []
    for model in args.models:
        for n in args.sizes:
            a, b = word_sets(n, model)
            print(f"\n{model} n={n} per set, dim={a.shape[1]}, k={args.k}; load average "
                  f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
            exact, exact_s = exact_arrays(
                a, b, args.k, cache_root() / "benchmarks" / f"exact-{model}-{n}-k{args.k}.npz")
            want = scores(exact, args.k)
            for probes in args.probes:
                settings = IndexSettings(probes=probes)
                probes = settings.probes_for(a.shape[1])
                start = time.perf_counter()
                with warnings.catch_warnings(record=True) as gate:  # its verdict is a column
                    warnings.simplefilter("always", IndexAgreementWarning)
                    g = mutual_balls(a, b, args.k, neighbours=settings, progress=True)
                    index_s = time.perf_counter() - start
                me = mark_evaluate_from_balls(g.balls_a, g.balls_b,
                                              membership=(g.a_in_b, g.b_in_a))
                ipr = improved_precision_recall_from_balls(g)
                got = _arrays(g)
                agree = agreement(exact, got)
                have = scores(got, args.k)
                diff = {key: abs(have[key] - want[key]) for key in want}
                r = g.report
                row = dict(model=model, n=n, dim=a.shape[1], k=args.k, probes=probes,
                           exact_s=round(exact_s, 1), index_s=round(index_s, 1),
                           **{f"agree_{key}": round(v, 6) for key, v in agree.items()},
                           max_me_diff=max(diff[s] for s in ("petersen", "schnabel_quality",
                                                             "schnabel_diversity", "capture")),
                           max_ipr_diff=max(diff["ipr_precision"], diff["ipr_recall"]),
                           consistent_fraction=round(r.consistent_fraction, 6),
                           fallback=r.fallback, audited=r.audited, audit_agreed=r.agreed,
                           below_gate=r.below_gate, warned=bool(gate),
                           **{f"error_{key}": have[key] - want[key] for key in want},
                           **{f"estimated_error_{key}": v
                              for key, v in estimated_errors(me, ipr).items()},
                           **{f"exact_{key}": v for key, v in want.items()},
                           **{f"index_{key}": v for key, v in have.items()},
                           load=round(os.getloadavg()[0], 1), commit=code, machine=machine())
                rows.append(row)
                print(f"probes={probes}: exact {exact_s:.0f} s, index {index_s:.0f} s "
                      f"({exact_s / index_s:.1f}x); samples agreeing: all {agree['all']:.5f} "
                      f"(neighbours {agree['neighbours']:.5f}, marked {agree['marked']:.5f}, "
                      f"captured {agree['captured']:.5f}, recaptured "
                      f"{agree['recaptured']:.5f}); max |score diff| ME {row['max_me_diff']:.2e}"
                      f", IPR {row['max_ipr_diff']:.2e}; {r}", flush=True)
                goal = agree["all"] >= 0.999 and row["max_me_diff"] <= 1e-3 \
                    and row["max_ipr_diff"] <= 1e-3
                print(f"  goal (>= 99.9 % of samples agree, every score within 1e-3): "
                      f"{'met' if goal else 'NOT met'}", flush=True)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    fields = list(rows[0])
    new = not args.csv.exists()
    if not new:
        with open(args.csv, newline="") as fh:
            header = next(csv.reader(fh), [])
        if header != fields:  # rows appended under another header would be read wrongly
            keep = args.csv.with_name(f"{args.csv.stem}-{code[:10]}.csv")
            print(f"\n{args.csv} has other columns (written by older code); these rows go "
                  f"to {keep}: rerun every row there, then move it in place")
            args.csv, new = keep, not keep.exists()
    with open(args.csv, "a", newline="") as fh:  # appended: one run per model or size is fine
        writer = csv.DictWriter(fh, fieldnames=fields)
        if new:
            writer.writeheader()
        writer.writerows(rows)
    print(f"\nappended {len(rows)} rows to {args.csv}")


if __name__ == "__main__":
    main()
