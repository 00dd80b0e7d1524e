"""Summary-level meta-evaluation on TAC-style data: score every summary, correlate per topic.

The summarisation papers (MoverScore Table 2, Mark-Evaluate Table 3) report *summary-level*
correlation: within one topic, correlate a metric's scores of the topic's summaries with the
people's scores (pyramid, responsiveness) of the same summaries; then average over topics.
This module fixes each choice that procedure leaves open, in one place:

* **Which summaries.** System (peer) summaries only by default. A human summary can be
  scored too (``include_human=True``), but it is one of its topic's references, so by default
  it is scored against the *other* references only (jackknifing), never against itself. The
  MoverScore authors scored every judged summary, human ones included, against all four
  references (``human_references="all"``): a human summary then meets itself among its
  references, which lifts its scores and, because people rate human summaries highest, the
  correlations too. Their published ROUGE rows (MoverScore Table 2) need this choice.
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
* **Set metrics.** PRD, IPR and Mark-Evaluate compare a *set* of samples with a set: a
  summary's word-level samples (one per word piece per layer) against the samples of all its
  references together (:func:`set_scores`,
  :class:`~markeval.experiments.word_set_metrics.WordSetMetrics`), not reference by
  reference.

Nothing here prints or returns summary text beyond the items it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from markeval import registry
from markeval._checks import check_bool, check_choice, check_int
from markeval.experiments.human_correlation import grouped_correlation
from markeval.experiments.parallel import resolve_n_jobs
from markeval.experiments.word_set_metrics import WordSetMetrics
from markeval.stats import METHODS

__all__ = ["EMBEDDING_METRICS", "HUMAN_REFERENCES", "HUMAN_SCORES", "MOVERSCORE_STOP_WORDS",
           "SummaryItem", "embedding_scores", "moverscore_idf", "moverscore_items",
           "pairwise_scores", "set_scores", "summary_items", "summary_level_correlations",
           "topic_means"]

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


HUMAN_REFERENCES = ("others", "all")


def summary_items(topics, *, include_human: bool = False,
                  human_references: str = "others") -> tuple[SummaryItem, ...]:
    """Flatten TAC topics into the summaries to score, each with its references.

    Parameters
    ----------
    topics : sequence of markeval.datasets.TacTopic
        E.g. ``load_tac(2009)`` or a subset of it.
    include_human : bool, default False
        Also return the human summaries.
    human_references : {'others', 'all'}, default 'others'
        A human summary's references: the topic's other references (jackknifing), or all
        of them, its own included (the MoverScore authors' protocol).

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
    check_bool(include_human, "include_human")
    leave_own_out = check_choice(human_references, "human_references", HUMAN_REFERENCES) == "others"
    items = []
    for topic in topics:
        references = [(_summarizer(rid), " ".join(sents))
                      for rid, sents in zip(topic.reference_ids, topic.references)]
        for summary in topic.annotations:
            if summary.is_human and not include_human:
                continue
            own = summary.is_human and leave_own_out
            refs = tuple(text for who, text in references if not (own and who == summary.summ_id))
            if own and len(refs) == len(references):
                raise ValueError(
                    f"topic {topic.topic_id}: human summary {summary.summ_id!r} matches none of "
                    f"the reference ids {topic.reference_ids}, so it cannot be left out")
            items.append(SummaryItem(topic.topic_id, summary.summ_id, summary.is_human,
                                     " ".join(summary.sentences), refs, summary.pyr_score,
                                     summary.responsiveness))
    if not items:
        raise ValueError("no summaries to score: the topics are empty")
    return tuple(items)


#: The English stop words of NLTK without the contracted forms ("don't" is there as "don"):
#: the 153 words of ``examples/stopwords.txt`` in AIPHES/emnlp19-moverscore, which the
#: authors' TAC script passes to ``word_mover_score``. Compared with the tokenizer's pieces.
MOVERSCORE_STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
her hers herself it its itself they them their theirs themselves what which who whom this that
these those am is are was were be been being have has had having do does did doing a an the and
but if or because as until while of at by for with about against between into through during
before after above below to from up down in out on off over under again further then once here
there when where why how all any both each few more most other some such no nor not only own
same so than too very s t can will just don should now d ll m o re ve y ain aren couldn didn
doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
""".split())


def moverscore_items(topics, *, min_sentences: int = 2) -> tuple[SummaryItem, ...]:
    """The summaries the MoverScore authors' TAC script scores, with their references.

    Every judged summary, human ones included, with at least ``min_sentences`` sentences (the
    script keeps ``len(annot['text']) > 1``), each against all four references, its own
    included for a human summary (:func:`summary_items` with ``include_human=True,
    human_references="all"``).

    Examples
    --------
    >>> from markeval.datasets import load_tac
    >>> items = moverscore_items(load_tac(2009)[:1])
    >>> len(items), sum(i.is_human for i in items), {len(i.references) for i in items}
    (53, 4, {4})
    """
    min_sentences = check_int(min_sentences, "min_sentences", minimum=1)
    topics = list(topics)
    keep = {(topic.topic_id, a.summ_id) for topic in topics for a in topic.annotations
            if len(a.sentences) >= min_sentences}
    items = tuple(i for i in summary_items(topics, include_human=True, human_references="all")
                  if (i.topic, i.summ_id) in keep)
    if not items:
        raise ValueError(f"no summary of these topics has {min_sentences} sentences or more")
    return items


def moverscore_idf(topics, model):
    """MoverScore's idf pair as the authors' TAC script builds it, over all ``topics``.

    ``(hypothesis side, reference side)``: the idf of every judged summary of the topics
    (human ones included, whatever their length) and the idf of all their references; pass
    it as ``moverscore(..., idf=...)``.
    """
    from markeval.semantic.idf import idf_weights

    topics = list(topics)
    return (idf_weights([" ".join(a.sentences) for t in topics for a in t.annotations],
                        model=model),
            idf_weights([" ".join(r) for t in topics for r in t.references], model=model))


#: The pairwise metrics of :func:`embedding_scores`, in order, as (registry name, options):
#: BERTScore F1, MoverScore's WMD-1 (the registry default), WMD-2 and SMD.
EMBEDDING_METRICS = (("bertscore", ""), ("moverscore", ""), ("moverscore", "WMD-2"),
                     ("moverscore", "SMD"))


def embedding_scores(items: Sequence[SummaryItem], model, idf, *, ks: Sequence[int] = (1, 2, 3, 5),
                     stop_words=MOVERSCORE_STOP_WORDS, prd_clusters: int = 20,
                     prd_runs: int = 2, seed: int = 0, n_jobs: int | None = 1,
                     progress: bool = False, bertscore_layer: int | None = None
                     ) -> tuple[dict[tuple, np.ndarray], int]:
    """BERTScore, MoverScore and the word-level set metrics of ``items``, one encoder pass.

    The pairwise metrics (:data:`EMBEDDING_METRICS`) score a summary against each reference
    and average the scores (:func:`pairwise_scores`): BERTScore F1 (on the last layer, or
    ``bertscore_layer``, which the encoder must keep), and
    MoverScore's ``"v1"`` preset (power means over the last five layers) with WMD on unigrams
    and bigrams and SMD, weighted by ``idf`` (:func:`moverscore_idf`) and without
    ``stop_words``; and every metric of texts added to the registry
    (:func:`markeval.registry.added`), its item scores. The set metrics
    (:class:`WordSetMetrics` at every ``K`` of ``ks``, with every metric of two embedding sets
    added to the registry) compare a summary's word samples with its references' pooled
    samples (:func:`set_scores`).

    Parameters
    ----------
    items : sequence of SummaryItem
    model : MemoEncoder
        Keeping the last five layers (``memoize(layers=range(-5, 0))``), so that every
        metric reads one forward pass per distinct text.
    idf : (IDFWeights, IDFWeights)
    ks, prd_clusters, prd_runs, seed
        As in :class:`WordSetMetrics`.
    stop_words : collection of str
        For MoverScore (default: :data:`MOVERSCORE_STOP_WORDS`, the authors' list).
    n_jobs : int or None, default 1
        Workers for the set metrics (the scores do not depend on it).
    progress : bool, default False
    bertscore_layer : int, optional
        The hidden state BERTScore reads (default: the last).

    Returns
    -------
    (dict of tuple to numpy.ndarray, int)
        ``(protocol, metric, k, options)``, as a result row names a score
        (:mod:`markeval.experiments.vocabulary`; protocol "mean over references" for the
        pairwise metrics, "pooled references" for the set metrics) -> one score per item; and
        how many summaries were too short for the set metrics (scored 0).
    """
    import warnings

    from markeval.population.samples import word_samples
    from markeval.semantic.bertscore import bertscore
    from markeval.semantic.tokens import EmptyTextWarning
    from markeval.semantic.moverscore import moverscore

    items = list(items)
    stop_words = frozenset(stop_words)

    def bert_f(hyps, refs):
        return bertscore(hyps, refs, model=model, layer=bertscore_layer,
                         progress=False).sentence_f1

    def mover(**options):
        return lambda hyps, refs: moverscore(hyps, refs, model=model, preset="v1", idf=idf,
                                             stop_words=stop_words, progress=False,
                                             **options).sentence_scores

    metrics = dict(zip(EMBEDDING_METRICS, (bert_f, mover(n_gram=1), mover(n_gram=2),
                                           mover(level="sentence"))))
    metrics.update({(info.name, ""): info.item_scores for info in registry.added(inputs="texts")})
    # One encoder pass over the summaries and references (word samples: all five layers).
    texts = list(dict.fromkeys([i.text for i in items] + [r for i in items for r in i.references]))
    word_samples(texts, model, progress=progress)
    with warnings.catch_warnings():  # empty summaries score 0 (counted by the set metrics)
        warnings.simplefilter("ignore", EmptyTextWarning)
        scores = {("mean over references", metric, None, options): pairwise_scores(items, fn)
                  for (metric, options), fn in metrics.items()}
    sets = WordSetMetrics(lambda t: word_samples(t, model, progress=False), ks=ks,
                          prd_clusters=prd_clusters, prd_runs=prd_runs, seed=seed)
    for (metric, k), values in set_scores(items, sets, n_jobs=n_jobs, progress=progress).items():
        scores[("pooled references", metric, k, "")] = values
    return scores, sets.n_too_short


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
    check_choice(aggregate, "aggregate", _AGGREGATES)
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


def set_scores(items: Sequence[SummaryItem],
               metric: Callable[[list[str], list[str]], float | Mapping[str, float]], *,
               n_jobs: int | None = None, progress: bool = True
               ) -> np.ndarray | dict[str, np.ndarray]:
    """Score each summary against the *set* of its references (one call per summary).

    :func:`pairwise_scores` scores a summary against each reference on its own; a set metric
    (PRD, IPR, Mark-Evaluate) instead compares the summary's samples with the samples of all
    its references pooled. A human summary's references are the other three (the jackknife of
    :func:`summary_items`), so it is never compared with itself.

    Parameters
    ----------
    items : sequence of SummaryItem
    metric : callable
        ``metric(candidate_texts, reference_texts)`` with ``candidate_texts = [item.text]`` and
        ``reference_texts = list(item.references)``; returns a float, or a mapping of score
        name to float (several scores from one computation). Every item must give the same
        names. Items come in order, so a metric can reuse work across the summaries of one
        topic (same references), as :class:`WordSetMetrics` does.
    n_jobs : int or None, default None
        For a :class:`WordSetMetrics`: worker processes (None: one per core, or the workers of
        an active joblib backend such as Dask; see :mod:`markeval.experiments.parallel`). Up
        to eight consecutive summaries with the same references make one unit: their samples
        are embedded here, then scored by a worker. The scores are identical to ``n_jobs=1``.
        Any other callable runs here, serially (it may hold a model).
    progress : bool, default True
        With a :class:`WordSetMetrics` in parallel, a bar counting finished units.

    Returns
    -------
    numpy.ndarray or dict of str to numpy.ndarray
        float64, one score per item; a dict when ``metric`` returns mappings.

    Examples
    --------
    >>> items = [SummaryItem("t", "1", False, "a b c", ("a b", "x y"), 0.5, 3.0),
    ...          SummaryItem("t", "2", False, "x", ("a b", "x y"), 0.2, 2.0)]
    >>> def coverage(cand, refs):  # share of the references' words the summary uses
    ...     words = set(" ".join(refs).split())
    ...     return len(words & set(cand[0].split())) / len(words)
    >>> set_scores(items, coverage).tolist()
    [0.5, 0.25]
    >>> both = set_scores(items, lambda c, r: {"len": len(c[0].split()), "refs": len(r)})
    >>> {name: v.tolist() for name, v in both.items()}
    {'len': [3.0, 1.0], 'refs': [2.0, 2.0]}
    """
    if not callable(metric):
        raise TypeError(f"metric must be a callable (candidate_texts, reference_texts) -> float "
                        f"or mapping, got {type(metric).__name__}")
    if len(items) == 0:
        raise ValueError("no summaries to score")
    for item in items:
        if not item.references:
            raise ValueError(f"summary {item.summ_id!r} of topic {item.topic!r} has no references")
    n_jobs = resolve_n_jobs(n_jobs)
    if isinstance(metric, WordSetMetrics) and n_jobs != 1:
        values = metric._score_groups(items, n_jobs=n_jobs, progress=progress)
    else:
        values = (metric([item.text], list(item.references)) for item in items)
    names: tuple[str, ...] | None = None
    rows = []
    for index, (item, value) in enumerate(zip(items, values)):
        if isinstance(value, Mapping):
            got = tuple(value)
            if not got:
                raise ValueError(f"metric returned an empty mapping for item {index}")
        elif (isinstance(value, (int, float, np.integer, np.floating))
              and not isinstance(value, bool)):
            got, value = (), {(): value}  # one unnamed score
        else:
            raise TypeError(f"metric must return a float or a mapping name -> float, got "
                            f"{type(value).__name__} for item {index}")
        if names is None:
            names = got
        elif got != names:
            raise ValueError(f"metric returned the scores {list(got)} for item {index} but "
                             f"{list(names)} for item 0: every summary needs the same names")
        row = np.array([float(v) for v in value.values()])
        bad = np.flatnonzero(~np.isfinite(row))
        if bad.size:
            label = repr(list(value)[bad[0]]) if names else "score"
            raise ValueError(f"metric returned a non-finite {label} {row[bad[0]]} for summary "
                             f"{item.summ_id!r} of topic {item.topic!r} (item {index})")
        rows.append(row)
    table = np.vstack(rows)
    if names == ():
        return table[:, 0].copy()
    return {name: table[:, j].copy() for j, name in enumerate(names)}


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


def topic_means(rows: pd.DataFrame, *, n_resamples: int = 0, seed: int = 0) -> pd.DataFrame:
    """Mean over topics of per-topic correlations (undefined topics left out), for the TAC
    stages' rows.

    ``rows`` has one correlation per topic in ``value``, keyed by ``year``, the metric (the
    ``metric``, ``k`` and ``options`` of :mod:`markeval.experiments.vocabulary`), ``human``
    and ``method``, and the topic in ``unit`` (``"<year>/<topic>"``). Returns one row per key,
    the metric by its :func:`~markeval.experiments.vocabulary.label`, with ``value`` (the mean
    over the topics whose correlation is defined), ``n_topics`` (how many) and ``undefined``
    (the topics left out, by name). With ``n_resamples``, also a 95 % percentile bootstrap
    interval over topics (``ci_low``, ``ci_high``; NaN with fewer than two topics). Last come
    the metric's registry keys, ``name``, ``k`` (NaN for none) and ``options``, for builders
    that select by them.

    Examples
    --------
    >>> rows = pd.DataFrame({"unit": ["2009/A", "2009/B", "2009/C"], "year": 2009,
    ...                      "metric": "rouge1", "k": None, "options": "recall",
    ...                      "human": "pyr_score", "method": "pearson",
    ...                      "value": [0.2, 0.4, float("nan")]})
    >>> r = topic_means(rows).iloc[0]
    >>> r.metric, round(float(r.value), 6), int(r.n_topics), r.undefined
    ('ROUGE-1 (recall)', 0.3, 2, 'C')
    """
    from markeval.experiments.vocabulary import label

    keys = ["year", "metric", "human", "method", "name", "k", "options"]
    rows = rows.assign(metric=[label(m, k, o) for m, k, o in
                               zip(rows["metric"], rows["k"], rows["options"])],
                       name=rows["metric"], k=rows["k"].astype(float),
                       options=rows["options"].astype(object).fillna(""))
    out = []
    for key, group in rows.groupby(keys, sort=False, dropna=False):
        values = group["value"].to_numpy(float)
        values = values[np.isfinite(values)]
        row = dict(zip(keys, key), value=values.mean() if values.size else np.nan,
                   n_topics=int(values.size),
                   undefined=", ".join(group.loc[~np.isfinite(group["value"]), "unit"]
                                       .str.split("/").str[1]) if "unit" in group else "")
        if n_resamples:
            lo = hi = np.nan
            if values.size >= 2:
                rng = np.random.default_rng(seed)
                means = values[rng.integers(0, values.size, (n_resamples, values.size))].mean(1)
                lo, hi = np.quantile(means, [0.025, 0.975])
            row.update(ci_low=lo, ci_high=hi)
        out.append(row)
    return pd.DataFrame(out, columns=[*(c for c in out[0] if c not in keys[4:]), *keys[4:]]
                        if out else None)
