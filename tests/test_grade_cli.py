"""The batch grader's command line refuses, before any notebook runs, what it would lose or
destroy: an --out that is a folder, a submitted notebook or someone's file, student names it
cannot read, and notebooks of no known assignment (no kernel is started by any of these
tests)."""

from __future__ import annotations

import nbformat
import pytest

from markeval.exercises import autograde, grade


@pytest.fixture
def submitted(tmp_path, monkeypatch):
    """nbgrader's layout, submitted/<student>/<assignment>/<notebook>.ipynb, and no kernel."""
    folder = tmp_path / "submitted" / "bob" / "a1"
    folder.mkdir(parents=True)
    notebook = folder / "a1.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)

    def no_kernel(*args, **kwargs):
        raise AssertionError("a notebook ran although the command should have refused first")
    monkeypatch.setattr(grade, "grade_notebook", no_kernel)
    return notebook


def _refused(capsys, argv, message):
    assert grade.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_out_that_is_a_folder_is_refused_before_grading(submitted, tmp_path, capsys):
    _refused(capsys, [str(submitted), "--out", str(tmp_path)],
             f"--out {tmp_path}: is a folder; name the CSV file to write")


def test_out_that_is_the_submitted_notebook_is_refused_even_with_force(submitted, capsys):
    before = submitted.read_bytes()
    _refused(capsys, [str(submitted), "--out", str(submitted), "--force"],
             f"--out {submitted}: is one of the submitted notebooks; name a new CSV file")
    assert submitted.read_bytes() == before


def test_an_existing_file_is_replaced_only_with_force(submitted, tmp_path, capsys, monkeypatch):
    mine = tmp_path / "grades.csv"
    mine.write_text("my own spreadsheet\n")
    _refused(capsys, [str(submitted), "--out", str(mine)],
             f"--out {mine}: exists; pass --force to replace it")
    assert mine.read_text() == "my own spreadsheet\n"
    monkeypatch.setattr(autograde, "prepare", lambda task, seed: None)  # no references
    monkeypatch.setattr(grade, "grade_notebook", lambda submission, prepared, **kw: grade.Graded(
        submission.student, str(submission.path), failure="test"))
    assert grade.main([str(submitted), "--out", str(mine), "--force", "--assignment", "1"]) == 1
    assert mine.read_text().startswith(",".join(grade.COLUMNS))


def test_a_notebook_of_no_known_assignment_is_refused_before_grading(submitted, tmp_path,
                                                                     capsys):
    _refused(capsys, [str(submitted), "--out", str(tmp_path / "grades.csv")],
             f"--assignment: not given, and not in the path of {submitted} (a file or folder "
             "named assignment_N_...)")


def test_the_assignment_is_read_from_the_path(tmp_path):
    path = tmp_path / "submitted" / "bob" / "assignment_3_embedding_metrics" / "mine.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), path)
    [found] = grade.read_submissions([tmp_path / "submitted"], student_from="nbgrader")
    assert (found.student, found.assignment) == ("bob", 3)
    assert found.sha256 == grade.hashlib.sha256(path.read_bytes()).hexdigest()
    [given] = grade.read_submissions([path], assignment=2)
    assert given.assignment == 2


def test_out_under_a_file_is_refused_before_grading(submitted, tmp_path, capsys):
    """The folder it would go in cannot be made: a file of that name is there (the same check
    refuses a folder this user may not write; the tests run as root, who may write anywhere)."""
    (tmp_path / "notes").write_text("mine\n")
    out = tmp_path / "notes" / "grades.csv"
    _refused(capsys, [str(submitted), "--out", str(out)],
             f"--out {out}: cannot write into {tmp_path / 'notes'}")
    assert (tmp_path / "notes").read_text() == "mine\n"


def test_nbgrader_names_come_from_a_relative_path(submitted, tmp_path, monkeypatch):
    monkeypatch.chdir(submitted.parent)
    assert grade._student(grade.Path("a1.ipynb"), "nbgrader") == "bob"
    assert grade._student(grade.Path("a1.ipynb"), "folder") == "a1"


def test_a_path_outside_nbgrader_s_layout_is_refused_by_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir("/")
    with pytest.raises(ValueError, match=r"--student-from nbgrader: /x.ipynb is not in "
                                         r"nbgrader's layout submitted/<student>/<assignment>/"):
        grade._student(grade.Path("/x.ipynb"), "nbgrader")
