"""The generator-ladder study (Mark-Evaluate Tables 1 and 4 analogue), in one place.

Mark-Evaluate's Table 1 correlates eight metrics with human fluency ratings of ten generators;
those texts and ratings are not public. The analogue scores the ladder of
:mod:`markeval.experiments.generators` (generators of known order, built on BBC News) with
every metric of :mod:`markeval.experiments.ranking` and rank-correlates each metric with the
constructed orders (Kendall's τ pooled over the quality chains; Spearman's ρ and Pearson's r
averaged over them). The stages ``ladder`` and ``ladder_mpnet``
(:mod:`markeval.reproduce.stages`) choose settings and units; what a unit computes and how its
rows are set beside the paper's tables is here:

* the harness: :func:`ladder_inputs` (the ladder, its embeddings and the forward-CE judge,
  built once per process) and :func:`ladder_unit_rows` (one round's long rows);
* the tables: :func:`table1` (our Table 1 analogue, read by the chapter too) and
  :func:`ladder_comparison` (the lines of ``paper_comparison.csv``).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from markeval.paper_values import comparison_row

__all__ = ["TABLE1_COLUMNS", "TABLE1_ROWS", "TABLE4_ROWS", "check_ladder_settings",
           "generator_names", "ladder_comparison", "ladder_inputs", "ladder_unit_rows",
           "table1"]

#: Mark-Evaluate Table 1's columns -> our metric beside each (registry name). For the metrics
#: that give a pair, the paper reports the quality side (§5): PRD F_1/8, IPR precision, ME
#: Schnabel quality.
TABLE1_COLUMNS = {"Forward CE": "forward_ce", "Reverse CE": "reverse_ce", "FID": "fid",
                  "PRD": "prd_precision", "IMPAR": "ipr_precision",
                  "ME_Schnabel": "me_schnabel_quality", "ME_Petersen": "me_petersen",
                  "ME_CAPTURE": "me_capture"}
#: Mark-Evaluate Table 1's rows -> our statistic over the quality chains.
TABLE1_ROWS = {"Pearson r": "r", "Kendall k": "tau", "Spearman p": "rho"}
#: Mark-Evaluate Table 4's rows -> our statistic (its columns: Table 1's embedding metrics).
TABLE4_ROWS = {"r": "r", "k": "tau", "p": "rho"}


def check_ladder_settings(settings: dict) -> None:
    """Refuse ladder settings the study cannot run, naming the value."""
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


def ladder_inputs(n: int, seed: int, smollm2: str, encoder: str | None = None,
                  generators: tuple[str, ...] | None = None):
    """The ladder, the reference and generator embeddings, and the forward-CE judge.

    ``encoder`` names the sentence encoder (default: MiniLM); ``generators``, those whose
    sentences are encoded (default: every one). Built once per process for each distinct
    request, however it is spelt (the chapter, the units and the consistency check share it),
    and the ladder itself once for every encoder.

    Returns
    -------
    ladder : :class:`markeval.experiments.generators.Ladder`
    reference_embeddings : array (n, d)
    embeddings : dict generator -> array (n, d)
    ce : :class:`markeval.experiments.ranking.ForwardCE`
    """
    from markeval.encoders.loading import DEFAULT_MODEL_NAME

    return _ladder_inputs(int(n), int(seed), smollm2, encoder or DEFAULT_MODEL_NAME,
                          None if generators is None else tuple(generators))


@functools.lru_cache(maxsize=2)
def _ladder(n: int, seed: int, smollm2: str):
    from markeval.experiments.generators import build_ladder
    from markeval.experiments.ranking import ForwardCE

    ladder = build_ladder(n, seed=seed, smollm2=smollm2, progress=False)
    return ladder, ForwardCE(ladder.ce_text)


@functools.lru_cache(maxsize=4)
def _ladder_inputs(n: int, seed: int, smollm2: str, encoder: str,
                   generators: tuple[str, ...] | None):
    from markeval.datasets import cache_dir
    from markeval.encoders import sentence_embeddings

    ladder, ce = _ladder(n, seed, smollm2)
    names = list(ladder.generated) if generators is None else list(generators)
    texts = list(ladder.reference) + [t for g in names for t in ladder.generated[g]]
    emb = sentence_embeddings(texts, encoder, progress=False,
                              cache_dir=cache_dir() / "embeddings")
    gen_emb = {g: emb[n * (i + 1): n * (i + 2)] for i, g in enumerate(names)}
    return ladder, emb[:n], gen_emb, ce


def ladder_unit_rows(round_index: int, settings: dict) -> pd.DataFrame:
    """The rows of one ``ladder`` unit: every metric of :mod:`markeval.experiments.ranking`
    on round ``round_index`` (0: all sentences; later rounds: a random subset) of every
    generator (or those of ``settings["only"]``), at every K of the grid, long, protocol
    ``pooled``; with ``settings["metrics"]``, only those metrics (the recent metrics' stage)."""
    from markeval.experiments.ranking import CE_ORDER, score_round
    from markeval.experiments.vocabulary import LONG_COLUMNS, encoder_name

    check_ladder_settings(settings)
    if round_index > settings["rounds"]:
        raise ValueError(f"round {round_index}: the settings have {settings['rounds']} rounds")
    if settings["ce_order"] != CE_ORDER:
        raise ValueError(f"ce_order {settings['ce_order']} is not the code's {CE_ORDER}")
    # "only" (a check's narrowing) scores some generators; a round's units have none
    only = settings.get("only")
    ladder, ref_emb, gen_emb, ce = ladder_inputs(settings["n"], settings["seed"],
                                                 settings["smollm2"], settings["encoder"],
                                                 None if only is None else tuple(only))
    rows = score_round(ladder.generated, gen_emb, ladder.reference, ref_emb, ce, round_index,
                       ks=settings["ks"], fraction=settings["fraction"],
                       prd_runs=settings["prd_runs"], seed=settings["seed"], only=only,
                       metrics=settings.get("metrics"))
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
        Columns ``column`` (the paper's Table 1 column), ``metric`` (ours, by registry
        name), ``K choice``
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

    chains = len(present_chains(QUALITY_CHAINS, generator_names(settings)))
    k = {"none": "no K", "default": f"default K={row['K']}",
         "best": f"best K={row['K']} of {','.join(map(str, settings['ks']))}"}[row["K choice"]]
    encoder = settings["encoder"].split("/")[-1]
    return (f"{encoder}; ladder n={settings['n']}; constructed order, {chains} quality chains; "
            f"{k}")


def generator_names(settings: dict) -> list[str]:
    """The ladder's generators under ``settings`` (SmolLM2's rungs left out where skipped)."""
    from markeval.experiments.generators import GENERATORS

    return [g.name for g in GENERATORS
            if settings["smollm2"] != "skip" or not g.name.startswith("smollm2")]


def ladder_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Mark-Evaluate Table 1 (and, for another encoder, Table 4) beside our ladder's
    :func:`table1`."""
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
