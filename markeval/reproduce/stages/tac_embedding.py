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
MoverScore, "pooled references" for ROUGE and the set metrics).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from markeval.reproduce.stage import Stage, comparison_row

#: Human score -> its label in both papers' tables.
HUMAN = {"responsiveness": "Responsiveness", "pyr_score": "Pyramid"}
#: Correlation -> MoverScore Table 2's sub-column, Mark-Evaluate Table 3's row suffix.
MS_METHODS = {"pearson": "r", "spearman": "rho"}
ME_METHODS = {"pearson": "r", "spearman": "p", "kendall": "k"}
#: embedding_scores' pairwise metrics -> (registry name, options); each summary is scored
#: against each reference and the scores averaged.
PAIRWISE = {"BERTScore F": ("bertscore", ""), "MoverScore WMD-1": ("moverscore", ""),
            "MoverScore WMD-2": ("moverscore", "WMD-2"), "MoverScore SMD": ("moverscore", "SMD")}
#: Our metric (registry name, options) -> the row of MoverScore Table 2.
MS_ROWS = {("bertscore", ""): "BERTScore-F1", ("moverscore", ""): "Wmd-1 + BERT + MNLI + PMeans",
           ("moverscore", "WMD-2"): "Wmd-2 + BERT + MNLI + PMeans",
           ("moverscore", "SMD"): "SMD + BERT + MNLI + PMeans"}
#: Our metric (registry name) -> the column of Mark-Evaluate Table 3 (TAC 2009 only).
ME_COLUMNS = {"bertscore": "BERTScore", "moverscore": "MoverScore", "prd_precision": "PRD",
              "ipr_precision": "IMPAR", "me_petersen": "ME_Petersen",
              "me_schnabel_quality": "ME_Schnabel", "me_capture": "ME_CAPTURE"}
#: The K fixed in advance for each k-NN metric (the papers' defaults).
DEFAULT_K = {"ipr_precision": 3, "me_petersen": 1, "me_schnabel_quality": 1, "me_capture": 1}
METHODS = ("pearson", "spearman", "kendall")
ENCODER = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"
#: The hidden state BERTScore reads per encoder: MiniLM's last (its default here); for the
#: BERT-base-shaped all-mpnet-base-v2 the 9th of 12, bert-score's layer for BERT-base.
BERTSCORE_LAYER = {ENCODER: None, MPNET: 9}


def _settings(profile: str, encoder: str = ENCODER) -> dict:
    return {"years": [2008, 2009], "topics_per_year": 1 if profile == "ci" else None,
            "min_sentences": 2, "encoder": encoder, "layers": [-5, -4, -3, -2, -1],
            "ks": [1, 2, 3, 5], "prd_clusters": 20, "prd_runs": 2, "seed": 0,
            "stop_words": "moverscore"}


def _check(settings: dict) -> None:
    if settings["stop_words"] not in ("moverscore", "none"):
        raise ValueError(f"stop_words must be 'moverscore' or 'none', got {settings['stop_words']!r}")
    if settings["encoder"] not in BERTSCORE_LAYER:
        raise ValueError(f"encoder must be one of {sorted(BERTSCORE_LAYER)} (the packaged "
                         f"models), got {settings['encoder']!r}")
    bad = [y for y in settings["years"] if y not in (2008, 2009)]
    if bad:
        raise ValueError(f"TAC years are 2008 and 2009, got {bad[0]!r}")


def _units(settings: dict) -> list[str]:
    from markeval.datasets import load_tac

    _check(settings)
    n = settings["topics_per_year"]
    return [f"{year}/{topic.topic_id}" for year in settings["years"]
            for topic in load_tac(year)[:n]]


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


