"""The book's exercise checkers, one module per chapter, named after the chapter's subject.

Each module exposes its chapter's :class:`~markeval.exercises.Question` objects as module-level
names (listed in the module's ``__all__``). A chapter imports its module and checks an answer::

    from markeval.exercises.checkers import bleu_gleu as ex
    ex.modified_precision.check(my_modified_precision)   # ✓ Modified precision: passed 25 cases
    ex.modified_precision.hint()
    ex.modified_precision.solution()

Importing a module is cheap: no model is loaded and no data set is read until a check runs
(references, cases and expected values that need them load lazily).

``tests/test_checkers.py`` holds, for every question here, a right answer that passes and at
least two plausible wrong answers that fail; a new question without them fails the suite.
"""

import importlib
import pkgutil

__all__ = ["modules"]


def modules() -> list[str]:
    """Names of the checker modules, e.g. ``["bertscore", "bleu_gleu", ...]``."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def __getattr__(name):  # ``checkers.bleu_gleu`` works after ``import ...checkers`` alone
    if name in modules():
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
