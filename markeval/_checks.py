"""Input validation shared by every metric.

Each check raises ``TypeError`` or ``ValueError`` with a message that names the
argument and the offending value, so that bad input never surfaces as a silent
0 or an obscure numpy error deep inside a metric.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
    if isinstance(values, str):
        raise TypeError(f"{name} must be a list of strings, not a single str: {_describe(values)}")
    if not isinstance(values, Sequence) and not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a list of strings, got {type(values).__name__}")
    values = list(values)
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
    """
    if isinstance(references, str):
        raise TypeError(f"{name} must be a list (one entry per hypothesis), not a single str")
    references = list(references)
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
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a 2-D array of embeddings, got a string")
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as err:
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
    """Validate a scalar in [0, 1]."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in [0, 1], got {_describe(value)}") from None
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {v}")
    return v
