"""One vocabulary for result rows: what was measured, how, and its label in a table.

A long result row names its number by the same six columns whichever experiment made it:

* ``encoder`` — the model whose vectors the metric read, by :func:`encoder_name` ("" for a
  lexical metric);
* ``protocol`` — how one system's score was formed (:data:`PROTOCOLS`);
* ``metric`` — the :mod:`markeval.registry` name (``me_schnabel_quality``, ``prd_precision``);
* ``k`` — the neighbourhood size of a k-NN metric, empty (NaN) for the others;
* ``options`` — what differs from the registry's defaults, "" when nothing does;
* ``value`` — the number as the metric defines it (FID is a distance, lower is better); in a
  file of correlations (TAC's per-topic rows) the correlation of that metric with the human
  score and method its other columns name.

Tables and figures show :func:`label`, and a correlation with human scores reads
:func:`oriented_scores`, which turns every metric so that larger means closer to the references
(``-FID``), as the papers' tables do.
"""

from __future__ import annotations

import math

import pandas as pd

from markeval import registry

__all__ = ["ENCODER", "LONG_COLUMNS", "MPNET", "PROTOCOLS", "REGISTRY_KEYS", "encoder_name",
           "label", "oriented_scores"]

#: The packaged encoders the correlation studies run, as result rows name them: the book's
#: (all-MiniLM-L6-v2) and one shaped like the papers' BERT-base (12 layers, 768 dimensions).
ENCODER, MPNET = "all-MiniLM-L6-v2", "all-mpnet-base-v2"
#: The columns that name a number in every long result row, in order.
LONG_COLUMNS = ("encoder", "protocol", "metric", "k", "options", "value")
#: How a system's score is formed from its outputs.
PROTOCOLS = {
    "corpus": "the metric over all the system's sentences at once (corpus BLEU), or the mean "
              "of its sentence scores (BERTScore, MoverScore)",
    "pooled": "a set metric on one set per system: the samples of all its sentences pooled",
    "segment": "per segment: a sentence metric's score of one translation, or a set metric "
               "on one reference's samples against its translation's, averaged over the "
               "system's segments where a system's score is wanted",
    "mean over references": "a summary scored against each of its references, the scores "
                            "averaged",
    "pooled references": "a summary against its references pooled: ROUGE's counts summed "
                         "over them, a set metric's reference samples put in one set",
}


def encoder_name(model: str) -> str:
    """The encoder as a result row names it: the model's name without its hub owner, so
    that one model has one name whichever way a stage was given it.

    Examples
    --------
    >>> encoder_name("sentence-transformers/all-MiniLM-L6-v2"), encoder_name("all-MiniLM-L6-v2")
    ('all-MiniLM-L6-v2', 'all-MiniLM-L6-v2')
    """
    return model.rsplit("/", 1)[-1]


def label(metric: str, k=None, options="", *, oriented: bool = False) -> str:
    """A metric's name in tables: the registry's label, its K, and its options.

    Parameters
    ----------
    metric : str
        A :mod:`markeval.registry` name.
    k : int, optional
        The neighbourhood size; None or NaN for a metric without one.
    options : str, default ""
        What differs from the registry's defaults, shown in brackets; "" or NaN (an empty
        field read back from a CSV file) for none.
    oriented : bool, default False
        Prefix "-" to a metric whose lower values are better (the orientation of
        :func:`oriented_scores`).

    Examples
    --------
    >>> label("me_schnabel_quality", 3)
    'ME Schnabel Q K=3'
    >>> label("fid", oriented=True), label("bertscore"), label("moverscore", options="SMD")
    ('-FID', 'BERTScore', 'MoverScore (SMD)')
    """
    info = registry.get(metric)
    text = ("-" if oriented and not info.higher_is_better else "") + info.label
    if not _missing(k):
        text += f" K={int(k)}"
    return text if _missing(options) or options == "" else f"{text} ({options})"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


#: The columns of :func:`oriented_scores` that name a metric as the registry does (``metric``
#: there holds its label): tables built from it select by these.
REGISTRY_KEYS = ("name", "k", "options")


def oriented_scores(rows: pd.DataFrame, keys=("pair", "system", "human")) -> pd.DataFrame:
    """Long result rows as a score table for correlations: ``keys``, ``metric`` (its
    :func:`label`, oriented), ``score`` (negated where lower is better) and the metric's
    registry keys, :data:`REGISTRY_KEYS`: ``name``, ``k`` (NaN for none) and ``options``.

    Examples
    --------
    >>> rows = pd.DataFrame({"pair": "xx-en", "system": ["a", "a"], "human": 0.5,
    ...                      "metric": ["fid", "me_petersen"], "k": [float("nan"), 1.0],
    ...                      "options": "", "value": [2.0, 0.75]})
    >>> oriented_scores(rows)[["metric", "score"]].values.tolist()
    [['-FID', -2.0], ['ME Petersen K=1', 0.75]]
    """
    keys = list(keys)
    higher = {m: registry.get(m).higher_is_better for m in rows["metric"].unique()}
    sign = rows["metric"].map(higher).map({True: 1.0, False: -1.0})
    labels: dict[tuple, str] = {}  # a file holds few names in many rows: label each once
    names = []
    for m, k, o in zip(rows["metric"], rows["k"], rows["options"]):
        key = (m, None if _missing(k) else k, "" if _missing(o) else o)
        if key not in labels:
            labels[key] = label(*key, oriented=True)
        names.append(labels[key])
    return rows[keys].assign(metric=names, score=rows["value"].to_numpy(float) * sign.to_numpy(),
                             name=rows["metric"].to_numpy(),
                             k=pd.to_numeric(rows["k"], errors="coerce").to_numpy(float),
                             options=rows["options"].astype(object).fillna("").to_numpy())
