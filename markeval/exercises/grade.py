"""Batch grading without nbgrader: run every submitted notebook and collect its score.

::

    python -m markeval.exercises.grade SUBMISSIONS... --out grades.csv [--timeout 900]

Each submission (a notebook, or a folder searched for ``*.ipynb``) is executed top to bottom
in a fresh kernel, in its own folder, within a time limit for the whole notebook. A cell that
raises does not stop the run (the answers after it are still checked, as nbgrader's autograder
does). Then the kernel is asked for the assignment's :meth:`~markeval.exercises.assignments.
Assignment.report`: what each ``A.check(...)`` of the notebook gave.

The CSV has one row per student and question — ``student``, ``notebook``, ``assignment``,
``question``, ``title``, ``kind``, ``points``, ``earned`` (empty for written questions, graded
by hand) and ``status`` — and one ``total`` row per student with the auto-checked points. A
notebook that cannot be graded (unreadable, over the time limit, or without an assignment
because a cell failed first, such as an import) gets one ``total`` row whose status says why,
is listed at the end, and the command exits with status 1 after grading all the others.

The student is named after the notebook's file (``alice.ipynb``), its folder
(``alice/assignment_1_ngram_metrics.ipynb``, ``--student-from folder``), or nbgrader's layout
``submitted/<student>/<assignment>/<notebook>.ipynb`` (``--student-from nbgrader``).

Executing notebooks needs ``nbclient``, ``nbformat`` and ``ipykernel``
(``pip install "markeval[course]"``; Colab and Jupyter have them).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from markeval._checks import check_choice, check_number

__all__ = ["COLUMNS", "Graded", "grade_notebook", "grade_notebooks", "main", "write_csv"]

#: The columns of the grades CSV.
COLUMNS = ("student", "notebook", "assignment", "question", "title", "kind", "points", "earned",
           "status")
STUDENT_FROM = ("file", "folder", "nbgrader")
_MARK = "<<markeval-grade>>"
# Run in the student's kernel after the notebook: the report of the notebook's assignment
# (the Assignment object that checked the most answers, normally the notebook's `A`).
_PROBE = f"""
import json as _grade_json
from markeval.exercises.assignments import Assignment as _GradeAssignment
_grade_found = [_v for _v in list(globals().values()) if isinstance(_v, _GradeAssignment)]
if _grade_found:
    _grade_a = max(_grade_found, key=lambda _a: len(_a.results))
    print({_MARK!r} + _grade_json.dumps({{"number": _grade_a.number, "title": _grade_a.title,
                                         "report": _grade_a.report()}}))
else:
    print({_MARK!r} + "null")
