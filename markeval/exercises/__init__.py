"""Auto-checked exercises for the book: ``Question(...).check(answer)``, ``hint()``, ``solution()``.

A chapter defines a question next to the exercise text; the reader writes a
function (or computes a value) and calls ``q.check(...)``, which prints one line:
``✓ <title>: passed N cases``, or the first failing case's input and what the
answer returned (never the correct output).
"""

from markeval.exercises._compare import close
from markeval.exercises._question import CheckResult, Question

__all__ = ["CheckResult", "Question", "close"]
