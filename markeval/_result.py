"""The shape every public result shares.

Each metric returns a frozen dataclass of its own (its sufficient statistics and settings
differ), but every one of them answers the same four questions, so that a table, a plot, the
command line or a shared test can treat all metrics alike:

``score``
    The headline number, a plain Python ``float`` (BLEU's 0-100 score, BERTScore's F1, FID's
    distance, a Mark-Evaluate score, a correlation coefficient).
``higher_is_better``
    A class attribute: ``False`` for distances, perplexities and cross-entropies.
``signature``
    The reproducibility string, sacrebleu style: ``name|key:value|...|version:X``.
``item_scores``
    The headline score of each item (hypothesis, summary, sequence) as a tuple of floats, or
    ``None`` for metrics that only score whole sets (FID, PRD, IPR, Mark-Evaluate).

Older field names (``value``, ``f1``, ``fmeasure``, ``estimate`` ...) stay as they were; the
protocol adds the shared names beside them.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable


@runtime_checkable
class MetricResult(Protocol):
    """What every public result provides (checked by ``tests/test_common.py``)."""

    higher_is_better: ClassVar[bool]

    @property
    def score(self) -> float: ...

    @property
    def signature(self) -> str: ...

    @property
    def item_scores(self) -> tuple[float, ...] | None: ...


def alias(name: str, doc: str | None = None) -> property:
    """A read-only property returning attribute ``name``: the protocol's name for a field that
    a result already has under its own name (``score = alias("f1")``).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Toy:
    ...     f1: float
    ...     score = alias("f1")
    >>> Toy(0.5).score
    0.5
    """
    return property(lambda self: getattr(self, name), doc=doc or f"Alias of ``{name}``.")
