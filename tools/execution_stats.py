"""The book's "Execution statistics" page: how long each chapter takes to execute, and what the
committed reproduction took per stage, on which machine.

``python -m tools.execution_stats`` executes every numbered chapter (``book/NN_*.md``) from
its MyST source in the ``ci`` profile, one after the other, as ``make notebook`` does but into
memory (the committed notebooks are left alone), and records each chapter's wall time in
``book/execution_stats.csv``; then it writes the page ``book/execution_stats.md`` from those
timings and from ``markeval/results/provenance.json`` (the ``full`` profile of a chapter reads the
committed results of the reproduction stages it names, so its cost is theirs). Run it from the
Makefile's environment (one BLAS thread, offline), on a machine doing nothing else: the page
states the load average that each chapter started under.

- ``python -m tools.execution_stats 13_sensitivity 17_summarization_embedding_correlation``
  times only the chapters named (the others keep their rows);
- ``python -m tools.execution_stats --page`` only rewrites the page, e.g. after
  ``make reproduce`` committed new provenance (``tests/test_execution_stats.py`` fails while
  the committed page differs from the one these files give).

Book tooling, not library code.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
TIMINGS = REPO / "book" / "execution_stats.csv"
PAGE = REPO / "book" / "execution_stats.md"
#: Seconds a cell may run, as in ``_config.yml`` (``execute.timeout``).
CELL_TIMEOUT_S = 900
COLUMNS = ("chapter", "ci_seconds", "started", "load_average", "commit", "machine")


def chapters(source: Path = REPO) -> list[Path]:
    """The numbered chapters' MyST sources, in reading order."""
    return sorted((source / "book").glob("[0-9][0-9]_*.md"))


def title(md: Path) -> str:
    """The chapter's title: its first ``# `` heading."""
    found = re.search(r"^# (.+)$", md.read_text(encoding="utf-8"), flags=re.M)
    if found is None:
        raise ValueError(f"{md} has no '# ' title")
    return found[1].strip()


def stages_read(md: Path, stages) -> list[str]:
    """The reproduction stages whose committed results the chapter reads: those its code names
    in quotes (``load_rows("ladder", ...)``), in the order given."""
    text = md.read_text(encoding="utf-8")
    return [s for s in stages if re.search(rf"[\"']{re.escape(s)}[\"']", text)]


