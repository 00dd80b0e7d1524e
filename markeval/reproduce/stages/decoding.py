"""The decoding study of MAUVE's paper, on BBC News with SmolLM2-135M.

MAUVE's authors (Pillutla et al. 2021) compare decoding algorithms of one model by how close
their continuations of real prompts come to the human continuations. This stage scores the
packaged generations of :mod:`markeval.experiments.decoding` (six decodings of SmolLM2-135M
continuing 32-token openings of held-out BBC articles, 48 tokens each side) with every set
metric of the registry: Mark-Evaluate's four scores, PRD, IPR and FID (the paper's nine) and
MAUVE, MAUVE*, the frontier integral, density, coverage and Vendi. The paper's web-text
generations and human judgements are not available offline, and it is not among this book's
sources: the stage adds nothing to ``paper_comparison.csv``.

A unit is one *round*: ``round-000`` scores all ``n`` prompts, later rounds a random 80% of
them (the same prompts for every set, seeded by the round alone), for the intervals. What a
unit computes is the study's own (:func:`markeval.experiments.decoding.decoding_unit_rows`).
"""

from __future__ import annotations

from markeval.reproduce.stage import Stage, no_comparison

__all__ = ["STAGES"]


def _settings(profile: str) -> dict:
    from markeval.encoders.loading import DEFAULT_MODEL_NAME
    from markeval.experiments.sensitivity import PAPER_SET_METRICS, recent_set_metric_names

    ci = profile == "ci"
    return {"n": 200 if ci else 1000, "seed": 0, "rounds": 3 if ci else 10, "fraction": 0.8,
            "encoder": DEFAULT_MODEL_NAME,
            "metrics": [*PAPER_SET_METRICS, *recent_set_metric_names()],
            "me_k": 1, "ipr_k": 3, "prd_runs": 10}


def _units(settings: dict) -> list[str]:
    return [f"round-{r:03d}" for r in range(settings["rounds"] + 1)]


def _compute(unit: str, settings: dict):
    from markeval.experiments.decoding import decoding_unit_rows

    if unit not in _units(settings):
        raise ValueError(f"unknown unit {unit!r}: decoding units are round-000 to "
                         f"round-{settings['rounds']:03d}")
    return decoding_unit_rows(int(unit[len("round-"):]), settings)


STAGES = (Stage(
    name="decoding",
    title="MAUVE's decoding study: SmolLM2-135M decodings against human continuations (BBC)",
    settings=_settings, units=_units, compute=_compute, compare=no_comparison,
    check_units=lambda settings: ["round-001"],
    # float32 vectors differ between CPUs in the last bits: a neighbour swapped or a point
    # moved to the next k-means bucket steps a score by 1/n (n >= 160 prompts in a ci round)
    tolerance=1.5e-2, selection=("rounds",), parallel=True),)
