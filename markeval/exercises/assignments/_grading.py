"""The containers of a graded assignment: :class:`Task` (one question) and :class:`Assignment`."""

from __future__ import annotations

from dataclasses import dataclass, field

from markeval._checks import check_choice
from markeval.exercises._question import CheckResult, Question

__all__ = ["Assignment", "Task", "make_task"]

KINDS = ("code", "value", "written")  #: how a task is graded (see :class:`Task`)
NO_SOLUTION = "Model solutions are in the instructor edition of this notebook."


@dataclass(frozen=True)
class Task:
    """One graded question of an assignment.

    Attributes
    ----------
    key : str
        ``"q1"``, ``"q2"``, … (written parts of a question: ``"q8b"``).
    title : str
        Short name, shown in verdicts and in the points table.
    points : int
    kind : {"code", "value", "written"}
        ``code``: a function checked on cases; ``value``: a computed value checked against
        the library; ``written``: an explanation graded by hand.
    question : Question or None
        The auto-check (None for written tasks).
    answer : str or None
        The name the notebook gives the answer (``"my_ngrams"``): the function of a code task,
        the variable of a value task. The graders take the answer by this name, from the
        assignment's definition, never from the notebook's own check cells.
    """

    key: str
    title: str
    points: int
    kind: str
    question: Question | None = None
    answer: str | None = None

    @property
    def auto(self) -> bool:
        """Whether the task is graded by an automatic check."""
        return self.question is not None


@dataclass
class Assignment:
    """A graded assignment: tasks with points, auto-checks, hints and a score summary.

    Parameters
    ----------
    number : int
    title : str
    tasks : list of Task

    Examples
    --------
    >>> from markeval.exercises.assignments import assignment
    >>> A = assignment(1)
    >>> A.total, [t.key for t in A.tasks][:3]
    (100, ['q1', 'q2', 'q3'])
    >>> ok = A.check("q4", lambda c, r: 1.0)  # no penalty at all: wrong
    ✗ Q4 Brevity penalty [5 pts]: case 1 of 24 failed
      arg 1 (c): 0
      arg 2 (r): 5
      returned: 1.0
      (stuck? call .hint() on this question; .failing_case() returns this case)

    A graded check shows the failing input and what the answer returned, never what markeval
    returns: the assignments are graded.
    """

    number: int
    title: str
    tasks: list[Task]
    results: dict[str, CheckResult] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        keys = [t.key for t in self.tasks]
        if len(keys) != len(set(keys)):
            raise ValueError(f"assignment {self.number}: duplicate task keys in {keys}")

    @property
    def total(self) -> int:
        """Points of the whole assignment."""
        return sum(t.points for t in self.tasks)

    def task(self, key: str) -> Task:
        """The task called ``key`` (e.g. ``"q3"``)."""
        for t in self.tasks:
            if t.key == key:
                return t
        raise KeyError(f"assignment {self.number} has no question {key!r}; "
                       f"questions: {', '.join(t.key for t in self.tasks)}")

    def _auto_task(self, key: str) -> Task:
        t = self.task(key)
        if not t.auto:
            raise ValueError(f"{key} ({t.title}) is a written question, graded by hand: "
                             "there is nothing to check automatically")
        return t

    def check(self, key: str, answer) -> CheckResult:
        """Check the answer to question ``key``, print the verdict and remember it.

        Returns a :class:`~markeval.exercises.CheckResult` (truthy when right). This is the
        student's feedback, on the public cases; grades come from
        :mod:`markeval.exercises.autograde`, which never reads what was remembered here.
        """
        result = self._auto_task(key).question.check(answer)
        self.results[key] = result
        return result

    def hint(self, key: str) -> None:
        """Print the next hint for question ``key``."""
        self._auto_task(key).question.hint()

    def points_table(self):
        """A pandas DataFrame: question, title, kind, points, how it is graded."""
        import pandas as pd

        return pd.DataFrame(
            [(t.key.upper(), t.title, t.kind, t.points, "auto-check" if t.auto else "by hand")
             for t in self.tasks],
            columns=["question", "title", "kind", "points", "graded"],
        ).set_index("question")

    def score(self) -> dict:
        """Points from the auto-checks run so far.

        Returns
        -------
        dict
            ``earned`` (points of passed checks), ``auto_points`` (points of all auto-checked
            questions), ``written_points`` (points graded by hand), ``unchecked`` (keys of
            auto-checked questions not checked yet) and ``failed`` (keys that failed).
        """
        auto = [t for t in self.tasks if t.auto]
        return {
            "earned": sum(t.points for t in auto if self.results.get(t.key)),
            "auto_points": sum(t.points for t in auto),
            "written_points": sum(t.points for t in self.tasks if not t.auto),
            "unchecked": [t.key for t in auto if t.key not in self.results],
            "failed": [t.key for t in auto if t.key in self.results and not self.results[t.key]],
        }

    def report(self) -> list[dict]:
        """One dict per question: ``key``, ``title``, ``kind``, ``points``, ``earned`` (None for
        a written question) and ``status``: "passed", "failed", "not answered yet" (the
        starter, untouched), "not checked" (no check ran) or "graded by hand".

        Examples
        --------
        >>> from markeval.exercises.assignments import assignment
        >>> assignment(1).report()[0]
        {'key': 'q1', 'title': 'n-gram counts', 'kind': 'code', 'points': 10, 'earned': 0, \
'status': 'not checked'}
        """
        rows = []
        for t in self.tasks:
            if not t.auto:
                status = "graded by hand"
            elif t.key not in self.results:
                status = "not checked"
            elif not getattr(self.results[t.key], "attempted", True):
                status = "not answered yet"
            else:
                status = "passed" if self.results[t.key] else "failed"
            earned = (t.points if self.results.get(t.key) else 0) if t.auto else None
            rows.append({"key": t.key, "title": t.title, "kind": t.kind, "points": t.points,
                         "earned": earned, "status": status})
        return rows

    def summary(self) -> dict:
        """Print and return :meth:`score`: one line per question, then the totals."""
        s = self.score()
        print(f"Assignment {self.number}: {self.title}")
        for row in self.report():
            earned = "  ?" if row["earned"] is None else f"{row['earned']:>3}"
            print(f"  {row['key'].upper():<4} {row['title']:<38} {earned}/{row['points']:<3} "
                  f"{row['status']}")
        print(f"  auto-checked: {s['earned']}/{s['auto_points']} points; "
              f"written: {s['written_points']} points to grade by hand")
        return s


def make_task(key: str, title: str, points: int, kind: str, *, answer: str | None = None,
              **question) -> Task:
    """A :class:`Task`; for an auto-checked one, its :class:`Question` from ``question`` and
    the name of its ``answer`` in the notebook."""
    if check_choice(kind, "kind", KINDS) == "written":
        return Task(key, title, points, kind)
    if not (isinstance(answer, str) and answer.isidentifier()):
        raise ValueError(f"task {key}: answer must name the notebook's {kind} answer, "
                         f"got {answer!r}")
    label = f"{key.upper()} {title} [{points} pts]"
    question.setdefault("solution", NO_SOLUTION)
    # Graded: a failing case shows its input and the answer's output, not the reference's.
    question.setdefault("show_expected", False)
    return Task(key, title, points, kind, Question(label, **question), answer)

