"""GLEU, Google-BLEU (Wu et al., 2016): n-gram matches over max(hypothesis, reference) n-grams.

For one sentence, count all n-grams with ``min_len <= n <= max_len`` in the hypothesis
and in a reference; GLEU is the number of matching n-grams (clipped) divided by the
larger of the two totals, i.e. ``min(precision, recall)``. It needs no smoothing and no
brevity penalty: a short hypothesis loses recall instead. With several references, the
one with the best ratio counts. Corpus GLEU sums matches and totals over sentences
before dividing (as NLTK's ``corpus_gleu``), which is *not* the mean of sentence GLEU.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_int, check_string
from markeval._signature import make_signature
from markeval.lexical._ngram import (NGramReferences, SentenceScores, check_text_options,
                                     count_keys, lookup, resolve_references)
from markeval.resampling import SufficientStatistics

__all__ = [
    "GLEUOptions",
    "GLEUScore",
    "GLEUStatistics",
    "NGramReferences",
    "SentenceScores",
    "gleu",
    "gleu_from_statistics",
    "gleu_statistics",
    "sentence_gleu",
    "sentence_gleu_scores",
]


@dataclass(frozen=True)
class GLEUOptions:
    """The options of GLEU, checked once: every GLEU function takes them by these names.

    Parameters
    ----------
    min_len, max_len : int, default 1 and 4
    tokenize : str, optional
    lowercase : bool, optional
        As in :func:`gleu`. A bad value raises here, naming the argument and the value.

    Examples
    --------
    Unigrams 3 and 3 with 2 matches, bigrams 2 and 2 with 1: GLEU is 3 / 5.

    >>> options = GLEUOptions(max_len=2, tokenize="none")
    >>> gleu(["a b c"], ["a b d"], **dataclasses.asdict(options)).score
    60.0
    >>> GLEUOptions(min_len=3, max_len=2)
    Traceback (most recent call last):
    ...
    ValueError: max_len=2 must be >= min_len=3
    """

    min_len: int = 1
    max_len: int = 4
    tokenize: str | None = None
    lowercase: bool | None = None

    def __post_init__(self):
        min_len = check_int(self.min_len, "min_len", minimum=1)
        max_len = check_int(self.max_len, "max_len", minimum=1)
        if max_len < min_len:
            raise ValueError(f"max_len={max_len} must be >= min_len={min_len}")
        tokenize, lowercase = check_text_options(self.tokenize, self.lowercase)
        # Frozen: the checked values (numpy integers as ints) go in through object.__setattr__.
        for name, value in (("min_len", min_len), ("max_len", max_len), ("tokenize", tokenize),
                            ("lowercase", lowercase)):
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class GLEUScore:
    """A GLEU score and its counts.

    Attributes
    ----------
    score : float
        GLEU on a 0-100 scale (NLTK returns 0-1): ``100 * matches / total``.
    matches : int
        Matching n-grams (clipped), summed over sentences.
    total : int
        Sum over sentences of ``max(hypothesis n-grams, reference n-grams)``.
    hyp_ngrams, ref_ngrams : int
        Hypothesis n-grams and n-grams of the chosen references, summed over sentences.
    signature : str
        Every setting that changes the number.
    item_scores : None
        Corpus GLEU is a ratio of sums, not a mean of sentence scores;
        :func:`sentence_gleu_scores` gives those from the same statistics.
    """

    score: float
    matches: int
    total: int
    hyp_ngrams: int
    ref_ngrams: int
    signature: str
    higher_is_better: ClassVar[bool] = True

    item_scores = None  # see :func:`sentence_gleu_scores` for sentence scores.

    def __str__(self) -> str:
        return (
            f"GLEU = {self.score:.2f} ({self.matches}/{self.total} n-grams; "
            f"hyp {self.hyp_ngrams}, ref {self.ref_ngrams})"
        )


@dataclass(frozen=True, eq=False)
class GLEUStatistics(SufficientStatistics):
    """Per-sentence sufficient statistics of GLEU (integer arrays of shape (n,)).

    For each sentence the reference with the best ``matches / total`` was chosen (the
    first on ties). A sentence where hypothesis and every reference have no n-gram in
    range has all four counts 0 and does not affect the corpus score.

    Examples
    --------
    >>> stats = gleu_statistics(["a b c", "x y"], ["a b c", "x z"], tokenize="none")
    >>> stats.matrix.tolist()  # matches, total, hypothesis and reference n-grams
    [[6, 6, 6, 6], [1, 3, 3, 3]]
    >>> stats.scores(stats.matrix.sum(axis=0, keepdims=True)).round(4).tolist()
    [77.7778]
    """

    matches: np.ndarray
    total: np.ndarray
    hyp_ngrams: np.ndarray
    ref_ngrams: np.ndarray
    n_refs: int | None
    tokenize: str
    lowercase: bool
    min_len: int
    max_len: int

    @property
    def matrix(self) -> np.ndarray:
        """One row per sentence: matches, total, hypothesis n-grams, reference n-grams."""
        return np.column_stack([self.matches, self.total, self.hyp_ngrams, self.ref_ngrams])

    def scores(self, sums, *, float32: bool = False) -> np.ndarray:
        """GLEU (0-100) of every row of summed statistics: ``100 * matches / total`` (0 where
        the total is 0). ``float32`` changes nothing (integer ratios)."""
        sums = np.asarray(sums, dtype=np.float64)  # exact: counts are far below 2**53
        matches, total = sums[:, 0], sums[:, 1]
        return np.where(total > 0, 100 * (matches / np.maximum(total, 1)), 0.0)

    @property
    def signature(self) -> str:
        return _signature(self)

    def __len__(self) -> int:
        return int(self.matches.shape[0])

    def take(self, indices) -> GLEUStatistics:
        """The statistics of the sentences at ``indices`` (in that order; repeats allowed)."""
        idx = np.asarray(indices, dtype=np.int64)
        return dataclasses.replace(self, matches=self.matches[idx], total=self.total[idx],
                                   hyp_ngrams=self.hyp_ngrams[idx],
                                   ref_ngrams=self.ref_ngrams[idx])


def _ngrams_in_range(lengths: np.ndarray, min_len: int, max_len: int) -> np.ndarray:
    orders = np.arange(min_len, max_len + 1)
    return np.maximum(lengths[:, None] - orders[None, :] + 1, 0).sum(axis=1)


def gleu_statistics(
        hypotheses, references, *, min_len: int = GLEUOptions.min_len,
        max_len: int = GLEUOptions.max_len, tokenize: str | None = GLEUOptions.tokenize,
        lowercase: bool | None = GLEUOptions.lowercase) -> GLEUStatistics:
    """Count the per-sentence sufficient statistics of GLEU.

    Parameters
    ----------
    hypotheses : list of str
        System outputs.
    references : list or NGramReferences
        ``references[i]``: reference string or list of strings for ``hypotheses[i]``.
    min_len, max_len : int
        Smallest and largest n-gram order (1 and 4, as in Wu et al. 2016 and NLTK).
    tokenize : {"13a", "intl", "none"}, optional
        Default ``"13a"`` (or the NGramReferences' tokenizer).
    lowercase : bool, optional
        Default False (or the NGramReferences' setting).

    Returns
    -------
    GLEUStatistics

    Examples
    --------
    >>> stats = gleu_statistics(["the cat sat"], [["the cat sat down", "a cat sat"]])
    >>> stats.matches.tolist(), stats.total.tolist(), stats.ref_ngrams.tolist()
    ([6], [10], [10])
    """
    options = GLEUOptions(min_len=min_len, max_len=max_len, tokenize=tokenize,
                          lowercase=lowercase)
    return _statistics(hypotheses, references, options)


def _statistics(hypotheses, references, options: GLEUOptions) -> GLEUStatistics:
    """:func:`gleu_statistics` with its options checked."""
    min_len, max_len = options.min_len, options.max_len
    hypotheses, prepared = resolve_references(hypotheses, references, options)
    tokens = prepared.tokenize_hypotheses(hypotheses)
    n = len(tokens)
    hyp_len = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
    ref_index, sentence_keys, ref_counts, g = prepared.gleu_table(min_len, max_len)
    keys, hyp_counts = count_keys(prepared.hypothesis_keys(tokens, min_len, max_len, g))
    overlap = np.minimum(lookup(keys, hyp_counts, sentence_keys), ref_counts)
    n_all_refs = len(prepared.lengths)
    tp = np.rint(np.bincount(ref_index, weights=overlap, minlength=n_all_refs)).astype(np.int64)
    tpfp = _ngrams_in_range(hyp_len, min_len, max_len)
    tpfn = _ngrams_in_range(prepared.lengths, min_len, max_len)
    owner = prepared.ref_owner
    n_all = np.maximum(tpfp[owner], tpfn)
    # Best reference per sentence by tp / n_all (as floats, like NLTK's max key), the first
    # on ties; references with n_all == 0 are not candidates.
    ratio = np.full(n_all.shape, -np.inf)
    valid = n_all > 0
    ratio[valid] = tp[valid] / n_all[valid]
    width = int(np.bincount(owner, minlength=n).max()) if n else 1
    grid = np.full((n, width), -np.inf)
    column = np.arange(len(owner)) - prepared.ref_starts[owner]
    grid[owner, column] = ratio
    best = prepared.ref_starts + np.argmax(grid, axis=1)
    chosen = np.isfinite(grid.max(axis=1)) if n else np.zeros(0, dtype=bool)
    zero = np.zeros(n, dtype=np.int64)
    return GLEUStatistics(
        matches=np.where(chosen, tp[best], zero),
        total=np.where(chosen, n_all[best], zero),
        hyp_ngrams=np.where(chosen, tpfp, zero),
        ref_ngrams=np.where(chosen, tpfn[best], zero),
        n_refs=prepared.n_refs,
        tokenize=prepared.tokenize,
        lowercase=prepared.lowercase,
        min_len=min_len,
        max_len=max_len,
    )


def _signature(stats: GLEUStatistics, **extra) -> str:
    return make_signature(
        "gleu",
        nrefs=stats.n_refs if stats.n_refs is not None else "var",
        tok=stats.tokenize,
        lowercase=stats.lowercase,
        min_len=stats.min_len,
        max_len=stats.max_len,
        **extra,
    )


def gleu_from_statistics(stats: GLEUStatistics) -> GLEUScore:
    """Corpus GLEU from per-sentence statistics: summed matches over summed totals.

    Examples
    --------
    >>> stats = gleu_statistics(["a b c", "x y"], ["a b c", "x z"], tokenize="none")
    >>> round(gleu_from_statistics(stats).score, 4)
    77.7778
    """
    if not isinstance(stats, GLEUStatistics):
        raise TypeError(f"stats must be GLEUStatistics, got {type(stats).__name__}")
    if len(stats) == 0:
        raise ValueError("stats has no sentences")
    return GLEUScore(
        score=stats.corpus_score(),
        matches=int(stats.matches.sum()),
        total=int(stats.total.sum()),
        hyp_ngrams=int(stats.hyp_ngrams.sum()),
        ref_ngrams=int(stats.ref_ngrams.sum()),
        signature=_signature(stats),
    )


def gleu(
        hypotheses, references, *, min_len: int = GLEUOptions.min_len,
        max_len: int = GLEUOptions.max_len, tokenize: str | None = GLEUOptions.tokenize,
        lowercase: bool | None = GLEUOptions.lowercase) -> GLEUScore:
    """Corpus GLEU, identical to NLTK's ``corpus_gleu`` (times 100).

    .. math::

        \\mathrm{GLEU} = 100\\cdot\\frac{\\sum_s m_s}{\\sum_s \\max(h_s, r_s)}

    with, for sentence ``s``, ``m_s`` the clipped n-gram matches, ``h_s`` and ``r_s`` the
    n-grams (all orders ``min_len..max_len``) of the hypothesis and the best reference.

    Parameters
    ----------
    hypotheses : list of str
        System outputs.
    references : list or NGramReferences
        ``references[i]``: reference string or list of strings for ``hypotheses[i]``.
    min_len, max_len : int
        n-gram orders (1..4).
    tokenize : {"13a", "intl", "none"}, optional
        Default ``"13a"``; ``"none"`` for pre-tokenised text (and NLTK parity).
    lowercase : bool, optional
        Case-insensitive GLEU.

    Returns
    -------
    GLEUScore

    Examples
    --------
    >>> result = gleu(["the cat sat on the mat", "a dog"], ["the cat sat on a mat", "a dog barked"])
    >>> round(result.score, 2), result.matches, result.total
    (58.33, 14, 24)
    """
    options = GLEUOptions(min_len=min_len, max_len=max_len, tokenize=tokenize,
                          lowercase=lowercase)
    return gleu_from_statistics(_statistics(hypotheses, references, options))


def sentence_gleu(
        hypothesis: str, references, *, min_len: int = GLEUOptions.min_len,
        max_len: int = GLEUOptions.max_len, tokenize: str | None = GLEUOptions.tokenize,
        lowercase: bool | None = GLEUOptions.lowercase) -> GLEUScore:
    """GLEU of one sentence, identical to NLTK's ``sentence_gleu`` (times 100).

    Parameters
    ----------
    hypothesis : str
        One system output.
    references : str or list of str
        Its reference(s).
    min_len, max_len, tokenize, lowercase :
        As in :func:`gleu`.

    Examples
    --------
    >>> result = sentence_gleu("the cat the cat on the mat", "the cat is on the mat")
    >>> result.matches, result.hyp_ngrams, result.ref_ngrams, round(result.score, 2)
    (9, 22, 18, 40.91)
    """
    check_string(hypothesis, "hypothesis")
    if isinstance(references, NGramReferences):
        raise TypeError("sentence_gleu takes the references of one sentence: a str or list")
    options = GLEUOptions(min_len=min_len, max_len=max_len, tokenize=tokenize,
                          lowercase=lowercase)
    return gleu_from_statistics(_statistics([hypothesis], [references], options))


def sentence_gleu_scores(stats: GLEUStatistics) -> SentenceScores:
    """Sentence GLEU (0-100) of every row of ``stats``; 0 where a sentence has no n-grams.

    Returns
    -------
    SentenceScores
        Array-like (``np.asarray``, ``len``, indexing); ``item_scores`` holds the sentence
        scores, ``score`` their mean.

    Examples
    --------
    >>> stats = gleu_statistics(["a b c", "x y"], ["a b c", "x z"], tokenize="none")
    >>> [round(x, 2) for x in sentence_gleu_scores(stats)]
    [100.0, 33.33]
    """
    if not isinstance(stats, GLEUStatistics):
        raise TypeError(f"stats must be GLEUStatistics, got {type(stats).__name__}")
    return SentenceScores(tuple(map(float, stats.item_scores())), _signature(stats))
