"""The reproduction's command line: which stages, which profiles, where the results go.

Every user error ends with one line on stderr and exit status 2; Ctrl-C keeps every finished
unit, says how many, and exits with 130 (a rerun continues where it stopped). SIGTERM (``kill``,
``timeout``, a batch system's stop) stops the same way and exits with 143.

``--scheduler ADDRESS`` sends the units of the parallel stages to the workers of a Dask cluster
(``joblib.parallel_config(backend="dask")`` around a ``dask.distributed.Client(ADDRESS)``;
start the workers with :data:`markeval.experiments.parallel.DASK_WORKER_ENV`). A worker writes
each unit into the unit store under markeval's cache folder, so the workers must see the same
cache folder as this process (a shared file system, ``MARKEVAL_CACHE``); a unit that does not
arrive there is computed again here.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from markeval import _written as written
from markeval._cli_registry import CLIError, OneLineParser
from markeval.cache import NotOursError
from markeval.profile import PROFILES
from markeval.reproduce.results import results_dir
from markeval.reproduce.run import (UnitsInterrupted, refuse_foreign_results, result_paths,
                                    run_stage, write_comparison)
from markeval.reproduce.stages import all_stages

PROG = "python -m markeval.reproduce"
#: Seconds --scheduler waits for the Dask scheduler to answer.
SCHEDULER_TIMEOUT_S = 20


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expects a positive number of worker processes, "
                                         f"got {text!r}")
    return jobs


def _parser(stages) -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Reproduce the papers' experiments; finished units are kept and reused.")
    parser.add_argument("--stage", action="append", choices=list(stages),
                        help="a stage to run (repeatable; default: all)")
    parser.add_argument("--profile", action="append", choices=PROFILES,
                        help="'ci' (small) or 'full' (the papers' sizes); repeatable; "
                             "default: ci then full")
    parser.add_argument("--out", type=Path, default=None,
                        help="results folder (default: the one the chapters read, "
                             "$MARKEVAL_RESULTS or the package's own results)")
    parser.add_argument("--fresh", action="store_true",
                        help="forget the chosen stages' finished units (after a code change)")
    parser.add_argument("--force", action="store_true",
                        help="replace result files in --out that markeval did not write (or "
                             "that changed since); without it they stop the run, named")
    parser.add_argument("--jobs", type=_jobs, default=None,
                        help="worker processes for the units of a parallel stage "
                             "(default: one per core; 1: all in this process)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run the units of parallel stages on the Dask cluster whose "
                             "scheduler is at ADDRESS (e.g. tcp://10.0.0.5:8786); its workers "
                             "must share this machine's cache folder")
    parser.add_argument("--list", action="store_true", help="list the stages and exit")
    return parser


def _results_folder(out: Path) -> Path:
    """``out``, made and proven writable before any unit runs (a file is created there and
    removed), so that hours of units never end in a folder that cannot take their results."""
    if out.exists() and not out.is_dir():
        raise CLIError(f"--out {out}: is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CLIError(f"--out {out}: cannot create the folder ({err.strerror})") from None
    try:
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise CLIError(f"--out {out}: cannot write into the folder ({err.strerror})") from None
    return out


def _foreign_results(out: Path, *, force: bool) -> None:
    """Before any unit runs: stop at result files in ``out`` that markeval did not write, or
    with ``force`` delete them (the user asked for it) so that the run writes its own."""
    found = written.foreign(result_paths(out))
    if found and not force:
        refuse_foreign_results(out)
    for path in found:
        if path.is_dir() and not path.is_symlink():
            raise CLIError(f"--out {out}: {path.name} is a folder where a result file goes; "
                           f"move it away (--force replaces files only)")
        path.unlink()
        print(f"--force: removed {path} (not written by markeval, or changed since)",
              flush=True)


@contextlib.contextmanager
def _cluster(address: str | None):
    """Inside: joblib's units go to the Dask cluster at ``address`` (nothing when None)."""
    if address is None:
        yield
        return
    try:
        import joblib
        from dask.distributed import Client
    except ImportError:
        raise CLIError('--scheduler needs Dask: pip install "markeval[cluster]"') from None
    try:
        client = Client(address, timeout=f"{SCHEDULER_TIMEOUT_S}s")
    except MemoryError:
        # Dask read a reply's first bytes as a frame length: what answered is no Dask scheduler
        # (an HTTP server's "HTTP/1.1 4" is 3.07 EiB).
        raise CLIError(f"--scheduler {address}: what answers there does not speak Dask's "
                       f"protocol (an HTTP server? a Dask scheduler's address is "
                       f"tcp://HOST:8786, its dashboard's port is another)") from None
    except ValueError as err:  # an address Dask cannot parse (a mistyped scheme)
        raise CLIError(f"--scheduler {address}: cannot reach the scheduler ({err})") from None
    except Exception as err:  # noqa: BLE001 - any failure to connect ends in one line
        raise CLIError(f"--scheduler {address}: cannot reach a Dask scheduler within "
                       f"{SCHEDULER_TIMEOUT_S} s ({type(err).__name__}: {err})") from None
    try:
        with joblib.parallel_config(backend="dask"):
            yield
    finally:
        client.close()


@contextlib.contextmanager
def _sigterm_as_ctrl_c():
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does, unless ignored.

    Its default ends the process at once: the unit being computed is lost either way, but the
    line that says how many units are kept would be too. Yields a list that receives the
    signal's number when it comes. A process started with SIGTERM ignored keeps ignoring it,
    as Python treats an ignored SIGINT.
    """
    received: list[int] = []
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is signal.SIG_IGN):
        yield received
        return

    def stop(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv=None) -> int:
    """Run the reproduction on ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    with _sigterm_as_ctrl_c() as received:
        status = _main(argv)
    return 128 + signal.SIGTERM if received and status == 128 + signal.SIGINT else status


def _main(argv) -> int:
    kept = 0
    try:
        stages = all_stages()
        args = _parser(stages).parse_args(argv)
        if args.list:
            for stage in stages.values():
                print(f"{stage.name:28} {stage.title}")
            return 0
        out = _results_folder(results_dir() if args.out is None else args.out)
        _foreign_results(out, force=args.force)
        chosen = args.stage or list(stages)
        profiles = args.profile or ["ci", "full"]
        start = time.perf_counter()
        with _cluster(args.scheduler):
            for profile in profiles:
                for name in chosen:
                    run = run_stage(stages[name], profile, out, fresh=args.fresh,
                                    n_jobs=args.jobs)
                    kept += run.computed
                    print(f"{name} ({profile}): {run.computed} units computed, {run.reused} "
                          f"reused, {run.wall_s:.0f} s (units' compute time "
                          f"{run.compute_s:.0f} s)", flush=True)
                    if run.kept:
                        print(f"  --fresh kept {len(run.kept)} files markeval did not write: "
                              f"{', '.join(str(p) for p in run.kept)}", flush=True)
        write_comparison(out)
        written.compact(out)  # one line per file: the manifest is committed with the results
        print(f"all done in {time.perf_counter() - start:.0f} s; results in {out}")
    except SystemExit as done:  # --help
        return done.code
    except (CLIError, NotOursError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        kept += stop.kept if isinstance(stop, UnitsInterrupted) else 0
        print(f"\ninterrupted; {kept} units kept, rerun to continue", file=sys.stderr)
        return 128 + signal.SIGINT
    return 0
