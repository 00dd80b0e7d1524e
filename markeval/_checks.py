"""Input validation shared by every metric.

Each check raises ``TypeError`` or ``ValueError`` with a message that names the
argument and the offending value, so that bad input never surfaces as a silent
0 or an obscure numpy error deep inside a metric.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Sequence

import numpy as np


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_bool(value, name: str) -> bool:
    """Return ``value`` if it is a real bool (``True``/``False``).

    Truthiness is not enough: ``lowercase="no"`` is a non-empty string, hence true, and would
    silently switch the option on.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}: {_describe(value)}")
    return bool(value)


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None,
              why: str = "") -> int:
    """Return ``value`` as an ``int`` if it is an integer (not a bool, float or string) in bounds.

    ``why`` replaces the default range message, to say what the bound is for.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}: {_describe(value)}")
    value = int(value)
    if minimum is not None and value < minimum:
        bound = {0: "a non-negative int", 1: "a positive int"}.get(minimum, f">= {minimum}")
        raise ValueError(f"{why or f'{name} must be {bound}'}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{why or f'{name} must be <= {maximum}'}, got {value}")
    return value


def check_folder(value, name: str):
    """``value`` as an expanded :class:`pathlib.Path` of a folder that is or can be created.

    Refused by name: anything but a string or path-like, and a path that is a file or lies
    under one (where creating it would fail with an errno message instead).

    Examples
    --------
    >>> check_folder("~/.cache/markeval-emb", "cache_dir").name
    'markeval-emb'
    >>> check_folder(123, "cache_dir")
    Traceback (most recent call last):
    ...
    TypeError: cache_dir must be a folder path (str or os.PathLike), got int: 123
    """
    import os
    from pathlib import Path

    if not isinstance(value, (str, os.PathLike)) or isinstance(value, bytes):
        raise TypeError(f"{name} must be a folder path (str or os.PathLike), got "
                        f"{type(value).__name__}: {_describe(value)}")
    path = Path(value).expanduser()
    for existing in (path, *path.parents):
        if existing.exists():
            if not existing.is_dir():
                where = "is" if existing == path else f"lies under {existing}, which is"
                raise ValueError(f"{name}={str(path)!r} {where} a file, not a folder")
            break
    return path


def check_seed(seed, name: str = "seed") -> int:
    """The library's one seed rule: a non-negative ``int``.

    ``None`` is refused rather than read as "fresh entropy": every random choice in markeval
    (bootstrap resamples, k-means, sampled sentences) must be reproducible from its signature.
    """
    if seed is None:
        raise TypeError(
            f"{name} must be a non-negative int, got None: results must be reproducible, so "
            "pass a fixed seed (e.g. 0)"
        )
    return check_int(seed, name, minimum=0)


def check_number(value, name: str, *, minimum: float | None = None,
                 maximum: float | None = None) -> float:
    """Return a finite real number (not a bool or a numeric string) as a ``float``, in bounds."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}: {_describe(value)}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def _refuse_non_real(arr: np.ndarray, name: str) -> None:
    """Raise ``TypeError`` naming the first item of ``arr`` that is not a real number.

    numpy would parse ``"0.5"`` into 0.5 and drop the imaginary part of a complex value with
    only a warning; both are bugs to fix where the data was read, not to guess at.
    """
    if arr.dtype.kind not in "OUSc":
        return
    for i, item in enumerate(arr.ravel()):
        item = item.item() if isinstance(item, np.generic) else item
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real):
            where = ", ".join(str(int(j)) for j in np.unravel_index(i, arr.shape))
            raise TypeError(
                f"{name}[{where}] must be a real number, got {type(item).__name__}: "
                f"{_describe(item)}"
            )


def check_numbers(values, name: str) -> np.ndarray:
    """Return a flat sequence of real numbers as a float64 array (finiteness is left to callers).

    Strings are refused even when they look like numbers (numpy would parse ``"0.5"``): a
    column read from a file as text is a bug to fix at the source, not to guess at.
    """
    if values is None or isinstance(values, (str, bytes)):
        raise TypeError(
            f"{name} must be a sequence of numbers, got {type(values).__name__}: {_describe(values)}"
        )
    try:
        arr = np.asarray(values)
    except ValueError as err:  # ragged nesting
        raise ValueError(f"{name} must be a flat sequence of numbers: {err}") from None
    _refuse_non_real(arr, name)
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must be a sequence of numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers, got shape {arr.shape}")
    return arr


