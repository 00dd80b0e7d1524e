"""Checkers for the chapter "Contextual embeddings" (06): word pieces, pooling and idf."""

from __future__ import annotations

import math

import numpy as np

from markeval.exercises import Question

__all__ = ["idf", "idf_cat", "pool", "token_count"]


def _token_count():
    from markeval.encoders import token_embeddings  # loads the encoder at check time only

    return token_embeddings(["Tokenization is unbelievable!"], layers=[-1],
                            progress=False)[0].n_tokens


token_count = Question(
    "Count the tokens",
    expected=_token_count,
    hints=["Five word pieces come from the text.", "Add [CLS] and [SEP]."],
    solution="7: [CLS] token ##ization is unbelievable ! [SEP]",
)


def _pool_cases(rng):
    cases = []
    for _ in range(20):
        n = int(rng.integers(3, 12))
        special = np.zeros(n, dtype=bool)
        special[[0, n - 1]] = True
        cases.append((rng.normal(size=(n, 5)), special))
    return cases


pool = Question(
    "Mean pooling without special tokens",
    reference=lambda vectors, special: vectors[~special].mean(axis=0),
    cases=_pool_cases,
    hints=["Boolean indexing keeps the rows where a mask is True.", "~special flips the mask."],
    solution="return vectors[~special].mean(axis=0)",
)


def _idf_reference(docs):
    m = len(docs)
    df = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    return {t: math.log((m + 1) / (c + 1)) for t, c in df.items()}


def _idf_cases(rng):
    vocab = ["the", "cat", "dog", "eel", "sat", "ran", "."]
    return [([[str(t) for t in rng.choice(vocab, size=int(rng.integers(1, 6)))]
              for _ in range(int(rng.integers(1, 6)))],) for _ in range(20)]


idf = Question(
    "IDF by hand",
    reference=_idf_reference,
    cases=_idf_cases,
    hints=["Count each token once per document: iterate over set(doc).",
           "M is the number of documents, len(docs)."],
    solution="df = Counter(t for d in docs for t in set(d)); "
             "return {t: math.log((len(docs) + 1) / (c + 1)) for t, c in df.items()}",
)


IDF_CORPUS = [["cat", "cat"], ["dog"], ["cat", "dog", "eel"]]

idf_cat = Question(
    "IDF of 'cat' by hand",
    expected=lambda: _idf_reference(IDF_CORPUS)["cat"],
    atol=5e-4,  # answers rounded to three decimals pass
    hints=["M = 3 documents; in how many of them does 'cat' occur (not how often)?",
           "log((M + 1) / (df + 1)) with the natural logarithm."],
    solution="df(cat) = 2 of M = 3 documents: log(4 / 3) ≈ 0.288.",
)
