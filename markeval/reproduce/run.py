"""Run stages, keep their units, and write the committed results with their provenance.

Writes into the results folder (``markeval/results`` in the repository, shipped with the
package; :func:`markeval.reproduce.results.results_dir`):

* ``<stage>.csv`` — every unit's rows, with ``profile`` and ``unit`` columns; rerunning one
  profile replaces that profile's rows only;
* ``paper_comparison.csv`` — every number the book sets beside a paper's
  (:data:`~markeval.reproduce.stage.COMPARISON_COLUMNS`), rebuilt from all result files;
* ``provenance.json`` — per stage and profile: settings; the commit, command, machine and
  date of the last run that computed a unit (a rerun that reused every unit keeps them); each
  unit's own commit, machine and finishing time (``unit_provenance``: units computed before
  units recorded it have none); the wall time of the last run; and the compute time of all
  its units (the cold time, even when the units were computed by several interrupted runs);
* ``timings.csv`` — one line per stage per run: the per-stage time log;
* ``.markeval-written`` — the size and SHA-256 of each file above as markeval wrote it
  (:mod:`markeval._written`). A run reads and replaces only files that match it: a file of
  the same name that markeval did not write, or that changed since, stops the run before any
  unit is computed, named (:func:`refuse_foreign_results`; the command's ``--force`` replaces
  such files).
"""

from __future__ import annotations

import datetime
import io
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from markeval.reproduce.stage import COMPARISON_COLUMNS, Stage
from markeval.reproduce.stages import all_stages
from markeval.cache import atomic_write, refuse_foreign
from markeval.reproduce.store import FLOAT_FORMAT, UnitStore

__all__ = ["RESULT_FLOAT_FORMAT", "StageRun", "UnitsInterrupted", "commit", "compute_units",
           "machine", "read_rows", "refuse_foreign_results", "result_paths", "run_stage",
           "write_comparison"]

#: Committed result files keep 12 significant digits: exact enough to compare, short to diff.
RESULT_FLOAT_FORMAT = "%.12g"


class UnitsInterrupted(KeyboardInterrupt):
    """Ctrl-C while a stage's units ran; ``kept`` of them had finished and are in the store."""

    def __init__(self, kept: int):
        super().__init__(f"{kept} units kept")
        self.kept = kept


@dataclass(frozen=True)
class StageRun:
    """What one run of one stage did."""

    stage: str
    profile: str
    computed: int
    reused: int
    wall_s: float
    compute_s: float
    #: Files ``--fresh`` left in the stage's unit folder because markeval did not write them.
    kept: tuple[Path, ...] = ()


def compute_units(stage: Stage, profile: str, units=None, *, store: UnitStore | None = None,
                  progress: bool = True, n_jobs: int | None = 1, overrides: dict | None = None
                  ) -> tuple[pd.DataFrame, list[float], int]:
    """Rows of ``units`` (default: all) with ``unit`` and ``profile`` columns.

    ``overrides`` replace some of the profile's settings (a stage's ``check_narrowing``); the
    rows then differ from the profile's, so they cannot go to a ``store``, which is keyed by
    the profile's settings.

    With a ``store``, finished units are read from it and new ones written to it. Every
    unit's rows pass through the same CSV round trip, cached or not, so a resumed run gives
    the same table as an uninterrupted one. A :attr:`~Stage.parallel` stage with a disk
    store computes its missing units in ``n_jobs`` worker processes (None: one per core;
    :func:`markeval.experiments.parallel.run_units`), each writing its unit to the store;
    the rows are the same as a serial run's. Returns the rows, each unit's seconds and the
    number of units computed now.
    """
    from tqdm import tqdm  # not tqdm.auto: it warns on stderr in a notebook without ipywidgets

    from markeval.experiments.parallel import resolve_n_jobs, run_units

    settings = stage.settings_for(profile)
    if overrides:
        if store is not None:
            raise ValueError(f"overrides {overrides!r} cannot be computed into a store: it "
                             f"keeps the rows of profile {profile!r}'s own settings")
        settings = {**settings, **overrides}
    units = list(stage.units(settings) if units is None else units)
    n_jobs = resolve_n_jobs(n_jobs)
    store = store or _MemoryStore()
    missing = [unit for unit in units if store.get(unit) is None]
    fan_out = stage.parallel and n_jobs != 1 and isinstance(store, UnitStore) and len(missing) > 1
    frames, seconds = [], []
    try:
        if fan_out:
            if stage.prepare is not None:
                stage.prepare(settings)  # shared inputs to the disk cache once, not per worker
            ordered = missing if stage.cost is None else sorted(
                missing, key=lambda unit: -stage.cost(unit, settings))  # costliest first
            run_units(_compute_into_store, [(stage, profile, settings, unit, store.root)
                                            for unit in ordered],
                      n_jobs=n_jobs, progress=progress, desc=f"{stage.name} ({profile})")
        for unit in tqdm(units, desc=f"{stage.name} ({profile})", unit="unit",
                         disable=not progress or fan_out):
            got = store.get(unit)
            if got is None:
                _compute_into(store, stage, settings, unit)
                got = store.get(unit)
            rows, took = got
            frames.append(rows.assign(profile=profile, unit=unit))
            seconds.append(took)
    except KeyboardInterrupt:
        raise UnitsInterrupted(sum(store.get(unit) is not None for unit in missing)) from None
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    front = ["profile", "unit"]
    return table[front + [c for c in table.columns if c not in front]], seconds, len(missing)


