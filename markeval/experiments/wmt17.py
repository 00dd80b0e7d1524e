"""The WMT17 study of both papers, in one place: its constants, its harness and its tables.

MoverScore Tables 1, 5, 6 score every DA-judged segment; Mark-Evaluate Tables 2, 5, 6 score
every system of five language pairs. The stages ``wmt17_segment``, ``wmt17_system`` (and their
all-mpnet-base-v2 twins), ``wmt17_segment_sets``, ``wmt17_word_curve``, ``wmt17_prd_seeds`` and
``wmt17_system_recent`` (:mod:`markeval.reproduce.stages`) only choose settings and units;
what they compute and how their rows are set beside the papers is here:

* the study's constants (:data:`SYSTEM_PAIRS`, :data:`SEGMENT_PAIRS`, the K grid :data:`KS`,
  :data:`DEFAULT_K`, :data:`IPR_K`, the packaged encoders and their layers);
* the harness, inputs to long rows (:mod:`markeval.experiments.vocabulary`), one function per
  stage's unit: :func:`segment_unit_rows` (one pair's judged segments),
  :func:`score_systems` (every system of a pair on one subset of sentences),
  :func:`segment_set_unit_rows` (set metrics per segment), :func:`recent_system_unit_rows`
  (the metrics published since, on pooled sentence vectors), :func:`prd_seed_unit_rows` (PRD
  over k-means seeds) and :func:`lexical_unit_rows` (MoverScore Table 7's SentBLEU and chrF++,
  run as WMT17 ran them);
* the tables beside the papers, rows to ``paper_comparison.csv`` lines:
  :func:`segment_comparison` (MoverScore Tables 1, 5, 6), :func:`me_table_lines` and
  :func:`system_comparison` (Mark-Evaluate Tables 2, 5, 6; the chapter shows the same lines),
  :func:`segment_set_comparison`, :func:`prd_seed_comparison` and
  :func:`lexical_comparison`, with :func:`me_column_metric` and :func:`k_choices`.

Every unit builds its own memoized encoder (:func:`unit_encoder`): the vectors of a text depend
(in the last bits) on the batch it was encoded in, so a unit computed alone must encode exactly
the batches it encoded inside a full run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from markeval.experiments.choosing_k import best_k
from markeval.experiments.vocabulary import ENCODER, LONG_COLUMNS, MPNET, label
from markeval.paper_values import ME_COLUMNS, comparison_row

__all__ = ["DEFAULT_K", "ENCODER", "ENCODER_LAYERS", "IPR_K", "KS", "LEXICAL_METRICS",
           "LEXICAL_NAMES", "LEXICAL_SETTINGS", "ME_K_COLUMNS", "ME_TABLES", "MPNET",
           "SAME_VECTORS", "SEGMENT_PAIRS", "SEGMENT_ROWS", "SYSTEM_PAIRS", "correlation_of",
           "estimator_best_k", "k_choices", "layer_label", "layer_metric", "lexical_comparison",
           "lexical_correlations", "lexical_segment_scores", "lexical_unit_rows",
           "me_column_metric", "me_table_lines", "prd_seed_comparison", "prd_seed_unit_rows",
           "recent_system_unit_rows", "score_systems", "segment_comparison", "segment_rows",
           "segment_scores", "segment_set_comparison", "segment_set_unit_rows", "segment_unit_rows",
           "sentence_subset_of", "set_metrics", "system_comparison", "system_scores",
           "unit_encoder"]

SYSTEM_PAIRS = ["cs-en", "de-en", "ru-en", "tr-en", "zh-en"]  # the pairs of ME Table 2
SEGMENT_PAIRS = ["cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en"]  # MoverScore T1
KS = (1, 3, 10)  # the K grid for Mark-Evaluate
DEFAULT_K = 1  # fixed before seeing these data (the Mark-Evaluate chapter: only K = 1 separates)
IPR_K = 3  # the k of the IPR paper
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
    the encoder in turn; and every metric of texts added to the registry
    (:func:`markeval.registry.added`), its item scores with its registry options.
    """
    from markeval import bertscore, moverscore, registry, sentence_bleu

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
    for info in registry.added(inputs="texts"):
        out[(info.name, "")] = info.item_scores(hyps, refs)
    return out


