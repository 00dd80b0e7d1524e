"""PRD's k-means noise at the sentence level (Mark-Evaluate Table 5): r over seeds and settings.

PRD clusters the union of the reference and the system vectors with k-means and compares the
two histograms over the clusters; with 2 runs, the r of de-en's systems with DA moved from
0.09 to 0.85 across seeds: one seed's noise is as large as the differences between systems.
This stage measures that spread, so that the setting of Table 5 is chosen by measurement and
its r is reported with a band over seeds. For every system of ME Table 2's five pairs, on the
pooled sentence vectors of the same sentences as ``wmt17_system``'s Table 5 (every sentence
with all-MiniLM-L6-v2, 500 per system with all-mpnet-base-v2), PRD precision (``F_{1/8}``) is
computed at each ``(clusters, runs)`` of :data:`GRID` and each seed of ``range(SEEDS)``.
The paper's own code (``prd_score.py``) defaults to 20 clusters and 10 runs.

A unit is a pair. Its rows are long: ``pair``, ``system``, ``human``, ``clusters``, ``runs``,
``seed`` and the columns of :data:`markeval.experiments.vocabulary.LONG_COLUMNS` (protocol
``pooled``, metric ``prd_precision``, no ``k``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from markeval.experiments.wmt17 import ENCODER, MPNET, SYSTEM_PAIRS
from markeval.reproduce.stage import Stage

__all__ = ["GRID", "SEEDS", "STAGES"]

#: (clusters, runs) settings compared: the stage's former setting, the paper code's default,
#: and more clusters.
GRID = ((20, 2), (20, 10), (50, 10))
SEEDS = 10


def _settings(profile: str, encoder: str) -> dict:
    ci = profile == "ci"
    sentences = (24 if ci else 500) if encoder == MPNET else (48 if ci else None)
    return {"pairs": ["cs-en"] if ci else SYSTEM_PAIRS, "encoder": encoder, "detokenize": True,
            "sentences": sentences, "grid": [list(g) for g in GRID] if not ci else [[5, 2]],
            "seeds": SEEDS if not ci else 3, "disk_cache": ci}


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    from markeval.datasets import load_wmt17, wmt17_da_systems, wmt17_system_match
    from markeval.distribution.prd import prd
    from markeval.encoders import sentence_embeddings
    from markeval.experiments.vocabulary import LONG_COLUMNS, encoder_name
    from markeval.experiments.wmt17 import sentence_subset_of, unit_encoder

    pair = unit
    data = load_wmt17(pair, detokenize=settings["detokenize"])
    keep = sentence_subset_of(pair, settings["sentences"])
    encoder = unit_encoder(range(-1, 0), settings, capacity=2 * len(keep) + 8)
    refs = sentence_embeddings([data.references[i] for i in keep], encoder, progress=False)
    mapping = wmt17_system_match(pair).mapping
    # "systems" (a check's narrowing) scores the pair's first systems only; a system's rows do
    # not depend on the others'
    da = wmt17_da_systems(pair)
    if settings.get("systems") is not None:
        da = da.head(settings["systems"])
    rows = []
    for system, human in da.set_index("system").score.items():
        outputs = sentence_embeddings([data.systems[mapping[system]][i] for i in keep], encoder,
                                      progress=False)
        for clusters, runs in settings["grid"]:
            for seed in range(settings["seeds"]):
                value = prd(refs, outputs, num_clusters=clusters, num_runs=runs,
                            seed=seed).f_beta_inv
                rows.append({"pair": pair, "system": system, "human": float(human),
                             "clusters": clusters, "runs": runs, "seed": seed,
                             "encoder": encoder_name(settings["encoder"]),
                             "protocol": "pooled", "metric": "prd_precision", "k": None,
                             "options": "", "value": value})
    return pd.DataFrame(rows)[["pair", "system", "human", "clusters", "runs", "seed",
                               *LONG_COLUMNS]]


def _compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.paper_values import comparison_row

    from markeval.experiments.translation import seed_band

    band = seed_band(rows).set_index(["pair", "clusters", "runs"])
    n = "all" if settings["sentences"] is None else settings["sentences"]
    out = []
    for clusters, runs in settings["grid"]:
        setting = (f"{settings['encoder']}; {n} sentences per system, pooled sentence vectors; "
                   f"PRD {clusters} clusters, {runs} runs; median r over {settings['seeds']} "
                   "seeds")
        for pair in settings["pairs"]:
            out.append(comparison_row("Mark-Evaluate", "Table 5", f"{pair} (r)", "PRD",
                                      band.loc[(pair, clusters, runs), "median r"], setting))
        out.append(comparison_row("Mark-Evaluate", "Table 5", "Average (r)", "PRD",
                                  band.loc[("average", clusters, runs), "median r"], setting))
    return pd.DataFrame(out)


def _stage(encoder: str, suffix: str) -> Stage:
    model = "" if encoder == ENCODER else f", {encoder}"
    return Stage(
        name=f"wmt17_prd_seeds{suffix}",
        title=f"Mark-Evaluate Table 5: PRD's r over k-means seeds and settings (WMT17{model})",
        settings=lambda profile: _settings(profile, encoder),
        units=lambda settings: list(settings["pairs"]), compute=_compute, compare=_compare,
        # a full unit (MiniLM: every sentence, mpnet: 500 per system) encodes and scores 30
        # seeds and settings per system, which takes minutes: the consistency test recomputes
        # cs-en's first system at the first seed and setting, whose rows do not depend on the
        # others' (encoding the other three systems would triple its time)
        check_units=lambda settings: ["cs-en"],
        check_narrowing=lambda settings: ({} if settings["disk_cache"] else
                                          {"grid": settings["grid"][:1], "seeds": 1,
                                           "systems": 1}),
        # k-means on float32 vectors: another CPU's last bits can move a centre, and with it a
        # histogram bin, by one point in n (24 sentences in ci).
        tolerance=0.05, selection=("pairs",), parallel=True, row_format=2,
        cost=lambda unit, settings: {"zh-en": 16, "de-en": 11, "tr-en": 10, "ru-en": 9}.get(
            unit, 4))


STAGES = (_stage(ENCODER, ""), _stage(MPNET, "_mpnet"))
