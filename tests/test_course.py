"""The course kit graded for real: honest and cheating submissions, through nbgrader and the
batch grader, for all four assignments.

For every assignment a course folder is written by ``tools.course`` (one folder per
assignment, released and autograded in parallel) and released with the real ``nbgrader``. Then
these students hand in (:data:`CLASSES`), answer cells only, as nbgrader lets them:

* ``correct``: every code answer written differently from the model solution (the right
  answers of ``tests/test_assignments.py``, pasted into the cell with their helpers), every
  value answer the model solution's code;
* ``mistakes``: every code answer a typical mistake (the first wrong answer of
  ``tests/test_assignments.py``, pasted), every value answer a wrong value;
* ``untouched``: the release as it is;
* ``forged-results``: starters, plus a line that replaces the checker's records with an
  object whose ``get`` is always true;
* ``second-checker``: starters, plus a second ``assignment(N)`` with every result true and the
  points ×10;
* ``library``: every code answer calls the checker's own reference solution (the first through
  a name built at run time); value answers the model's. From-scratch questions score 0,
  questions that allow the library their points;
* ``loop``: the first code answer loops forever, the rest correct: that question scores 0 and
  the others grade.

The batch grader (``python -m markeval.exercises.grade``) grades the same notebooks and three
more of its own: ``copier``, which copies the correct notebook over the ``mistakes`` one in the
submissions folder; ``printer``, which redefines ``print`` to forge a report; and
``patched-grader``, wrong answers with markeval's comparison and ``verify`` patched in the
kernel to pass anything (nbgrader's test cells run in the student's kernel, so this one would
fool them: the instructor notes say so). Both graders
must give every submission, question by question, the points of :func:`_expected`, and nbgrader
must report no checksum change but the one locked cell that ``edited`` changes.

Cost, measured on the two-core machine: see the closing note of the change (the release and
autograde of the four courses run in parallel).
"""

from __future__ import annotations

import concurrent.futures
import csv
import hashlib
import inspect
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from markeval.exercises.assignments import assignment
from markeval.exercises.starter import BEGIN, END, TOP_LEVEL_STUB
from tools import course


def _have_wmt17() -> bool:
    from markeval.datasets import DataNotFoundError, locate

    try:
        locate("wmt17", download_if_missing=False)
    except DataNotFoundError:
        return False
    return True


SEED = 20261129  # the course's grading seed (the hidden cases)
CLASSES = ("correct", "mistakes", "untouched", "forged-results", "second-checker", "library",
           "loop")
NBGRADER_ONLY = ("edited",)  # an edit to one locked cell: nbgrader must report it, alone
BATCH_ONLY = ("copier", "printer", "patched-grader")
# Assignments 1-3 read WMT17 (absent: skipped, as every WMT17 test is); 4 reads packaged data.
NUMBERS = [n for n in (1, 2, 3, 4) if n == 4 or _have_wmt17()]
IDS = {int(p.stem.split("_")[1]): p.stem
       for p in sorted((REPO / "book").glob("assignment_*.md"))}
# Two assignments at a time, the two that encode sentences (3 and 4) apart: more kernels at once
# on two cores push honest cells past the 60 s limit.
PARALLEL = 2
ORDER = sorted(NUMBERS, key=lambda n: (4, 1, 3, 2).index(n))
# The courses are graded in `make test-full` (five minutes for Assignment 1 alone on two cores, a
# quarter of an hour for all four); `make test` runs this file's tests that start no course, and
# the graders' own tests (tests/test_assignments.py, test_checkers.py, test_grade_cli.py).
COURSE = pytest.mark.slow
BY_NUMBER = [pytest.param(n, marks=COURSE) for n in NUMBERS]
#: The assignment graded when the selected tests name none (the release test alone).
FIRST = 1 if 1 in NUMBERS else 4


def _selected(session) -> list[int]:
    """The assignments that this run's selected tests of this file grade, in :data:`ORDER`."""
    here, wanted = Path(__file__).resolve(), set()
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "number" in callspec.params and item.path.resolve() == here:
            wanted.add(callspec.params["number"])
    return [n for n in ORDER if n in wanted] or [FIRST]