"""


@dataclass
class Graded:
    """The outcome for one notebook: its rows, or why it could not be graded.

    Attributes
    ----------
    student, notebook : str
    assignment : int or None
    rows : list of dict
        One per question (see :data:`COLUMNS`), without the total; empty when ``failure``.
    failure : str or None
        Why the notebook could not be graded.
    seconds : float
        Wall time of the run.
    """

    student: str
    notebook: str
    assignment: int | None = None
    rows: list = field(default_factory=list)
    failure: str | None = None
    seconds: float = 0.0

    @property
    def earned(self) -> int | None:
        """Auto-checked points earned (None when the notebook could not be graded)."""
        if self.failure is not None:
            return None
        return sum(r["earned"] for r in self.rows if r["earned"] is not None)

    def total_row(self) -> dict:
        """The ``total`` row of the CSV."""
        base = {"student": self.student, "notebook": self.notebook,
                "assignment": self.assignment or "", "question": "total", "title": "",
                "kind": "", "points": "", "earned": "", "status": ""}
        if self.failure is not None:
            return {**base, "status": f"not graded: {self.failure}"}
        auto = sum(r["points"] for r in self.rows if r["earned"] is not None)
        written = sum(r["points"] for r in self.rows if r["earned"] is None)
        return {**base, "points": auto, "earned": self.earned,
                "status": f"auto-checked; {written} written points to grade by hand"}


def _student(path: Path, student_from: str) -> str:
    """The student's name read from the notebook's path, made absolute (not resolved: a
    linked folder keeps its name), so that ``bob.ipynb`` given inside ``submitted/bob/a1/``
    has folders to be named after."""
    if student_from == "file":
        return path.stem
    parents = Path(os.path.abspath(path)).parents
    if student_from == "folder":
        return parents[0].name
    if len(parents) < 3:  # submitted/<student>/<assignment>/<notebook>.ipynb
        raise ValueError(f"--student-from nbgrader: {path} is not in nbgrader's layout "
                         f"submitted/<student>/<assignment>/<notebook>.ipynb")
    return parents[1].name


def _notebook_modules():
    try:
        import nbclient
        import nbformat
    except ImportError as err:  # pragma: no cover - the test environment has them
        raise ImportError("grading notebooks needs nbclient and nbformat: "
                          'pip install "markeval[course]"') from err
    return nbclient, nbformat


def _first_error(nb) -> str | None:
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "error":
                return f"cell {index} raised {out['ename']}: {out['evalue']}".strip()
    return None


def grade_notebook(path, *, timeout: float = 900, kernel_name: str = "python3",
                   student_from: str = "file") -> Graded:
    """Execute one notebook within ``timeout`` seconds and read its assignment's report.

    Parameters
    ----------
    path : path-like
        The submitted notebook.
    timeout : float, default 900
        Seconds for the whole notebook; a notebook over it is not graded.
    kernel_name : str, default "python3"
    student_from : {"file", "folder", "nbgrader"}
        How the student is named (see the module notes).

    Returns
    -------
    Graded
    """
    nbclient, nbformat = _notebook_modules()
    timeout = check_number(timeout, "timeout", minimum=1.0)
    check_choice(student_from, "student_from", STUDENT_FROM)
    path = Path(path)
    graded = Graded(_student(path, student_from), str(path))
    start = time.monotonic()
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:  # noqa: BLE001 - any unreadable file is reported, not raised
        graded.failure = f"cannot read the notebook: {type(err).__name__}: {err}"
        return graded
    client = nbclient.NotebookClient(nb, timeout=int(timeout), kernel_name=kernel_name,
                                     allow_errors=True,
                                     resources={"metadata": {"path": str(path.parent)}})
    probe = nbformat.v4.new_code_cell(_PROBE)
    nb.cells.append(probe)  # our copy only: the submission is not written
    index = 0
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                left = timeout - (time.monotonic() - start)
                if left <= 0:
                    raise TimeoutError
                client.timeout = max(1, int(left))
                client.execute_cell(cell, index)
    except (TimeoutError, nbclient.exceptions.CellTimeoutError):
        graded.failure = f"time limit of {timeout:g} s exceeded (in cell {index})"
    except Exception as err:  # noqa: BLE001 - a dead kernel is this notebook's failure only
        graded.failure = f"the kernel failed in cell {index}: {type(err).__name__}: {err}"
    graded.seconds = time.monotonic() - start
    if graded.failure is not None:
        return graded
    text = "".join(o.get("text", "") for o in probe.outputs if o.get("output_type") == "stream")
    found = json.loads(text.split(_MARK, 1)[1]) if _MARK in text else None
    if not found:
        graded.failure = _first_error(nb) or "the notebook never creates its assignment " \
                                               "(A = assignment(N))"
        return graded
    graded.assignment = found["number"]
    graded.rows = [{"student": graded.student, "notebook": graded.notebook,
                    "assignment": found["number"], "question": r["key"], "title": r["title"],
                    "kind": r["kind"], "points": r["points"], "earned": r["earned"],
                    "status": r["status"]} for r in found["report"]]
    return graded


def _notebooks(submissions) -> list[Path]:
    out = []
    for item in submissions:
        item = Path(item)
        if item.is_dir():
            found = sorted(p for p in item.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            if not found:
                raise FileNotFoundError(f"submissions: no .ipynb under the folder {item}")
            out += found
        elif item.is_file():
            out.append(item)
        else:
            raise FileNotFoundError(f"submissions: {item} is neither a notebook nor a folder")
    return out


def grade_notebooks(submissions, *, timeout: float = 900, kernel_name: str = "python3",
                    student_from: str = "file", progress: bool = True) -> list[Graded]:
    """:func:`grade_notebook` for every notebook of ``submissions`` (files or folders)."""
    from tqdm.auto import tqdm

    paths = _notebooks(submissions)
    for path in paths:  # every name readable before the first notebook runs
        _student(path, student_from)
    return [grade_notebook(p, timeout=timeout, kernel_name=kernel_name,
                           student_from=student_from)
            for p in tqdm(paths, desc="grading", unit="notebook", disable=not progress)]


def write_csv(graded: list[Graded], out, *, replace: bool = False) -> Path:
    """Write the grades CSV (see :data:`COLUMNS`): question rows, then each total row.

    Written to a temporary file and renamed, so an interrupted write leaves any earlier file
    whole. A file already at ``out`` that markeval did not write is replaced only with
    ``replace`` (the command's ``--force``); otherwise :class:`markeval.cache.NotOursError`."""
    from markeval.cache import atomic_write

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if replace and out.is_file():
        out.unlink()  # the user asked for it; the grades are ready to take its place
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=COLUMNS)
    writer.writeheader()
    for g in graded:
        for row in g.rows:
            writer.writerow({**row, "earned": "" if row["earned"] is None else row["earned"]})
        writer.writerow(g.total_row())
    atomic_write(out, lambda fh: fh.write(text.getvalue().encode("utf-8")))
    return out


