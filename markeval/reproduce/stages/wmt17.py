"""WMT17 DA: MoverScore Tables 1, 5, 6 (segment level) and Mark-Evaluate Tables 2, 5, 6 (system).

Two stages, both on all-MiniLM-L6-v2 (the papers used BERT-base fine-tuned on MNLI):

* ``wmt17_segment`` — every DA-judged segment of a pair (560 in ``full``) scored with
  SentBLEU, BERTScore P/R/F (= MoverScore's HMD), Word Mover's Distance on the same last-layer
  vectors (unigrams and bigrams: MoverScore Table 5's soft alignment), the published v1 recipe
  (WMD-1, WMD-2, SMD: power means over the last five layers; MoverScore Table 1) and WMD-1 on
  each single MiniLM layer (the analogue of MoverScore Table 6). A unit is a language pair; its
  rows are the per-segment scores, so the chapter computes correlations, intervals and
  Williams' tests from the committed rows. They are long (``pair``, ``sid``, ``system``,
  ``human``, then the columns of :mod:`markeval.experiments.vocabulary`, protocol
  ``segment``): SentBLEU is ``bleu`` with options "sentence", BERTScore P and R have options
  "P" and "R", the mover distances say what differs from the v1 unigram recipe ("WMD-1, same
  vectors", "SMD", "layer 3"). SentBLEU here is markeval's default sentence BLEU,
  a yardstick beside the embedding metrics; MoverScore Table 7's SentBLEU row is reproduced
  by the stage ``wmt17_lexical``, which runs the WMT17 baseline as the metrics task did.
* ``wmt17_system`` — every system of the five pairs of Mark-Evaluate Table 2. Unit
  ``sentence/<pair>``: for each system of the pair, BLEU, BERTScore F and MoverScore (v1,
  unigrams) over all its sentences, and the set metrics (-FID, PRD, IPR, Mark-Evaluate at each
  K) on pooled sentence vectors of all its sentences (Mark-Evaluate Table 5). Unit
  ``word/<pair>/<size>/<draw>``: the same metrics for every system on one random subset of
  ``size`` sentences (the same subset for every system of the pair; ``draw`` seeds it), the
  set metrics on word-level samples (every word piece at each of the last five layers;
  Mark-Evaluate Tables 2 and 6); the sizes and draws form the sample-size study. Its rows are
  long, in the vocabulary of :mod:`markeval.experiments.vocabulary`: ``pair``, ``system``,
  ``level``, ``size``, ``draw``, ``human`` (system DA), then ``encoder``, ``protocol``
  (``corpus`` for BLEU, BERTScore, MoverScore; ``pooled`` for the set metrics), ``metric``
  (the registry name), ``k``, ``options`` and ``value`` (FID as a distance; tables show -FID).

  Shared work is done once per unit: the references are encoded once, and their samples and
  k-NN balls (at the largest K, the smaller K read as prefixes) are reused for every system
  (:func:`~markeval.experiments.wmt17.set_metrics`). Measured on the 2-core machine (CPU
  seconds, one unit alone): ``sentence/cs-en`` (4 systems x 3005 sentences) 248 s (422 s wall,
  under load); ``word/cs-en/100/0`` 64 s and ``word/cs-en/200/0`` 194 s. So about 4, 10, 16
  and 48 CPU s per system at 25, 50, 100 and 200 sentences (the k-NN counts grow with the
  square of the samples, PRD's k-means linearly): one draw of all 50 systems costs about 3, 8,
  13 and 40 CPU minutes, and one at 400 sentences would cost about two CPU hours (the stage
  ``wmt17_word_curve`` continues the curve with a neighbour index instead). The encoder reads
  about 60 texts per CPU second, so the sentence level (every sentence of the 50 systems and
  the references, about 150,000 texts) costs about 40 CPU minutes. Units run in parallel (one
  per core). ``FULL_WORD_DRAWS`` is sized to that.

What a unit computes, and how the rows are set beside the papers, is the study's own
(:mod:`markeval.experiments.wmt17`); this module chooses the settings and the units.
"""

