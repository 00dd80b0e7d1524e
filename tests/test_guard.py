"""The guard behind "from scratch": what it refuses to an answer, and what it leaves alone.

The tricks an answer may try are in ``tests/test_assignments.py`` (held back from the book);
these tests pin the other side: what is *not* the answer's doing — a library's own imports
and internals, the guarded block's own code, the standard library's use of system modules —
is never counted against it, and the clock stops a looping answer."""

from __future__ import annotations

import collections
import subprocess
import sys
import time

import pytest

import markeval
from markeval.exercises._guard import SYSTEM, AnswerTimeout, ForbiddenModule, guard


def _run(function, allowed=("numpy",), **kw):
    error = None
    with guard(globals(), allowed, **kw) as record:
        try:
            function()
        except (Exception, AnswerTimeout) as err:  # noqa: BLE001 - what the answer raised
            error = err
    return record, error


def test_the_standard_library_and_its_use_of_system_modules_are_allowed():
    def answer():
        import fractions  # noqa: F401 - an import of the standard library
        point = collections.namedtuple("Point", "x y")  # calls sys._getframe inside
        return point(1, 2), sum(range(3))
    record, error = _run(answer)
    assert record.forbidden is None and error is None


def test_a_system_module_called_by_the_answer_is_refused():
    import os

    record, error = _run(lambda: os.getcwd())
    assert record.forbidden == "posix" and isinstance(error, ForbiddenModule)
    assert {"os", "sys", "subprocess", "gc", "inspect"} <= SYSTEM


def test_the_guarded_block_s_own_calls_are_not_the_answer_s():
    notebook = {}  # the answer's namespace, as a notebook's
    exec("import markeval\ndef answer(words):\n    return markeval.text.ngrams(words, 1)\n",
         notebook)
    with guard(notebook, ("numpy",)) as record:
        markeval.text.ngrams(["a", "b"], 1)  # the grader's own code, around the answer
    assert record.forbidden is None
    with guard(notebook, ("numpy",)) as record:
        with pytest.raises(ForbiddenModule):
            notebook["answer"](["a", "b"])
    assert record.forbidden == "markeval.text"


def test_a_library_passed_as_a_callback_is_still_the_answer_s():
    import numpy as np

    def answer():
        return np.vectorize(lambda w: markeval.text.ngrams([w], 1), otypes=[object])(
            np.array(["a"]))
    assert _run(answer)[0].forbidden == "markeval.text"


def test_an_allowed_package_s_own_imports_are_its_business():
    """SciPy imported for the first time inside the guard imports modules of its own (and
    NumPy's f2py imports charset_normalizer): a fresh interpreter shows it."""
    code = ("from markeval.exercises._guard import guard\n"
            "def answer():\n"
            "    from scipy.optimize import linprog\n"
            "    return linprog([1.0, 1.0], bounds=(0, None)).status\n"
            "with guard(globals(), ('numpy', 'scipy')) as record:\n"
            "    status = answer()\n"
            "print(status, record.forbidden)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.split() == ["0", "None"], done.stdout + done.stderr


def test_printing_is_the_answer_s_own_and_is_kept():
    record, _ = _run(lambda: print("working"))
    assert record.stdout == "working\n" and record.forbidden is None


def test_a_looping_answer_is_stopped_at_its_time_limit():
    def answer():
        while True:
            pass
    start = time.monotonic()
    record, error = _run(answer, time_limit=0.5)
    assert record.timed_out and isinstance(error, AnswerTimeout)
    assert time.monotonic() - start < 5


def test_bad_allowed_packages_are_refused_by_name():
    with pytest.raises(ModuleNotFoundError, match="no_such_package"):
        with guard(globals(), ("no_such_package",)):
            pass
