"""Tolerant structural equality for checking answers against a reference."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping

import numpy as np


def _is_number(value) -> bool:
    # bool is an int, but True == 1.0000000001 within tolerance would be a silly pass.
    return isinstance(value, numbers.Number) and not isinstance(value, (bool, np.bool_))


def _close_numbers(got, want, rtol: float, atol: float) -> bool:
    if isinstance(got, numbers.Complex) and not isinstance(got, numbers.Real) or (
        isinstance(want, numbers.Complex) and not isinstance(want, numbers.Real)
    ):
        return abs(complex(got) - complex(want)) <= atol + rtol * abs(complex(want))
    got, want = float(got), float(want)
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= atol + rtol * abs(want)


def _close_arrays(got, want, rtol: float, atol: float) -> bool:
    try:
        got_arr, want_arr = np.asarray(got), np.asarray(want)
    except (TypeError, ValueError):
        return False
    if got_arr.shape != want_arr.shape:
        return False
    numeric = "biufc"
    if got_arr.dtype.kind in numeric and want_arr.dtype.kind in numeric:
        return bool(np.allclose(got_arr, want_arr, rtol=rtol, atol=atol, equal_nan=True))
    return all(close(g, w, rtol, atol) for g, w in zip(got_arr.ravel().tolist(),
                                                      want_arr.ravel().tolist()))


def close(got, want, rtol: float, atol: float) -> bool:
    """Whether ``got`` equals ``want``: numbers within ``atol + rtol * |want|``, recursively.

    Numbers (Python or numpy, not bool) are compared with the tolerance, NaN
    equal to NaN; a bool never equals a number; numpy arrays by shape and values; lists and tuples (either
    way round) element by element; dicts by keys and values; dataclass
    instances by ``want``'s fields; anything else with ``==``.

    Examples
    --------
    >>> close([1.0, (2.0, {"a": 3.0})], (1.0 + 1e-12, [2.0, {"a": 3.0}]), 1e-9, 0.0)
    True
    >>> close(0.5, 0.51, 1e-9, 1e-12)
    False
    """
    if _is_number(got) and _is_number(want):
        return _close_numbers(got, want, rtol, atol)
    got_bool, want_bool = isinstance(got, (bool, np.bool_)), isinstance(want, (bool, np.bool_))
    if got_bool != want_bool and (_is_number(got) or _is_number(want)):
        return False  # True is not an answer to "how many?", nor 1 to "is it?"
    if isinstance(got, np.ndarray) or isinstance(want, np.ndarray):
        return _close_arrays(got, want, rtol, atol)
    if dataclasses.is_dataclass(want) and not isinstance(want, type):
        if not dataclasses.is_dataclass(got) or isinstance(got, type):
            return False
        names = [f.name for f in dataclasses.fields(want)]
        if sorted(names) != sorted(f.name for f in dataclasses.fields(got)):
            return False
        return all(close(getattr(got, k), getattr(want, k), rtol, atol) for k in names)
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping) or set(got) != set(want):
            return False
        return all(close(got[k], want[k], rtol, atol) for k in want)
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return False
        return all(close(g, w, rtol, atol) for g, w in zip(got, want))
    try:
        equal = got == want
        return bool(equal) if isinstance(equal, (bool, np.bool_)) else bool(np.all(equal))
    except Exception:  # noqa: BLE001 - an exotic __eq__ that fails means "not equal"
        return False


@dataclasses.dataclass(frozen=True)
class Difference:
    """Where ``got`` first differs from ``want`` (see :func:`first_difference`).

    Attributes
    ----------
    path : tuple
        Steps from the top value down to the part that differs: ``("[]", i)`` an item of a
        list, tuple or dict, ``(".", name)`` a dataclass field, ``("array", index)`` one value
        of an array (:func:`path_text` writes it as subscripts).
    kind : str
        What differs: ``"value"``, ``"type"``, ``"shape"``, ``"length"``, ``"keys"`` or
        ``"fields"``.
    got, want : object
        The parts that differ (for ``"shape"``, the two shapes).
    n_differ, n_values : int
        For a value inside an array: how many of its values differ, out of how many.
    """

    path: tuple
    kind: str
    got: object
    want: object
    n_differ: int = 1
    n_values: int = 1


def path_text(path: tuple) -> str:
    """``path`` of a :class:`Difference` as Python subscripts, e.g. ``[2]['cat'].value``."""
    parts = []
    for step, key in path:
        if step == ".":
            parts.append(f".{key}")
        elif step == "array":
            parts.append("[" + ", ".join(str(i) for i in key) + "]")
        else:
            parts.append(f"[{key!r}]")
    return "".join(parts)


def first_difference(got, want, rtol: float, atol: float, path: tuple = ()):
    """The first place where :func:`close` finds ``got`` and ``want`` different, or None.

    Walks the two values the way :func:`close` compares them (dataclass fields, dict keys,
    list items, array values) and returns a :class:`Difference`.

    Examples
    --------
    >>> d = first_difference({"a": [1.0, 2.0]}, {"a": [1.0, 2.5]}, 1e-9, 0.0)
    >>> path_text(d.path), d.kind, d.got, d.want
    ("['a'][1]", 'value', 2.0, 2.5)
    >>> first_difference([1, 2], [1, 2, 3], 1e-9, 0.0).kind
    'length'
    """
    if close(got, want, rtol, atol):
        return None
    if _is_number(got) and _is_number(want):
        return Difference(path, "value", got, want)
    if isinstance(got, np.ndarray) or isinstance(want, np.ndarray):
        try:
            got_arr, want_arr = np.asarray(got), np.asarray(want)
        except (TypeError, ValueError):
            return Difference(path, "type", got, want)
        if got_arr.shape != want_arr.shape:
            return Difference(path, "shape", got_arr.shape, want_arr.shape)
        numeric = "biufc"
        if got_arr.dtype.kind in numeric and want_arr.dtype.kind in numeric:
            bad = ~np.isclose(got_arr, want_arr, rtol=rtol, atol=atol, equal_nan=True)
        else:
            bad = np.array([not close(g, w, rtol, atol) for g, w in
                            zip(got_arr.ravel().tolist(), want_arr.ravel().tolist())],
                           dtype=bool).reshape(got_arr.shape)
        if got_arr.ndim == 0 or not bad.any():
            return Difference(path, "value", got, want)
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        return Difference(path + (("array", index),), "value", got_arr[index].item()
                          if hasattr(got_arr[index], "item") else got_arr[index],
                          want_arr[index].item() if hasattr(want_arr[index], "item")
                          else want_arr[index], int(bad.sum()), int(bad.size))
    if dataclasses.is_dataclass(want) and not isinstance(want, type):
        if not dataclasses.is_dataclass(got) or isinstance(got, type):
            return Difference(path, "type", got, want)
        names = [f.name for f in dataclasses.fields(want)]
        if sorted(names) != sorted(f.name for f in dataclasses.fields(got)):
            return Difference(path, "fields", got, want)
        for k in names:
            found = first_difference(getattr(got, k), getattr(want, k), rtol, atol,
                                     path + ((".", k),))
            if found is not None:
                return found
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping):
            return Difference(path, "type", got, want)
        if set(got) != set(want):
            return Difference(path, "keys", got, want)
        for k in want:
            found = first_difference(got[k], want[k], rtol, atol, path + (("[]", k),))
            if found is not None:
                return found
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return Difference(path, "type", got, want)
        if len(got) != len(want):
            return Difference(path, "length", got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            found = first_difference(g, w, rtol, atol, path + (("[]", i),))
            if found is not None:
                return found
    if type(got) is not type(want) and not (_is_number(got) and _is_number(want)):
        return Difference(path, "type", got, want)
    return Difference(path, "value", got, want)
