"""BERTScore (Zhang et al., 2020): greedy cosine matching of contextual token vectors.

Each hypothesis token is matched to its most similar reference token (precision) and each
reference token to its most similar hypothesis token (recall); the matches are averaged
with token weights (uniform, or inverse document frequency over a corpus the caller
chooses) and F is their harmonic mean. The numbers agree with the ``bert-score`` package
(0.3.13) given the same model directory and layer, with these conventions copied from it:

* special tokens (``[CLS]``, ``[SEP]``) weigh 0 but stay in the *candidate* set of every
  match, so a word may be matched to a reference's ``[SEP]``;
* an empty (or white-space only) hypothesis or reference scores P = R = F = 0, with a
  warning;
* with several references, P, R and F are each the maximum over the references
  (element-wise: the three maxima may come from different references);
* the corpus score is the mean of the per-segment scores;
* rescaling is ``(x - b) / (1 - b)`` per P, R and F with a baseline ``b`` of the same
  model and layer (see :mod:`markeval.semantic.baseline`).

One difference is deliberate: bert-score multiplies the similarity matrix of a padded batch by
the padding mask, so a token whose cosines with *all* tokens of the other text are negative
gets a best match of 0 when that text is shorter than the longest in its batch, and a negative
one otherwise. markeval always takes the true maximum. Contextual cosines with ``[CLS]`` and
``[SEP]`` are positive in practice, so this has not shown up on real data (parity ≤ 1e-5 on
WMT17, see ``tests/test_bertscore.py``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from markeval._checks import check_bool, check_references, check_strings
from markeval._signature import make_signature
from markeval.semantic.idf import IDFWeights, uniform_weights

__all__ = ["DEFAULT_LAYER", "BERTScoreResult", "EmptyTextWarning", "bertscore", "greedy_match"]

#: Hidden layer used for the default model (all-MiniLM-L6-v2): the last one. bert-score's
#: table of recommended layers (chosen per model on WMT16) has no entry for this model.
#: The last layer is the one its sentence-similarity fine-tuning shaped, and on WMT17
#: segment-level DA it correlates best or on par with layer 4 (Pearson r of F, de-en: 0.60
#: vs 0.60; zh-en: 0.64 vs 0.64; layers 0-3 and 5 lower): see the BERTScore chapter.
DEFAULT_LAYER = 6


class EmptyTextWarning(UserWarning):
    """An empty hypothesis or reference was scored 0 (as bert-score does)."""


@dataclass(frozen=True)
class BERTScoreResult:
    """Corpus and per-segment BERTScore.

    Attributes
    ----------
    precision, recall, f1 : float
        Means of the per-segment scores.
    sentence_precision, sentence_recall, sentence_f1 : tuple of float
        One entry per hypothesis.
    signature : str
        Model, layer, idf (with its corpus size) and rescaling.
    """

    precision: float
    recall: float
    f1: float
    sentence_precision: tuple[float, ...]
    sentence_recall: tuple[float, ...]
    sentence_f1: tuple[float, ...]
    signature: str

    def __str__(self) -> str:
        return f"BERTScore P={self.precision:.4f} R={self.recall:.4f} F1={self.f1:.4f}"


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _weighted_mean(values: np.ndarray, weights: np.ndarray) -> float:
    total = weights.sum()
    return float(values @ weights / total) if total > 0 else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r != 0 else 0.0


def greedy_match(hyp_vecs, ref_vecs, hyp_w, ref_w) -> tuple[float, float, float]:
    """Greedy cosine matching: BERTScore's P, R and F for one pair of token sequences.

    .. math::

        P = \\frac{\\sum_i w^h_i \\max_j \\cos(h_i, r_j)}{\\sum_i w^h_i},\\quad
        R = \\frac{\\sum_j w^r_j \\max_i \\cos(h_i, r_j)}{\\sum_j w^r_j},\\quad
        F = \\frac{2PR}{P+R}

    The maxima run over *all* rows, whatever their weight (tokens with weight 0, such as
    special tokens, can still be matched). A side whose weights sum to 0 gives 0.

    Parameters
    ----------
    hyp_vecs : array, shape (n, d)
        Hypothesis token vectors (any length: rows are normalised here).
    ref_vecs : array, shape (m, d)
    hyp_w : array, shape (n,)
        Non-negative weights of the hypothesis tokens.
    ref_w : array, shape (m,)

    Returns
    -------
    (precision, recall, f1) : tuple of float

    Examples
    --------
    Hypothesis tokens along the x- and y-axes, reference tokens along x and at 45°:

    >>> h = [[1, 0], [0, 1]]
    >>> r = [[2, 0], [1, 1]]
    >>> p, r_, f = greedy_match(h, r, [1, 1], [1, 1])
    >>> round(p, 4), round(r_, 4), round(f, 4)   # P = (1 + 0.7071)/2, R = (1 + 0.7071)/2
    (0.8536, 0.8536, 0.8536)
    >>> [round(v, 4) for v in greedy_match(h, r, [1, 0], [1, 1])]  # y-token weighs 0
    [1.0, 0.8536, 0.921]
    """
    hyp_vecs = _check_vectors(hyp_vecs, "hyp_vecs")
    ref_vecs = _check_vectors(ref_vecs, "ref_vecs")
    if hyp_vecs.shape[1] != ref_vecs.shape[1]:
        raise ValueError(
            f"hyp_vecs has dimension {hyp_vecs.shape[1]} but ref_vecs has dimension "
            f"{ref_vecs.shape[1]}"
        )
    hyp_w = _check_weights(hyp_w, len(hyp_vecs), "hyp_w")
    ref_w = _check_weights(ref_w, len(ref_vecs), "ref_w")
    return _match(_unit_rows(hyp_vecs), _unit_rows(ref_vecs), hyp_w, ref_w)


def _match(hyp_unit, ref_unit, hyp_w, ref_w) -> tuple[float, float, float]:
    sim = hyp_unit @ ref_unit.T
    p = _weighted_mean(sim.max(axis=1), hyp_w)
    r = _weighted_mean(sim.max(axis=0), ref_w)
    return p, r, _f1(p, r)


def _check_vectors(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"{name} must be a non-empty 2-D array (tokens, dim), got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    norms = np.linalg.norm(arr, axis=1)
    if (norms == 0).any():
        raise ValueError(f"{name} row {int(np.argmin(norms))} is the zero vector: cosine undefined")
    return arr


def _check_weights(w, n: int, name: str) -> np.ndarray:
    arr = np.asarray(w, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) (one weight per token), got {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ValueError(f"{name} must be finite and non-negative, got {arr.tolist()}")
    return arr


def _check_idf(idf, encoder) -> IDFWeights | None:
    if idf is None or idf is False:
        return None
    if idf is True:
        raise TypeError(
            "idf=True would hide which corpus the weights come from: compute them and pass "
            "them, e.g. idf=markeval.semantic.idf_weights(reference_corpus) (bert-score uses "
            "the references of the test set)"
        )
    if not isinstance(idf, IDFWeights):
        raise TypeError(f"idf must be None, False or an IDFWeights, got {type(idf).__name__}")
    if idf.model != encoder.name:
        raise ValueError(
            f"idf weights were computed with the tokenizer of {idf.model!r} but the encoder is "
            f"{encoder.name!r}: compute them with idf_weights(corpus, model=<the same model>)"
        )
    return idf


def _check_layer(layer, encoder) -> int:
    if layer is None:
        return encoder.num_layers  # DEFAULT_LAYER for the default model
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
        raise TypeError(f"layer must be an int (a hidden-state index), got {layer!r}")
    if not -(encoder.num_layers + 1) <= layer <= encoder.num_layers:
        raise ValueError(
            f"layer {int(layer)} does not exist: encoder {encoder.name} has hidden states "
            f"0..{encoder.num_layers} (0 = embeddings, {encoder.num_layers} = last)"
        )
    return int(layer) % (encoder.num_layers + 1)


def _check_baseline(rescale, baseline, encoder, layer):
    rescale = check_bool(rescale, "rescale")
    if baseline is not None and not rescale:
        raise ValueError("baseline= is only used with rescale=True")
    if not rescale:
        return None
    if baseline is None:
        from markeval.semantic.baseline import load_baseline

        return load_baseline(encoder.name, layer)
    try:
        b = tuple(float(x) for x in baseline)
    except TypeError:
        raise TypeError(f"baseline must be three floats (P, R, F), got {baseline!r}") from None
    if len(b) != 3 or not all(np.isfinite(b)) or any(x >= 1 for x in b):
        raise ValueError(
            f"baseline must be three finite floats below 1 (P, R, F), got {baseline!r}"
        )
    return b


def bertscore(
    hypotheses,
    references,
    *,
    model=None,
    layer: int | None = None,
    idf: IDFWeights | bool | None = None,
    rescale: bool = False,
    baseline=None,
    batch_size: int = 64,
    device=None,
    progress: bool = True,
    cache_dir=None,
) -> BERTScoreResult:
    """BERTScore of each hypothesis against its reference(s), and the corpus means.

    Parameters
    ----------
    hypotheses : list of str
    references : list of (str or list of str)
        ``references[i]`` is the reference, or the list of references, of ``hypotheses[i]``.
    model : None, str, os.PathLike or Encoder
        None for the default model (all-MiniLM-L6-v2), else as in
        :func:`markeval.encoders.token_embeddings`.
    layer : int, optional
        Hidden-state index whose vectors are matched (0 = embeddings; negative counts from
        the end). Default: the last layer (:data:`DEFAULT_LAYER` = 6 for the default model).
        bert-score's ``num_layers=L`` is ``layer=L`` here.
    idf : None, False or IDFWeights
        None/False: every token weighs 1 (bert-score ``idf=False``). An :class:`IDFWeights`
        from :func:`markeval.semantic.idf_weights` over a corpus you choose (bert-score's
        ``idf=True`` is ``idf=idf_weights(<the references>)``). Special tokens weigh 0.
    rescale : bool, default False
        Map each score ``x`` to ``(x - b) / (1 - b)``: 0 is then the score of an unrelated
        sentence pair. Rescaling is affine, so it never changes a ranking.
    baseline : (float, float, float), optional
        ``b`` for (P, R, F). Default with ``rescale=True``: the packaged baseline of the
        default model at ``layer`` (:func:`markeval.semantic.baseline.load_baseline`); other
        models need one from :func:`markeval.semantic.baseline.compute_baseline`.
    batch_size, device, progress, cache_dir
        Passed to :func:`markeval.encoders.token_embeddings`. Every distinct text is
        encoded once.

    Returns
    -------
    BERTScoreResult

    Warns
    -----
    EmptyTextWarning
        When a hypothesis or reference is empty after stripping white space (its scores
        are 0).
    markeval.encoders.TruncationWarning
        When texts exceed the encoder's window (256 word pieces for the default model).

    Examples
    --------
    >>> s = bertscore(["the cat sat on the mat"], [["the cat sat on the mat"]], progress=False)
    >>> round(s.f1, 4)
    1.0
    >>> s = bertscore(["a cat sat on a mat", "stocks fell"],
    ...               ["the cat sat on the mat", "share prices dropped"], progress=False)
    >>> [round(f, 3) for f in s.sentence_f1]
    [0.965, 0.601]
    >>> s.signature  # doctest: +ELLIPSIS
    'bertscore|model:sentence-transformers/all-MiniLM-L6-v2|layer:6|idf:no|rescale:no|version:...'
    """
    from markeval.encoders import _resolve, token_embeddings

    hypotheses = check_strings(hypotheses, "hypotheses")
    refs = check_references(hypotheses, references)
    encoder = _resolve(model, device)
    layer = _check_layer(layer, encoder)
    idf = _check_idf(idf, encoder)
    b = _check_baseline(rescale, baseline, encoder, layer)

    texts = list(dict.fromkeys(hypotheses + [r for group in refs for r in group]))
    embs = token_embeddings(texts, encoder, layers=[layer], batch_size=batch_size,
                            progress=progress, cache_dir=cache_dir)
    # Normalise and weigh each distinct text once; pairs then cost one small product.
    prepared = {}
    for text, emb in zip(texts, embs):
        weights = uniform_weights(emb) if idf is None else idf.weigh(emb)
        empty = not (~np.asarray(emb.special, dtype=bool)).any()
        prepared[text] = (_unit_rows(emb.vectors[0].astype(np.float64)), weights, empty)

    scores = np.zeros((len(hypotheses), 3))
    n_empty = 0
    for i, (hyp, group) in enumerate(zip(hypotheses, refs)):
        h_unit, h_w, h_empty = prepared[hyp]
        best = np.full(3, -np.inf)
        for ref in group:
            r_unit, r_w, r_empty = prepared[ref]
            if h_empty or r_empty:
                n_empty += 1
                pair = (0.0, 0.0, 0.0)
            else:
                pair = _match(h_unit, r_unit, h_w, r_w)
            best = np.maximum(best, pair)
        scores[i] = best
    if n_empty:
        warnings.warn(
            f"{n_empty} hypothesis-reference pairs have an empty side; their BERTScore is 0 "
            "(as in bert-score)",
            EmptyTextWarning,
            stacklevel=2,
        )
    if b is not None:
        scores = (scores - np.array(b)) / (1 - np.array(b))
    signature = make_signature(
        "bertscore",
        model=encoder.name,
        layer=layer,
        idf="no" if idf is None else f"yes(M={idf.n_documents})",
        rescale=bool(rescale),
        baseline=None if b is None else "/".join(f"{x:.4f}" for x in b),
    )
    mean = scores.mean(axis=0)
    return BERTScoreResult(
        precision=float(mean[0]),
        recall=float(mean[1]),
        f1=float(mean[2]),
        sentence_precision=tuple(float(x) for x in scores[:, 0]),
        sentence_recall=tuple(float(x) for x in scores[:, 1]),
        sentence_f1=tuple(float(x) for x in scores[:, 2]),
        signature=signature,
    )