def _env() -> dict:
    """nbgrader's tools (alembic) on PATH; tests/ importable by kernels (the wrong values)."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "tests"), str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


# What nbgrader logs as errors when a cell meets its time limit (the looping answer): expected.
_TIMEOUT_LOG = ("Timeout waiting for execute reply", "Interrupting kernel")


def _nbgrader(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, env=_env(),
                          capture_output=True, text=True, timeout=3000)
    log = done.stdout + done.stderr
    errors = [line for line in log.splitlines() if re.search(r"\| ERROR\]|\[ERROR\]", line)
              and not any(expected in line for expected in _TIMEOUT_LOG)]
    assert done.returncode == 0 and not errors, (errors, log[-3000:])
    return log


# --- the submissions -------------------------------------------------------------------------

def _registry():
    import test_assignments

    return test_assignments


def _inline(function, name: str) -> str:
    """Source that defines ``name`` as ``function`` in a notebook cell: the function's own
    source and that of the helpers of its module it calls, pasted (so that they run as the
    notebook's code); the module's other names imported from it."""
    module = sys.modules[function.__module__]
    helpers, names = [], set()

    def visit(code):
        for item in code.co_names:
            obj = module.__dict__.get(item)
            if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
                if obj not in helpers and obj is not function:
                    helpers.append(obj)
                    visit(obj.__code__)
            elif obj is not None and not isinstance(obj, types.ModuleType):
                names.add(item)
            elif isinstance(obj, types.ModuleType):
                names.add(item)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                visit(const)
    visit(function.__code__)
    imports = f"from {module.__name__} import {', '.join(sorted(names))}\n" if names else ""
    bodies = [inspect.getsource(f) for f in [*reversed(helpers), function]]
    return imports + "\n".join(bodies) + f"\n{name} = {function.__name__}\n"


def _code_answer(number: int, key: str, name: str, klass: str, first: bool) -> str | None:
    """The answer cell of a code question for ``klass`` (None: keep the release's)."""
    right, wrongs, _ = _registry().REGISTRY[number, key]
    if klass == "correct" or (klass == "loop" and not first):
        return _inline(right, name)
    if klass == "mistakes":
        wrong = wrongs[0]
        if isinstance(wrong, types.FunctionType) and wrong.__name__ != "<lambda>":
            return _inline(wrong, name)
        return f"{name} = str.split\n" if wrong is str.split else None
    if klass == "library":
        if first:
            return (f"def {name}(*args):\n"
                    "    checks = __import__('markeval.exercises.' + 'assignments', "
                    "fromlist=['x'])\n"
                    f"    question = getattr(checks, 'assign' + 'ment')({number}).task("
                    f"{key!r}).question\n"
                    "    return question.reference(*args)\n")
        return (f"def {name}(*args):\n"
                "    from markeval.exercises.assignments import assignment\n"
                f"    return assignment({number}).task({key!r}).question.reference(*args)\n")
    if klass == "loop" and first:
        return f"def {name}(*args):\n    while True:\n        pass\n"
    return None


def _value_answer(number: int, key: str, name: str, klass: str, model: str) -> str | None:
    if klass in ("correct", "library", "loop"):
        return _without_markers(model)
    if klass == "mistakes":
        return ("from test_assignments import REGISTRY as _MISTAKES\n"
                f"{name} = _MISTAKES[{number}, {key!r}][1][0].make()\n")
    return None


_FORGED_RESULTS = """
class _AlwaysTrue(dict):
    def get(self, *args, **kwargs):
        return True
A.results = _AlwaysTrue()
"""
_SECOND_CHECKER = """
import dataclasses as _dc
from markeval.exercises.assignments import assignment as _assignment
_B = _assignment({number})
_B.tasks = [_dc.replace(_t, points=10 * _t.points) for _t in _B.tasks]
_B.results = {{_t.key: True for _t in _B.tasks}}
"""
_PRINTER = """
import builtins as _builtins
import json as _json
def print(*args, **kwargs):
    _builtins.print("<<markeval-grade>>" + _json.dumps({{"number": {number}, "report": []}}))
"""
# Wrong answers, and markeval's comparison and nbgrader hidden test patched in the kernel to
# pass anything (this fools nbgrader's in-kernel test cells; the batch grader compares in a
# process of its own).
_PATCHED_GRADER = """
import markeval.exercises._question as _question
import markeval.exercises.autograde as _autograde
_question.close = lambda *args, **kwargs: True
_autograde.verify = lambda *args, **kwargs: None
"""
_COPIER = """
import shutil as _shutil
_shutil.copyfile({good!r}, {victim!r})
"""


def _without_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if line.strip() not in (BEGIN, END))


def _submission(release, source, number: int, klass: str, extra: str = ""):
    """The notebook a student of ``klass`` hands in (see the module notes); ``extra`` is
    appended to the first answer cell."""
    nb = nbformat.from_dict(release)
    models = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells}
    tasks = {t.key: t for t in assignment(number).tasks}
    first_code = next(t.key for t in tasks.values() if t.kind == "code")
    answers = [i for i, c in enumerate(nb.cells)
               if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    for i in answers:
        cell = nb.cells[i]
        later = next(c.source for c in nb.cells[i + 1:] if c.cell_type == "code")
        check = re.search(r"""A\.check\(\s*["'](q\d+[a-z]?)["']\s*,\s*(\w+)""", later)
        if check is None:
            continue  # an answer cell before the next one (a helper cell): left as released
        key, name = check.groups()
        model = models[cell.metadata["nbgrader"]["grade_id"]]
        answers_of = "mistakes" if klass == "patched-grader" else klass
        if tasks[key].kind == "code":
            new = _code_answer(number, key, name, answers_of, key == first_code)
        else:
            new = _value_answer(number, key, name, answers_of, model)
        if new is not None:
            cell.source = new
    extras = {"forged-results": _FORGED_RESULTS,
              "second-checker": _SECOND_CHECKER.format(number=number),
              "printer": _PRINTER.format(number=number), "patched-grader": _PATCHED_GRADER}
    extra = extras.get(klass, "") + extra
    if extra:
        nb.cells[answers[0]].source += "\n" + extra
    if klass == "edited":  # one locked Markdown cell changed
        cell = next(c for c in nb.cells if c.cell_type == "markdown"
                    and c.metadata["nbgrader"]["locked"] and "## Q1" in c.source)
        cell.source += "\n\n(I changed this locked cell.)"
    if klass == "correct":  # written answers: the model's
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution") and cell.cell_type == "markdown":
                cell.source = _without_markers(models[meta["grade_id"]])
    return nb


def _expected(number: int, klass: str) -> dict:
    """{key: points earned} of every auto-graded question for a student of ``klass``."""
    tasks = [t for t in assignment(number).tasks if t.auto]
    first_code = next(t.key for t in tasks if t.kind == "code")
    if klass == "correct":
        return {t.key: t.points for t in tasks}
    if klass == "library":
        return {t.key: 0 if t.question.allowed is not None else t.points for t in tasks}
    if klass == "loop":
        return {t.key: 0 if t.key == first_code else t.points for t in tasks}
    return {t.key: 0 for t in tasks}


def _course(root: Path, number: int) -> Path:
    """One assignment's course: written, released, submitted, autograded; its folder."""
    name = IDS[number]
    folder = root / name
    course.write_course(REPO, folder, seed=SEED)
    for other in (folder / "source").iterdir():
        if other.name != name:  # this course folder holds one assignment
            shutil.rmtree(other)
    _nbgrader(folder, "generate_assignment", name, "--force")
    release = nbformat.read(folder / "release" / name / f"{name}.ipynb", 4)
    source = nbformat.read(folder / "source" / name / f"{name}.ipynb", 4)
    for klass in (*CLASSES, *NBGRADER_ONLY):
        target = folder / "submitted" / klass / name / f"{name}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(_submission(release, source, number, klass), target)
    log = _nbgrader(folder, "autograde", name, "--force")
    (folder / "autograde.log").write_text(log, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def courses(request, tmp_path_factory):
    """{assignment: its autograded course folder} for the selected tests, two at a time."""
    root = tmp_path_factory.mktemp("course")
    numbers = _selected(request.session)
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        return dict(zip(numbers, pool.map(lambda n: _course(root, n), numbers)))


def _batch(folder: Path, number: int):
    """The batch grader on the assignment's submissions and the two batch-only ones."""
    name = IDS[number]
    submitted = folder / "batch"
    release = nbformat.read(folder / "release" / name / f"{name}.ipynb", 4)
    source = nbformat.read(folder / "source" / name / f"{name}.ipynb", 4)
    for klass in CLASSES:
        target = submitted / klass / name / f"{name}.ipynb"
        target.parent.mkdir(parents=True)
        target.write_bytes((folder / "submitted" / klass / name / f"{name}.ipynb").read_bytes())
    good = submitted / "correct" / name / f"{name}.ipynb"
    victim = submitted / "mistakes" / name / f"{name}.ipynb"
    for klass in BATCH_ONLY:
        extra = _COPIER.format(good=str(good), victim=str(victim)) if klass == "copier" else ""
        target = submitted / klass / name / f"{name}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(_submission(release, source, number, klass, extra=extra), target)
    before = {p.parent.parent.name: hashlib.sha256(p.read_bytes()).hexdigest()
              for p in submitted.rglob("*.ipynb")}
    out = folder / "grades.csv"
    done = subprocess.run([sys.executable, "-m", "markeval.exercises.grade", str(submitted),
                           "--out", str(out), "--student-from", "nbgrader", "--seed", str(SEED)],
                          env=_env(), capture_output=True, text=True, timeout=3000)
    with out.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle)), done, before


