"""Inverse document frequency of word pieces, and the token weights built from it.

BERTScore and MoverScore weigh each token of a sentence by how rare its word piece is in a
reference corpus. The weight depends on that corpus, so it is never hidden state here: the
caller computes an :class:`IDFWeights` once with :func:`idf_weights` (usually over the
references of the test set, as the bert-score package does) and passes it to the metric.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from markeval._checks import check_strings
from markeval.encoders import TokenEmbeddings, resolve_encoder, tokenize_texts

__all__ = ["IDFWeights", "idf_weights", "uniform_weights"]


@dataclass(frozen=True, eq=False)
class IDFWeights:
    """Inverse document frequencies of word pieces over a corpus of ``n_documents`` texts.

    Attributes
    ----------
    weights : Mapping[str, float]
        Word piece as the tokenizer writes it (``"##ization"``) → ``log((M+1)/(df+1))``.
        Special tokens are not in it. A plain dict (so that the weights pickle into worker
        processes): treat it as read-only.
    default : float
        ``log(M+1)``: the weight of a piece that no corpus document contains.
    n_documents : int
        ``M``, the number of corpus documents.
    model : str
        Name of the encoder whose tokenizer cut the corpus into pieces (for signatures).

    Notes
    -----
    The bert-score package keys its idf dictionary by token *id*; keying by the piece
    *string* is equivalent for one tokenizer (ids and pieces are in one-to-one
    correspondence in its vocabulary) and keeps the weights readable. Weights computed with
    one tokenizer are meaningless for another: metrics check ``model`` against the encoder.
    """

    weights: Mapping[str, float]
    default: float
    n_documents: int
    model: str

    def weigh(self, emb: TokenEmbeddings) -> np.ndarray:
        """Return the float64 weight of each token of ``emb``; special tokens get 0.

        Pieces missing from the corpus get :attr:`default`. For ``merge_subwords=True``
        embeddings the merged word strings are looked up as they are (a whole word is
        rarely a single vocabulary piece, so most get :attr:`default`): weigh piece-level
        embeddings when idf matters.
        """
        out = np.array([self.weights.get(tok, self.default) for tok in emb.tokens],
                       dtype=np.float64)
        out[np.asarray(emb.special, dtype=bool)] = 0.0
        return out


def idf_weights(corpus, model=None) -> IDFWeights:
    """Inverse document frequency of every word piece in ``corpus``.

    ``idf(w) = log((M + 1) / (df(w) + 1))`` where ``M = len(corpus)`` and ``df(w)`` is the
    number of documents that contain piece ``w`` at least once (a set per document). A piece
    never seen gets ``log(M + 1)``. Texts are cut with the encoder's own tokenizer, exactly
    as :func:`markeval.encoders.token_embeddings` cuts them (same truncation), and the
    special tokens the tokenizer adds are left out (they weigh 0 in every metric).
    Leading/trailing whitespace does not change the pieces.

    Parameters
    ----------
    corpus : list of str
        The documents (for BERTScore: the references of the test set, one per segment;
        repeated texts count as separate documents, as in bert-score).
    model : None, str, os.PathLike, Encoder or MemoEncoder
        The encoder whose tokenizer is used (None: the default model), as in
        :func:`markeval.encoders.resolve_encoder`.

    Returns
    -------
    IDFWeights

    Examples
    --------
    >>> w = idf_weights(["the cat sat", "the dog sat", "the cat ran"])
    >>> round(w.weights["the"], 4), round(w.weights["cat"], 4), round(w.default, 4)
    (0.0, 0.2877, 1.3863)
    >>> w.n_documents, w.model
    (3, 'sentence-transformers/all-MiniLM-L6-v2')
    """
    corpus = check_strings(corpus, "corpus")
    encoder = resolve_encoder(model)
    encoding = tokenize_texts(encoder, corpus)
    tokenizer = encoder.tokenizer
    df: Counter[str] = Counter()
    for ids, special in zip(encoding["input_ids"], encoding["special_tokens_mask"]):
        pieces = tokenizer.convert_ids_to_tokens(ids)
        df.update({p for p, s in zip(pieces, special) if not s})
    m = len(corpus)
    weights = {piece: math.log((m + 1) / (count + 1)) for piece, count in sorted(df.items())}
    return IDFWeights(
        weights=weights, default=math.log(m + 1), n_documents=m, model=encoder.name
    )


def uniform_weights(emb: TokenEmbeddings) -> np.ndarray:
    """Weight 1 for every token of ``emb`` and 0 for its special tokens (``idf=False``).

    Examples
    --------
    >>> from markeval.encoders import token_embeddings
    >>> [e] = token_embeddings(["Hello world"], layers=[-1], progress=False)
    >>> e.tokens, uniform_weights(e).tolist()
    (('[CLS]', 'hello', 'world', '[SEP]'), [0.0, 1.0, 1.0, 0.0])
    """
    return np.where(np.asarray(emb.special, dtype=bool), 0.0, 1.0)
