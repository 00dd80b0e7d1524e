"""Unconditional generation: the generator ladder and the sensitivity experiments.

Stages ``ladder`` (Mark-Evaluate Table 1 analogue, below), ``sensitivity`` and ``word_swap``
(the K sweep, mode collapse and word swap of Mark-Evaluate §3-4, further down), and the same
sets scored by the metrics published since (``ladder_recent``, ``mode_collapse_recent``,
``word_swap_recent``, at the end).

Stage ``ladder``. Mark-Evaluate's Table 1 correlates eight metrics with human fluency ratings
of ten generators; those texts and ratings are not public. The analogue scores the ladder of
:mod:`markeval.experiments.generators` (generators of known order, built on BBC News) with
every metric of :mod:`markeval.experiments.ranking` and rank-correlates each metric with the
constructed orders (Kendall's τ pooled over the quality chains; Spearman's ρ and Pearson's r
averaged over them).

A unit is one *round*: ``round-000`` scores all ``n`` sentences of every generator, the
others a random 80% subset (seeded by the round alone), for the intervals. Every k-NN metric
(IPR, the four Mark-Evaluate scores) is computed at every K of the grid, so the comparison can
give both the default K (IPR 3, ME 1) and the best K per metric (the paper's Table 1
protocol: "we iterate through K values ... and present the results with the best K of each
method"; we take the grid's K with the highest pooled τ on all sentences, ties to the smaller).
A unit's rows are ``generator`` and the columns of :mod:`markeval.experiments.vocabulary`
(registry names; protocol ``pooled``: a generator's sentences are one set).

What a unit computes and how the rows meet the paper's tables is the study's own
(:mod:`markeval.experiments.ladder`); this module chooses the settings and the units.
"""

from __future__ import annotations

import pandas as pd

from markeval.experiments.ladder import (check_ladder_settings, generator_names,
                                         ladder_comparison, ladder_inputs, ladder_unit_rows)
from markeval.experiments.sensitivity import encode_sensitivity_sets, sensitivity_unit_rows
from markeval.reproduce.stage import Stage, no_comparison


def _ladder_settings(profile: str, encoder: str | None = None) -> dict:
    from markeval.encoders.loading import DEFAULT_MODEL_NAME
    from markeval.experiments.ranking import CE_ORDER, DEFAULT_K

    ci = profile == "ci"
    return {"n": 100 if ci else 1000, "seed": 0, "rounds": 3 if ci else 10, "fraction": 0.8,
            "prd_runs": 2 if ci else 10, "ks": [1, 2, 3, 5, 10], "default_k": dict(DEFAULT_K),
            # SmolLM2-135M writes 100 sentences in about 2-3 min on this CPU: the ci rungs come
            # from the package cache; 3 x 1000 would take well over an hour, so full skips them.
            "smollm2": "cache" if ci else "skip",
            "encoder": encoder or DEFAULT_MODEL_NAME, "ce_order": CE_ORDER}


def _ladder_units(settings: dict) -> list[str]:
    check_ladder_settings(settings)
    return [f"round-{r:03d}" for r in range(settings["rounds"] + 1)]


def _ladder_compute(unit: str, settings: dict) -> pd.DataFrame:
    if not unit.startswith("round-"):
        raise ValueError(f"unknown unit {unit!r}: ladder units are round-000, round-001, ...")
    return ladder_unit_rows(int(unit[len("round-"):]), settings)