from __future__ import annotations

import pandas as pd

from markeval.experiments.wmt17 import (DEFAULT_K, ENCODER, IPR_K, KS, MPNET, SEGMENT_PAIRS,
                                        SYSTEM_PAIRS, score_systems, segment_comparison,
                                        segment_unit_rows, system_comparison)
from markeval.reproduce.stage import Stage

#: Full profile, word level: sentences per system -> random subsets (draws) of that size.
#: About 70 CPU minutes (module docstring), 35 on two cores; 400 sentences would add about two
#: CPU hours. Tables 2 and 6 use the largest size, draw 0.
FULL_WORD_DRAWS = {25: 3, 50: 1, 100: 1, 200: 1}


def _segment_settings(profile: str, encoder: str = ENCODER) -> dict:
    ci = profile == "ci"
    # the 12-layer encoder encodes about six times slower: its ci slice is smaller
    segments = (60 if encoder == ENCODER else 12) if ci else None
    return {"pairs": SEGMENT_PAIRS, "segments": segments, "encoder": encoder, "detokenize": True,
            "disk_cache": ci}


def _system_settings(profile: str, encoder: str = ENCODER) -> dict:
    ci = profile == "ci"
    common = {"encoder": encoder, "detokenize": True, "ks": list(KS), "default_k": DEFAULT_K,
              "ipr_k": IPR_K, "prd_clusters": 20, "prd_runs": 2, "disk_cache": ci}
    if encoder != ENCODER:
        # The 12-layer encoder reads about 35 texts a second on two cores, six times fewer
        # than MiniLM: every sentence of every system would take over an hour. Its subset:
        # 500 sentences per system (Table 5) and one draw of 50 (Tables 2 and 6).
        return {"pairs": ["cs-en"] if ci else SYSTEM_PAIRS, "sentences": 24 if ci else 500,
                "word_sizes": [3] if ci else [50], "word_draws": [1], **common}
    # ci: two pairs (13 systems), a few sentences, near a minute in all. full: the five pairs
    # of ME Table 2, every sentence at sentence level; at word level the sizes and draws that
    # keep the whole stage near 55 minutes on two CPU cores (see the module docstring).
    return {"pairs": ["cs-en", "ru-en"] if ci else SYSTEM_PAIRS, "encoder": encoder,
            "detokenize": True, "sentences": 24 if ci else None,
            "word_sizes": [3, 6] if ci else list(FULL_WORD_DRAWS),
            "word_draws": [2, 2] if ci else list(FULL_WORD_DRAWS.values()),
            "ks": list(KS), "default_k": DEFAULT_K, "ipr_k": IPR_K,
            "prd_clusters": 20, "prd_runs": 2, "disk_cache": ci}


def _system_units(settings: dict) -> list[str]:
    if len(settings["word_sizes"]) != len(settings["word_draws"]):
        raise ValueError("word_sizes and word_draws must have the same length, got "
                         f"{settings['word_sizes']} and {settings['word_draws']}")
    units = [f"sentence/{pair}" for pair in settings["pairs"]]
    for size, draws in zip(settings["word_sizes"], settings["word_draws"]):
        units += [f"word/{pair}/{size}/{draw}" for pair in settings["pairs"]
                  for draw in range(draws)]
    return units


def _parse_unit(unit: str, settings: dict) -> tuple[str, str, int | None, int]:
    """``sentence/<pair>`` or ``word/<pair>/<size>/<draw>`` -> (level, pair, size, draw)."""
    level, pair, *rest = unit.split("/")
    if level == "sentence" and not rest:
        return level, pair, settings["sentences"], 0
    if level == "word" and len(rest) == 2:
        return level, pair, int(rest[0]), int(rest[1])
    raise ValueError(f"unit must be 'sentence/<pair>' or 'word/<pair>/<size>/<draw>', "
                     f"got {unit!r}")


