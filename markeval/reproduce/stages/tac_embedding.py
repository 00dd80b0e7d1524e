"""MoverScore Table 2 (BERTScore, MoverScore rows) and Mark-Evaluate Table 3 on TAC 2008/2009.

The protocol of the MoverScore authors' TAC script (``examples/run_summarization.py`` in
AIPHES/emnlp19-moverscore), applied to every metric of both tables:

* every judged summary of a topic with more than one sentence enters, the human ones included
  (:func:`~markeval.experiments.summarization.moverscore_items`), each scored against each of
  the four references (a human summary meets itself among them) and the four scores averaged;
  a set metric compares the summary's word samples with the four references' pooled samples;
* MoverScore: the ``"v1"`` preset (power means over the last five layers), idf from all the
  year's judged summaries (summary side) and references (reference side), the authors' stop
  words (:func:`~markeval.experiments.summarization.moverscore_idf`,
  :data:`~markeval.experiments.summarization.MOVERSCORE_STOP_WORDS`);
* Pearson's r, Spearman's rho and Kendall's tau per topic, averaged over topics.

The encoder is all-MiniLM-L6-v2 (stage ``tac_embedding``) or all-mpnet-base-v2, shaped like the
papers' BERT-base (12 layers, 768 dimensions; stage ``tac_embedding_mpnet``, BERTScore on its
9th layer as bert-score reads BERT-base), not the papers' BERT-base fine-tuned on MNLI. ROUGE-1 and ROUGE-2 (recall, pooled references, as in the ``tac_rouge``
stage) are scored on the same summaries, for a row that no encoder touches. A unit is one
topic of one year; its rows are that topic's correlations, each metric named as in
:mod:`markeval.experiments.vocabulary` (protocol "mean over references" for BERTScore and
MoverScore, "pooled references" for ROUGE and the set metrics). What a unit computes and how
the rows meet the papers' tables is the study's own (:mod:`markeval.experiments.tac`).
"""

from __future__ import annotations

import pandas as pd

from markeval.experiments.tac import (ENCODER, MPNET, check_settings, embedding_comparison,
                                      embedding_topic_scores, topic_rows)
from markeval.reproduce.stage import Stage


def _settings(profile: str, encoder: str = ENCODER) -> dict:
    return {"years": [2008, 2009], "topics_per_year": 1 if profile == "ci" else None,
            "min_sentences": 2, "encoder": encoder, "layers": [-5, -4, -3, -2, -1],
            "ks": [1, 2, 3, 5], "prd_clusters": 20, "prd_runs": 2, "seed": 0,
            "stop_words": "moverscore"}


def _units(settings: dict) -> list[str]:
    from markeval.datasets import load_tac

    check_settings(settings)
    n = settings["topics_per_year"]
    return [f"{year}/{topic.topic_id}" for year in settings["years"]
            for topic in load_tac(year)[:n]]


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    items, scores, n_short = embedding_topic_scores(unit, settings)
    return topic_rows(int(unit.split("/")[0]), scores, items, encoder=settings["encoder"],
                      n_too_short=n_short)


def _check_units(settings: dict) -> list[str]:
    # D0901, the ci profile's 2009 topic, in either profile and with either encoder (about
    # half a minute with mpnet on two cores)
    return ["2009/D0901"]


def _stage(encoder: str, suffix: str = "") -> Stage:
    model = "" if encoder == ENCODER else f"; {encoder}"
    return Stage(
        name=f"tac_embedding{suffix}",
        title=("MoverScore Table 2 (BERTScore, MoverScore) and Mark-Evaluate Table 3 "
               f"(TAC {' and '.join(map(str, _settings('full', encoder)['years']))}{model})"),
        settings=lambda profile: _settings(profile, encoder), units=_units, compute=_compute,
        compare=embedding_comparison, check_units=_check_units,
        # float32 vectors differ between CPUs in the last bits: a summary's k-NN score then
        # steps by 1/n (n >= 200 word samples) when two neighbours swap, and a topic's
        # correlation moves by less than that
        tolerance=5e-3,
        # the profiles differ only in how many topics they take: a topic's rows are the same
        # in both (so the consistency test recomputes the checked topic once, for ci)
        selection=("topics_per_year",))


#: MiniLM (the book's encoder) and all-mpnet-base-v2 (the papers' model shape), side by side.
STAGES = (_stage(ENCODER), _stage(MPNET, "_mpnet"))
