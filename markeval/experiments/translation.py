"""System- and segment-level meta-evaluation on WMT-style data (WMT17 DA by default).

* **System level** (Mark-Evaluate Tables 2, 5, 6): each system's metric score on its whole
  output (or on one fixed subset of sentences, the same for every system) against the official
  DA system score; one Pearson r per language pair, averaged over pairs.
* **Segment level** (MoverScore Table 1): a sentence metric's score of each judged segment
  against the segment's DA score; absolute Pearson r per pair.
* **Are two metrics different?** Williams' test on the same items, as the WMT metrics tasks do
  (:func:`markeval.experiments.human_correlation.williams_test`).

Metrics enter as plain callables over texts, so lexical, embedding and set-level metrics (FID,
PRD, Mark-Evaluate on a system's sentences against the references) fit the same tables:
``corpus_metric(hypotheses, references) -> float`` for a system,
``sentence_metric(hypotheses, references) -> scores`` for segments. A callable that computes
several scores at once (BERTScore's P, R and F; the four Mark-Evaluate scores of one geometry)
returns a mapping ``{label: value}`` instead, and each entry becomes the metric
``"<name> <label>"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from tqdm import tqdm

from markeval._checks import check_bool, check_choice, check_int, check_probability, check_seed
from markeval._rowwise import pearson_rows
from markeval.datasets import (load_wmt17, wmt17_da_segments, wmt17_da_systems,
                               wmt17_system_match)
from markeval.experiments.human_correlation import undefined_reason, williams_test
from markeval.experiments.vocabulary import LONG_COLUMNS, REGISTRY_KEYS, oriented_scores
from markeval.stats import correlation, pearson

__all__ = ["correlations_by_pair", "every_sentence_as_one_size", "metric_agreement",
           "sample_size_curve", "seed_band", "seed_correlations", "segment_correlations",
           "segment_level_scores", "segment_long", "segment_set_correlations", "segment_set_means",
           "sentence_subset", "system_correlations", "system_level_scores", "system_long"]


def sentence_subset(n_sentences: int, size: int | None, *, seed: int = 0) -> np.ndarray:
    """A fixed random subset of sentence indices, the same for every system of a pair.

    Parameters
    ----------
    n_sentences : int
        Sentences in the test set.
    size : int or None
        Subset size; None (or ``size >= n_sentences``) keeps every sentence.
    seed : int, default 0

    Returns
    -------
    numpy.ndarray
        Sorted 0-based indices.

    Examples
    --------
    >>> sentence_subset(10, 4).tolist()
    [2, 4, 5, 7]
    >>> sentence_subset(3, None).tolist()
    [0, 1, 2]
    """
    seed = check_seed(seed)
    if size is None or size >= n_sentences:
        return np.arange(n_sentences)
    check_int(size, "size", minimum=1, why="size must be a positive int or None")
    return np.sort(np.random.default_rng(seed).choice(n_sentences, size=size, replace=False))


def _expand(name: str, value) -> list[tuple[str, object]]:
    """One metric's result as (metric name, value) rows: a mapping gives one row per label."""
    if isinstance(value, Mapping):
        if not value:
            raise ValueError(f"metric {name!r} returned an empty mapping")
        return [(f"{name} {label}", v) for label, v in value.items()]
    return [(name, value)]


def _check_metrics(metrics: Mapping[str, Callable]) -> None:
    if not isinstance(metrics, Mapping) or not metrics:
        raise TypeError("metrics must be a non-empty mapping of name -> callable")
    for name, fn in metrics.items():
        if not callable(fn):
            raise TypeError(f"metric {name!r} must be callable, got {type(fn).__name__}")