def _system_cost(unit: str, settings: dict) -> float:
    """Estimated CPU seconds of a unit, from the measurements in the module docstring: a
    sentence unit ~0.02 s per sentence and system (encoding dominates); a word unit of ``n``
    sentences 3 + 0.03 n + 0.001 n^2 s per system (the k-NN counts grow with the square of
    the samples). all-mpnet-base-v2 encodes six times slower."""
    from markeval.datasets import load_wmt17, wmt17_da_systems

    level, pair, size, _ = _parse_unit(unit, settings)
    systems = len(wmt17_da_systems(pair))
    slower = 6.0 if settings["encoder"] == MPNET else 1.0
    if level == "sentence":
        total = len(load_wmt17(pair).references)
        return systems * 0.02 * (total if size is None else min(size, total)) * slower
    return systems * ((3 + 0.03 * size) * slower + 0.001 * size ** 2)


def _system_compute(unit: str, settings: dict) -> pd.DataFrame:
    """Every system of a pair on the same sentences, against references encoded once."""
    return score_systems(*_parse_unit(unit, settings), settings)


def _system_check_units(settings: dict) -> list[str]:
    """cs-en's first word unit of the smallest size (in full: 25 sentences' word samples,
    about 12 s with MiniLM and a minute with mpnet on two cores), and in ci its sentence
    unit too (a full sentence unit encodes every sentence, or 500, of every system: minutes)."""
    word = f"word/cs-en/{settings['word_sizes'][0]}/0"
    if settings["sentences"] is None or settings["sentences"] > 50:
        return [word]
    return ["sentence/cs-en", word]


def _stages(encoder: str, suffix: str = "") -> tuple[Stage, Stage]:
    model = "" if encoder == ENCODER else f", {encoder}"
    return (
        Stage(name=f"wmt17_segment{suffix}",
              title=f"MoverScore Tables 1, 5, 6 (WMT17 segment-level DA{model})",
              settings=lambda profile: _segment_settings(profile, encoder),
              units=lambda settings: list(settings["pairs"]),
              compute=segment_unit_rows,
              compare=segment_comparison,
              # lv-en in either profile: its 560 segments take seconds with MiniLM and about
              # a minute with mpnet (which encodes ~6 times slower)
              check_units=lambda settings: ["lv-en"],
              # No k-NN here: every score is a continuous function of the float32 vectors,
              # which differ between CPUs and BLAS builds by about 1e-6; 1e-4 leaves a margin
              # of 100.
              tolerance=1e-4, selection=("pairs",), parallel=True),
        Stage(name=f"wmt17_system{suffix}",
              title=("Mark-Evaluate Tables 2, 5, 6 and the word-level sample-size study "
                     f"(WMT17{model})" if not model else
                     f"Mark-Evaluate Tables 2, 5, 6 on a subset (WMT17{model})"),
              settings=lambda profile: _system_settings(profile, encoder),
              units=_system_units, compute=_system_compute,
              compare=system_comparison, check_units=_system_check_units,
              # Besides the ~1e-6 of the float32 vectors (BLEU aside, every score moves by
              # about that), a k-NN or k-means score steps by 1/n when another CPU's last bits
              # swap two neighbours. The word units checked (ci and full) have >= 200 samples
              # per set, so one swap moves a score by <= 1/200. (Among the few sentence vectors
              # of a ci sentence unit a swap would move it by more, but it needs two distances
              # within ~1e-6 of each other, far below their gaps there.)
              tolerance=5e-3, selection=("pairs", "word_sizes", "word_draws"), parallel=True,
              cost=_system_cost),
    )


#: MiniLM (the book's encoder) and all-mpnet-base-v2 (the papers' model shape), side by side.
STAGES = _stages(ENCODER) + _stages(MPNET, "_mpnet")
