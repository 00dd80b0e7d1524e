"""One forward pass per text, whatever metric asks: an encoder with a memory.

:class:`MemoEncoder` is an ordinary (mutable) object: its memory grows as texts pass through,
so it is not a frozen value. It wraps a frozen :class:`~markeval.encoders.Encoder`, whose
facts and settings it answers for, and is accepted wherever a ``model=`` argument is.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from markeval.encoders._compute import compute_tokens
from markeval.encoders._run import read_only
from markeval.encoders.loading import Encoder
from markeval.encoders.tokens import TokenEmbeddings

__all__ = ["MemoEncoder"]


class MemoEncoder:
    """An :class:`~markeval.encoders.Encoder` that remembers the token vectors of every text.

    Build one with :func:`~markeval.encoders.memoize`. Any function that takes ``model=``
    accepts it; :func:`~markeval.encoders.token_embeddings` (and through it BERTScore,
    MoverScore and word-level Mark-Evaluate) then encodes only the texts it has not seen, and
    :func:`~markeval.encoders.sentence_embeddings` pools the remembered last layer. Scores are
    the same as with the plain encoder (up to float rounding: a text is padded with different
    neighbours).

    The wrapped encoder's facts and settings (``name``, ``num_layers``, ``dim``,
    ``tokenizer``, ``device``, ``batch_size`` ...) are read through this object.

    Attributes
    ----------
    encoder : Encoder
        The plain encoder that computes what the memory lacks.
    memo_layers : tuple of int
        The hidden states kept per text; a request for another layer is an error.
    capacity : int or None
        Most texts kept; beyond it the least recently used are forgotten (None: no limit).
        Memory per text is ``4 * dim * len(memo_layers)`` bytes per word piece (7.5 KiB per
        piece for the last five layers of all-MiniLM-L6-v2, ≈ 0.2 MiB for a 25-piece
        sentence).
    cache_dir : pathlib.Path or None
        Where the vectors of each batch of new texts are also written (see
        :func:`~markeval.encoders.token_embeddings`), so that the same study run again reads
        them from disk.
    """

    def __init__(self, encoder: Encoder, layers: tuple[int, ...], capacity: int | None = None,
                 cache_dir: Path | None = None, *, _memo: OrderedDict | None = None):
        self.encoder = encoder
        self.memo_layers = layers
        self.capacity = capacity
        self.cache_dir = cache_dir
        # Shared, on purpose, by the copies `configure` makes: one memory, several settings.
        self._memo = OrderedDict() if _memo is None else _memo

    def __getattr__(self, name):
        # Only called for names this object lacks: the wrapped encoder's facts and settings.
        if name.startswith("_") or name == "encoder":
            raise AttributeError(name)
        return getattr(self.encoder, name)

    def __repr__(self) -> str:
        return (f"MemoEncoder(name={self.name!r}, layers={self.memo_layers}, "
                f"texts={self.n_texts}, capacity={self.capacity})")

    @property
    def n_texts(self) -> int:
        """How many texts' vectors are held now."""
        return len(self._memo)

    def configure(self, *, device=None, batch_size=None, cache_dir=None) -> MemoEncoder:
        """The same memory with other settings (see :meth:`Encoder.configure`).

        The memory holds vectors of one device, so ``device`` may only name the current one.
        """
        encoder = self.encoder.configure(device=device, batch_size=batch_size)
        if encoder.device != self.encoder.device:
            raise ValueError(
                f"this MemoEncoder holds vectors computed on {self.encoder.device!r}; for "
                f"device={device!r} memoize the encoder there: "
                f"memoize(model.encoder.configure(device={device!r}), layers=...)")
        return MemoEncoder(encoder, self.memo_layers, self.capacity,
                           self.cache_dir if cache_dir is None else Path(cache_dir).expanduser(),
                           _memo=self._memo)

    def lookup(self, texts: list[str], layers: tuple[int, ...], batch_size: int,
               progress: bool) -> list[TokenEmbeddings]:
        """The vectors of ``texts`` at ``layers``, computing (in batches) the ones not held."""
        missing_layers = [layer for layer in layers if layer not in self.memo_layers]
        if missing_layers:
            raise ValueError(
                f"layers {tuple(missing_layers)} were not memoized: this MemoEncoder keeps "
                f"{self.memo_layers}; build it with memoize(..., layers=...) covering them")
        found = {t: self._memo[t] for t in dict.fromkeys(texts) if t in self._memo}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, compute_tokens(
                self.encoder, missing, self.memo_layers, batch_size, progress,
                merge_subwords=False, cache_dir=self.cache_dir)))
        for text, item in found.items():
            self._memo[text] = item
            self._memo.move_to_end(text)
        while self.capacity is not None and len(self._memo) > self.capacity:
            self._memo.popitem(last=False)
        rows = [self.memo_layers.index(layer) for layer in layers]
        if rows == list(range(len(self.memo_layers))):
            return [found[t] for t in texts]
        picked = {t: TokenEmbeddings(tokens=item.tokens,
                                     vectors=read_only(item.vectors[rows]),
                                     layers=layers, special=item.special,
                                     word_ids=item.word_ids)
                  for t, item in found.items()}
        return [picked[t] for t in texts]
