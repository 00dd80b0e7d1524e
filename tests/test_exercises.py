"""The exercise checker: verdict lines, no leaked answers, tolerance, hints and solutions."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from markeval.exercises import CheckResult, FailingCase, Question, close
from markeval.exercises._compare import first_difference, path_text
from markeval.exercises._describe import WIDTH, describe as _describe
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


def test_right_answer_passes(q, capsys):
    result = q.check(_pearson_by_hand)
    assert capsys.readouterr().out == "✓ Pearson r: passed 4 cases\n"
    assert result and isinstance(result, CheckResult)
    assert (result.passed, result.n_cases, result.failed_case) == (True, 4, None)


def _lines(out):
    lines = out.splitlines()
    assert all(len(line) <= WIDTH for line in lines), [line for line in lines if len(line) > WIDTH]
    return lines


@pytest.mark.parametrize("wrong, case", [
    (lambda x, y: _pearson_by_hand(x, y) ** 2, 1),            # r², wrong from the first case
    (lambda x, y: 0.5 if len(x) == 8 else _pearson_by_hand(x, y), 3),  # wrong on one case
])
def test_wrong_answers_show_the_case_what_came_back_and_what_was_expected(q, capsys, wrong, case):
    result = q.check(wrong)
    lines = _lines(capsys.readouterr().out)
    assert not result and result.attempted and result.failed_case == case
    x, y = q._cases()[case - 1]
    want = q.reference(x, y)
    got = wrong(x, y)
    assert lines[0] == f"✗ Pearson r: case {case} of 4 failed"
    assert lines[1].startswith("  arg 1 (x): ") and lines[2].startswith("  arg 2 (y): ")
    for k, arg in enumerate((x, y), start=1):  # in full when it fits, else summarised
        label = f"  arg {k} ({'xy'[k - 1]}): "
        assert (lines[k] == f"{label}{arg!r}" if len(x) == 3 else
                lines[k].startswith(f"{label}list of {len(arg)} floats: [{arg[0]:.4g}, {arg[1]:.4g}, "))
    assert lines[3] == f"  returned: {got!r}"
    assert lines[4] == f"  expected: {want!r}"           # function questions show the reference
    assert lines[-1] == "  (stuck? call .hint() on this question; .failing_case() returns this case)"
    assert len(lines) == 6
    assert result.message == "\n".join(lines)


def test_failing_case_is_the_case_itself(q, capsys):
    assert q.failing_case() is None                       # nothing checked yet
    result = q.check(lambda x, y: 0.5 if len(x) == 8 else _pearson_by_hand(x, y))
    capsys.readouterr()
    case = q.failing_case()
    assert isinstance(case, FailingCase) and result.case is case
    assert case.number == 3 and case.args == q._cases()[2] and case.error is None
    assert case.got == 0.5 and case.expected == q.reference(*case.args)
    case.args[0].clear()                                  # a copy: changing it changes nothing
    assert q._cases()[2][0] and q.check(_pearson_by_hand)
    capsys.readouterr()
    assert q.failing_case() is None                       # the last check passed
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.number = 1


def test_failing_case_keeps_the_input_the_answer_changed(capsys):
    q = Question("Sum", reference=sum, cases=[([1, 2, 3],)])

    def clears_and_counts(xs):
        xs.clear()
        return 0

    q.check(clears_and_counts)
    assert "input (xs): [1, 2, 3]" in capsys.readouterr().out
    assert q.failing_case().args == ([1, 2, 3],)


def test_starter_that_raises_is_not_answered_yet(capsys):
    calls = []

    def reference(x, y):
        calls.append(1)
        return _pearson_reference(x, y)

    q = Question("Pearson r", reference=reference, cases=_pearson_cases, hints=["Centre."])

    def starter(x, y):
        raise NotImplementedError("replace this line with your code")

    result = q.check(starter)
    out = capsys.readouterr().out
    assert out == "○ Pearson r: not answered yet — replace the NotImplementedError with your code\n"
    assert not result and result.attempted is False and repr(result) == "○"
    assert result.failed_case is None and result.case is None and q.failing_case() is None
    assert calls == []                                    # the reference is not even run
    assert not q.check(None) and capsys.readouterr().out.startswith("○ Pearson r: not answered yet")


def test_not_implemented_after_a_passing_case_is_a_failure(capsys):
    q = Question("Half", reference=lambda x: x / 2, cases=[2.0, 3.0])

    def partial(x):
        if x == 3.0:
            raise NotImplementedError("odd numbers")
        return x / 2

    result = q.check(partial)
    lines = _lines(capsys.readouterr().out)
    assert not result and result.attempted and result.failed_case == 2
    assert lines[0] == "✗ Half: case 2 of 2 failed"
    assert lines[2] == "  raised:   NotImplementedError: odd numbers"
    assert isinstance(q.failing_case().error, NotImplementedError) and q.failing_case().got is None


def test_the_not_answered_line_fits_with_a_long_title(capsys):
    q = Question("A very long exercise title that goes on and on about what it wants " * 2,
                 reference=abs, cases=[1], hints=["h"])
    q.check(lambda x: (_ for _ in ()).throw(NotImplementedError))
    (line,) = _lines(capsys.readouterr().out)
    assert line.startswith("○ A very long") and line.endswith("…: not answered yet — write your code")
    q.check(lambda x: -x)
    assert _lines(capsys.readouterr().out)[0].endswith("…: case 1 of 1 failed")
    q.title = "Q3 Petersen counts M, C, R [15 pts]"       # the title whole, the advice shorter
    q.check(lambda x: (_ for _ in ()).throw(NotImplementedError))
    assert capsys.readouterr().out == ("○ Q3 Petersen counts M, C, R [15 pts]: not answered yet — "
                                       "write your code\n")


def test_error_without_message_and_other_exceptions(capsys):
    q = Question("Inverse", reference=lambda x: 1 / x, cases=[2.0, 0.5])

    def bad(x):
        raise KeyError

    assert not q.check(bad)
    out = capsys.readouterr().out
    assert "\n  raised:   KeyError\n  expected: 0.5\n  (no hints; call .solution() on this question" in out
    assert not q.check(lambda x: 1 / (x - 2))
    assert "  raised:   ZeroDivisionError: float division by zero\n" in capsys.readouterr().out


def test_long_inputs_are_summarised_by_shape_dtype_and_first_values(capsys):
    q = Question("Sum", reference=lambda a: float(np.sum(a)),
                 cases=lambda rng: [(rng.normal(size=(50, 50)),)])
    q.check(lambda a: 0.0)
    lines = _lines(capsys.readouterr().out)
    assert re.fullmatch(r"  input \(a\): array shape \(50, 50\) float64: \[(-?\d\.\d+, )+…\]",
                        lines[1]), lines[1]
    assert lines[2] == "  returned: 0.0"


def test_several_arguments_one_per_line_long_lists_and_strings_summarised(capsys):
    q = Question("Count", reference=lambda text, words, k: text.count(words[0]) * k,
                 cases=[("the cat sat on the mat " * 30, [f"w{i}" for i in range(200)], 2)])

    def count(text, words, k):
        return -1

    q.check(count)
    lines = _lines(capsys.readouterr().out)
    assert lines[1].startswith("  arg 1 (text): string of 690 chars: 'the cat sat on the mat")
    assert lines[1].endswith("…")
    assert lines[2].startswith("  arg 2 (words): list of 200 strings: ['w0', 'w1', 'w2', ")
    assert lines[2].endswith(", …]")
    assert lines[3] == "  arg 3 (k): 2"
    q.check(lambda *args: -1)                          # no parameter names to show
    assert _lines(capsys.readouterr().out)[1].startswith("  arg 1: string of 690 chars")


def test_the_difference_is_named_where_it_helps(capsys):
    q = Question("Scores", reference=lambda xs: {"p": [x / 2 for x in xs], "n": len(xs)},
                 cases=[([float(i) for i in range(1, 31)],)])
    q.check(lambda xs: {"p": [x / 2 for x in xs[:-1]] + [1.25], "n": len(xs)})
    assert "  difference: ['p'][29] is 1.25, expected 15.0\n" in capsys.readouterr().out
    q.check(lambda xs: {"p": [x / 2 for x in xs]})
    assert "  difference: missing keys ['n']\n" in capsys.readouterr().out
    a = Question("Arrays", reference=lambda m: m * 2, cases=[(np.arange(6.0).reshape(2, 3),)])
    a.check(lambda m: m * 2 + (m > 3))
    assert "  difference: [1, 1] is 9.0, expected 8.0 (2 of 6 values differ)\n" in capsys.readouterr().out
    a.check(lambda m: (m * 2).T)
    assert "  difference: shape (3, 2), expected (2, 3)\n" in capsys.readouterr().out
    a.check(lambda m: (m * 2).tolist()[0])
    assert "  difference: shape (3,), expected (2, 3)\n" in capsys.readouterr().out
    t = Question("Pair", reference=lambda x: (x, [x] * 40), cases=[1])
    t.check(lambda x: x)
    assert "  difference: an int, expected a tuple\n" in capsys.readouterr().out
    t.check(lambda x: (x, [x] * 40, x))
    assert "  difference: 3 items, expected 2\n" in capsys.readouterr().out
    t.check(lambda x: (x, [x] * 39 + [2]))
    assert "  difference: [1][39] is 2, expected 1\n" in capsys.readouterr().out
    short = Question("Short pair", reference=lambda x: (x, x), cases=[1])
    short.check(lambda x: (x, 2))                      # both shown in full: no difference line
    assert "difference" not in capsys.readouterr().out


def test_expected_output_can_be_hidden(capsys):
    q = Question("Hidden", reference=lambda x: x + 1, cases=[41], show_expected=False)
    q.check(lambda x: x)
    out = capsys.readouterr().out
    assert "expected" not in out and "42" not in out and q.failing_case().expected is None
    z = Question("No arguments", reference=lambda: 42, cases=[()])  # its output is the answer
    z.check(lambda: 41)
    out = capsys.readouterr().out
    assert "  input: none (the function takes no arguments)" in out
    assert "expected" not in out and "42" not in out and z.failing_case().expected is None


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
    assert not result and result.attempted
    assert out == ("✗ Kendall tau by hand: your answer 0.67 is not correct\n"
                   "  (stuck? call .hint() on this question)\n")
    assert "0.666" not in out
    case = q.failing_case()
    assert (case.number, case.args, case.got, case.expected) == (1, (), 0.67, None)
    result = q.check(None)
    assert capsys.readouterr().out == ("○ Kendall tau by hand: not answered yet — replace None "
                                       "with your answer (.hint() helps)\n")
    assert not result and not result.attempted and q.failing_case() is None


def test_value_question_says_what_is_wrong_without_the_answer(capsys):
    q = Question("Precisions", expected=(5 / 9, 4 / 8), hints=["h"])
    q.check((5 / 9, 0.6))
    out = capsys.readouterr().out
    assert "  your answer[1] is wrong (the parts before it are right)\n" in out
    q.check((0.5, 0.5))
    assert "  your answer[0] is wrong\n" in capsys.readouterr().out
    q.check((0.5, 0.5, 0.5))
    assert "  your answer has 3 items; it should have 2\n" in capsys.readouterr().out
    q.check(0.5)
    assert "  your answer is a float; it should be a tuple\n" in capsys.readouterr().out
    q.check(np.arange(300.0))
    out = capsys.readouterr().out
    lines = _lines(out)
    assert lines[0] == "✗ Precisions: your answer is not correct"
    assert lines[1].startswith("  your answer: array shape (300,) float64: [0, 1, 2, ")
    assert "0.555" not in out and "0.5\n" not in out


def test_lazy_expected_value_is_not_computed_for_a_starter(capsys):
    calls = []
    q = Question("Lazy", expected=lambda: calls.append(1) or 1.0)
    q.check(None)
    assert calls == [] and capsys.readouterr().out.startswith("○ Lazy: not answered yet")


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
    assert capsys.readouterr().out == ("✗ Value: expected a value but got a function\n"
                                       "  (call your function and pass its result to .check())\n")
    lazy = Question("Lazy value", expected=lambda: 3)
    assert not lazy.check(lambda: 3)
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


@pytest.mark.parametrize("value, text", [
    (0.1 + 0.2, "0.30000000000000004"),                   # exact when it fits
    (np.float64(0.5), "0.5"),
    ([1, 2.5, "a"], "[1, 2.5, 'a']"),
    ((1,), "(1,)"),
    ({"a": (1, 2)}, "{'a': (1, 2)}"),
    (np.array([1.0, 2.5]), "array shape (2,) float64: [1, 2.5]"),
    (np.array(3), "array int64: 3"),
    (list(range(100)), "list of 100 ints: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, …]"),
    ([0.123456] * 20, "list of 20 floats: [0.1235, 0.1235, 0.1235, 0.1235, 0.1235, 0.1235, 0.1235, …]"),
    ("x" * 90, "string of 90 chars: '" + "x" * 58 + "…"),
    (["x" * 90] * 3, "list of 3 strings: ['" + "x" * 26 + "…', '" + "x" * 22 + "…', …]"),
    ({f"k{i}": i for i in range(30)},
     "dict of 30 items: {'k0': 0, 'k1': 1, 'k2': 2, 'k3': 3, 'k4': 4, 'k5': 5, …}"),
    (Score(0.5, 3), "Score(value=0.5, n=3)"),
])
def test_describe(value, text):
    assert _describe(value, 80) == text
    assert len(_describe(value, 30)) <= 30


def test_first_difference():
    d = first_difference([1.0, {"a": np.array([1.0, 2.0, 3.0])}],
                         [1.0, {"a": np.array([1.0, 2.5, 3.5])}], 1e-9, 0.0)
    assert (path_text(d.path), d.kind, d.got, d.want) == ("[1]['a'][1]", "value", 2.0, 2.5)
    assert (d.n_differ, d.n_values) == (2, 3)
    assert first_difference(Score(0.5, 3), Score(0.5, 4), 1e-9, 0.0).path == ((".", "n"),)
    assert first_difference({"a": 1}, {"b": 1}, 1e-9, 0.0).kind == "keys"
    assert first_difference("abc", 3, 1e-9, 0.0).kind == "type"
    assert first_difference([1.0], (1.0 + 1e-12,), 1e-9, 0.0) is None


def test_failing_case_repr_is_short(capsys):
    q = Question("Big", reference=lambda a, b: a @ b,
                 cases=lambda rng: [(rng.normal(size=(30, 30)), rng.normal(size=(30, 30)))])
    q.check(lambda a, b: a * b)
    capsys.readouterr()
    text = repr(q.failing_case())
    assert text.startswith("FailingCase(\n    number=1,\n    args=tuple of 2 arrays: (array shape")
    assert all(len(line) <= WIDTH for line in text.splitlines())


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
