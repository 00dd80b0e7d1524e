"""Unconditional generation: the generator ladder and the sensitivity experiments.

Two stages: ``ladder`` (Mark-Evaluate Table 1 analogue, below) and ``sensitivity`` (the K
sweep, mode collapse and word swap of Mark-Evaluate §3-4, further down).

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

The ladder, its embeddings (MiniLM, disk-cached) and the forward-CE language model are built
once per process (:func:`ladder_inputs`) and shared by the units and the chapter.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from markeval.paper_values import comparison_row
from markeval.reproduce.stage import Stage

#: Mark-Evaluate Table 1's columns -> this study's metric labels. For the metrics that give a
#: pair, the paper reports the quality side (§5): PRD F_1/8, IPR precision, ME Schnabel Q.
TABLE1_COLUMNS = {"Forward CE": "forward CE", "Reverse CE": "reverse CE", "FID": "FID",
                  "PRD": "PRD F1/8", "IMPAR": "IPR precision", "ME_Schnabel": "ME Schnabel Q",
                  "ME_Petersen": "ME Petersen", "ME_CAPTURE": "ME CAPTURE"}
#: Mark-Evaluate Table 1's rows -> our statistic over the quality chains.
TABLE1_ROWS = {"Pearson r": "r", "Kendall k": "tau", "Spearman p": "rho"}


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


def _check_ladder_settings(settings: dict) -> None:
    rounds, n, ks = settings["rounds"], settings["n"], settings["ks"]
    if not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be an int >= 0, got {rounds!r}")
    if not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    if not ks or any(not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"ks must be a non-empty list of ints >= 1, got {ks!r}")
    if max(ks) + 2 > round(settings["fraction"] * n):
        raise ValueError(f"the largest K ({max(ks)}) needs subsets of more than "
                         f"{max(ks) + 1} sentences; n={n} x fraction={settings['fraction']} "
                         "is too small")
    for family, k in settings["default_k"].items():
        if k not in ks:
            raise ValueError(f"the default K of {family} ({k}) is not in the grid {ks}")


def _ladder_units(settings: dict) -> list[str]:
    _check_ladder_settings(settings)
    return [f"round-{r:03d}" for r in range(settings["rounds"] + 1)]


@functools.lru_cache(maxsize=4)
def ladder_inputs(n: int, seed: int, smollm2: str, encoder: str | None = None,
                  generators: tuple[str, ...] | None = None):
    """The ladder, the reference and generator embeddings, and the forward-CE judge.

    ``encoder`` names the sentence encoder (default: MiniLM); ``generators``, those whose
    sentences are encoded (default: every one).

    Returns
    -------
    ladder : :class:`markeval.experiments.generators.Ladder`
    reference_embeddings : array (n, d)
    embeddings : dict generator -> array (n, d)
    ce : :class:`markeval.experiments.ranking.ForwardCE`
    """
    from markeval.datasets import cache_dir
    from markeval.encoders import sentence_embeddings
    from markeval.experiments.generators import build_ladder
    from markeval.experiments.ranking import ForwardCE

    ladder = build_ladder(n, seed=seed, smollm2=smollm2, progress=False)
    names = list(ladder.generated) if generators is None else list(generators)
    texts = list(ladder.reference) + [t for g in names for t in ladder.generated[g]]
    emb = sentence_embeddings(texts, encoder, progress=False,
                              cache_dir=cache_dir() / "embeddings")
    gen_emb = {g: emb[n * (i + 1): n * (i + 2)] for i, g in enumerate(names)}
    return ladder, emb[:n], gen_emb, ForwardCE(ladder.ce_text)


def _ladder_compute(unit: str, settings: dict) -> pd.DataFrame:
    from markeval.experiments.ranking import CE_ORDER, score_round

    _check_ladder_settings(settings)
    if not unit.startswith("round-"):
        raise ValueError(f"unknown unit {unit!r}: ladder units are round-000, round-001, ...")
    round_index = int(unit[len("round-"):])
    if round_index > settings["rounds"]:
        raise ValueError(f"unit {unit!r}: the settings have {settings['rounds']} rounds")
    if settings["ce_order"] != CE_ORDER:
        raise ValueError(f"ce_order {settings['ce_order']} is not the code's {CE_ORDER}")
    # "only" (a check's narrowing) scores some generators; a round's units have none
    only = settings.get("only")
    ladder, ref_emb, gen_emb, ce = ladder_inputs(settings["n"], settings["seed"],
                                                 settings["smollm2"], settings["encoder"],
                                                 None if only is None else tuple(only))
    from markeval.experiments.vocabulary import LONG_COLUMNS, encoder_name

    rows = score_round(ladder.generated, gen_emb, ladder.reference, ref_emb, ce, round_index,
                       ks=settings["ks"], fraction=settings["fraction"],
                       prd_runs=settings["prd_runs"], seed=settings["seed"], only=only)
    # the cross-entropies read the text, the rest the encoder's vectors; each generator's
    # sentences are one set
    text = rows["metric"].isin(["forward_ce", "reverse_ce"])
    rows = rows.assign(encoder=np.where(text, "", encoder_name(settings["encoder"])),
                       protocol="pooled", options="")
    return rows[["generator", *LONG_COLUMNS]]


def table1(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Our Table 1 analogue: per metric and K choice, pooled τ and mean ρ and r (all sentences).

    Returns
    -------
    pandas.DataFrame
        Columns ``column`` (the paper's Table 1 column), ``metric`` (ours), ``K choice``
        (``"default"``, ``"best"`` or ``"none"``), ``K``, ``r``, ``tau``, ``rho``, ``tau low``
        and ``tau high`` (2.5% and 97.5% quantiles of the pooled τ over the subset rounds;
        NaN without them).
    """
    from markeval.experiments.ranking import K_FAMILY, ladder_correlations, metric_best_k

    best = metric_best_k(rows, settings["ks"])
    choices = {"default": {m: settings["default_k"][f] for m, f in K_FAMILY.items()},
               "best": best}
    out = []
    for choice, ks in choices.items():
        corr = ladder_correlations(rows, ks)
        zero = corr[corr["round"] == 0]
        chains = zero[zero["chain"] != "pooled"].groupby("metric")[["r", "rho"]].mean()
        pooled = zero[zero["chain"] == "pooled"].set_index("metric")["tau"]
        rest = corr[(corr["round"] > 0) & (corr["chain"] == "pooled")].groupby("metric")["tau"]
        for column, metric in TABLE1_COLUMNS.items():
            has_k = metric in K_FAMILY
            if not has_k and choice == "best":
                continue
            low, high = ((rest.quantile(0.025)[metric], rest.quantile(0.975)[metric])
                         if len(rest.groups) else (np.nan, np.nan))
            out.append({"column": column, "metric": metric,
                        "K choice": choice if has_k else "none",
                        "K": ks[metric] if has_k else 0, "r": chains.loc[metric, "r"],
                        "tau": pooled[metric], "rho": chains.loc[metric, "rho"],
                        "tau low": low, "tau high": high})
    return pd.DataFrame(out)


