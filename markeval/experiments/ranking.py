"""Score a ladder of generators with every set metric and rank-correlate with the built order.

The Mark-Evaluate paper's Table 1 correlates metrics with human fluency ratings of ten
generators. Here the "human" column is replaced by orders fixed by construction
(:data:`markeval.experiments.generators.QUALITY_CHAINS` and ``DIVERSITY_CHAINS``): a metric
is good at quality if it ranks each chain in its built order.

Metrics, each oriented so that **higher is better** in the correlations (cross-entropies and
FID are negated there; the score tables keep their natural sign):

* forward CE (bits/token): a trigram Kneser–Ney LM trained on held-out real text scores the
  generated sentences (quality; Cífka et al. 2018);
* reverse CE: a trigram LM trained on the generated sentences scores the real reference set
  (coverage/diversity), with the vocabulary of the real text in both directions;
* FID, PRD (``F_1/8`` precision-like, ``F_8`` recall-like), IPR precision and recall, and ME
  Petersen, Schnabel quality, Schnabel diversity and CAPTURE, on sentence embeddings.

Uncertainty: the whole scoring is repeated on random subsets (a fraction of each generator's
sentences and of the reference set, drawn without replacement: k-NN metrics break on the
duplicates a with-replacement bootstrap makes); the interval is the percentile range of the
correlations over the rounds. Variation over generation seeds needs a new ladder per seed
(``build_ladder(n, seed=s)``, whose SmolLM2 rungs are then generated, not cached): concatenate
the score tables with distinct ``round`` numbers and the same functions apply.

Correlations per chain use :func:`markeval.stats.kendall` (τ-b) and
:func:`markeval.stats.spearman`. The pooled τ over all chains counts only the pairs that some
chain orders (a partial order): ``τ = (concordant − discordant) / pairs``, ties counting 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from markeval import registry
from markeval._checks import check_number, check_seed
from markeval._tolerance import constant
from markeval.experiments.parallel import run_units
from markeval.experiments.sensitivity import scores, set_metric_names
from markeval.lexical.ngram_lm import NGramLM
from markeval.stats import kendall, pearson, spearman

__all__ = ["DEFAULT_K", "K_FAMILY", "chain_correlations", "correlation_table",
           "embedding_metrics", "ladder_correlations", "ladder_metrics", "ladder_scores",
           "metric_best_k", "partial_order_tau", "present_chains", "score_generators",
           "score_round", "scores_at_k", "ForwardCE"]

# The order of this study's tables for the built-in metrics (registry names).
_TABLE_ORDER = ("forward_ce", "reverse_ce", "fid", "prd_precision", "prd_recall",
                "ipr_precision", "ipr_recall", "me_petersen", "me_schnabel_quality",
                "me_schnabel_diversity", "me_capture")
CE_ORDER = 3


def ladder_metrics() -> tuple[str, ...]:
    """The metrics the ladder scores, by registry name, in the order of its tables: the two
    cross-entropies and every metric of two embedding sets in :mod:`markeval.registry`, read
    when called (a metric added by :func:`markeval.registry.register` joins, after the
    built-in ones). Labels, orientation and what each is meant to measure come from the
    registry.

    Examples
    --------
    >>> ladder_metrics()[:3]
    ('forward_ce', 'reverse_ce', 'fid')
    """
    return (*_TABLE_ORDER, *(m for m in set_metric_names() if m not in _TABLE_ORDER))


def _in_table_order(present) -> list[str]:
    """The metrics of ``present`` in the order of the ladder's tables: :func:`ladder_metrics`,
    then any other registry metric (a recent one, scored by its own stage) in registry order."""
    present = set(present)
    order = [*ladder_metrics(), *(m for m in registry.names() if m not in ladder_metrics())]
    return [m for m in order if m in present]


def embedding_metrics(reference, candidate, *, k: int = 3, prd_runs: int = 5,
                      seed: int = 0) -> dict:
    """Every metric of two embedding sets (FID, PRD, IPR, Mark-Evaluate and any registered
    since) of ``candidate`` against ``reference``, in the order of :func:`ladder_metrics`.

    One call of :func:`markeval.experiments.sensitivity.scores` with ``k`` for both IPR and
    Mark-Evaluate, keyed by registry name. FID uses ``allow_singular=True`` when a
    set has no more rows than dimensions (the biased estimate: fine for ranking sets of equal
    size, not for absolute values).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ref, good, bad = rng.normal(size=(60, 4)), rng.normal(size=(60, 4)), rng.normal(size=(60, 4)) + 3
    >>> a, b = embedding_metrics(ref, good, prd_runs=1), embedding_metrics(ref, bad, prd_runs=1)
    >>> a["fid"] < b["fid"], a["me_petersen"] > b["me_petersen"]
    (True, True)
    """
    ref, cand = np.asarray(reference, dtype=np.float64), np.asarray(candidate, dtype=np.float64)
    singular = min(len(ref), len(cand)) <= ref.shape[1]
    sets = set_metric_names()
    return scores(ref, cand, [m for m in ladder_metrics() if m in sets], me_k=k, ipr_k=k,
                  prd_runs=prd_runs, fid_allow_singular=singular, seed=seed)


#: The metrics with a neighbour count K -> their family (``"ipr"`` or ``"me"``); the others
#: (cross-entropies, FID, PRD) have none and carry no ``k`` (NaN) in :func:`score_round`'s rows.
K_FAMILY = {name: ("ipr" if registry.get(name).family == "ipr" else "me")
            for name in _TABLE_ORDER if registry.get(name).family in ("ipr", "mark_evaluate")}
#: Each family's default K: IPR's own (Kynkäänniemi et al. use k = 3) and ME's K = 1, the one
#: value at which the Mark-Evaluate chapter found the scores still separate sets.
DEFAULT_K = {"ipr": 3, "me": 1}


def _tokens(texts) -> list[list[str]]:
    return [t.split() for t in texts]


class ForwardCE:
    """Forward and reverse cross-entropy against one real text, with the LM fitted once.

    Parameters
    ----------
    real_text : list of str
        Held-out real sentences: the forward LM learns from them, and they fix the
        vocabulary (``min_count=2``) of both directions.
    order : int, default 3

    Examples
    --------
    >>> real = ["the cat sat", "the dog sat", "a cat ran"] * 4
    >>> ce = ForwardCE(real, order=2)
    >>> ce.forward(["the cat sat"]) < ce.forward(["sat the cat"])
    True
    """

    def __init__(self, real_text, *, order: int = CE_ORDER):
        tokens = _tokens(real_text)
        self.order = order
        self.lm = NGramLM(order=order).fit(tokens)
        self.vocabulary = self.lm.vocabulary

    def sentence_nll(self, texts) -> tuple[np.ndarray, np.ndarray]:
        """Per-sentence negative log-likelihood (nats) and token count (``</s>`` included)."""
        lps = self.lm.token_logprobs(_tokens(texts))
        return np.array([-lp.sum() for lp in lps]), np.array([len(lp) for lp in lps])

    def forward(self, texts) -> float:
        """Forward CE of ``texts`` in bits per token (micro average)."""
        nll, n = self.sentence_nll(texts)
        return float(nll.sum() / n.sum() / math.log(2))

    def reverse(self, generated, real) -> float:
        """Reverse CE: an LM trained on ``generated`` scores ``real``, bits per token."""
        lm = NGramLM(order=self.order, vocabulary=self.vocabulary).fit(_tokens(generated))
        return lm.perplexity(_tokens(real)).cross_entropy_bits


def score_generators(generated: Mapping[str, Sequence[str]], embeddings: Mapping[str, np.ndarray],
                     reference: Sequence[str], reference_embeddings, ce: ForwardCE, *,
                     rounds: int = 0, fraction: float = 0.8, k: int = 3, prd_runs: int = 5,
                     seed: int = 0, progress: bool = True,
                     n_jobs: int | None = None) -> pd.DataFrame:
    """Every metric of every generator: on all sentences (round 0) and on ``rounds`` subsets.

    Parameters
    ----------
    generated : dict name -> list of str
        The same number ``n`` of sentences per generator.
    embeddings : dict name -> array (n, d)
        Their sentence embeddings, row ``i`` for sentence ``i``.
    reference, reference_embeddings
        The real reference set (``n`` sentences) and its embeddings.
    ce : ForwardCE
        Fitted on held-out real text that excludes the generators' real pool.
    rounds : int, default 0
        Extra rounds on random subsets of ``fraction`` of each set (without replacement).
    fraction : float, default 0.8
    k, prd_runs, seed
        As in :func:`embedding_metrics`; ``seed`` also draws the subsets.
    progress : bool, default True
    n_jobs : int or None, default None
        Worker processes for the embedding metrics, one (round, generator) each (None: one
        per core, or the workers of an active joblib backend; 1: serial). The subsets are
        drawn here, in the serial order, so the table is identical whatever ``n_jobs``.

    Returns
    -------
    pandas.DataFrame
        Columns ``round``, ``generator`` and one per metric of :func:`ladder_metrics`.
    """
    names = list(generated)
    if set(names) != set(embeddings):
        raise ValueError(f"generated and embeddings name different generators: "
                         f"{sorted(set(names) ^ set(embeddings))}")
    n = len(reference)
    ref_emb = np.asarray(reference_embeddings)
    for name in names:
        if len(generated[name]) != n or len(embeddings[name]) != n:
            raise ValueError(f"generator {name!r} has {len(generated[name])} sentences and "
                             f"{len(embeddings[name])} embeddings; the reference set has {n}: "
                             "the metrics compare sets of equal size")
    if check_number(fraction, "fraction", maximum=1) <= 0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    nll = {name: ce.sentence_nll(generated[name]) for name in names}
    rng = np.random.default_rng(check_seed(seed))
    rows, units = [], []
    m = max(k + 2, round(fraction * n))
    for r in range(rounds + 1):
        ref_idx = np.arange(n) if r == 0 else np.sort(rng.choice(n, m, replace=False))
        ref_text = [reference[i] for i in ref_idx]
        for name in names:
            idx = np.arange(n) if r == 0 else np.sort(rng.choice(n, m, replace=False))
            texts = [generated[name][i] for i in idx]
            rows.append({"round": r, "generator": name,
                         "forward_ce": float(nll[name][0][idx].sum() / nll[name][1][idx].sum()
                                             / math.log(2)),
                         "reverse_ce": ce.reverse(texts, ref_text)})
            units.append((ref_emb[ref_idx], np.asarray(embeddings[name])[idx], k, prd_runs,
                          seed + r))
    for row, values in zip(rows, run_units(_embedding_unit, units, n_jobs=n_jobs,
                                           progress=progress, desc="sets")):
        row.update(values)
    return pd.DataFrame(rows)


def score_round(generated: Mapping[str, Sequence[str]], embeddings: Mapping[str, np.ndarray],
                reference: Sequence[str], reference_embeddings, ce: ForwardCE, round_index: int,
                *, ks: Sequence[int] = (3,), fraction: float = 0.8, prd_runs: int = 5,
                seed: int = 0, only: Sequence[str] | None = None,
                metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Every metric of every generator in one round, at every K of ``ks``: tidy rows.

    Round 0 scores all sentences; round ``r > 0`` a random subset of ``fraction`` of the
    reference set and of each generator's sentences (without replacement), drawn from a
    generator seeded by ``(seed, r)`` alone, so that any round can be recomputed by itself
    (the reproduction's unit, :func:`markeval.experiments.ladder.ladder_unit_rows`). The
    metrics without a neighbour count (cross-entropies, FID, PRD with seed ``seed + r``) are
    computed once and carry no ``k`` (NaN); IPR and the Mark-Evaluate scores once per K (``k``
    for both families).
    ``only`` scores some generators (``embeddings`` then needs only theirs): every subset is
    still drawn, in the order of ``generated``, so their rows are those of the whole round.
    ``metrics`` scores only these set metrics without a neighbour count (registry names; the
    recent metrics' stage) on the same subsets, instead of the ladder's own.

    Returns
    -------
    pandas.DataFrame
        Columns ``round``, ``generator``, ``metric`` (a registry name, as in
        :mod:`markeval.experiments.vocabulary`), ``k``, ``value``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> texts = [f"w{i} x{i % 3}" for i in range(30)]
    >>> emb = rng.normal(size=(30, 4))
    >>> rows = score_round({"g": texts}, {"g": emb}, texts, emb + 0.1, ForwardCE(texts * 2), 1,
    ...                    ks=(1, 2), prd_runs=1)
    >>> int(rows["k"].isna().sum()), sorted(set(rows["k"].dropna().astype(int))), len(rows)
    (5, [1, 2], 17)
    """
    names = list(generated)
    scored = names if only is None else list(only)
    if not set(scored) <= set(names):
        raise ValueError(f"only names generators that are not generated: "
                         f"{sorted(set(scored) - set(names))}")
    if set(scored) - set(embeddings) or (only is None and set(embeddings) != set(names)):
        raise ValueError(f"generated and embeddings name different generators: "
                         f"{sorted(set(scored) ^ set(embeddings))}")
    n = len(reference)
    for name in names:
        vectors = f" and {len(embeddings[name])} embeddings" if name in scored else ""
        if len(generated[name]) != n or (vectors and len(embeddings[name]) != n):
            raise ValueError(f"generator {name!r} has {len(generated[name])} sentences"
                             f"{vectors}; the reference set has {n}: the metrics compare sets "
                             "of equal size")
    if check_number(fraction, "fraction", maximum=1) <= 0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    round_index = int(round_index)
    if round_index < 0:
        raise ValueError(f"round_index must be >= 0, got {round_index!r}")
    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1:
        raise ValueError(f"ks must hold K values >= 1, got {ks!r}")
    if metrics is not None:
        metrics = list(metrics)
        counted = sorted(set(metrics) & {"forward_ce", "reverse_ce", *K_FAMILY})
        if counted:
            raise ValueError(f"metrics {counted} are the ladder's own (cross-entropies, or "
                             "metrics at each K of ks): leave metrics=None to score them")
    ref_emb = np.asarray(reference_embeddings, dtype=np.float64)
    rng = np.random.default_rng([check_seed(seed), round_index])
    m = max(max(ks) + 2, round(fraction * n))
    ref_idx = np.arange(n) if round_index == 0 else np.sort(rng.choice(n, m, replace=False))
    ref_text = [reference[i] for i in ref_idx]
    rows = []
    for name in names:
        idx = np.arange(n) if round_index == 0 else np.sort(rng.choice(n, m, replace=False))
        if name not in scored:
            continue  # drawn all the same: the next generator's subset is the whole round's
        texts = [generated[name][i] for i in idx]
        ref, cand = ref_emb[ref_idx], np.asarray(embeddings[name], dtype=np.float64)[idx]
        if metrics is not None:
            recent = scores(ref, cand, metrics, seed=seed + round_index)
            values = [(key, None, v) for key, v in recent.items()]
        else:
            values = _ladder_values(ce, texts, ref_text, ref, cand, ks, prd_runs,
                                    seed + round_index)
        rows += [{"round": round_index, "generator": name, "metric": metric, "k": k,
                  "value": float(v)} for metric, k, v in values]
    return pd.DataFrame(rows)


