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
  references together (:func:`set_scores`, :class:`WordSetMetrics`), not reference by
  reference.

Nothing here prints or returns summary text beyond the items it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from markeval import geometry
from markeval._checks import check_bool, check_choice, check_int, check_seed
from markeval.distribution.prd import prd
from markeval.experiments.human_correlation import grouped_correlation
from markeval.experiments.parallel import resolve_n_jobs, run_units
from markeval.population.mark_evaluate import mark_evaluate_from_balls
from markeval.stats import METHODS

__all__ = ["EMBEDDING_METRICS", "HUMAN_REFERENCES", "HUMAN_SCORES", "MOVERSCORE_STOP_WORDS",
           "ADAPTATION_RULES", "SummaryItem", "WordSetMetrics", "adapted_set_scores",
           "embedding_scores", "moverscore_idf",
           "moverscore_items", "pairwise_scores", "set_scores", "summary_items",
           "summary_level_correlations", "topic_means"]

#: The human judgements TAC provides for every summary.
HUMAN_SCORES = ("pyr_score", "responsiveness")

_AGGREGATES = {"mean": np.mean, "max": np.max}
# Summaries per parallel unit of the set metrics (about 2.5 s of work for TAC word samples).
_UNIT = 8


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


#: The pairwise metrics of :func:`embedding_scores`, in order.
EMBEDDING_METRICS = ("BERTScore F", "MoverScore WMD-1", "MoverScore WMD-2", "MoverScore SMD")


