"""WMT17 system level, pooled sentence vectors, scored by the metrics published since
Mark-Evaluate (MAUVE, MAUVE*, the frontier integral, density, coverage, Vendi), beside
Mark-Evaluate's four scores on the very same sets, at every size of a sample-size curve.

A unit is a language pair of Mark-Evaluate Table 2: its references and every system's outputs
are encoded once (one vector per sentence), and every system is scored on each random subset
of the settings' sizes and draws (:func:`markeval.experiments.wmt17.sentence_subset_of`, the
same subset for every system of the pair), ``None`` being every sentence. MAUVE is not scored
where a subset gives fewer than ``mauve_min_buckets`` buckets (the small-set rule of
:func:`~markeval.experiments.wmt17.recent_system_unit_rows`). The rows are ``wmt17_system``'s
(level ``sentence``, protocol ``pooled``), so :func:`markeval.experiments.translation.
sample_size_curve` reads them at ``level="sentence"``.

Cost, measured on the 2-core machine: the full run's five units took 4,151 s of compute
(2,204 s wall with two at a time, while another stage shared the cores), most of it encoding
the five pairs' 148,000 texts (every sentence of the 50 systems and the references); MAUVE on
3,000 + 3,000 sentence vectors (300 buckets, five k-means seeds) takes about 9 s a system.
"""

from __future__ import annotations

import pandas as pd

from markeval.experiments.wmt17 import DEFAULT_K, ENCODER, SYSTEM_PAIRS, recent_system_unit_rows
from markeval.reproduce.stage import Stage, no_comparison

__all__ = ["STAGES"]


def _settings(profile: str) -> dict:
    from markeval.experiments.sensitivity import recent_set_metric_names

    ci = profile == "ci"
    # ci: one pair, a size under the small-set rule (30 sentences: 3 buckets) and one above it
    # (120: 12 buckets), about 700 texts to encode. full: the five pairs of ME Table 2, from 25
    # sentences per system to every sentence, five subsets at each size below 1,000.
    return {"pairs": ["cs-en"] if ci else SYSTEM_PAIRS, "encoder": ENCODER, "detokenize": True,
            "sizes": [30, 120] if ci else [25, 50, 100, 200, 400, 1000, None],
            "draws": [2, 1] if ci else [5, 5, 5, 5, 5, 3, 1],
            "metrics": ["me_schnabel_quality", "me_schnabel_diversity", "me_petersen",
                        "me_capture", *recent_set_metric_names()],
            "me_k": DEFAULT_K, "mauve_min_buckets": 10, "disk_cache": ci}


def _units(settings: dict) -> list[str]:
    if len(settings["sizes"]) != len(settings["draws"]):
        raise ValueError("sizes and draws must have the same length, got "
                         f"{settings['sizes']} and {settings['draws']}")
    return list(settings["pairs"])


def _cost(unit: str, settings: dict) -> float:
    """Texts to encode, the unit's main cost (every sentence of the pair in full)."""
    from markeval.datasets import load_wmt17, wmt17_da_systems

    return float(len(load_wmt17(unit).references) * (len(wmt17_da_systems(unit)) + 1))


STAGES = (Stage(
    name="wmt17_system_recent",
    title="WMT17 systems on pooled sentence vectors: MAUVE, density/coverage and Vendi beside "
          "Mark-Evaluate, from 25 sentences to all",
    # no paper table holds these metrics
    settings=_settings, units=_units, compute=recent_system_unit_rows, compare=no_comparison,
    # cs-en, the pair with the fewest systems (four); in full only two of its subsets of 100
    # (MAUVE's smallest), about 1,000 texts to encode instead of 15,000
    check_units=lambda settings: ["cs-en"],
    check_narrowing=lambda settings: {} if settings["disk_cache"] else {"sizes": [100],
                                                                        "draws": [2]},
    # A k-NN or k-means score steps by 1/n when another CPU's last bits swap two neighbours;
    # the smallest sets here hold 25 vectors (ci: 30), so one swap moves a score by <= 0.04.
    # Such a swap needs two distances within ~1e-6 of each other among a few dozen vectors.
    tolerance=5e-3, selection=("pairs",), parallel=True, cost=_cost),)