def execute(md: Path, timeout: int = CELL_TIMEOUT_S) -> float:
    """Execute the chapter ``md`` in a fresh kernel, in its folder, in the ``ci`` profile;
    return the wall time in seconds. Raises ``nbclient`` 's error if a cell fails."""
    import jupytext
    from nbclient import NotebookClient

    notebook = jupytext.read(md)
    os.environ["MARKEVAL_PROFILE"] = "ci"  # the kernel inherits the environment
    # the kernel must be this interpreter's (the Makefile puts .venv/bin first for the same end)
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
    client = NotebookClient(notebook, timeout=timeout,
                            kernel_name=notebook.metadata["kernelspec"]["name"],
                            resources={"metadata": {"path": str(md.parent)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def measure(names: list[str] | None = None, source: Path = REPO) -> pd.DataFrame:
    """Execute the chapters (all, or those whose stem is in ``names``) and return the timing
    table with their rows replaced; the other chapters keep their committed rows."""
    from tqdm import tqdm

    from markeval.reproduce.run import commit, machine

    todo = [md for md in chapters(source) if names is None or md.stem in names]
    unknown = sorted(set(names or ()) - {md.stem for md in todo})
    if unknown:
        raise ValueError(f"names: no chapter {unknown}; chapters are "
                         f"{[md.stem for md in chapters(source)]}")
    table = read_timings()
    for md in tqdm(todo, desc="chapters", unit="chapter"):
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        load = os.getloadavg()[0]
        seconds = execute(md)
        row = pd.DataFrame([{"chapter": md.stem, "ci_seconds": round(seconds, 1),
                             "started": started, "load_average": round(load, 2),
                             "commit": commit(), "machine": machine()}])
        table = pd.concat([table[table["chapter"] != md.stem], row], ignore_index=True)
        write_timings(table)  # after every chapter: an interrupted run keeps what it measured
    return table


def read_timings(path: Path = TIMINGS) -> pd.DataFrame:
    """The committed chapter timings (an empty table before the first run)."""
    if not path.exists():
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.read_csv(path)[list(COLUMNS)]


def write_timings(table: pd.DataFrame, path: Path = TIMINGS) -> None:
    table.sort_values("chapter").to_csv(path, index=False, columns=list(COLUMNS))


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"


def _commits(values) -> str:
    heads = sorted({str(c).partition("+")[0][:10] for c in values})
    dirty = any("+" in str(c) for c in values)
    return ", ".join(f"`{h}`" for h in heads) + (", with uncommitted changes" if dirty else "")


def page(timings: pd.DataFrame, provenance: dict, source: Path = REPO) -> str:
    """The MyST text of the Execution statistics page."""
    from markeval.reproduce.stages import all_stages

    stages = all_stages()
    order = [s for s in stages if s in provenance]
    by_chapter = timings.set_index("chapter")
    lines = [
        "<!-- Written by `python -m tools.execution_stats` from book/execution_stats.csv and",
        "     markeval/results/provenance.json: do not edit by hand. -->", "",
        "(execution-stats)=", "# Execution statistics", "",
        "How long this book takes to run, and on what. Every chapter executes in one of two "
        "profiles (`MARKEVAL_PROFILE`): `ci`, the default, shrinks the data so that a chapter "
        "runs in minutes on a CPU, and is the profile that `make book` and the tests execute; "
        "`full` is the papers' scale. A chapter that reproduces a paper does not "
        "compute the paper's tables while it executes: it reads the committed results of the "
        "reproduction (`make reproduce`, one resumable command, stage by stage) and recomputes a "
        "slice of them live. So a chapter's cost in the `full` profile is the cost of the "
        "stages it reads, listed in {numref}`tbl-reproduction-stages`.", "",
        "## Chapters", "",
    ]
    if timings.empty:
        lines += ["No chapter has been timed yet: run `python -m tools.execution_stats`.", ""]
    else:
        machines = sorted(set(timings["machine"]))
        days = sorted({started[:10] for started in timings["started"]})
        when = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
        lines += [
            f"{{numref}}`tbl-chapter-times` gives the wall time of executing each chapter from "
            f"its source in a fresh kernel, in the `ci` profile, measured by "
            f"`python -m tools.execution_stats` on {' and '.join(machines)}, on {when} "
            f"(commit {_commits(timings['commit'])}). It includes starting the kernel, loading "
            "the encoder and reading the data; the data sets and the encoder's files were "
            "already on the disk. The machine was shared: the column *load* gives the load "
            "average (processes wanting a core, over the minute before) when the chapter "
            "started, and a chapter that started with more processes than cores ran slower "
            "than it would alone. The `full` columns give the reproduction stages whose "
            "committed results the chapter reads, and their compute time in the `full` "
            "profile.", "",
            # (no backticks in a caption: a code fence's first line may not hold any)
            "```{table} Executing each chapter: the ci profile, and the stages behind the full "
            "one.",
            ":name: tbl-chapter-times", "",
            "| chapter | `ci` | load | `full`: stages read | `full`: their compute |",
            "|---|--:|--:|---|--:|"]
        for md in chapters(source):
            if md.stem not in by_chapter.index:
                ci, load = "not timed yet", ""
            else:
                timed = by_chapter.loc[md.stem]
                ci, load = f"{timed['ci_seconds']:.0f} s", f"{timed['load_average']:.1f}"
            read = stages_read(md, order)
            full = [provenance[s]["full"]["cold_compute_s"] for s in read
                    if "full" in provenance[s]]
            cost = ("" if not read else _duration(sum(full)) if len(full) == len(read)
                    else "not all run yet")
            names = ", ".join(f"`{s}`" for s in read) or "none"
            lines.append(f"| {{doc}}`{md.stem}` | {ci} | {load} | {names} | {cost} |")
        total = timings["ci_seconds"].sum()
        lines += ["```", "", f"All {len(timings)} timed chapters together: {_duration(total)}.",
                  ""]
    lines += [
        "## The reproduction", "",
        "{numref}`tbl-reproduction-stages` lists, for every stage of the reproduction, its last "
        "committed run in the `full` profile (the papers' sizes) and in the `ci` profile (the "
        "small slice the chapters and the tests recompute), from `markeval/results/provenance.json`. "
        "The compute time adds up the times of the stage's units, however many runs and worker "
        "processes computed them; the commit is the one that computed them.", "",
        "```{table} The last committed run of each reproduction stage, in each profile.",
        ":name: tbl-reproduction-stages", "",
        "| stage | profile | units | compute | finished (UTC) | commit |",
        "|---|---|--:|--:|---|---|"]
    machines = set()
    for stage in order:
        for profile in ("full", "ci"):
            run = provenance[stage].get(profile)
            if run is None:
                lines.append(f"| `{stage}` | `{profile}` | not run yet | | | |")
                continue
            machines.add(run["machine"])
            lines.append(
                f"| `{stage}` | `{profile}` | {run['units']} | "
                f"{_duration(run['cold_compute_s'])} | {run['finished'][:16].replace('T', ' ')} "
                f"| {_commits([run['commit']])} |")
    lines += ["```", "",
              f"Machine of these runs: {'; '.join(sorted(machines))}. What each stage "
              "reproduces, and its settings, are in `provenance.json` and in the chapters; "
              "`python -m markeval.reproduce --help` lists the stages.", ""]
    return "\n".join(textwrap.fill(line, 99, break_on_hyphens=False, break_long_words=False)
                     if not line.startswith(("|", "```", ":", "<", " ")) else line
                     for line in lines) + "\n"


def current_page() -> str:
    """The page that the committed timings and provenance give."""
    import json

    provenance = json.loads((REPO / "markeval" / "results" / "provenance.json").read_text())
    return page(read_timings(), provenance)


def write_page() -> Path:
    """Write :func:`current_page` to ``book/execution_stats.md``; return its path."""
    PAGE.write_text(current_page(), encoding="utf-8")
    return PAGE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.execution_stats",
        description="Time every chapter in the ci profile and write the Execution statistics "
                    "page.")
    parser.add_argument("chapters", nargs="*", help="chapter stems to time (default: all)")
    parser.add_argument("--page", action="store_true",
                        help="only rewrite the page from the committed timings and provenance")
    args = parser.parse_args(argv)
    if args.page and args.chapters:
        parser.error("--page times nothing: leave out the chapter names")
    if not args.page:
        measure(args.chapters or None)
    print(f"wrote {write_page().relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
