"""MoverScore Table 2, ROUGE rows: ROUGE-1 and ROUGE-2 against TAC's human scores.

The protocol of the MoverScore authors' TAC evaluation (``examples/run_summarization.py`` and
the ROUGE of their ``webservice`` in AIPHES/emnlp19-moverscore), which Table 2's ROUGE rows
need to within a few thousandths:

* every judged summary of a topic enters, the human ones included, each scored against all
  four references (a human summary meets itself among them);
* ROUGE-N *recall* with the four references pooled (matches and reference n-grams summed over
  the references), on ``\\w+`` tokens with Snowball stemming;
* Pearson's r and Spearman's rho per topic, averaged over topics.

A unit is one topic of one year; its rows are that topic's correlations.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from markeval.lexical.rouge import rouge
from markeval.reproduce.stage import Stage, comparison_row

#: Our ROUGE type (registry name) -> the row of MoverScore Table 2.
ROWS = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2"}
#: How the stage reads ROUGE (:mod:`markeval.experiments.vocabulary`): recall, references pooled.
ROUGE_OPTIONS, ROUGE_PROTOCOL = "recall", "pooled references"
#: Human score -> its column label in MoverScore Table 2; correlation -> its sub-column.
HUMAN = {"responsiveness": "Responsiveness", "pyr_score": "Pyramid"}
METHODS = {"pearson": "r", "spearman": "rho", "kendall": None}
SETTING = "recall; 4 refs pooled; \\w+ tokens, Snowball; all judged summaries; topic mean"


def _settings(profile: str) -> dict:
    return {"years": [2008, 2009], "topics_per_year": 3 if profile == "ci" else None,
            "types": list(ROWS), "multi_ref": "pool", "tokenize": "words", "use_stemmer": True,
            "human_references": "all"}


def _units(settings: dict) -> list[str]:
    from markeval.datasets import load_tac

    n = settings["topics_per_year"]
    return [f"{year}/{topic.topic_id}" for year in settings["years"]
            for topic in load_tac(year)[:n]]


def topic_scores(unit: str, settings: dict):
    """The topic's summary items and each ROUGE type's per-summary recall."""
    from markeval.datasets import load_tac
    from markeval.experiments.summarization import summary_items

    year, topic_id = unit.split("/")
    topic = next(t for t in load_tac(int(year)) if t.topic_id == topic_id)
    items = summary_items([topic], include_human=True,
                          human_references=settings["human_references"])
    result = rouge([i.text for i in items], [list(i.references) for i in items],
                   settings["types"], multi_ref=settings["multi_ref"],
                   tokenize=settings["tokenize"], use_stemmer=settings["use_stemmer"],
                   empty_reference="zero")
    return items, {t: np.array(result[t].recalls) for t in settings["types"]}


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
        named = {"encoder": "" if metric in ROWS else encoder, "protocol": protocol,
                 "metric": metric, "k": k, "options": options}
        for human in HUMAN:
            truth = [getattr(i, human) for i in items]
            for method in METHODS:
                try:
                    value = correlation(values, truth, method, n_resamples=0).value
                except ValueError:
                    value = float("nan")
                rows.append({"year": year, "human": human, "method": method,
                             "n_summaries": len(items), **extra, **named, "value": value})
    return pd.DataFrame(rows)


def rouge_key(rouge_type: str) -> tuple:
    """The ``scores`` key of :func:`topic_rows` for ROUGE-N recall, references pooled."""
    return ROUGE_PROTOCOL, rouge_type, None, ROUGE_OPTIONS


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    items, scores = topic_scores(unit, settings)
    return topic_rows(int(unit.split("/")[0]),
                      {rouge_key(rouge_type): values for rouge_type, values in scores.items()},
                      items)


def _compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.experiments.summarization import topic_means
    from markeval.experiments.vocabulary import label

    paper_row = {label(name, options=ROUGE_OPTIONS): row for name, row in ROWS.items()}
    out = []
    for r in topic_means(rows).itertuples():
        if METHODS[r.method] is None:
            continue
        column = f"TAC-{r.year} / {HUMAN[r.human]} / {METHODS[r.method]}"
        out.append(comparison_row("MoverScore", "Table 2", paper_row[r.metric], column,
                                  r.value, SETTING))
    return pd.DataFrame(out)


STAGES = (Stage(
    name="tac_rouge", title="MoverScore Table 2, ROUGE-1/2 rows (TAC 2008, 2009)",
    settings=_settings, units=_units, compute=_compute, compare=_compare,
    check_units=lambda settings: ["2008/D0801", "2009/D0901"] if settings["topics_per_year"]
    else ["2008/D0848", "2009/D0944"]),)
