"""Reproducibility signatures, sacrebleu style: ``name|key:value|...|version:X``."""

from __future__ import annotations


def make_signature(metric: str, **fields) -> str:
    """Join a metric name and its settings into one stable, human-readable string.

    Field order is the call order; ``None`` values are omitted; booleans print as
    ``yes``/``no``. The library version is always last.

    Examples
    --------
    >>> make_signature("bleu", tok="13a", smooth="exp", lowercase=False)  # doctest: +ELLIPSIS
    'bleu|tok:13a|smooth:exp|lowercase:no|version:...'
    """
    from markeval._version import __version__

    parts = [metric]
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "yes" if value else "no"
        parts.append(f"{key}:{value}")
    parts.append(f"version:{__version__}")
    return "|".join(parts)


def extend_signature(signature: str, **fields) -> str:
    """``signature`` with ``fields`` added before its version (resampling settings, say).

    Examples
    --------
    >>> extend_signature("gleu|tok:13a|version:0.1.0", bootstrap=200, seed=1)
    'gleu|tok:13a|bootstrap:200|seed:1|version:0.1.0'
    """
    head, sep, version = signature.rpartition("|version:")
    extra = "|".join(f"{key}:{value}" for key, value in fields.items())
    return f"{head}|{extra}{sep}{version}" if sep else f"{signature}|{extra}"
