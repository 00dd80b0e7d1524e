"""Which library functions an answer calls: the check behind "from scratch" questions.

A question that asks the reader to implement BLEU must not accept an answer that calls
``markeval.bleu``. :func:`forbidden_use` reads the answer's bytecode (its code object, the code
of the functions and lambdas nested in it, and of the reader's own helpers it calls) and
follows every name to the object it denotes: a global (``bleu``, imported under any alias), an
attribute of a module (``me.bleu`` after ``import markeval as me``, ``markeval.lexical.bleu.bleu``),
an import inside the function, a closure cell, a default argument, a ``functools.partial`` or
a ``functools.wraps`` wrapper. A name counts when it denotes the same object as a forbidden one,
so aliases and re-exports (``markeval.bleu`` is ``markeval.lexical.bleu.bleu``) are one function.

What it cannot see, by design: library code is not searched (``markeval.mark_evaluate`` calls
``me_petersen`` internally, and a question may allow the first), nor code in other modules the
reader imports, nor a function looked up at run time by a string (``getattr(m, "bl" + "eu")``).
"""

from __future__ import annotations

import builtins
import dis
import functools
import importlib
import types

__all__ = ["forbidden_use", "resolve"]

_LOADS_LOCAL = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_BORROW"}
_STORES = {"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"}


def resolve(name: str):
    """The object called ``name``: ``"markeval.bleu"``, ``"markeval.text.ngrams"``.

    Raises
    ------
    ValueError
        When no module prefix of ``name`` imports or an attribute is missing, naming ``name``.

    Examples
    --------
    >>> resolve("markeval.bleu") is resolve("markeval.lexical.bleu.bleu")
    True
    """
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        return obj
    raise ValueError(f"forbidden name {name!r} does not name an importable object")


def _unwrap(obj):
    """The functions behind ``obj``: itself, a partial's function, a wrapper's wrapped one."""
    out, seen = [], set()
    while obj is not None and id(obj) not in seen:
        seen.add(id(obj))
        out.append(obj)
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif isinstance(obj, types.MethodType):
            obj = obj.__func__
        else:
            obj = getattr(obj, "__wrapped__", None) if callable(obj) else None
    return out


def _code_objects(code: types.CodeType):
    """``code`` and every code object nested in it (functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _referenced(function: types.FunctionType):
    """Every object the code of ``function`` loads by name, attribute chain or import."""
    namespace = function.__globals__
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
    found = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
    for cell in cells.values():
        try:
            found.append(cell.cell_contents)
        except ValueError:  # an empty cell: the variable is not bound yet
            pass
    for code in _code_objects(function.__code__):
        local: dict = {}
        current = module = None
        alias_import = False
        previous = None
        for ins in dis.get_instructions(code):
            op, arg = ins.opname, ins.argval
            if op in ("LOAD_GLOBAL", "LOAD_NAME"):
                current = namespace.get(arg, getattr(builtins, arg, None))
            elif op == "LOAD_DEREF":
                cell = cells.get(arg)
                current = local.get(arg)
                if current is None and cell is not None:
                    try:
                        current = cell.cell_contents
                    except ValueError:
                        current = None
            elif op in _LOADS_LOCAL:
                current = local.get(arg) if isinstance(arg, str) else None
            elif op in ("LOAD_ATTR", "LOAD_METHOD"):
                # Attributes of modules only: reading an instance's attribute could run code.
                current = (getattr(current, arg, None) if isinstance(current, types.ModuleType)
                           else None)
            elif op == "IMPORT_NAME":
                fromlist = previous.argval if previous and previous.opname == "LOAD_CONST" else None
                try:
                    module = importlib.import_module(arg)
                except ImportError:
                    module = None
                alias_import = not fromlist
                # ``import a.b`` binds the package ``a``; ``import a.b as c`` (IMPORT_FROM
                # follows) and ``from a.b import x`` use ``a.b`` itself.
                current = importlib.import_module(arg.split(".")[0]) if module and not fromlist \
                    else module
            elif op == "IMPORT_FROM":
                current = module if alias_import else getattr(module, arg, None)
            elif op in _STORES:
                local[arg] = current
                current = None
            else:
                previous = ins
                continue
            if current is not None:
                found.append(current)
            previous = ins
    return found


def forbidden_use(answer, names) -> str | None:
    """The first of ``names`` that ``answer`` uses, or None.

    Parameters
    ----------
    answer : callable
        The reader's function (a lambda, a wrapper, a ``functools.partial`` …).
    names : sequence of str
        Qualified names of the functions the answer must not use (``"markeval.bleu"``);
        the name reported is the one listed, however the answer reached the function.

    Returns
    -------
    str or None

    Examples
    --------
    >>> import markeval as me
    >>> forbidden_use(lambda h, r: me.bleu(h, r).score, ["markeval.bleu"])
    'markeval.bleu'
    >>> def helper(h, r):
    ...     from markeval.lexical.bleu import bleu as b
    ...     return b(h, r).score
    >>> forbidden_use(lambda h, r: helper(h, r), ["markeval.bleu"])
    'markeval.bleu'
    >>> forbidden_use(lambda h, r: len(h), ["markeval.bleu"]) is None
    True
    """
    targets: dict[int, str] = {}
    keep = []  # the objects themselves, so that their ids stay theirs
    for name in names:
        obj = resolve(name)
        keep.append(obj)
        targets.setdefault(id(obj), name)
    if not targets:
        return None
    # The module the answer was written in (a notebook's ``__main__``), partials unwrapped.
    home = next((f.__globals__ for f in _unwrap(answer) if isinstance(f, types.FunctionType)),
                None)
    seen: set[int] = set()
    stack = [answer]
    while stack:
        for obj in _unwrap(stack.pop()):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if id(obj) in targets:
                return targets[id(obj)]
            # Search the reader's own code only: the answer, and functions defined beside it.
            if isinstance(obj, types.FunctionType) and (obj.__globals__ is home
                                                        or obj.__module__ == "__main__"):
                stack.extend(_referenced(obj))
    return None