def _ladder_setting(settings: dict, row) -> str:
    from markeval.experiments.generators import QUALITY_CHAINS
    from markeval.experiments.ranking import present_chains

    chains = len(present_chains(QUALITY_CHAINS, _generator_names(settings)))
    k = {"none": "no K", "default": f"default K={row['K']}",
         "best": f"best K={row['K']} of {','.join(map(str, settings['ks']))}"}[row["K choice"]]
    encoder = settings["encoder"].split("/")[-1]
    return (f"{encoder}; ladder n={settings['n']}; constructed order, {chains} quality chains; "
            f"{k}")


def _generator_names(settings: dict) -> list[str]:
    from markeval.experiments.generators import GENERATORS

    return [g.name for g in GENERATORS
            if settings["smollm2"] != "skip" or not g.name.startswith("smollm2")]


#: Mark-Evaluate Table 4's rows -> our statistic (its columns: Table 1's embedding metrics).
TABLE4_ROWS = {"r": "r", "k": "tau", "p": "rho"}


def _ladder_compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.encoders.loading import DEFAULT_MODEL_NAME

    out = []
    for row in table1(rows, settings).to_dict("records"):
        for paper_row, stat in TABLE1_ROWS.items():
            out.append(comparison_row("Mark-Evaluate", "Table 1", paper_row, row["column"],
                                      row[stat], _ladder_setting(settings, row)))
        # Table 4 repeats Table 1 at the default K with other sentence encoders; the
        # BERT-base-shaped all-mpnet-base-v2 stands beside its BERT-base SBERT (sSBERT).
        if (settings["encoder"] != DEFAULT_MODEL_NAME and row["K choice"] != "best"
                and row["column"] not in ("Forward CE", "Reverse CE")):
            for paper_row, stat in TABLE4_ROWS.items():
                out.append(comparison_row("Mark-Evaluate", "Table 4", paper_row,
                                          f"{row['column']} / sSBERT", row[stat],
                                          _ladder_setting(settings, row)))
    return pd.DataFrame(out)