@pytest.fixture(scope="module")
def batches(courses):
    """{assignment: (rows, process, hashes before)} of the batch grader, two at a time."""
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        return dict(zip(courses, pool.map(lambda n: _batch(courses[n], n), courses)))


def _gradebook(root: Path) -> dict:
    """{(student, grade id): auto score} from nbgrader's SQLite gradebook."""
    db = sqlite3.connect(root / "gradebook.db")
    query = """
        SELECT student.id, base_cell.name, grade.auto_score
        FROM grade
        JOIN base_cell ON grade.cell_id = base_cell.id
        JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id
        JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id
        JOIN student ON submitted_assignment.student_id = student.id"""
    try:
        return {(s, cell): score for s, cell, score in db.execute(query)}
    finally:
        db.close()


# --- the tests -------------------------------------------------------------------------------

def test_course_notebooks_carry_nbgrader_metadata(tmp_path):
    """Every cell has nbgrader metadata: checks worth points_table()'s points, answers
    unlocked, everything else locked; each check's hidden test recomputes its question."""
    for path in course.write_course(REPO, tmp_path, seed=SEED):
        number = int(path.parent.name.split("_")[1])
        tasks = {t.key: t for t in assignment(number).tasks}
        points = assignment(number).points_table()["points"]
        nb = nbformat.read(path, 4)
        metas = [c.metadata["nbgrader"] for c in nb.cells]
        graded = {m["grade_id"]: m["points"] for m in metas if m["grade"]}
        assert graded == {k.lower(): int(v) for k, v in points.items()}, path.name
        for cell, meta in zip(nb.cells, metas):
            assert meta["schema_version"] == 3 and meta["grade_id"]
            assert meta["locked"] != meta["solution"], (path.name, meta)
            if meta["grade"] and cell.cell_type == "code":
                task = tasks[meta["grade_id"]]
                assert cell.source.startswith("A.check(")
                assert (f"verify({number}, {task.key!r}, {task.answer}, seed={SEED})\n"
                        "### END HIDDEN TESTS") in cell.source
                assert "A.results" not in cell.source
        assert ".md)" not in "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    config = (tmp_path / "nbgrader_config.py").read_text(encoding="utf-8")
    assert "StarterCode" in config and "RestoreHiddenTests" in config
    assert f"c.Execute.timeout = {course.CELL_TIMEOUT_S}" in config and course.CELL_TIMEOUT_S <= 60


