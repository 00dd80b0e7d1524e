"""Mark-Evaluate's text layer: texts in, samples (embedding arrays) out.

The estimators of :mod:`markeval.population.mark_evaluate` work on two arrays of samples.
When they are given texts, :func:`encode_sets` turns both sets into samples with one
encoder, resolved once, and returns the fields that say how (for the signatures):
``level="sentence"`` gives one sample per text
(:func:`markeval.encoders.sentence_embeddings`), ``level="word"`` one sample per token per
layer (:func:`word_samples`, the paper's §6).
"""

from __future__ import annotations

import numpy as np

from markeval._checks import check_bool, check_choice, is_texts
from markeval.encoders import resolve_encoder, sentence_embeddings, token_embeddings

__all__ = ["DEFAULT_WORD_LAYERS", "LEVELS", "encode_sets", "word_samples", "word_samples_by_text"]

#: The paper's word-level setting (§6, Figure 5): the last five hidden layers.
DEFAULT_WORD_LAYERS = (-5, -4, -3, -2, -1)
#: How texts become samples.
LEVELS = ("sentence", "word")


def word_samples(texts, model=None, *, layers=DEFAULT_WORD_LAYERS, batch_size: int | None = None,
                 device=None, cache_dir=None, progress: bool = True) -> np.ndarray:
    """Word-level Mark-Evaluate samples (paper §6): one vector per token per selected layer.

    Each text is encoded with :func:`markeval.encoders.token_embeddings`; every word piece
    contributes its hidden state at each layer of ``layers`` as a separate sample, so a text of
    ``m`` word pieces gives ``m * len(layers)`` rows. The special tokens the tokenizer adds
    (``[CLS]``, ``[SEP]``) are left out: they are not words of the text, and since every text
    has them, in the last layers they sit close together whatever the text says, so keeping
    them would plant ``2 * len(layers)`` near-duplicates per text in *both* sets that capture
    one another and pull every score towards "same distribution".

    Parameters
    ----------
    texts : list of str
    model : None, str, os.PathLike, Encoder or MemoEncoder
        As in :func:`markeval.encoders.token_embeddings` (None: the default model).
    layers : int or sequence of int, default the last five ``(-5, ..., -1)``
        Hidden-state indices (0 = embedding layer, negative counts from the end).
    batch_size, device, cache_dir
        Passed to :func:`markeval.encoders.token_embeddings` (None: the encoder's settings).
    progress : bool, default True
        Show the encoder's progress bar.

    Returns
    -------
    numpy.ndarray
        float32, shape ``(n_samples, dim)``, ordered text by text, token by token, and for each
        token layer by layer (the order matters to :func:`me_schnabel`, whose censuses follow
        it).

    Examples
    --------
    >>> x = word_samples(["Fish swim.", "Cats nap."], progress=False)
    >>> x.shape  # 3 word pieces per text ("fish", "swim", "."), 5 layers each
    (30, 384)
    >>> word_samples(["Fish swim."], layers=[-1], progress=False).shape
    (3, 384)
    """
    parts = word_samples_by_text(texts, model, layers=layers, batch_size=batch_size,
                                 device=device, cache_dir=cache_dir, progress=progress)
    dim = parts[0].shape[1] if parts else 0
    return np.concatenate(parts, axis=0) if parts else np.zeros((0, dim), np.float32)


def word_samples_by_text(texts, model=None, *, layers=DEFAULT_WORD_LAYERS,
                         batch_size: int | None = None, device=None, cache_dir=None,
                         progress: bool = True) -> list[np.ndarray]:
    """:func:`word_samples` of each text on its own: one array per text, from one encoding.

    For set metrics computed text by text (a reference sentence against its translation).

    Examples
    --------
    >>> [x.shape for x in word_samples_by_text(["Fish swim.", "Cats"], progress=False)]
    [(15, 384), (5, 384)]
    """
    items = token_embeddings(texts, model, layers=layers, batch_size=batch_size, device=device,
                             progress=progress, cache_dir=cache_dir)
    # (layers, tokens, dim) → (tokens, layers, dim): one token's samples stay together.
    return [item.vectors[:, ~item.special].transpose(1, 0, 2).reshape(-1, item.vectors.shape[2])
            for item in items]


def encode_sets(S, S_prime, names: tuple[str, str], *, model=None, level: str = "sentence",
                layers=None, progress: bool = True):
    """Samples of both sets (texts encoded, anything else returned as is) and how they were made.

    Returns
    -------
    S, S_prime
        Arrays for text input; other input untouched (the estimators validate it).
    settings : dict
        Signature fields: ``model``, ``device``, ``level`` (and ``layers`` for words); empty
        when neither set is texts.

    Examples
    --------
    >>> a, b, settings = encode_sets(["Fish swim.", "Cats nap."], np.zeros((2, 384)),
    ...                              ("S", "S_prime"), progress=False)
    >>> a.shape, settings["level"]
    ((2, 384), 'sentence')
    """
    check_choice(level, "level", LEVELS)
    progress = check_bool(progress, "progress")
    if level == "sentence" and layers is not None:
        raise ValueError(
            f"layers={layers!r} applies to level='word' only (sentence embeddings use the "
            "last layer, mean-pooled)")
    layers = DEFAULT_WORD_LAYERS if layers is None else layers
    if not (is_texts(S) or is_texts(S_prime)):
        if level == "word":
            raise ValueError(
                f"level='word' needs {names[0]} as a list of texts (it embeds their tokens); got "
                f"{type(S).__name__}. Pass precomputed word samples (see word_samples) as arrays "
                "with the default level")
        return S, S_prime, {}
    encoder = resolve_encoder(model)
    sets = []
    for x, name in ((S, names[0]), (S_prime, names[1])):
        if is_texts(x):
            x = (word_samples(list(x), encoder, layers=layers, progress=progress)
                 if level == "word" else sentence_embeddings(list(x), encoder, progress=progress))
        elif level == "word":
            raise ValueError(
                f"level='word' needs {name} as a list of texts (it embeds their tokens); got "
                f"{type(x).__name__}. Pass precomputed word samples (see word_samples) as "
                "arrays with the default level")
        sets.append(x)
    settings = {"model": encoder.name, "device": encoder.device, "level": level}
    if level == "word":
        listed = [layers] if isinstance(layers, (int, np.integer)) else list(layers)
        settings["layers"] = ",".join(str(int(v)) for v in listed)
    return sets[0], sets[1], settings
