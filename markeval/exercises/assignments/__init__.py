"""The four graded assignments of the book: questions, points and auto-checks.

Each assignment is an :class:`Assignment`: an ordered list of :class:`Task` objects, each worth
some points. A *code* task wraps a :class:`~markeval.exercises.Question` whose reference is the
markeval library (or, for the few helpers the library has no public name for, a short function
defined beside it), run on generated cases — random toy inputs and, where the assignment says
"real", lines of WMT17 or MiniLM embeddings of BBC News sentences. A *written* task is graded
by hand; its model answer lives in the instructor edition of the notebook.

One module per assignment defines its questions (``tasks()``), points and constants:
:mod:`.ngram_metrics` (1), :mod:`.alignment_metrics` (2), :mod:`.embedding_metrics` (3) and
:mod:`.mark_evaluate` (4); ``_grading`` holds the containers and ``_cases`` the case material
they share. In a notebook::

    from markeval.exercises.assignments import assignment
    A = assignment(1)
    A.points_table()             # what each question is worth
    A.check("q1", my_ngrams)     # ✓ Q1 n-gram counts [10 pts]: passed 30 cases
    A.hint("q1")
    A.summary()                  # points earned by the auto-checks so far

The checks never print the expected answer: a failure names the case (its number and its
input) and what the answer returned. Cases are seeded, so a check is reproducible.
"""

from __future__ import annotations

from markeval._checks import check_choice
from markeval.exercises.assignments import (alignment_metrics, embedding_metrics, mark_evaluate,
                                            ngram_metrics)
from markeval.exercises.assignments._cases import wmt17_judged
from markeval.exercises.assignments._grading import Assignment, Task
from markeval.exercises.assignments.embedding_metrics import A3_SEGMENTS, toy_problem
from markeval.exercises.assignments.mark_evaluate import (A4_K, A4_SIZES, A4_TOPIC_ORDER,
                                                          bbc_collapse_data, collapse_schedule)
from markeval.exercises.assignments.ngram_metrics import A1_SYSTEM

__all__ = [
    "A1_SYSTEM",
    "A3_SEGMENTS",
    "A4_K",
    "A4_SIZES",
    "A4_TOPIC_ORDER",
    "ASSIGNMENT_TITLES",
    "Assignment",
    "Task",
    "assignment",
    "bbc_collapse_data",
    "collapse_schedule",
    "points_table",
    "toy_problem",
    "wmt17_judged",
]

_MODULES = {m.NUMBER: m for m in (ngram_metrics, alignment_metrics, embedding_metrics,
                                  mark_evaluate)}
#: ``{number: title}`` of the four assignments.
ASSIGNMENT_TITLES = {number: module.TITLE for number, module in _MODULES.items()}


def assignment(number: int) -> Assignment:
    """A fresh :class:`Assignment` (1–4), with no answers checked yet.

    Examples
    --------
    >>> [assignment(n).total for n in (1, 2, 3, 4)]
    [100, 100, 100, 100]
    """
    module = _MODULES[check_choice(number, "number", sorted(_MODULES))]
    return Assignment(number, module.TITLE, module.tasks())


def points_table():
    """Points of every question of every assignment, as one pandas DataFrame."""
    import pandas as pd

    frames = []
    for n in ASSIGNMENT_TITLES:
        t = assignment(n).points_table().reset_index()
        t.insert(0, "assignment", n)
        frames.append(t)
    return pd.concat(frames, ignore_index=True)
