"""BLEU (Papineni et al., 2002): clipped n-gram precision, geometric mean, brevity penalty.

Sufficient statistics first, score second (sacrebleu's design). :func:`bleu_statistics`
counts, per sentence, the hypothesis length, the closest reference length, and for each
order ``n`` the clipped matches and the number of hypothesis n-grams. Every score is a
function of (sums of) these integers, so corpus BLEU, sentence BLEU,
:func:`markeval.resampling.bootstrap` and the paired tests of :mod:`markeval.significance`
share one pass over the text (:class:`BLEUStatistics` is a
:class:`~markeval.resampling.SufficientStatistics`).

Smoothing: sacrebleu's ``none``, ``floor``, ``add-k`` and ``exp`` (the default, as in
sacrebleu), and NLTK's ``SmoothingFunction().method0`` … ``method7`` as ``nltk0`` …
``nltk7`` (Chen and Cherry, 2014), each reproducing its reference implementation exactly,
quirks included (see :mod:`markeval.lexical._bleu_smoothing`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_int, check_number, check_string
from markeval._signature import make_signature
from markeval.lexical._bleu_smoothing import (
    NLTK_METHOD5_ORDER,
    NLTK_SMOOTHING,
    SACREBLEU_SMOOTHING,
    SMOOTHING,
    nltk_bleu,
    sacrebleu_log,
)
from markeval.lexical._ngram import (
    NGramReferences,
    SentenceScores,
    check_text_options,
    closest_lengths,
    count_keys,
    lookup,
    resolve_references,
)
from markeval.resampling import SufficientStatistics

__all__ = [
    "BLEUOptions",
    "BLEUScore",
    "BLEUScoring",
    "BLEUStatistics",
    "NGramReferences",
    "SentenceScores",
    "bleu",
    "bleu_from_statistics",
    "bleu_statistics",
    "sentence_bleu",
    "sentence_bleu_scores",
]


@dataclass(frozen=True)
class BLEUScore:
    """A BLEU score and the numbers it is made of.

    Attributes
    ----------
    score : float
        BLEU on a 0-100 scale.
    precisions : tuple of float
        Per-order (smoothed) precisions in percent, orders 1..max_order.
    counts, totals : tuple of int
        Clipped n-gram matches and hypothesis n-grams per order (raw, before smoothing).
    bp : float
        Brevity penalty.
    ratio : float
        ``hyp_len / ref_len`` (0 when ``ref_len`` is 0).
    hyp_len, ref_len : int
        Hypothesis tokens and closest-reference tokens, summed over sentences.
    signature : str
        Every setting that changes the number.
    item_scores : None
        Corpus BLEU is not a mean of sentence scores; :func:`sentence_bleu_scores` gives
        those (with sentence-level smoothing) from the same statistics.
    """

    score: float
    precisions: tuple[float, ...]
    counts: tuple[int, ...]
    totals: tuple[int, ...]
    bp: float
    ratio: float
    hyp_len: int
    ref_len: int
    signature: str
    higher_is_better: ClassVar[bool] = True

    item_scores = None  # corpus BLEU is no mean of sentence scores: see sentence_bleu_scores

    def __str__(self) -> str:
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (
            f"BLEU = {self.score:.2f} {precisions} (BP = {self.bp:.3f} ratio = "
            f"{self.ratio:.3f} hyp_len = {self.hyp_len} ref_len = {self.ref_len})"
        )


@dataclass(frozen=True)
class BLEUScoring:
    """How BLEU scores its statistics: order, smoothing, effective order, NLTK's weights.

    Checked as :attr:`BLEUOptions.scoring` (by every BLEU function that takes options).
    ``effective_order`` None means sacrebleu's default for the use: off for a corpus score,
    on for sentence scores.
    """

    max_order: int = 4
    smooth: str = "exp"
    smooth_value: float | None = None
    effective_order: bool | None = None
    weights: tuple[float, ...] | None = None

    def effective(self, sentence: bool) -> bool | None:
        """``effective_order`` for a corpus (``sentence=False``) or sentence scores; None
        for NLTK's smoothing, which has no such option."""
        if self.smooth in NLTK_SMOOTHING:
            return None
        return sentence if self.effective_order is None else self.effective_order


