"""Auto-checked exercise questions: check an answer, give hints, show the solution."""

from __future__ import annotations

import copy
import textwrap
from dataclasses import dataclass

import numpy as np

from markeval._checks import check_number, check_seed
from markeval.exercises._compare import close

_INPUT_CHARS = 160
_ANSWER_CHARS = 100


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())  # one line: numpy reprs and tracebacks span several
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value, limit: int) -> str:
    return _cut(repr(value), limit)


def _format_args(args: tuple) -> str:
    return _short(args[0] if len(args) == 1 else args, _INPUT_CHARS)


def _describe_error(err: Exception) -> str:
    message = _cut(str(err), _ANSWER_CHARS)
    name = type(err).__name__
    return f"{name}: {message}" if message else name


@dataclass(frozen=True)
class CheckResult:
    """Outcome of :meth:`Question.check`: truthy when every case passed.

    Attributes
    ----------
    passed : bool
    n_cases : int
        Cases in the question (1 for a value question).
    failed_case : int or None
        1-based number of the first failing case.
    message : str
        The line that :meth:`Question.check` printed.
    """

    passed: bool
    n_cases: int
    failed_case: int | None
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return "✓" if self.passed else "✗"

    def _ipython_display_(self) -> None:
        # check() already printed the verdict; a cell ending in q.check(...) must not
        # display it a second time.
        return None


