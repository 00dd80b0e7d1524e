"""What the README's commands cost a newcomer: a fresh clone, empty caches, this machine.

``python benchmarks/fresh_machine.py`` (from the repository root, with the project's
environment's Python) measures the commands in the order a newcomer runs them and writes
``benchmarks/fresh_machine.json``, from which it rewrites the cost table of the README (between
``<!-- cost table -->`` and ``<!-- /cost table -->``; ``--table-only`` rewrites it from the
committed file without measuring, and ``tests/test_package.py`` requires the two to agree):

1. ``git clone`` of this repository's ``HEAD`` into a scratch folder with no ``shared/`` beside
   it, so that the clone finds no data but what ``make install`` gets for it;
2. a local HTTP server laid out as the data's public sources (``MARKEVAL_DATA_MIRROR``), from
   this checkout's copies: the project's machine reaches the package registries only. With
   internet access ``make install`` downloads from the sources themselves (26 MB);
3. every cache empty and inside the scratch folder: pip's and npm's (so every package is
   downloaded), markeval's, Hugging Face's and matplotlib's; ``make book`` gets fresh ones
   again and no ``_build``, so that it pays for every encoding as a newcomer would;
4. for each command: the wall time, the CPU time, the peak memory (the summed proportional
   set size, PSS, of the command's process tree, sampled every :data:`SAMPLE_S` seconds: the
   kernel walks every page of a process to add up its PSS, so sampling more often costs the
   measured command a noticeable share of the CPU) and the disk of ``.venv``, the caches and
   ``_build`` afterwards.

``make reproduce``'s full profile takes a day on two cores, more than this script can wait:
its row gives the compute time of every unit as the runs that made the committed results
recorded it (``markeval/results/provenance.json``), and the ``ci`` profile is run cold
(``python -m markeval.reproduce --profile ci --out <scratch>``) to give its wall time, peak
memory and disk here.

``--smoke`` checks that the script works in seconds, not the hour of a real run: one trivial
command measured as the steps are, and the table rebuilt from the committed result into a
temporary copy of the README (the README and the result are left alone).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULT = Path(__file__).resolve().parent / "fresh_machine.json"
README = REPO / "README.md"
BEGIN, END = "<!-- cost table -->", "<!-- /cost table -->"
#: Seconds between two samples of the memory in use (at 0.5 s the sampling took 15-20 % of a core).
SAMPLE_S = 2.0
#: What is measured, in this order (a label and the command, run in the clone).
STEPS = (("make install", ["make", "install"]),
         ("make test", ["make", "test"]),
         ("make book", ["make", "book"]),
         ("reproduce, ci profile", None))


def _tree_pss(pid: int) -> int:
    """Bytes of memory the process ``pid`` and its descendants hold (PSS: a page shared by n
    processes counts 1/n to each, so shared libraries are counted once)."""
    import psutil

    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for process in processes:
        try:
            total += process.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


def run_measured(command: list[str], cwd: Path, env: dict, log: Path) -> dict:
    """Run ``command``; its wall and CPU seconds, exit status and peak memory."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        peak = [0]

        def sample():
            while process.poll() is None:
                peak[0] = max(peak[0], _tree_pss(process.pid))
                time.sleep(SAMPLE_S)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        status = process.wait()
        sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"status": status, "wall_s": round(time.monotonic() - start, 1),
            "cpu_s": round(cpu, 1), "peak_gb": round(peak[0] / 1e9, 2)}


def disk_gb(*paths: Path) -> float:
    """Size on disk (GB) of the files under ``paths``, hard links counted once."""
    seen, total = set(), 0
    for path in paths:
        for folder, _, files in os.walk(path):
            for name in files:
                try:
                    stat = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                if (stat.st_dev, stat.st_ino) not in seen:
                    seen.add((stat.st_dev, stat.st_ino))
                    total += stat.st_blocks * 512
    return round(total / 1e9, 2)