def embedding_scores(items: Sequence[SummaryItem], model, idf, *, ks: Sequence[int] = (1, 2, 3, 5),
                     stop_words=MOVERSCORE_STOP_WORDS, prd_clusters: int = 20,
                     prd_runs: int = 2, seed: int = 0, n_jobs: int | None = 1,
                     progress: bool = False, bertscore_layer: int | None = None
                     ) -> tuple[dict[str, np.ndarray], int]:
    """BERTScore, MoverScore and the word-level set metrics of ``items``, one encoder pass.

    The pairwise metrics (:data:`EMBEDDING_METRICS`) score a summary against each reference
    and average the scores (:func:`pairwise_scores`): BERTScore F1 (on the last layer, or
    ``bertscore_layer``, which the encoder must keep), and
    MoverScore's ``"v1"`` preset (power means over the last five layers) with WMD on unigrams
    and bigrams and SMD, weighted by ``idf`` (:func:`moverscore_idf`) and without
    ``stop_words``. The set metrics (:class:`WordSetMetrics` at every ``K`` of ``ks``) compare
    a summary's word samples with its references' pooled samples (:func:`set_scores`).

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
    (dict of str to numpy.ndarray, int)
        Metric name -> one score per item; and how many summaries were too short for the
        set metrics (scored 0).
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
    # One encoder pass over the summaries and references (word samples: all five layers).
    texts = list(dict.fromkeys([i.text for i in items] + [r for i in items for r in i.references]))
    word_samples(texts, model, progress=progress)
    with warnings.catch_warnings():  # empty summaries score 0 (counted by the set metrics)
        warnings.simplefilter("ignore", EmptyTextWarning)
        scores = {name: pairwise_scores(items, fn) for name, fn in metrics.items()}
    sets = WordSetMetrics(lambda t: word_samples(t, model, progress=False), ks=ks,
                          prd_clusters=prd_clusters, prd_runs=prd_runs, seed=seed)
    scores.update(set_scores(items, sets, n_jobs=n_jobs, progress=progress))
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


#: WordSetMetrics' score names (without the K) -> registry names.
_SET_METRIC_NAMES = {"PRD precision": "prd_precision", "IPR precision": "ipr_precision",
                     "ME Petersen": "me_petersen", "ME Schnabel quality": "me_schnabel_quality",
                     "ME CAPTURE": "me_capture"}


class WordSetMetrics:
    """PRD precision, IPR precision and Mark-Evaluate of one summary against its references.

    A callable for :func:`set_scores`. The summary's samples and the references' samples come
    from ``embed`` (word level: :func:`markeval.population.mark_evaluate.word_samples`, one
    sample per word piece per layer); the reference set is all the given references' samples
    pooled. For every ``K`` in ``ks`` it returns, from one geometry per ``K`` (the balls of
    both sets and who lies in whose ball):

    * ``"ME Petersen (K=k)"``, ``"ME Schnabel quality (K=k)"``, ``"ME CAPTURE (K=k)"`` —
      exactly :func:`markeval.population.mark_evaluate.mark_evaluate` ``(reference, summary,
      k)`` (quality = ME_Schnabel(S_r, S_e));
    * ``"IPR precision (K=k)"`` — exactly
      :func:`markeval.distribution.ipr.improved_precision_recall` ``(reference, summary, k)``:
      the share of the summary's samples inside some reference ball;

    and ``"PRD precision"`` (``F_{1/8}`` of :func:`markeval.distribution.prd.prd`). PRD
    clusters the union of the two sets, so the larger (the references, about four times the
    summary) is subsampled without replacement to the size of the smaller, with ``seed``.

    Work is shared: the reference set's samples and its balls (computed once at the largest
    ``K``; the balls at a smaller ``K`` are their first neighbours) are kept for the next
    call with the same references, i.e. for all the system summaries of a topic. On the index
    path only the samples are kept: each call searches one index over the union of the
    references and the summary for both sets' balls and their members
    (:func:`markeval.geometry.mutual_balls_at`), faster than three searches.

    A summary with fewer than ``min_samples`` samples (an empty summary has none) gets 0 on
    every score: it is the worst possible summary, and the metrics are undefined on it
    (k-NN balls need ``K + 1`` points, the clustering ``num_clusters``).
    :attr:`n_too_short` counts them.

    Parameters
    ----------
    embed : callable
        ``embed(texts) -> array (n_samples, dim)``.
    ks : sequence of int, default (1, 2, 3, 5)
    prd_clusters : int, default 20
    prd_runs : int, default 2
        Clusterings averaged per PRD curve.
    seed : int, default 0
    dtype : {"float32", "float64"}, default "float32"
        Arithmetic of the distance blocks; the k-NN and membership decisions are exact either
        way (:mod:`markeval.geometry`), float32 is faster.
    neighbours : {"exact", "index"} or IndexSettings, default "exact"
        How the balls and their members are found (:mod:`markeval.geometry`): every distance,
        or a neighbour index's candidates, for sets of 10^5 samples and more (what the index
        can miss, and its audit: :mod:`markeval.geometry.index`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> vectors = {w: rng.normal(size=4) for w in "abcdefghij"}
    >>> embed = lambda texts: np.array([vectors[w] for t in texts for w in t.split()])
    >>> scorer = WordSetMetrics(embed, ks=(1, 2), prd_clusters=3, prd_runs=1)
    >>> s = scorer(["a b c d"], ["a b c e f", "g h i j a"])
    >>> sorted(s)  # doctest: +NORMALIZE_WHITESPACE
    ['IPR precision (K=1)', 'IPR precision (K=2)', 'ME CAPTURE (K=1)', 'ME CAPTURE (K=2)',
     'ME Petersen (K=1)', 'ME Petersen (K=2)', 'ME Schnabel quality (K=1)',
     'ME Schnabel quality (K=2)', 'PRD precision']
    >>> s["IPR precision (K=1)"]  # a, b, c are reference samples; d lies in no reference ball
    0.75
    >>> scorer([""], ["a b c e f", "g h i j a"])["ME Petersen (K=1)"]  # empty summary
    0.0
    """

    def __init__(self, embed: Callable[[list[str]], np.ndarray], *,
                 ks: Sequence[int] = (1, 2, 3, 5), prd_clusters: int = 20, prd_runs: int = 2,
                 seed: int = 0, dtype: str = "float32", neighbours="exact"):
        if not callable(embed):
            raise TypeError(f"embed must be a callable texts -> array, got {type(embed).__name__}")
        ks = tuple(check_int(k, f"ks[{i}]", minimum=1) for i, k in enumerate(ks))
        if not ks:
            raise ValueError("ks must be a non-empty sequence of positive ints, got ()")
        if len(set(ks)) != len(ks):
            raise ValueError(f"ks has repeated values: {ks!r}")
        check_choice(dtype, "dtype", ("float32", "float64"))
        geometry.check_neighbours(neighbours)
        self.embed = embed
        self._scorer = _SetScorer(tuple(int(k) for k in sorted(ks)), int(prd_clusters),
                                  int(prd_runs), check_seed(seed), dtype, neighbours)
        self.n_too_short = 0
        self._reference: tuple | None = None  # (texts, samples, balls at max K)

    @property
    def ks(self) -> tuple[int, ...]:
        """The values of K, ascending."""
        return self._scorer.ks

    @property
    def min_samples(self) -> int:
        """Fewest samples a summary needs (max K + 1 and the PRD clusters); fewer score 0."""
        return self._scorer.min_samples

    @property
    def names(self) -> list[str]:
        """The score names, in the order of each returned mapping."""
        return self._scorer.names

    @staticmethod
    def registry_name(name: str) -> tuple[str, int | None]:
        """One of :attr:`names` as a result row names it (:mod:`markeval.experiments.vocabulary`):
        the registry name and the K.

        Examples
        --------
        >>> WordSetMetrics.registry_name("ME Schnabel quality (K=3)")
        ('me_schnabel_quality', 3)
        >>> WordSetMetrics.registry_name("PRD precision")
        ('prd_precision', None)
        """
        base, _, k = name.partition(" (K=")
        metric = _SET_METRIC_NAMES.get(base)
        if metric is None or (k != "") != (metric != "prd_precision"):
            raise ValueError(f"name must be one of WordSetMetrics' score names, got {name!r}")
        return metric, int(k.rstrip(")")) if k else None

    def _samples(self, texts: list[str]) -> np.ndarray:
        given = self.embed(list(texts))
        samples = np.asarray(given, dtype=np.float64)
        if samples is not given and samples.base is None:
            samples.flags.writeable = False  # our own copy: the balls keep it without another
        return samples

    def __call__(self, candidate_texts: list[str], reference_texts: list[str]) -> dict[str, float]:
        key = tuple(reference_texts)
        if self._reference is None or self._reference[0] != key:
            self._reference = (key, *self._scorer.reference(self._samples(reference_texts)))
        return self._count(self._scorer.score(self._samples(candidate_texts),
                                              *self._reference[1:]))

    def _count(self, scores: dict | None) -> dict[str, float]:
        if scores is None:
            self.n_too_short += 1
            return dict.fromkeys(self.names, 0.0)
        return scores

    def _score_groups(self, items: Sequence[SummaryItem], *, n_jobs, progress):
        """Scores of ``items`` (in order), in parallel units of at most ``_UNIT`` summaries.

        A unit holds summaries with the same references (one topic), so that the references'
        samples are embedded once per topic; each unit builds their balls again (cheap next to
        scoring eight summaries), so that a single topic spreads over all workers too.
        """
        chunks: list[list[SummaryItem]] = []
        for item in items:
            last = chunks[-1] if chunks else None
            if last and last[0].references == item.references and len(last) < _UNIT:
                last.append(item)
            else:
                chunks.append([item])

        def units():
            # A generator: samples are embedded (here, by the one encoder) only when a worker
            # is about to be free, so memory holds a few units' samples, not all of them.
            reference = (None, None)
            for chunk in chunks:
                if reference[0] != chunk[0].references:
                    reference = (chunk[0].references,
                                 self._samples(list(chunk[0].references)))
                yield (self._scorer, reference[1],
                       [self._samples([item.text]) for item in chunk])

        for scores in run_units(_score_group, units(), n_jobs=n_jobs, progress=progress,
                                desc=f"summaries (units of {_UNIT})", total=len(chunks)):
            yield from (self._count(s) for s in scores)


@dataclass(frozen=True)
class _SetScorer:
    """The settings and arithmetic of :class:`WordSetMetrics`, without the encoder.

    Picklable (arrays in, floats out), so that a worker process can score a topic.
    """

    ks: tuple[int, ...]
    prd_clusters: int
    prd_runs: int
    seed: int
    dtype: str
    neighbours: str | geometry.IndexSettings = "exact"

    @property
    def min_samples(self) -> int:
        return max(max(self.ks) + 1, self.prd_clusters)

    @property
    def names(self) -> list[str]:
        out = ["PRD precision"]
        for k in self.ks:
            out += [f"IPR precision (K={k})", f"ME Petersen (K={k})",
                    f"ME Schnabel quality (K={k})", f"ME CAPTURE (K={k})"]
        return out

    def reference(self, samples: np.ndarray) -> tuple[np.ndarray, geometry.KNNBalls | None]:
        """The reference samples and their balls at the largest K (the smaller are prefixes).

        On the index path the balls are None: one index over the union of the references and
        a summary finds both sets' balls and their members in one search per point, where
        keeping the references' would still search every reference point again for its
        members (about 40,000 word samples a set: three passes took 47 s, one about 31 s).
        """
        if samples.ndim != 2 or len(samples) < self.min_samples:
            raise ValueError(f"the references give {len(samples)} samples; at least "
                             f"{self.min_samples} are needed (max K + 1 and the PRD clusters)")
        if self.neighbours != "exact":
            return samples, None
        return samples, geometry.knn_balls(samples, max(self.ks), dtype=self.dtype,
                                           name="reference samples")

    def score(self, cand: np.ndarray, ref: np.ndarray,
              ref_balls: geometry.KNNBalls | None) -> dict[str, float] | None:
        """Every score of one summary's samples; None when it has too few samples."""
        if cand.ndim != 2 or len(cand) < self.min_samples:
            return None
        out = {"PRD precision": self.prd_precision(ref, cand, self.prd_clusters)}
        ks = {k: k for k in self.ks}
        if ref_balls is None:
            ref_balls, cand_balls, memberships = geometry.mutual_balls_at(
                ref, cand, self.ks, dtype=self.dtype, neighbours=self.neighbours,
                names=("reference samples", "summary samples"))
            out.update(self.ball_scores(ref_balls, cand_balls, ks, memberships))
        else:
            cand_balls = geometry.knn_balls(cand, max(self.ks), dtype=self.dtype,
                                            name="summary samples")
            out.update(self.ball_scores(ref_balls, cand_balls, ks))
        return {name: float(out[name]) for name in self.names}

    def prd_precision(self, ref: np.ndarray, cand: np.ndarray, clusters: int) -> float:
        """PRD's ``F_{1/8}``, the larger set subsampled (``seed``) to the smaller's size."""
        rng = np.random.default_rng(self.seed)
        n = min(len(ref), len(cand))
        sub_ref = ref[np.sort(rng.choice(len(ref), n, replace=False))] if len(ref) > n else ref
        sub_cand = cand[np.sort(rng.choice(len(cand), n, replace=False))] if len(cand) > n else cand
        return prd(sub_ref, sub_cand, num_clusters=clusters, num_runs=self.prd_runs,
                   seed=self.seed).f_beta_inv

    def ball_scores(self, ref_balls: geometry.KNNBalls, cand_balls: geometry.KNNBalls,
                    ks: Mapping[int, int], memberships=None) -> dict[str, float]:
        """IPR precision and Mark-Evaluate at each name ``K=k`` of ``ks`` (k -> the K used),
        from balls at a K at least as large, and their ``memberships`` at every K used
        (:func:`markeval.geometry.mutual_memberships`; computed exactly here when None)."""
        out = {}
        if memberships is None:
            memberships = geometry.mutual_memberships(ref_balls, cand_balls,
                                                      sorted(set(ks.values())), dtype=self.dtype)
        for k, used in ks.items():
            a, b = ref_balls.prefix(used), cand_balls.prefix(used)
            # S = the references, S' = the summary, as in mark_evaluate(reference, candidate, k).
            s_in_prime, prime_in_s = memberships[used]
            me = mark_evaluate_from_balls(a, b, membership=(s_in_prime, prime_in_s))
            out[f"IPR precision (K={k})"] = float(prime_in_s.inside_any.mean())
            out[f"ME Petersen (K={k})"] = me.petersen.score
            out[f"ME Schnabel quality (K={k})"] = me.schnabel_quality.score
            out[f"ME CAPTURE (K={k})"] = me.capture.score
        return out


