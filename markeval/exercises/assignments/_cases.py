"""Case material shared by the assignments: toy sentences, WMT17 lines and judged segments."""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["VOCAB", "pearson", "toy_sentence", "wmt17", "wmt17_judged", "wmt17_rows"]

#: The words of the toy sentences (few, so that random sentences share n-grams).
VOCAB = "the a cat dog sat on mat rug ran big small red".split()


def toy_sentence(rng, low: int = 0, high: int = 10) -> str:
    """A random sentence of ``low`` to ``high - 1`` words of :data:`VOCAB`."""
    return " ".join(rng.choice(VOCAB, size=int(rng.integers(low, high))).tolist())


@functools.lru_cache(maxsize=4)
def wmt17(pair: str = "de-en", detokenize: bool = False):
    """The WMT17 test set of ``pair``, loaded once for all the assignments' cases."""
    from markeval.datasets import load_wmt17

    return load_wmt17(pair, detokenize=detokenize)


def wmt17_rows(rng, count: int, *, detokenize: bool = False, max_words: int = 60):
    """``count`` random (hypothesis, reference, second system's output) lines of de-en."""
    data = wmt17("de-en", detokenize)
    systems = sorted(data.systems)
    rows = []
    while len(rows) < count:
        i = int(rng.integers(len(data.references)))
        a, b = rng.choice(len(systems), size=2, replace=False)
        hyp, other = data.systems[systems[a]][i], data.systems[systems[b]][i]
        ref = data.references[i]
        if max(len(hyp.split()), len(ref.split())) <= max_words and hyp.strip() and ref.strip():
            rows.append((hyp, ref, other))
    return rows


@functools.lru_cache(maxsize=2)
def wmt17_judged(pair: str = "de-en", n: int | None = None):
    """The WMT17 segments with human direct-assessment scores, with their texts.

    Parameters
    ----------
    pair : str, default "de-en"
    n : int, optional
        Keep the first ``n`` judged segments (file order); default all (560 per pair).

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``sid``, ``score`` (standardised DA), ``hypothesis`` and
        ``reference`` (lower-cased, Moses-tokenised, as distributed).
    """
    from markeval.datasets import wmt17_da_segments

    seg = wmt17_da_segments(pair, with_text=True)
    seg = seg[["system", "sid", "score", "hypothesis", "reference"]]
    return (seg if n is None else seg.head(n)).reset_index(drop=True)


def pearson(x, y) -> float:
    """Pearson's r of two score lists, as a float."""
    return float(np.corrcoef(np.asarray(x, float), np.asarray(y, float))[0, 1])