def _ladder_values(ce: ForwardCE, texts, ref_text, ref, cand, ks, prd_runs: int,
                   seed: int) -> list[tuple]:
    """``(metric, k, value)`` of the ladder's own metrics for one generator's subset."""
    nll, count = ce.sentence_nll(texts)
    values = [("forward_ce", None, float(nll.sum() / count.sum() / math.log(2))),
              ("reverse_ce", None, ce.reverse(texts, ref_text))]
    singular = min(len(ref), len(cand)) <= ref.shape[1]
    free = scores(ref, cand, [m for m in set_metric_names() if m not in K_FAMILY],
                  prd_runs=prd_runs, fid_allow_singular=singular, seed=seed)
    values += [(key, None, v) for key, v in free.items()]
    for k in ks:
        with_k = scores(ref, cand, list(K_FAMILY), me_k=k, ipr_k=k, seed=seed)
        values += [(key, k, v) for key, v in with_k.items()]
    return values


def scores_at_k(rows: pd.DataFrame, k: int | Mapping[str, int] = DEFAULT_K) -> pd.DataFrame:
    """:func:`score_round`'s tidy rows as a wide table with one K per metric.

    Parameters
    ----------
    rows : DataFrame
        Columns ``round``, ``generator``, ``metric`` (registry names), ``k``, ``value``.
    k : int or dict
        One K for every K-metric, or a dict from a family (``"ipr"``, ``"me"``) or a metric
        (registry name) to its K (a metric wins over its family; default :data:`DEFAULT_K`).

    Returns
    -------
    pandas.DataFrame
        Columns ``round``, ``generator`` and one per metric of :func:`ladder_metrics`, as
        :func:`score_generators` returns: the input of :func:`chain_correlations`.
    """
    def chosen(metric):
        if metric not in K_FAMILY:
            return np.nan
        if isinstance(k, Mapping):
            return int(k[metric] if metric in k else k[K_FAMILY[metric]])
        return int(k)

    want = rows["metric"].map(chosen)
    picked = rows[(rows["k"] == want) | (rows["k"].isna() & want.isna())]
    missing = sorted(set(rows["metric"]) - set(picked["metric"]))
    if missing:
        raise ValueError(f"no rows at the chosen K for {missing}; K values in the rows: "
                         f"{sorted(set(rows['k'].dropna().astype(int)))}")
    wide = picked.pivot_table(index=["round", "generator"], columns="metric", values="value",
                              sort=False).reset_index()
    return wide[["round", "generator", *_in_table_order(wide.columns)]]