@dataclass(frozen=True)
class BLEUOptions:
    """The options of BLEU, checked once: every BLEU function takes them by these names.

    Some are resolved on the way in: ``smooth_value`` None becomes the method's default,
    ``max_order`` None ``len(weights)`` (or 4), ``weights`` a tuple of floats, and
    ``effective_order`` None for NLTK's smoothing, which has no such option. Otherwise
    ``effective_order`` None stays None (sacrebleu's default for the use, see
    :class:`BLEUScoring`), and so do ``tokenize`` and ``lowercase`` (those of the
    :class:`NGramReferences`, or ``"13a"`` and False).

    Parameters
    ----------
    max_order : int, optional
    smooth : str, default "exp"
    smooth_value : float, optional
    effective_order : bool, optional
    tokenize : str, optional
    lowercase : bool, optional
    weights : tuple of float, optional
        As in :func:`bleu`. A bad value raises here, naming the argument and the value.

    Examples
    --------
    >>> options = BLEUOptions(smooth="floor", tokenize="none")
    >>> options.smooth_value, options.max_order
    (0.1, 4)
    >>> round(bleu(["a b c d e"], ["a b c d f"], **dataclasses.asdict(options)).score, 4)
    66.874
    >>> BLEUOptions(smooth="exp", smooth_value=1)
    Traceback (most recent call last):
    ...
    ValueError: smooth='exp' takes no smooth_value (got 1)
    """

    max_order: int | None = None
    smooth: str = "exp"
    smooth_value: float | None = None
    effective_order: bool | None = None
    tokenize: str | None = None
    lowercase: bool | None = None
    weights: tuple[float, ...] | None = None

    def __post_init__(self):
        smooth, smooth_value, effective_order = _check_smoothing(
            self.smooth, self.smooth_value, self.effective_order)
        weights, max_order = _check_weights(self.weights, self.max_order, smooth)
        tokenize, lowercase = check_text_options(self.tokenize, self.lowercase)
        # Frozen: the checked values go in through object.__setattr__.
        for name, value in (("max_order", max_order), ("smooth_value", smooth_value),
                            ("effective_order", effective_order), ("tokenize", tokenize),
                            ("lowercase", lowercase), ("weights", weights)):
            object.__setattr__(self, name, value)

    @property
    def scoring(self) -> BLEUScoring:
        """The options that score the statistics: all but ``tokenize`` and ``lowercase``."""
        return BLEUScoring(self.max_order, self.smooth, self.smooth_value, self.effective_order,
                           self.weights)


@dataclass(frozen=True, eq=False)
class BLEUStatistics(SufficientStatistics):
    """Per-sentence sufficient statistics of BLEU (integer arrays, one row per sentence), and
    the settings that score them.

    Attributes
    ----------
    hyp_len : ndarray of int, shape (n,)
        Hypothesis length in tokens.
    ref_len : ndarray of int, shape (n,)
        Length of the reference closest in length (ties: the shorter one).
    counts : ndarray of int, shape (n, orders)
        Clipped matches: for each n-gram, ``min(count in hypothesis, max count in any
        one reference)``, summed over the n-grams of each order.
    totals : ndarray of int, shape (n, orders)
        Hypothesis n-grams of each order: ``max(0, hyp_len - n + 1)``.
    n_refs : int or None
        References per sentence (None when it varies).
    tokenize : str
        Tokenizer used.
    lowercase : bool
        Whether text was lower-cased.
    scoring : BLEUScoring
        Order and smoothing of the scores (:meth:`with_scoring` changes them).

    Examples
    --------
    >>> stats = bleu_statistics(["a b c d", "a b x y"], ["a b c d", "a b c d"],
    ...                         tokenize="none")
    >>> stats.matrix.tolist()[1]  # hyp_len, ref_len, counts, totals, max(1, totals)
    [4, 4, 2, 1, 0, 0, 4, 3, 2, 1, 4, 3, 2, 1]
    >>> round(stats.corpus_score(), 2), stats.item_scores().round(2).tolist()
    (59.46, [100.0, 31.95])
    """

    hyp_len: np.ndarray
    ref_len: np.ndarray
    counts: np.ndarray
    totals: np.ndarray
    n_refs: int | None
    tokenize: str
    lowercase: bool
    scoring: BLEUScoring = BLEUScoring()

    @property
    def max_order(self) -> int:
        """The orders counted (more than scored for NLTK's methods 5 and 7)."""
        return int(self.counts.shape[1])

    def __len__(self) -> int:
        return int(self.hyp_len.shape[0])

    @property
    def matrix(self) -> np.ndarray:
        """One row per sentence: hyp_len, ref_len, counts, totals, ``max(1, totals)``."""
        return np.column_stack(
            [self.hyp_len, self.ref_len, self.counts, self.totals, np.maximum(self.totals, 1)])

    def take(self, indices) -> BLEUStatistics:
        """The statistics of the sentences at ``indices`` (in that order; repeats allowed)."""
        idx = np.asarray(indices, dtype=np.int64)
        return dataclasses.replace(self, hyp_len=self.hyp_len[idx], ref_len=self.ref_len[idx],
                                   counts=self.counts[idx], totals=self.totals[idx])

    def with_scoring(self, *, max_order=None, smooth=None, smooth_value=None,
                     effective_order=None, weights=None) -> BLEUStatistics:
        """The same counts scored with other settings (None keeps a setting; a new ``smooth``
        starts from its own default ``smooth_value``).

        Examples
        --------
        >>> stats = bleu_statistics(["a b c d e"], ["a b c d f"], tokenize="none")
        >>> round(stats.with_scoring(smooth="none").corpus_score(), 4)
        66.874
        """
        old = self.scoring
        smooth = old.smooth if smooth is None else smooth
        if smooth_value is None and smooth == old.smooth:
            smooth_value = old.smooth_value
        if weights is None and max_order is None:
            weights = old.weights
        if max_order is None and weights is None:
            max_order = old.max_order
        if effective_order is None:
            effective_order = old.effective_order
        scoring = BLEUOptions(max_order=max_order, smooth=smooth, smooth_value=smooth_value,
                              effective_order=effective_order, weights=weights).scoring
        needed = _orders_needed(scoring.max_order, scoring.smooth)
        if needed > self.max_order:
            raise ValueError(
                f"max_order={scoring.max_order} with smooth={scoring.smooth!r} needs statistics "
                f"up to order {needed}, but these stop at {self.max_order}: count them with "
                f"bleu_statistics(..., max_order={scoring.max_order}, smooth={scoring.smooth!r})")
        return dataclasses.replace(self, scoring=scoring)

    def scores(self, sums, *, float32: bool = False) -> np.ndarray:
        """Corpus BLEU of every row of summed statistics (vectorised; ``float32``: sacrebleu's
        bootstrap arithmetic). NLTK's methods 5-7 need the last sentence, which a sum does not
        have: refused."""
        c = self.scoring
        return _scores_from_sums(np.asarray(sums), c.max_order, c.smooth, c.smooth_value,
                                 c.effective(False), float32=float32, weights=c.weights)[0]

    def corpus_score(self) -> float:
        # Through bleu_from_statistics, not scores(): NLTK's methods 5-7 need the last sentence.
        return bleu_from_statistics(self).score

    def item_scores(self) -> np.ndarray:
        """Sentence BLEU of every sentence, as :func:`sentence_bleu` (effective order on
        unless the statistics say otherwise)."""
        c = self.scoring
        # Each sentence is its own corpus, so its own "last sentence" for NLTK's methods 5-7.
        return _scores_from_sums(self.matrix, c.max_order, c.smooth, c.smooth_value,
                                 c.effective(True), weights=c.weights,
                                 last=(self.hyp_len, self.counts, self.totals))[0]

    @property
    def signature(self) -> str:
        return _signature(self, sentence=False)


