"""Starter code: what an answer cell becomes when its model solution is taken out.

An instructor's answer cell holds the model solution between the nbgrader markers
``### BEGIN SOLUTION`` and ``### END SOLUTION``. The student's copy (the student notebooks of
``tools.student_edition`` and the assignments that nbgrader releases from ``make course``)
gets starter code in its place, chosen so that *Run all* reaches the score:

* inside a function, ``raise NotImplementedError()``: the checker reports the function as
  "not answered yet" and the cell itself runs;
* at the top level of a cell (a value question, or code that prints for a written one),
  the comment :data:`TOP_LEVEL_STUB`: the cell runs, and the value it should set keeps the
  placeholder written before the markers (``my_table = None``), which the checker reports as
  "not answered yet". A ``raise`` there would stop *Run all* before the score.
"""

from __future__ import annotations

__all__ = ["BEGIN", "END", "FUNCTION_STUB", "TOP_LEVEL_STUB", "strip_solution_code"]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
#: Starter code of a solution region inside a function (what nbgrader writes by default).
FUNCTION_STUB = "raise NotImplementedError()"
#: Starter code of a solution region at the top level of a cell: nothing that raises.
TOP_LEVEL_STUB = "# YOUR CODE HERE"


def strip_solution_code(source: str) -> tuple[str, int]:
    """Replace every ``### BEGIN SOLUTION`` … ``### END SOLUTION`` region of a code cell.

    The region, markers included, becomes :data:`FUNCTION_STUB` at the indentation of the
    ``BEGIN`` marker, or :data:`TOP_LEVEL_STUB` when the marker is at the top level.

    Returns
    -------
    (source, count) : tuple of str and int
        The new code and the number of regions replaced.

    Raises
    ------
    ValueError
        For an ``END`` without ``BEGIN``, a nested ``BEGIN`` or a ``BEGIN`` without ``END``,
        naming the line.

    Examples
    --------
    >>> code = "def f(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION"
    >>> print(strip_solution_code(code)[0])
    def f(x):
        raise NotImplementedError()
    >>> value = "answer = None\\n### BEGIN SOLUTION\\nanswer = 42\\n### END SOLUTION"
    >>> print(strip_solution_code(value)[0])
    answer = None
    # YOUR CODE HERE
    """
    lines = source.split("\n")
    out, count, i = [], 0, 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped == END:
            raise ValueError(f"{END!r} without {BEGIN!r} at line {i + 1}")
        if stripped != BEGIN:
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        j = i + 1
        while j < len(lines) and lines[j].strip() != END:
            if lines[j].strip() == BEGIN:
                raise ValueError(f"nested {BEGIN!r} at line {j + 1}")
            j += 1
        if j == len(lines):
            raise ValueError(f"{BEGIN!r} at line {i + 1} has no {END!r}")
        out.append(indent + (FUNCTION_STUB if indent else TOP_LEVEL_STUB))
        count += 1
        i = j + 1
    return "\n".join(out), count
