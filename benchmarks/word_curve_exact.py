"""The word-level curve's units through the neighbour index against exact counts.

``wmt17_word_curve`` scores each system's pooled word samples at 400 sentences and more with
``neighbours="index"``. This script recomputes some of its units twice in one run, through
the index (the stage's settings) and with exact counts (the same settings, ``neighbours=
"exact"``), and prints, per unit, both wall times, their ratio and the largest difference of
any score; every score's pair of values goes to ``--csv`` (appended), with the commit, the
machine and the load average.

    nice -n 10 python benchmarks/word_curve_exact.py [--units word/cs-en/400/PJATK.4760 ...]
        [--smoke]
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

DEFAULT_UNITS = ["word/cs-en/400/PJATK.4760", "word/zh-en/400/online-B.0"]
#: A unit at the smallest size of the stage's ci profile: 4 sentences, a few hundred samples a set.
SMOKE_UNIT = "word/cs-en/4/PJATK.4760"


def main() -> None:
    from markeval.reproduce.run import commit, machine
    from markeval.reproduce.stages import get_stage

    from markeval.reproduce.results import PACKAGE_RESULTS  # where chapters read them

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", nargs="+", default=DEFAULT_UNITS)
    parser.add_argument("--csv", type=Path,
                        default=PACKAGE_RESULTS / "benchmarks" / "word_curve_exact.csv")
    parser.add_argument("--smoke", action="store_true",
                        help=f"smallest run: the unit {SMOKE_UNIT}, the rows appended to a "
                        "temporary copy of --csv, never to the committed file")
    args = parser.parse_args()
    if args.smoke:
        from _smoke import scratch_copy

        args.units, args.csv = [SMOKE_UNIT], scratch_copy(args.csv)

    stage = get_stage("wmt17_word_curve")
    settings = stage.settings_for("full")
    code = commit()
    rows = []
    for unit in args.units:
        load = os.getloadavg()[0]
        got, seconds = {}, {}
        for neighbours in ("index", "exact"):
            start = time.perf_counter()
            got[neighbours] = stage.compute(unit, {**settings, "neighbours": neighbours})
            seconds[neighbours] = time.perf_counter() - start
        index, exact = got["index"], got["exact"]
        diff = (index.value - exact.value).abs()
        print(f"{unit}: index {seconds['index']:.0f} s, exact {seconds['exact']:.0f} s "
              f"({seconds['exact'] / seconds['index']:.1f}x); largest |score difference| "
              f"{diff.max():.1e} ({index.metric[diff.idxmax()]} K={index.k[diff.idxmax()]})",
              flush=True)
        for i in range(len(index)):
            rows.append(dict(unit=unit, metric=index.metric[i], k=index.k[i],
                             index_value=index.value[i], exact_value=exact.value[i],
                             abs_diff=diff[i], index_s=round(seconds["index"], 1),
                             exact_s=round(seconds["exact"], 1), load=round(load, 1),
                             commit=code, machine=machine()))
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    new = not args.csv.exists()
    with open(args.csv, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)
    print(f"appended {len(rows)} rows to {args.csv}")


if __name__ == "__main__":
    main()