def _check_smoothing(smooth, smooth_value, effective_order):
    """Validate the smoothing settings; return (smooth, value, effective_order); an
    ``effective_order`` of None stays None (the use's default, see :class:`BLEUScoring`)."""
    if effective_order is not None:
        effective_order = check_bool(effective_order, "effective_order")
    if smooth not in SMOOTHING:  # the CLI's tests read this wording
        raise ValueError(f"unknown smooth={smooth!r}: choose one of {SMOOTHING}")
    defaults = SACREBLEU_SMOOTHING if smooth in SACREBLEU_SMOOTHING else NLTK_SMOOTHING
    if smooth_value is None:
        smooth_value = defaults[smooth]
    elif defaults[smooth] is None:
        raise ValueError(f"smooth={smooth!r} takes no smooth_value (got {smooth_value!r})")
    else:
        check_number(smooth_value, "smooth_value", minimum=0.0)  # validated, type kept
    if smooth in NLTK_SMOOTHING:
        if effective_order:
            raise ValueError(
                "effective_order is sacrebleu's option; it has no meaning for NLTK's "
                f"smoothing {smooth!r}"
            )
        effective_order = None
    return smooth, smooth_value, effective_order


def _signature(stats: BLEUStatistics, *, sentence: bool) -> str:
    c = stats.scoring
    smooth_text = c.smooth if c.smooth_value is None else f"{c.smooth}[{c.smooth_value:.2f}]"
    return make_signature(
        "bleu",
        nrefs=stats.n_refs if stats.n_refs is not None else "var",
        tok=stats.tokenize,
        lowercase=stats.lowercase,
        smooth=smooth_text,
        eff=c.effective(sentence),
        order=c.max_order,
        weights=_weights_text(c.weights),
    )


def _orders_needed(max_order: int, smooth: str) -> int:
    # NLTK's method5 (and method7) peeks at 5-gram statistics whatever max_order is.
    if smooth in ("nltk5", "nltk7"):
        return max(max_order, NLTK_METHOD5_ORDER)
    return max_order