class Question:
    """An exercise whose answer is checked automatically, without revealing it.

    A *function* question compares the reader's function with ``reference`` on a
    list of argument tuples (``cases``); a *value* question compares a value with
    ``expected``.

    Parameters
    ----------
    title : str
        Short name printed in every verdict.
    reference : callable, optional
        The correct function, for function questions.
    cases : callable or list, optional
        The inputs: a list of positional-argument tuples (a non-tuple item is one
        argument), or ``cases(rng)`` returning such a list, called with
        ``numpy.random.default_rng(seed)`` at every check so that cases are
        random but reproducible. Required with ``reference``.
    expected : object or callable, optional
        The correct value, for value questions; a zero-argument callable is
        evaluated lazily, at check time.
    hints : sequence of str
        Shown one at a time, cycling, by :meth:`hint`.
    solution : str
        Shown by :meth:`solution`.
    rtol, atol : float
        Numbers match when ``|answer - correct| <= atol + rtol * |correct|``,
        inside nested lists, tuples, dicts, dataclasses and numpy arrays too.
    seed : int
        Seed of the generator passed to a callable ``cases``.

    Examples
    --------
    >>> q = Question("Mean", reference=lambda xs: sum(xs) / len(xs),
    ...              cases=lambda rng: [(rng.integers(0, 10, size=4).tolist(),)
    ...                                 for _ in range(3)],
    ...              hints=["Add them up, then divide."], solution="sum(xs) / len(xs)")
    >>> ok = q.check(lambda xs: sum(xs) / len(xs))
    ✓ Mean: passed 3 cases
    >>> ok = q.check(lambda xs: max(xs))
    ✗ Mean: case 1 of 3 failed — input: [8, 6, 5, 2]; your answer returned 8 (stuck? call .hint() on this question)
    >>> bool(ok)
    False
    >>> def starter(xs):
    ...     raise NotImplementedError("your code here")
    >>> ok = q.check(starter)
    ✗ Mean: case 1 of 3 failed — input: [8, 6, 5, 2]; your answer raised NotImplementedError: your code here (stuck? call .hint() on this question)
    >>> q.hint()
    Hint 1/1: Add them up, then divide.
    >>> q.solution()
    sum(xs) / len(xs)

    A value question:

    >>> v = Question("Two plus two", expected=4)
    >>> ok = v.check(5)
    ✗ Two plus two: your answer 5 is not correct (no hints; call .solution() on this question)
    """

    def __init__(self, title: str, *, reference=None, cases=None, expected=None, hints=(),
                 solution: str = "", rtol: float = 1e-9, atol: float = 1e-12, seed: int = 0):
        if not isinstance(title, str) or not title.strip():
            raise ValueError(f"title must be a non-empty str, got {title!r}")
        if reference is None and expected is None:
            raise ValueError(f"Question {title!r} needs a reference function or an expected value")
        if reference is not None and expected is not None:
            raise ValueError(f"Question {title!r}: give reference (function question) or "
                             "expected (value question), not both")
        if reference is not None and not callable(reference):
            raise TypeError(f"Question {title!r}: reference must be callable, "
                            f"got {type(reference).__name__}")
        if reference is not None and cases is None:
            raise ValueError(f"Question {title!r}: a reference function needs cases to run on")
        if cases is not None and not callable(cases) and not isinstance(cases, (list, tuple)):
            raise TypeError(f"Question {title!r}: cases must be a list of argument tuples or "
                            f"a function of an rng, got {type(cases).__name__}")
        if isinstance(hints, str):
            hints = (hints,)
        rtol = check_number(rtol, f"Question {title!r}: rtol", minimum=0.0)
        atol = check_number(atol, f"Question {title!r}: atol", minimum=0.0)
        self.title = title
        self.reference = reference
        self.cases = cases
        self.expected = expected
        self.hints = tuple(str(h) for h in hints)
        self.solution_text = textwrap.dedent(solution).strip()
        self.rtol = rtol
        self.atol = atol
        self.seed = check_seed(seed)
        self._next_hint = 0

    def __repr__(self) -> str:
        kind = "function" if self.reference is not None else "value"
        return f"Question({self.title!r}, {kind} question, {len(self.hints)} hints)"

    # --- checking -----------------------------------------------------------------------

    def _pointer(self) -> str:
        return "(stuck? call .hint() on this question)" if self.hints else "(no hints; call .solution() on this question)"

    def _cases(self) -> list[tuple]:
        raw = self.cases(np.random.default_rng(self.seed)) if callable(self.cases) else self.cases
        return [case if isinstance(case, tuple) else (case,) for case in raw]

    def _verdict(self, passed: bool, n: int, failed: int | None, message: str) -> CheckResult:
        print(message)
        return CheckResult(passed, n, failed, message)

    def check(self, answer) -> CheckResult:
        """Check an answer and print a one-line verdict.

        Parameters
        ----------
        answer : callable or object
            For a function question, the reader's function (called on every case;
            exceptions it raises count as a failure and are reported). For a value
            question, the value.

        Returns
        -------
        CheckResult
            Truthy when the answer is right. It does not display itself in a
            notebook, so a cell ending in ``q.check(...)`` shows the verdict once.
        """
        fail = f"✗ {self.title}:"
        if self.reference is None:
            if callable(answer) and not callable(self.expected):
                return self._verdict(False, 1, 1, f"{fail} expected a value but got a function "
                                                  f"(call it and pass its result) {self._pointer()}")
            expected = self.expected() if callable(self.expected) else self.expected
            if close(answer, expected, self.rtol, self.atol):
                return self._verdict(True, 1, None, f"✓ {self.title}: passed 1 case")
            return self._verdict(False, 1, 1, f"{fail} your answer {_short(answer, _ANSWER_CHARS)} "
                                              f"is not correct {self._pointer()}")
        if not callable(answer):
            return self._verdict(False, 0, None, f"{fail} expected a function but got "
                                                 f"{_short(answer, _ANSWER_CHARS)} (pass the "
                                                 f"function itself, without calling it)")
        cases = self._cases()
        n = len(cases)
        for i, args in enumerate(cases, start=1):
            # Fresh copies: an answer that mutates its input must not change what the
            # reference sees, nor the next case.
            want = self.reference(*copy.deepcopy(args))
            head = f"{fail} case {i} of {n} failed — input: {_format_args(args)}; your answer"
            try:
                got = answer(*copy.deepcopy(args))
            except Exception as err:  # noqa: BLE001 - any error in the answer is a failed case
                return self._verdict(False, n, i, f"{head} raised {_describe_error(err)} "
                                                  f"{self._pointer()}")
            if not close(got, want, self.rtol, self.atol):
                return self._verdict(False, n, i, f"{head} returned "
                                                  f"{_short(got, _ANSWER_CHARS)} {self._pointer()}")
        return self._verdict(True, n, None,
                             f"✓ {self.title}: passed {n} case{'s' if n != 1 else ''}")

    # --- help ---------------------------------------------------------------------------

    def hint(self) -> None:
        """Print the next hint (after the last one, start again from the first)."""
        if not self.hints:
            print(f"No hints for {self.title!r}; call .solution() on this question.")
            return
        k = self._next_hint % len(self.hints)
        self._next_hint += 1
        print(f"Hint {k + 1}/{len(self.hints)}: {self.hints[k]}")

    def solution(self) -> None:
        """Print the solution."""
        print(self.solution_text or f"No solution is given for {self.title!r}.")
