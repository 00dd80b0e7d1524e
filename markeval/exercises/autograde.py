"""Grades from the assignment's definition: every answer recomputed, nothing believed.

A notebook's checker (``A = assignment(N)``, ``A.check("q1", my_ngrams)``) is feedback for the
student while they work. It lives in the student's kernel, where the student's own code can
replace its records, so no grade is read from it. A grade is made here instead, from the
assignment's definition alone:

* the answer is taken by the name the assignment gives it (:attr:`Task.answer`, e.g.
  ``my_ngrams``), not by what the notebook's check cells pass;
* it runs on the question's cases drawn with a *grading seed* that the notebook does not
  know (hidden cases: an answer that looks up the public cases' results fails them), under
  the question's module rule (:func:`markeval.exercises._guard.guard`) and within
  :data:`ANSWER_TIME_LIMIT` seconds for all its cases;
* its outputs are compared with the reference's, and the points are the task's.

Two graders use it. In an nbgrader course (``tools/course.py``) each test cell's hidden test is
``verify(N, "qK", answer, seed=...)``, run in the cell itself. The batch grader
(:mod:`markeval.exercises.grade`) prepares the cases and references once per class with
:func:`prepare`, runs each answer in a process of its own and judges it with
:func:`grade_run`.

Examples
--------
>>> from collections import Counter
>>> def my_ngrams(tokens, n):
...     return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
>>> from markeval.exercises.assignments import assignment
>>> task = assignment(1).task("q1")
>>> grade = grade_answer(prepare(task, seed=7), my_ngrams)  # doctest: +SKIP
>>> grade.earned, grade.status  # doctest: +SKIP
(10, 'passed')
"""

from __future__ import annotations

from dataclasses import dataclass

from markeval.exercises._compare import close
from markeval.exercises._describe import describe_error, verdict_head
from markeval.exercises._question import AnswerRun

__all__ = ["ANSWER_TIME_LIMIT", "STATUSES", "Grade", "Prepared", "grade_answer", "grade_run",
           "grade_value", "prepare", "verify"]

#: Seconds an answer may take over all the cases of its question.
ANSWER_TIME_LIMIT = 60.0
#: What a grade's ``status`` can say.
STATUSES = ("passed", "failed", "not answered yet", "module not allowed", "over the time limit",
            "no answer", "graded by hand")


@dataclass(frozen=True)
class Grade:
    """The grade of one question.

    Attributes
    ----------
    key, title, kind : str
    points : int
        What the question is worth (the assignment's definition).
    earned : int or None
        ``points`` or 0; None for a written question, graded by hand.
    status : str
        One of :data:`STATUSES`.
    message : str
        The verdict, as the student would read it (never the expected answer).
    """

    key: str
    title: str
    kind: str
    points: int
    earned: int | None
    status: str
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True, eq=False)
class Prepared:
    """One question's grading material for one seed, computed once for a whole class.

    Attributes
    ----------
    task : Task
    seed : int
    cases : list of tuple or None
        The hidden cases (None for a value or written question).
    wants : list or None
        The reference's output on every case (None: computed when compared); for a value
        question, ``[expected]``.
    """

    task: object
    seed: int
    cases: list | None
    wants: list | None


def prepare(task, seed: int, *, references: bool = True) -> Prepared:
    """Draw ``task``'s cases with ``seed`` and compute the reference's outputs on them (with
    ``references=False``, a code question's are left to the comparison, which computes them
    as far as the first failing case)."""
    import copy

    question = task.question
    if question is None:
        return Prepared(task, seed, None, None)
    if question.reference is None:
        expected = question.expected() if callable(question.expected) else question.expected
        return Prepared(task, seed, None, [expected])
    cases = question._cases(seed)
    if not references:
        return Prepared(task, seed, cases, None)
    return Prepared(task, seed, cases,
                    [question.reference(*copy.deepcopy(args)) for args in cases])


def _grade(task, status: str, message: str = "", earned: int | None = 0) -> Grade:
    if status == "passed":
        earned = task.points
    return Grade(task.key, task.title, task.kind, task.points, earned, status, message)


def _head(task, symbol: str, rest: str) -> str:
    return verdict_head(symbol, task.question.title, rest)


def grade_run(prepared: Prepared, run: AnswerRun | None) -> Grade:
    """The grade of a code question from what its answer returned (``run``, from
    :meth:`Question.run` on ``prepared.cases``, in this process or another); None when the
    notebook defines no answer of the task's name."""
    task = prepared.task
    if task.question is None:
        return _grade(task, "graded by hand", earned=None)
    if run is None:
        return _grade(task, "no answer", _head(task, "✗", f"no function named {task.answer}"))
    passed, lines, _ = task.question.judge(prepared.cases, run, wants=prepared.wants)
    if passed is None:
        return _grade(task, "not answered yet", _head(task, "○", "not answered yet"))
    status = ("passed" if passed else "module not allowed" if run.forbidden
              else "over the time limit" if run.timed_out else "failed")
    return _grade(task, status, "\n".join(lines))


def grade_value(prepared: Prepared, value, *, found: bool = True,
                error: BaseException | None = None) -> Grade:
    """The grade of a value question: ``value`` against the prepared expected value
    (``error``: why the value could not be taken from the notebook)."""
    task = prepared.task
    if not found:
        return _grade(task, "no answer", _head(task, "✗", f"no value named {task.answer}"))
    if error is not None:
        return _grade(task, "failed", _head(task, "✗", "cannot be graded: "
                                            + describe_error(error, 60)))
    if value is None:
        return _grade(task, "not answered yet", _head(task, "○", "not answered yet"))
    question = task.question
    if close(value, prepared.wants[0], question.rtol, question.atol):
        return _grade(task, "passed", _head(task, "✓", "passed"))
    return _grade(task, "failed", _head(task, "✗", "your answer is not correct"))


def grade_answer(prepared: Prepared, answer, *, found: bool = True,
                 time_limit: float = ANSWER_TIME_LIMIT) -> Grade:
    """Grade ``answer`` (a function, or a value) in this process."""
    task = prepared.task
    if task.question is None:
        return grade_run(prepared, None)
    if task.kind == "value":
        return grade_value(prepared, answer, found=found)
    if not found:
        return grade_run(prepared, None)
    if not callable(answer):
        return _grade(task, "failed", _head(task, "✗", f"{task.answer} is not a function"))
    return grade_run(prepared, task.question.run(answer, prepared.cases, time_limit=time_limit))


def verify(number: int, key: str, answer, *, seed: int) -> None:
    """An nbgrader test cell's hidden test: grade question ``key`` of assignment ``number``
    on the cases of ``seed``, print the verdict, and fail the cell unless it passed.

    The points are those of the cell (nbgrader's metadata, written from the assignment's
    definition by ``tools/course.py``); what the notebook's own checker recorded is not read.

    Raises
    ------
    AssertionError
        When the answer did not pass, with its status.
    """
    import contextlib
    import sys

    from markeval.exercises.assignments import assignment

    # nbgrader scores 0 a test cell that writes to stderr (progress bars, warnings).
    with contextlib.redirect_stderr(sys.stdout):
        grade = grade_answer(prepare(assignment(number).task(key), seed, references=False),
                             answer)
    print(grade.message)
    if not grade.passed:
        raise AssertionError(f"{key.upper()}: {grade.status}")
