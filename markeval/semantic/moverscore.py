"""MoverScore (Zhao et al., 2019): Earth Mover's Distance between contextual n-gram embeddings.

A hypothesis and a reference each become a weighted point set: the points are n-grams
(Word Mover's Distance, WMD) or sentences (Sentence Mover's Distance, SMD), a point's vector
is the weighted mean of its tokens' contextual vectors and its mass the sum of their weights
(inverse document frequency, or 1). The score is ``1 - EMD`` between the two sets
(:func:`markeval.semantic.emd.earth_movers_distance`), with the points' unit vectors
compared by Euclidean or squared Euclidean distance.

The choices follow the ``moverscore`` package (1.0.3), whose two modules are the presets:

======================  ====================================  ===============================
setting                 ``"v1"`` (``moverscore.py``)          ``"v2"`` (``moverscore_v2.py``)
======================  ====================================  ===============================
paper's model           BERT-base fine-tuned on MNLI          DistilBERT-base-uncased
token vector            [min, mean, max] over the last 5      last layer
                        layers, each layer unit-normalised
distance                squared Euclidean (``2 - 2 cos``)     Euclidean, ``sqrt(2 - 2 cos)``
n-grams                 ``n_gram`` = 1 or 2                   1 only (argument ignored)
subword continuations   dropped (``remove_subwords=True``)    always dropped
punctuation, stopwords  dropped                               dropped
score                   ``1 - EMD``                           ``1 - EMD``
======================  ====================================  ===============================

Both presets run on whatever encoder is given (all-MiniLM-L6-v2 by default): the presets fix
the recipe, not the paper's model. Conventions shared with the package: special tokens
(``[CLS]``, ``[SEP]``) stay in the token sequence, so that they can start or end an n-gram,
but weigh 0 (with idf over a corpus they get ``log((M+1)/(M+1)) = 0`` in the package too);
punctuation is a token equal to one ASCII punctuation character (``string.punctuation``);
stop words are compared with the tokenizer's pieces. Where markeval differs: without idf the
package gives ``[CLS]``/``[SEP]`` mass 1 (its ``defaultdict(lambda: 1.)``), markeval gives
them 0; a text with no mass left scores 0 with a warning; several references are allowed
(the best, i.e. highest, score counts).
"""

from __future__ import annotations

import string
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_choice, check_int, check_references, check_strings
from markeval._signature import make_signature
from markeval._threads import single_threaded_blas
from markeval.encoders import (resolve_encoder, resolve_layers,
                               token_embeddings)
from markeval.semantic.emd import optimal_flow
from markeval.semantic.idf import IDFWeights, uniform_weights
# One warning class for "an empty side scored 0" across the embedding metrics.
from markeval.semantic.tokens import EmptyTextWarning
from markeval.text import split_sentences
from markeval._result import alias

__all__ = ["MOVERSCORE_PRESETS", "MoverScore", "aggregate_layers", "mover_scores", "moverscore"]

#: Settings of the two published versions of the ``moverscore`` package (see module docs).
#: ``layers=-1`` is one layer (the last); a tuple of layers means concatenated power means.
MOVERSCORE_PRESETS = {
    "v1": {"layers": (-5, -4, -3, -2, -1), "distance": "sqeuclidean", "n_gram": 1,
           "remove_subwords": True, "remove_punctuation": True},
    "v2": {"layers": -1, "distance": "euclidean", "n_gram": 1,
           "remove_subwords": True, "remove_punctuation": True},
}
_DISTANCES = ("euclidean", "sqeuclidean")
_LEVELS = ("word", "sentence")
_PUNCTUATION = frozenset(string.punctuation)
# Texts per forward pass unless the encoder sets its own.
_BATCH_SIZE = 64


@dataclass(frozen=True)
class MoverScore:
    """Corpus and per-segment MoverScore.

    Attributes
    ----------
    score : float
        Mean of :attr:`sentence_scores`.
    sentence_scores : tuple of float
        ``1 - distance`` per hypothesis (its best reference); 0 for an empty side.
    sentence_distances : tuple of float
        The EMD behind each score (NaN where a side was empty).
    signature : str
        Model, layers, aggregation, distance, n-gram order, level, idf and filters.
    item_scores : tuple of float
        :attr:`sentence_scores` (the result protocol's name for them).
    """

    higher_is_better: ClassVar[bool] = True

    score: float
    sentence_scores: tuple[float, ...]
    sentence_distances: tuple[float, ...]
    signature: str

    item_scores = alias("sentence_scores", "Per-hypothesis scores, :attr:`sentence_scores`.")

    def __str__(self) -> str:
        return f"MoverScore = {self.score:.4f}"