def _compute_into(store, stage: Stage, settings: dict, unit: str) -> None:
    start = time.perf_counter()
    rows = stage.compute(unit, settings)
    finished = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    store.put(unit, rows, seconds=time.perf_counter() - start,
              provenance={"commit": commit(), "machine": machine(), "finished": finished})


def _compute_into_store(stage: Stage, profile: str, settings: dict, unit: str,
                        root: Path) -> None:
    """One unit in a worker process, kept in the disk store the caller reads it from."""
    _compute_into(UnitStore(stage, profile, settings, root=root), stage, settings, unit)


class _MemoryStore:
    """A store that keeps nothing between calls but round-trips rows like the disk store."""

    def __init__(self):
        self._units: dict[str, tuple[str, float]] = {}

    def get(self, unit):
        if unit not in self._units:
            return None
        text, seconds = self._units[unit]
        return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""]), seconds

    def put(self, unit, rows, *, seconds, provenance=None):
        self._units[unit] = rows.to_csv(index=False, float_format=FLOAT_FORMAT), seconds


def commit() -> str:
    """The git commit of this checkout, with "+uncommitted changes in markeval/" when the
    library differs from it; "unknown" outside a git checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--",
                                "markeval"], capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+uncommitted changes in markeval/" if dirty else "")


def machine() -> str:
    """The machine in one line: cores, CPU model, operating system and kernel."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}"


def _write_csv(table: pd.DataFrame, path: Path) -> None:
    text = table.to_csv(index=False, float_format=RESULT_FLOAT_FORMAT)
    atomic_write(path, lambda fh: fh.write(text.encode()))


def result_paths(out: Path, stages=()) -> list[Path]:
    """Every file a run may read or write in the results folder ``out``: the rows of each
    stage (of :func:`~markeval.reproduce.stages.all_stages`, and of ``stages``),
    ``paper_comparison.csv``, ``provenance.json`` and ``timings.csv``."""
    out = Path(out)
    names = dict.fromkeys([*all_stages(), *stages])
    return [*(out / f"{name}.csv" for name in names),
            *(out / name for name in ("paper_comparison.csv", "provenance.json", "timings.csv"))]


def refuse_foreign_results(out: Path, stages=()) -> None:
    """:class:`~markeval.cache.NotOursError` naming the files of :func:`result_paths` that
    markeval did not write or that changed since: a run would read them as its own rows and
    replace them."""
    refuse_foreign(result_paths(out, stages),
                   hint="move them away, or pass --force to replace them")


def read_rows(out: Path, stage: str) -> pd.DataFrame:
    """The committed rows of one stage (every profile), or an empty table."""
    path = Path(out) / f"{stage}.csv"
    if not path.exists():
        return pd.DataFrame(columns=["profile", "unit"])
    return pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"unit": str})