def segment_unit_rows(pair: str, settings: dict) -> pd.DataFrame:
    """The rows of one ``wmt17_segment`` unit: :func:`segment_scores` of the judged
    segments of ``pair`` (the first ``settings["segments"]``, or all), long, protocol
    ``segment``."""
    from markeval.experiments.translation import segment_level_scores, sentence_subset

    layers = ENCODER_LAYERS[settings["encoder"]]
    encoder = unit_encoder(range(0, layers["layers"] + 1), settings)
    named = {}  # segment_level_scores takes string keys: "<metric>|<options>"

    def scores(hyps, refs):
        out = segment_scores(hyps, refs, encoder, layer=layers["same"])
        named.update({f"{m}|{o}": (m, o) for m, o in out})
        return {f"{m}|{o}": v for (m, o), v in out.items()}

    table = segment_level_scores(
        pair, {"m": scores}, subset=sentence_subset(560, settings["segments"]),
        detokenize=settings["detokenize"])
    table["metric"] = table.metric.str.replace("m ", "", n=1)
    # metric by metric, each over the segments in the order they were judged
    wide = table.pivot_table(index=["sid", "system", "human"], columns="metric",
                             values="score", sort=False).reset_index()
    long = wide.melt(id_vars=["sid", "system", "human"], var_name="name", value_name="value")
    metric, options = zip(*long.pop("name").map(named))
    long = long.assign(pair=pair, encoder=settings["encoder"], protocol="segment",
                       metric=metric, k=np.nan, options=options)
    return long[["pair", "sid", "system", "human", *LONG_COLUMNS]].astype({"sid": int})


#: Our segment metric (registry name, options) -> the (table, row) of MoverScore beside it
#: (the Table 6 layers are added per encoder by :func:`segment_rows`).
SEGMENT_ROWS = {
    ("bertscore", ""): [("Table 1", "BERTScore-F1"), ("Table 5", "Hmd-F1 + BERT")],
    ("bertscore", "R"): [("Table 5", "Hmd-Recall + BERT")],
    ("bertscore", "P"): [("Table 5", "Hmd-Prec + BERT")],
    ("moverscore", "WMD-1, same vectors"): [("Table 5", "Wmd-unigram + BERT")],
    ("moverscore", "WMD-2, same vectors"): [("Table 5", "Wmd-bigram + BERT")],
    ("moverscore", ""): [("Table 1", "Wmd-1 + BERT + MNLI + PMeans"),
                         ("Table 6", "Wmd-1 + BERT + PMeans")],
    ("moverscore", "WMD-2"): [("Table 1", "Wmd-2 + BERT + MNLI + PMeans")],
    ("moverscore", "SMD"): [("Table 1", "Smd + BERT + MNLI + PMeans")],
}


def layer_metric(layer: int) -> tuple[str, str]:
    """WMD-1 (v1 recipe) on one single layer of the encoder, as (registry name, options)."""
    return "moverscore", f"layer {layer}"


def layer_label(layer: int) -> str:
    """The label of :func:`layer_metric` in tables."""
    name, options = layer_metric(layer)
    return label(name, options=options)


def segment_rows(encoder: str) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """:data:`SEGMENT_ROWS` with the Table 6 layers: BERT's last five (8-12) beside the
    encoder's last five, counted from the top (MiniLM's 2-6, all-mpnet-base-v2's 8-12)."""
    top = ENCODER_LAYERS[encoder]["layers"]
    return {**SEGMENT_ROWS, **{layer_metric(top - 12 + bert): [
        ("Table 6", f"Wmd-1 + BERT + Layer {bert}")] for bert in range(8, 13)}}


def segment_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    from markeval.paper_values import paper_table

    from markeval.experiments.translation import segment_correlations

    corr = segment_correlations(rows)
    r = corr.set_index(["name", "options", "pair"]).value
    n = int(corr.n.max())
    encoder = settings["encoder"]
    same = ENCODER_LAYERS[encoder]["same"]
    same = "last-layer" if same == ENCODER_LAYERS[encoder]["layers"] else f"layer-{same}"
    out = []
    for (name, options), places in segment_rows(encoder).items():
        for table, row in places:
            columns = list(paper_table("MoverScore", table).columns)
            detail = (f"same {same} vectors" if name == "bertscore" or "same" in options
                      else "single layer, v1 recipe" if options.startswith("layer")
                      else "v1 recipe")
            setting = f"{encoder}; {detail}; {n} segments per pair; |Pearson r|"
            for column in columns:
                if column == "Average":
                    value = float(np.mean([r[(name, options, p)] for p in SEGMENT_PAIRS]))
                else:
                    value = r[(name, options, column)]
                out.append(comparison_row("MoverScore", table, row, column, value, setting))
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# system level


