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

The arithmetic lives in :mod:`markeval.semantic.greedy` and takes arrays
(:class:`~markeval.semantic.tokens.WeightedTokens`: vectors, weights, special-token mask);
:func:`bertscore` is the text layer that encodes each distinct text once and calls it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_references, check_strings
from markeval._signature import make_signature
from markeval.encoders import resolve_encoder, token_embeddings
from markeval.semantic.baseline import load_baseline
from markeval.semantic.greedy import greedy_scores
from markeval.semantic.idf import IDFWeights, uniform_weights
from markeval.semantic.tokens import EmptyTextWarning, WeightedTokens

__all__ = ["DEFAULT_LAYER", "BERTScoreResult", "bertscore"]

#: Hidden layer used for the default model (all-MiniLM-L6-v2): the last one. bert-score's
#: table of recommended layers (chosen per model on WMT16) has no entry for this model.
#: The last layer is the one its sentence-similarity fine-tuning shaped, and on WMT17
#: segment-level DA it correlates best or on par with layer 4 (Pearson r of F, de-en: 0.60
#: vs 0.60; zh-en: 0.64 vs 0.64; layers 0-3 and 5 lower): see the BERTScore chapter.
DEFAULT_LAYER = 6


# Texts per forward pass unless the encoder sets its own.
_BATCH_SIZE = 64


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
    score : float
        The headline: :attr:`f1` (the result protocol's name for it).
    item_scores : tuple of float
        :attr:`sentence_f1`.
    """

    higher_is_better: ClassVar[bool] = True

    precision: float
    recall: float
    f1: float
    sentence_precision: tuple[float, ...]
    sentence_recall: tuple[float, ...]
    sentence_f1: tuple[float, ...]
    signature: str

    @property
    def score(self) -> float:
        """The headline score, :attr:`f1`."""
        return self.f1

    @property
    def item_scores(self) -> tuple[float, ...]:
        """Per-hypothesis headline scores, :attr:`sentence_f1`."""
        return self.sentence_f1

    def __str__(self) -> str:
        return f"BERTScore P={self.precision:.4f} R={self.recall:.4f} F1={self.f1:.4f}"


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
    progress: bool = True,
) -> BERTScoreResult:
    """BERTScore of each hypothesis against its reference(s), and the corpus means.

    Parameters
    ----------
    hypotheses : list of str
    references : list of (str or list of str)
        ``references[i]`` is the reference, or the list of references, of ``hypotheses[i]``.
    model : None, str, os.PathLike, Encoder or MemoEncoder
        None for the default model (all-MiniLM-L6-v2), else as in
        :func:`markeval.encoders.resolve_encoder`. The encoder object carries the encoding
        settings (device, batch size, disk cache): ``model=default_model().configure(
        cache_dir=...)``.
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
    progress : bool, default True
        Show the encoder's progress bar. Every distinct text is encoded once.

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
    'bertscore|model:sentence-transformers/all-MiniLM-L6-v2|device:...|layer:6|idf:no|rescale:no|version:...'
    """
    hypotheses = check_strings(hypotheses, "hypotheses")
    refs = check_references(hypotheses, references)
    progress = check_bool(progress, "progress")
    encoder = resolve_encoder(model)
    layer = _check_layer(layer, encoder)
    idf = _check_idf(idf, encoder)
    b = _check_baseline(rescale, baseline, encoder, layer)

    texts = list(dict.fromkeys(hypotheses + [r for group in refs for r in group]))
    embs = token_embeddings(texts, encoder, layers=[layer],
                            batch_size=encoder.batch_size or _BATCH_SIZE, progress=progress)
    # One WeightedTokens per distinct text: the core normalises each object once.
    tokens = {text: WeightedTokens.from_embeddings(
                  emb, uniform_weights(emb) if idf is None else idf.weigh(emb))
              for text, emb in zip(texts, embs)}
    scores, n_empty = greedy_scores([tokens[h] for h in hypotheses],
                                    [[tokens[r] for r in group] for group in refs])
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
        device=encoder.device,
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
