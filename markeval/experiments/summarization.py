"""Summary-level meta-evaluation on TAC-style data: score every summary, correlate per topic.

The summarisation papers (MoverScore Table 2, Mark-Evaluate Table 3) report *summary-level*
correlation: within one topic, correlate a metric's scores of the topic's summaries with the
people's scores (pyramid, responsiveness) of the same summaries; then average over topics.
This module fixes each choice that procedure leaves open, in one place:

* **Which summaries.** System (peer) summaries only by default. A human summary can be
  scored too (``include_human=True``), but it is one of its topic's references, so it is
  scored against the *other* references only (jackknifing), never against itself.
* **Several references.** A metric scores a summary against each reference separately; the
  per-reference scores are averaged (``aggregate="mean"``) or the best is kept
  (``aggregate="max"``, the rouge-score convention).
* **Responsiveness scale.** 1–5 in TAC 2008, 1–10 in 2009. Per-topic Pearson, Spearman and
  Kendall are unchanged by any increasing linear rescaling of the human scores, so no
  normalisation is needed as long as correlations stay per topic and per year; it matters
  only when topics or years are pooled.
* **Undefined topics.** A topic where every summary got the same human (or metric) score
  has no correlation; it is reported and left out of the average
  (:func:`markeval.experiments.human_correlation.grouped_correlation`).

Nothing here prints or returns summary text beyond the items it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from markeval.experiments.human_correlation import grouped_correlation
from markeval.stats import METHODS

__all__ = ["HUMAN_SCORES", "SummaryItem", "pairwise_scores", "summary_items",
           "summary_level_correlations"]

#: The human judgements TAC provides for every summary.
HUMAN_SCORES = ("pyr_score", "responsiveness")

_AGGREGATES = {"mean": np.mean, "max": np.max}


@dataclass(frozen=True)
class SummaryItem:
    """One summary to score, with the references it is scored against and its human scores.

    Attributes
    ----------
    topic, summ_id : str
    is_human : bool
    text : str
        The summary's sentences joined by spaces (may be empty: TAC has empty summaries).
    references : tuple of str
        The topic's references, each joined the same way; for a human summary, without its own.
    pyr_score, responsiveness : float
    """

    topic: str
    summ_id: str
    is_human: bool
    text: str
    references: tuple[str, ...]
    pyr_score: float
    responsiveness: float


def _summarizer(reference_id: str) -> str:
    # TAC reference ids end in the summarizer's letter, some with a file suffix:
    # 'D0801-A.M.100.A.C' -> 'C', 'D0801-A.M.100.A.E.txt' -> 'E'.
    return reference_id.removesuffix(".txt").rsplit(".", 1)[-1]


def summary_items(topics, *, include_human: bool = False) -> tuple[SummaryItem, ...]:
    """Flatten TAC topics into the summaries to score, each with its references.

    Parameters
    ----------
    topics : sequence of markeval.datasets.TacTopic
        E.g. ``load_tac(2009)`` or a subset of it.
    include_human : bool, default False
        Also return the human summaries, each with its own reference left out.

    Returns
    -------
    tuple of SummaryItem
        In topic order, then file order.

    Examples
    --------
    >>> from markeval.datasets import load_tac
    >>> items = summary_items(load_tac(2009)[:2], include_human=True)
    >>> len(items), {len(i.references) for i in items if i.is_human}
    (118, {3})
    """
    if isinstance(include_human, (int, np.integer)) and not isinstance(include_human, bool):
        raise TypeError("include_human must be a bool")
    items = []
    for topic in topics:
        references = [(_summarizer(rid), " ".join(sents))
                      for rid, sents in zip(topic.reference_ids, topic.references)]
        for summary in topic.annotations:
            if summary.is_human and not include_human:
                continue
            refs = tuple(text for who, text in references
                         if not (summary.is_human and who == summary.summ_id))
            if summary.is_human and len(refs) == len(references):
                raise ValueError(
                    f"topic {topic.topic_id}: human summary {summary.summ_id!r} matches none of "
                    f"the reference ids {topic.reference_ids}, so it cannot be left out")
            items.append(SummaryItem(topic.topic_id, summary.summ_id, summary.is_human,
                                     " ".join(summary.sentences), refs, summary.pyr_score,
                                     summary.responsiveness))
    if not items:
        raise ValueError("no summaries to score: the topics are empty")
    return tuple(items)


def pairwise_scores(items: Sequence[SummaryItem],
                    metric: Callable[[list[str], list[str]], Sequence[float]], *,
                    aggregate: str = "mean") -> np.ndarray:
    """Score each summary against each of its references, then combine per summary.

    Parameters
    ----------
    items : sequence of SummaryItem
    metric : callable
        ``metric(hypotheses, references) -> scores``: one score per (hypothesis, single
        reference) pair. It is called once with all pairs, so it can batch (an encoder).
    aggregate : {'mean', 'max'}
        How a summary's per-reference scores are combined.

    Returns
    -------
    numpy.ndarray
        float64, one score per item.

    Examples
    --------
    >>> item = SummaryItem("t", "1", False, "a b c", ("a b", "x y z"), 0.5, 3.0)
    >>> overlap = lambda hyps, refs: [len(set(h.split()) & set(r.split())) for h, r in zip(hyps, refs)]
    >>> pairwise_scores([item], overlap).tolist(), pairwise_scores([item], overlap, aggregate="max").tolist()
    ([1.0], [2.0])
    """
    if aggregate not in _AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(_AGGREGATES)}, got {aggregate!r}")
    if not callable(metric):
        raise TypeError(f"metric must be a callable (hypotheses, references) -> scores, "
                        f"got {type(metric).__name__}")
    hyps = [item.text for item in items for _ in item.references]
    refs = [ref for item in items for ref in item.references]
    if not hyps:
        raise ValueError("no (summary, reference) pairs to score")
    flat = np.asarray(metric(hyps, refs), dtype=np.float64)
    if flat.shape != (len(hyps),):
        raise ValueError(f"metric returned {flat.shape} scores for {len(hyps)} (summary, reference) "
                         "pairs: it must return one score per pair")
    bad = np.flatnonzero(~np.isfinite(flat))
    if bad.size:
        raise ValueError(f"metric returned a non-finite score {flat[bad[0]]} for pair {int(bad[0])}")
    combine = _AGGREGATES[aggregate]
    out, start = np.empty(len(items)), 0
    for i, item in enumerate(items):
        out[i] = combine(flat[start:start + len(item.references)])
        start += len(item.references)
    return out


def summary_level_correlations(scores: Mapping[str, Sequence[float]],
                               items: Sequence[SummaryItem], *,
                               human: Sequence[str] = HUMAN_SCORES,
                               methods: Sequence[str] = METHODS,
                               n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per-topic correlation of each metric with each human score, averaged over topics.

    Parameters
    ----------
    scores : mapping of str to sequence of float
        Metric name → one score per item (e.g. from :func:`pairwise_scores`).
    items : sequence of SummaryItem
    human : sequence of str, default ('pyr_score', 'responsiveness')
    methods : sequence of str, default ('pearson', 'kendall', 'spearman')
    n_resamples : int, default 1000
        Bootstrap resamples over topics for the confidence interval (0: none).
    seed : int, default 0

    Returns
    -------
    pandas.DataFrame
        One row per (metric, human, method): ``value`` (mean over topics), ``ci_low``,
        ``ci_high``, ``n_topics`` (those with a defined correlation), ``undefined`` (the
        topics left out, comma-separated).

    Examples
    --------
    >>> items = [SummaryItem(t, str(i), False, "", ("r",), p, r)
    ...          for t in ("A", "B") for i, (p, r) in enumerate([(0.1, 2), (0.4, 2), (0.3, 2)])]
    >>> table = summary_level_correlations({"m": [1, 2, 3, 1, 2, 3]}, items,
    ...                                    methods=["pearson"], n_resamples=0)
    >>> for row in table.itertuples():
    ...     print(row.human, round(row.value, 3), row.n_topics, repr(row.undefined))
    pyr_score 0.655 2 ''
    responsiveness nan 0 'A, B'
    """
    unknown = [h for h in human if h not in HUMAN_SCORES]
    if unknown:
        raise ValueError(f"unknown human score {unknown[0]!r}; choose from {', '.join(HUMAN_SCORES)}")
    topics = [item.topic for item in items]
    rows = []
    for name, values in scores.items():
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(items),):
            raise ValueError(f"metric {name!r} has {values.size} scores for {len(items)} summaries")
        for h in human:
            truth = [getattr(item, h) for item in items]
            for method in methods:
                try:
                    res = grouped_correlation(values, truth, topics, method,
                                              n_resamples=n_resamples, seed=seed)
                except ValueError as err:
                    if "undefined in every one" not in str(err):
                        raise
                    rows.append((name, h, method, np.nan, np.nan, np.nan, 0,
                                 ", ".join(dict.fromkeys(topics))))
                    continue
                rows.append((name, h, method, res.value, res.ci_low, res.ci_high, res.n_defined,
                             ", ".join(str(g) for g, _ in res.undefined)))
    return pd.DataFrame(rows, columns=["metric", "human", "method", "value", "ci_low", "ci_high",
                                       "n_topics", "undefined"])
