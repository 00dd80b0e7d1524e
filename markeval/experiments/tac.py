"""The TAC 2008/2009 study of both papers, in one place: its constants, harness and tables.

MoverScore Table 2 correlates ROUGE, BERTScore and MoverScore with TAC's human scores;
Mark-Evaluate Table 3 adds PRD, IPR and its estimators (TAC 2009). The stages ``tac_rouge``,
``tac_embedding`` and ``tac_embedding_mpnet`` (:mod:`markeval.reproduce.stages`) choose
settings and units (one topic of one year); what a unit computes and how the rows are set
beside the papers is here:

* the study's constants: the human scores (:data:`HUMAN`), the correlations and their columns
  in either paper, which of our metrics stands beside which row or column, the K fixed in
  advance (:data:`DEFAULT_K`), the packaged encoders;
* the harness, a topic to long rows (:mod:`markeval.experiments.vocabulary`):
  :func:`rouge_topic_scores` and :func:`embedding_topic_scores` give every metric's
  per-summary scores, :func:`topic_rows` their correlation with each human score;
* the tables beside the papers: :func:`rouge_comparison` (MoverScore Table 2, ROUGE rows) and
  :func:`embedding_comparison` (its BERTScore and MoverScore rows, and Mark-Evaluate Table 3).

The protocol is the MoverScore authors' (``examples/run_summarization.py`` and the ROUGE of
their ``webservice`` in AIPHES/emnlp19-moverscore): every judged summary of a topic enters,
the human ones included, against the four references; ROUGE-N is recall with the references
pooled, on ``\\w+`` tokens with Snowball stemming; a pairwise metric scores a summary against
each reference and averages; a set metric compares the summary's word samples with the
references' pooled samples; the correlations are per topic, averaged over topics
(:func:`~markeval.experiments.summarization.topic_means`).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from markeval.experiments.choosing_k import best_k
from markeval.experiments.vocabulary import ENCODER, MPNET
from markeval.paper_values import ME_COLUMNS, comparison_row

__all__ = ["BERTSCORE_LAYER", "CORRELATIONS", "DEFAULT_K", "ENCODER", "HUMAN", "ME_METHODS",
           "MPNET", "MS_METHODS", "MS_ROWS", "ROUGE_OPTIONS", "ROUGE_PROTOCOL", "ROUGE_ROWS",
           "check_settings", "embedding_comparison", "embedding_topic_scores", "family_best_k",
           "rouge_comparison", "rouge_key", "rouge_topic_scores", "topic_rows"]

#: Human score -> its label in both papers' tables.
HUMAN = {"responsiveness": "Responsiveness", "pyr_score": "Pyramid"}
#: The correlations of every topic's rows.
CORRELATIONS = ("pearson", "spearman", "kendall")
#: Correlation -> MoverScore Table 2's sub-column, Mark-Evaluate Table 3's row suffix.
MS_METHODS = {"pearson": "r", "spearman": "rho"}
ME_METHODS = {"pearson": "r", "spearman": "p", "kendall": "k"}
#: Our ROUGE type (registry name) -> the row of MoverScore Table 2.
ROUGE_ROWS = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2"}
#: How the study reads ROUGE (:mod:`markeval.experiments.vocabulary`): recall, references pooled.
ROUGE_OPTIONS, ROUGE_PROTOCOL = "recall", "pooled references"
ROUGE_SETTING = "recall; 4 refs pooled; \\w+ tokens, Snowball; all judged summaries; topic mean"
#: Our metric (registry name, options) -> the row of MoverScore Table 2.
MS_ROWS = {("bertscore", ""): "BERTScore-F1", ("moverscore", ""): "Wmd-1 + BERT + MNLI + PMeans",
           ("moverscore", "WMD-2"): "Wmd-2 + BERT + MNLI + PMeans",
           ("moverscore", "SMD"): "SMD + BERT + MNLI + PMeans"}
#: The K fixed in advance for each k-NN metric (the papers' defaults).
DEFAULT_K = {"ipr_precision": 3, "me_petersen": 1, "me_schnabel_quality": 1, "me_capture": 1}
#: The hidden state BERTScore reads per encoder: MiniLM's last (its default here); for the
#: BERT-base-shaped all-mpnet-base-v2 the 9th of 12, bert-score's layer for BERT-base.
BERTSCORE_LAYER = {ENCODER: None, MPNET: 9}


def _topic(unit: str):
    from markeval.datasets import load_tac

    year, topic_id = unit.split("/")
    return int(year), next(t for t in load_tac(int(year)) if t.topic_id == topic_id)


def rouge_key(rouge_type: str) -> tuple:
    """The ``scores`` key of :func:`topic_rows` for ROUGE-N recall, references pooled."""
    return ROUGE_PROTOCOL, rouge_type, None, ROUGE_OPTIONS


def _rouge_recalls(items, types, *, multi_ref: str = "pool", tokenize: str = "words",
                   use_stemmer: bool = True) -> dict[tuple, np.ndarray]:
    from markeval.lexical.rouge import rouge

    result = rouge([i.text for i in items], [list(i.references) for i in items], list(types),
                   multi_ref=multi_ref, tokenize=tokenize, use_stemmer=use_stemmer,
                   empty_reference="zero")
    return {rouge_key(t): np.array(result[t].recalls) for t in types}


def rouge_topic_scores(unit: str, settings: dict):
    """A ``tac_rouge`` unit's summary items (every judged one, the human ones included) and
    each ROUGE type's per-summary recall, keyed as :func:`topic_rows` takes them."""
    from markeval.experiments.summarization import summary_items

    _, topic = _topic(unit)
    items = summary_items([topic], include_human=True,
                          human_references=settings["human_references"])
    return items, _rouge_recalls(items, settings["types"], multi_ref=settings["multi_ref"],
                                 tokenize=settings["tokenize"],
                                 use_stemmer=settings["use_stemmer"])