def set_metrics(embed, settings: dict):
    """The stage's PRD, IPR and Mark-Evaluate scorer on the samples ``embed(texts)`` gives.

    A :class:`markeval.experiments.word_set_metrics.WordSetMetrics`: it keeps the reference
    samples and their k-NN balls (at the largest K; the smaller K are their first neighbours)
    while every system of a unit is scored against the same references, and draws the balls of
    a system's samples once for all K. IPR precision at ``k`` is the share of the system's
    samples inside some reference ball of radius the ``k``-th neighbour, exactly
    :func:`markeval.improved_precision_recall`; Mark-Evaluate is exactly
    :func:`markeval.mark_evaluate` ``(reference, system, K)``. The balls and their members are
    found exactly, or by a neighbour index where ``settings["neighbours"]`` is ``"index"``
    (:mod:`markeval.geometry.index`).
    """
    from markeval.experiments.word_set_metrics import WordSetMetrics

    ks = sorted(set(settings["ks"]) | {settings["ipr_k"]})
    return WordSetMetrics(embed, ks=ks, prd_clusters=settings["prd_clusters"],
                          prd_runs=settings["prd_runs"], seed=0,
                          neighbours=settings.get("neighbours", "exact"))


def system_scores(hyps: list[str], refs: list[str], encoder, sets, *, ipr_k: int = IPR_K,
                  layer: int = -1) -> list[dict]:
    """One system's scores: BLEU, BERTScore F, MoverScore (v1), every metric of texts added to
    the registry (:func:`markeval.registry.added`) and the set metrics.

    ``sets`` is :func:`set_metrics` on one granularity's samples (pooled sentence vectors, or
    each word piece at each of the last five layers); IPR is kept at ``ipr_k`` only.
    BERTScore reads hidden state ``layer``. Returns rows ``protocol``, ``metric``, ``k``,
    ``value`` in the vocabulary of :mod:`markeval.experiments.vocabulary`.
    """
    from markeval import bertscore, bleu, fid, moverscore, registry

    text = {"bleu": bleu(hyps, refs).score,
            "bertscore": bertscore(hyps, refs, model=encoder, layer=layer, progress=False).f1,
            "moverscore": moverscore(hyps, refs, model=encoder, preset="v1",
                                     progress=False).score,
            **{info.name: info.score(hyps, refs) for info in registry.added(inputs="texts")}}
    out = [{"protocol": "corpus", "metric": m, "k": None, "value": v} for m, v in text.items()]
    ref, cand = sets.embed(refs), sets.embed(hyps)  # read from the encoder's memory
    out.append({"protocol": "pooled", "metric": "fid", "k": None,
                "value": fid(ref, cand, allow_singular=min(len(ref), len(cand)) <= ref.shape[1]
                             ).value})
    del ref, cand  # the set metrics embed again: a copy of both sets less at their peak
    for (metric, k), value in sets(hyps, refs).items():
        if metric != "ipr_precision" or k == ipr_k:
            out.append({"protocol": "pooled", "metric": metric, "k": k, "value": value})
    return out


def sentence_subset_of(pair: str, size, draw: int = 0) -> np.ndarray:
    """The indices of the sentences of ``pair`` a unit scores: all (``size`` None), or a
    random subset of ``size`` seeded by ``draw`` (the same for every system)."""
    from markeval.datasets import load_wmt17
    from markeval.experiments.translation import sentence_subset

    return sentence_subset(len(load_wmt17(pair).references), size, seed=draw)


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


