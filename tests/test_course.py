"""The course kit: grading a class with nbgrader for real, and in batch without it.

One course folder is written by ``tools.course`` and released with the real ``nbgrader``
(``generate_assignment``). For every assignment three synthetic students submit:

* ``correct``: every answer cell holds the model solution of the instructor notebook (the
  region between the solution markers), every written answer the model answer;
* ``mistakes``: every auto-checked answer is a typical mistake, the first wrong answer that
  ``tests/test_assignments.py`` already holds for that question (imported from it);
* ``untouched``: the released notebook as it is.

``nbgrader autograde`` grades them; the gradebook (its SQLite database, read with ``sqlite3``)
must give each submission, question by question, exactly the points that ``A.score()`` gives
for the same answers: what the notebook's own ``A.summary()`` (which prints ``A.score()``)
printed in the run nbgrader made. The batch grader (``python -m markeval.exercises.grade``)
then executes the first assignment's three submissions again, and must agree with the gradebook
question by question; a fourth notebook, which fails at its first import, must be listed as not
graded without stopping the others.

Cost, measured on the two-core machine while others used it (load average 7): the release
~1 min, autograding the twelve submissions ~8 min (assignments 3 and 4, which embed sentences
with MiniLM, take 80 % of it), the batch grader on four notebooks ~36 s.
"""

from __future__ import annotations

import csv
import os
import re
import sqlite3
import subprocess
import sys
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


STUDENTS = ("correct", "mistakes", "untouched")
# Assignments 1-3 read WMT17 (absent: skipped, as every WMT17 test is); 4 reads packaged data.
NUMBERS = [n for n in (1, 2, 3, 4) if n == 4 or _have_wmt17()]
IDS = {int(p.stem.split("_")[1]): p.stem for p in sorted((REPO / "book").glob("assignment_*.md"))}
_CHECK = re.compile(r"""A\.check\(\s*["'](q\d+[a-z]?)["']\s*,\s*(\w+)""")


def _env() -> dict:
    """nbgrader's tools (alembic) on PATH; the wrong answers of tests/ importable by kernels."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "tests"), str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _nbgrader(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, env=_env(),
                          capture_output=True, text=True, timeout=1800)
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "[ERROR]" not in log, log[-3000:]
    return log


def _without_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if line.strip() not in (BEGIN, END))


def _submission(release, source, number: int, student: str):
    """The notebook ``student`` hands in for assignment ``number`` (see the module notes)."""
    nb = nbformat.from_dict(release)
    models = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells}
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution") or student == "untouched":
            continue
        if student == "correct":
            cell.source = _without_markers(models[meta["grade_id"]])
            continue
        later = [c.source for c in nb.cells[i + 1:] if c.cell_type == "code"]
        check = _CHECK.search(later[0]) if later and cell.cell_type == "code" else None
        if check:  # an auto-checked answer: its first typical mistake
            key, name = check.groups()
            cell.source = (
                "# a typical mistake, from tests/test_assignments.py\n"
                "from test_assignments import REGISTRY as _MISTAKES, Value as _Value\n"
                f"_wrong = _MISTAKES[{number}, {key!r}][1][0]\n"
                f"{name} = _wrong.make() if isinstance(_wrong, _Value) else _wrong")
    return nb


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """The course written, released, submitted and autograded (its folder)."""
    root = tmp_path_factory.mktemp("course")
    course.write_course(REPO, root)
    for number in NUMBERS:
        name = IDS[number]
        _nbgrader(root, "generate_assignment", name, "--force")
        release = nbformat.read(root / "release" / name / f"{name}.ipynb", 4)
        source = nbformat.read(root / "source" / name / f"{name}.ipynb", 4)
        for student in STUDENTS:
            target = root / "submitted" / student / name / f"{name}.ipynb"
            target.parent.mkdir(parents=True)
            nbformat.write(_submission(release, source, number, student), target)
    for number in NUMBERS:
        _nbgrader(root, "autograde", IDS[number], "--force")
    return root


@pytest.fixture(scope="module")
def batch_grades(graded_course):
    """The batch grader on the submissions of the first assignment, plus one more that fails
    at its first import (the cell that imports the checks and makes ``A``)."""
    root, name = graded_course, IDS[NUMBERS[0]]
    broken = nbformat.read(root / "submitted" / "correct" / name / f"{name}.ipynb", 4)
    first = next(c for c in broken.cells if c.cell_type == "code" and "assignment(" in c.source)
    first.source = "import markeval_no_such_module\n" + first.source
    path = root / "extra" / "broken" / name / f"{name}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(broken, path)
    out = root / "grades.csv"
    done = subprocess.run([sys.executable, "-m", "markeval.exercises.grade",
                           *(str(root / "submitted" / s / name) for s in STUDENTS),
                           str(root / "extra"), "--out", str(out), "--student-from", "nbgrader"],
                          env=_env(), capture_output=True, text=True, timeout=1800)
    with out.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle)), done


def _gradebook(root: Path) -> dict:
    """{(student, assignment, grade id): auto score} from nbgrader's SQLite gradebook."""
    db = sqlite3.connect(root / "gradebook.db")
    query = """
        SELECT student.id, assignment.name, base_cell.name, grade.auto_score
        FROM grade
        JOIN base_cell ON grade.cell_id = base_cell.id
        JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id
        JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id
        JOIN assignment ON submitted_assignment.assignment_id = assignment.id
        JOIN student ON submitted_assignment.student_id = student.id"""
    try:
        return {(s, a, cell): score for s, a, cell, score in db.execute(query)}
    finally:
        db.close()