def check_list(values, name: str, what: str, hint: str = "") -> list:
    """Return ``values`` as a list; refuse ``None``, non-iterables and a bare string.

    A bare string is iterable, so without this check ``"a b"`` would be read as the
    characters ``a``, `` ``, ``b``. ``what`` says what was expected, e.g. "a list of strings";
    ``hint`` how to fix it.
    """
    hint = f"; {hint}" if hint else ""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be {what}, not a single str: {_describe(values)}{hint}")
    if values is None or not hasattr(values, "__iter__"):
        raise TypeError(
            f"{name} must be {what}, got {type(values).__name__}: {_describe(values)}{hint}"
        )
    return list(values)


def check_string(value, name: str) -> str:
    """Return ``value`` if it is a ``str``; raise ``TypeError`` naming ``name`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}: {_describe(value)}")
    return value


def check_strings(values, name: str, *, allow_empty_list: bool = False) -> list[str]:
    """Return ``values`` as a list of strings.

    Rejects a bare string (a common slip: ``bleu("a b", ...)`` would iterate over
    characters), non-sequences, non-string items and, unless allowed, empty lists.
    """
    values = check_list(values, name, "a list of strings")
    if not values and not allow_empty_list:
        raise ValueError(f"{name} is empty: at least one string is needed")
    for i, item in enumerate(values):
        if not isinstance(item, str):
            raise TypeError(
                f"{name}[{i}] must be a str, got {type(item).__name__}: {_describe(item)}"
            )
    return values


def check_references(hypotheses: Sequence[str], references, name: str = "references") -> list[list[str]]:
    """Normalise ``references`` to one list of reference strings per hypothesis.

    The layout is ``references[i]`` = the reference string, or list of reference
    strings, for ``hypotheses[i]``. sacrebleu's transposed layout (one list per
    reference *stream*) is rejected with a message that says how to transpose.

    The transposed layout is only detectable when the number of reference streams differs
    from the number of hypotheses. With as many streams as hypotheses (2 streams of 2
    sentences for 2 hypotheses) both layouts are valid, and the list is read as
    ``references[i]`` for ``hypotheses[i]``: transpose sacrebleu-style input yourself,
    ``list(zip(*streams))``.
    """
    references = check_list(references, name, "a list (one entry per hypothesis)")
    n = len(hypotheses)
    if len(references) != n:
        hint = ""
        if references and all(not isinstance(r, str) for r in references) and all(
            len(r) == n for r in references
        ):
            hint = (
                f" It looks transposed (sacrebleu layout: {len(references)} reference streams of "
                f"{n} strings); markeval wants references[i] for hypotheses[i]: pass "
                f"list(zip(*{name}))."
            )
        raise ValueError(
            f"{name} has {len(references)} entries but there are {n} hypotheses.{hint}"
        )
    out: list[list[str]] = []
    for i, refs in enumerate(references):
        if isinstance(refs, str):
            out.append([refs])
            continue
        try:
            refs = list(refs)
        except TypeError:
            raise TypeError(
                f"{name}[{i}] must be a str or a list of str, got {type(refs).__name__}"
            ) from None
        if not refs:
            raise ValueError(f"{name}[{i}] is an empty list: each hypothesis needs a reference")
        for j, r in enumerate(refs):
            if not isinstance(r, str):
                raise TypeError(
                    f"{name}[{i}][{j}] must be a str, got {type(r).__name__}: {_describe(r)}"
                )
        out.append(refs)
    return out


def check_same_length(a, b, name_a: str, name_b: str) -> None:
    """Raise ``ValueError`` naming both lengths when ``len(a) != len(b)``."""
    if len(a) != len(b):
        raise ValueError(f"{name_a} has {len(a)} items but {name_b} has {len(b)}: they must match")


def check_embeddings(x, name: str, *, min_rows: int = 1, dtype=np.float64) -> np.ndarray:
    """Return ``x`` as a finite 2-D float array with at least ``min_rows`` rows."""
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a 2-D array of embeddings, got {type(x).__name__}")
    try:
        arr = np.asarray(x)
        _refuse_non_real(arr, name)
        arr = arr.astype(dtype, copy=False)
    except ValueError as err:  # ragged rows
        raise TypeError(f"{name} must be a 2-D numeric array: {err}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, dim), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} has {arr.shape[0]} rows; at least {min_rows} are needed")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 columns: embeddings need at least one dimension")
    bad = ~np.isfinite(arr)
    if bad.any():
        row, col = map(int, np.argwhere(bad)[0])
        kind = "NaN" if np.isnan(arr[row, col]) else "inf"
        raise ValueError(
            f"{name} contains {int(bad.sum())} non-finite values (first: {kind} at row {row}, "
            f"column {col})"
        )
    return arr


def check_same_dim(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    """Raise ``ValueError`` when two embedding sets have different widths."""
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"{name_a} has dimension {a.shape[1]} but {name_b} has dimension {b.shape[1]}"
        )


def check_k(k, n: int, name: str = "k", set_name: str = "the set") -> int:
    """Validate a neighbour count: an int with ``1 <= k < n`` (a point is not its own neighbour)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(k).__name__}: {_describe(k)}")
    k = int(k)
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}")
    if k >= n:
        raise ValueError(
            f"{name}={k} is too large for {set_name} of {n} points: need {name} <= {n - 1} "
            "(each point's own position is excluded from its neighbours)"
        )
    return k


