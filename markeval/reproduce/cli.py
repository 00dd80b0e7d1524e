"""The reproduction's command line: which stages, which profiles, where the results go."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from markeval.profile import PROFILES
from markeval.reproduce.run import run_stage, write_comparison
from markeval.reproduce.stages import all_stages


def _parser(stages) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m markeval.reproduce",
        description="Reproduce the papers' experiments; finished units are kept and reused.")
    parser.add_argument("--stage", action="append", choices=list(stages),
                        help="a stage to run (repeatable; default: all)")
    parser.add_argument("--profile", action="append", choices=PROFILES,
                        help="'ci' (small) or 'full' (the papers' sizes); repeatable; "
                             "default: ci then full")
    parser.add_argument("--out", type=Path, default=Path("book/results"),
                        help="results folder (default: book/results)")
    parser.add_argument("--fresh", action="store_true",
                        help="forget the chosen stages' finished units (after a code change)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes for the units of a parallel stage "
                             "(default: one per core; 1: all in this process)")
    parser.add_argument("--list", action="store_true", help="list the stages and exit")
    return parser


def main(argv=None) -> None:
    stages = all_stages()
    args = _parser(stages).parse_args(argv)
    if args.list:
        for stage in stages.values():
            print(f"{stage.name:28} {stage.title}")
        return
    chosen = args.stage or list(stages)
    profiles = args.profile or ["ci", "full"]
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for profile in profiles:
        for name in chosen:
            run = run_stage(stages[name], profile, args.out, fresh=args.fresh,
                            n_jobs=args.jobs)
            print(f"{name} ({profile}): {run.computed} units computed, {run.reused} reused, "
                  f"{run.wall_s:.0f} s (units' compute time {run.compute_s:.0f} s)", flush=True)
    write_comparison(args.out)
    print(f"all done in {time.perf_counter() - start:.0f} s; results in {args.out}")
