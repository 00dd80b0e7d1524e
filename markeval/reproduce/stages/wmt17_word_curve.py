"""The pooled word-level sample-size study beyond 200 sentences per system (WMT17, ME Table 2).

``wmt17_system`` scores every system on random subsets of 25 to 200 sentences, with exact
k-NN balls: at 200 sentences a set holds about 20,000 word samples, and the exact counts grow
with the square of that. This stage continues the curve at 400 and 1,000 sentences and at every
sentence (about 300,000 samples per set), with the balls and their members found by the
neighbour index (:mod:`markeval.geometry.index`; its measured agreement with exact is in
``markeval/results/benchmarks/neighbour_agreement.csv``, and ``benchmarks/word_curve_exact.py``
recomputes units of this stage both ways: at 400 sentences no score moved by more than 1e-4,
and the exact units took 1.9 and 2.3 times as long).

A unit is one system at one size, ``word/<pair>/<size>/<system>`` (``size`` a number of
sentences or ``all``), so that an interrupted run resumes within minutes of where it stopped.
Measured on the 2-core machine: ``word/cs-en/400/PJATK.4760`` (about 40,000 samples a set)
takes 76 s, of which PRD's k-means is 34 s and the one index pass over both sets (their balls
and members at every K, :func:`markeval.geometry.mutual_balls_at`) most of the rest; a pair's
sixteen systems at every sentence in one unit would take hours. The price is that each unit
encodes the references again (the index path draws their balls again with every system
anyway). The subset of a size is :func:`~markeval.experiments.wmt17.sentence_subset_of`'s
draw 0, the same for every system of a pair. The rows are ``wmt17_system``'s (level ``word``,
draw 0, ``size`` the sentences scored), so the chapter reads the two stages as one curve.
"""

from __future__ import annotations

import pandas as pd

from markeval.experiments.wmt17 import (DEFAULT_K, ENCODER, IPR_K, KS, SYSTEM_PAIRS,
                                        score_systems)
from markeval.reproduce.stage import Stage, no_comparison

__all__ = ["STAGES", "unit_size"]


def _settings(profile: str) -> dict:
    ci = profile == "ci"
    # ci: one pair, two small sizes (one of them every sentence of a slice would be minutes:
    # "all" is exercised by the full profile's units only). full: 400 and 1,000 sentences and
    # every sentence of the pair (about 300,000 samples a set).
    return {"pairs": ["cs-en"] if ci else SYSTEM_PAIRS, "encoder": ENCODER, "detokenize": True,
            "word_sizes": [4, 8] if ci else [400, 1000, "all"],
            "ks": list(KS), "default_k": DEFAULT_K, "ipr_k": IPR_K, "prd_clusters": 20,
            "prd_runs": 2, "neighbours": "index", "disk_cache": ci}


def _units(settings: dict) -> list[str]:
    from markeval.datasets import wmt17_da_systems

    return [f"word/{pair}/{size}/{system}" for size in settings["word_sizes"]
            for pair in settings["pairs"] for system in wmt17_da_systems(pair).system]


def unit_size(token: str) -> int | None:
    """A unit's size: a positive number of sentences, or None for ``all``.

    Examples
    --------
    >>> unit_size("400"), unit_size("all")
    (400, None)
    """
    if token == "all":
        return None
    if not token.isdigit() or int(token) < 1:
        raise ValueError(f"size must be a positive number of sentences or 'all', got {token!r}")
    return int(token)


def _parse(unit: str) -> tuple[str, int | None, str]:
    level, *rest = unit.split("/")
    if level != "word" or len(rest) != 3:
        raise ValueError(f"unit must be 'word/<pair>/<size>/<system>', got {unit!r}")
    pair, size, system = rest
    return pair, unit_size(size), system


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    pair, size, system = _parse(unit)
    return score_systems("word", pair, size, 0, settings, systems=[system])


def _cost(unit: str, settings: dict) -> float:
    """Rough seconds of a unit (76 s measured at 400 sentences): linear in the sentences
    (encoding, k-means, the index) beside a fixed part."""
    from markeval.datasets import load_wmt17

    pair, size, _ = _parse(unit)
    return 10 + 0.17 * (size or len(load_wmt17(pair).references))


STAGES = (Stage(
    name="wmt17_word_curve",
    title="The pooled word-level sample-size study at 400 sentences and beyond (WMT17, index)",
    # no paper table prints this curve
    settings=_settings, units=_units, compute=_compute, compare=no_comparison,
    check_units=lambda settings: [_units(settings)[0]],
    # As wmt17_system's (5e-3): the float32 vectors' last bits, and a neighbour swapped by them
    # moving a k-NN score by 1/n with n >= 400 samples per set.
    tolerance=5e-3, selection=("pairs", "word_sizes"), parallel=True, cost=_cost),)
