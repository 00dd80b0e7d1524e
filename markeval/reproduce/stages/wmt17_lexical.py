"""MoverScore Table 7, SentBLEU and chrF++ rows: two encoder-free baselines on WMT17 segments.

No encoder enters these rows, so they check the protocol: the 560 DA-judged segments of each
into-English pair, one score per segment, the absolute Pearson correlation with the
standardised DA score, per pair and averaged. Each metric is run as the WMT17 metrics task ran
its baseline (Bojar et al., 2017):

* **SentBLEU** — Moses' ``sentence-bleu``: BLEU with add-one smoothing of the 2- to 4-gram
  counts (Lin & Och's BLEU+1; ``smooth="add-k"``, ``smooth_value=1``), on the text as
  distributed (lower-cased and Moses-tokenized: ``tokenize="none"``, no detokenizing);
* **chrF++** — chrF2++ (character 6-grams and word 1-2-grams, β = 2) on detokenized text, as
  the book's chrF chapter computes it.

A unit is one language pair; its rows are the per-segment scores, so a reader can resample
them (bootstrap intervals, Williams' test). They are long rows in the vocabulary of
:mod:`markeval.experiments.vocabulary`: ``bleu`` with options "sentence, BLEU+1" and
``chrf++`` with options "sentence", no encoder, protocol ``segment``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from markeval.reproduce.stage import Stage, comparison_row

#: Our metric -> (how it is computed, whether the text is detokenized first).
METRICS = {
    "SentBLEU": ({"smooth": "add-k", "smooth_value": 1, "tokenize": "none"}, False),
    "chrF++": ({"word_order": 2, "beta": 2}, True),
}
SETTINGS = {"SentBLEU": "BLEU+1 (add-one on 2-4-grams), tokenized text as distributed",
            "chrF++": "chrF2++ (char 6-grams, word 2-grams, beta 2), detokenized"}
#: Our metric -> its registry name and options (:mod:`markeval.experiments.vocabulary`).
NAMES = {"SentBLEU": ("bleu", "sentence, BLEU+1"), "chrF++": ("chrf++", "sentence")}


def _settings(profile: str) -> dict:
    return {"pairs": ["cs-en", "lv-en"] if profile == "ci" else
            ["cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en"],
            "segments": 100 if profile == "ci" else None}


def score_segments(pair: str, metric: str, *, segments: int | None = None) -> pd.DataFrame:
    """One metric's scores of the judged segments of ``pair``, run as WMT17 ran it.

    ``segments``: that many judged segments (``sentence_subset``), default all 560. Returns
    the table of :func:`markeval.experiments.translation.segment_level_scores`.
    """
    from markeval.experiments.translation import segment_level_scores, sentence_subset
    from markeval.lexical.bleu import sentence_bleu
    from markeval.lexical.chrf import sentence_chrf

    options, detokenize = METRICS[metric]
    one = sentence_bleu if metric == "SentBLEU" else sentence_chrf
    return segment_level_scores(
        pair, {metric: lambda hyps, refs: [one(h, [r], **options).score
                                           for h, r in zip(hyps, refs)]},
        subset=sentence_subset(560, segments), detokenize=detokenize)


def _compute(unit: str, settings: dict) -> pd.DataFrame:
    from markeval.experiments.vocabulary import LONG_COLUMNS

    table = pd.concat([score_segments(unit, metric, segments=settings["segments"])
                       for metric in METRICS], ignore_index=True)
    metric, options = zip(*table["metric"].map(NAMES))
    table = table.assign(encoder="", protocol="segment", metric=metric, k=np.nan,
                         options=options, value=table["score"])
    return table[["pair", "sid", "system", "human", *LONG_COLUMNS]]


def correlations(rows: pd.DataFrame) -> pd.DataFrame:
    """|Pearson r| with DA per (metric, pair), and the average over pairs (pair ``Average``);
    the metric by the name of MoverScore Table 7's row (a key of :data:`METRICS`)."""
    ours = {name: paper_row for paper_row, name in NAMES.items()}
    rows = rows.assign(metric=[ours[(m, o)] for m, o in zip(rows["metric"], rows["options"])])
    per_pair = pd.DataFrame([
        {"metric": metric, "pair": pair,
         "value": abs(np.corrcoef(group["value"], group["human"])[0, 1])}
        for (metric, pair), group in rows.groupby(["metric", "pair"], sort=False)])
    average = per_pair.groupby("metric", sort=False)["value"].mean().reset_index()
    return pd.concat([per_pair, average.assign(pair="Average")], ignore_index=True)


def _compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    n = settings["segments"] or 560
    return pd.DataFrame([
        comparison_row("MoverScore", "Table 7", r.metric, r.pair, r.value,
                       f"{SETTINGS[r.metric]}; {n} segments per pair; |Pearson r|")
        for r in correlations(rows).itertuples()])


STAGES = (Stage(
    name="wmt17_lexical", title="MoverScore Table 7, SentBLEU and chrF++ rows (WMT17 segments)",
    settings=_settings, units=lambda settings: list(settings["pairs"]), compute=_compute,
    compare=_compare,
    check_units=lambda settings: ["lv-en"] if settings["segments"] else ["zh-en"]),)
