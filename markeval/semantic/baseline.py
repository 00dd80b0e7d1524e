"""Baselines for BERTScore rescaling: the mean score of unrelated sentence pairs.

Raw BERTScores of a contextual encoder crowd into a narrow band of [-1, 1] whose bottom
is far above 0 (two unrelated English sentences score F ≈ 0.83 with roberta-large's layer
17 according to bert-score's baseline table, 0.51 with all-MiniLM-L6-v2's layer 5 and 0.17
with its last layer), which makes them hard to read. Zhang et al. (2020) rescale a score ``x`` to
``(x - b) / (1 - b)``, where ``b`` is the mean score of *random* sentence pairs: 0 then
means "as similar as two unrelated sentences", 1 stays "identical". The bert-score package
ships such baselines, computed from random pairs of Common Crawl sentences, per model and
layer; it has none for all-MiniLM-L6-v2, so markeval computes its own the same way from
random pairs of BBC News sentences (:func:`compute_baseline`) and ships the numbers for
the default model as package data (``bertscore_baseline.json``, read by
:func:`load_baseline`).

Regenerate that file (about a minute on 2 CPU cores) with::

    python benchmarks/bertscore_baseline.py [--n-pairs 2000] [--seed 0]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from markeval._checks import check_bool, check_int, check_seed, check_strings
from markeval.encoders import (resolve_encoder, resolve_layers,
                               token_embeddings)
from markeval.semantic.greedy import match, unit_rows
from markeval.semantic.idf import uniform_weights

__all__ = ["BASELINE_FILE", "Baseline", "compute_baseline", "load_baseline"]

#: Package data: baselines of the default model, with their provenance.
BASELINE_FILE = Path(__file__).with_name("bertscore_baseline.json")


@dataclass(frozen=True, eq=False)
class Baseline:
    """Mean BERTScore (no idf) of random sentence pairs, per hidden layer.

    Attributes
    ----------
    model : str
        Encoder name.
    values : dict of int to (float, float, float)
        Hidden-state index → mean (P, R, F).
    n_pairs : int
    seed : int
    """

    model: str
    values: dict
    n_pairs: int
    seed: int


def compute_baseline(
    sentences,
    model=None,
    *,
    layers=None,
    n_pairs: int = 2000,
    seed: int = 0,
    progress: bool = True,
) -> Baseline:
    """Mean BERTScore P, R, F over ``n_pairs`` random pairs of distinct sentences.

    Pair ``k`` is ``(sentences[a_k], sentences[b_k])`` with ``a_k`` uniform and ``b_k``
    uniform among the other positions (``numpy.random.default_rng(seed)``); the first
    sentence is the hypothesis. No idf weighting (as the bert-score baselines).

    Parameters
    ----------
    sentences : list of str
        A large pool of unrelated sentences (at least 2; duplicates are not removed, so
        pass unique sentences).
    model : None, str, os.PathLike, Encoder or MemoEncoder
        As in :func:`markeval.encoders.resolve_encoder` (device, batch size and disk cache
        are the encoder's settings).
    layers : None, int or sequence of int
        Hidden layers (default: all, 0..num_layers).
    n_pairs : int, default 2000
    seed : int, default 0
    progress : bool, default True
        Show the encoder's progress bar.

    Returns
    -------
    Baseline

    Examples
    --------
    >>> s = ["The match ended in a draw.", "Oil prices rose on Monday.",
    ...      "The film won three awards.", "Parliament passed the bill."]
    >>> b = compute_baseline(s, layers=[6], n_pairs=5, progress=False)
    >>> sorted(b.values), b.n_pairs
    ([6], 5)
    >>> -1 < b.values[6][2] < 1
    True
    """
    sentences = check_strings(sentences, "sentences")
    if len(sentences) < 2:
        raise ValueError(
            f"sentences has {len(sentences)} entries: at least 2 are needed for a pair"
        )
    n_pairs = check_int(n_pairs, "n_pairs", minimum=1)
    seed = check_seed(seed)
    progress = check_bool(progress, "progress")
    encoder = resolve_encoder(model)
    selected = resolve_layers(layers, encoder.num_layers)
    rng = np.random.default_rng(seed)
    n = len(sentences)
    a = rng.integers(0, n, size=n_pairs)
    b = (a + rng.integers(1, n, size=n_pairs)) % n  # never a itself
    used = np.unique(np.concatenate([a, b]))
    embs = token_embeddings([sentences[i] for i in used], encoder, layers=selected,
                            batch_size=encoder.batch_size or 64, progress=progress)
    row = {int(i): k for k, i in enumerate(used)}
    weights = [uniform_weights(e) for e in embs]
    totals = np.zeros((len(selected), 3))
    for layer_pos in range(len(selected)):
        units = [unit_rows(e.vectors[layer_pos].astype(np.float64)) for e in embs]
        for i, j in zip(a, b):
            hi, rj = row[int(i)], row[int(j)]
            totals[layer_pos] += match(units[hi], units[rj], weights[hi], weights[rj])
    means = totals / n_pairs
    return Baseline(
        model=encoder.name,
        values={layer: tuple(float(x) for x in means[k]) for k, layer in enumerate(selected)},
        n_pairs=int(n_pairs),
        seed=int(seed),
    )


def load_baseline(model: str, layer: int, path=None) -> tuple[float, float, float]:
    """The packaged (P, R, F) baseline of ``model`` at hidden layer ``layer``.

    Parameters
    ----------
    model : str
        Encoder name (``Encoder.name``), e.g. ``"sentence-transformers/all-MiniLM-L6-v2"``.
    layer : int
        Hidden-state index (non-negative).
    path : path-like, optional
        Another baseline file of the same format (default: :data:`BASELINE_FILE`).

    Examples
    --------
    >>> p, r, f = load_baseline("sentence-transformers/all-MiniLM-L6-v2", 6)
    >>> round(f, 3)
    0.171
    """
    data = json.loads(Path(path or BASELINE_FILE).read_text(encoding="utf-8"))
    if model not in data["models"]:
        raise ValueError(
            f"no packaged BERTScore baseline for model {model!r} (available: "
            f"{sorted(data['models'])}); compute one with "
            "markeval.semantic.baseline.compute_baseline(sentences, model=...) and pass "
            "baseline=b.values[layer]"
        )
    layers = data["models"][model]["layers"]
    if str(layer) not in layers:
        raise ValueError(
            f"no baseline for layer {layer} of {model!r}; layers: {sorted(map(int, layers))}"
        )
    p, r, f = layers[str(layer)]
    return float(p), float(r), float(f)
