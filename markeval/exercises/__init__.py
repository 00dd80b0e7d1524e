"""Auto-checked exercises for the book: ``Question(...).check(answer)``, ``hint()``, ``solution()``.

A chapter defines a question next to the exercise text; the reader writes a
function (or computes a value) and calls ``q.check(...)``, which prints a short verdict:
``✓ <title>: passed N cases``; or ``✗`` and the first failing case — its arguments one per
line (arrays summarised by shape, dtype and first values), what the answer returned or
raised and what the reference returns on that input (a value question never shows its
answer); or, for an untouched starter, one neutral ``○ <title>: not answered yet`` line.
``q.failing_case()`` returns the failing case itself (a :class:`FailingCase`).
"""

from markeval.exercises._compare import close
from markeval.exercises._question import CheckResult, FailingCase, Question

__all__ = ["CheckResult", "FailingCase", "Question", "close"]
