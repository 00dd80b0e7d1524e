"""Auto-checked exercise questions: check an answer, give hints, show the solution.

A verdict is a few short lines (none longer than :data:`WIDTH` characters): ``✓`` when every
case passes; ``✗`` and the failing case — its inputs one per line, what the answer returned
or raised and, for a function question, what the reference returns there — when one fails;
``○`` and one line when the answer is still the starter (a function raising
``NotImplementedError``, or ``None``). Values are shown in full when they fit on the line and
summarised otherwise: arrays by shape, dtype and their first values, long lists, dicts and
strings by length and their first items. :meth:`Question.failing_case` returns the failing
case itself.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import textwrap
from dataclasses import dataclass, field

import numpy as np

from markeval._checks import check_bool, check_number, check_seed
from markeval.exercises import _describe as text
from markeval.exercises._compare import close
from markeval.exercises._describe import WIDTH
from markeval.exercises._guard import AnswerTimeout, allowed_text, guard

# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FailingCase:
    """The case an answer failed: its inputs, what the answer did and what was expected.

    For a function question the verdict shows the reference's output on the failing input, as
    a test harness does: it says what your function should have returned there, not how to
    compute it (that stays behind ``.solution()``). For a value question the expected value
    is the answer itself and is never shown, here or in the verdict.

    Attributes
    ----------
    number : int
        1-based number of the case among the question's cases (1 for a value question).
    args : tuple
        The positional arguments the function was called with (a deep copy, yours to change:
        call your function again with ``f(*case.args)``); ``()`` for a value question.
    expected : object
        The reference's output on ``args`` for a function question; None for a value
        question, for a case without arguments (its output would be the answer) and for a
        question made with ``show_expected=False``.
    got : object
        What the answer returned (None when it raised); for a value question, the answer.
    error : Exception or None
        What the answer raised, if it raised.

    Examples
    --------
    >>> q = Question("Double", reference=lambda x: 2 * x, cases=[0, 1, 2])
    >>> ok = q.check(lambda x: x * x)
    ✗ Double: case 2 of 3 failed
      input (x): 1
      returned: 1
      expected: 2
      (no hints; call .solution() on this question; .failing_case() returns this case)
    >>> case = q.failing_case()
    >>> case.number, case.args, case.got, case.expected, case.error
    (2, (1,), 1, 2, None)
    >>> ok.case is case
    True
    """

    number: int
    args: tuple
    expected: object
    got: object
    error: BaseException | None = None

    def __repr__(self) -> str:
        fields = [f"number={self.number}",
                  f"args={text.describe(self.args, WIDTH - 10)}",
                  f"expected={text.describe(self.expected, WIDTH - 14)}",
                  f"got={text.describe(self.got, WIDTH - 9)}",
                  f"error={text.cut(text.one_line(repr(self.error)), WIDTH - 11)}"]
        one = f"FailingCase({', '.join(fields)})"
        if len(one) <= WIDTH:
            return one
        return "FailingCase(\n" + "".join(f"    {f},\n" for f in fields) + ")"


@dataclass(frozen=True)
class CheckResult:
    """Outcome of :meth:`Question.check`: truthy when every case passed.

    Attributes
    ----------
    passed : bool
    n_cases : int
        Cases in the question (1 for a value question).
    failed_case : int or None
        1-based number of the first failing case (None when it passed or was not attempted).
    message : str
        The verdict that :meth:`Question.check` printed (one or more lines).
    attempted : bool
        False when the answer is still the starter: a function raising
        ``NotImplementedError`` on the first case, or None. Such a result is falsy too.
    case : FailingCase or None
        The failing case, as :meth:`Question.failing_case` returns it.
    """

    passed: bool
    n_cases: int
    failed_case: int | None
    message: str
    attempted: bool = True
    case: FailingCase | None = field(default=None, compare=False)

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return "✓" if self.passed else ("✗" if self.attempted else "○")

    def _ipython_display_(self) -> None:
        # check() already printed the verdict; a cell ending in q.check(...) must not
        # display it a second time.
        return None


@dataclass(frozen=True, eq=False)
class AnswerRun:
    """What :meth:`Question.run` saw: one ``(returned, raised)`` pair per case run, the first
    module the answer reached that its question does not allow, whether it ran out of time,
    and what it printed (``stdout``, ``stderr``)."""

    outputs: list
    forbidden: str | None = None
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""


# --- questions --------------------------------------------------------------------------------


class Question:
    """An exercise whose answer is checked automatically.

    A *function* question compares the reader's function with ``reference`` on a
    list of argument tuples (``cases``); a *value* question compares a value with
    ``expected``. :meth:`check` prints a short verdict (no line longer than 100 characters):
    for a failing function, the first failing case — its arguments one per line, summarised
    when long (arrays by shape, dtype and first values), what the function returned or
    raised, and what the reference returns on that input, as a test harness does (it says
    what to return, not how). For a value question the expected value is the answer and is
    never printed. An untouched starter (a function that raises ``NotImplementedError``, or
    ``None``) gets one neutral ``○ … not answered yet`` line instead of a failure.
    :meth:`failing_case` returns the last failing case in full.

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
    show_expected : bool
        Whether a failing function question shows the reference's output on the failing
        input (in the verdict and in :meth:`failing_case`). Never shown for a value question,
        nor for a case without arguments.
    allowed : sequence of str, optional
        For a question that asks for an implementation from scratch: the packages, beside the
        standard library, that the answer may use (``("numpy",)``). The answer runs under
        :func:`markeval.exercises._guard.guard`: one that reaches any other module — markeval,
        nltk, sacrebleu, a helper module of its own — by any route (an alias, ``getattr`` at
        run time, ``importlib``, ``exec``) fails, and the verdict names the module. None
        (the default): any module.

    Examples
    --------
    >>> q = Question("Mean", reference=lambda xs: sum(xs) / len(xs),
    ...              cases=lambda rng: [(rng.integers(0, 10, size=4).tolist(),)
    ...                                 for _ in range(3)],
    ...              hints=["Add them up, then divide."], solution="sum(xs) / len(xs)")
    >>> ok = q.check(lambda xs: sum(xs) / len(xs))
    ✓ Mean: passed 3 cases
    >>> ok = q.check(lambda xs: max(xs))
    ✗ Mean: case 1 of 3 failed
      input (xs): [8, 6, 5, 2]
      returned: 8
      expected: 5.25
      (stuck? call .hint() on this question; .failing_case() returns this case)
    >>> bool(ok), ok.failed_case, q.failing_case().args
    (False, 1, ([8, 6, 5, 2],))
    >>> def starter(xs):
    ...     raise NotImplementedError("your code here")
    >>> ok = q.check(starter)
    ○ Mean: not answered yet — replace the NotImplementedError with your code
    >>> bool(ok), ok.attempted
    (False, False)
    >>> q.hint()
    Hint 1/1: Add them up, then divide.
    >>> q.solution()
    sum(xs) / len(xs)

    Arrays are summarised:

    >>> import numpy as np
    >>> s = Question("Column sums", reference=lambda a: a.sum(axis=0),
    ...              cases=lambda rng: [(rng.normal(size=(20, 4)).round(2),)])
    >>> ok = s.check(lambda a: a.sum(axis=1))
    ✗ Column sums: case 1 of 1 failed
      input (a): array shape (20, 4) float64: [0.13, -0.13, 0.64, 0.1, -0.54, 0.36, …]
      returned: array shape (20,) float64: [0.74, 2.07, -2.55, -4.53, 0.59, 0.92, -0.67, …]
      expected: array shape (4,) float64: [-2.39, 1.08, 4.99, 5.92]
      difference: shape (20,), expected (4,)
      (no hints; call .solution() on this question; .failing_case() returns this case)

    A value question:

    >>> v = Question("Two plus two", expected=4)
    >>> ok = v.check(5)
    ✗ Two plus two: your answer 5 is not correct
      (no hints; call .solution() on this question)
    >>> ok = v.check(None)
    ○ Two plus two: not answered yet — replace None with your answer

    A question that asks for an implementation from scratch:

    >>> import markeval
    >>> w = Question("BLEU", reference=lambda h, r: markeval.bleu(h, r).score,
    ...              cases=[(["a cat"], [["a cat"]])], allowed=("numpy",))
    >>> ok = w.check(lambda h, r: markeval.bleu(h, r).score)
    ✗ BLEU: case 1 of 1 uses module 'markeval.lexical.bleu'
      (allowed: the standard library and numpy; write it from the definitions)
    """

    def __init__(self, title: str, *, reference=None, cases=None, expected=None, hints=(),
                 solution: str = "", rtol: float = 1e-9, atol: float = 1e-12, seed: int = 0,
                 show_expected: bool = True, allowed=None):
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
        if allowed is not None:
            if isinstance(allowed, str) or not all(isinstance(a, str) for a in allowed):
                raise TypeError(f"Question {title!r}: allowed must be a sequence of package "
                                f"names like ('numpy',), got {allowed!r}")
            if reference is None:
                raise ValueError(f"Question {title!r}: allowed applies to function questions; "
                                 "a value does not run")
            allowed = tuple(allowed)
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
        self.show_expected = check_bool(show_expected, f"Question {title!r}: show_expected")
        self.allowed = allowed
        self._next_hint = 0
        self._last_case = None

    def __repr__(self) -> str:
        kind = "function" if self.reference is not None else "value"
        return f"Question({self.title!r}, {kind} question, {len(self.hints)} hints)"

    # --- checking -----------------------------------------------------------------------

    def _pointer(self, function: bool = False) -> str:
        text = ("stuck? call .hint() on this question" if self.hints
                else "no hints; call .solution() on this question")
        if function:
            text += "; .failing_case() returns this case"
        return f"  ({text})"

    def _cases(self, seed: int | None = None) -> list[tuple]:
        """The argument tuples, drawn with ``seed`` (default: the question's own)."""
        rng = np.random.default_rng(self.seed if seed is None else seed)
        raw = self.cases(rng) if callable(self.cases) else self.cases
        return [case if isinstance(case, tuple) else (case,) for case in raw]

    def run(self, answer, cases, *, time_limit: float | None = None) -> AnswerRun:
        """Call ``answer`` on every case (fresh copies), under the guard of the question's
        ``allowed`` modules and within ``time_limit`` seconds for all the cases together.

        Stops at the first case that reaches a module not allowed, at the time limit, and at
        a starter's ``NotImplementedError`` on the first case. It does not compare anything:
        :meth:`judge` does, wherever the references are computed.
        """
        namespace = getattr(answer, "__globals__", None)
        copies = copy.deepcopy(list(cases))  # an answer that mutates its input changes nothing
        outputs = []
        with guard(namespace if isinstance(namespace, dict) else {}, self.allowed,
                   time_limit=time_limit) as record:
            for args in copies:
                try:
                    outputs.append((answer(*args), None))
                except (Exception, AnswerTimeout) as err:  # noqa: BLE001 - a failed case
                    outputs.append((None, err))
                if record.forbidden or record.timed_out or (
                        len(outputs) == 1 and isinstance(outputs[0][1], NotImplementedError)):
                    break
        return AnswerRun(outputs, record.forbidden, record.timed_out, record.stdout,
                         record.stderr)

    def _stopped(self, run: AnswerRun, i: int, n: int) -> list[str]:
        """The verdict of a run stopped at case ``i`` of ``n`` by the guard or the clock."""
        if run.forbidden:
            return [text.verdict_head("✗", self.title, f"case {i} of {n} uses module "
                                                       f"{run.forbidden!r}"),
                    f"  (allowed: {allowed_text(self.allowed)}; write it from the definitions)"]
        where = f" (stopped at case {i} of {n})" if i else ""
        return [text.verdict_head("✗", self.title, f"over its time limit{where}")]

    def judge(self, cases, run: AnswerRun, *, wants=None, names=None, start: int = 1,
              n: int | None = None) -> tuple[bool | None, list[str], FailingCase | None]:
        """Compare an :class:`AnswerRun` with the reference on the same ``cases``.

        Returns ``(passed, verdict lines, failing case)``; ``passed`` is None for a starter
        left untouched. ``wants`` are the reference's outputs on ``cases`` when computed
        already (a grader computes them once for a class); ``names`` are the answer's
        parameter names, for the input lines; ``cases`` are cases ``start``, ``start + 1``, …
        of ``n`` (default: all of them).
        """
        n = len(cases) if n is None else n
        if run.forbidden or run.timed_out:
            return False, self._stopped(run, start - 1 + len(run.outputs), n), None
        if start == 1 and run.outputs and isinstance(run.outputs[0][1], NotImplementedError):
            return None, [], None
        for i, (args, (got, error)) in enumerate(zip(cases, run.outputs), start=start):
            want = (self.reference(*copy.deepcopy(args)) if wants is None
                    else wants[i - start])
            if error is None and close(got, want, self.rtol, self.atol):
                continue
            show = self.show_expected and len(args) > 0
            case = FailingCase(i, copy.deepcopy(args), want if show else None, got, error)
            lines = [text.verdict_head("✗", self.title, f"case {i} of {n} failed")]
            lines += text.input_lines(args, names)
            if error is not None:
                lines.append("  raised:   " + text.describe_error(error, WIDTH - 12))
            else:
                lines.append(text.line("returned:", got))
            if show:
                lines.append(text.line("expected:", want))
                both_in_full = (text.render(got, WIDTH - 12) is not None
                                and text.render(want, WIDTH - 12) is not None)
                if error is None and not both_in_full:  # else the two lines show it all
                    detail = text.difference_line(got, want, self.rtol, self.atol)
                    lines += [detail] if detail else []
            lines.append(self._pointer(function=True))
            return False, lines, case
        return True, [self._pass_line(n)], None

    def _verdict(self, passed: bool, n: int, failed: int | None, lines, *, attempted=True,
                 case: FailingCase | None = None) -> CheckResult:
        message = "\n".join(lines) if isinstance(lines, list) else lines
        print(message)
        self._last_case = case
        return CheckResult(passed, n, failed, message, attempted, case)

    def _not_answered(self, n: int, *whats: str) -> CheckResult:
        """One neutral line; ``whats`` are ways to say what to do, longest first: the first
        that fits beside the whole title is used (the title is cut only as a last resort)."""
        tails = [f"not answered yet — {w}" for w in whats] + ["not answered yet"]
        if self.hints:
            tails.insert(0, f"{tails[0]} (.hint() helps)")
        for rest in tails:
            line = f"○ {self.title}: {rest}"
            if len(line) <= WIDTH:
                break
        else:
            line = text.verdict_head("○", self.title, tails[-2])
        return self._verdict(False, n, None, line, attempted=False)

    def _pass_line(self, n: int) -> str:
        return text.verdict_head("✓", self.title, f"passed {text.count(n, 'case')}")

    def _passed(self, n: int) -> CheckResult:
        return self._verdict(True, n, None, self._pass_line(n))

    def check(self, answer) -> CheckResult:
        """Check an answer and print the verdict.

        Parameters
        ----------
        answer : callable or object
            For a function question, the reader's function (called on every case;
            exceptions it raises count as a failure and are reported). For a value
            question, the value.

        Returns
        -------
        CheckResult
            Truthy when the answer is right; ``attempted`` is False for an untouched starter.
            It does not display itself in a notebook, so a cell ending in ``q.check(...)``
            shows the verdict once.
        """
        # nbgrader scores 0 a test cell that writes to stderr: an answer's (or the library's)
        # progress bars and warnings are not failures, so they go to stdout.
        with contextlib.redirect_stderr(sys.stdout):
            if self.reference is None:
                return self._check_value(answer)
            return self._check_function(answer)

    def _check_value(self, answer) -> CheckResult:
        if answer is None:
            return self._not_answered(1, "replace None with your answer")
        if callable(answer) and not isinstance(answer, type):
            return self._verdict(False, 1, 1, [
                text.verdict_head("✗", self.title, "expected a value but got a function"),
                "  (call your function and pass its result to .check())"],
                case=FailingCase(1, (), None, answer))
        expected = self.expected() if callable(self.expected) else self.expected
        if close(answer, expected, self.rtol, self.atol):
            return self._passed(1)
        rest = "your answer {} is not correct"
        room = WIDTH - len(text.verdict_head("✗", self.title, rest.format("")))
        exact = text.render(answer, room)
        if exact is not None:
            lines = [text.verdict_head("✗", self.title, rest.format(exact))]
        else:
            lines = [text.verdict_head("✗", self.title, "your answer is not correct"),
                     text.line("your answer:", answer)]
        detail = text.value_difference_line(answer, expected, self.rtol, self.atol)
        lines += ([detail] if detail else []) + [self._pointer()]
        return self._verdict(False, 1, 1, lines, case=FailingCase(1, (), None, answer))

    def _check_function(self, answer) -> CheckResult:
        if answer is None:
            return self._not_answered(0, "define your function and pass it to .check()",
                                      "pass your function to .check()")
        if not callable(answer):
            return self._verdict(False, 0, None, [
                text.verdict_head("✗", self.title, f"expected a function but got "
                                       f"{text.describe(answer, 40)}"),
                "  (pass the function itself, without calling it)"])
        cases = self._cases()
        # Case by case, so that the first failure stops the check (and its output shows).
        for i, args in enumerate(cases, start=1):
            run = self.run(answer, [args])
            print(run.stdout + run.stderr, end="")
            passed, lines, case = self.judge([args], run, start=i, n=len(cases),
                                             names=text.parameter_names(answer, len(args)))
            if passed is None:
                return self._not_answered(len(cases), "replace the NotImplementedError with "
                                          "your code", "replace NotImplementedError with your "
                                          "code", "write your code")
            if not passed:
                return self._verdict(False, len(cases), i, lines, case=case)
        return self._passed(len(cases))

    def failing_case(self) -> FailingCase | None:
        """The case the last :meth:`check` failed, or None (it passed, or nothing was checked).

        Returns
        -------
        FailingCase or None
            ``args`` (a deep copy of the arguments, so ``f(*case.args)`` reruns it), ``got``
            (what the answer returned), ``error`` (what it raised), ``expected`` (the
            reference's output, for a function question; never for a value question).

        Examples
        --------
        >>> q = Question("Absolute value", reference=abs, cases=[3, -2])
        >>> q.failing_case() is None
        True
        >>> ok = q.check(lambda x: x)
        ✗ Absolute value: case 2 of 2 failed
          input (x): -2
          returned: -2
          expected: 2
          (no hints; call .solution() on this question; .failing_case() returns this case)
        >>> q.failing_case()
        FailingCase(number=2, args=(-2,), expected=2, got=-2, error=None)
        >>> ok = q.check(lambda x: max(x, -x))
        ✓ Absolute value: passed 2 cases
        >>> q.failing_case() is None
        True
        """
        return self._last_case

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