def recent_system_unit_rows(pair: str, settings: dict) -> pd.DataFrame:
    """The rows of ``wmt17_system_recent``'s unit: every system of ``pair`` on pooled sentence
    vectors, scored by ``settings["metrics"]`` at every size and draw of the settings.

    MAUVE is defined on one feature per text (its paper quantises one GPT-2 vector per
    generation), so this study reads sentence vectors
    (:func:`~markeval.encoders.sentence_embeddings`: the encoder's mean-pooled last layer),
    not the word samples of Mark-Evaluate Tables 2 and 6, whose five layers of one word piece
    would fill the same buckets together. The references and each system's outputs are
    encoded once, in one call per side over every sentence some subset needs; a size's subset
    is :func:`sentence_subset_of` ``(pair, size, draw)``, the same for every system, and the
    metrics' seed (MAUVE's and PRD's k-means) is the draw.

    The small-set rule: MAUVE quantises a pair of ``n``-point sets into
    :func:`~markeval.distribution.mauve.auto_buckets` ``(n, n)`` = ``n / 10`` buckets, and with
    few buckets every histogram looks alike (the MAUVE chapter measures MAUVE near 1 for two
    different sets at five buckets). So a metric of the ``mauve`` family is scored only where
    the subset gives at least ``settings["mauve_min_buckets"]`` buckets; the others (density
    and coverage at their ``k``, Vendi, Mark-Evaluate at ``settings["me_k"]``) are scored at
    every size.

    Returns long rows as :func:`score_systems`' (level ``sentence``, protocol ``pooled``;
    ``k`` is ``settings["me_k"]`` for Mark-Evaluate and empty for the rest).
    """
    from markeval import registry
    from markeval.datasets import cache_dir, load_wmt17, wmt17_da_systems, wmt17_system_match
    from markeval.distribution.mauve import auto_buckets
    from markeval.encoders import resolve_encoder, sentence_embeddings
    from markeval.experiments.sensitivity import scores

    if pair not in settings["pairs"]:
        raise KeyError(f"pair {pair!r} is not in this profile's pairs {settings['pairs']}")
    data = load_wmt17(pair, detokenize=settings["detokenize"])
    draws = [(size, draw) for size, n_draws in zip(settings["sizes"], settings["draws"])
             for draw in range(n_draws)]
    subsets = {key: sentence_subset_of(pair, *key) for key in draws}
    needed = np.unique(np.concatenate(list(subsets.values())))
    where = {i: j for j, i in enumerate(needed)}  # sentence index -> row of the encoded block
    encoder = resolve_encoder(settings["encoder"])
    folder = cache_dir() / "embeddings" if settings["disk_cache"] else None

    def encode(texts):
        return sentence_embeddings([texts[i] for i in needed], encoder, progress=False,
                                   cache_dir=folder).astype(np.float64)

    refs = encode(data.references)
    mapping = wmt17_system_match(pair).mapping
    family = {name: registry.get(name).family for name in settings["metrics"]}
    out = []
    for system, human in wmt17_da_systems(pair).set_index("system").score.items():
        outputs = encode(data.systems[mapping[system]])
        for (size, draw), keep in subsets.items():
            rows = [where[i] for i in keep]
            small = auto_buckets(len(rows), len(rows)) < settings["mauve_min_buckets"]
            metrics = [m for m in settings["metrics"] if not (small and family[m] == "mauve")]
            values = scores(refs[rows], outputs[rows], metrics, me_k=settings["me_k"],
                            seed=draw)
            common = {"pair": pair, "system": system, "level": "sentence", "size": len(rows),
                      "draw": draw, "human": float(human)}
            out += [{**common, "encoder": settings["encoder"], "protocol": "pooled",
                     "metric": metric, "options": "", "value": float(value),
                     "k": settings["me_k"] if family[metric] == "mark_evaluate" else None}
                    for metric, value in values.items()]
    return pd.DataFrame(out)[[*common, *LONG_COLUMNS]]


def estimator_best_k(corr: pd.DataFrame, metric: str, ks=KS) -> int:
    """:func:`~markeval.experiments.choosing_k.best_k` of one ME estimator's (registry name)
    average r over the pairs (``corr``: one granularity's correlations, with registry keys)."""
    return best_k({k: corr[(corr.name == metric) & (corr.k == k)].value.mean() for k in ks})


