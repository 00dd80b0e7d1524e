"""Porter stemming (Porter 1980) and Snowball English stemming, cached per word.

METEOR's stem module and ROUGE's optional stemming both use NLTK's
``PorterStemmer()`` with its default ``NLTK_EXTENSIONS`` mode: NLTK's METEOR and
Google's ``rouge-score`` call exactly that, so markeval does too, to agree with
them to the last token. The Snowball ("Porter2") English stemmer is the one the MoverScore
authors' ROUGE applies on TAC (NLTK's ``SnowballStemmer("english")``). The stemmer is slow per call (pure Python, ~20 µs a
word) but a text collection has few distinct words, so each is stemmed once.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def _stemmer():
    # Imported on first use: importing nltk takes about 2 s.
    try:
        from nltk.stem.porter import PorterStemmer
    except ImportError as err:  # pragma: no cover - nltk is a dependency
        raise ImportError("Porter stemming needs NLTK: pip install nltk") from err
    return PorterStemmer()


@functools.lru_cache(maxsize=2**20)
def porter_stem(word: str) -> str:
    """The Porter stem of ``word``, as ``nltk.stem.porter.PorterStemmer().stem(word)``.

    NLTK's stemmer lower-cases its input first.

    Parameters
    ----------
    word : str

    Returns
    -------
    str

    Examples
    --------
    >>> [porter_stem(w) for w in ["Goods", "jumps", "running", "happily", "generously"]]
    ['good', 'jump', 'run', 'happili', 'gener']
    """
    return _stemmer().stem(word)


@functools.lru_cache(maxsize=1)
def _snowball():
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


@functools.lru_cache(maxsize=2**20)
def snowball_stem(word: str) -> str:
    """The Snowball English stem of ``word``, as ``SnowballStemmer("english").stem(word)``.

    It lower-cases its input first, like the Porter stemmer.

    Examples
    --------
    >>> [snowball_stem(w) for w in ["Goods", "jumps", "running", "happily", "generously"]]
    ['good', 'jump', 'run', 'happili', 'generous']
    """
    return _snowball().stem(word)