def _ladder_stage(encoder: str | None = None, suffix: str = "") -> Stage:
    title = ("Mark-Evaluate Table 1 analogue: metrics against a generator ladder (BBC News)"
             if encoder is None else
             f"Mark-Evaluate Tables 1 and 4 analogue with {encoder.split('/')[-1]} (BBC News)")
    return Stage(
        name=f"ladder{suffix}", title=title,
        settings=lambda profile: _ladder_settings(profile, encoder), units=_ladder_units,
        compute=_ladder_compute, compare=_ladder_compare,
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
            "only": _generator_names(settings)[-1:]},
        # float32 vectors differ between CPUs in the last bits; a k-NN score then steps by
        # 1/n when two neighbours swap: the ci rounds hold >= 80 sentences per set
        tolerance=1.5e-2, selection=("rounds",), parallel=True)


#: MiniLM (the book's encoder) and all-mpnet-base-v2 (Mark-Evaluate Table 4's question: does
#: the encoder change the ranking of the metrics?).
STAGES = (_ladder_stage(), _ladder_stage("sentence-transformers/all-mpnet-base-v2", "_mpnet"))


# ------------------------------------------------------------------------- sensitivity
# Stages ``sensitivity`` (K sweep, mode collapse) and ``word_swap``: Mark-Evaluate's
# synthetic experiments (§3 Fig. 2, §4 Figs. 3-4).
#
# Units: ``k_sweep/K=07`` (every ME estimator at one K), ``mode_collapse/seed=1/step=3`` and
# ``word_swap/seed=0/p=0.3`` (every metric of :mod:`markeval.experiments.sensitivity` at one
# step of one seed). The sets are those of the sensitivity chapter: a reference from BBC half
# 'a', the pool from half 'b' (:func:`markeval.experiments.sensitivity.bbc_sets`), MiniLM
# embeddings (disk-cached). The paper prints figures, not numbers: the stage adds nothing to
# ``paper_comparison.csv``; the chapter compares with what the paper says it observed.

#: Columns of the stage's rows: ``experiment`` (k_sweep, mode_collapse, word_swap), ``seed``,
#: ``step``, ``level`` (K, topics kept, or p), ``kept`` (topics kept; "-" elsewhere),
#: ``quantity`` (``score``; the K sweep also gives each estimator's ``estimate`` and the
#: ``population`` it is divided by) and the columns of
#: :data:`markeval.experiments.vocabulary.LONG_COLUMNS` (protocol ``pooled``; ``k``: the
#: sweep's K, else the K of IPR and of the Mark-Evaluate scores).
SENSITIVITY_COLUMNS = ("experiment", "seed", "step", "level", "kept", "quantity",
                       "encoder", "protocol", "metric", "k", "options", "value")


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


@functools.lru_cache(maxsize=2)
def sensitivity_inputs(n_collapse: int, n_swap: int, pool_per_topic, data_seed: int):
    """The chapter's sets, embedded once per process.

    Returns a dict: ``reference`` and ``pool`` (mode collapse: texts, pool table with topics),
    ``ref_emb``, ``pool_emb``, ``ref_10k``, ``ref_10k_emb`` and ``evaluation`` (K sweep and
    word swap: reference texts and embeddings, evaluation texts), ``encode`` (the encoder).
    """
    from markeval.datasets import cache_dir
    from markeval.experiments.sensitivity import bbc_sets, default_encoder

    encode = default_encoder(cache_dir=cache_dir() / "embeddings", progress=False)
    reference, pool = bbc_sets(n_collapse, pool_per_topic=pool_per_topic, seed=data_seed)
    if n_swap == n_collapse:
        ref_10k, pool_10k = reference, pool
    else:
        ref_10k, pool_10k = bbc_sets(n_swap, pool_per_topic=pool_per_topic, seed=data_seed)
    pick = np.sort(np.random.default_rng(1).choice(len(pool_10k), n_swap, replace=False))
    evaluation = [pool_10k["sentence"].iloc[i] for i in pick]
    return {"reference": reference, "pool": pool, "ref_10k": ref_10k, "evaluation": evaluation,
            "encode": encode, "_cache": {}}


def _embedded(inputs: dict, key: str) -> np.ndarray:
    """Embeddings of one of the input sets, computed on first use."""
    cache = inputs["_cache"]
    if key not in cache:
        texts = {"ref": inputs["reference"], "pool": list(inputs["pool"]["sentence"]),
                 "ref_10k": inputs["ref_10k"], "evaluation": inputs["evaluation"]}[key]
        cache[key] = inputs["encode"](texts)
    return cache[key]