# Mark-Evaluate Tables 2, 5, 6: column -> the registry name of our metric beside it.
_METRIC_BESIDE = {column: name for name, column in ME_COLUMNS.items()}
#: The Mark-Evaluate columns read at a chosen K (IPR is read at the IPR paper's k).
ME_K_COLUMNS = ("ME_Schnabel", "ME_Petersen", "ME_CAPTURE")


def me_column_metric(column: str, k: int = DEFAULT_K, ipr_k: int = IPR_K
                     ) -> tuple[str, int | None]:
    """Our metric beside a column of Mark-Evaluate Tables 2, 5 and 6, as (registry name, K):
    an estimator at ``k``, IPR at ``ipr_k``, the others without a K.

    Examples
    --------
    >>> me_column_metric("ME_Schnabel", 3), me_column_metric("IMPAR"), me_column_metric("PRD")
    (('me_schnabel_quality', 3), ('ipr_precision', 3), ('prd_precision', None))
    """
    k = k if column in ME_K_COLUMNS else ipr_k if column == "IMPAR" else None
    return _METRIC_BESIDE[column], k


def correlation_of(corr: pd.DataFrame, metric: tuple[str, int | None], pair: str, *,
                   default: float | None = None) -> float:
    """The correlation of ``metric`` (registry name, K or None) on ``pair`` in ``corr`` (a
    table of :func:`~markeval.experiments.translation.correlations_by_pair` with registry
    keys); ``default`` where it has none, or ``KeyError`` without a default.

    Examples
    --------
    >>> corr = pd.DataFrame({"pair": "cs-en", "name": ["me_petersen", "me_petersen", "fid"],
    ...                      "k": [1.0, 3.0, float("nan")], "value": [0.5, 0.7, 0.9]})
    >>> correlation_of(corr, ("me_petersen", 3), "cs-en")
    0.7
    >>> correlation_of(corr, ("fid", None), "cs-en"), correlation_of(corr, ("bleu", None), "cs-en",
    ...                                                              default=float("nan"))
    (0.9, nan)
    """
    name, k = metric
    at_k = corr["k"].isna() if k is None else corr["k"] == k
    found = corr.loc[(corr["name"] == name) & at_k & (corr["pair"] == pair), "value"]
    if len(found) == 1:
        return float(found.iloc[0])
    if len(found) > 1:
        raise ValueError(f"corr holds {len(found)} correlations of {metric} on {pair!r}")
    if default is None:
        raise KeyError(f"no correlation of {metric} on {pair!r}")
    return default
#: Mark-Evaluate table -> the granularity of our set metrics beside it.
ME_TABLES = {"Table 2": "word", "Table 6": "word", "Table 5": "sentence"}


def k_choices(column: str, corr: pd.DataFrame, settings: dict) -> list[tuple]:
    """The K at which a Mark-Evaluate column is compared, as ``(choice, K, how)``: an
    estimator at the default K and at the best single K of the grid (``corr``: the
    correlations of the level), IPR at the IPR paper's k; the rest have no K."""
    if column in ME_K_COLUMNS:
        best = estimator_best_k(corr, _METRIC_BESIDE[column], settings["ks"])
        return [("default", settings["default_k"], f"default K={settings['default_k']}"),
                ("best", best, f"best single K={best} of {settings['ks']}")]
    if column == "IMPAR":
        return [("IPR", settings["ipr_k"], f"IPR k={settings['ipr_k']}")]
    return [("none", None, "")]