_SUMMARY_LINE = re.compile(r"^  (\S+) +.*? +(\d+|\?)/(\d+) +(passed|failed|not answered yet|"
                           r"not checked|graded by hand)$", re.M)


def _summary(root: Path, student: str, name: str) -> tuple[dict, int]:
    """What ``A.summary()`` printed when nbgrader ran the submission: {key: (earned, status)}
    and the auto-checked total, i.e. ``A.score()`` of those answers."""
    nb = nbformat.read(root / "autograded" / student / name / f"{name}.ipynb", 4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "A.summary()" in c.source)
    text = "".join(o.get("text", "") for o in cell.outputs)
    total = re.search(r"auto-checked: (\d+)/\d+ points", text)
    assert total, f"{student}/{name}: the summary did not print: {text!r}"
    return ({key.lower(): (None if earned == "?" else int(earned), status)
             for key, earned, _, status in _SUMMARY_LINE.findall(text)}, int(total[1]))


def test_course_notebooks_carry_nbgrader_metadata(tmp_path):
    """Every cell has nbgrader metadata: checks worth points_table()'s points, answers
    unlocked, everything else locked."""
    for path in course.write_course(REPO, tmp_path):
        number = int(path.parent.name.split("_")[1])
        points = assignment(number).points_table()["points"]
        nb = nbformat.read(path, 4)
        metas = [c.metadata["nbgrader"] for c in nb.cells]
        graded = {m["grade_id"]: m["points"] for m in metas if m["grade"]}
        assert graded == {k.lower(): int(v) for k, v in points.items()}, path.name
        for cell, meta in zip(nb.cells, metas):
            assert meta["schema_version"] == 3 and meta["grade_id"]
            assert meta["locked"] != meta["solution"], (path.name, meta)
            if meta["grade"] and cell.cell_type == "code":
                assert "BEGIN HIDDEN TESTS" in cell.source and cell.source.startswith("A.check(")
        assert ".md)" not in "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "StarterCode" in (tmp_path / "nbgrader_config.py").read_text(encoding="utf-8")


def test_the_release_has_starter_code_that_never_raises_at_the_top_level(graded_course):
    root = graded_course
    for number in NUMBERS:
        name = IDS[number]
        text = (root / "release" / name / f"{name}.ipynb").read_text(encoding="utf-8")
        nb = nbformat.reads(text, 4)
        for cell in nb.cells:
            assert "raise NotImplementedError()" not in cell.source.split("\n"), cell.source
        assert TOP_LEVEL_STUB in text and "BEGIN SOLUTION" not in text
        assert "BEGIN HIDDEN TESTS" not in text and "A.results.get" not in text


def test_gradebook_totals_equal_a_score_of_the_same_answers(graded_course):
    root = graded_course
    book = _gradebook(root)
    totals = {}
    for number in NUMBERS:
        A, name = assignment(number), IDS[number]
        for student in STUDENTS:
            auto = {k: v for (s, a, k), v in book.items() if s == student and a == name}
            printed, score = _summary(root, student, name)
            for task in A.tasks:
                earned, status = printed[task.key]
                if task.auto:  # the check cell's auto score is the question's A.score() points
                    assert auto[task.key] == earned, (student, number, task.key, status)
                else:  # written: graded by hand (an answer left as released scores 0 at once)
                    assert earned is None, (student, task.key)
                    assert auto[task.key] == (None if student == "correct" else 0), task.key
            totals[student, number] = sum(v or 0 for v in auto.values())
            assert totals[student, number] == score, (student, number)
            expected = {"correct": "passed", "mistakes": "failed",
                        "untouched": "not answered yet"}[student]
            assert {printed[t.key][1] for t in A.tasks if t.auto} == {expected}, printed
        assert totals["correct", number] == A.score()["auto_points"]
        assert totals["mistakes", number] == totals["untouched", number] == 0
    print("gradebook totals (auto-graded points):", totals)


def test_the_batch_grader_agrees_and_lists_a_failed_notebook(graded_course, batch_grades):
    rows, done = batch_grades
    number, name = NUMBERS[0], IDS[NUMBERS[0]]
    book = _gradebook(graded_course)
    for student in STUDENTS:
        mine = {r["question"]: r for r in rows if r["student"] == student}
        for task in assignment(number).tasks:
            got = mine[task.key]["earned"]
            if task.auto:
                assert float(got) == book[student, name, task.key], (student, task.key)
            else:
                assert got == "" and mine[task.key]["status"] == "graded by hand"
        assert float(mine["total"]["earned"]) == sum(
            v or 0 for (s, a, _), v in book.items() if s == student and a == name)
    broken = [r for r in rows if r["student"] == "broken"]
    assert len(broken) == 1 and broken[0]["question"] == "total", broken
    assert "ModuleNotFoundError: No module named 'markeval_no_such_module'" in broken[0]["status"]
    assert broken[0]["status"].startswith("not graded: cell ")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not graded:" in done.stderr and "broken" in done.stderr
    assert f"graded {len(STUDENTS)} of {len(STUDENTS) + 1} notebooks" in done.stdout


def test_the_batch_grader_stops_a_notebook_at_its_time_limit(tmp_path):
    from markeval.exercises.grade import grade_notebook

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time"),
                                         nbformat.v4.new_code_cell("time.sleep(60)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "slow" / "dana.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    graded = grade_notebook(path, timeout=8, student_from="folder")
    assert graded.student == "slow" and graded.earned is None and graded.seconds < 40
    # (the limit counts the kernel's start too: on a loaded machine it may end in cell 0)
    assert re.fullmatch(r"time limit of 8 s exceeded \(in cell [01]\)", graded.failure)
    assert graded.total_row()["status"] == f"not graded: {graded.failure}"
