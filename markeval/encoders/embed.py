"""The public embedding functions: validate, resolve the encoder, use its memory or run it."""

from __future__ import annotations

import numpy as np

from markeval._checks import check_bool, check_strings
from markeval.encoders._compute import compute_sentences, compute_tokens
from markeval.encoders.memo import MemoEncoder
from markeval.encoders.resolve import resolve_encoder
from markeval.encoders.tokens import TokenEmbeddings, merge_pieces, resolve_layers

__all__ = ["sentence_embeddings", "token_embeddings"]

# Texts per forward pass when neither the call nor the encoder says (kept per function: a
# different batch pads a text with different neighbours, which moves the last float bits).
_SENTENCE_BATCH = 64
_TOKEN_BATCH = 32


def sentence_embeddings(
    texts,
    model=None,
    *,
    batch_size: int | None = None,
    device=None,
    progress: bool = True,
    normalize: bool = True,
    cache_dir=None,
) -> np.ndarray:
    """Embed each text as one vector: mean of the last layer over its tokens, unit length.

    This is sentence-transformers' recipe for all-MiniLM-L6-v2 (Transformer, mean Pooling,
    Normalize): every non-padding token counts, the tokenizer's ``[CLS]`` and ``[SEP]``
    included. An empty string is therefore allowed and embeds as the normalised mean of its
    two special tokens, as in sentence-transformers.

    Parameters
    ----------
    texts : list of str
    model : None, str, os.PathLike, Encoder or MemoEncoder
        None for :func:`~markeval.encoders.default_model`; a directory or hub id for
        :func:`~markeval.encoders.load_encoder`; an encoder object, whose settings
        (``batch_size``, ``cache_dir``, ``device``) apply unless this call overrides them.
    batch_size : int, optional
        Texts per forward pass (sorted by length first, results returned in input order).
        Default: the encoder's, else 64.
    device : str, optional
        Run on this device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ... or ``"auto"`` (CUDA where
        ``torch.cuda.is_available()``, else the CPU). Default: an encoder object's own device;
        ``"auto"`` for a path or None. The vectors do not depend on the device beyond float
        rounding, so the disk cache serves an entry written on one device to a call on another.
    progress : bool, default True
        Show a tqdm bar on stderr.
    normalize : bool, default True
        L2-normalise each vector (False returns the plain mean-pooled vectors).
    cache_dir : str or os.PathLike, optional
        Directory for an on-disk cache: one ``.npz`` per call, keyed by the model's content
        fingerprint, ``max_length``, ``normalize`` and the SHA-256 of every text in order.
        An entry that is unreadable or answers another call is recomputed with a
        :class:`markeval.cache.CacheWarning` (and deleted only when markeval wrote it and it
        is unchanged since: :func:`markeval.cache.read_entry`). Default: the encoder's
        ``cache_dir``; None there too neither reads nor writes.

    Returns
    -------
    numpy.ndarray
        float32, shape ``(len(texts), dim)``, row ``i`` for ``texts[i]``.

    Warns
    -----
    TruncationWarning
        When some texts exceed the encoder's ``max_length`` word pieces.

    Examples
    --------
    >>> emb = sentence_embeddings(["A cat sat on the mat.", "A dog lay on the rug.",
    ...                            "Stocks fell sharply."], progress=False)
    >>> emb.shape, emb.dtype
    ((3, 384), dtype('float32'))
    >>> [round(float(emb[0] @ emb[i]), 2) for i in range(3)]  # cosine: unit-length rows
    [1.0, 0.5, 0.09]
    """
    texts = check_strings(texts, "texts")
    progress = check_bool(progress, "progress")
    normalize = check_bool(normalize, "normalize")
    encoder = resolve_encoder(model, device=device, batch_size=batch_size, cache_dir=cache_dir)
    batch = encoder.batch_size or _SENTENCE_BATCH
    if isinstance(encoder, MemoEncoder) and encoder.num_layers in encoder.memo_layers:
        items = encoder.lookup(texts, (encoder.num_layers,), batch, progress)
        pooled = np.stack([item.vectors[0].mean(axis=0) for item in items])
        if normalize:
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.astype(np.float32, copy=False)
    if isinstance(encoder, MemoEncoder):
        encoder = encoder.encoder
    return compute_sentences(encoder, texts, batch, progress, normalize, encoder.cache_dir)