@dataclass(frozen=True)
class _Settings:
    layers: tuple[int, ...]  # resolved hidden-state indices; one → single layer
    distance: str
    n_gram: int
    level: str
    remove_subwords: bool
    remove_punctuation: bool
    stop_words: frozenset


# --------------------------------------------------------------------------- points


def aggregate_layers(vectors: np.ndarray) -> np.ndarray:
    """Token vectors from a stack of layers: one layer as is, several by power means.

    Every layer's token vectors are first scaled to unit length. With one layer that is the
    result. With ``L > 1`` layers the result concatenates, per coordinate, the power means
    with ``p = -inf, 1, +inf`` over the layers, i.e. ``[min, mean, max]`` (Rücklé et al.,
    2018; MoverScore v1), and is three times as wide. Other ``p`` are left out on purpose:
    ``x**p`` is undefined or not monotone for the negative coordinates of hidden states.

    Parameters
    ----------
    vectors : array, shape (L, n_tokens, dim)

    Returns
    -------
    numpy.ndarray
        float64, shape ``(n_tokens, dim)`` for ``L = 1`` or ``(n_tokens, 3 * dim)``.

    Examples
    --------
    >>> v = np.array([[[3.0, 4.0]], [[0.0, 1.0]]])   # one token, two layers
    >>> aggregate_layers(v[:1]).tolist()
    [[0.6, 0.8]]
    >>> aggregate_layers(v).round(2).tolist()         # min | mean | max of (0.6, 0.8), (0, 1)
    [[0.0, 0.8, 0.3, 0.9, 0.6, 1.0]]
    """
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 3:
        raise ValueError(f"vectors must have shape (layers, tokens, dim), got {v.shape}")
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    v = v / np.where(norms > 0, norms, 1.0)
    if v.shape[0] == 1:
        return v[0]
    return np.concatenate([v.min(axis=0), v.mean(axis=0), v.max(axis=0)], axis=-1)