def run_stage(stage: Stage, profile: str, out: Path, *, fresh: bool = False,
              progress: bool = True, cache_root: Path | None = None,
              n_jobs: int | None = 1) -> StageRun:
    """Compute (or resume) one stage in one profile and write its rows into ``out``.

    ``n_jobs`` worker processes compute the units of a :attr:`~Stage.parallel` stage.
    """
    out = Path(out)
    refuse_foreign_results(out, [stage.name])
    settings = stage.settings_for(profile)
    store = UnitStore(stage, profile, settings, root=cache_root)
    kept = tuple(store.clear(stage.units(settings))) if fresh else ()
    start = time.perf_counter()
    rows, seconds, computed = compute_units(stage, profile, store=store, progress=progress,
                                            n_jobs=n_jobs)
    wall = time.perf_counter() - start
    old = read_rows(out, stage.name)
    merged = pd.concat([old[old["profile"] != profile], rows], ignore_index=True)
    _write_csv(merged, out / f"{stage.name}.csv")
    run = StageRun(stage.name, profile, computed, len(seconds) - computed, wall, sum(seconds),
                   kept)
    units = list(stage.units(settings))
    _record(run, settings, out, {unit: store.provenance(unit) for unit in units})
    return run


def _record(run: StageRun, settings: dict, out: Path, units: dict[str, dict]) -> None:
    """Update ``provenance.json`` and ``timings.csv`` after a run; ``units``: each unit's own
    provenance (commit, machine, when it finished) as its store recorded it."""
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    common = {"commit": commit(), "machine": machine(),
              "command": " ".join(shlex.quote(a) for a in ["python", "-m", "markeval.reproduce",
                                                           *sys.argv[1:]]),
              "finished": now}
    path = out / "provenance.json"
    provenance = json.loads(path.read_text()) if path.exists() else {}
    previous = provenance.get(run.stage, {}).get(run.profile)
    if run.computed == 0 and previous and previous["settings"] == settings:
        # nothing recomputed: the numbers are still those of the run that computed them
        common = {key: previous[key] for key in common}
    provenance.setdefault(run.stage, {})[run.profile] = {
        "settings": settings, "units": run.computed + run.reused,
        "units_computed_in_last_run": run.computed, "last_run_wall_s": round(run.wall_s, 1),
        "cold_compute_s": round(run.compute_s, 1), **common,
        "unit_provenance": {unit: p for unit, p in units.items() if p}}
    text = json.dumps(provenance, indent=1, sort_keys=True) + "\n"
    atomic_write(path, lambda fh: fh.write(text.encode()))
    log = out / "timings.csv"
    line = pd.DataFrame([{"finished": now, "stage": run.stage, "profile": run.profile,
                          "computed": run.computed, "reused": run.reused,
                          "wall_s": round(run.wall_s, 1), "cold_compute_s": round(run.compute_s, 1),
                          "commit": common["commit"], "machine": common["machine"]}])
    # appended as a whole new file, so that the log stays one markeval wrote (and recorded)
    text = (log.read_text() if log.exists() else "") + line.to_csv(header=not log.exists(),
                                                                   index=False)
    atomic_write(log, lambda fh: fh.write(text.encode()))


def write_comparison(out: Path) -> pd.DataFrame:
    """Rebuild ``paper_comparison.csv`` from every stage's committed rows."""
    out = Path(out)
    refuse_foreign_results(out)
    parts = []
    for stage in all_stages().values():
        rows = read_rows(out, stage.name)
        for profile in sorted(set(rows["profile"])):
            table = stage.compare(rows[rows["profile"] == profile].reset_index(drop=True),
                                  stage.settings_for(profile))
            parts.append(table.assign(profile=profile))
    table = (pd.concat(parts, ignore_index=True) if parts
             else pd.DataFrame(columns=COMPARISON_COLUMNS))[list(COMPARISON_COLUMNS)]
    _write_csv(table, out / "paper_comparison.csv")
    return table