def me_table_lines(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Ours beside every cell of Mark-Evaluate Tables 2, 5 and 6 (``rows``: a
    ``wmt17_system`` stage's), in the tables' own rows and columns.

    Returns
    -------
    pandas.DataFrame
        One line per (table, column, K choice, row): ``table``, ``row`` (``"cs-en (r)"``, ...,
        ``"Average (r)"``, the mean over the pairs where r is defined), ``column``, ``K
        choice`` (``"default"``, ``"best"``: the best single K of the grid, chosen on these
        correlations; ``"IPR"``: IPR's k; ``"none"``), ``K``, ``value`` (Pearson r with system
        DA) and ``setting``. The set metrics of Tables 2 and 6 read word samples, those of
        Table 5 pooled sentence vectors; BERTScore and MoverScore are means over every scored
        sentence of a system.
    """
    from markeval.experiments.translation import system_correlations
    from markeval.paper_values import paper_table

    out = []
    # BERTScore and MoverScore (Table 2): means over every scored sentence of the system
    per_sentence = system_correlations(rows, "sentence")
    # every sentence of a pair: their number differs between pairs
    low, high = (int(n) for n in rows[rows.level == "sentence"]["size"].agg(["min", "max"]))
    sentences = f"{low}-{high}" if low < high else f"{low}"
    for table, level in ME_TABLES.items():
        corr = system_correlations(rows, level)
        if level == "word":
            size = int(rows[rows.level == "word"]["size"].max())
            sizes = (f"protocol: pooled, {size} sentences per system (draw 0), word pieces "
                     "x last 5 layers")
        else:
            sizes = f"{sentences} sentences per system, pooled sentence vectors"
        for column in paper_table("Mark-Evaluate", table).columns:
            for choice, k, k_label in k_choices(column, corr, settings):
                metric = me_column_metric(column, k, settings["ipr_k"])
                setting = "; ".join(s for s in (settings["encoder"], sizes, k_label) if s)
                values = {p: correlation_of(corr, metric, p) for p in settings["pairs"]}
                if column in ("BERTScore", "MoverScore"):
                    setting = (f"{settings['encoder']}; mean over {sentences} sentences per "
                               "system")
                    values = {p: correlation_of(per_sentence, metric, p)
                              for p in settings["pairs"]}
                finite = [v for v in values.values() if np.isfinite(v)]
                values["Average"] = float(np.mean(finite)) if finite else float("nan")
                out += [{"table": table, "row": f"{pair} (r)", "column": column,
                         "K choice": choice, "K": k, "value": value, "setting": setting}
                        for pair, value in values.items()]
    return pd.DataFrame(out)


def system_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Mark-Evaluate Tables 2, 5 and 6 beside ours: :func:`me_table_lines`, as lines of
    ``paper_comparison.csv``."""
    return pd.DataFrame([
        comparison_row("Mark-Evaluate", line.table, line.row, line.column, line.value,
                       line.setting)
        for line in me_table_lines(rows, settings).itertuples()])


def segment_set_unit_rows(pair: str, keep: range, settings: dict) -> pd.DataFrame:
    """The rows of one ``wmt17_segment_sets`` unit: every system of ``pair`` on the segments
    ``keep``, each segment's word samples against its reference's
    (:func:`~markeval.experiments.word_set_metrics.adapted_set_scores`), the means over the
    segments, and how many segments each adaptation rule touched."""
    from markeval.datasets import load_wmt17, wmt17_da_systems, wmt17_system_match
    from markeval.experiments.vocabulary import encoder_name
    from markeval.experiments.word_set_metrics import ADAPTATION_RULES, adapted_set_scores
    from markeval.population.samples import word_samples_by_text

    data = load_wmt17(pair, detokenize=settings["detokenize"])
    encoder = unit_encoder(range(-5, 0), settings, capacity=2 * len(keep) + 8)

    def samples(texts):
        return word_samples_by_text(texts, encoder, progress=False)

    refs = samples([data.references[i] for i in keep])
    mapping = wmt17_system_match(pair).mapping
    rows = []
    for system, human in wmt17_da_systems(pair).set_index("system").score.items():
        outputs = samples([data.systems[mapping[system]][i] for i in keep])
        sums: dict[tuple, float] = {}  # (registry name, K) -> the sum over the segments
        rules = dict.fromkeys(ADAPTATION_RULES, 0)
        for ref, out in zip(refs, outputs):
            scores, applied = adapted_set_scores(
                ref, out, ks=sorted(set(settings["ks"]) | {settings["ipr_k"]}),
                prd_clusters=settings["prd_clusters"], prd_runs=settings["prd_runs"], seed=0)
            for name, value in scores.items():
                sums[name] = sums.get(name, 0.0) + value
            for rule in applied:
                rules[rule] += 1
        common = {"pair": pair, "system": system, "human": float(human),
                  "segments": len(keep), **rules,
                  "encoder": encoder_name(settings["encoder"]), "protocol": "segment"}
        rows += [{**common, "metric": name, "k": k, "options": "", "value": total / len(keep)}
                 for (name, k), total in sums.items()]
    return pd.DataFrame(rows)[["pair", "system", "human", "segments", *ADAPTATION_RULES,
                               *LONG_COLUMNS]]


def segment_set_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Mark-Evaluate Tables 2 and 6 beside the per-segment set metrics (``rows``: a
    ``wmt17_segment_sets`` stage's): each estimator at the default and the best single K."""
    from markeval.experiments.translation import segment_set_correlations, segment_set_means

    corr = segment_set_correlations(rows, settings["ipr_k"])
    n = int(segment_set_means(rows).groupby("system").segments.max().min())
    out = []
    for table in ("Table 2", "Table 6"):
        for column in ("PRD", "IMPAR", *ME_K_COLUMNS):
            for _, k, k_label in k_choices(column, corr, settings):
                metric = me_column_metric(column, k, settings["ipr_k"])
                setting = "; ".join(s for s in (
                    settings["encoder"], f"protocol: per segment, every segment ({n}+ per "
                    "system), word pieces x last 5 layers, mean over segments", k_label) if s)
                values = {p: correlation_of(corr, metric, p) for p in settings["pairs"]}
                for pair, value in values.items():
                    out.append(comparison_row("Mark-Evaluate", table, f"{pair} (r)", column,
                                              value, setting))
                finite = [v for v in values.values() if np.isfinite(v)]
                out.append(comparison_row("Mark-Evaluate", table, "Average (r)", column,
                                          float(np.mean(finite)) if finite else float("nan"),
                                          setting))
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# PRD's k-means seeds (Mark-Evaluate Table 5's PRD column, stage wmt17_prd_seeds)


def prd_seed_unit_rows(pair: str, settings: dict) -> pd.DataFrame:
    """The rows of one ``wmt17_prd_seeds`` unit: PRD's F_1/8 of every system of ``pair`` (or
    the first ``settings["systems"]``) on pooled sentence vectors, at every (clusters, runs)
    of ``settings["grid"]`` and every k-means seed below ``settings["seeds"]``."""
    from markeval.datasets import load_wmt17, wmt17_da_systems, wmt17_system_match
    from markeval.distribution.prd import prd
    from markeval.encoders import sentence_embeddings
    from markeval.experiments.vocabulary import encoder_name

    data = load_wmt17(pair, detokenize=settings["detokenize"])
    keep = sentence_subset_of(pair, settings["sentences"])
    encoder = unit_encoder(range(-1, 0), settings, capacity=2 * len(keep) + 8)
    refs = sentence_embeddings([data.references[i] for i in keep], encoder, progress=False)
    mapping = wmt17_system_match(pair).mapping
    # "systems" (a check's narrowing) scores the pair's first systems only; a system's rows do
    # not depend on the others'
    da = wmt17_da_systems(pair)
    if settings.get("systems") is not None:
        da = da.head(settings["systems"])
    rows = []
    for system, human in da.set_index("system").score.items():
        outputs = sentence_embeddings([data.systems[mapping[system]][i] for i in keep], encoder,
                                      progress=False)
        for clusters, runs in settings["grid"]:
            for seed in range(settings["seeds"]):
                value = prd(refs, outputs, num_clusters=clusters, num_runs=runs,
                            seed=seed).f_beta_inv
                rows.append({"pair": pair, "system": system, "human": float(human),
                             "clusters": clusters, "runs": runs, "seed": seed,
                             "encoder": encoder_name(settings["encoder"]),
                             "protocol": "pooled", "metric": "prd_precision", "k": None,
                             "options": "", "value": value})
    return pd.DataFrame(rows)[["pair", "system", "human", "clusters", "runs", "seed",
                               *LONG_COLUMNS]]


def prd_seed_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """Mark-Evaluate Table 5's PRD column beside the median r over k-means seeds, per setting."""
    from markeval.experiments.translation import seed_band

    band = seed_band(rows).set_index(["pair", "clusters", "runs"])
    n = "all" if settings["sentences"] is None else settings["sentences"]
    out = []
    for clusters, runs in settings["grid"]:
        setting = (f"{settings['encoder']}; {n} sentences per system, pooled sentence vectors; "
                   f"PRD {clusters} clusters, {runs} runs; median r over {settings['seeds']} "
                   "seeds")
        for pair in settings["pairs"]:
            out.append(comparison_row("Mark-Evaluate", "Table 5", f"{pair} (r)", "PRD",
                                      band.loc[(pair, clusters, runs), "median r"], setting))
        out.append(comparison_row("Mark-Evaluate", "Table 5", "Average (r)", "PRD",
                                  band.loc[("average", clusters, runs), "median r"], setting))
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# the lexical baselines of MoverScore Table 7, run as WMT17 ran them

#: Our metric -> (how it is computed, whether the text is detokenized first).
LEXICAL_METRICS = {
    "SentBLEU": ({"smooth": "add-k", "smooth_value": 1, "tokenize": "none"}, False),
    "chrF++": ({"word_order": 2, "beta": 2}, True),
}
LEXICAL_SETTINGS = {"SentBLEU": "BLEU+1 (add-one on 2-4-grams), tokenized text as distributed",
            "chrF++": "chrF2++ (char 6-grams, word 2-grams, beta 2), detokenized"}
#: Our metric -> its registry name and options (:mod:`markeval.experiments.vocabulary`).
LEXICAL_NAMES = {"SentBLEU": ("bleu", "sentence, BLEU+1"), "chrF++": ("chrf++", "sentence")}


def lexical_segment_scores(pair: str, metric: str, *, segments: int | None = None) -> pd.DataFrame:
    """One metric's scores of the judged segments of ``pair``, run as WMT17 ran it.

    ``segments``: that many judged segments (``sentence_subset``), default all 560. Returns
    the table of :func:`markeval.experiments.translation.segment_level_scores`.
    """
    from markeval.experiments.translation import segment_level_scores, sentence_subset
    from markeval.lexical.bleu import sentence_bleu
    from markeval.lexical.chrf import sentence_chrf

    options, detokenize = LEXICAL_METRICS[metric]
    one = sentence_bleu if metric == "SentBLEU" else sentence_chrf
    return segment_level_scores(
        pair, {metric: lambda hyps, refs: [one(h, [r], **options).score
                                           for h, r in zip(hyps, refs)]},
        subset=sentence_subset(560, segments), detokenize=detokenize)


def lexical_unit_rows(pair: str, settings: dict) -> pd.DataFrame:
    """The rows of one ``wmt17_lexical`` unit: every metric of :data:`LEXICAL_METRICS` on the
    judged segments of ``pair``, long, protocol ``segment``."""
    table = pd.concat([lexical_segment_scores(pair, metric, segments=settings["segments"])
                       for metric in LEXICAL_METRICS], ignore_index=True)
    metric, options = zip(*table["metric"].map(LEXICAL_NAMES))
    table = table.assign(encoder="", protocol="segment", metric=metric, k=np.nan,
                         options=options, value=table["score"])
    return table[["pair", "sid", "system", "human", *LONG_COLUMNS]]


def lexical_correlations(rows: pd.DataFrame) -> pd.DataFrame:
    """|Pearson r| with DA per (metric, pair), and the average over pairs (pair ``Average``);
    the metric by the name of MoverScore Table 7's row (a key of :data:`LEXICAL_METRICS`)."""
    ours = {name: paper_row for paper_row, name in LEXICAL_NAMES.items()}
    rows = rows.assign(metric=[ours[(m, o)] for m, o in zip(rows["metric"], rows["options"])])
    per_pair = pd.DataFrame([
        {"metric": metric, "pair": pair,
         "value": abs(np.corrcoef(group["value"], group["human"])[0, 1])}
        for (metric, pair), group in rows.groupby(["metric", "pair"], sort=False)])
    average = per_pair.groupby("metric", sort=False)["value"].mean().reset_index()
    return pd.concat([per_pair, average.assign(pair="Average")], ignore_index=True)


def lexical_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """MoverScore Table 7's SentBLEU and chrF++ rows beside ours."""
    n = settings["segments"] or 560
    return pd.DataFrame([
        comparison_row("MoverScore", "Table 7", r.metric, r.pair, r.value,
                       f"{LEXICAL_SETTINGS[r.metric]}; {n} segments per pair; |Pearson r|")
        for r in lexical_correlations(rows).itertuples()])
