"""What the embedding metrics' cores read: per-text token vectors, weights and a mask.

The text layer of BERTScore (and the BERTScore baselines) encodes each distinct text once and
turns it into a :class:`WeightedTokens`; the cores (:mod:`markeval.semantic.greedy`) see only
these arrays, never a model or a string.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EmptyTextWarning", "WeightedTokens"]


class EmptyTextWarning(UserWarning):
    """An empty hypothesis or reference was scored 0 (as bert-score does)."""


@dataclass(frozen=True, eq=False)
class WeightedTokens:
    """The token vectors of one text, each token's weight, and which tokens are special.

    Attributes
    ----------
    vectors : numpy.ndarray
        shape ``(n_tokens, dim)``, any non-zero length per row.
    weights : numpy.ndarray
        float64, shape ``(n_tokens,)``, non-negative: uniform (1, special tokens 0) or idf.
    special : numpy.ndarray
        bool, shape ``(n_tokens,)``: tokens the tokenizer added (``[CLS]``, ``[SEP]``). They
        weigh 0 but can still be matched.

    Examples
    --------
    >>> t = WeightedTokens(np.eye(3), np.array([0.0, 1.0, 0.0]), np.array([True, False, True]))
    >>> t.empty, WeightedTokens(np.eye(2), np.zeros(2), np.ones(2, bool)).empty
    (False, True)
    """

    vectors: np.ndarray
    weights: np.ndarray
    special: np.ndarray

    @property
    def empty(self) -> bool:
        """True when the text has no token of its own (an empty or white-space string)."""
        return not (~np.asarray(self.special, dtype=bool)).any()

    @classmethod
    def from_embeddings(cls, emb, weights, row: int = 0) -> WeightedTokens:
        """Layer ``row`` of a :class:`markeval.encoders.TokenEmbeddings`, with ``weights``."""
        return cls(emb.vectors[row].astype(np.float64), np.asarray(weights, dtype=np.float64),
                   np.asarray(emb.special, dtype=bool))