def _prepare_sensitivity(settings: dict) -> None:
    """Encode every set of both stages into the disk cache before the units fan out."""
    inputs = sensitivity_inputs(settings["n_collapse"], settings["n_swap"],
                                settings["pool_per_topic"], settings["data_seed"])
    for key in ("ref", "pool", "ref_10k", "evaluation"):
        _embedded(inputs, key)


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
    from markeval import registry
    from markeval.experiments.sensitivity import (METRICS, collapse_step, k_sweep, scores,
                                                  swapped_texts)
    from markeval.experiments.vocabulary import encoder_name

    if unit not in _sensitivity_units(settings):
        _parse_unit(unit)  # a malformed unit is named as such
        raise ValueError(f"unit {unit!r} is not one of this profile's units")
    experiment, fields = _parse_unit(unit)
    inputs = sensitivity_inputs(settings["n_collapse"], settings["n_swap"],
                                settings["pool_per_topic"], settings["data_seed"])
    options = {"me_k": settings["me_k"], "ipr_k": settings["ipr_k"],
               "prd_runs": settings["prd_runs"]}
    if experiment == "k_sweep":
        k = int(fields["K"])
        table = k_sweep(_embedded(inputs, "ref_10k"), _embedded(inputs, "evaluation"), [k],
                        progress=False, n_jobs=1)
        me = {info.part: info.name for info in registry.metrics(family="mark_evaluate")}
        rows = [{"seed": 0, "step": settings["ks"].index(k), "level": float(k), "kept": "-",
                 "quantity": what, "metric": me[r["estimator"]], "k": k,
                 "value": float(r[what])}
                for r in table.to_dict("records") for what in ("score", "estimate", "population")]
    else:
        seed = int(fields["seed"])
        if experiment == "mode_collapse":
            step = int(fields["step"])
            n = settings["n_collapse"]
            indices, kept = collapse_step(inputs["pool"]["topic"], n, seed, step)
            ref, cand = _embedded(inputs, "ref"), _embedded(inputs, "pool")[indices]
            level = float(_n_topics() - step)
        else:
            p = float(fields["p"])
            step, kept, n = settings["ps"].index(p), "-", settings["n_swap"]
            texts = inputs["evaluation"]
            ref = _embedded(inputs, "ref_10k")
            cand = (_embedded(inputs, "evaluation") if p == 0
                    else inputs["encode"](swapped_texts(texts, p, seed)))
            level = p
        values = scores(ref, cand, METRICS, fid_allow_singular=n <= ref.shape[1], seed=seed,
                        **options)
        k_of = {"mark_evaluate": settings["me_k"], "ipr": settings["ipr_k"]}
        rows = [{"seed": seed, "step": step, "level": level, "kept": kept, "quantity": "score",
                 "metric": metric, "k": k_of.get(registry.get(metric).family),
                 "value": float(value)} for metric, value in values.items()]
    rows = pd.DataFrame(rows).assign(experiment=experiment, protocol="pooled", options="",
                                     encoder=encoder_name(settings["encoder"]))
    return rows[list(SENSITIVITY_COLUMNS)]


def _sensitivity_compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.reproduce.stage import COMPARISON_COLUMNS

    return pd.DataFrame(columns=[c for c in COMPARISON_COLUMNS if c != "profile"])


# Two stages over one settings dict, so that the long word swap (a full unit re-encodes 10,000
# sentences) can be scheduled, and resumed, apart from the K sweep and mode collapse.
STAGES = STAGES + (
    Stage(name="sensitivity",
          title="Mark-Evaluate Figs. 2-3 analogues: K sweep and mode collapse (BBC)",
          settings=_sensitivity_settings,
          units=lambda settings: _sensitivity_units(settings, ("k_sweep", "mode_collapse")),
          compute=_sensitivity_compute, compare=_sensitivity_compare,
          check_units=lambda settings: ["k_sweep/K=01", "mode_collapse/seed=0/step=4"],
          # one neighbour swapped by another CPU's last bits moves a ci score by 1/200
          tolerance=1e-2, parallel=True, prepare=_prepare_sensitivity, row_format=2),
    Stage(name="word_swap",
          title="Mark-Evaluate Fig. 4 analogue: word swap (BBC)",
          settings=_sensitivity_settings,
          units=lambda settings: _sensitivity_units(settings, ("word_swap",)),
          compute=_sensitivity_compute, compare=_sensitivity_compare,
          # in full, p = 0: the 10,000-sentence sets are scored, none is re-encoded
          check_units=lambda settings: (["word_swap/seed=1/p=0.5"]
                                        if settings["n_swap"] <= 200 else
                                        ["word_swap/seed=0/p=0"]),
          tolerance=1e-2, parallel=True, prepare=_prepare_sensitivity,  # as "sensitivity"
          row_format=2),
)