def _fresh_caches(scratch: Path, name: str) -> dict:
    caches = scratch / name
    caches.mkdir(parents=True)
    return {"XDG_CACHE_HOME": str(caches), "PIP_CACHE_DIR": str(caches / "pip"),
            "npm_config_cache": str(caches / "npm"), "MARKEVAL_CACHE": str(caches / "markeval"),
            "HF_HOME": str(caches / "huggingface"), "MPLCONFIGDIR": str(caches / "matplotlib")}


def _ask(python: Path, code: str) -> str:
    """What ``code`` prints, run by the clone's own Python: the clone's code, not this
    checkout's, which may change while the hours of measuring go by."""
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def _machine(python: Path) -> str:
    return _ask(python, "from markeval.reproduce.run import machine; print(machine())")


def _gpu(python: Path) -> str:
    return "yes" if _ask(python, "import torch; print(torch.cuda.is_available())") == "True" \
        else "no"


def measure(scratch: Path) -> dict:
    from tools.colab_index import Server, data_mirror

    clone = scratch / "work" / "markeval"
    subprocess.run(["git", "clone", "--quiet", "--no-local", str(REPO), str(clone)], check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, check=True,
                            capture_output=True, text=True).stdout.strip()
    data_mirror(scratch / "mirror")
    base = {key: value for key, value in os.environ.items()
            if not key.startswith(("MARKEVAL_", "MAKE", "MFLAGS", "PYTEST"))}
    rows = []
    with Server(scratch / "mirror") as server:
        caches = _fresh_caches(scratch, "caches-1")
        for label, command in STEPS:
            if label == "make book":  # cold again: its own empty caches, no _build
                shutil.rmtree(clone / "_build", ignore_errors=True)
                caches = _fresh_caches(scratch, "caches-2")
            if command is None:  # make reproduce's ci profile (into a scratch folder), cold
                caches = _fresh_caches(scratch, "caches-3")
                command = ["sh", "-c", "make data && OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 "
                           "MARKEVAL_OFFLINE=1 PYTHONHASHSEED=0 .venv/bin/python -m "
                           f"markeval.reproduce --profile ci --out {scratch / 'results'}"]
            env = {**base, **caches, "MARKEVAL_DATA_MIRROR": server.url}
            print(f"{label} ...", flush=True)
            row = run_measured(command, clone, env, scratch / f"{label.split(',')[0]}.log")
            row.update(command=label, venv_gb=disk_gb(clone / ".venv"),
                       cache_gb=disk_gb(Path(caches["MARKEVAL_CACHE"])),
                       downloads_gb=disk_gb(Path(caches["PIP_CACHE_DIR"]),
                                            Path(caches["npm_config_cache"])),
                       build_gb=disk_gb(clone / "_build"))
            print(f"  {row}", flush=True)
            rows.append(row)
            # each step as it ends, for the record (the committed result is written at the end)
            (scratch / "steps.json").write_text(json.dumps(rows, indent=1) + "\n")
            if row["status"] != 0:
                break
    python = clone / ".venv" / "bin" / "python"
    return {"commit": commit, "machine": _machine(python), "cores": os.cpu_count(),
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "gpu": _gpu(python), "steps": rows}