def system_level_scores(pair: str, metrics: Mapping[str, Callable[[list[str], list[str]], float]],
                        *, subset: Sequence[int] | None = None, detokenize: bool = True,
                        progress: bool = True) -> pd.DataFrame:
    """Score every DA-judged system of one WMT17 pair with each corpus metric.

    Parameters
    ----------
    pair : str
        E.g. ``'de-en'``.
    metrics : mapping of str to callable
        ``metric(hypotheses, references) -> float`` for one system's output, or a mapping
        ``{label: float}`` for several scores from one computation (metric ``"name label"``).
    subset : sequence of int, optional
        0-based sentence indices to score (the same for every system), e.g. from
        :func:`sentence_subset`; default all sentences.
    detokenize : bool, default True
        Moses-detokenize outputs and references first, as the MoverScore authors did
        (the files are tokenized).
    progress : bool, default True
        A tqdm bar over systems.

    Returns
    -------
    pandas.DataFrame
        One row per (system, metric): ``pair``, ``system`` (DA name), ``metric``, ``score``,
        ``human`` (official DA system score).
    """
    _check_metrics(metrics)
    data = load_wmt17(pair, detokenize=detokenize)
    rows_idx = np.arange(len(data.references)) if subset is None else np.asarray(subset, int)
    if rows_idx.size == 0 or rows_idx.min() < 0 or rows_idx.max() >= len(data.references):
        raise ValueError(f"subset must hold indices in [0, {len(data.references)}), "
                         f"got {rows_idx.size} indices")
    references = [data.references[i] for i in rows_idx]
    match = wmt17_system_match(pair).mapping
    human = wmt17_da_systems(pair)
    rows = []
    for system, score in tqdm(list(zip(human["system"], human["score"])), disable=not progress,
                              desc=f"{pair} systems"):
        outputs = data.systems[match[system]]
        hypotheses = [outputs[i] for i in rows_idx]
        for name, fn in metrics.items():
            for metric, value in _expand(name, fn(hypotheses, references)):
                rows.append((pair, system, metric, float(value), float(score)))
    return pd.DataFrame(rows, columns=["pair", "system", "metric", "score", "human"])


def segment_level_scores(pair: str, metrics: Mapping[str, Callable[[list[str], list[str]],
                                                                   Sequence[float]]], *,
                         subset: Sequence[int] | None = None,
                         detokenize: bool = True) -> pd.DataFrame:
    """Score each DA-judged segment of one WMT17 pair with each sentence metric.

    Parameters
    ----------
    pair : str
    metrics : mapping of str to callable
        ``metric(hypotheses, references) -> scores``, one score per segment (called once with
        all segments, so it can batch), or a mapping ``{label: scores}`` (metric
        ``"name label"``).
    subset : sequence of int, optional
        0-based positions of the judged segments to score (e.g. ``sentence_subset(560, 150)``);
        default all.
    detokenize : bool, default True

    Returns
    -------
    pandas.DataFrame
        One row per (segment, metric): ``pair``, ``sid``, ``system``, ``metric``, ``score``,
        ``human`` (standardised DA score).
    """
    _check_metrics(metrics)
    seg = wmt17_da_segments(pair, with_text=True, detokenize=detokenize)
    if subset is not None:
        idx = np.asarray(subset, int)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= len(seg):
            raise ValueError(f"subset must hold positions in [0, {len(seg)}), got {idx.size} "
                             "positions")
        seg = seg.iloc[idx].reset_index(drop=True)
    hyps, refs = seg["hypothesis"].tolist(), seg["reference"].tolist()
    frames = []
    for name, fn in metrics.items():
        for metric, values in _expand(name, fn(hyps, refs)):
            scores = np.asarray(values, dtype=np.float64)
            if scores.shape != (len(seg),):
                raise ValueError(f"metric {metric!r} returned {scores.size} scores for "
                                 f"{len(seg)} segments: it must return one per segment")
            frames.append(pd.DataFrame({"pair": pair, "sid": seg["sid"], "system": seg["system"],
                                        "metric": metric, "score": scores,
                                        "human": seg["score"]}))
    return pd.concat(frames, ignore_index=True)


def _check_table(table: pd.DataFrame) -> None:
    needed = {"pair", "metric", "score", "human"}
    if not isinstance(table, pd.DataFrame) or not needed <= set(table.columns):
        raise TypeError(f"table must be a DataFrame with columns {sorted(needed)} (from "
                        "system_level_scores or segment_level_scores)")