def topic_scores(unit: str, settings: dict):
    """The topic's summary items, every metric's per-summary scores (keyed as
    :func:`~markeval.reproduce.stages.tac_rouge.topic_rows` takes them), and the too-short
    count."""
    from markeval.datasets import load_tac
    from markeval.experiments.summarization import (MOVERSCORE_STOP_WORDS, WordSetMetrics,
                                                    embedding_scores, moverscore_items)
    from markeval.lexical.rouge import rouge
    from markeval.reproduce.stages.tac_rouge import rouge_key

    _check(settings)
    year, topic_id = unit.split("/")
    topic = next(t for t in load_tac(int(year)) if t.topic_id == topic_id)
    items = moverscore_items([topic], min_sentences=settings["min_sentences"])
    stops = MOVERSCORE_STOP_WORDS if settings["stop_words"] == "moverscore" else ()
    encoder = settings["encoder"]
    scores, n_short = embedding_scores(
        items, _encoder(encoder), _year_idf(int(year), encoder), ks=settings["ks"],
        stop_words=stops, prd_clusters=settings["prd_clusters"], prd_runs=settings["prd_runs"],
        seed=settings["seed"], n_jobs=None, bertscore_layer=BERTSCORE_LAYER[encoder])
    lexical = rouge([i.text for i in items], [list(i.references) for i in items],
                    ["rouge1", "rouge2"], multi_ref="pool", tokenize="words", use_stemmer=True,
                    empty_reference="zero")
    keyed = {rouge_key(t): np.array(lexical[t].recalls) for t in ("rouge1", "rouge2")}
    for name, values in scores.items():
        if name in PAIRWISE:
            metric, options = PAIRWISE[name]
            keyed[("mean over references", metric, None, options)] = values
        else:
            keyed[("pooled references", *WordSetMetrics.registry_name(name), "")] = values
    return items, keyed, n_short


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    from markeval.reproduce.stages.tac_rouge import topic_rows

    items, scores, n_short = topic_scores(unit, settings)
    return topic_rows(int(unit.split("/")[0]), scores, items, encoder=settings["encoder"],
                      n_too_short=n_short)


def family_best_k(means: pd.DataFrame, year: int, family: str, human: str, method: str,
                  ks) -> int:
    """:func:`~markeval.experiments.choosing_k.best_k` of one k-NN metric's (registry name)
    mean correlation (``means``: :func:`~markeval.experiments.summarization.topic_means`)."""
    from markeval.experiments.choosing_k import best_k
    from markeval.experiments.vocabulary import label

    return best_k({k: _value(means, year, label(family, k), human, method) for k in ks})


def _setting(settings: dict, k: str = "") -> str:
    topics = settings["topics_per_year"] or "all"
    layer = BERTSCORE_LAYER[settings["encoder"]]
    bert = f" (BERTScore layer {layer})" if layer else ""
    return (f"{settings['encoder']} last 5 layers{bert}; >1-sentence summaries incl. human, 4 refs"
            f"{k}; {topics} topics/year; topic mean")


def _value(means, year, metric, human, method) -> float:
    return means[(means.year == year) & (means.metric == metric) & (means.human == human)
                 & (means.method == method)]["value"].iloc[0]


def _compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.experiments.summarization import topic_means
    from markeval.experiments.vocabulary import label

    means = topic_means(rows)
    out = []
    for (metric, options), row in MS_ROWS.items():
        for year in sorted(set(means.year)):
            for human, judged in HUMAN.items():
                for method, stat in MS_METHODS.items():
                    out.append(comparison_row(
                        "MoverScore", "Table 2", row, f"TAC-{year} / {judged} / {stat}",
                        _value(means, year, label(metric, options=options), human, method),
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
                        variants = [(label(metric), "")]
                    else:
                        k0 = DEFAULT_K[metric]
                        kb = family_best_k(means, 2009, metric, human, method, settings["ks"])
                        variants = [(label(metric, k0), f"; K={k0} (default)"),
                                    (label(metric, kb), f"; K={kb} (best of "
                                     f"{','.join(map(str, settings['ks']))})")]
                    for name, note in variants:
                        out.append(comparison_row(
                            "Mark-Evaluate", "Table 3", row, column,
                            _value(means, 2009, name, human, method), _setting(settings, note)))
    return pd.DataFrame(out)


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
        compare=_compare, check_units=_check_units,
        # float32 vectors differ between CPUs in the last bits: a summary's k-NN score then
        # steps by 1/n (n >= 200 word samples) when two neighbours swap, and a topic's
        # correlation moves by less than that
        tolerance=5e-3,
        # the profiles differ only in how many topics they take: a topic's rows are the same
        # in both (so the consistency test recomputes the checked topic once, for ci)
        selection=("topics_per_year",))


#: MiniLM (the book's encoder) and all-mpnet-base-v2 (the papers' model shape), side by side.
STAGES = (_stage(ENCODER), _stage(MPNET, "_mpnet"))
