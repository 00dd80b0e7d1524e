"""ROUGE (Lin 2004): n-gram and longest-common-subsequence overlap with references.

Four kinds of score, each as precision, recall and F1:

``rouge<n>`` (``rouge1``, ``rouge2``, ... any ``n >= 1``)
    Clipped n-gram matches / hypothesis n-grams (P) and / reference n-grams (R).
``rougeL``
    Longest common subsequence of the two token sequences, LCS / length.
``rougeLsum``
    Summary-level LCS: texts are split into sentences at newlines; each reference
    sentence is matched against the *union* of its LCSs with every hypothesis
    sentence, with each token counted at most as often as it occurs in both texts
    (ROUGE-1.5.5's rule).

Everything agrees with Google's ``rouge-score`` 0.1.2 (``RougeScorer``, same
tokenizer, same LCS tie-breaking, ``score_multi`` for several references), to the
last bit on TAC 2009, but is computed with bit-parallel LCS on integer token ids
(Allison & Dix 1986; Hyyrö 2004) instead of a Python dynamic-programming table,
and every distinct text is tokenized and stemmed once.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from markeval._checks import (check_bool, check_choice, check_references, check_resampling,
                              check_strings)
from markeval._signature import make_signature
from markeval.lexical.stem import porter_stem, snowball_stem
from markeval.resampling import BootstrapResult, percentile_interval, replicates
from markeval._result import alias

TOKENIZERS = ("rouge-score", "unicode", "words")
DEFAULT_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
MULTI_REF = ("best", "mean", "pool")
EMPTY_REFERENCE = ("raise", "zero")
_TYPE = re.compile(r"rouge(?:([1-9][0-9]*)|L|Lsum)")

# rouge-score's tokenizer: lower-case, anything but a-z0-9 separates tokens.
_ASCII_WORD = re.compile(r"[a-z0-9]+")
# NLTK's RegexpTokenizer(r"\w+"), the tokenizer of the MoverScore authors' ROUGE.
_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=1)
def _unicode_word():
    # The third-party `regex` module (a dependency of transformers) knows Unicode
    # properties: a word is a run of letters, digits and combining marks (so that
    # Devanagari or decomposed accents stay whole); Han and kana characters, which
    # are written without spaces, are one token each.
    import regex

    cjk = r"\p{Han}\p{Hiragana}\p{Katakana}"
    return regex.compile(rf"[{cjk}]|(?:(?![{cjk}])[\p{{L}}\p{{N}}\p{{M}}])+")


@dataclass(frozen=True)
class RougeScore:
    """Precision, recall and F1 of one ROUGE type."""

    precision: float
    recall: float
    fmeasure: float


@dataclass(frozen=True)
class RougeTypeResult:
    """One ROUGE type over a corpus.

    Attributes
    ----------
    rouge_type : str
        E.g. ``'rouge2'``.
    precision, recall, fmeasure : float
        Means over the hypotheses of the per-hypothesis scores.
    precisions, recalls, fmeasures : tuple of float
        Per hypothesis: against its best reference for this type (``multi_ref='best'``),
        averaged over its references (``multi_ref='mean'``), or against all of them
        pooled (``multi_ref='pool'``).
    best_reference : tuple of int or None
        Per hypothesis, the index of the reference with the highest F1 (the first on
        ties), as ``rouge_score.RougeScorer.score_multi`` picks it; None with
        ``multi_ref='mean'`` or ``'pool'``.
    low, mid, high : RougeScore or None
        With ``n_resamples > 0``: percentiles (lower bound, median, upper bound) of the
        bootstrap distribution of the mean, as ``rouge_score.scoring.BootstrapAggregator``
        reports them (its ``mid`` is the median of the resampled means, not the mean).
    interval : BootstrapResult or None
        The same bootstrap of the headline F1 in markeval's shared interval shape.
    signature : str
        The signature of the :class:`RougeResult` this type belongs to.

    ``score`` (the mean F1, ``fmeasure``) and ``item_scores`` (``fmeasures``) are the
    result-protocol names.
    """

    rouge_type: str
    precision: float
    recall: float
    fmeasure: float
    precisions: tuple[float, ...]
    recalls: tuple[float, ...]
    fmeasures: tuple[float, ...]
    best_reference: tuple[int, ...] | None
    low: RougeScore | None = None
    mid: RougeScore | None = None
    high: RougeScore | None = None
    # Beside the old fields, out of the repr so that printed results read as before.
    interval: BootstrapResult | None = field(default=None, repr=False)
    signature: str = field(default="", repr=False)
    higher_is_better: ClassVar[bool] = True

    score = alias("fmeasure", "The headline number: mean F1 (``fmeasure``).")

    item_scores = alias("fmeasures", "F1 of each hypothesis (``fmeasures``).")

    def pair(self, i: int) -> RougeScore:
        """The score of hypothesis ``i``."""
        return RougeScore(self.precisions[i], self.recalls[i], self.fmeasures[i])


@dataclass(frozen=True)
class RougeResult:
    """ROUGE scores of a corpus, one :class:`RougeTypeResult` per requested type.

    Index by type name: ``result["rougeL"].fmeasure``; per hypothesis:
    ``result["rougeL"].fmeasures[i]``.

    For the result protocol, the headline is the *first requested type*: ``score`` is its
    mean F1 and ``item_scores`` its per-hypothesis F1 (``result.score`` is
    ``result["rouge1"].fmeasure`` with the default types; ask for ``types=("rougeL",)``
    to make ROUGE-L the headline).
    """

    scores: tuple[RougeTypeResult, ...]
    signature: str
    higher_is_better: ClassVar[bool] = True

    @property
    def score(self) -> float:
        """Mean F1 of the first requested type."""
        return self.scores[0].fmeasure

    @property
    def item_scores(self) -> tuple[float, ...]:
        """Per-hypothesis F1 of the first requested type."""
        return self.scores[0].fmeasures

    @property
    def types(self) -> tuple[str, ...]:
        """The ROUGE types, in the requested order."""
        return tuple(s.rouge_type for s in self.scores)

    def __getitem__(self, rouge_type: str) -> RougeTypeResult:
        for score in self.scores:
            if score.rouge_type == rouge_type:
                return score
        raise KeyError(f"{rouge_type!r} was not computed; types: {self.types}")


# --- tokens -----------------------------------------------------------------------------------

def rouge_tokenize(text: str, tokenize: str = "rouge-score", *,
                   use_stemmer: bool = False) -> list[str]:
    """Split a text into ROUGE tokens.

    Parameters
    ----------
    text : str
    tokenize : {'rouge-score', 'unicode', 'words'}
        ``'rouge-score'`` is Google's tokenizer: lower-case, then keep runs of
        ``a-z0-9``; every other character, including every non-ASCII letter,
        separates tokens (so accented words break apart and Chinese vanishes).
        ``'unicode'``: NFKC-normalize, lower-case, keep runs of letters, digits and
        combining marks; each Han/Hiragana/Katakana character is a token.
        ``'words'``: runs of word characters (``\\w+``: letters, digits, underscore),
        lower-cased; with stemming, every token gets the Snowball English stem. This is
        the ROUGE the MoverScore authors ran on TAC (NLTK's ``RegexpTokenizer(r"\\w+")``
        and ``SnowballStemmer("english")``).
    use_stemmer : bool, default False
        Stem: Porter on tokens longer than 3 characters (rouge-score's rule) for
        ``'rouge-score'`` and ``'unicode'``; Snowball on every token for ``'words'``.

    Returns
    -------
    list of str

    Examples
    --------
    >>> rouge_tokenize("The quick brown fox jumps!", use_stemmer=True)
    ['the', 'quick', 'brown', 'fox', 'jump']
    >>> rouge_tokenize("Der Bär läuft"), rouge_tokenize("东京很大")
    (['der', 'b', 'r', 'l', 'uft'], [])
    >>> rouge_tokenize("Der Bär läuft", "unicode"), rouge_tokenize("东京很大", "unicode")
    (['der', 'bär', 'läuft'], ['东', '京', '很', '大'])
    >>> rouge_tokenize("The U.S. generously gave_out $5", "words", use_stemmer=True)
    ['the', 'u', 's', 'generous', 'gave_out', '5']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    use_stemmer = check_bool(use_stemmer, "use_stemmer")
    return _tokenize_function(_check_tokenize(tokenize), use_stemmer)(text)


def _check_tokenize(tokenize):
    return tokenize if callable(tokenize) else check_choice(tokenize, "tokenize", TOKENIZERS)


def _tokenize_function(tokenizer, use_stemmer: bool) -> Callable[[str], list[str]]:
    if callable(tokenizer):
        return lambda text: [str(t) for t in tokenizer(text)]
    if tokenizer == "rouge-score":
        if not use_stemmer:
            return lambda text: _ASCII_WORD.findall(text.lower())
        # rouge-score stems tokens of more than 3 characters and then keeps only tokens
        # that are still non-empty runs of a-z0-9 (Porter maps those to the same alphabet).
        return lambda text: [t for t in (porter_stem(w) if len(w) > 3 else w
                                         for w in _ASCII_WORD.findall(text.lower()))
                             if _ASCII_WORD.fullmatch(t)]
    if tokenizer == "words":
        if not use_stemmer:
            return lambda text: _WORD.findall(text.lower())
        return lambda text: [snowball_stem(w) for w in _WORD.findall(text)]
    word = _unicode_word()

    def unicode_tokens(text: str) -> list[str]:
        tokens = word.findall(unicodedata.normalize("NFKC", text).lower())
        return [porter_stem(w) if len(w) > 3 else w for w in tokens] if use_stemmer else tokens

    return unicode_tokens


# --- one text, encoded ------------------------------------------------------------------------

class _Text:
    """A text as integer token ids, with what the scores need, computed on demand."""

    __slots__ = ("ids", "sentences", "_ngrams", "_masks", "_sentence_masks", "_counts")

    def __init__(self, ids: list[int], sentences: list[tuple[int, ...]]):
        self.ids = ids
        self.sentences = sentences
        self._ngrams: dict[int, Counter] = {}
        self._masks = None
        self._sentence_masks = None
        self._counts = None

    def ngrams(self, n: int) -> Counter:
        if n not in self._ngrams:
            ids = self.ids
            self._ngrams[n] = Counter(ids) if n == 1 else Counter(
                zip(*(ids[k:] for k in range(n))))
        return self._ngrams[n]

    def masks(self) -> dict[int, int]:
        if self._masks is None:
            self._masks = _bit_masks(self.ids)
        return self._masks

    def sentence_masks(self) -> list[tuple[tuple[int, ...], dict[int, int], frozenset[int], dict]]:
        """Per sentence: tokens, bit masks, vocabulary, and a cache of LCS positions by
        hypothesis sentence (extractive summarizers repeat the same source sentences)."""
        if self._sentence_masks is None:
            self._sentence_masks = [(s, _bit_masks(s), frozenset(s), {}) for s in self.sentences]
        return self._sentence_masks

    def counts(self) -> Counter:
        if self._counts is None:
            self._counts = Counter(t for s in self.sentences for t in s)
        return self._counts


def _bit_masks(ids: list[int]) -> dict[int, int]:
    """Token id -> bit mask of its positions (bit k set iff ids[k] is that token)."""
    masks: dict[int, int] = {}
    for k, t in enumerate(ids):
        masks[t] = masks.get(t, 0) | (1 << k)
    return masks


# --- LCS, bit-parallel --------------------------------------------------------------------------
#
# Column j of the LCS table of `ref` (rows) against `can` (columns) is kept as one integer
# whose bit i is 0 exactly where table[i+1][j] = table[i][j] + 1 (Hyyrö's update
# V' = (V + U) | (V - U), U = V & mask[can[j-1]]). The LCS length is the number of 0 bits.

def _lcs_length(masks: dict[int, int], m: int, can: list[int]) -> int:
    v = (1 << m) - 1
    for t in can:
        u = v & masks.get(t, 0)
        v = (v + u) | (v - u)  # bits above m may fill up; they never reach the low m bits
    return m - (v & ((1 << m) - 1)).bit_count()


def _lcs_positions(m: int, masks: dict[int, int], can: Sequence[int]) -> list[int]:
    """Positions in the reference (length ``m``) of the LCS rouge-score reads out.

    rouge-score's ``_backtrack_norec`` starts at (i, j) = (m, len(can)): on equal
    tokens it records i-1 and goes diagonal; else it goes left iff
    table[i][j-1] > table[i-1][j], i.e. iff bit i-1 of column j is 0, else up. Going up
    passes every row whose bit is 1 and whose token differs, so one step per column
    finds the next stop with a single ``bit_length``.
    """
    matches = [masks.get(t, 0) for t in can]
    columns = []
    v = (1 << m) - 1
    for match in matches:
        u = v & match
        v = (v + u) | (v - u)
        columns.append(v)
    positions = []
    i = m
    for j in range(len(can) - 1, -1, -1):
        match = matches[j]
        stops = (match | ~columns[j]) & ((1 << i) - 1)
        if not stops:
            break
        k = stops.bit_length() - 1
        if match >> k & 1:
            positions.append(k)
            if not k:
                break
            i = k
        else:
            i = k + 1
    return positions


# --- scores of one pair -----------------------------------------------------------------------

# Each scorer returns its sufficient statistics, (matches, hypothesis units, reference
# units): P = matches / hypothesis units, R = matches / reference units. Keeping the counts
# lets several references be pooled (multi_ref='pool') as well as compared one by one.

def _fmeasure(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _prf(matches: float, hyp_total: float, ref_total: float) -> tuple[float, float, float]:
    precision = matches / max(hyp_total, 1)
    recall = matches / max(ref_total, 1)
    return precision, recall, _fmeasure(precision, recall)


def _score_ngrams(hyp: _Text, ref: _Text, n: int) -> tuple[int, int, int]:
    target, prediction = ref.ngrams(n), hyp.ngrams(n)
    overlap = sum(min(count, prediction[g]) for g, count in target.items() if g in prediction)
    return overlap, sum(prediction.values()), sum(target.values())


def _score_lcs(hyp: _Text, ref: _Text) -> tuple[int, int, int]:
    if not hyp.ids or not ref.ids:
        return 0, len(hyp.ids), len(ref.ids)
    return _lcs_length(ref.masks(), len(ref.ids), hyp.ids), len(hyp.ids), len(ref.ids)


def _score_lsum(hyp: _Text, ref: _Text) -> tuple[int, int, int]:
    m = sum(map(len, ref.sentences))
    n = sum(map(len, hyp.sentences))
    if not m or not n:
        return 0, n, m
    left_hyp, left_ref = dict(hyp.counts()), dict(ref.counts())
    hits = 0
    for tokens, masks, vocabulary, cache in ref.sentence_masks():
        union: set[int] = set()
        for sentence in hyp.sentences:
            if not vocabulary.isdisjoint(sentence):
                positions = cache.get(sentence)
                if positions is None:
                    positions = cache[sentence] = _lcs_positions(len(tokens), masks, sentence)
                union.update(positions)
        for k in sorted(union):
            t = tokens[k]
            # a token counts at most as often as it occurs in each text (ROUGE-1.5.5)
            if left_hyp.get(t, 0) > 0 and left_ref.get(t, 0) > 0:
                hits += 1
                left_hyp[t] -= 1
                left_ref[t] -= 1
    return hits, n, m


def _scorer(rouge_type: str):
    if rouge_type == "rougeL":
        return _score_lcs
    if rouge_type == "rougeLsum":
        return _score_lsum
    n = int(rouge_type[5:])
    return lambda hyp, ref: _score_ngrams(hyp, ref, n)


# --- the corpus -------------------------------------------------------------------------------

def _check_types(types) -> tuple[str, ...]:
    if isinstance(types, str):
        raise TypeError(f"types must be a sequence of ROUGE type names, not a single str: "
                        f"use types=({types!r},)")
    types = tuple(types)
    if not types:
        raise ValueError("types is empty: ask for at least one ROUGE type, e.g. ('rouge1',)")
    for t in types:
        if not isinstance(t, str) or not _TYPE.fullmatch(t):
            raise ValueError(f"unknown ROUGE type {t!r}: use 'rouge<n>' with n >= 1 "
                             "(e.g. 'rouge1', 'rouge2'), 'rougeL' or 'rougeLsum'")
    duplicates = sorted({t for t in types if types.count(t) > 1})
    if duplicates:
        raise ValueError(f"types lists {duplicates} more than once")
    return types


def _bootstrap(table: np.ndarray, n_resamples: int, confidence: float, seed: int,
               signature: str):
    """rouge-score's BootstrapAggregator, with its global NumPy generator made explicit.

    ``table`` holds, per type, the (P, R, F1) of every hypothesis: shape (types, n, 3). One
    legacy ``RandomState(seed)`` is consumed type after type, resample after resample,
    exactly as ``np.random.seed(seed)`` then ``aggregate()`` would, so the intervals equal
    rouge-score's to rounding. Each resample's mean gathers its rows and averages them in
    rouge-score's order. Returns, per type, ``(low, mid, high, interval of F1)``.
    """
    n_types, n = table.shape[:2]
    done = 0

    def means(indices: np.ndarray) -> np.ndarray:
        nonlocal done  # resample r of the stream belongs to type r // n_resamples
        kinds = (done + np.arange(len(indices))) // n_resamples
        done += len(indices)
        return table[kinds[:, None], indices].mean(axis=1)

    values = replicates(n, means, n_resamples=n_types * n_resamples, seed=seed, legacy=True,
                        block_entries=1_000_000).reshape(n_types, n_resamples, 3)
    out = []
    for k in range(n_types):
        bounds = [percentile_interval(float(table[k, :, c].mean()), values[k, :, c],
                                      confidence=confidence, n_resamples=n_resamples,
                                      seed=seed, signature=signature, percent=True)
                  for c in range(3)]
        # rouge-score's AggregateScore names (low, mid, high) on the type's result
        low, mid, high = (RougeScore(*(getattr(b, q) for b in bounds))
                          for q in ("ci_low", "mid", "ci_high"))
        out.append((low, mid, high, bounds[2]))
    return out


def rouge(hypotheses: Sequence[str], references: Sequence[str | Sequence[str]],
          types: Sequence[str] = DEFAULT_TYPES, *, multi_ref: str = "best",
          use_stemmer: bool = False,
          tokenize: str | Callable[[str], Sequence[str]] = "rouge-score",
          n_resamples: int = 0, confidence: float = 0.95, seed: int = 0,
          empty_reference: str = "raise", progress: bool = False) -> RougeResult:
    """ROUGE-N, ROUGE-L and ROUGE-Lsum of hypotheses against their references.

    Parameters
    ----------
    hypotheses : sequence of str
        Generated texts. For ``rougeLsum`` put one sentence per line (join a list of
        sentences with ``"\\n"``). A hypothesis without tokens scores 0.
    references : sequence of (str or sequence of str)
        ``references[i]``: the reference, or list of references, of ``hypotheses[i]``.
        Each reference needs at least one token. See ``multi_ref`` for several.
    types : sequence of str, default ('rouge1', 'rouge2', 'rougeL', 'rougeLsum')
        ``'rouge<n>'`` for any ``n >= 1``, ``'rougeL'``, ``'rougeLsum'``.
    multi_ref : {'best', 'mean', 'pool'}, default 'best'
        With several references: ``'best'`` keeps, type by type, the reference with the
        highest F1 (``rouge_score.RougeScorer.score_multi``); ``'mean'`` averages
        precision, recall and F1 over the references (ROUGE-1.5.5's default, ``-f A``);
        ``'pool'`` sums the matches, hypothesis units and reference units over the
        references before dividing, so a long reference weighs more (the ROUGE the
        MoverScore authors ran on TAC).
    use_stemmer : bool, default False
        Porter-stem tokens longer than 3 characters, as ``RougeScorer(use_stemmer=True)``
        (ROUGE-1.5.5's ``-m``). Applies to the two built-in tokenizers.
    tokenize : {'rouge-score', 'unicode'} or callable, default 'rouge-score'
        See :func:`rouge_tokenize`. Use ``'unicode'`` for text that is not English:
        rouge-score's tokenizer deletes every non-ASCII letter. A callable maps a text to
        its tokens (and does its own stemming, if any).
    n_resamples : int, default 0
        Number of bootstrap resamples for confidence intervals (rouge-score uses 1000);
        0 skips them.
    confidence : float, default 0.95
        Coverage of the bootstrap interval.
    seed : int, default 0
        Seed of the resampling, below ``2**32``; with the same seed, ``np.random.seed(seed)``
        before rouge-score's ``BootstrapAggregator.aggregate()`` gives the same intervals.
    empty_reference : {'raise', 'zero'}, default 'raise'
        What a reference without tokens does. ``'raise'`` (the default) refuses it,
        naming it: an empty reference is nearly always a data error (a blank line, files
        out of step), and scoring it would quietly pull the corpus mean down.
        ``'zero'`` scores it P = R = F1 = 0 as rouge-score does, with one warning that
        counts such references, so that markeval is a drop-in on corpora that have them.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    RougeResult
        ``result[type]`` holds the mean P/R/F1, the per-hypothesis scores and, with
        ``n_resamples``, the interval. ``result.score`` is the first type's mean F1.

    Raises
    ------
    TypeError, ValueError
        Bad types, mismatched lengths, unknown ROUGE types, a reference with no tokens.

    Examples
    --------
    >>> r = rouge(["A fast brown fox leaps over a sleeping dog."],
    ...           ["The quick brown fox jumps over the lazy dog."])
    >>> [(t, round(r[t].recall, 4)) for t in r.types]
    [('rouge1', 0.4444), ('rouge2', 0.125), ('rougeL', 0.4444), ('rougeLsum', 0.4444)]
    >>> r.signature  # doctest: +ELLIPSIS
    'rouge|types:rouge1+rouge2+rougeL+rougeLsum|tok:rouge-score|stem:no|multi_ref:best|...'
    """
    hypotheses = check_strings(hypotheses, "hypotheses")
    refs = check_references(hypotheses, references)
    types = _check_types(types)
    check_choice(multi_ref, "multi_ref", MULTI_REF)
    use_stemmer = check_bool(use_stemmer, "use_stemmer")
    tokenizer = _check_tokenize(tokenize)
    n_resamples, confidence, seed = check_resampling(n_resamples, confidence, seed)
    if seed >= 2**32:  # rouge-score's resampling is numpy's legacy RandomState
        raise ValueError(f"seed must be < 2**32 for ROUGE's bootstrap, got {seed}")
    check_choice(empty_reference, "empty_reference", EMPTY_REFERENCE)
    progress = check_bool(progress, "progress")
    split = _tokenize_function(tokenizer, use_stemmer)

    vocabulary: dict[str, int] = {}
    encoded: dict[str, _Text] = {}

    def encode(text: str) -> _Text:
        if text not in encoded:
            def ids(tokens):
                return [vocabulary.setdefault(t, len(vocabulary)) for t in tokens]
            # rouge-score: sentences are the non-empty lines
            sentences = [tuple(ids(split(s))) for s in text.split("\n") if s]
            encoded[text] = _Text(ids(split(text)), sentences)
        return encoded[text]

    scorers = [(t, _scorer(t)) for t in types]
    table = np.zeros((len(types), len(hypotheses), 3))
    best = np.zeros((len(types), len(hypotheses)), dtype=int)
    items = enumerate(zip(hypotheses, refs))
    if progress:
        from tqdm.auto import tqdm

        items = tqdm(items, total=len(hypotheses), desc="ROUGE")
    empty: list[str] = []
    for i, (hypothesis, references_i) in items:
        hyp = encode(hypothesis)
        ref_texts = []
        for j, reference in enumerate(references_i):
            ref = encode(reference)
            if not ref.ids and empty_reference == "zero":
                empty.append(f"references[{i}][{j}]")
            elif not ref.ids:
                hint = (" (the rouge-score tokenizer keeps only a-z and 0-9: use "
                        "tokenize='unicode' for other scripts)" if tokenizer == "rouge-score"
                        and reference.strip() else "")
                raise ValueError(f"references[{i}][{j}] has no tokens: {reference[:60]!r}{hint}; "
                                 "empty_reference='zero' scores it 0, as rouge-score does")
            ref_texts.append(ref)
        for k, (_, scorer) in enumerate(scorers):
            counts = [scorer(hyp, ref) for ref in ref_texts]
            if multi_ref == "pool":
                table[k, i] = _prf(*np.sum(counts, axis=0)) if counts else (0.0, 0.0, 0.0)
                continue
            candidates = [_prf(*c) for c in counts]
            if multi_ref == "mean":
                table[k, i] = np.mean(candidates, axis=0)
                continue
            # the first reference with the highest F1, like np.argmax in score_multi
            top = max(range(len(candidates)), key=lambda c: candidates[c][2])
            table[k, i] = candidates[top]
            best[k, i] = top

    if empty:
        warnings.warn(f"{len(empty)} reference(s) have no tokens (first: {empty[0]}); they "
                      "score P = R = F1 = 0, as in rouge-score", stacklevel=2)
    tok_name = getattr(tokenizer, "__name__", "custom") if callable(tokenizer) else tokenizer
    signature = make_signature(
        "rouge", types="+".join(types), tok=tok_name, stem=use_stemmer, multi_ref=multi_ref,
        empty_ref=empty_reference if empty_reference != "raise" else None,
        bootstrap=n_resamples or None, confidence=confidence if n_resamples else None,
        seed=seed if n_resamples else None)
    intervals = (_bootstrap(table, n_resamples, confidence, seed, signature) if n_resamples
                 else [(None, None, None, None)] * len(types))
    scores = tuple(
        RougeTypeResult(
            rouge_type=t,
            precision=float(table[k, :, 0].mean()), recall=float(table[k, :, 1].mean()),
            fmeasure=float(table[k, :, 2].mean()),
            precisions=tuple(map(float, table[k, :, 0])),
            recalls=tuple(map(float, table[k, :, 1])),
            fmeasures=tuple(map(float, table[k, :, 2])),
            best_reference=tuple(map(int, best[k])) if multi_ref == "best" else None,
            low=intervals[k][0], mid=intervals[k][1], high=intervals[k][2],
            interval=intervals[k][3], signature=signature)
        for k, t in enumerate(types))
    return RougeResult(scores=scores, signature=signature)
