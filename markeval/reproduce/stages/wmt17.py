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
  (:func:`set_metrics`). Measured on the 2-core machine (CPU seconds, one unit alone):
  ``sentence/cs-en`` (4 systems x 3005 sentences) 248 s (422 s wall, under load);
  ``word/cs-en/100/0`` 64 s and ``word/cs-en/200/0`` 194 s. So about 4, 10, 16 and 48 CPU s
  per system at 25, 50, 100 and 200 sentences (the k-NN counts grow with the square of the
  samples, PRD's k-means linearly): one draw of all 50 systems costs about 3, 8, 13 and 40
  CPU minutes, and one at 400 sentences would cost about two CPU hours (the stage
  ``wmt17_word_curve`` continues the curve with a neighbour index instead). The encoder reads
  about 60 texts per CPU second, so the sentence level (every sentence of the 50 systems and
  the references, about 150,000 texts) costs about 40 CPU minutes. Units run in parallel
  (one per core). ``FULL_WORD_DRAWS`` is sized to that.

Every unit builds its own memoized encoder: the vectors of a text depend (in the last bits) on
the batch it was encoded in, so a unit computed alone must encode exactly the batches it
encoded inside a full run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from markeval.experiments.choosing_k import best_k
from markeval.experiments.vocabulary import LONG_COLUMNS, label
from markeval.reproduce.stage import Stage, comparison_row

__all__ = ["DEFAULT_K", "IPR_K", "KS", "ME_COLUMNS", "ME_K_COLUMNS", "SEGMENT_PAIRS",
           "SYSTEM_PAIRS", "estimator_best_k", "k_choices", "layer_label", "me_column_label",
           "score_systems", "segment_scores", "sentence_subset_of", "set_metrics",
           "system_scores", "unit_encoder"]

SYSTEM_PAIRS = ["cs-en", "de-en", "ru-en", "tr-en", "zh-en"]  # the pairs of ME Table 2
SEGMENT_PAIRS = ["cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en"]  # MoverScore T1
KS = (1, 3, 10)  # the K grid for Mark-Evaluate
#: Full profile, word level: sentences per system -> random subsets (draws) of that size.
#: About 70 CPU minutes (module docstring), 35 on two cores; 400 sentences would add about two
#: CPU hours. Tables 2 and 6 use the largest size, draw 0.
FULL_WORD_DRAWS = {25: 3, 50: 1, 100: 1, 200: 1}
DEFAULT_K = 1  # fixed before seeing these data (the Mark-Evaluate chapter: only K = 1 separates)
IPR_K = 3  # the k of the IPR paper
ENCODER = "all-MiniLM-L6-v2"
MPNET = "all-mpnet-base-v2"
#: Per packaged encoder: its layers, and the one hidden state BERTScore reads, which is also
#: the layer of the "same vectors" soft alignment (MoverScore Table 5 read BERT's 9th of 12).
#: MiniLM: its last (BERTScore's default here); all-mpnet-base-v2, shaped like BERT-base: 9.
ENCODER_LAYERS = {ENCODER: {"layers": 6, "same": 6}, MPNET: {"layers": 12, "same": 9}}
#: The options of MoverScore on BERTScore's vectors: every piece kept, unit length (MS T5).
SAME_VECTORS = dict(preset=None, remove_subwords=False, remove_punctuation=False)


def unit_encoder(layers, settings: dict, capacity: int | None = None):
    """A fresh memoized encoder for one unit (disk-cached in the ci profile)."""
    from markeval.datasets import cache_dir
    from markeval.encoders import memoize

    folder = cache_dir() / "embeddings" if settings["disk_cache"] else None
    return memoize(settings["encoder"], layers=layers, cache_dir=folder, capacity=capacity)


# --------------------------------------------------------------------------------------------
# segment level


def segment_scores(hyps: list[str], refs: list[str], encoder, *, layer: int = -1
                   ) -> dict[tuple[str, str], list[float]]:
    """Every segment-level metric of the stage on one pair's judged segments, keyed by
    registry name and options (:mod:`markeval.experiments.vocabulary`).

    Sentence BLEU; BERTScore P, R and F (MoverScore Table 5's HMD) and the mover distances
    on the "same vectors" read hidden state ``layer``; the v1 recipe (unigrams: the registry's
    MoverScore, bigrams, sentence points) its last five; the Table 6 analogue every layer of
    the encoder in turn.
    """
    from markeval import bertscore, moverscore, sentence_bleu

    b = bertscore(hyps, refs, model=encoder, layer=layer, progress=False)
    out = {("bleu", "sentence"): [sentence_bleu(h, [r]).score for h, r in zip(hyps, refs)],
           ("bertscore", "P"): b.sentence_precision, ("bertscore", "R"): b.sentence_recall,
           ("bertscore", ""): b.sentence_f1}
    for n in (1, 2):
        out[("moverscore", f"WMD-{n}, same vectors")] = moverscore(
            hyps, refs, model=encoder, progress=False, n_gram=n, layers=[layer],
            **SAME_VECTORS).sentence_scores
    for name, options in {"": dict(n_gram=1), "WMD-2": dict(n_gram=2),
                          "SMD": dict(level="sentence")}.items():
        out[("moverscore", name)] = moverscore(hyps, refs, model=encoder, preset="v1",
                                               progress=False, **options).sentence_scores
    for layer in range(1, encoder.num_layers + 1):
        out[("moverscore", f"layer {layer}")] = moverscore(
            hyps, refs, model=encoder, preset="v1", n_gram=1, layers=[layer],
            progress=False).sentence_scores
    return out


def _segment_settings(profile: str, encoder: str = ENCODER) -> dict:
    ci = profile == "ci"
    # the 12-layer encoder encodes about six times slower: its ci slice is smaller
    segments = (60 if encoder == ENCODER else 12) if ci else None
    return {"pairs": SEGMENT_PAIRS, "segments": segments, "encoder": encoder, "detokenize": True,
            "disk_cache": ci}


def _segment_compute(unit: str, settings: dict) -> pd.DataFrame:
    from markeval.experiments.translation import segment_level_scores, sentence_subset

    layers = ENCODER_LAYERS[settings["encoder"]]
    encoder = unit_encoder(range(0, layers["layers"] + 1), settings)
    named = {}  # segment_level_scores takes string keys: "<metric>|<options>"

    def scores(hyps, refs):
        out = segment_scores(hyps, refs, encoder, layer=layers["same"])
        named.update({f"{m}|{o}": (m, o) for m, o in out})
        return {f"{m}|{o}": v for (m, o), v in out.items()}

    table = segment_level_scores(
        unit, {"m": scores}, subset=sentence_subset(560, settings["segments"]),
        detokenize=settings["detokenize"])
    table["metric"] = table.metric.str.replace("m ", "", n=1)
    # metric by metric, each over the segments in the order they were judged
    wide = table.pivot_table(index=["sid", "system", "human"], columns="metric",
                             values="score", sort=False).reset_index()
    long = wide.melt(id_vars=["sid", "system", "human"], var_name="name", value_name="value")
    metric, options = zip(*long.pop("name").map(named))
    long = long.assign(pair=unit, encoder=settings["encoder"], protocol="segment",
                       metric=metric, k=np.nan, options=options)
    return long[["pair", "sid", "system", "human", *LONG_COLUMNS]].astype({"sid": int})


#: Our segment metric's label -> (table, row) of MoverScore beside it (the Table 6 layers
#: are added per encoder by :func:`segment_rows`).
SEGMENT_ROWS = {
    label("bertscore"): [("Table 1", "BERTScore-F1"), ("Table 5", "Hmd-F1 + BERT")],
    label("bertscore", options="R"): [("Table 5", "Hmd-Recall + BERT")],
    label("bertscore", options="P"): [("Table 5", "Hmd-Prec + BERT")],
    label("moverscore", options="WMD-1, same vectors"): [("Table 5", "Wmd-unigram + BERT")],
    label("moverscore", options="WMD-2, same vectors"): [("Table 5", "Wmd-bigram + BERT")],
    label("moverscore"): [("Table 1", "Wmd-1 + BERT + MNLI + PMeans"),
                          ("Table 6", "Wmd-1 + BERT + PMeans")],
    label("moverscore", options="WMD-2"): [("Table 1", "Wmd-2 + BERT + MNLI + PMeans")],
    label("moverscore", options="SMD"): [("Table 1", "Smd + BERT + MNLI + PMeans")],
}


def layer_label(layer: int) -> str:
    """The label of WMD-1 (v1 recipe) on one single layer of the encoder."""
    return label("moverscore", options=f"layer {layer}")


def segment_rows(encoder: str) -> dict[str, list[tuple[str, str]]]:
    """:data:`SEGMENT_ROWS` with the Table 6 layers: BERT's last five (8-12) beside the
    encoder's last five, counted from the top (MiniLM's 2-6, all-mpnet-base-v2's 8-12)."""
    top = ENCODER_LAYERS[encoder]["layers"]
    return {**SEGMENT_ROWS, **{layer_label(top - 12 + bert): [
        ("Table 6", f"Wmd-1 + BERT + Layer {bert}")] for bert in range(8, 13)}}


def _segment_compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.paper_values import paper_table

    from markeval.experiments.translation import segment_correlations

    corr = segment_correlations(rows)
    r = corr.set_index(["metric", "pair"]).value
    n = int(corr.n.max())
    encoder = settings["encoder"]
    same = ENCODER_LAYERS[encoder]["same"]
    same = "last-layer" if same == ENCODER_LAYERS[encoder]["layers"] else f"layer-{same}"
    out = []
    for metric, places in segment_rows(encoder).items():
        for table, row in places:
            columns = list(paper_table("MoverScore", table).columns)
            detail = (f"same {same} vectors" if "same" in metric or "BERTScore" in metric
                      else "single layer, v1 recipe" if "layer" in metric else "v1 recipe")
            setting = f"{encoder}; {detail}; {n} segments per pair; |Pearson r|"
            for column in columns:
                if column == "Average":
                    value = float(np.mean([r[(metric, p)] for p in SEGMENT_PAIRS]))
                else:
                    value = r[(metric, column)]
                out.append(comparison_row("MoverScore", table, row, column, value, setting))
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# system level


def set_metrics(embed, settings: dict):
    """The stage's PRD, IPR and Mark-Evaluate scorer on the samples ``embed(texts)`` gives.

    A :class:`markeval.experiments.summarization.WordSetMetrics`: it keeps the reference
    samples and their k-NN balls (at the largest K; the smaller K are their first neighbours)
    while every system of a unit is scored against the same references, and draws the balls of
    a system's samples once for all K. IPR precision at ``k`` is the share of the system's
    samples inside some reference ball of radius the ``k``-th neighbour, exactly
    :func:`markeval.improved_precision_recall`; Mark-Evaluate is exactly
    :func:`markeval.mark_evaluate` ``(reference, system, K)``. The balls and their members are
    found exactly, or by a neighbour index where ``settings["neighbours"]`` is ``"index"``
    (:mod:`markeval.geometry.index`).
    """
    from markeval.experiments.summarization import WordSetMetrics

    ks = sorted(set(settings["ks"]) | {settings["ipr_k"]})
    return WordSetMetrics(embed, ks=ks, prd_clusters=settings["prd_clusters"],
                          prd_runs=settings["prd_runs"], seed=0,
                          neighbours=settings.get("neighbours", "exact"))


def system_scores(hyps: list[str], refs: list[str], encoder, sets, *, ipr_k: int = IPR_K,
                  layer: int = -1) -> list[dict]:
    """One system's scores: BLEU, BERTScore F, MoverScore (v1) and the set metrics.

    ``sets`` is :func:`set_metrics` on one granularity's samples (pooled sentence vectors, or
    each word piece at each of the last five layers); IPR is kept at ``ipr_k`` only.
    BERTScore reads hidden state ``layer``. Returns rows ``protocol``, ``metric``, ``k``,
    ``value`` in the vocabulary of :mod:`markeval.experiments.vocabulary`.
    """
    from markeval import bertscore, bleu, fid, moverscore

    text = {"bleu": bleu(hyps, refs).score,
            "bertscore": bertscore(hyps, refs, model=encoder, layer=layer, progress=False).f1,
            "moverscore": moverscore(hyps, refs, model=encoder, preset="v1",
                                     progress=False).score}
    out = [{"protocol": "corpus", "metric": m, "k": None, "value": v} for m, v in text.items()]
    ref, cand = sets.embed(refs), sets.embed(hyps)  # read from the encoder's memory
    out.append({"protocol": "pooled", "metric": "fid", "k": None,
                "value": fid(ref, cand, allow_singular=min(len(ref), len(cand)) <= ref.shape[1]
                             ).value})
    del ref, cand  # the set metrics embed again: a copy of both sets less at their peak
    for name, value in sets(hyps, refs).items():
        metric, k = sets.registry_name(name)
        if metric != "ipr_precision" or k == ipr_k:
            out.append({"protocol": "pooled", "metric": metric, "k": k, "value": value})
    return out


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


def sentence_subset_of(pair: str, size, draw: int = 0) -> np.ndarray:
    """The indices of the sentences of ``pair`` a unit scores: all (``size`` None), or a
    random subset of ``size`` seeded by ``draw`` (the same for every system)."""
    from markeval.datasets import load_wmt17
    from markeval.experiments.translation import sentence_subset

    return sentence_subset(len(load_wmt17(pair).references), size, seed=draw)


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


def score_systems(level: str, pair: str, size: int | None, draw: int, settings: dict,
                  systems: list[str] | None = None) -> pd.DataFrame:
    """The rows of ``wmt17_system``'s units: every system of ``pair`` (or those named in
    ``systems``) on the subset of ``size`` sentences seeded by ``draw``, against references
    encoded once, at ``level`` ("sentence": pooled sentence vectors, "word": word samples)."""
    from functools import partial

    from markeval.datasets import load_wmt17, wmt17_da_systems, wmt17_system_match
    from markeval.encoders import sentence_embeddings
    from markeval.population.samples import word_samples

    if pair not in settings["pairs"]:
        raise KeyError(f"pair {pair!r} is not in this profile's pairs {settings['pairs']}")
    data = load_wmt17(pair, detokenize=settings["detokenize"])
    keep = sentence_subset_of(pair, size, draw)
    refs = [data.references[i] for i in keep]
    humans = wmt17_da_systems(pair).set_index("system").score
    if systems is not None:
        unknown = sorted(set(systems) - set(humans.index))
        if unknown:
            raise KeyError(f"systems {unknown} are not among {pair}'s {list(humans.index)}")
        humans = humans[humans.index.isin(systems)]
    mapping = wmt17_system_match(pair).mapping
    # One encoder for the unit, remembering the references and one system's outputs at a
    # time (a pair's every output at five layers would not fit in memory).
    encoder = unit_encoder(range(-5, 0), settings, capacity=2 * len(keep) + 8)
    embed = sentence_embeddings if level == "sentence" else word_samples
    sets = set_metrics(partial(embed, model=encoder, progress=False), settings)
    out = []
    for system, human in humans.items():
        outputs = data.systems[mapping[system]]
        scores = system_scores([outputs[i] for i in keep], refs, encoder, sets,
                               ipr_k=settings["ipr_k"],
                               layer=ENCODER_LAYERS[settings["encoder"]]["same"])
        common = {"pair": pair, "system": system, "level": level, "size": len(keep),
                  "draw": draw, "human": float(human)}
        out += [{**common, **row, "encoder": settings["encoder"], "options": "",
                 "value": float(row["value"])} for row in scores]
    return pd.DataFrame(out)[[*common, *LONG_COLUMNS]]


def estimator_best_k(corr: pd.DataFrame, metric: str, ks=KS) -> int:
    """:func:`~markeval.experiments.choosing_k.best_k` of one ME estimator's (registry name)
    average r over the pairs (``corr``: one granularity's correlations, by label)."""
    return best_k({k: corr[corr.metric == label(metric, k)].value.mean() for k in ks})


#: Mark-Evaluate Tables 2, 5, 6: column -> the registry name of our metric beside it.
ME_COLUMNS = {"BERTScore": "bertscore", "MoverScore": "moverscore", "PRD": "prd_precision",
              "IMPAR": "ipr_precision", "ME_Schnabel": "me_schnabel_quality",
              "ME_Petersen": "me_petersen", "ME_CAPTURE": "me_capture"}
#: The Mark-Evaluate columns read at a chosen K (IPR is read at the IPR paper's k).
ME_K_COLUMNS = ("ME_Schnabel", "ME_Petersen", "ME_CAPTURE")


def me_column_label(column: str, k: int = DEFAULT_K, ipr_k: int = IPR_K) -> str:
    """The label of our metric beside a column of Mark-Evaluate Tables 2, 5 and 6: an
    estimator at ``k``, IPR at ``ipr_k``, oriented (``-FID``), as in
    :func:`~markeval.experiments.translation.system_long`.

    Examples
    --------
    >>> me_column_label("ME_Schnabel", 3), me_column_label("IMPAR"), me_column_label("PRD")
    ('ME Schnabel Q K=3', 'IPR precision K=3', 'PRD F1/8')
    """
    k = k if column in ME_K_COLUMNS else ipr_k if column == "IMPAR" else None
    return label(ME_COLUMNS[column], k, oriented=True)
#: Mark-Evaluate table -> the granularity of our set metrics beside it.
ME_TABLES = {"Table 2": "word", "Table 6": "word", "Table 5": "sentence"}


def k_choices(column: str, corr: pd.DataFrame, settings: dict) -> list[tuple]:
    """The K at which a Mark-Evaluate column is compared, with how it was chosen: an
    estimator at the default K and at the best single K of the grid (``corr``: the
    correlations of the level), IPR at the IPR paper's k; the rest have no K."""
    if column in ME_K_COLUMNS:
        best = estimator_best_k(corr, ME_COLUMNS[column], settings["ks"])
        return [(settings["default_k"], f"default K={settings['default_k']}"),
                (best, f"best single K={best} of {settings['ks']}")]
    if column == "IMPAR":
        return [(settings["ipr_k"], f"IPR k={settings['ipr_k']}")]
    return [(None, "")]


def _system_compare(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.experiments.translation import system_correlations
    from markeval.paper_values import paper_table

    out = []
    # BERTScore and MoverScore (Table 2): means over every scored sentence of the system
    per_sentence = system_correlations(rows, "sentence").set_index(["metric", "pair"]).value
    # every sentence of a pair: their number differs between pairs
    low, high = (int(n) for n in rows[rows.level == "sentence"]["size"].agg(["min", "max"]))
    sentences = f"{low}-{high}" if low < high else f"{low}"
    for table, level in ME_TABLES.items():
        corr = system_correlations(rows, level)
        r = corr.set_index(["metric", "pair"]).value
        if level == "word":
            size = int(rows[rows.level == "word"]["size"].max())
            sizes = (f"protocol: pooled, {size} sentences per system (draw 0), word pieces "
                     "x last 5 layers")
        else:
            sizes = f"{sentences} sentences per system, pooled sentence vectors"
        for column in paper_table("Mark-Evaluate", table).columns:
            for k, k_label in k_choices(column, corr, settings):
                metric = me_column_label(column, k, settings["ipr_k"])
                setting = "; ".join(s for s in (settings["encoder"], sizes, k_label) if s)
                values = {p: r[(metric, p)] for p in settings["pairs"]}
                if column in ("BERTScore", "MoverScore"):
                    setting = (f"{settings['encoder']}; mean over {sentences} sentences per "
                               "system")
                    values = {p: per_sentence[(metric, p)] for p in settings["pairs"]}
                for pair, value in values.items():
                    out.append(comparison_row("Mark-Evaluate", table, f"{pair} (r)", column,
                                              value, setting))
                finite = [v for v in values.values() if np.isfinite(v)]
                average = float(np.mean(finite)) if finite else float("nan")
                out.append(comparison_row("Mark-Evaluate", table, "Average (r)", column,
                                          average, setting))
    return pd.DataFrame(out)


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
              compute=_segment_compute, compare=_segment_compare,
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
              compare=_system_compare, check_units=_system_check_units,
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