def bleu_statistics(
        hypotheses, references, *, max_order: int | None = BLEUOptions.max_order,
        smooth: str = BLEUOptions.smooth, smooth_value: float | None = BLEUOptions.smooth_value,
        effective_order: bool | None = BLEUOptions.effective_order,
        tokenize: str | None = BLEUOptions.tokenize,
        lowercase: bool | None = BLEUOptions.lowercase,
        weights: tuple[float, ...] | None = BLEUOptions.weights) -> BLEUStatistics:
    """Count the per-sentence sufficient statistics of BLEU, with the settings that score them.

    Parameters
    ----------
    hypotheses : list of str
        System outputs, one per sentence.
    references : list or NGramReferences
        ``references[i]`` is the reference string, or list of reference strings, for
        ``hypotheses[i]``; or an :class:`NGramReferences` prepared once for many systems.
    max_order, smooth, smooth_value, effective_order, weights :
        As in :func:`bleu`; the orders counted are those the smoothing needs (NLTK's
        methods 5 and 7 look at 5-grams). ``effective_order`` None: off for the corpus
        score, on for sentence scores, as in sacrebleu.
    tokenize : {"13a", "intl", "none", "char", "zh"}, optional
        Tokenizer; default ``"13a"`` (or the NGramReferences' tokenizer); see :func:`bleu`.
    lowercase : bool, optional
        Lower-case before tokenising; default False (or the NGramReferences' setting).

    Returns
    -------
    BLEUStatistics
        A :class:`~markeval.resampling.SufficientStatistics`: corpus score, sentence
        scores, :func:`markeval.resampling.bootstrap` and the paired tests all read it.

    Examples
    --------
    >>> stats = bleu_statistics(["the cat the cat on the mat"],
    ...                         [["the cat is on the mat", "there is a cat on the mat"]])
    >>> stats.counts.tolist(), stats.totals.tolist(), stats.ref_len.tolist()
    ([[5, 4, 2, 1]], [[7, 6, 5, 4]], [7])
    """
    options = BLEUOptions(max_order=max_order, smooth=smooth, smooth_value=smooth_value,
                          effective_order=effective_order, tokenize=tokenize,
                          lowercase=lowercase, weights=weights)
    return _statistics(hypotheses, references, options)