def _hours(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 90 else f"{minutes // 60} h {minutes % 60:02d} min"


def _full_reproduce() -> tuple[float, int]:
    """The compute time (s) of every unit of the full profile, as recorded, and the stages."""
    provenance = json.loads((REPO / "markeval" / "results" / "provenance.json").read_text())
    full = [stage["full"] for stage in provenance.values() if "full" in stage]
    return sum(run["cold_compute_s"] for run in full), len(full)


def table(result: dict) -> str:
    """The README's cost table, from a measured result."""
    lines = ["| command | wall time | CPU time | peak memory | `.venv` | markeval's cache | "
             "pip's and npm's caches | `_build` |", "|---|---|---|---|---|---|---|---|"]
    for row in result["steps"]:
        name = (f"`{row['command']}`" if row["command"].startswith("make")
                else "`make reproduce`, `ci` profile")
        failed = "" if row["status"] == 0 else f" (failed, exit {row['status']})"
        lines.append(f"| {name}{failed} | {_hours(row['wall_s'])} | {_hours(row['cpu_s'])} | "
                     f"{row['peak_gb']:.1f} GB | {row['venv_gb']:.1f} GB | "
                     f"{row['cache_gb']:.2f} GB | {row['downloads_gb']:.2f} GB | "
                     f"{row['build_gb']:.2f} GB |")
    compute, stages = _full_reproduce()
    lines.append(f"| `make reproduce`, `full` profile | about {_hours(compute / 2)}, two units "
                 f"at a time | {_hours(compute)}: the {stages} stages' units, as their runs "
                 "recorded them | see \"Reproducing the papers\" | | | | |")
    when = result["finished"][:10]
    gpu = "a GPU was not used" if result["gpu"] == "no" else "a GPU was available"
    lines += ["", f"Measured by `python benchmarks/fresh_machine.py` on {when} at commit "
              f"`{result['commit'][:10]}`: a fresh clone, every cache empty, on "
              f"{result['machine']} ({gpu}); each command after the one above it, `make book` "
              "and the `ci` profile with empty caches again. CPU time is that of all processes "
              "added up; the caches are sizes after the command (pip's and npm's hold the "
              "downloads of `make install` and can be deleted)."]
    return "\n".join(lines)


def write_table(result: dict, readme: Path | None = None) -> None:
    """Rewrite the cost table of ``readme`` (default: :data:`README`, looked up when called:
    tests/test_package.py points it at a scratch file)."""
    readme = readme or README
    text = readme.read_text(encoding="utf-8")
    # The block may be empty (its two markers on adjacent lines) before the first measurement.
    pattern = re.compile(re.escape(BEGIN) + r"\n(?:.*?\n)?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"README.md has no {BEGIN} ... {END} block")
    readme.write_text(pattern.sub(lambda _: f"{BEGIN}\n{table(result)}\n{END}", text),
                      encoding="utf-8")


def smoke() -> int:
    """What ``--smoke`` runs: the measuring and the table's writing, on a trivial command and
    into a temporary copy of the README."""
    from _smoke import scratch_copy

    readme = scratch_copy(README)
    row = run_measured([sys.executable, "-c", "pass"], readme.parent, dict(os.environ),
                       readme.parent / "smoke.log")
    print(f"a trivial command, measured: {row}; {disk_gb(readme.parent)} GB on disk")
    write_table(json.loads(RESULT.read_text(encoding="utf-8")), readme)
    print(f"the table rebuilt from {RESULT.name} into {readme}")
    return row["status"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table-only", action="store_true",
                        help="rewrite the README's table from the committed result only")
    parser.add_argument("--scratch", type=Path, help="keep the clone and logs here")
    parser.add_argument("--smoke", action="store_true",
                        help="check the script in seconds: measure a trivial command and "
                        "rebuild the table into a temporary copy of the README (a real run "
                        "takes an hour; nothing committed is written)")
    args = parser.parse_args(argv)
    if args.smoke:
        return smoke()
    if not args.table_only:
        if args.scratch:
            args.scratch.mkdir(parents=True, exist_ok=True)
            result = measure(args.scratch)
        else:
            with tempfile.TemporaryDirectory() as scratch:
                result = measure(Path(scratch))
        failed = [step for step in result["steps"] if step["status"] != 0]
        if failed:  # a failed command has no cost to tell; its log says why
            print(f"{failed[0]['command']} failed (exit {failed[0]['status']}); the README's "
                  f"table is left as it is", file=sys.stderr)
            return 1
        RESULT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    write_table(json.loads(RESULT.read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
