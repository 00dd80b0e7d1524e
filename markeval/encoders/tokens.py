"""Per-token embeddings as data: the vectors of one text, the layers chosen, merged words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from markeval.encoders._run import read_only

__all__ = ["TokenEmbeddings", "resolve_layers"]


@dataclass(frozen=True, eq=False)
class TokenEmbeddings:
    """The contextual vectors of one text, for the selected hidden layers.

    All arrays are read-only.

    Attributes
    ----------
    tokens : tuple of str
        Word pieces as the tokenizer writes them (``"##ization"``), or whole words after
        ``merge_subwords=True``. Special tokens are included.
    vectors : numpy.ndarray
        float32, shape ``(len(layers), n_tokens, dim)``.
    layers : tuple of int
        Hidden-state index of each row of ``vectors`` (0 = embedding layer, ``num_layers`` =
        last layer).
    special : numpy.ndarray
        bool, shape ``(n_tokens,)``: True for the tokens the tokenizer *added* around the text
        (``[CLS]``/``[SEP]`` for BERT, ``<s>``/``</s>`` for RoBERTa).
    word_ids : tuple of (int or None)
        Index of the word each token belongs to (the tokenizer's pre-tokenisation into words),
        None for special tokens.
    """

    tokens: tuple[str, ...]
    vectors: np.ndarray
    layers: tuple[int, ...]
    special: np.ndarray
    word_ids: tuple[int | None, ...]

    @property
    def n_tokens(self) -> int:
        """Number of tokens (special tokens included)."""
        return len(self.tokens)

    def layer(self, index: int) -> np.ndarray:
        """Return the ``(n_tokens, dim)`` vectors of hidden layer ``index`` (one of ``layers``)."""
        if index not in self.layers:
            raise ValueError(f"layer {index} was not computed; available layers: {self.layers}")
        return self.vectors[self.layers.index(index)]


def resolve_layers(layers, num_layers: int) -> tuple[int, ...]:
    """Hidden-state indices as non-negative ints: None is all, negative counts from the end.

    Examples
    --------
    >>> resolve_layers(range(-2, 0), 6), resolve_layers(None, 2), resolve_layers(-1, 6)
    ((5, 6), (0, 1, 2), (6,))
    """
    n_states = num_layers + 1
    if layers is None:
        return tuple(range(n_states))
    if isinstance(layers, (int, np.integer)) and not isinstance(layers, bool):
        layers = [layers]
    if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
        raise TypeError(f"layers must be None, an int or a sequence of ints, got {layers!r}")
    resolved = []
    for layer in layers:
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
            raise TypeError(f"layers must contain ints, got {layer!r}")
        if not -n_states <= layer < n_states:
            raise ValueError(
                f"layer {int(layer)} is out of range: this encoder has hidden states "
                f"0..{num_layers} (0 = embeddings, {num_layers} = last; negative counts from "
                "the end)"
            )
        resolved.append(int(layer) % n_states)
    if not resolved:
        raise ValueError("layers is empty: select at least one hidden layer")
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"layers has repeated entries: {tuple(resolved)}")
    return tuple(resolved)


def merge_pieces(tokenizer, item: TokenEmbeddings) -> TokenEmbeddings:
    """Average the pieces of each word; special tokens stay one unit each."""
    starts, word_ids = [], []
    for position, word in enumerate(item.word_ids):
        if word is None or position == 0 or word != item.word_ids[position - 1]:
            starts.append(position)
            word_ids.append(word)
    bounds = starts + [item.n_tokens]
    counts = np.diff(bounds).astype(np.float32)
    vectors = np.add.reduceat(item.vectors, starts, axis=1) / counts[None, :, None]
    tokens = tuple(
        item.tokens[a] if word is None
        else tokenizer.convert_tokens_to_string(list(item.tokens[a:b])).strip()
        for word, a, b in zip(word_ids, bounds[:-1], bounds[1:])
    )
    return TokenEmbeddings(
        tokens=tokens,
        vectors=read_only(vectors.astype(np.float32, copy=False)),
        layers=item.layers,
        special=read_only(item.special[starts].copy()),
        word_ids=tuple(word_ids),
    )