def topic_rows(year: int, scores: dict, items, *, encoder: str = "", **extra) -> pd.DataFrame:
    """A topic's rows: each metric's correlation with each human score, by each method.

    ``scores``: ``(protocol, metric, k, options)`` (:mod:`markeval.experiments.vocabulary`)
    -> one score per item of the topic; ``encoder`` names the model a metric read ("" for
    ROUGE). ``extra`` columns (counts) come before the vocabulary's. A correlation undefined
    in this topic (constant scores) is NaN, left out of the mean over topics.
    """
    from markeval.stats import correlation

    rows = []
    for (protocol, metric, k, options), values in scores.items():
        named = {"encoder": "" if metric in ROUGE_ROWS else encoder, "protocol": protocol,
                 "metric": metric, "k": k, "options": options}
        for human in HUMAN:
            truth = [getattr(i, human) for i in items]
            for method in CORRELATIONS:
                try:
                    value = correlation(values, truth, method, n_resamples=0).value
                except ValueError:
                    value = float("nan")
                rows.append({"year": year, "human": human, "method": method,
                             "n_summaries": len(items), **extra, **named, "value": value})
    return pd.DataFrame(rows)


def rouge_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """MoverScore Table 2's ROUGE rows beside ours (``rows``: the ``tac_rouge`` stage's)."""
    from markeval.experiments.summarization import topic_means

    out = []
    for r in topic_means(rows).itertuples():
        if r.method not in MS_METHODS:
            continue
        column = f"TAC-{r.year} / {HUMAN[r.human]} / {MS_METHODS[r.method]}"
        out.append(comparison_row("MoverScore", "Table 2", ROUGE_ROWS[r.name], column,
                                  r.value, ROUGE_SETTING))
    return pd.DataFrame(out)


def check_settings(settings: dict) -> None:
    """Refuse ``tac_embedding`` settings the study cannot run, naming the value."""
    if settings["stop_words"] not in ("moverscore", "none"):
        raise ValueError(f"stop_words must be 'moverscore' or 'none', got {settings['stop_words']!r}")
    if settings["encoder"] not in BERTSCORE_LAYER:
        raise ValueError(f"encoder must be one of {sorted(BERTSCORE_LAYER)} (the packaged "
                         f"models), got {settings['encoder']!r}")
    bad = [y for y in settings["years"] if y not in (2008, 2009)]
    if bad:
        raise ValueError(f"TAC years are 2008 and 2009, got {bad[0]!r}")


@functools.lru_cache(maxsize=4)
def _year_idf(year: int, encoder: str):
    """The year's idf over the encoder's word pieces."""
    from markeval.datasets import load_tac
    from markeval.encoders import resolve_encoder
    from markeval.experiments.summarization import moverscore_idf

    return moverscore_idf(load_tac(year), resolve_encoder(encoder))


