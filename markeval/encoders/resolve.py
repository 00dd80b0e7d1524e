"""From a ``model=`` argument to the encoder object: :func:`resolve_encoder`, :func:`memoize`."""

from __future__ import annotations

import os

from markeval._checks import check_folder, check_int
from markeval.encoders.loading import Encoder, default_model, load_encoder
from markeval.encoders.memo import MemoEncoder
from markeval.encoders.tokens import resolve_layers

__all__ = ["memoize", "resolve_encoder"]


def resolve_encoder(model=None, *, device=None, batch_size=None,
                    cache_dir=None) -> Encoder | MemoEncoder:
    """The encoder object a ``model=`` argument names, with the given settings applied.

    Every embedding metric calls this once on its ``model`` argument, and so can a study that
    wants one configured encoder for all its metrics.

    Parameters
    ----------
    model : None, str, os.PathLike, Encoder or MemoEncoder
        None for :func:`~markeval.encoders.default_model`; a model directory or hub id for
        :func:`~markeval.encoders.load_encoder`; an encoder object as it is.
    device, batch_size, cache_dir : optional
        Settings (see :meth:`Encoder.configure`); None keeps an encoder object's own, and
        loads a model named here with ``device="auto"`` (CUDA where available, else the CPU).

    Returns
    -------
    Encoder or MemoEncoder

    Examples
    --------
    >>> enc = resolve_encoder(None, batch_size=8)
    >>> enc.name, enc.batch_size
    ('sentence-transformers/all-MiniLM-L6-v2', 8)
    >>> resolve_encoder(enc) is enc
    True
    """
    if model is None:
        model = default_model("auto" if device is None else device)
    elif not isinstance(model, (Encoder, MemoEncoder)):
        if not isinstance(model, (str, os.PathLike)):
            raise TypeError(
                f"model must be None, a model directory, a hub id or an Encoder, got "
                f"{type(model).__name__}: {model!r}"
            )
        model = load_encoder(model, "auto" if device is None else device)
    return model.configure(device=device, batch_size=batch_size, cache_dir=cache_dir)


def memoize(model=None, *, layers=None, capacity: int | None = None, cache_dir=None,
            device=None) -> MemoEncoder:
    """Wrap an encoder so that every text is run through it once, whatever metric asks.

    Meta-evaluation scores the same system outputs and references with BERTScore (one
    layer), MoverScore and word-level Mark-Evaluate (the last five layers) and sentence-level
    set metrics (the last layer, pooled). Passing one ``MemoEncoder`` as their ``model`` lets
    them share a single forward pass per distinct text. The memory is explicit: it lives in
    the object you pass, and goes with it.

    Parameters
    ----------
    model : None, str, os.PathLike, Encoder or MemoEncoder
        As in :func:`resolve_encoder` (a ``MemoEncoder`` is unwrapped: a fresh memory).
    layers : None, int or sequence of int
        Hidden states to keep per text (default all); include the last layer for
        :func:`~markeval.encoders.sentence_embeddings`.
    capacity : int, optional
        Keep at most this many texts, forgetting the least recently used (the references of a
        study stay while each system's outputs pass through). Default: no limit.
    cache_dir : str or os.PathLike, optional
        Also keep on disk the vectors of every batch of texts the memo has not seen, keyed as
        in :func:`~markeval.encoders.token_embeddings` (model content, layers, texts): a second
        run of the same study reads them instead of encoding. A cache entry matches only the
        same batch of texts in the same order, which a deterministic study reproduces.
        Default: the encoder's ``cache_dir`` (memory only when it has none).
    device : str, optional
        As in :func:`resolve_encoder`. The memory holds vectors of this one device.

    Returns
    -------
    MemoEncoder

    Examples
    --------
    >>> from markeval.encoders import token_embeddings
    >>> enc = memoize(layers=range(-5, 0))
    >>> [a] = token_embeddings(["Fish swim."], enc, layers=[-1], progress=False)
    >>> [b] = token_embeddings(["Fish swim."], enc, layers=[-2, -1], progress=False)
    >>> bool((a.vectors[0] == b.vectors[1]).all()), enc.n_texts
    (True, 1)
    """
    if isinstance(model, MemoEncoder):
        model = model.encoder
    encoder = resolve_encoder(model, device=device)
    if capacity is not None:
        capacity = check_int(capacity, "capacity", minimum=1)
    kept = resolve_layers(layers, encoder.num_layers)
    cache = encoder.cache_dir if cache_dir is None else check_folder(cache_dir, "cache_dir")
    return MemoEncoder(encoder, kept, capacity, cache)
