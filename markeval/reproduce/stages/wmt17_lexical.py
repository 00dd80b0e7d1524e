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

from markeval.experiments.wmt17 import lexical_comparison, lexical_unit_rows
from markeval.reproduce.stage import Stage


def _settings(profile: str) -> dict:
    return {"pairs": ["cs-en", "lv-en"] if profile == "ci" else
            ["cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en"],
            "segments": 100 if profile == "ci" else None}


STAGES = (Stage(
    name="wmt17_lexical", title="MoverScore Table 7, SentBLEU and chrF++ rows (WMT17 segments)",
    settings=_settings, units=lambda settings: list(settings["pairs"]), compute=lexical_unit_rows,
    compare=lexical_comparison,
    check_units=lambda settings: ["lv-en"] if settings["segments"] else ["zh-en"]),)
