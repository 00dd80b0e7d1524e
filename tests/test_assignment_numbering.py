"""Assignment exercises are numbered per assignment, by their question: A2 Q3 is Exercise A2.3.

The labels in the sources (``a2-q3`` under the heading "Q3 — …") must match the questions of
``points_table()``, and the book's Sphinx extension (``book/_ext/markeval_book.py``) must turn
them into the numbers readers see. The second part builds a two-page Sphinx project with
sphinx-exercise, sphinxcontrib-bibtex and the extension (a few seconds) instead of the whole book.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO
from markeval.exercises.assignments import assignment

ASSIGNMENTS = sorted((REPO / "book").glob("assignment_*.md"))
_HEADING = re.compile(r"^#{2,3} (Q\d+[a-z]?(?: and Q\d+)?) —", re.M)
_EXERCISE = re.compile(r"^`{3,}\{exercise\}.*\n:label: (\S+)", re.M)


def _number(md) -> int:
    return int(md.stem.split("_")[1])


@pytest.mark.parametrize("md", ASSIGNMENTS, ids=[md.stem for md in ASSIGNMENTS])
def test_one_exercise_per_question_labelled_by_its_q_number(md):
    text = md.read_text(encoding="utf-8")
    n = _number(md)
    labels = _EXERCISE.findall(text)
    questions = sorted({int(re.match(r"q(\d+)", t.key)[1]) for t in assignment(n).tasks})
    assert labels == [f"a{n}-q{q}" for q in questions], (md.name, labels)
    # each exercise sits under the heading of its question
    for label in labels:
        q = int(label.split("-q")[1])
        before = text[: text.index(f":label: {label}\n")]
        heading = _HEADING.findall(before)[-1]
        assert f"Q{q}" in re.findall(r"Q\d+", heading), (label, heading)


def test_the_book_numbers_assignment_exercises_by_question(tmp_path):
    # The book's extension works beside sphinxcontrib-bibtex, as in _config.yml.
    (tmp_path / "refs.bib").write_text("", encoding="utf-8")
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(REPO / 'book' / '_ext')!r})\n"
        "extensions = ['sphinx_exercise', 'sphinxcontrib.bibtex', 'markeval_book']\n"
        "bibtex_bibfiles = ['refs.bib']\nnumfig = True\n", encoding="utf-8")
    (tmp_path / "index.rst").write_text("Book\n====\n\n.. toctree::\n\n   chapter\n   a2\n",
                                        encoding="utf-8")
    (tmp_path / "chapter.rst").write_text(
        "Chapter\n=======\n\n.. exercise:: Plain\n   :label: ex-plain\n\n   text\n",
        encoding="utf-8")
    (tmp_path / "a2.rst").write_text(
        "Assignment 2\n============\n\n"
        + "".join(f".. exercise:: Question {q}\n   :label: a2-q{q}\n\n   text\n\n"
                  for q in (1, 3, 8))
        + "See :numref:`a2-q3`.\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path),
                    str(tmp_path / "_build")], check=True, capture_output=True, text=True)
    page = (tmp_path / "_build" / "a2.html").read_text(encoding="utf-8")
    assert re.findall(r"Exercise (A?[\d.]+)", page) == ["A2.1", "A2.3", "A2.8", "A2.3"]
    chapter = (tmp_path / "_build" / "chapter.html").read_text(encoding="utf-8")
    assert re.findall(r"Exercise (A?[\d.]+)", chapter) == ["1"]  # other exercises: as before