def _ladder_stage(encoder: str | None = None, suffix: str = "", recent: bool = False) -> Stage:
    model = "" if encoder is None else f" with {encoder.split('/')[-1]}"
    if recent:
        title = f"The generator ladder scored by MAUVE, density/coverage and Vendi{model} (BBC)"
    elif encoder is None:
        title = "Mark-Evaluate Table 1 analogue: metrics against a generator ladder (BBC News)"
    else:
        title = f"Mark-Evaluate Tables 1 and 4 analogue{model} (BBC News)"
    return Stage(
        name=f"ladder{suffix}{'_recent' if recent else ''}", title=title,
        settings=lambda profile: (_with_recent if recent else dict)(
            _ladder_settings(profile, encoder)),
        units=_ladder_units, compute=_ladder_compute,
        # the paper has no number for the recent metrics
        compare=no_comparison if recent else ladder_comparison,
        prepare=lambda settings: ladder_inputs(settings["n"], settings["seed"],
                                               settings["smollm2"], settings["encoder"]),
        # in full a round encodes every generator's 1,000 sentences and scores them all,
        # minutes with MiniLM, more with mpnet's 12 layers: the consistency test recomputes
        # round 1 for its last generator at the default Ks (the rows of one generator and one
        # K do not depend on the others'; the earlier generators' subsets are still drawn)
        check_units=lambda settings: ["round-000", "round-001"] if settings["n"] <= 100
        else ["round-001"],
        check_narrowing=lambda settings: {} if settings["n"] <= 100 else {
            "ks": sorted(set(settings["default_k"].values())),
            "only": generator_names(settings)[-1:]},
        # float32 vectors differ between CPUs in the last bits; a k-NN score then steps by
        # 1/n when two neighbours swap (and a point moves to the next k-means bucket): the ci
        # rounds hold >= 80 sentences per set
        tolerance=1.5e-2, selection=("rounds",), parallel=True)


def _with_recent(settings: dict) -> dict:
    """``settings`` scoring only the metrics published after Mark-Evaluate (the recent
    stages, at the end of this module)."""
    from markeval.experiments.sensitivity import recent_set_metric_names

    return {**settings, "metrics": list(recent_set_metric_names())}


#: MiniLM (the book's encoder) and all-mpnet-base-v2 (Mark-Evaluate Table 4's question: does
#: the encoder change the ranking of the metrics?).
_MPNET = "sentence-transformers/all-mpnet-base-v2"
STAGES = (_ladder_stage(), _ladder_stage(_MPNET, "_mpnet"))


# ------------------------------------------------------------------------- sensitivity
# Stages ``sensitivity`` (K sweep, mode collapse) and ``word_swap``: Mark-Evaluate's
# synthetic experiments (§3 Fig. 2, §4 Figs. 3-4).
#
# Units: ``k_sweep/K=07`` (every ME estimator at one K), ``mode_collapse/seed=1/step=3`` and
# ``word_swap/seed=0/p=0.3`` (every metric of :mod:`markeval.experiments.sensitivity` at one
# step of one seed). The sets are those of the sensitivity chapter: a reference from BBC half
# 'a', the pool from half 'b' (:func:`markeval.experiments.sensitivity.bbc_sets`), MiniLM
# embeddings (disk-cached). The paper prints figures, not numbers: the stage adds nothing to
# ``paper_comparison.csv``; the chapter compares with what the paper says it observed. What a
# unit computes is the study's own
# (:func:`markeval.experiments.sensitivity.sensitivity_unit_rows`).


def _sensitivity_settings(profile: str) -> dict:
    from markeval.encoders.loading import DEFAULT_MODEL_NAME

    ci = profile == "ci"
    return {"n_collapse": 200 if ci else 4000, "n_swap": 200 if ci else 10000,
            "pool_per_topic": 200 if ci else None, "data_seed": 0,
            "seeds": [0, 1] if ci else [0, 1, 2],
            "ps": [0.0, 0.5, 1.0] if ci else [i / 10 for i in range(11)],
            "ks": [1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 40] if ci else list(range(1, 41)),
            "me_k": 1, "ipr_k": 3, "prd_runs": 10, "encoder": DEFAULT_MODEL_NAME}


def _n_topics() -> int:
    from markeval.datasets import BBC_TOPICS

    return len(BBC_TOPICS)


_EXPERIMENTS = ("k_sweep", "mode_collapse", "word_swap")


def _sensitivity_units(settings: dict, experiments=_EXPERIMENTS) -> list[str]:
    for key in ("seeds", "ps", "ks"):
        if not settings[key]:
            raise ValueError(f"{key} must not be empty")
    if any(not 0 <= p <= 1 for p in settings["ps"]):
        raise ValueError(f"every p must be in [0, 1], got {settings['ps']}")
    if any(not isinstance(k, int) or k < 1 for k in settings["ks"]):
        raise ValueError(f"ks must be ints >= 1, got {settings['ks']}")
    units = ([f"k_sweep/K={k:02d}" for k in settings["ks"]]
             + [f"mode_collapse/seed={s}/step={j}" for s in settings["seeds"]
                for j in range(_n_topics())]
             + [f"word_swap/seed={s}/p={p:g}" for s in settings["seeds"] for p in settings["ps"]])
    return [u for u in units if u.split("/")[0] in experiments]