def _check_out(out: Path, notebooks: list[Path], *, force: bool) -> None:
    """Refuse, before any notebook runs, an ``--out`` that grading would lose or destroy."""
    if out.is_dir():
        raise ValueError(f"--out {out}: is a folder; name the CSV file to write")
    if out.resolve() in {path.resolve() for path in notebooks}:
        raise ValueError(f"--out {out}: is one of the submitted notebooks; name a new CSV file")
    if out.exists() and not force:
        raise ValueError(f"--out {out}: exists; pass --force to replace it")
    folder = next(p for p in (out.parent.resolve(), *out.parent.resolve().parents) if p.exists())
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: cannot write into {folder}")


def main(argv=None) -> int:
    """Command line: ``python -m markeval.exercises.grade SUBMISSIONS... --out grades.csv``."""
    parser = argparse.ArgumentParser(
        prog="python -m markeval.exercises.grade",
        description="Execute submitted assignment notebooks and write their auto-checked "
                    "scores, one row per student and question, to a CSV file.")
    parser.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    parser.add_argument("--out", required=True, type=Path, help="the CSV file to write")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds allowed for each whole notebook (default 900)")
    parser.add_argument("--kernel", default="python3", help="the Jupyter kernel to run")
    parser.add_argument("--student-from", choices=STUDENT_FROM, default="file",
                        help="name the student after the notebook's file (default), its "
                             "folder, or nbgrader's submitted/<student>/<assignment>/ layout")
    parser.add_argument("--force", action="store_true", help="replace an existing --out file")
    args = parser.parse_args(argv)
    try:
        _check_out(args.out, _notebooks(args.submissions), force=args.force)
        graded = grade_notebooks(args.submissions, timeout=args.timeout,
                                 kernel_name=args.kernel, student_from=args.student_from)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    write_csv(graded, args.out, replace=args.force)
    failed = [g for g in graded if g.failure is not None]
    print(f"graded {len(graded) - len(failed)} of {len(graded)} notebooks into {args.out}")
    for g in failed:
        print(f"not graded: {g.notebook}: {g.failure}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