def _embedding_unit(reference, candidate, k: int, prd_runs: int, seed: int) -> dict:
    """One unit of :func:`score_generators`: the embedding metrics of one (round, generator)."""
    return embedding_metrics(reference, candidate, k=k, prd_runs=prd_runs, seed=seed)


def partial_order_tau(values: Mapping[str, float], chains: Mapping[str, Sequence[str]]) -> float:
    """Kendall-style τ of ``values`` (higher = better) against chains ordered best first.

    Only pairs inside a chain count; a tie in ``values`` counts 0.

    Examples
    --------
    >>> partial_order_tau({"a": 3, "b": 2, "c": 1, "d": 5}, {"x": ("a", "b", "c")})
    1.0
    >>> partial_order_tau({"a": 1, "b": 2, "c": 2}, {"x": ("a", "b"), "y": ("a", "c")})
    -1.0
    """
    score, pairs = 0, 0
    for chain in chains.values():
        for i in range(len(chain)):
            for j in range(i + 1, len(chain)):
                score += np.sign(values[chain[i]] - values[chain[j]])
                pairs += 1
    if pairs == 0:
        raise ValueError("the chains hold no pair to compare")
    return float(score / pairs)


def _oriented(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    for metric in _in_table_order(out.columns):
        if not registry.get(metric).higher_is_better:
            out[metric] = -out[metric]
    return out


def _chain_corr(values: pd.Series, chain: Sequence[str], method) -> float:
    x = [values[g] for g in chain]
    built = list(range(len(chain), 0, -1))
    if constant(x):
        return 0.0  # a metric that cannot tell the chain apart carries no order
    return method(x, built, n_resamples=0).value


def chain_correlations(scores: pd.DataFrame, chains: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """τ-b and ρ of every metric in every chain, and the pooled τ, per round.

    Returns
    -------
    pandas.DataFrame
        Columns ``round``, ``metric``, ``chain`` (a chain name or ``"pooled"``), ``tau``,
        ``rho`` and ``r`` (Pearson's, against the built rank; NaN for the pooled row).
    """
    rows = []
    for r, table in _oriented(scores).groupby("round"):
        table = table.set_index("generator")
        for metric in _in_table_order(table.columns):
            values = table[metric]
            for name, chain in chains.items():
                rows.append({"round": r, "metric": metric, "chain": name,
                             "tau": _chain_corr(values, chain, kendall),
                             "rho": _chain_corr(values, chain, spearman),
                             "r": _chain_corr(values, chain, pearson)})
            rows.append({"round": r, "metric": metric, "chain": "pooled",
                         "tau": partial_order_tau(values.to_dict(), chains), "rho": math.nan,
                         "r": math.nan})
    return pd.DataFrame(rows)


def correlation_table(correlations: pd.DataFrame, *, stat: str = "tau",
                      confidence: float = 0.95) -> pd.DataFrame:
    """One row per metric: round-0 value per chain and the pooled value with its interval.

    The interval is the percentile range over rounds 1.. (subsets/seeds); NaN without them.
    """
    full = correlations[correlations["round"] == 0]
    table = full.pivot(index="metric", columns="chain", values=stat).reindex(
        _in_table_order(full["metric"]))
    rest = correlations[(correlations["round"] > 0) & (correlations["chain"] == "pooled")]
    lo, hi = (1 - confidence) / 2, 1 - (1 - confidence) / 2
    if len(rest) and stat == "tau":
        q = rest.groupby("metric")["tau"].quantile([lo, hi]).unstack()
        table["pooled low"], table["pooled high"] = q[lo], q[hi]
    chains = [c for c in full["chain"].unique() if c != "pooled"]
    cols = chains + (["pooled"] if stat == "tau" else [])
    cols += [c for c in ("pooled low", "pooled high") if c in table]
    return table[cols].rename_axis(None, axis=1)


# --------------------------------------------------------------------------------------------
# Reading the reproduction's ladder rows (markeval.reproduce: the stages ladder, ladder_mpnet)


def present_chains(chains: dict, generators) -> dict:
    """The chains whose generators were all built (the full profile skips SmolLM2)."""
    have = set(generators)
    return {name: chain for name, chain in chains.items() if set(chain) <= have}


def ladder_scores(rows: pd.DataFrame, k) -> pd.DataFrame:
    """The generator ladder's rows (the stage ``ladder``: ``unit`` "round-<r>", ``generator``
    and the columns of :mod:`markeval.experiments.vocabulary`) as a wide score table (round,
    generator, metrics) at K = ``k``: :func:`scores_at_k`."""
    rows = rows.assign(round=rows["unit"].str[len("round-"):].astype(int))
    return scores_at_k(rows[["round", "generator", "metric", "k", "value"]], k)


def ladder_correlations(rows: pd.DataFrame, k, chains=None) -> pd.DataFrame:
    """:func:`chain_correlations` of the ladder's rows (:func:`ladder_scores`) at K = ``k``.

    ``chains`` defaults to the quality chains whose generators are present.
    """
    from markeval.experiments.generators import QUALITY_CHAINS

    wide = ladder_scores(rows, k)
    chains = present_chains(QUALITY_CHAINS if chains is None else chains,
                            wide["generator"].unique())
    return chain_correlations(wide, chains)


def metric_best_k(rows: pd.DataFrame, ks: Sequence[int]) -> dict:
    """Per k-NN metric, :func:`~markeval.experiments.choosing_k.best_k` over ``ks`` of the
    pooled quality τ on all sentences of the ladder's rows. Returns ``{metric: K}``."""
    from markeval.experiments.choosing_k import best_k

    pooled = {}
    for k in ks:
        corr = ladder_correlations(rows, k)
        corr = corr[(corr["round"] == 0) & (corr["chain"] == "pooled")].set_index("metric")
        pooled[k] = corr["tau"]
    return {metric: best_k({k: pooled[k][metric] for k in ks})
            for metric in K_FAMILY}
