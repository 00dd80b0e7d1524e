"""MoverScore Table 2, ROUGE rows: ROUGE-1 and ROUGE-2 against TAC's human scores.

The protocol of the MoverScore authors' TAC evaluation (``examples/run_summarization.py`` and
the ROUGE of their ``webservice`` in AIPHES/emnlp19-moverscore), which Table 2's ROUGE rows
need to within a few thousandths:

* every judged summary of a topic enters, the human ones included, each scored against all
  four references (a human summary meets itself among them);
* ROUGE-N *recall* with the four references pooled (matches and reference n-grams summed over
  the references), on ``\\w+`` tokens with Snowball stemming;
* Pearson's r and Spearman's rho per topic, averaged over topics.

A unit is one topic of one year; its rows are that topic's correlations. What a unit computes
and how the rows meet the paper's table is the study's own (:mod:`markeval.experiments.tac`).
"""

from __future__ import annotations

import pandas as pd

from markeval.experiments.tac import (ROUGE_ROWS, rouge_comparison, rouge_topic_scores,
                                      topic_rows)
from markeval.reproduce.stage import Stage


def _settings(profile: str) -> dict:
    return {"years": [2008, 2009], "topics_per_year": 3 if profile == "ci" else None,
            "types": list(ROUGE_ROWS), "multi_ref": "pool", "tokenize": "words",
            "use_stemmer": True, "human_references": "all"}


def _units(settings: dict) -> list[str]:
    from markeval.datasets import load_tac

    n = settings["topics_per_year"]
    return [f"{year}/{topic.topic_id}" for year in settings["years"]
            for topic in load_tac(year)[:n]]


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    items, scores = rouge_topic_scores(unit, settings)
    return topic_rows(int(unit.split("/")[0]), scores, items)


STAGES = (Stage(
    name="tac_rouge", title="MoverScore Table 2, ROUGE-1/2 rows (TAC 2008, 2009)",
    settings=_settings, units=_units, compute=_compute, compare=rouge_comparison,
    check_units=lambda settings: ["2008/D0801", "2009/D0901"] if settings["topics_per_year"]
    else ["2008/D0848", "2009/D0944"]),)