def check_probability(value, name: str) -> float:
    """Validate a scalar in [0, 1] (a number, not a numeric string)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1], got {_describe(value)}")
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {v}")
    return v


def check_confidence(value, name: str = "confidence") -> float:
    """Validate the coverage of a confidence interval: a number strictly between 0 and 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1), got {_describe(value)}")
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value}")
    return float(value)


def check_choice(value, name: str, choices):
    """Return ``value`` if it is one of ``choices``; raise naming the argument and the options.

    A value of the wrong type (``tokenize=13a`` read as a number, ``None``) is a ``TypeError``
    when the choices are strings, so that it is not reported as a misspelt option.

    Examples
    --------
    >>> check_choice("exp", "smooth", ("none", "exp", "floor"))
    'exp'
    >>> check_choice("epx", "smooth", ("none", "exp", "floor"))
    Traceback (most recent call last):
    ...
    ValueError: smooth must be one of 'none', 'exp', 'floor', got 'epx'
    >>> check_choice(None, "smooth", ("none", "exp"))
    Traceback (most recent call last):
    ...
    TypeError: smooth must be a str (one of 'none', 'exp'), got NoneType: None
    """
    choices = tuple(choices)
    # bool is an int subclass: True must not pass for 1. The common case returns at once.
    is_bool = isinstance(value, (bool, np.bool_))
    try:
        known = value in choices
    except TypeError:  # an unhashable or incomparable value
        known = False
    if known and not (is_bool and not any(isinstance(c, bool) for c in choices)):
        return value
    listed = ", ".join(repr(c) for c in choices)
    if choices and all(isinstance(c, str) for c in choices) and not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str (one of {listed}), got {type(value).__name__}: "
            f"{_describe(value)}"
        )
    if is_bool:
        raise TypeError(f"{name} must be one of {listed}, got {type(value).__name__}: {value}")
    raise ValueError(f"{name} must be one of {listed}, got {_describe(value)}")


def check_resampling(n_resamples, confidence, seed, *,
                     minimum: int = 0) -> tuple[int, float, int]:
    """Validate the settings of a bootstrap: ``(n_resamples, confidence, seed)``.

    ``n_resamples`` is a non-negative int; ``0`` means *no resampling* (the metric reports no
    interval), which is how ``correlation`` and ``rouge`` switch their intervals off. A
    function whose only output is the interval (:func:`markeval.resampling.bootstrap`) passes
    ``minimum=1``.
    ``confidence`` is in (0, 1) (:func:`check_confidence`), ``seed`` a non-negative int
    (:func:`check_seed`).

    Examples
    --------
    >>> check_resampling(1000, 0.95, 0)
    (1000, 0.95, 0)
    >>> check_resampling(0, 0.95, 0)
    (0, 0.95, 0)
    >>> check_resampling(0, 0.95, 0, minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: n_resamples must be a positive int, got 0
    >>> check_resampling(100, 95, 0)
    Traceback (most recent call last):
    ...
    ValueError: confidence must be strictly between 0 and 1, got 95
    """
    why = "n_resamples must be >= 0 (0 means no resampling)" if minimum == 0 else ""
    n_resamples = check_int(n_resamples, "n_resamples", minimum=minimum, why=why)
    return n_resamples, check_confidence(confidence), check_seed(seed)


def is_texts(x) -> bool:
    """Whether ``x`` is a non-empty list, tuple or pandas Series of strings (not a bare str).

    This tells texts (to be encoded) from embeddings (arrays) where a function accepts
    either. Only the first item is looked at, so that a list of texts with one bad item is
    still read as texts and :func:`check_strings` can name the bad item; callers validate
    the items. A bare ``str`` is not texts: it is refused by ``check_strings`` downstream.

    Examples
    --------
    >>> is_texts(["a cat", "a dog"]), is_texts(("a cat",)), is_texts("a cat")
    (True, True, False)
    >>> import numpy as np
    >>> is_texts([]), is_texts(np.zeros((2, 3))), is_texts([[0.1, 0.2]])
    (False, False, False)
    """
    if isinstance(x, (list, tuple)):
        first = x[0] if x else None
    elif _is_series(x):
        first = x.iloc[0] if len(x) else None
    else:
        return False
    return isinstance(first, str)


def _is_series(x) -> bool:
    # Without importing pandas: if it is not loaded, x cannot be a Series.
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(x, pandas.Series)
