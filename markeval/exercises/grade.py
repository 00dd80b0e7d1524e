"""Batch grading without nbgrader: every submission recomputed from the assignment's definition.

::

    python -m markeval.exercises.grade SUBMISSIONS... --out grades.csv [--assignment N]
                                       [--seed S] [--timeout 900]

What a grade comes from:

* **The bytes as handed in.** Every submission (a notebook, or a folder searched for
  ``*.ipynb``) is read before any of them runs; the SHA-256 of its bytes goes into its rows.
  A notebook that rewrites another submission changes nothing graded.
* **Its own folder.** Each notebook runs in a fresh kernel, in a temporary folder holding a
  copy of that notebook only: it cannot reach another submission, the output CSV or the
  course files by a relative path. Each cell has :data:`CELL_TIME_LIMIT` seconds (then the
  kernel is interrupted and the next cell runs, as nbgrader does); the whole notebook
  ``--timeout``. A cell that raises does not stop the run. The feedback cells
  (``A.check("qN", answer)`` or ``A.summary()`` alone in a cell) are skipped.
* **The assignment's definition, not the notebook's checker.** After the last cell, the answers
  are taken from the kernel by the names the assignment gives them
  (:attr:`~markeval.exercises.assignments.Task.answer`) and the kernel is stopped. What the
  notebook's ``A.check`` recorded, printed or summed is never read.
* **A process the notebook did not create.** The answers run in a fresh sandbox process
  (:mod:`markeval.exercises._sandbox`) on hidden cases drawn with the grading seed, under each
  question's module rule and :data:`~markeval.exercises.autograde.ANSWER_TIME_LIMIT`; an answer
  over its limit scores 0 and the others still grade. The sandbox sends back plain outputs
  only; this process compares them with the references it computed itself, once per class
  (:func:`markeval.exercises.autograde.prepare`), and gives the points of the definition.

The assignment is ``--assignment``, or read from the path (``assignment_1_ngram_metrics.ipynb``,
or nbgrader's ``submitted/<student>/assignment_1_…/``). The seed is ``--seed``, or drawn at
random and written into every row, so that a regrade with ``--seed`` reproduces the cases.

The CSV has one row per student and question — :data:`COLUMNS`: ``earned`` is empty for written
questions (graded by hand), ``status`` one of :data:`~markeval.exercises.autograde.STATUSES` —
and one ``total`` row per student. A notebook that cannot be graded (unreadable, or over its
whole time limit) gets one ``total`` row whose status says why, is listed at the end, and the
command exits with status 1 after grading all the others.

The student is named after the notebook's file (``alice.ipynb``), its folder
(``alice/assignment_1_ngram_metrics.ipynb``, ``--student-from folder``), or nbgrader's layout
``submitted/<student>/<assignment>/<notebook>.ipynb`` (``--student-from nbgrader``).

Executing notebooks needs ``nbclient``, ``nbformat``, ``ipykernel`` and ``cloudpickle``
(``pip install "markeval[course]"``; Colab and Jupyter have them).
"""

from __future__ import annotations

import argparse
import builtins
import csv
import hashlib
import io
import math
import os
import queue
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from markeval._checks import check_choice, check_number
from markeval.exercises._question import AnswerRun

__all__ = ["CELL_TIME_LIMIT", "COLUMNS", "Graded", "Submission", "grade_notebook",
           "grade_notebooks", "main", "read_submissions", "write_csv"]

#: The columns of the grades CSV.
COLUMNS = ("student", "notebook", "sha256", "seed", "assignment", "question", "title", "kind",
           "points", "earned", "status")
#: Seconds for one cell of a submission (the kernel is interrupted after them).
CELL_TIME_LIMIT = 60
STUDENT_FROM = ("file", "folder", "nbgrader")
_ASSIGNMENT_IN_PATH = re.compile(r"^assignment_(\d+)_")
# The notebook's feedback cells, alone in their cell: their verdicts are never read, and
# skipping them spares every answer a second run.
_FEEDBACK = re.compile(r"""\s*(A\.check\(\s*["']q\d+[a-z]?["']\s*,\s*\w+\s*\)|A\.summary\(\));?\s*""")
# Run in the student's kernel after the notebook: each named answer, pickled by value, into a
# file of the grader's folder. It can only choose which objects are graded, not their grades.
_PROBE = """
import builtins as _grade_builtins
def _grade_take(_names, _path):
    import cloudpickle
    _found, _space = {{}}, _grade_builtins.globals()
    for _name in _names:
        if _name in _space:
            try:
                _found[_name] = cloudpickle.dumps(_space[_name])
            except Exception as _err:
                _found[_name] = repr(_err)
    with _grade_builtins.open(_path, "wb") as _handle:
        _handle.write(cloudpickle.dumps(_found))
_grade_take({names!r}, {path!r})
"""