def _kept(emb, s: _Settings) -> np.ndarray:
    """Indices of the tokens that stay: not punctuation, not a stop word, not a continuation."""
    special = np.asarray(emb.special, dtype=bool)
    keep = []
    for t, (token, word) in enumerate(zip(emb.tokens, emb.word_ids)):
        if not special[t]:
            if s.remove_punctuation and token in _PUNCTUATION:
                continue
            if token in s.stop_words:
                continue
            # A continuation piece has the word id of the piece before it ("##ization"); found
            # through word ids rather than the "##" prefix so that any tokenizer works.
            if s.remove_subwords and t > 0 and word is not None and emb.word_ids[t - 1] == word:
                continue
        keep.append(t)
    return np.array(keep, dtype=np.int64)


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def _ngram_points(x: np.ndarray, w: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sliding windows of ``n`` consecutive kept tokens (all of them if fewer than ``n``).

    Window vector: the weight-averaged token vector (0 if the window weighs 0); window mass:
    the summed weight. Windows slide by one, as in the package.
    """
    n = min(n, len(w))
    if n == 1:
        return x, w
    xs = np.lib.stride_tricks.sliding_window_view(x * w[:, None], n, axis=0).sum(axis=-1)
    mass = np.lib.stride_tricks.sliding_window_view(w, n).sum(axis=-1)
    return xs / np.where(mass > 0, mass, 1.0)[:, None], mass


def _points(embs, weights, s: _Settings) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors and masses of one text's points (positive mass only).

    ``embs``/``weights`` hold one entry for a word-level text, one per sentence for SMD.
    """
    vecs, masses = [], []
    for emb, w in zip(embs, weights):
        x = aggregate_layers(emb.vectors)
        keep = _kept(emb, s)
        if keep.size == 0:
            continue
        x, w = x[keep], w[keep]
        if s.level == "sentence":
            total = w.sum()
            vecs.append(((w @ x) / total if total > 0 else np.zeros(x.shape[1]))[None])
            masses.append(np.array([total]))
        else:
            px, pw = _ngram_points(x, w, s.n_gram)
            vecs.append(px)
            masses.append(pw)
    if not vecs:
        return np.zeros((0, 1)), np.zeros(0)
    x, w = np.concatenate(vecs), np.concatenate(masses)
    positive = w > 0
    return _unit(x[positive]), w[positive]


def _cost(x: np.ndarray, y: np.ndarray, distance: str) -> np.ndarray:
    # Unit vectors: |x - y|^2 = 2 - 2 x.y (clipped: rounding can make it slightly negative).
    sq = np.clip(2.0 - 2.0 * (x @ y.T), 0.0, None)
    return np.sqrt(sq) if distance == "euclidean" else sq


def _mover_distance(hyp, ref, distance: str) -> float:
    (x, a), (y, b) = hyp, ref
    cost = _cost(x, y, distance)
    flow = optimal_flow(a / a.sum(), b / b.sum(), cost)
    return float((flow * cost).sum())


# --------------------------------------------------------------------------- checks


def _check_idf(idf, encoder) -> tuple[IDFWeights | None, IDFWeights | None]:
    if idf is None or idf is False:
        return None, None
    if idf is True:
        raise TypeError(
            "idf=True would hide which corpus the weights come from: compute them and pass "
            "them, e.g. idf=markeval.semantic.idf_weights(references), or a pair "
            "(idf_weights(hypotheses), idf_weights(references)) as the moverscore package does"
        )
    pair = tuple(idf) if isinstance(idf, (tuple, list)) else (idf, idf)
    if len(pair) != 2:
        raise ValueError(f"idf must be one IDFWeights or a pair (hypothesis idf, reference idf), "
                         f"got {len(pair)} items")
    for w in pair:
        if not isinstance(w, IDFWeights):
            raise TypeError(f"idf must be None, False, an IDFWeights or a pair of them, got "
                            f"{type(w).__name__}")
        if w.model != encoder.name:
            raise ValueError(
                f"idf weights were computed with the tokenizer of {w.model!r} but the encoder is "
                f"{encoder.name!r}: compute them with idf_weights(corpus, model=<the same model>)"
            )
    return pair


def _settings(preset, encoder, layers, distance, n_gram, level, remove_subwords,
              remove_punctuation, stop_words) -> tuple[_Settings, str]:
    check_choice(preset, "preset", (*MOVERSCORE_PRESETS, None))
    base = MOVERSCORE_PRESETS["v2" if preset is None else preset]
    given = {"layers": layers, "distance": distance, "n_gram": n_gram,
             "remove_subwords": remove_subwords, "remove_punctuation": remove_punctuation}
    chosen = {k: base[k] if v is None else v for k, v in given.items()}
    for flag in ("remove_subwords", "remove_punctuation"):
        check_bool(chosen[flag], flag)
    if preset == "v2" and chosen["n_gram"] != 1:
        raise ValueError("preset='v2' has no n-grams (the package ignores n_gram): use "
                         "preset='v1' or preset=None for n_gram=2")
    resolved_layers = resolve_layers(chosen["layers"], encoder.num_layers)
    check_choice(chosen["distance"], "distance", _DISTANCES)
    n = check_int(chosen["n_gram"], "n_gram", minimum=1)
    check_choice(level, "level", _LEVELS)
    if level == "sentence" and n != 1:
        raise ValueError("level='sentence' makes each sentence one point: n_gram must be 1")
    if isinstance(stop_words, str):
        raise TypeError("stop_words must be a collection of words, not a single str")
    stops = frozenset(check_strings(list(stop_words or ()), "stop_words", allow_empty_list=True))
    settings = _Settings(resolved_layers, chosen["distance"], n, level,
                         chosen["remove_subwords"], chosen["remove_punctuation"], stops)
    # n_gram is free within v1; any other departure from the preset makes the recipe custom.
    same = preset is not None and resolved_layers == resolve_layers(
        base["layers"], encoder.num_layers) and all(
        chosen[k] == base[k] for k in ("distance", "remove_subwords", "remove_punctuation"))
    return settings, preset if same else "custom"


# --------------------------------------------------------------------------- the metric


def moverscore(
    hypotheses,
    references,
    *,
    model=None,
    preset: str | None = "v2",
    n_gram: int | None = None,
    layers=None,
    distance: str | None = None,
    level: str = "word",
    idf=None,
    stop_words=(),
    remove_subwords: bool | None = None,
    remove_punctuation: bool | None = None,
    progress: bool = True,
) -> MoverScore:
    """MoverScore of each hypothesis against its reference(s), and the corpus mean.

    Parameters
    ----------
    hypotheses : list of str
    references : list of (str or list of str)
        ``references[i]`` is the reference, or list of references, of ``hypotheses[i]``.
        With several, the hypothesis gets its highest score (smallest distance).
    model : None, str, os.PathLike, Encoder or MemoEncoder
        None for the default model (all-MiniLM-L6-v2), else as in
        :func:`markeval.encoders.resolve_encoder`; the encoder object carries the encoding
        settings (device, batch size, disk cache).
    preset : {"v2", "v1", None}, default "v2"
        The published recipe whose settings fill the arguments left as None (see the table in
        :mod:`markeval.semantic.moverscore`); None starts from v2's values.
    n_gram : int, optional
        Points are n-grams of the kept tokens (v1 uses 1 or 2; v2 only 1).
    layers : int or sequence of int, optional
        One hidden-state index (single layer), or several (concatenated power means
        ``[min, mean, max]`` over them). v1: the last five; v2: the last.
    distance : {"euclidean", "sqeuclidean"}, optional
        Between the unit vectors of points. v1 squared, v2 plain Euclidean.
    level : {"word", "sentence"}, default "word"
        ``"word"``: Word Mover's Distance on n-grams. ``"sentence"``: Sentence Mover's
        Distance, each sentence (:func:`markeval.text.split_sentences`, encoded on its own)
        is one point with the weighted mean of its kept tokens as vector and their summed
        weight as mass.
    idf : None, False, IDFWeights or (IDFWeights, IDFWeights)
        None/False: every kept token weighs 1 (special tokens 0). One
        :class:`~markeval.semantic.idf.IDFWeights` weighs both sides; a pair
        ``(hypothesis_idf, reference_idf)`` weighs each side with its own corpus, as the
        package's usage does (``get_idf_dict(hypotheses)``, ``get_idf_dict(references)``).
    stop_words : collection of str, default ()
        Tokens (word pieces, lower-case for an uncased model) to drop.
    remove_subwords : bool, optional
        Drop continuation pieces (``"##ization"``), keeping each word's first piece (both
        presets). False keeps every piece as a point.
    remove_punctuation : bool, optional
        Drop tokens equal to one ASCII punctuation character (both presets).
    progress : bool, default True
        Show the encoder's progress bar; each distinct text is encoded once.

    Returns
    -------
    MoverScore

    Warns
    -----
    EmptyTextWarning
        A hypothesis or reference keeps no mass (its score is 0).
    markeval.encoders.TruncationWarning
        Texts longer than the encoder's window (256 word pieces for the default model).

    Examples
    --------
    >>> s = moverscore(["the cat sat on the mat"], ["the cat sat on the mat"], progress=False)
    >>> round(s.score, 6), round(s.sentence_distances[0], 6)
    (1.0, 0.0)
    >>> s = moverscore(["a cat sat on a mat", "stocks fell"],
    ...                ["the cat sat on the mat", "share prices dropped"], progress=False)
    >>> [round(x, 3) for x in s.sentence_scores]
    [0.754, 0.069]
    >>> s.signature  # doctest: +ELLIPSIS
    'moverscore|preset:v2|model:sentence-transformers/all-MiniLM-L6-v2|device:...|layers:6|...'
    """
    hypotheses = check_strings(hypotheses, "hypotheses")
    refs = check_references(hypotheses, references)
    progress = check_bool(progress, "progress")
    encoder = resolve_encoder(model)
    s, preset_name = _settings(preset, encoder, layers, distance, n_gram, level,
                               remove_subwords, remove_punctuation, stop_words)
    hyp_idf, ref_idf = _check_idf(idf, encoder)

    # Each distinct text (SMD: each distinct sentence) is encoded once for both sides.
    texts = {("h", t) for t in hypotheses} | {("r", t) for group in refs for t in group}
    units = {t: (split_sentences(t) if s.level == "sentence" else [t]) for _, t in texts}
    unique = list(dict.fromkeys(u for t in sorted(units) for u in units[t]))
    embs = dict(zip(unique, token_embeddings(
        unique, encoder, layers=list(s.layers), batch_size=encoder.batch_size or _BATCH_SIZE,
        progress=progress))) if unique else {}
    # The per-pair algebra is small: BLAS threads only fight PyTorch's for the cores (measured
    # 100x slower on a busy 2-core machine), so it runs on one thread.
    with single_threaded_blas():
        points = {}
        for side, text in texts:
            weigher = hyp_idf if side == "h" else ref_idf
            parts = [embs[u] for u in units[text]]
            weights = [uniform_weights(e) if weigher is None else weigher.weigh(e) for e in parts]
            points[side, text] = _points(parts, weights, s)
        scores, dists, n_empty = mover_scores(
            [points["h", h] for h in hypotheses],
            [[points["r", r] for r in group] for group in refs], s.distance)
    if n_empty:
        warnings.warn(
            f"{n_empty} hypothesis-reference pairs have a side with no mass left (empty, or "
            "only punctuation/stop words); they score 0",
            EmptyTextWarning,
            stacklevel=2,
        )
    signature = make_signature(
        "moverscore",
        preset=preset_name,
        model=encoder.name,
        device=encoder.device,
        layers="+".join(map(str, s.layers)),
        agg="pmeans(-inf,1,inf)" if len(s.layers) > 1 else "single",
        distance=s.distance,
        level=s.level,
        ngram=s.n_gram if s.level == "word" else None,
        idf=_describe_idf(hyp_idf, ref_idf),
        subwords="drop" if s.remove_subwords else "keep",
        punct="drop" if s.remove_punctuation else "keep",
        stopwords=len(s.stop_words),
    )
    return MoverScore(
        score=float(scores.mean()),
        sentence_scores=tuple(float(x) for x in scores),
        sentence_distances=tuple(float(x) for x in dists),
        signature=signature,
    )


def mover_scores(hypotheses: Sequence[tuple[np.ndarray, np.ndarray]],
                 references: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]],
                 distance: str = "euclidean") -> tuple[np.ndarray, np.ndarray, int]:
    """``1 - EMD`` of each hypothesis's points against its references': the core, on arrays.

    A text is a pair ``(vectors, masses)``: unit-length point vectors, shape ``(n, dim)``,
    and their positive masses, shape ``(n,)`` (``n = 0`` for a text with no mass left).
    ``references[i]`` holds the references of ``hypotheses[i]``; the smallest distance counts.

    Returns
    -------
    scores : numpy.ndarray
        ``1 - distance`` per hypothesis; 0 where every pair had an empty side.
    distances : numpy.ndarray
        The best EMD per hypothesis; NaN where every pair had an empty side.
    n_empty : int
        Pairs skipped because a side had no mass.

    Examples
    --------
    >>> x = (np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 1.0]))
    >>> y = (np.array([[1.0, 0.0]]), np.array([1.0]))
    >>> scores, dists, n_empty = mover_scores([x], [[y, x]], "sqeuclidean")
    >>> scores.tolist(), dists.tolist(), n_empty
    ([1.0], [0.0], 0)
    """
    check_choice(distance, "distance", _DISTANCES)
    scores = np.zeros(len(hypotheses))
    dists = np.full(len(hypotheses), np.nan)
    n_empty = 0
    for i, (h, group) in enumerate(zip(hypotheses, references)):
        for r in group:
            if h[1].size == 0 or r[1].size == 0:
                n_empty += 1
                continue
            d = _mover_distance(h, r, distance)
            if np.isnan(dists[i]) or d < dists[i]:
                dists[i], scores[i] = d, 1.0 - d
    return scores, dists, n_empty


def _describe_idf(hyp_idf, ref_idf) -> str:
    if hyp_idf is None:
        return "no"
    if hyp_idf is ref_idf:
        return f"yes(M={hyp_idf.n_documents})"
    return f"hyp(M={hyp_idf.n_documents})+ref(M={ref_idf.n_documents})"