def _encoder(encoder: str):
    from markeval.encoders import memoize

    # A fresh memory per unit: a unit's texts are encoded in the same batches whether it
    # runs alone (the consistency check) or after other units.
    return memoize(encoder, layers=range(-5, 0))


def embedding_topic_scores(unit: str, settings: dict):
    """A ``tac_embedding`` unit's summary items (more than ``min_sentences`` sentences),
    every metric's per-summary scores (keyed as :func:`topic_rows` takes them), and how many
    summaries were too short for the set metrics."""
    from markeval.experiments.summarization import (MOVERSCORE_STOP_WORDS, embedding_scores,
                                                    moverscore_items)

    check_settings(settings)
    year, topic = _topic(unit)
    items = moverscore_items([topic], min_sentences=settings["min_sentences"])
    stops = MOVERSCORE_STOP_WORDS if settings["stop_words"] == "moverscore" else ()
    encoder = settings["encoder"]
    scores, n_short = embedding_scores(
        items, _encoder(encoder), _year_idf(year, encoder), ks=settings["ks"],
        stop_words=stops, prd_clusters=settings["prd_clusters"], prd_runs=settings["prd_runs"],
        seed=settings["seed"], n_jobs=None, bertscore_layer=BERTSCORE_LAYER[encoder])
    return items, {**_rouge_recalls(items, ("rouge1", "rouge2")), **scores}, n_short


def _value(means, year, name, human, method, k=None, options="") -> float:
    """The mean correlation of one metric (registry keys) in ``means`` (:func:`topic_means`)."""
    at_k = means.k.isna() if k is None else means.k == k
    return means[(means.year == year) & (means.name == name) & at_k
                 & (means.options == options) & (means.human == human)
                 & (means.method == method)]["value"].iloc[0]


def family_best_k(means: pd.DataFrame, year: int, family: str, human: str, method: str,
                  ks) -> int:
    """:func:`~markeval.experiments.choosing_k.best_k` of one k-NN metric's (registry name)
    mean correlation (``means``: :func:`~markeval.experiments.summarization.topic_means`)."""
    return best_k({k: _value(means, year, family, human, method, k) for k in ks})


def _setting(settings: dict, k: str = "") -> str:
    topics = settings["topics_per_year"] or "all"
    layer = BERTSCORE_LAYER[settings["encoder"]]
    bert = f" (BERTScore layer {layer})" if layer else ""
    return (f"{settings['encoder']} last 5 layers{bert}; >1-sentence summaries incl. human, 4 refs"
            f"{k}; {topics} topics/year; topic mean")


def embedding_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """MoverScore Table 2 (BERTScore, MoverScore rows) and Mark-Evaluate Table 3 beside ours
    (``rows``: a ``tac_embedding`` stage's); a k-NN metric at its default K and at its best
    single K of ``settings["ks"]``."""
    from markeval.experiments.summarization import topic_means

    means = topic_means(rows)
    out = []
    for (metric, options), row in MS_ROWS.items():
        for year in sorted(set(means.year)):
            for human, judged in HUMAN.items():
                for method, stat in MS_METHODS.items():
                    out.append(comparison_row(
                        "MoverScore", "Table 2", row, f"TAC-{year} / {judged} / {stat}",
                        _value(means, year, metric, human, method, options=options),
                        _setting(settings)))
    if 2009 in set(means.year):
        from markeval.paper_values import paper_table

        table3 = paper_table("Mark-Evaluate", "Table 3")
        for metric, column in ME_COLUMNS.items():
            for human, judged in HUMAN.items():
                for method, stat in ME_METHODS.items():
                    row = f"{judged} ({stat})"
                    if not np.isfinite(table3.loc[row, column]):
                        continue  # Table 3 prints "-" (BERTScore's Kendall cells)
                    if metric not in DEFAULT_K:
                        variants = [(None, "")]
                    else:
                        k0 = DEFAULT_K[metric]
                        kb = family_best_k(means, 2009, metric, human, method, settings["ks"])
                        variants = [(k0, f"; K={k0} (default)"),
                                    (kb, f"; K={kb} (best of "
                                     f"{','.join(map(str, settings['ks']))})")]
                    for k, note in variants:
                        out.append(comparison_row(
                            "Mark-Evaluate", "Table 3", row, column,
                            _value(means, 2009, metric, human, method, k),
                            _setting(settings, note)))
    return pd.DataFrame(out)