@dataclass(frozen=True)
class Submission:
    """One notebook as handed in: read once, before any notebook runs.

    Attributes
    ----------
    path : pathlib.Path
    student : str
    data : bytes
        The file's bytes (what is graded).
    sha256 : str
    assignment : int or None
        From ``--assignment`` or the path; None when neither says.
    """

    path: Path
    student: str
    data: bytes = field(repr=False)
    sha256: str
    assignment: int | None


@dataclass
class Graded:
    """The outcome for one notebook: its rows, or why it could not be graded.

    Attributes
    ----------
    student, notebook : str
    sha256 : str
        Of the bytes graded.
    seed : int or None
        The grading seed of the hidden cases.
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
    sha256: str = ""
    seed: int | None = None
    assignment: int | None = None
    rows: list = field(default_factory=list)
    failure: str | None = None
    seconds: float = 0.0

    @property
    def earned(self) -> int | None:
        """Auto-graded points earned (None when the notebook could not be graded)."""
        if self.failure is not None:
            return None
        return sum(r["earned"] for r in self.rows if r["earned"] is not None)

    def total_row(self) -> dict:
        """The ``total`` row of the CSV."""
        base = {"student": self.student, "notebook": self.notebook, "sha256": self.sha256,
                "seed": "" if self.seed is None else self.seed,
                "assignment": self.assignment or "", "question": "total", "title": "",
                "kind": "", "points": "", "earned": "", "status": ""}
        if self.failure is not None:
            return {**base, "status": f"not graded: {self.failure}"}
        auto = sum(r["points"] for r in self.rows if r["earned"] is not None)
        written = sum(r["points"] for r in self.rows if r["earned"] is None)
        return {**base, "points": auto, "earned": self.earned,
                "status": f"auto-graded; {written} written points to grade by hand"}


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


def _assignment_of(path: Path, given: int | None) -> int | None:
    """``given``, or the number in the first part of ``path`` named ``assignment_N_…``."""
    if given is not None:
        return given
    for part in reversed(Path(os.path.abspath(path)).parts):
        match = _ASSIGNMENT_IN_PATH.match(part)
        if match:
            return int(match[1])
    return None


def read_submissions(submissions, *, student_from: str = "file",
                     assignment: int | None = None) -> list[Submission]:
    """Every notebook of ``submissions`` (files or folders), read before any of them runs."""
    check_choice(student_from, "student_from", STUDENT_FROM)
    out = []
    for path in _notebooks(submissions):
        data = path.read_bytes()
        out.append(Submission(path, _student(path, student_from), data,
                              hashlib.sha256(data).hexdigest(), _assignment_of(path, assignment)))
    return out


def _execute(submission: Submission, names, *, timeout: float, kernel_name: str):
    """Run the notebook in a folder of its own; return ``({name: pickle or error text},
    failure)``, ``failure`` None when the notebook ran to its end within ``timeout``."""
    nbclient, nbformat = _notebook_modules()
    import pickle

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="markeval-grade-") as folder:
        work = Path(folder) / submission.path.name
        work.write_bytes(submission.data)
        try:
            nb = nbformat.reads(submission.data.decode("utf-8"), as_version=4)
        except Exception as err:  # noqa: BLE001 - any unreadable file is reported, not raised
            return {}, f"cannot read the notebook: {type(err).__name__}: {err}"
        taken = Path(folder) / f"answers-{secrets.token_hex(8)}.pickle"
        nb.cells.append(nbformat.v4.new_code_cell(_PROBE.format(names=list(names),
                                                                path=str(taken))))
        client = nbclient.NotebookClient(
            nb, timeout=CELL_TIME_LIMIT, kernel_name=kernel_name, allow_errors=True,
            interrupt_on_timeout=True, resources={"metadata": {"path": folder}},
            error_on_timeout={"ename": "CellTimeoutError", "evalue": "",
                              "traceback": [f"over the limit of {CELL_TIME_LIMIT} s a cell"]})
        index, failure = 0, None
        try:
            with client.setup_kernel(cwd=folder):
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type != "code" or _FEEDBACK.fullmatch(cell.source):
                        continue
                    left = timeout - (time.monotonic() - start)
                    if left <= 0:
                        raise TimeoutError
                    client.timeout = max(1, math.ceil(min(left, CELL_TIME_LIMIT)))
                    client.execute_cell(cell, index)
                    if time.monotonic() - start >= timeout:  # stopped at the whole limit
                        raise TimeoutError
        except (TimeoutError, nbclient.exceptions.CellTimeoutError):
            failure = f"time limit of {timeout:g} s exceeded (in cell {index})"
        except Exception as err:  # noqa: BLE001 - a dead kernel is this notebook's failure only
            failure = f"the kernel failed in cell {index}: {type(err).__name__}: {err}"
        if failure is not None:
            return {}, failure
        try:
            found = pickle.loads(taken.read_bytes())  # written by our probe, not the notebook
        except Exception:  # noqa: BLE001 - a notebook that broke the probe has no answers
            found = {}
        return {k: v for k, v in found.items() if isinstance(k, str)
                and isinstance(v, (bytes, str))}, None


def _read_lines(stream, lines: queue.Queue) -> None:
    """Every line of ``stream`` into ``lines``, then None (the process closed it)."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def _sandbox_runs(number: int, answers: dict, jobs: list) -> dict:
    """Run ``jobs`` — ``(key, cases, time_limit)`` — in sandbox processes; {key: AnswerRun}.

    A job that overruns its limit (plus a grace for the process itself) stops the sandbox;
    it gets a timed-out run and the jobs after it go to a new sandbox."""
    import pickle

    from markeval.exercises._sandbox import MARK, load_outputs

    runs, left = {}, list(jobs)
    while left:
        process = subprocess.Popen(
            [sys.executable, "-m", "markeval.exercises._sandbox"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
        try:
            process.stdin.write(pickle.dumps({"number": number, "answers": answers,
                                              "jobs": left}, protocol=4))
            process.stdin.close()
        except OSError:
            pass  # a sandbox that died at once: its jobs fail below
        while left:
            key, _, limit = left[0]
            deadline = time.monotonic() + limit + 30  # the process's own start and imports
            text, ended = "", False
            while time.monotonic() < deadline:
                try:
                    line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                except queue.Empty:
                    continue
                if line is None:
                    ended = True
                    break
                text = line.decode("utf-8", "replace")
                if text.startswith(MARK):
                    break
            if not text.startswith(MARK):  # over time, or the process died: this job fails
                runs[key] = (AnswerRun([(None, _Raised.of(
                    "SandboxError", "the answer's process ended before it answered"))])
                    if ended else AnswerRun([], None, True))
                left.pop(0)
                break
            try:
                result = load_outputs(text[len(MARK):].strip())
                runs[key] = AnswerRun([(got, None if err is None else _Raised.of(*err))
                                       for got, err in result["outputs"]],
                                      result["forbidden"], result["timed_out"])
            except Exception as err:  # noqa: BLE001 - an output that is not plain data
                runs[key] = AnswerRun([(None, _Raised.of("TypeError", str(err)))])
            left.pop(0)
        process.kill()
        process.wait()
    return runs


class _Raised(Exception):
    """What an answer raised in the sandbox, by name and message: a built-in exception as
    itself (a starter's NotImplementedError stays one), any other under its name."""

    _classes: dict = {}

    @classmethod
    def of(cls, name: str, message: str) -> Exception:
        name = str(name) if str(name).isidentifier() else "Exception"
        builtin = getattr(builtins, name, None)
        if isinstance(builtin, type) and issubclass(builtin, Exception):
            try:
                return builtin(str(message))
            except TypeError:  # a built-in that takes other arguments (UnicodeDecodeError…)
                pass
        kind = cls._classes.setdefault(name, type(name, (cls,), {}))
        return kind(str(message))


def grade_notebook(submission: Submission, prepared: dict, *, seed: int, timeout: float = 900,
                   kernel_name: str = "python3") -> Graded:
    """Execute one submission, run its answers in a sandbox, grade them against ``prepared``
    (:func:`markeval.exercises.autograde.prepare` of each task, for ``seed``).

    Returns
    -------
    Graded
    """
    from markeval.exercises.autograde import ANSWER_TIME_LIMIT, grade_run, grade_value

    timeout = check_number(timeout, "timeout", minimum=1.0)
    graded = Graded(submission.student, str(submission.path), submission.sha256, seed,
                    submission.assignment)
    start = time.monotonic()
    tasks = [p.task for p in prepared.values()]
    answers, graded.failure = _execute(submission, [t.answer for t in tasks if t.answer],
                                       timeout=timeout, kernel_name=kernel_name)
    if graded.failure is None:
        jobs = [(t.key, prepared[t.key].cases, ANSWER_TIME_LIMIT) for t in tasks
                if t.answer and isinstance(answers.get(t.answer), bytes)]
        runs = _sandbox_runs(submission.assignment, answers, jobs)
        for task in tasks:
            run = runs.get(task.key)
            if task.answer in answers and run is None:  # it could not be pickled
                run = AnswerRun([(None, _Raised.of("PicklingError", answers[task.answer]))])
            if task.kind == "value":
                value, error = run.outputs[0] if run is not None and run.outputs else (None, None)
                grade = grade_value(prepared[task.key], value, found=task.answer in answers,
                                    error=error)
            else:
                grade = grade_run(prepared[task.key], run)
            graded.rows.append({"student": graded.student, "notebook": graded.notebook,
                                "sha256": graded.sha256, "seed": seed,
                                "assignment": submission.assignment, "question": grade.key,
                                "title": grade.title, "kind": grade.kind,
                                "points": grade.points, "earned": grade.earned,
                                "status": grade.status})
    graded.seconds = time.monotonic() - start
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


def grade_notebooks(submissions, *, assignment: int | None = None, seed: int | None = None,
                    timeout: float = 900, kernel_name: str = "python3",
                    student_from: str = "file", progress: bool = True) -> list[Graded]:
    """Grade every notebook of ``submissions`` (files or folders); see the module notes.

    Parameters
    ----------
    assignment : int, optional
        The assignment of every submission; default: read from each path.
    seed : int, optional
        The grading seed of the hidden cases; default: drawn at random (it is in every row).
    """
    from tqdm.auto import tqdm

    from markeval.exercises.assignments import assignment as definition
    from markeval.exercises.autograde import prepare

    found = read_submissions(submissions, student_from=student_from, assignment=assignment)
    unknown = [str(s.path) for s in found if s.assignment is None]
    if unknown:
        raise ValueError(f"--assignment: not given, and not in the path of {unknown[0]} "
                         "(a file or folder named assignment_N_...)")
    seed = secrets.randbits(31) if seed is None else seed
    prepared = {}
    for number in sorted({s.assignment for s in found}):
        tasks = definition(number).tasks
        prepared[number] = {t.key: prepare(t, seed) for t in tqdm(
            tasks, desc=f"assignment {number}: cases and references", unit="question",
            disable=not progress)}
    return [grade_notebook(s, prepared[s.assignment], seed=seed, timeout=timeout,
                           kernel_name=kernel_name)
            for s in tqdm(found, desc="grading", unit="notebook", disable=not progress)]


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
        description="Execute submitted assignment notebooks, grade their answers on hidden "
                    "cases from the assignment's definition, and write the scores, one row per "
                    "student and question, to a CSV file.")
    parser.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    parser.add_argument("--out", required=True, type=Path, help="the CSV file to write")
    parser.add_argument("--assignment", type=int, choices=(1, 2, 3, 4), default=None,
                        help="the assignment of every submission (default: read from each "
                             "path, assignment_N_...)")
    parser.add_argument("--seed", type=int, default=None,
                        help="the grading seed of the hidden cases (default: random, written "
                             "into every row)")
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
        graded = grade_notebooks(args.submissions, assignment=args.assignment, seed=args.seed,
                                 timeout=args.timeout,
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