def correlations_by_pair(table: pd.DataFrame, method: str = "pearson", *,
                         absolute: bool = False, n_resamples: int = 1000,
                         seed: int = 0, keys=()) -> pd.DataFrame:
    """Correlation of each metric with the human scores, per language pair.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`system_level_scores` or :func:`segment_level_scores` (several pairs may be
        concatenated).
    method : {'pearson', 'kendall', 'spearman'}
    absolute : bool, default False
        Report |r| (MoverScore Table 1 does, because some metrics are distances).
    n_resamples : int, default 1000
        Bootstrap resamples of the items (systems or segments) for the 95 % interval.
    seed : int, default 0
    keys : sequence of str, default ()
        Further columns of ``table`` that name the metric besides ``metric`` (its registry
        name, K and options: :data:`~markeval.experiments.vocabulary.REGISTRY_KEYS`), carried
        into the result after ``metric``.

    Returns
    -------
    pandas.DataFrame
        One row per (pair, metric): ``value``, ``ci_low``, ``ci_high``, ``n`` and
        ``undefined`` — empty, or why the correlation does not exist (a metric that gives every
        system the same score), in which case the numbers are NaN. With ``absolute`` an
        interval that straddles 0 becomes [0, max(|low|, |high|)].
    """
    _check_table(table)
    absolute = check_bool(absolute, "absolute")
    keys = list(keys)
    missing = sorted(set(keys) - set(table.columns))
    if missing:
        raise ValueError(f"keys {missing} are not columns of table")
    rows = []
    for (pair, name), group in table.groupby(["pair", "metric"], sort=False):
        named = (pair, name, *group[keys].iloc[0])
        x, y = group["score"].to_numpy(float), group["human"].to_numpy(float)
        reason = undefined_reason(x, y)
        if reason is not None:
            rows.append((*named, np.nan, np.nan, np.nan, len(group), reason))
            continue
        c = correlation(x, y, method, n_resamples=n_resamples, seed=seed)
        value, low, high = c.value, c.ci_low, c.ci_high
        if absolute:
            ends = sorted((abs(low), abs(high)))
            low, high = (0.0 if low < 0 < high else ends[0]), ends[1]
            value = abs(value)
        rows.append((*named, value, low, high, c.n, ""))
    return pd.DataFrame(rows, columns=["pair", "metric", *keys, "value", "ci_low", "ci_high",
                                       "n", "undefined"])


def metric_agreement(table: pd.DataFrame, *, alpha: float = 0.05,
                     absolute: bool = False) -> pd.DataFrame:
    """Williams' test for every ordered pair of metrics within each language pair.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`system_level_scores` or :func:`segment_level_scores`; the items of a pair
        (systems, or (system, segment)) must be the same for every metric.
    alpha : float, default 0.05
    absolute : bool, default False
        Compare the sizes of the correlations, ``|r_a| > |r_b|`` (the reading of an
        absolute-correlation table such as MoverScore Table 1; see
        :func:`~markeval.experiments.human_correlation.williams_test`).

    Returns
    -------
    pandas.DataFrame
        One row per (pair, metric_a, metric_b) with ``r_a``, ``r_b`` (Pearson with the
        human scores), ``r_ab``, ``t``, ``p_value`` (H1: metric_a correlates more strongly),
        ``significant`` (p < alpha) and ``undefined``: empty, or why the test does not exist
        for these two metrics (a constant metric; two metrics that are exact negations of
        each other, compared with their signs), in which case ``t`` and ``p_value`` are NaN
        and ``significant`` is False. Both orders of each two metrics are listed.
    """
    _check_table(table)
    alpha = check_probability(alpha, "alpha")
    absolute = check_bool(absolute, "absolute")
    key = ["system", "sid"] if "sid" in table.columns else ["system"]
    rows = []
    for pair, group in table.groupby("pair", sort=False):
        wide = group.pivot_table(index=key, columns="metric", values="score", sort=False)
        human = group.drop_duplicates(key).set_index(key)["human"].reindex(wide.index)
        if wide.isna().any().any():
            raise ValueError(f"pair {pair}: the metrics were not scored on the same items")
        human = human.to_numpy(float)
        scores = {m: wide[m].to_numpy(float) for m in wide.columns}
        flat = {m: undefined_reason(x, human) for m, x in scores.items()}
        r_h = {m: np.nan if flat[m] else float(np.corrcoef(x, human)[0, 1])
               for m, x in scores.items()}
        for a, b in combinations(wide.columns, 2):
            both_defined = not (flat[a] or flat[b])
            r_ab = float(np.corrcoef(scores[a], scores[b])[0, 1]) if both_defined else np.nan
            for x, y in ((a, b), (b, a)):
                t = p_value = np.nan
                reason = f"{x}: {flat[x]}" if flat[x] else (f"{y}: {flat[y]}" if flat[y] else "")
                if not reason:
                    try:
                        res = williams_test(r_h[x], r_h[y], r_ab, n=len(wide), absolute=absolute)
                        t, p_value = res.t, res.p_value
                    except ValueError as err:  # a degenerate pair: reported, like a flat metric
                        reason = str(err)
                rows.append((pair, x, y, r_h[x], r_h[y], r_ab, t, p_value,
                             bool(p_value < alpha), reason))
    return pd.DataFrame(rows, columns=["pair", "metric_a", "metric_b", "r_a", "r_b", "r_ab", "t",
                                       "p_value", "significant", "undefined"])


