"""The exercise checker: verdict lines, no leaked answers, tolerance, hints and solutions."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from markeval.exercises import CheckResult, Question, close
from markeval.stats import pearson


def _pearson_reference(x, y):
    return pearson(x, y, n_resamples=0).value


def _pearson_cases(rng):
    return [(rng.normal(size=n).tolist(), rng.normal(size=n).tolist()) for n in (3, 5, 8, 20)]


def _pearson_by_hand(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


@pytest.fixture
def q():
    return Question("Pearson r", reference=_pearson_reference, cases=_pearson_cases,
                    hints=["Centre both lists.", "Divide by both norms.", "Use math.sqrt."],
                    solution="def r(x, y): ...")


def _expected_outputs(question):
    return [question.reference(*case) for case in question._cases()]


def test_right_answer_passes(q, capsys):
    result = q.check(_pearson_by_hand)
    assert capsys.readouterr().out == "✓ Pearson r: passed 4 cases\n"
    assert result and isinstance(result, CheckResult)
    assert (result.passed, result.n_cases, result.failed_case) == (True, 4, None)


@pytest.mark.parametrize("wrong, case", [
    (lambda x, y: _pearson_by_hand(x, y) ** 2, 1),            # r², wrong from the first case
    (lambda x, y: 0.5 if len(x) == 8 else _pearson_by_hand(x, y), 3),  # wrong on one case
])
def test_wrong_answers_name_the_case_and_hide_the_answer(q, capsys, wrong, case):
    result = q.check(wrong)
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert not result and result.failed_case == case
    assert out.startswith(f"✗ Pearson r: case {case} of 4 failed — input: ")
    assert "your answer returned " in out and out.endswith("(stuck? call .hint() on this question)\n")
    # The failing case's inputs are shown ...
    x, _ = q._cases()[case - 1]
    assert repr(x[0])[:8] in out
    # ... but no expected output, in any rounding.
    for want in _expected_outputs(q):
        for digits in (3, 4, 6):
            assert f"{want:.{digits}f}" not in out


def test_starter_that_raises_is_a_reported_failure(q, capsys):
    def starter(x, y):
        raise NotImplementedError("replace this line with your code")

    result = q.check(starter)
    out = capsys.readouterr().out
    assert not result
    assert re.fullmatch(r"✗ Pearson r: case 1 of 4 failed — input: \(\[.*\]\); your answer raised "
                        r"NotImplementedError: replace this line with your code "
                        r"\(stuck\? call \.hint\(\) on this question\)\n",
                        out)


def test_error_without_message_and_other_exceptions(capsys):
    q = Question("Inverse", reference=lambda x: 1 / x, cases=[2.0, 0.5])

    def bad(x):
        raise KeyError

    assert not q.check(bad)
    assert "your answer raised KeyError (no hints; call .solution() on this question)" in capsys.readouterr().out
    assert not q.check(lambda x: 1 / (x - 2))
    assert "raised ZeroDivisionError: float division by zero" in capsys.readouterr().out


def test_long_inputs_are_truncated_to_one_line(capsys):
    q = Question("Sum", reference=lambda a: float(np.sum(a)),
                 cases=lambda rng: [(rng.normal(size=(50, 50)),)])
    q.check(lambda a: 0.0)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "…" in out and len(out) < 400


def test_cases_are_reproducible_and_seeded():
    q1 = Question("a", reference=len, cases=lambda rng: [(rng.random(3).tolist(),)], seed=1)
    q2 = Question("a", reference=len, cases=lambda rng: [(rng.random(3).tolist(),)], seed=2)
    assert q1._cases() == q1._cases()
    assert q1._cases() != q2._cases()


def test_answer_mutating_its_input_does_not_fool_the_reference(capsys):
    q = Question("Sorted copy", reference=sorted, cases=[([3, 1, 2],), ([5, 4],)])

    def sorts_in_place(xs):
        xs.sort()
        return xs

    assert q.check(sorts_in_place)
    assert q.check(lambda xs: sorted(xs))
    capsys.readouterr()


def test_cases_accept_plain_lists_and_single_arguments(capsys):
    q = Question("Square", reference=lambda v: v * v, cases=[1, 2, (3,)])
    assert q.check(lambda v: v ** 2)
    assert capsys.readouterr().out == "✓ Square: passed 3 cases\n"
    one = Question("One", reference=abs, cases=[(-1,)])
    one.check(abs)
    assert capsys.readouterr().out == "✓ One: passed 1 case\n"


# --- value questions ----------------------------------------------------------------------


def test_value_question(capsys):
    q = Question("Kendall tau by hand", expected=2 / 3, hints=["Count concordant pairs."])
    assert q.check(0.6666666666667)
    assert capsys.readouterr().out == "✓ Kendall tau by hand: passed 1 case\n"
    result = q.check(0.67)
    out = capsys.readouterr().out
    assert not result
    assert out == "✗ Kendall tau by hand: your answer 0.67 is not correct (stuck? call .hint() on this question)\n"
    assert "0.666" not in out


def test_lazy_expected_value_is_computed_at_check_time(capsys):
    calls = []

    def expected():
        calls.append(1)
        return [1, 2.0]

    q = Question("Lazy", expected=expected)
    assert calls == []
    assert q.check((1, 2.0 + 1e-13))
    assert calls == [1]
    capsys.readouterr()


def test_function_where_a_value_is_wanted_and_vice_versa(capsys):
    v = Question("Value", expected=3)
    assert not v.check(lambda: 3)
    assert "expected a value but got a function" in capsys.readouterr().out
    f = Question("Function", reference=abs, cases=[-1])
    assert not f.check(1)
    assert "expected a function but got 1" in capsys.readouterr().out


# --- comparison ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Score:
    value: float
    n: int


@dataclasses.dataclass
class OtherScore:
    n: int
    value: float


def test_float_tolerance(capsys):
    q = Question("Third", reference=lambda: 1 / 3, cases=[()], rtol=1e-6, atol=0.0)
    assert q.check(lambda: 0.3333334)
    assert not q.check(lambda: 0.33334)
    strict = Question("Third", reference=lambda: 1 / 3, cases=[()])
    assert not strict.check(lambda: 0.3333334)
    assert strict.check(lambda: 1 / 3 + 1e-15)
    capsys.readouterr()


@pytest.mark.parametrize("got, want, same", [
    (1.0, 1, True),
    (np.float64(0.5), 0.5, True),
    (float("nan"), float("nan"), True),
    (float("inf"), float("inf"), True),
    (float("inf"), 1e308, False),
    (True, 1, False),
    ([1.0, 2.0], (1.0, 2.0 + 1e-12), True),
    ([1.0, 2.0], [1.0], False),
    ({"a": 1.0, "b": [2.0]}, {"a": 1.0 + 1e-12, "b": [2.0]}, True),
    ({"a": 1.0}, {"a": 1.0, "b": 2.0}, False),
    (np.array([[1.0, 2.0]]), np.array([[1.0, 2.0 + 1e-12]]), True),
    (np.array([1.0, 2.0]), [1.0, 2.0], True),
    (np.array([1.0, 2.0]), np.array([[1.0, 2.0]]), False),
    (Score(0.5 + 1e-13, 3), Score(0.5, 3), True),
    (OtherScore(3, 0.5), Score(0.5, 3), True),
    (Score(0.6, 3), Score(0.5, 3), False),
    ((0.5, 3), Score(0.5, 3), False),
    ("abc", "abc", True),
    ("abc", "abd", False),
    (None, 0.0, False),
    (1 + 1e-13j, 1, True),
])
def test_close(got, want, same):
    assert close(got, want, 1e-9, 1e-12) is same


# --- help ---------------------------------------------------------------------------------


def test_hints_cycle_and_solution(q, capsys):
    for _ in range(4):
        q.hint()
    assert capsys.readouterr().out.splitlines() == [
        "Hint 1/3: Centre both lists.", "Hint 2/3: Divide by both norms.",
        "Hint 3/3: Use math.sqrt.", "Hint 1/3: Centre both lists.",
    ]
    q.solution()
    assert capsys.readouterr().out == "def r(x, y): ...\n"


def test_no_hints_no_solution(capsys):
    q = Question("Bare", expected=1)
    q.hint()
    q.solution()
    assert capsys.readouterr().out.splitlines() == [
        "No hints for 'Bare'; call .solution() on this question.",
        "No solution is given for 'Bare'.",
    ]


def test_result_does_not_display_twice_in_a_notebook(q, capsys):
    result = q.check(_pearson_by_hand)
    capsys.readouterr()
    assert result._ipython_display_() is None
    assert len(repr(result)) <= 1


def test_determinism(q, capsys):
    q.check(lambda x, y: 0.0)
    first = capsys.readouterr().out
    q.check(lambda x, y: 0.0)
    assert capsys.readouterr().out == first


# --- bad questions ------------------------------------------------------------------------


def test_bad_questions():
    with pytest.raises(ValueError, match="needs a reference function or an expected value"):
        Question("x")
    with pytest.raises(ValueError, match="not both"):
        Question("x", reference=abs, cases=[1], expected=1)
    with pytest.raises(ValueError, match="needs cases"):
        Question("x", reference=abs)
    with pytest.raises(TypeError, match="reference must be callable, got int"):
        Question("x", reference=3, cases=[1])
    with pytest.raises(TypeError, match="cases must be a list of argument tuples"):
        Question("x", reference=abs, cases=5)
    with pytest.raises(ValueError, match="title must be a non-empty str"):
        Question("", expected=1)
    with pytest.raises(ValueError, match=r"Question 'x': rtol must be >= 0.0, got -1"):
        Question("x", expected=1, rtol=-1)
    with pytest.raises(TypeError, match="atol must be a number, got str"):
        Question("x", expected=1, atol="0")
    with pytest.raises(TypeError, match="seed must be a non-negative int, got None"):
        Question("x", expected=1, seed=None)