def _parse_unit(unit: str) -> tuple[str, dict]:
    experiment, *parts = unit.split("/")
    try:
        fields = dict(part.split("=", 1) for part in parts)
    except ValueError:
        fields = None
    if experiment not in ("k_sweep", "mode_collapse", "word_swap") or fields is None:
        raise ValueError(f"unknown unit {unit!r}: sensitivity units are k_sweep/K=.., "
                         "mode_collapse/seed=../step=.., word_swap/seed=../p=..")
    return experiment, fields


def _sensitivity_compute(unit: str, settings: dict) -> pd.DataFrame:
    if unit not in _sensitivity_units(settings):
        _parse_unit(unit)  # a malformed unit is named as such
        raise ValueError(f"unit {unit!r} is not one of this profile's units")
    return sensitivity_unit_rows(*_parse_unit(unit), settings)


# Two stages over one settings dict, so that the long word swap (a full unit re-encodes 10,000
# sentences) can be scheduled, and resumed, apart from the K sweep and mode collapse.
STAGES = STAGES + (
    Stage(name="sensitivity",
          title="Mark-Evaluate Figs. 2-3 analogues: K sweep and mode collapse (BBC)",
          settings=_sensitivity_settings,
          units=lambda settings: _sensitivity_units(settings, ("k_sweep", "mode_collapse")),
          compute=_sensitivity_compute, compare=no_comparison,
          check_units=lambda settings: ["k_sweep/K=01", "mode_collapse/seed=0/step=4"],
          # one neighbour swapped by another CPU's last bits moves a ci score by 1/200
          tolerance=1e-2, parallel=True, prepare=encode_sensitivity_sets, row_format=2),
    Stage(name="word_swap",
          title="Mark-Evaluate Fig. 4 analogue: word swap (BBC)",
          settings=_sensitivity_settings,
          units=lambda settings: _sensitivity_units(settings, ("word_swap",)),
          compute=_sensitivity_compute, compare=no_comparison,
          # in full, p = 0: the 10,000-sentence sets are scored, none is re-encoded
          check_units=lambda settings: (["word_swap/seed=1/p=0.5"]
                                        if settings["n_swap"] <= 200 else
                                        ["word_swap/seed=0/p=0"]),
          tolerance=1e-2, parallel=True, prepare=encode_sensitivity_sets,  # as "sensitivity"
          row_format=2),
)


# ------------------------------------------------------------------------- recent metrics
# Stages ``ladder_recent``, ``mode_collapse_recent`` and ``word_swap_recent``: the metrics
# published after Mark-Evaluate (MAUVE, MAUVE*, the frontier integral, density, coverage,
# Vendi: :func:`markeval.experiments.sensitivity.recent_set_metric_names`) on the very sets of
# the stages above (the same settings, subsets and seeds), in rows of the same shape, so that
# a chapter sets them beside the paper's metrics without the paper's stages being rerun. The
# paper has no number for them: they add nothing to ``paper_comparison.csv``.


STAGES = STAGES + (
    _ladder_stage(recent=True), _ladder_stage(_MPNET, "_mpnet", recent=True),
    Stage(name="mode_collapse_recent",
          title="Mode collapse scored by MAUVE, density/coverage and Vendi (BBC)",
          settings=lambda profile: _with_recent(_sensitivity_settings(profile)),
          units=lambda settings: _sensitivity_units(settings, ("mode_collapse",)),
          compute=_sensitivity_compute, compare=no_comparison,
          check_units=lambda settings: ["mode_collapse/seed=0/step=4"],
          tolerance=1.5e-2, parallel=True, prepare=encode_sensitivity_sets, row_format=2),
    Stage(name="word_swap_recent",
          title="Word swap scored by MAUVE, density/coverage and Vendi (BBC)",
          settings=lambda profile: _with_recent(_sensitivity_settings(profile)),
          units=lambda settings: _sensitivity_units(settings, ("word_swap",)),
          compute=_sensitivity_compute, compare=no_comparison,
          check_units=lambda settings: (["word_swap/seed=1/p=0.5"]
                                        if settings["n_swap"] <= 200 else
                                        ["word_swap/seed=0/p=0"]),
          tolerance=1.5e-2, parallel=True, prepare=encode_sensitivity_sets, row_format=2),
)