# --------------------------------------------------------------------------------------------
# Reading the reproduction's WMT17 rows (markeval.reproduce: the stages wmt17_segment,
# wmt17_system, wmt17_segment_sets and wmt17_prd_seeds)


def segment_long(rows: pd.DataFrame) -> pd.DataFrame:
    """Segment-level result rows (``pair``, ``sid``, ``system``, ``human`` and the columns of
    :mod:`markeval.experiments.vocabulary`: the stage ``wmt17_segment``) as the table of
    :func:`segment_level_scores`, each metric under its label, with its registry keys
    (:data:`~markeval.experiments.vocabulary.REGISTRY_KEYS`)."""
    return oriented_scores(rows.reset_index(drop=True), keys=("pair", "sid", "system", "human")
                           )[["pair", "sid", "system", "metric", "score", "human",
                              *REGISTRY_KEYS]]


def segment_correlations(rows: pd.DataFrame, n_resamples: int = 0, seed: int = 0
                         ) -> pd.DataFrame:
    """|Pearson r| of each metric with segment DA per pair (with bootstrap intervals), the
    metric by its label and its registry keys."""
    return correlations_by_pair(segment_long(rows), absolute=True, n_resamples=n_resamples,
                                seed=seed, keys=REGISTRY_KEYS)


def system_long(rows: pd.DataFrame, level: str, size: int | None = None, draw: int = 0
                ) -> pd.DataFrame:
    """System-level result rows (the stage ``wmt17_system``: ``pair``, ``system``, ``level``,
    ``size``, ``draw``, ``human`` and the columns of :mod:`markeval.experiments.vocabulary`)
    of one granularity as the table of :func:`system_level_scores`, each metric under its
    oriented label (:func:`~markeval.experiments.vocabulary.oriented_scores`).

    ``level='sentence'``: the set metrics on sentence vectors, with BLEU, BERTScore and
    MoverScore of all scored sentences. ``level='word'``: the word-level units of one
    ``size`` (default the largest) and ``draw``.
    """
    part = rows[rows.level == level]
    if level == "word":
        size = int(part["size"].max()) if size is None else size
        part = part[(part["size"] == size) & (part["draw"] == draw)]
    table = oriented_scores(part.reset_index(drop=True))
    return table[["pair", "system", "metric", "score", "human", *REGISTRY_KEYS]]


def system_correlations(rows: pd.DataFrame, level: str, size: int | None = None,
                        draw: int = 0, n_resamples: int = 0, seed: int = 0) -> pd.DataFrame:
    """Pearson r with system DA per pair and metric (see :func:`system_long`), the metric by
    its label and its registry keys."""
    return correlations_by_pair(system_long(rows, level, size, draw), n_resamples=n_resamples,
                                seed=seed, keys=REGISTRY_KEYS)