@COURSE
def test_the_release_has_starter_code_and_no_hidden_test(courses):
    for number, folder in courses.items():
        name = IDS[number]
        text = (folder / "release" / name / f"{name}.ipynb").read_text(encoding="utf-8")
        nb = nbformat.reads(text, 4)
        for cell in nb.cells:
            assert "raise NotImplementedError()" not in cell.source.split("\n"), cell.source
        assert TOP_LEVEL_STUB in text and "BEGIN SOLUTION" not in text
        assert "BEGIN HIDDEN TESTS" not in text and "verify(" not in text
        assert str(SEED) not in text


@pytest.mark.parametrize("number", BY_NUMBER)
def test_nbgrader_gives_every_submission_its_right_score(courses, number):
    book = _gradebook(courses[number])
    tasks = [t for t in assignment(number).tasks if t.auto]
    got, want = {}, {}
    for klass in (*CLASSES, *NBGRADER_ONLY):
        expected = _expected(number, "untouched" if klass == "edited" else klass)
        for task in tasks:
            got[klass, task.key] = book[klass, task.key]
            want[klass, task.key] = expected[task.key]
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not wrong, f"A{number} (class, question): (nbgrader, right): {wrong}"
    print(f"A{number} nbgrader totals:", {k: sum(v for (c, _), v in got.items() if c == k)
                                          for k in (*CLASSES, *NBGRADER_ONLY)})