def _statistics(hypotheses, references, options: BLEUOptions) -> BLEUStatistics:
    """:func:`bleu_statistics` with its options checked."""
    scoring = options.scoring
    counted = _orders_needed(scoring.max_order, scoring.smooth)
    hypotheses, prepared = resolve_references(hypotheses, references, options)
    tokens = prepared.tokenize_hypotheses(hypotheses)
    n = len(tokens)
    hyp_len = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
    table_keys, table_max, g = prepared.bleu_table(counted)
    keys, hyp_counts = count_keys(prepared.hypothesis_keys(tokens, 1, counted, g))
    clipped = np.minimum(hyp_counts, lookup(table_keys, table_max, keys))
    keep = clipped > 0
    keys, clipped = keys[keep], clipped[keep]
    offsets = prepared.offsets(counted)
    order = np.searchsorted(offsets, keys % g, side="right") - 1
    cells = (keys // g) * counted + order
    counts = np.bincount(cells, weights=clipped, minlength=n * counted)
    counts = np.rint(counts).astype(np.int64).reshape(n, counted)
    totals = np.maximum(hyp_len[:, None] - np.arange(counted)[None, :], 0)
    return BLEUStatistics(
        hyp_len=hyp_len,
        ref_len=closest_lengths(hyp_len, prepared),
        counts=counts,
        totals=totals,
        n_refs=prepared.n_refs,
        tokenize=prepared.tokenize,
        lowercase=prepared.lowercase,
        scoring=scoring,
    )


def _result(stats: BLEUStatistics, sums, last, *, sentence: bool, warn: bool = False
            ) -> BLEUScore:
    c = stats.scoring
    max_order = c.max_order
    scores, precisions, bp = _scores_from_sums(
        np.asarray(sums)[None, :], max_order, c.smooth, c.smooth_value, c.effective(sentence),
        weights=c.weights, last=last)
    score, precisions, bp = scores[0], precisions[0], bp[0]
    if warn and c.smooth == "nltk0" and int(sums[2]) > 0:
        for n, count in enumerate(sums[2 : 2 + max_order], start=1):
            if int(count) == 0:  # NLTK's message, word for word
                warnings.warn(
                    f"\nThe hypothesis contains 0 counts of {n}-gram overlaps.\n"
                    "Therefore the BLEU score evaluates to 0, independently of\n"
                    "how many N-gram overlaps of lower order it contains.\n"
                    "Consider using lower n-gram order or use SmoothingFunction()",
                    UserWarning, stacklevel=3)
    hyp_len, ref_len = int(sums[0]), int(sums[1])
    k = (len(sums) - 2) // 3
    return BLEUScore(
        score=float(score),
        precisions=tuple(float(p) for p in precisions),
        counts=tuple(int(x) for x in sums[2 : 2 + max_order]),
        totals=tuple(int(x) for x in sums[2 + k : 2 + k + max_order]),
        bp=float(bp),
        ratio=hyp_len / ref_len if ref_len else 0.0,
        hyp_len=hyp_len,
        ref_len=ref_len,
        signature=_signature(stats, sentence=sentence),
    )


def _weights_text(weights) -> str | None:
    return None if weights is None else ",".join(f"{w:g}" for w in weights)


def _check_weights(weights, max_order, smooth):
    """Validate NLTK's ``weights``; return (weights as a tuple of floats or None, max_order)."""
    if weights is None:
        return None, (4 if max_order is None else check_int(max_order, "max_order", minimum=1))
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__") or not len(weights):
        raise ValueError(f"weights must be a non-empty tuple of numbers (one per n-gram "
                         f"order, as NLTK's), got {weights!r}")
    try:
        # a tuple of tuples (NLTK scores several weightings at once) fails here
        weights = tuple(check_number(w, "weights") for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be a non-empty tuple of finite numbers (one per n-gram "
                         f"order; several weightings at once are not supported), got "
                         f"{weights!r}") from None
    if smooth not in NLTK_SMOOTHING:
        raise ValueError(f"weights are NLTK's option; smooth={smooth!r} is sacrebleu's, which "
                         "weighs the orders uniformly: choose smooth='nltk0' ... 'nltk7'")
    if max_order is not None and check_int(max_order, "max_order", minimum=1) != len(weights):
        raise ValueError(f"max_order={max_order} differs from len(weights)={len(weights)}: "
                         "the weights set the order (leave max_order out)")
    return weights, len(weights)


def _last(stats: BLEUStatistics):
    """The last sentence's (hyp_len, counts, totals), as one row for :func:`_scores_from_sums`."""
    return stats.hyp_len[-1:], stats.counts[-1:], stats.totals[-1:]


def _check_stats(stats) -> BLEUStatistics:
    if not isinstance(stats, BLEUStatistics):
        raise TypeError(f"stats must be BLEUStatistics, got {type(stats).__name__}")
    if len(stats) == 0:
        raise ValueError("stats has no sentences")
    return stats


def bleu_from_statistics(
    stats: BLEUStatistics,
    *,
    smooth: str | None = None,
    smooth_value: float | None = None,
    effective_order: bool | None = None,
    max_order: int | None = None,
    weights: tuple[float, ...] | None = None,
) -> BLEUScore:
    """Corpus BLEU from per-sentence statistics (summed first, then scored).

    Parameters
    ----------
    stats : BLEUStatistics
        From :func:`bleu_statistics`.
    smooth, smooth_value, effective_order, max_order, weights : optional
        Score with these instead of the settings ``stats`` carries
        (:meth:`BLEUStatistics.with_scoring`).

    Examples
    --------
    >>> stats = bleu_statistics(["a b c d e"], ["a b c d f"], tokenize="none")
    >>> round(bleu_from_statistics(stats, smooth="none").score, 4)
    66.874
    """
    stats = _check_stats(stats).with_scoring(
        max_order=max_order, smooth=smooth, smooth_value=smooth_value,
        effective_order=effective_order, weights=weights)
    return _result(stats, stats.matrix.sum(axis=0), _last(stats), sentence=False)


def bleu(
        hypotheses, references, *, max_order: int | None = BLEUOptions.max_order,
        smooth: str = BLEUOptions.smooth, smooth_value: float | None = BLEUOptions.smooth_value,
        effective_order: bool | None = BLEUOptions.effective_order,
        tokenize: str | None = BLEUOptions.tokenize,
        lowercase: bool | None = BLEUOptions.lowercase,
        weights: tuple[float, ...] | None = BLEUOptions.weights, warn: bool = False) -> BLEUScore:
    """Corpus BLEU, identical to sacrebleu's ``corpus_bleu`` (and to NLTK's with ``nltk*``).

    .. math::

        \\mathrm{BLEU} = 100\\cdot\\mathrm{BP}\\cdot
        \\exp\\Big(\\frac{1}{N}\\sum_{n=1}^{N}\\log p_n\\Big),\\qquad
        \\mathrm{BP} = \\min\\big(1, e^{1 - r/c}\\big)

    with ``p_n`` the clipped n-gram precision over the whole corpus (matches and totals
    summed over sentences before dividing), ``c`` the hypothesis length and ``r`` the sum of
    the closest reference lengths.

    Parameters
    ----------
    hypotheses : list of str
        System outputs.
    references : list or NGramReferences
        ``references[i]``: the reference string or list of reference strings for
        ``hypotheses[i]``. sacrebleu's transposed layout (one list per reference stream)
        raises an error, except when there are as many streams as hypotheses (say 2 and 2):
        then it is a valid layout too and cannot be told apart, so transpose
        sacrebleu-style input yourself with ``list(zip(*streams))``.
    max_order : int, optional
        Highest n-gram order ``N``: 4, or ``len(weights)``.
    smooth : str
        ``"exp"`` (sacrebleu's default; NIST), ``"floor"``, ``"add-k"``, ``"none"``, or NLTK's
        ``"nltk0"`` … ``"nltk7"`` (``SmoothingFunction().methodK``, quirks included; NLTK
        also counts at least one n-gram per sentence and order in the denominators).
    smooth_value : float, optional
        Parameter of ``floor`` (0.1), ``add-k`` (1), ``nltk1`` (epsilon 0.1), ``nltk4``/
        ``nltk7`` (k 5) and ``nltk6`` (alpha 5).
    effective_order : bool, optional
        sacrebleu methods only: ignore orders that no hypothesis is long enough to have.
        Default (None): False for corpus BLEU, True for sentence BLEU, as in sacrebleu.
    tokenize : {"13a", "intl", "none", "char", "zh"}, optional
        Default ``"13a"``, sacrebleu's default. Use ``"none"`` for pre-tokenised text,
        ``"zh"`` for Chinese (sacrebleu's choice for it: every CJK character a token) and
        ``"char"`` for character-level BLEU; each is sacrebleu's tokenizer, token for token
        (see :func:`markeval.text.tokenize_many`). Not offered: sacrebleu's ``ja-mecab``
        and ``ko-mecab`` (they run MeCab with a dictionary that has to be downloaded and
        installed: ipadic / mecab-ko-dic), ``spm``, ``flores101``, ``flores200`` and
        ``spBLEU-1K`` (they apply a SentencePiece model that sacrebleu downloads on first
        use); markeval computes nothing that needs a downloaded model for BLEU.
    lowercase : bool, optional
        Case-insensitive BLEU.
    weights : tuple of float, optional
        NLTK smoothing only: the weight of each order's log precision, as NLTK's
        ``weights`` (``(0.5, 0.5)`` is BLEU-2, ``(0.333, 0.333, 0.334)`` a non-uniform
        BLEU-3); its length sets ``max_order``. Default: uniform, ``1 / max_order``. NLTK
        also takes a list of weight tuples and returns one score per tuple: call once per
        tuple here. sacrebleu's smoothing methods weigh the orders uniformly (an error).
    warn : bool, default False
        With ``smooth="nltk0"``: warn as NLTK does (its message, word for word) for each
        order with no matching n-gram, whose zero precision NLTK replaces by the smallest
        float. Off by default: markeval does not warn, and ``counts`` shows the zeros.

    Returns
    -------
    BLEUScore

    Examples
    --------
    >>> hyps = ["the cat sat on the mat", "a dog barked"]
    >>> refs = [["the cat sat on the mat"], ["the dog barked loudly"]]
    >>> result = bleu(hyps, refs)
    >>> round(result.score, 2), result.counts, result.totals
    (79.07, (8, 6, 4, 3), (9, 7, 5, 3))
    >>> print(result)
    BLEU = 79.07 88.9/85.7/80.0/100.0 (BP = 0.895 ratio = 0.900 hyp_len = 9 ref_len = 10)
    """
    warn = check_bool(warn, "warn")
    options = BLEUOptions(max_order=max_order, smooth=smooth, smooth_value=smooth_value,
                          effective_order=effective_order, tokenize=tokenize,
                          lowercase=lowercase, weights=weights)
    stats = _statistics(hypotheses, references, options)
    return _result(stats, stats.matrix.sum(axis=0), _last(stats), sentence=False, warn=warn)


def sentence_bleu(
        hypothesis: str, references, *, max_order: int | None = BLEUOptions.max_order,
        smooth: str = BLEUOptions.smooth, smooth_value: float | None = BLEUOptions.smooth_value,
        effective_order: bool | None = BLEUOptions.effective_order,
        tokenize: str | None = BLEUOptions.tokenize,
        lowercase: bool | None = BLEUOptions.lowercase,
        weights: tuple[float, ...] | None = BLEUOptions.weights, warn: bool = False) -> BLEUScore:
    """BLEU of one sentence, identical to sacrebleu's ``sentence_bleu`` (or NLTK's).

    Defaults follow sacrebleu: ``exp`` smoothing and effective order on.

    Parameters
    ----------
    hypothesis : str
        One system output.
    references : str or list of str
        Its reference(s).
    max_order, smooth, smooth_value, effective_order, tokenize, lowercase, weights, warn :
        As in :func:`bleu`.

    Examples
    --------
    The MT output from Papineni et al. (2002) that repeats "the": unigram precision 2/7.

    >>> refs = ["the cat is on the mat", "there is a cat on the mat"]
    >>> result = sentence_bleu("the the the the the the the", refs, smooth="none")
    >>> result.counts[0], result.totals[0], result.score
    (2, 7, 0.0)
    >>> round(sentence_bleu("the cat is on the mat", refs).score, 1)
    100.0
    """
    check_string(hypothesis, "hypothesis")
    if isinstance(references, NGramReferences):
        raise TypeError("sentence_bleu takes the references of one sentence: a str or list")
    warn = check_bool(warn, "warn")
    options = BLEUOptions(max_order=max_order, smooth=smooth, smooth_value=smooth_value,
                          effective_order=effective_order, tokenize=tokenize,
                          lowercase=lowercase, weights=weights)
    stats = _statistics([hypothesis], [references], options)
    return _result(stats, stats.matrix[0], _last(stats), sentence=True, warn=warn)


def sentence_bleu_scores(
    stats: BLEUStatistics,
    *,
    smooth: str | None = None,
    smooth_value: float | None = None,
    effective_order: bool | None = None,
    max_order: int | None = None,
) -> SentenceScores:
    """Sentence BLEU of every row of ``stats`` (same numbers as calling :func:`sentence_bleu`).

    Parameters
    ----------
    stats : BLEUStatistics
    smooth, smooth_value, effective_order, max_order : optional
        Score with these instead of the settings ``stats`` carries (effective order is on
        unless they say otherwise, as in sacrebleu's sentence BLEU).

    Returns
    -------
    SentenceScores
        Array-like (``np.asarray``, ``len``, indexing); ``item_scores`` holds the sentence
        scores, ``score`` their mean.

    Examples
    --------
    >>> stats = bleu_statistics(["a b c d", "a b x y"], ["a b c d", "a b c d"], tokenize="none")
    >>> scores = sentence_bleu_scores(stats)
    >>> [round(x, 2) for x in scores], round(scores.score, 2)
    ([100.0, 31.95], 65.97)
    """
    if not isinstance(stats, BLEUStatistics):
        raise TypeError(f"stats must be BLEUStatistics, got {type(stats).__name__}")
    stats = stats.with_scoring(max_order=max_order, smooth=smooth, smooth_value=smooth_value,
                               effective_order=effective_order)
    return SentenceScores(tuple(float(x) for x in stats.item_scores()),
                          _signature(stats, sentence=True))


def _scores_from_sums(sums: np.ndarray, max_order: int, smooth: str, value, effective_order,
                      *, float32: bool = False, weights=None, last=None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BLEU of every row of summed statistics: the one function that scores BLEU.

    The corpus score, the sentence scores and the resamples of
    :func:`markeval.resampling.bootstrap` and :mod:`markeval.significance` all come from here.

    Parameters
    ----------
    sums : ndarray, shape (m, 2 + 3 * k)
        Rows in the :attr:`BLEUStatistics.matrix` layout (hyp_len, ref_len, counts, totals,
        ``max(1, totals)``), each a sum of sentence rows; ``k >= max_order`` orders.
    max_order : int
        Orders scored (the first ``max_order`` of the ``k`` stored).
    smooth, value, effective_order :
        Smoothing method, its parameter and sacrebleu's effective order (ignored by NLTK's).
    float32 : bool
        sacrebleu's paired bootstrap, which casts the statistics to float32 before summing
        them: counts and totals are then float32 numbers and every precision is computed,
        and rounded, in float32 (lengths stay integers). Ignored by NLTK's smoothing.
    weights : tuple of float, optional
        NLTK's weights of the log precisions.
    last : tuple of arrays, optional
        ``(hyp_len (m,), counts (m, k), totals (m, k))`` of the last sentence of each row's
        corpus, which NLTK's methods 5-7 read; None refuses those methods.

    Returns
    -------
    scores : ndarray of float64, shape (m,)
        BLEU, 0-100.
    precisions : ndarray of float64, shape (m, max_order)
        Per-order (smoothed) precisions in percent.
    bp : ndarray of float64, shape (m,)
        Brevity penalties.

    Notes
    -----
    sacrebleu's smoothing is vectorised and repeats ``BLEU.compute_bleu`` to the last bit: the
    precisions with numpy's IEEE arithmetic (the same operations in the same order), every
    ``log``/``exp`` with :mod:`math`, and each row's logs added by the builtin ``sum`` as
    sacrebleu adds them. NLTK's smoothing works on exact fractions, one row at a time
    (:func:`~markeval.lexical._bleu_smoothing.nltk_bleu`).
    """
    sums = np.asarray(sums)
    if smooth in NLTK_SMOOTHING:
        return _nltk_scores(sums, max_order, smooth, value, weights, last)
    m = sums.shape[0]
    k = (sums.shape[1] - 2) // 3
    dtype = np.float32 if float32 else np.float64
    sys_len = np.rint(sums[:, 0]).astype(np.int64)
    ref_len = np.rint(sums[:, 1]).astype(np.int64)
    counts = sums[:, 2 : 2 + max_order].astype(dtype)
    totals = sums[:, 2 + k : 2 + k + max_order].astype(dtype)
    bp = np.ones(m)
    short = (sys_len < ref_len) & (sys_len > 0)
    bp[(sys_len < ref_len) & (sys_len == 0)] = 0.0
    if short.any():
        bp[short] = [math.exp(x) for x in (1 - ref_len[short] / sys_len[short]).tolist()]
    hundred = dtype(100.0)
    precisions = np.zeros((m, max_order), dtype=dtype)
    alive = np.ones(m, dtype=bool)  # sacrebleu's loop has not met an order without n-grams
    eff = np.full(m, max_order, dtype=np.int64)  # sacrebleu's start, kept if order 1 has none
    smooth_mteval = np.ones(m)
    for j in range(max_order):
        c, t = counts[:, j], totals[:, j]
        if smooth == "add-k" and j > 0:
            c, t = c + dtype(value), t + dtype(value)
        # sacrebleu breaks out of its loop at the first order without n-grams: the later
        # orders keep precision 0 even when a (summed, inconsistent) row has n-grams there.
        alive &= t != 0
        if effective_order:
            eff[alive] = j + 1
        zero = alive & (c == 0)
        safe_t = np.where(alive, t, dtype(1))
        if smooth == "exp":
            smooth_mteval[zero] *= 2
            exp_p = hundred / (smooth_mteval.astype(dtype) * safe_t)
            precisions[zero, j] = exp_p[zero]
        elif smooth == "floor":
            floor_p = dtype(100.0 * value) / safe_t
            precisions[zero, j] = floor_p[zero]
        hit = alive & (c != 0)
        precisions[hit, j] = (hundred * c / safe_t)[hit]
    # sacrebleu returns before smoothing when no order has a match: score 0 and all precisions
    # 0 (exp and floor smoothing would have made them positive above).
    no_match = ~counts.any(axis=1)
    precisions[no_match] = 0
    precisions = precisions.astype(np.float64)
    # The builtin sum, over the same items (sacrebleu_log's int floor included), adds each row
    # exactly as sacrebleu's sum does on this interpreter (CPython 3.12 compensates float sums).
    means = [sum([sacrebleu_log(p) for p in row[:e]]) / e
             for row, e in zip(precisions.tolist(), eff.tolist())]
    scores = bp * np.array([math.exp(x) for x in means], dtype=np.float64)
    scores[no_match] = 0.0
    return scores, precisions, bp


def _nltk_scores(sums: np.ndarray, max_order: int, smooth: str, value, weights, last
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, precisions, bp) of every row with NLTK's smoothing, row by row; see
    :func:`_scores_from_sums`."""
    looks_at_last = smooth in ("nltk5", "nltk6", "nltk7")
    if looks_at_last and last is None:
        raise ValueError(f"smooth={smooth!r} depends on the order of sentences (NLTK "
                         "smooths with the last sentence), which a resample does not have")
    rows = np.rint(sums).astype(np.int64).tolist()
    m, k = len(rows), (sums.shape[1] - 2) // 3
    scores, precisions, bp = np.zeros(m), np.zeros((m, max_order)), np.zeros(m)
    if looks_at_last:  # Python ints, as nltk_bleu takes them
        j = NLTK_METHOD5_ORDER - 1
        last_lens = np.asarray(last[0]).tolist()
        if smooth != "nltk6":
            fives = zip(np.asarray(last[1])[:, j].tolist(), np.asarray(last[2])[:, j].tolist())
            last_5grams = [(c, max(1, t)) for c, t in fives]
    for i, row in enumerate(rows):
        last_len, last_5gram = 0, None
        if looks_at_last:
            last_len = last_lens[i]
            if smooth != "nltk6":
                last_5gram = last_5grams[i]
        scores[i], precisions[i], bp[i] = nltk_bleu(
            row[2 : 2 + max_order], row[2 + 2 * k : 2 + 2 * k + max_order], row[0], row[1],
            smooth, value, last_len, last_5gram, weights)
    return scores, precisions, bp
