"""Verdict lines of the exercise checkers: any value described on one short line.

Values are shown in full when they fit and summarised otherwise: arrays by shape, dtype and
their first values; long lists, dicts and strings by length and their first items. Used by
:mod:`markeval.exercises._question`.
"""

from __future__ import annotations

import dataclasses
import inspect
import numbers
from collections.abc import Mapping

import numpy as np

from markeval.exercises._compare import first_difference, path_text

WIDTH = 88  #: no line of a verdict is longer: 90 characters fit the page on a 1280-px screen

# --- describing values in one line ------------------------------------------------------------


def cut(text: str, width: int) -> str:
    text = str(text)
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def one_line(text: str) -> str:
    return " ".join(str(text).split())  # reprs and error messages may span several lines


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _kind(value) -> str:
    """A short name for the kind of ``value``: float, int, string, list, array, ..."""
    value = _plain(value)
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    if isinstance(value, numbers.Number):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, Mapping):
        return "dict"
    if value is None:
        return "None"
    return type(value).__name__


def _a(kind: str) -> str:
    """``kind`` with its article: "a float", "an int", "None"."""
    if kind == "None":
        return kind
    return ("an " if kind[:1] in "aeiou" else "a ") + kind


def _kind_of_items(items) -> str:
    kinds = {_kind(x) for x in items}
    if len(kinds) == 1:
        return kinds.pop()
    return "number" if kinds <= {"int", "float", "number"} else "item"


def count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _number(value, compact: bool) -> str:
    value = _plain(value)
    if compact and isinstance(value, float) and value == value and abs(value) != float("inf"):
        return f"{value:.4g}"
    return repr(value)


def _is_array(value) -> bool:
    if isinstance(value, np.ndarray):
        return True
    # torch tensors, pandas Series, ...: a shape, a dtype and a way to become an array
    return (hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type)
            and (hasattr(value, "__array__") or hasattr(value, "tolist")))


def _items(value):
    """(opening, closing, items) of a container; dict items are (key, value) pairs."""
    if isinstance(value, Mapping):
        name = type(value).__name__
        opening = "{" if type(value) is dict else f"{name}({{"
        return opening, "}" if type(value) is dict else "})", list(value.items())
    if isinstance(value, (set, frozenset)):
        try:
            items = sorted(value)
        except TypeError:
            items = list(value)
        return ("{", "}", items) if items else (f"{type(value).__name__}(", ")", [])
    if isinstance(value, tuple):
        return "(", ",)" if len(value) == 1 else ")", list(value)
    return "[", "]", list(value)


def _is_container(value) -> bool:
    return isinstance(value, (list, tuple, set, frozenset, Mapping))


def render(value, budget: int):
    """Exact one-line text of ``value`` in at most ``budget`` characters, or None."""
    value = _plain(value)
    if budget <= 0:
        return None
    if value is None or isinstance(value, (bool, numbers.Number, str, bytes)):
        text = repr(value)
    elif _is_array(value):
        return None  # arrays are always described by shape and dtype
    elif _is_container(value):
        opening, closing, items = _items(value)
        parts, used = [], len(opening) + len(closing)
        for item in items:
            if isinstance(value, Mapping):
                key = render(item[0], budget - used)
                val = None if key is None else render(item[1], budget - used - len(key) - 2)
                part = None if val is None else f"{key}: {val}"
            else:
                part = render(item, budget - used)
            if part is None:
                return None
            used += len(part) + (2 if parts else 0)
            if used > budget:
                return None
            parts.append(part)
        text = opening + ", ".join(parts) + closing
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts, used = [], len(type(value).__name__) + 2
        for f in dataclasses.fields(value):
            part = render(getattr(value, f.name), budget - used - len(f.name) - 1)
            if part is None:
                return None
            parts.append(f"{f.name}={part}")
            used += len(parts[-1]) + 2
        text = f"{type(value).__name__}({', '.join(parts)})"
    else:
        text = repr(value)
        if "\n" in text:
            return None
    return text if len(text) <= budget else None