def sample_size_curve(rows: pd.DataFrame, *, level: str = "word", n_resamples: int = 1000,
                      confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per size and draw of ``level``'s rows (``"word"``: word samples, ``"sentence"``:
    sentence vectors), each metric's Pearson r averaged over the pairs.

    ``ci_low`` and ``ci_high`` bound a percentile bootstrap interval of that average: the
    systems of every pair are resampled with replacement (the same resample for every metric, one
    independent stream per pair), each pair's r recomputed and the pairs averaged again. It
    measures the uncertainty from having 4 to 16 systems per pair; the spread over draws
    measures the choice of sentences. Resamples in which a pair's r is undefined (every
    drawn system the same) are dropped.

    Examples
    --------
    >>> rows = pd.DataFrame({"level": "word", "size": 25, "draw": 0, "pair": "xx-en",
    ...                      "system": list("abcd"), "metric": "bleu", "k": None, "options": "",
    ...                      "value": [1.0, 2.0, 3.0, 5.0], "human": [1.0, 2.0, 3.0, 4.0]})
    >>> c = sample_size_curve(rows, n_resamples=200)
    >>> c.metric.iloc[0], round(float(c["average r"].iloc[0]), 4)
    ('BLEU', 0.9827)
    >>> bool(c.ci_low.iloc[0] <= c["average r"].iloc[0])
    True
    """
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1)
    seed = check_seed(seed)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    check_choice(level, "level", ("word", "sentence"))
    at_level = rows[rows.level == level]
    tail = (1 - confidence) / 2
    out = []
    for (size, draw), part in at_level.groupby(["size", "draw"]):
        scores = system_long(part, level, int(size), int(draw))
        corr = correlations_by_pair(scores, n_resamples=0)
        mean = corr.groupby("metric", sort=False).value.mean()
        replicates = np.zeros((len(mean), n_resamples))
        for i, (pair, table) in enumerate(scores.groupby("pair", sort=True)):
            wide = table.pivot(index="system", columns="metric", values="score")[mean.index]
            human = table.groupby("system").human.first()[wide.index].to_numpy(float)
            pick = np.random.default_rng([seed, i]).integers(0, len(wide),
                                                             size=(n_resamples, len(wide)))
            x = wide.to_numpy(float).T[:, pick]  # (metric, resample, system)
            y = np.broadcast_to(human[pick], x.shape)
            replicates += pearson_rows(x.reshape(-1, x.shape[-1]),
                                       y.reshape(-1, x.shape[-1])).reshape(x.shape[:2])
        replicates /= part["pair"].nunique()
        low, high = (np.array([np.quantile(r[np.isfinite(r)], q) if np.isfinite(r).any()
                               else np.nan for r in replicates]) for q in (tail, 1 - tail))
        out.append(pd.DataFrame({"size": int(size), "draw": int(draw), "metric": mean.index,
                                 "average r": mean.to_numpy(), "ci_low": low, "ci_high": high}))
    return pd.concat(out, ignore_index=True)


def every_sentence_as_one_size(rows: pd.DataFrame,
                               sentences: Mapping[str, int]) -> pd.DataFrame:
    """Rows scored on every sentence of their pair, as one size of :func:`sample_size_curve`.

    Such a row's ``size`` is its pair's sentence count, which differs between pairs (WMT17:
    2,001 for zh-en, about 3,000 for the others), so the curve would read them as a one-pair
    size each. A row is taken to hold every sentence when its ``size`` equals (or exceeds)
    ``sentences[pair]``; those rows get ``size = max(sentences.values())``, the curve's
    position for "all", and every other row is returned as it is.

    Parameters
    ----------
    rows : pandas.DataFrame
        Long rows with ``pair`` and ``size`` (as :func:`sample_size_curve` takes).
    sentences : mapping of str to int
        Each pair's sentence count; every pair of ``rows`` must be a key.

    Examples
    --------
    >>> rows = pd.DataFrame({"pair": ["xx-en", "xx-en", "yy-en"], "size": [25, 300, 200]})
    >>> every_sentence_as_one_size(rows, {"xx-en": 300, "yy-en": 200})["size"].tolist()
    [25, 300, 300]
    """
    missing = sorted(set(rows["pair"]) - set(sentences))
    if missing:
        raise ValueError(f"sentences has no count for the pairs {missing}")
    full = rows["pair"].map(sentences)
    return rows.assign(size=rows["size"].where(rows["size"] < full, max(sentences.values())))


def segment_set_means(rows: pd.DataFrame) -> pd.DataFrame:
    """Per-segment set metrics (the stage ``wmt17_segment_sets``: each unit's mean over its
    segments, with ``segments``) as one mean per system and metric over all its segments,
    the units' means weighted by their segments; the rule columns
    (:data:`~markeval.experiments.summarization.ADAPTATION_RULES`) are summed: the system's
    segments each rule touched.

    Returns the stage's columns but ``unit`` and ``profile``, one row per system and metric.
    """
    from markeval.experiments.word_set_metrics import ADAPTATION_RULES

    keys = ["pair", "system", "human", "encoder", "protocol", "metric", "k", "options"]
    rows = rows.assign(weighted=rows["value"] * rows["segments"], k=rows["k"].fillna(-1),
                       options=rows["options"].astype(object).fillna(""))
    out = rows.groupby(keys, sort=False)[["weighted", "segments", *ADAPTATION_RULES]].sum()
    out = out.reset_index()
    out["value"] = out.pop("weighted") / out["segments"]
    out["k"] = out["k"].where(out["k"] >= 0)
    return out[["pair", "system", "human", "segments", *ADAPTATION_RULES, *LONG_COLUMNS]]


def segment_set_correlations(rows: pd.DataFrame, ipr_k: int) -> pd.DataFrame:
    """Pearson r of every per-segment set metric (:func:`segment_set_means`) with system DA,
    per pair, IPR at ``ipr_k`` only (metrics by their
    :func:`~markeval.experiments.vocabulary.label` and registry keys)."""
    scores = segment_set_means(rows)
    scores = scores[(scores["metric"] != "ipr_precision") | (scores["k"] == ipr_k)]
    return correlations_by_pair(oriented_scores(scores), keys=REGISTRY_KEYS)


def seed_correlations(rows: pd.DataFrame) -> pd.DataFrame:
    """Pearson r of PRD precision with system DA, per pair, setting and seed (rows of the
    stage ``wmt17_prd_seeds``: ``pair``, ``system``, ``human``, ``clusters``, ``runs``,
    ``seed``, ``value``)."""
    out = []
    for (pair, clusters, runs, seed), part in rows.groupby(
            ["pair", "clusters", "runs", "seed"], sort=True):
        r = pearson(part["value"].to_numpy(), part["human"].to_numpy()).value
        out.append({"pair": pair, "clusters": clusters, "runs": runs, "seed": seed, "r": r})
    return pd.DataFrame(out)


def seed_band(rows: pd.DataFrame, confidence: float = 0.8) -> pd.DataFrame:
    """Per pair and setting (and the pairs' average): the median r over seeds and the band
    holding the central ``confidence`` of the seeds' r (their quantiles)."""
    corr = seed_correlations(rows)
    average = corr.groupby(["clusters", "runs", "seed"], as_index=False).r.mean().assign(
        pair="average")
    tail = (1 - confidence) / 2
    out = []
    for (pair, clusters, runs), part in pd.concat([corr, average]).groupby(
            ["pair", "clusters", "runs"], sort=False):
        r = part["r"].to_numpy()
        out.append({"pair": pair, "clusters": clusters, "runs": runs,
                    "median r": float(np.median(r)), "low": float(np.quantile(r, tail)),
                    "high": float(np.quantile(r, 1 - tail)), "seeds": len(r)})
    return pd.DataFrame(out)
