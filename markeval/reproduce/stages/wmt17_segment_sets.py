"""WMT17 word-level set metrics per segment: Mark-Evaluate Tables 2 and 6 as the paper most
likely ran them.

Mark-Evaluate §6.1 scores the WMT17 systems "on the five language pairs provided by Zhao et al.
(2019)'s implementation", whose pipeline scores each segment and aggregates per system. Here
every set metric (ME Petersen, Schnabel quality and CAPTURE at each K, PRD precision, IPR
precision) compares the word samples of one reference sentence (each word piece at each of
the last five layers) with those of its translation, for **every segment of every system** of
the five pairs, with either encoder, and a system's score is the mean over its segments. FID
is left out: a segment's ~140 samples in 384 (or 768) dimensions give a singular covariance.

Segments too small for a setting are scored by the rules of
:func:`markeval.experiments.word_set_metrics.adapted_set_scores` (an empty side scores 0; ``K``
capped at ``n - 1``; PRD's clusters capped at ``2n``, with ``n`` the smaller set's size), and
every unit counts how many of each system's segments each rule touched.

A unit is ``<pair>/<start>``: the segments ``start .. start + chunk - 1`` of every system of
the pair, against their references (encoded once per unit). Its rows are long: ``pair``,
``system``, ``human`` (system DA), ``segments`` (the unit's), one column per rule of
:data:`~markeval.experiments.word_set_metrics.ADAPTATION_RULES` (the system's segments it
touched in this unit, the same on each of the system's rows), and the columns of
:data:`markeval.experiments.vocabulary.LONG_COLUMNS`: protocol ``segment``, the metric's
registry name (``me_petersen``, ``me_schnabel_quality``, ``me_capture``, ``prd_precision``,
``ipr_precision``), ``k``, and ``value``, the mean over the unit's segments.
:func:`markeval.experiments.translation.segment_set_means` weighs the units' means back into
one mean per system.
"""

from __future__ import annotations

import pandas as pd

from markeval.experiments.wmt17 import (DEFAULT_K, ENCODER, IPR_K, KS, MPNET, SYSTEM_PAIRS,
                                        segment_set_comparison, segment_set_unit_rows)
from markeval.reproduce.stage import Stage

__all__ = ["STAGES"]

#: Segments per unit (every system of the pair is scored on them).
CHUNK = 500


def _settings(profile: str, encoder: str) -> dict:
    ci = profile == "ci"
    full = None  # every segment of every system, with either encoder
    return {"pairs": ["cs-en"] if ci else SYSTEM_PAIRS, "encoder": encoder, "detokenize": True,
            "segments": (12 if encoder == MPNET else 30) if ci else full, "chunk": CHUNK,
            "ks": list(KS), "default_k": DEFAULT_K, "ipr_k": IPR_K, "prd_clusters": 20,
            "prd_runs": 2, "disk_cache": ci}


def _n_segments(pair: str, settings: dict) -> int:
    from markeval.datasets import load_wmt17

    n = len(load_wmt17(pair).references)
    return n if settings["segments"] is None else min(n, settings["segments"])


def _units(settings: dict) -> list[str]:
    return [f"{pair}/{start}" for pair in settings["pairs"]
            for start in range(0, _n_segments(pair, settings), settings["chunk"])]


def _cost(unit: str, settings: dict) -> float:
    """Segments times systems: what the unit encodes and scores."""
    from markeval.datasets import wmt17_da_systems

    pair, start = unit.split("/")
    n = min(settings["chunk"], _n_segments(pair, settings) - int(start))
    return float(n * len(wmt17_da_systems(pair)))


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    pair, start = unit.split("/")
    start = int(start)
    return segment_set_unit_rows(
        pair, range(start, min(start + settings["chunk"], _n_segments(pair, settings))), settings)


def _check_units(settings: dict) -> list[str]:
    """The unit the consistency test recomputes: the first, except mpnet's in full, where it
    is the cheapest (a pair's short last chunk: 500 segments of cs-en's systems through the
    12-layer encoder took 14 min on a busy 2-core machine; MiniLM's first unit takes 40 s)."""
    units = _units(settings)
    if settings["encoder"] == MPNET and not settings["disk_cache"]:
        return [min(units, key=lambda unit: _cost(unit, settings))]
    return units[:1]


def _stage(encoder: str, suffix: str) -> Stage:
    model = "" if encoder == ENCODER else f", {encoder}"
    return Stage(
        name=f"wmt17_segment_sets{suffix}",
        title=f"Mark-Evaluate Tables 2 and 6, set metrics per segment (WMT17{model})",
        settings=lambda profile: _settings(profile, encoder), units=_units, compute=_compute,
        compare=segment_set_comparison, check_units=_check_units,
        # A segment's score moves by 1/n (n ~ 140 samples) when another CPU's last bits swap
        # two neighbours; averaged over a unit's segments such a swap moves a mean by far less.
        tolerance=5e-3, selection=("pairs",), parallel=True, cost=_cost, row_format=2)


STAGES = (_stage(ENCODER, ""), _stage(MPNET, "_mpnet"))