def _join_within(head: str, opening: str, closing: str, parts_iter, n: int, width: int) -> str:
    """``head + opening + parts + closing`` with as many parts as fit, then ``…``."""
    room = width - len(head) - len(opening) - len(closing)
    parts, used = [], 0
    for i, describe in enumerate(parts_iter):
        more = i < n - 1
        avail = room - used - (2 if parts else 0) - (3 if more else 0)
        if avail < 6:
            break
        cap = avail if n == 1 else min(avail, max(24, room // 2))
        part = describe(cap)
        if len(part) > avail or (parts and part.endswith("…")):
            break  # after the first item, only items shown whole (or summarised) are worth it
        parts.append(part)
        used += len(part) + (2 if len(parts) > 1 else 0)
    if len(parts) < n:
        parts.append("…")
    return head + opening + ", ".join(parts) + closing


def _describe_array(value, width: int) -> str:
    name = "array" if isinstance(value, np.ndarray) else type(value).__name__.lower()
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - e.g. a tensor that needs .detach() first
        return cut(one_line(repr(value)), width)
    dtype = str(getattr(value, "dtype", arr.dtype))
    if arr.ndim == 0:
        return cut(f"{name} {dtype}: {_number(arr.item(), False)}", width)
    head = f"{name} shape {tuple(arr.shape)} {dtype}: "
    flat = arr.ravel()[:64].tolist()
    parts = ((lambda cap, x=x: describe(x, cap, compact=True)) for x in flat)
    return cut(_join_within(head, "[", "]", parts, arr.size, width), width)


def describe(value, width: int, compact: bool = False) -> str:
    """``value`` in one line of at most ``width`` characters: exact if it fits, else a summary.

    Summaries name the kind and size and show the first items: ``array shape (20, 4) float64:
    [2.64, 2.1, …]``, ``list of 50 floats: [0.1257, -0.1321, …]``, ``string of 532 chars: 'The
    cat…``.
    """
    width = max(width, 8)
    value = _plain(value)
    if value is None or isinstance(value, (bool, numbers.Number)):
        return cut(_number(value, compact), width)
    if _is_array(value):
        return _describe_array(value, width)
    exact = render(value, width)
    if exact is not None:
        return exact
    if isinstance(value, (str, bytes)):
        text = repr(value[: width + 8])
        if compact:  # an item of a summarised list: its start is enough
            return text[: width - 2] + "…" + text[-1]
        kind = "string" if isinstance(value, str) else "bytes"
        return cut(f"{kind} of {len(value)} chars: {text}", width)
    if _is_container(value):
        opening, closing, items = _items(value)
        n = len(items)
        if isinstance(value, Mapping):
            head = f"{type(value).__name__} of {count(n, 'item')}: "
            opening, closing = "{", "}"

            def pair(item):
                def key_and_value(cap):
                    key = describe(item[0], max(cap // 3, 8), compact=True)
                    return f"{key}: {describe(item[1], cap - len(key) - 2, compact=True)}"
                return key_and_value
            parts = (pair(item) for item in items)
        else:
            kind = _kind_of_items(items) if n <= 10_000 else "item"
            head = f"{type(value).__name__} of {count(n, kind)}: "
            opening, closing = ("{", "}") if isinstance(value, (set, frozenset)) else \
                (("(", ")") if isinstance(value, tuple) else ("[", "]"))
            parts = ((lambda cap, x=x: describe(x, cap, compact=True)) for x in items)
        return cut(_join_within(head, opening, closing, parts, n, width), width)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)

        def field_part(f):
            return lambda cap: f"{f.name}={describe(getattr(value, f.name), cap - len(f.name) - 1, True)}"
        text = _join_within("", f"{type(value).__name__}(", ")", map(field_part, fields),
                            len(fields), width)
        return cut(text, width)
    if type(value).__name__ == "DataFrame" and hasattr(value, "columns"):
        columns = list(value.columns)
        parts = ((lambda cap, c=c: describe(c, cap, compact=True)) for c in columns)
        head = f"DataFrame shape {tuple(value.shape)}, columns: "
        return cut(_join_within(head, "[", "]", parts, len(columns), width), width)
    return cut(one_line(repr(value)), width)


def describe_error(err: BaseException, width: int) -> str:
    name = type(err).__name__
    message = " ".join(str(err).split())
    return cut(f"{name}: {message}" if message else name, width)


def line(label: str, value, *, compact: bool = False) -> str:
    """``  label value`` in at most :data:`WIDTH` characters."""
    prefix = f"  {label} "
    return prefix + describe(value, WIDTH - len(prefix), compact=compact)


def verdict_head(symbol: str, title: str, rest: str) -> str:
    """``symbol title: rest``, the title cut so that the line fits :data:`WIDTH`."""
    room = WIDTH - len(symbol) - 3 - len(rest)
    return f"{symbol} {cut(title, max(room, 12))}: {rest}"


def parameter_names(func, n: int):
    """The names of ``func``'s first ``n`` positional parameters, or None (not a Python
    function, e.g. ``str.split``, whose first parameter would read "self")."""
    if not (inspect.isfunction(func) or inspect.ismethod(func)):
        return None
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:n] if len(names) >= n else None


def input_lines(args: tuple, names) -> list[str]:
    if not args:
        return ["  input: none (the function takes no arguments)"]
    if len(args) == 1:
        label = f"input ({names[0]}):" if names else "input:"
        return [line(label, args[0])]
    return [line(f"arg {k} ({names[k - 1]}):" if names else f"arg {k}:", arg)
            for k, arg in enumerate(args, start=1)]


def difference_line(got, want, rtol: float, atol: float):
    """The first difference of a function's output from the reference's, when it adds news."""
    d = first_difference(got, want, rtol, atol)
    if d is None:
        return None
    where = path_text(d.path)
    if d.kind == "value":
        if not where:
            return None  # "returned" and "expected" show it
        text = f"{where} is {describe(d.got, 30)}, expected {describe(d.want, 30)}"
        if d.n_values > 1:
            text += f" ({d.n_differ} of {d.n_values} values differ)"
    elif d.kind == "type":
        text = f"{_a(_kind(d.got))}, expected {_a(_kind(d.want))}"
    elif d.kind == "length":
        text = f"{count(len(d.got), 'item')}, expected {len(d.want)}"
    elif d.kind == "shape":
        text = f"shape {d.got}, expected {d.want}"
    elif d.kind == "keys":
        missing = [k for k in d.want if k not in d.got]
        extra = [k for k in d.got if k not in d.want]
        text = "; ".join(([f"missing keys {describe(missing, 35, compact=True)}"] if missing else [])
                         + ([f"unexpected keys {describe(extra, 35, compact=True)}"] if extra else []))
    else:
        text = "other fields than expected"
    if where and d.kind != "value":
        text = f"{where} is {text}"
    return cut(f"  difference: {text}", WIDTH)


def value_difference_line(answer, expected, rtol: float, atol: float):
    """What is wrong with a value answer, without showing any part of the expected value."""
    d = first_difference(answer, expected, rtol, atol)
    if d is None:
        return None
    where = path_text(d.path)
    part = f"your answer{where}"
    if d.kind == "type":
        return cut(f"  {part} is {_a(_kind(d.got))}; it should be {_a(_kind(d.want))}", WIDTH)
    if d.kind == "length":
        return cut(f"  {part} has {count(len(d.got), 'item')}; it should have {len(d.want)}",
                    WIDTH)
    if d.kind == "shape":
        return cut(f"  {part} has shape {d.got}; it should have shape {d.want}", WIDTH)
    if d.kind in ("keys", "fields"):
        return cut(f"  {part} does not have the right {d.kind}", WIDTH)
    if where:
        first = all(key == 0 or (step == "array" and not any(key)) for step, key in d.path)
        return cut(f"  {part} is wrong" + ("" if first else " (the parts before it are right)"),
                    WIDTH)
    return None