def token_embeddings(
    texts,
    model=None,
    *,
    layers=None,
    batch_size: int | None = None,
    device=None,
    progress: bool = True,
    merge_subwords: bool = False,
    cache_dir=None,
) -> list[TokenEmbeddings]:
    """Per-token contextual vectors of each text, for the chosen hidden layers.

    Parameters
    ----------
    texts : list of str
    model : None, str, os.PathLike, Encoder or MemoEncoder
        As in :func:`sentence_embeddings`.
    layers : None, int or sequence of int
        Hidden-state indices: 0 is the embedding layer, ``num_layers`` the last; negative
        values count from the end (``range(-5, 0)`` = the last five layers). None keeps all
        ``num_layers + 1``. Memory: ``4 * dim`` bytes per token per layer (1.5 KiB for
        all-MiniLM-L6-v2), so select only the layers a metric needs.
    batch_size : int, optional
        Default: the encoder's, else 32.
    device : str, optional
        As in :func:`sentence_embeddings`.
    progress : bool, default True
    merge_subwords : bool, default False
        Merge the word pieces of one word (consecutive tokens with the same ``word_ids`` entry,
        words as the tokenizer's pre-tokeniser splits them: BERT splits at spaces *and*
        punctuation, so ``"don't"`` is three words) into one token: its vector is the mean of
        the pieces' vectors (per layer) and its string the tokenizer's own detokenisation of
        the pieces (``"mark" "##eva" "##lu" "##ate"`` → ``"markevaluate"``). Special tokens
        are never merged.
    cache_dir : str or os.PathLike, optional
        As in :func:`sentence_embeddings` (one ``.npz`` per call; the key adds ``layers`` and
        ``merge_subwords``).

    Returns
    -------
    list of TokenEmbeddings
        One per text, in input order.

    Notes
    -----
    Special tokens are the ones the tokenizer *adds* (its ``special_tokens_mask``), found
    without string literals, so any vocabulary works. ``[UNK]`` (an unknown character such as
    an emoji) stands for real text and is not special; neither is a literal ``"[SEP]"`` typed
    inside a text. An empty string yields only the special tokens.

    Examples
    --------
    >>> [emb] = token_embeddings(["Tokenization matters."], layers=[-1], progress=False)
    >>> emb.tokens
    ('[CLS]', 'token', '##ization', 'matters', '.', '[SEP]')
    >>> emb.vectors.shape, emb.layers, emb.special.tolist()
    ((1, 6, 384), (6,), [True, False, False, False, False, True])
    >>> [merged] = token_embeddings(["Tokenization matters."], layers=[-1], progress=False,
    ...                             merge_subwords=True)
    >>> merged.tokens, merged.word_ids
    (('[CLS]', 'tokenization', 'matters', '.', '[SEP]'), (None, 0, 1, 2, None))
    """
    texts = check_strings(texts, "texts")
    progress = check_bool(progress, "progress")
    merge_subwords = check_bool(merge_subwords, "merge_subwords")
    encoder = resolve_encoder(model, device=device, batch_size=batch_size, cache_dir=cache_dir)
    selected = resolve_layers(layers, encoder.num_layers)
    batch = encoder.batch_size or _TOKEN_BATCH
    if isinstance(encoder, MemoEncoder):
        items = encoder.lookup(texts, selected, batch, progress)
        return [merge_pieces(encoder.tokenizer, i) for i in items] if merge_subwords else items
    return compute_tokens(encoder, texts, selected, batch, progress, merge_subwords,
                          encoder.cache_dir)