@pytest.mark.parametrize("number", BY_NUMBER)
def test_nbgrader_reports_an_edited_locked_cell_and_nothing_else(courses, number):
    log = (courses[number] / "autograde.log").read_text(encoding="utf-8")
    student, changed = None, []
    for line in log.splitlines():
        sanitizing = re.search(r"Sanitizing .*/submitted/([^/]+)/", line)
        student = sanitizing[1] if sanitizing else student
        if "checksum" in line and "has changed" in line:
            changed.append((student, re.search(r"for cell (\S+) has changed", line)[1]))
    assert [s for s, _ in changed] == ["edited"], changed
    assert changed[0][1].startswith("locked-")


@pytest.mark.parametrize("number", BY_NUMBER)
def test_the_batch_grader_gives_every_submission_its_right_score(batches, number):
    rows, done, before = batches[number]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # (Not asserted: a traceback on stderr. One of 16 batch runs printed one, content unseen;
    # the closing note of #58 says so.)
    tasks = [t for t in assignment(number).tasks if t.auto]
    wrong = {}
    for klass in (*CLASSES, *BATCH_ONLY):
        mine = {r["question"]: r for r in rows if r["student"] == klass}
        expected = _expected(number, klass if klass in CLASSES else "untouched")
        for task in tasks:
            if float(mine[task.key]["earned"]) != expected[task.key]:
                wrong[klass, task.key] = (mine[task.key]["earned"], mine[task.key]["status"],
                                          expected[task.key])
        assert mine["total"]["sha256"] == before[klass], klass  # the bytes handed in
        assert float(mine["total"]["earned"]) == sum(expected.values()), klass
        assert {r["seed"] for r in mine.values()} == {str(SEED)}
        written = [t for t in assignment(number).tasks if not t.auto]
        assert all(mine[t.key]["earned"] == "" and mine[t.key]["status"] == "graded by hand"
                   for t in written)
    assert not wrong, f"A{number} (class, question): (earned, status, right): {wrong}"
    statuses = {(r["student"], r["question"]): r["status"] for r in rows}
    assert {statuses["untouched", t.key] for t in tasks} == {"not answered yet"}
    first_code = next(t.key for t in tasks if t.kind == "code")
    assert statuses["loop", first_code] == "over the time limit"
    scratch = [t.key for t in tasks if t.question.allowed is not None]
    assert {statuses["library", k] for k in scratch} == {"module not allowed"}


@COURSE
def test_the_copier_changed_the_file_but_not_the_grade(batches):
    number = next(iter(batches))
    rows, _, before = batches[number]
    name = IDS[number]
    folder = Path(next(r["notebook"] for r in rows if r["student"] == "mistakes")).parent
    now = hashlib.sha256((folder / f"{name}.ipynb").read_bytes()).hexdigest()
    assert now == before["correct"] != before["mistakes"]  # the copy happened, on disk
    assert {r["sha256"] for r in rows if r["student"] == "mistakes"} == {before["mistakes"]}


def test_the_batch_grader_stops_a_notebook_at_its_time_limit(tmp_path):
    from markeval.exercises.grade import grade_notebooks

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time"),
                                         nbformat.v4.new_code_cell("time.sleep(60)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "slow" / "assignment_1_ngram_metrics.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    [graded] = grade_notebooks([path], timeout=8, student_from="folder", progress=False,
                               seed=1)
    assert graded.student == "slow" and graded.earned is None and graded.seconds < 60
    # (the limit counts the kernel's start too: on a loaded machine it may end in cell 0)
    assert re.fullmatch(r"time limit of 8 s exceeded \(in cell [01]\)", graded.failure)
    assert graded.total_row()["status"] == f"not graded: {graded.failure}"