#: Rules :func:`adapted_set_scores` may apply to a pair of small sets, by name.
ADAPTATION_RULES = ("empty", "k capped", "clusters capped")


def adapted_set_scores(reference: np.ndarray, candidate: np.ndarray, *, ks: Sequence[int],
                       prd_clusters: int = 20, prd_runs: int = 2, seed: int = 0,
                       dtype: str = "float32") -> tuple[dict[str, float], set[str]]:
    """The scores of :class:`WordSetMetrics` for one pair of small sets, every set scored.

    Where :class:`WordSetMetrics` gives a summary too short for the largest ``K`` or the
    clusters 0, this adapts the settings to the pair, by three stated rules:

    * ``"empty"``: a side without samples (an empty output) scores 0 on every metric, the
      worst possible, since nothing of it matches the other side;
    * ``"k capped"``: a ``K`` with ``K >= n = min(|R|, |C|)`` is scored at ``K = n - 1``, the
      largest that leaves every k-NN ball a neighbour (under its own name ``K=k``);
    * ``"clusters capped"``: PRD clusters the union of the two sets balanced to ``n`` each,
      so at most ``2n`` clusters; fewer than ``prd_clusters`` when ``2n`` is smaller.

    Returns
    -------
    scores : dict
        As :class:`WordSetMetrics` returns them.
    rules : set of str
        The rules of :data:`ADAPTATION_RULES` applied to this pair.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> scores, rules = adapted_set_scores(rng.normal(size=(6, 3)), rng.normal(size=(4, 3)),
    ...                                    ks=(1, 10), prd_clusters=20, prd_runs=1)
    >>> sorted(rules), 0 <= scores["ME Petersen (K=10)"] <= 1
    (['clusters capped', 'k capped'], True)
    """
    reference = np.asarray(reference, dtype=np.float64)
    candidate = np.asarray(candidate, dtype=np.float64)
    scorer = _SetScorer(tuple(sorted(int(k) for k in ks)), int(prd_clusters), int(prd_runs),
                        check_seed(seed), dtype)
    n = min(len(reference), len(candidate))
    if n < 2:  # an empty side (one sample cannot happen with several layers per token)
        return dict.fromkeys(scorer.names, 0.0), {"empty"}
    used = {k: min(k, n - 1) for k in scorer.ks}
    clusters = min(scorer.prd_clusters, 2 * n)
    rules = ({"k capped"} if used[scorer.ks[-1]] < scorer.ks[-1] else set()) | (
        {"clusters capped"} if clusters < scorer.prd_clusters else set())
    out = {"PRD precision": scorer.prd_precision(reference, candidate, clusters)}
    top = max(used.values())
    balls = [geometry.knn_balls(x, top, dtype=dtype, name=name)
             for x, name in ((reference, "reference"), (candidate, "candidate"))]
    out.update(scorer.ball_scores(*balls, used))
    return {name: float(out[name]) for name in scorer.names}, rules


def _score_group(scorer: _SetScorer, reference: np.ndarray,
                 candidates: list[np.ndarray]) -> list[dict[str, float] | None]:
    """One parallel unit: a few summaries of a topic against the topic's reference samples."""
    ref, balls = scorer.reference(reference)
    return [scorer.score(cand, ref, balls) for cand in candidates]


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
    interval over topics (``ci_low``, ``ci_high``; NaN with fewer than two topics).

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

    keys = ["year", "metric", "human", "method"]
    rows = rows.assign(metric=[label(m, k, o) for m, k, o in
                               zip(rows["metric"], rows["k"], rows["options"])])
    out = []
    for key, group in rows.groupby(keys, sort=False):
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
    return pd.DataFrame(out)
