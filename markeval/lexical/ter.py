"""TER, translation edit rate (Snover et al., 2006), exactly as sacrebleu 2.6.0 computes it.

TER counts the edits that turn a hypothesis into a reference (insertions, deletions and
substitutions of words, and *shifts* of contiguous blocks of words, each costing one),
divided by the reference length:

.. math::

    \\mathrm{TER} = 100 \\cdot \\frac{\\#\\text{edits}}{\\text{average reference length}}

Finding the fewest edits once shifts are allowed is NP-hard, so tercom (and sacrebleu, and
this module) searches greedily: repeatedly apply the single shift that lowers the word edit
distance most, until no shift helps (see :mod:`markeval.lexical._ter_shifts` for the exact
rules: beam, block size 10, distance 50, 1000 candidates). With several references, a
sentence takes the edits of its best reference and the *average* length of its references.

sacrebleu's quirk is kept: it normalises each reference twice (the second time on the
words of the first) and each hypothesis once. Only with ``normalized=True`` can the second
pass split further: an ``'s`` that the first left attached because a comma, a period, a
whitespace other than a plain space (tab, U+00A0, ...) or, with ``asian_support``, a CJK
character followed it; a period or comma between another one and a digit (``.,5``). So
``It's,`` is ``it's ,`` as a hypothesis but ``it 's ,`` as a reference, and a hypothesis
identical to its reference is not free:

>>> sentence_ter("It's,", ["It's,"], normalized=True).score
66.66666666666666

Statistics first, score second (as :mod:`markeval.lexical.bleu`): :func:`ter_statistics`
gives each sentence's ``(num_edits, ref_length)``; corpus TER is the ratio of their sums,
so corpus scores, sentence scores, :func:`markeval.resampling.bootstrap` and the paired tests
share one pass of the search (:class:`TERStatistics` is a
:class:`~markeval.resampling.SufficientStatistics`).

A worked shift, by hand. Reference ``a b c d e``, hypothesis ``c d e a b``. Word edits
alone need 4: insert ``a b`` in front and delete the ``a b`` at the end. The traceback
of that alignment marks ``a b`` wrong in both sentences, so the block ``a b`` (hypothesis
words 3-4 = reference words 0-1) is a shift candidate (``c d e`` is not: its words are
already matched). Moving it to the front (just after the hypothesis word aligned to the
reference word before ``a``; there is none, so position 0) gives ``a b c d e``, edit
distance 0: a gain of 4 for one shift. Nothing is left to gain, so
TER = (1 shift + 0 word edits) / 5 reference words:

>>> result = sentence_ter("c d e a b", ["a b c d e"])
>>> result.num_edits, result.score
(1, 20.0)

When no block can be moved to a place where it matches, only word edits remain:

>>> result = sentence_ter("c d e x y", ["a b c d e"])
>>> result.num_edits, result.score
(4, 80.0)
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_references, check_string, check_strings
from markeval._signature import make_signature
from markeval.lexical._ngram import SentenceScores
from markeval.lexical._ter_shifts import count_edits
from markeval.resampling import SufficientStatistics

__all__ = [
    "TEROptions",
    "TERScore",
    "TERSentenceScores",
    "TERStatistics",
    "sentence_ter",
    "sentence_ter_scores",
    "ter",
    "ter_from_statistics",
    "ter_scores",
    "ter_statistics",
    "tercom_tokenize",
]

# --- options ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TEROptions:
    """The options of TER (tercom's normalisation), checked once: every TER function takes
    them by these names.

    Parameters
    ----------
    normalized, no_punct, asian_support, case_sensitive : bool, default False
        As in :func:`ter`. A value that is not a bool raises here, naming the argument.

    Examples
    --------
    >>> options = TEROptions(case_sensitive=True)
    >>> options.signature(n_refs=1)  # doctest: +ELLIPSIS
    'ter|nrefs:1|case:mixed|tok:tercom|norm:no|punct:yes|asian:no|version:...'
    >>> ter(["The cat"], ["the cat"], **dataclasses.asdict(options)).score
    50.0
    >>> TEROptions(no_punct="yes")
    Traceback (most recent call last):
    ...
    TypeError: no_punct must be True or False, got str: 'yes'
    """

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False

    def __post_init__(self):
        for field in dataclasses.fields(self):
            # Frozen: the checked value (numpy's bool as bool) goes in through object.__setattr__.
            object.__setattr__(self, field.name, check_bool(getattr(self, field.name),
                                                            field.name))

    def signature(self, n_refs: int | None) -> str:
        """sacrebleu's signature of TER with these options and ``n_refs`` references per
        sentence (None: it varies)."""
        return make_signature(
            "ter",
            nrefs=n_refs if n_refs is not None else "var",
            case="mixed" if self.case_sensitive else "lc",
            tok="tercom",
            norm=self.normalized,
            punct=not self.no_punct,
            asian=self.asian_support,
        )


# --- tercom's normaliser (sacrebleu's TercomTokenizer) ----------------------------------------

_ASIAN_PUNCT = r"([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
_FULL_WIDTH_PUNCT = r"([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"

# (pattern, replacement) applied in order
_GENERAL = [
    (r"\n-", ""),  # end-of-line hyphenation
    (r"\n", " "),  # join lines
    (r"&quot;", '"'),
    (r"&amp;", "&"),
    (r"&lt;", "<"),
    (r"&gt;", ">"),
]
_WESTERN = [
    (r"([{-~[-` -&(-+:-@/])", r" \1 "),  # punctuation
    (r"'s ", r" 's "),  # possessives
    (r"'s$", r" 's"),
    (r"([^0-9])([\.,])", r"\1 \2 "),  # period and comma unless after a digit
    (r"([\.,])([^0-9])", r" \1 \2"),  # ... or unless before a digit
    (r"([0-9])(-)", r"\1 \2 "),  # dash after a digit
]
_ASIAN = [
    (r"([\u4e00-\u9fff\u3400-\u4dbf])", r" \1 "),  # CJK ideographs, one per token
    (r"([\u31c0-\u31ef\u2e80-\u2eff])", r" \1 "),  # strokes, radicals
    (r"([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])", r" \1 "),  # compatibility blocks
    (r"([\u3200-\u3f22])", r" \1 "),  # enclosed letters and months (tercom's range)
    # kana runs (tercom's patterns, which only fire on a whole-line run)
    (r"(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])", r"\1 \2 "),
    (r"(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])", r"\1 \2 "),
    (r"(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])", r"\1 \2 "),
    (_ASIAN_PUNCT, r" \1 "),
    (_FULL_WIDTH_PUNCT, r" \1 "),
]
_PUNCT = [(r"[\.,\?:;!\"\(\)]", "")]
_ASIAN_REMOVE = [(_ASIAN_PUNCT, ""), (_FULL_WIDTH_PUNCT, "")]


def _compile(rules):
    return [(re.compile(pattern), repl) for pattern, repl in rules]


_RULES = {name: _compile(rules) for name, rules in (
    ("general", _GENERAL), ("western", _WESTERN), ("asian", _ASIAN), ("punct", _PUNCT),
    ("asian_punct", _ASIAN_REMOVE))}


def _apply(rules, sent: str) -> str:
    for pattern, repl in _RULES[rules]:
        sent = pattern.sub(repl, sent)
    return sent


def _normalise(sent: str, options: TEROptions) -> tuple[str, ...]:
    sent = sent.rstrip()
    if not sent:
        return ()
    if not options.case_sensitive:
        sent = sent.lower()
    if options.normalized:
        sent = f" {_apply('general', sent)} "
        sent = _apply("western", sent)
        if options.asian_support:
            sent = _apply("asian", sent)
    if options.no_punct:
        sent = _apply("punct", sent)
        if options.asian_support:
            sent = _apply("asian_punct", sent)
    return tuple(sent.split())


_CACHE: dict[tuple[bool, TEROptions], dict[str, tuple[str, ...]]] = {}
_CACHE_LIMIT = 1 << 17


def _tokenize_all(texts: list[str], options: TEROptions, *, references: bool):
    cache = _CACHE.setdefault((references, options), {})
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    out = []
    for text in texts:
        tokens = cache.get(text)
        if tokens is None:
            tokens = _normalise(text, options)
            if references:
                # sacrebleu 2.6.0 normalises references twice (Metric._cache_references,
                # then TER._extract_reference_info, on the first pass's output); with
                # normalized=True the second pass can split further ("it's ," -> "it 's ,").
                tokens = _normalise(" ".join(tokens), options)
            cache[text] = tokens
        out.append(tokens)
    return out


def tercom_tokenize(sentence: str, *, normalized: bool = TEROptions.normalized,
                    no_punct: bool = TEROptions.no_punct,
                    asian_support: bool = TEROptions.asian_support,
                    case_sensitive: bool = TEROptions.case_sensitive) -> list[str]:
    """The words TER compares: tercom's normalisation as in sacrebleu's ``TercomTokenizer``.

    By default only lower-casing and whitespace splitting. ``normalized`` splits off
    punctuation (tercom's western rules; CJK characters one by one with
    ``asian_support``), ``no_punct`` deletes ``.,?:;!"()`` (and CJK punctuation with
    ``asian_support``), ``case_sensitive`` keeps the case. TER applies it once to a
    hypothesis and twice to a reference, as sacrebleu does (see the module docstring).

    Examples
    --------
    >>> tercom_tokenize("The cat's mat, 3.5 m.")
    ['the', "cat's", 'mat,', '3.5', 'm.']
    >>> tercom_tokenize("The cat's mat, 3.5 m.", normalized=True)
    ['the', 'cat', "'s", 'mat', ',', '3.5', 'm', '.']
    >>> tercom_tokenize("The cat's mat, 3.5 m.", no_punct=True, case_sensitive=True)
    ['The', "cat's", 'mat', '35', 'm']
    """
    check_string(sentence, "sentence")
    options = TEROptions(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                         case_sensitive=case_sensitive)
    return list(_normalise(sentence, options))


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TERScore:
    """A TER score and the two numbers it is the ratio of.

    Attributes
    ----------
    score : float
        ``100 * num_edits / ref_length`` (100 when the references are empty and the
        hypotheses are not, 0 when both are empty). Lower is better; it can exceed 100.
    num_edits : int
        Edits (shifts, insertions, deletions, substitutions), summed over sentences.
    ref_length : float
        Average reference length, summed over sentences.
    signature : str
    item_scores : None
        Corpus TER is a ratio of sums; :func:`sentence_ter_scores` gives sentence scores.
    """

    score: float
    num_edits: int
    ref_length: float
    signature: str
    higher_is_better: ClassVar[bool] = False

    item_scores = None

    def __str__(self) -> str:
        return f"TER = {self.score:.2f}"


@dataclass(frozen=True)
class TERSentenceScores(SentenceScores):
    """Sentence TER of every sentence (lower is better); ``score`` is their mean."""

    higher_is_better: ClassVar[bool] = False


def ter_scores(sums) -> np.ndarray:
    """TER (0-100 scale) of summed statistics, vectorised: the bootstrap's scorer.

    Parameters
    ----------
    sums : array of shape (m, 2) or (2,)
        Rows of summed ``(num_edits, ref_length)`` (see :attr:`TERStatistics.matrix`).

    Returns
    -------
    ndarray of shape (m,) (or a 0-d array for one row)

    Examples
    --------
    >>> ter_scores(np.array([[3, 10.0], [2, 0.0], [0, 0.0]])).tolist()
    [30.0, 100.0, 0.0]
    """
    sums = np.asarray(sums, dtype=np.float64)
    edits, length = sums[..., 0], sums[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(length > 0, edits / np.where(length > 0, length, 1.0),
                         np.where(edits > 0, 1.0, 0.0))
    return 100 * ratio


def _ter_scores_float32(sums: np.ndarray) -> np.ndarray:
    """sacrebleu's ``TER._compute_score_from_stats`` on float32 sums (its bootstrap): the
    ratio and the percentage are float32 operations, and so is every later step."""
    sums = np.asarray(sums, dtype=np.float32)
    edits, length = sums[:, 0], sums[:, 1]
    ratio = np.where(length > 0, edits / np.where(length > 0, length, np.float32(1)),
                     np.where(edits > 0, np.float32(1), np.float32(0)))
    return 100 * ratio


@dataclass(frozen=True, eq=False)
class TERStatistics(SufficientStatistics):
    """Per-sentence statistics of TER.

    Attributes
    ----------
    num_edits : ndarray of int64, shape (n,)
        Edits to the closest (fewest-edits) reference.
    ref_length : ndarray of float64, shape (n,)
        Average length of the sentence's references (in words after normalisation).
    n_refs : int or None
        References per sentence (None when it varies).
    normalized, no_punct, asian_support, case_sensitive : bool
        The normalisation used.
    """

    num_edits: np.ndarray
    ref_length: np.ndarray
    n_refs: int | None
    normalized: bool = TEROptions.normalized
    no_punct: bool = TEROptions.no_punct
    asian_support: bool = TEROptions.asian_support
    case_sensitive: bool = TEROptions.case_sensitive

    higher_is_better: ClassVar[bool] = False

    def scores(self, sums, *, float32: bool = False) -> np.ndarray:
        """TER of every row of summed statistics (:func:`ter_scores`; float32 as sacrebleu's
        bootstrap with ``float32``)."""
        return _ter_scores_float32(sums) if float32 else ter_scores(sums)

    def corpus_score(self) -> float:
        return ter_from_statistics(self).score

    @property
    def matrix(self) -> np.ndarray:
        """The statistics as one ``(n, 2)`` float array: ``num_edits``, ``ref_length``."""
        return np.column_stack([self.num_edits.astype(np.float64), self.ref_length])

    def take(self, indices) -> TERStatistics:
        """The statistics of the sentences at ``indices`` (in that order; repeats allowed)."""
        idx = np.asarray(indices, dtype=np.int64)
        return dataclasses.replace(self, num_edits=self.num_edits[idx],
                                   ref_length=self.ref_length[idx])

    @property
    def options(self) -> TEROptions:
        """The normalisation the statistics were counted with."""
        return TEROptions(self.normalized, self.no_punct, self.asian_support,
                          self.case_sensitive)

    @property
    def signature(self) -> str:
        """The settings that change the numbers (sacrebleu's TER signature fields)."""
        return self.options.signature(self.n_refs)


def _check_stats(stats) -> TERStatistics:
    if not isinstance(stats, TERStatistics):
        raise TypeError(f"stats must be TERStatistics, got {type(stats).__name__}")
    if len(stats) == 0:
        raise ValueError("stats has no sentences")
    return stats


# --- statistics -------------------------------------------------------------------------------


def ter_statistics(hypotheses, references, *, normalized: bool = TEROptions.normalized,
                   no_punct: bool = TEROptions.no_punct,
                   asian_support: bool = TEROptions.asian_support,
                   case_sensitive: bool = TEROptions.case_sensitive) -> TERStatistics:
    """Per-sentence edits and reference lengths of TER.

    Parameters
    ----------
    hypotheses : list of str
        System outputs.
    references : list
        ``references[i]``: the reference string, or list of reference strings, of
        ``hypotheses[i]``.
    normalized, no_punct, asian_support, case_sensitive : bool
        tercom's normalisation (see :func:`tercom_tokenize`); defaults as sacrebleu.

    Returns
    -------
    TERStatistics

    Notes
    -----
    As sacrebleu, references are normalised twice and hypotheses once; this matters only
    with ``normalized=True`` (``'s`` before a comma, a period or a non-ASCII space, for
    instance; see the module docstring).

    Examples
    --------
    >>> stats = ter_statistics(["c d e a b", "a b"], [["a b c d e"], ["a b c", "a b"]])
    >>> stats.num_edits.tolist(), stats.ref_length.tolist()
    ([1, 0], [5.0, 2.5])
    """
    options = TEROptions(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                         case_sensitive=case_sensitive)
    return _statistics(hypotheses, references, options)


def _statistics(hypotheses, references, options: TEROptions) -> TERStatistics:
    """:func:`ter_statistics` with its options checked."""
    hypotheses = check_strings(hypotheses, "hypotheses")
    references = check_references(hypotheses, references)
    n_per = [len(refs) for refs in references]
    flat_refs = [r for refs in references for r in refs]
    hyp_tokens = _tokenize_all(hypotheses, options, references=False)
    ref_tokens = _tokenize_all(flat_refs, options, references=True)
    vocab: dict[str, int] = {}
    ids = [np.array([vocab.setdefault(w, len(vocab)) for w in toks], dtype=np.int64)
           for toks in hyp_tokens]
    rids = [np.array([vocab.setdefault(w, len(vocab)) for w in toks], dtype=np.int64)
            for toks in ref_tokens]
    owner = np.repeat(np.arange(len(hypotheses)), n_per)
    edits = count_edits([ids[k] for k in owner], rids)
    starts = np.concatenate([[0], np.cumsum(n_per)[:-1]]).astype(np.int64)
    best = np.minimum.reduceat(edits, starts)
    lengths = np.fromiter(map(len, ref_tokens), dtype=np.int64, count=len(ref_tokens))
    ref_length = np.add.reduceat(lengths, starts) / np.asarray(n_per, dtype=np.float64)
    n_refs = n_per[0] if min(n_per) == max(n_per) else None
    return TERStatistics(best.astype(np.int64), ref_length, n_refs,
                         **dataclasses.asdict(options))


# --- scores -----------------------------------------------------------------------------------


def _score(stats: TERStatistics, edits: int, length: float) -> TERScore:
    return TERScore(score=float(ter_scores(np.array([edits, length]))),
                    num_edits=int(edits), ref_length=float(length), signature=stats.signature)


def ter_from_statistics(stats: TERStatistics) -> TERScore:
    """Corpus TER from per-sentence statistics: total edits over total reference length.

    Examples
    --------
    >>> stats = ter_statistics(["c d e a b", "a b"], [["a b c d e"], ["a b c", "a b"]])
    >>> result = ter_from_statistics(stats)
    >>> round(result.score, 4), result.num_edits, result.ref_length
    (13.3333, 1, 7.5)
    """
    stats = _check_stats(stats)
    # sacrebleu adds sentence lengths one by one; cumsum keeps that order (np.sum would not)
    length = float(np.cumsum(stats.ref_length)[-1])
    return _score(stats, int(stats.num_edits.sum()), length)


def ter(hypotheses, references, *, normalized: bool = TEROptions.normalized,
        no_punct: bool = TEROptions.no_punct, asian_support: bool = TEROptions.asian_support,
        case_sensitive: bool = TEROptions.case_sensitive) -> TERScore:
    """Corpus TER, identical to sacrebleu's ``corpus_ter`` / ``TER().corpus_score``.

    Parameters
    ----------
    hypotheses : list of str
        System outputs.
    references : list
        ``references[i]``: the reference string or list of reference strings of
        ``hypotheses[i]`` (markeval's layout; transpose sacrebleu's reference streams with
        ``list(zip(*streams))``).
    normalized : bool
        tercom's normalisation: split off punctuation, unescape XML entities.
    no_punct : bool
        Remove punctuation.
    asian_support : bool
        With ``normalized``, split CJK characters; with ``no_punct``, remove CJK punctuation.
    case_sensitive : bool
        Keep the case (by default everything is lower-cased).

    Returns
    -------
    TERScore
        ``score`` (lower is better), ``num_edits``, ``ref_length``, ``signature``.

    Notes
    -----
    As sacrebleu, references are normalised twice and hypotheses once: with
    ``normalized=True``, ``sentence_ter("It's,", ["It's,"], normalized=True)`` is 66.67, not
    0 (see :func:`ter_statistics` and the module docstring).

    Examples
    --------
    >>> hyps = ["the cat sat on the mat", "on the mat the dog sat"]
    >>> refs = ["the cat sat on the mat", "the dog sat on the mat"]
    >>> result = ter(hyps, refs)
    >>> round(result.score, 4), result.num_edits, result.ref_length
    (8.3333, 1, 12.0)
    >>> print(result)
    TER = 8.33
    """
    options = TEROptions(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                         case_sensitive=case_sensitive)
    return ter_from_statistics(_statistics(hypotheses, references, options))


def sentence_ter(hypothesis: str, references, *, normalized: bool = TEROptions.normalized,
                 no_punct: bool = TEROptions.no_punct,
                 asian_support: bool = TEROptions.asian_support,
                 case_sensitive: bool = TEROptions.case_sensitive) -> TERScore:
    """TER of one sentence, identical to sacrebleu's ``sentence_ter``.

    Parameters
    ----------
    hypothesis : str
    references : str or list of str
    normalized, no_punct, asian_support, case_sensitive :
        As in :func:`ter`.

    Examples
    --------
    >>> r = sentence_ter("the cat sat on mat", ["the cat sat on the mat"])
    >>> round(r.score, 4), r.num_edits
    (16.6667, 1)
    """
    check_string(hypothesis, "hypothesis")
    if isinstance(references, (str, bytes)):
        references = [references]
    options = TEROptions(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                         case_sensitive=case_sensitive)
    stats = _statistics([hypothesis], [references], options)
    return _score(stats, int(stats.num_edits[0]), float(stats.ref_length[0]))


def sentence_ter_scores(hypotheses, references=None, *,
                        normalized: bool = TEROptions.normalized,
                        no_punct: bool = TEROptions.no_punct,
                        asian_support: bool = TEROptions.asian_support,
                        case_sensitive: bool = TEROptions.case_sensitive) -> TERSentenceScores:
    """Sentence TER of every hypothesis (as :func:`sentence_ter` on each), in one pass.

    Parameters
    ----------
    hypotheses : list of str, or TERStatistics
        System outputs, or statistics from :func:`ter_statistics` (then leave
        ``references`` and the options out).
    references : list
        As in :func:`ter`.
    normalized, no_punct, asian_support, case_sensitive :
        As in :func:`ter`.

    Returns
    -------
    TERSentenceScores
        ``item_scores`` the sentence scores, ``score`` their mean; lower is better.

    Examples
    --------
    >>> s = sentence_ter_scores(["c d e a b", "a b c"], ["a b c d e", "a b c"])
    >>> list(s), s.score
    ([20.0, 0.0], 10.0)
    """
    if isinstance(hypotheses, TERStatistics):
        if references is not None:
            raise TypeError("pass either TERStatistics or hypotheses and references, not both")
        stats = hypotheses
    else:
        if references is None:
            raise TypeError("references are missing (or pass TERStatistics as hypotheses)")
        options = TEROptions(normalized=normalized, no_punct=no_punct,
                             asian_support=asian_support, case_sensitive=case_sensitive)
        stats = _statistics(hypotheses, references, options)
    return TERSentenceScores(tuple(float(v) for v in stats.item_scores()), stats.signature)
