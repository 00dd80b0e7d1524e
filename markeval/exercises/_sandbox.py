"""The batch grader's sandbox: a process of its own that runs one submission's answers.

``python -m markeval.exercises._sandbox`` reads one pickle from its standard input, written by
:mod:`markeval.exercises.grade` (never by a notebook)::

    {"number": N, "answers": {name: cloudpickle bytes}, "jobs": [(key, cases, time_limit)]}

and, for each job in order, runs the answer the assignment names for that question on the
hidden cases the grader drew (:meth:`~markeval.exercises.Question.run`: the module rule, the time limit) and
writes one line: :data:`MARK` and the base64 of a pickle of ``{"key", "outputs", "forbidden",
"timed_out"}``. A value question's "run" is the value itself. What an answer raised travels as
``(type name, message)``; what it returned travels as it is, and the grader reads it back with
:func:`load_outputs`, which accepts plain data only (numbers, strings, containers, NumPy
arrays), so that nothing from the submission runs in the grader's process.

The grader compares the outputs with the references it computed itself, and stops this process
when a job overruns its limit (then starts another for the jobs left).
"""

from __future__ import annotations

import base64
import io
import pickle
import sys

__all__ = ["MARK", "load_outputs", "main"]

MARK = "<<markeval-run>>"
_PLAIN_BUILTINS = {"set", "frozenset", "complex", "slice", "range", "bytearray", "int", "float",
                   "str", "list", "dict", "tuple", "bool", "bytes"}
_PLAIN_COLLECTIONS = {"Counter", "OrderedDict", "defaultdict"}
_PLAIN_NUMPY = {"_frombuffer", "dtype", "scalar", "_reconstruct", "ndarray"}


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler that builds plain data only: no class or function of anyone else's."""

    def find_class(self, module, name):
        if ((module == "builtins" and name in _PLAIN_BUILTINS)
                or (module == "collections" and name in _PLAIN_COLLECTIONS)
                or (module.partition(".")[0] == "numpy" and name in _PLAIN_NUMPY)):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"returned an object of {module}.{name}; return numbers, "
                                     "strings, lists, tuples, dicts, sets or NumPy arrays")


def load_outputs(line: str) -> dict:
    """A result line of this process, read as plain data (see the module notes)."""
    return _PlainUnpickler(io.BytesIO(base64.b64decode(line))).load()


def _error(err: BaseException) -> tuple[str, str]:
    try:
        return type(err).__name__, str(err)
    except Exception:  # noqa: BLE001 - an exception whose str() fails still has a name
        return type(err).__name__, ""


def _run(task, answer, cases, time_limit: float) -> dict:
    if task.kind == "value":
        return {"outputs": [(answer, None)], "forbidden": None, "timed_out": False}
    if not callable(answer):
        return {"outputs": [(None, ("TypeError", f"{task.answer} is not a function"))],
                "forbidden": None, "timed_out": False}
    run = task.question.run(answer, cases, time_limit=time_limit)
    return {"outputs": [(got, None if err is None else _error(err)) for got, err in run.outputs],
            "forbidden": run.forbidden, "timed_out": run.timed_out}


def main() -> int:
    from markeval.exercises.assignments import assignment

    request = pickle.load(sys.stdin.buffer)
    tasks = {t.key: t for t in assignment(request["number"]).tasks}
    out = sys.stdout
    for key, cases, time_limit in request["jobs"]:
        task = tasks[key]
        blob = request["answers"].get(task.answer)
        try:
            answer = pickle.loads(blob)
            result = _run(task, answer, cases, time_limit)
        except BaseException as err:  # noqa: BLE001 - the submission's failure, reported
            result = {"outputs": [(None, _error(err))], "forbidden": None, "timed_out": False}
        result["key"] = key
        try:
            payload = pickle.dumps(result, protocol=4)
        except Exception as err:  # noqa: BLE001 - an output that cannot travel fails its case
            result["outputs"] = [(None, ("TypeError", f"returned something that cannot be "
                                                      f"sent to the grader: {err}"))]
            payload = pickle.dumps(result, protocol=4)
        out.write(MARK + base64.b64encode(payload).decode("ascii") + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
