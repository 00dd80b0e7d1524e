"""chrF and chrF++ (Popović, 2015; 2017): character (and word) n-gram F-β, as sacrebleu 2.x.

For each order ``n`` a sentence pair gives three integers: the hypothesis n-grams, the
reference n-grams and their matches (``min`` of the two counts of each distinct n-gram,
summed). chrF uses character n-grams ``n = 1 .. char_order`` (6) of the sentence with its
whitespace removed; chrF++ adds word unigrams and bigrams (``word_order=2``), the words
being whitespace-split with one punctuation character split off the end (or, failing that,
the start) of each word, as in Popović's ``chrF++.py``. These ``3 * (char_order +
word_order)`` integers per sentence, laid out as sacrebleu lays them out (for each order:
hypothesis count, reference count, matches; character orders first), are the sufficient
statistics: a corpus score is the score of their column sums, so corpus chrF, sentence
chrF, :func:`markeval.resampling.bootstrap` and the paired tests share one pass over the text
(:func:`chrf_statistics` gives a :class:`~markeval.resampling.SufficientStatistics`).

The score of (summed) statistics, with ``P_n = matches / hyp`` and ``R_n = matches / ref``:

- default (sacrebleu's "effective order"): average ``P_n`` and ``R_n`` over the orders
  where both hypothesis and reference have n-grams, then
  ``F = (1 + β²) P R / (β² P + R)``, times 100;
- ``eps_smoothing=True`` (``chrF++.py``, Moses and NLTK): the mean over all orders of the
  per-order F-β, where an order without hypothesis (reference) n-grams has precision
  (recall) ``1e-16`` and an undefined F counts as ``1e-16``.

Two quirks of sacrebleu are kept: an order in which the reference has no n-gram (it is
shorter than ``n``) counts no hypothesis n-grams either; and with several references each
sentence takes the statistics of the reference with the best sentence score (the first on
ties), so statistics depend on ``beta`` and ``eps_smoothing`` when there are several.

Counting is vectorised and exact (no hashing): characters (words) are numbered densely, the
window of ``char_order`` symbols starting at every position (zeros past the sentence's end)
is packed into one 63-bit integer together with its sentence and side (hypothesis or
reference), and one sort of these integers (128 sentences at a time) puts equal n-grams of a
sentence next to each other for every order at once, since equal windows share every
prefix. Run lengths then give the counts of each n-gram on each side. Where the windows do
not fit in 63 bits (thousands of distinct characters, or long orders) n-grams are
renumbered densely order by order instead; below 8 sentences plain dicts are faster.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import ClassVar

import numpy as np

from markeval._checks import (
    check_bool,
    check_int,
    check_number,
    check_references,
    check_string,
    check_strings,
)
from markeval._signature import make_signature
from markeval.lexical._ngram import SentenceScores
from markeval.resampling import SufficientStatistics

__all__ = [
    "CHRFScore",
    "CHRFStatistics",
    "ChrFOptions",
    "chrf",
    "chrf_from_statistics",
    "chrf_statistics",
    "sentence_chrf",
    "sentence_chrf_scores",
]

#: sacrebleu's floor for an undefined precision, recall or F (``eps_smoothing=True``).
EPS = 1e-16
#: The characters split off a word's end (or start) for chrF++'s word n-grams
#: (``string.punctuation``, as in ``chrF++.py`` and sacrebleu).
PUNCTUATION = frozenset('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')
#: Below this many sentences (or rows), plain Python beats numpy's per-call overhead.
SMALL = 8


# --- Options -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChrFOptions:
    """The options of chrF, checked once: every chrF function takes them by these names.

    Parameters
    ----------
    char_order : int, default 6
    word_order : int, default 0
    beta : float, default 2
    lowercase, whitespace, eps_smoothing : bool, default False
        As in :func:`chrf`. A bad value raises here, naming the argument and the value.

    Examples
    --------
    >>> options = ChrFOptions(word_order=2)
    >>> options.signature(n_refs=1)  # doctest: +ELLIPSIS
    'chrF2++|nrefs:1|lowercase:no|eff:yes|nc:6|nw:2|space:no|version:...'
    >>> print(chrf(["a black cat"], ["the black cat"], **dataclasses.asdict(options)))
    chrF2++ = 64.50
    >>> ChrFOptions(beta=0)
    Traceback (most recent call last):
    ...
    ValueError: beta must be > 0, got 0
    """

    char_order: int = 6
    word_order: int = 0
    beta: float = 2
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    def __post_init__(self):
        # Frozen, so the checked values (numpy integers as ints) go in through object.__setattr__.
        store = object.__setattr__
        store(self, "char_order", check_int(self.char_order, "char_order", minimum=1))
        store(self, "word_order", check_int(self.word_order, "word_order", minimum=0))
        beta = self.beta
        check_number(beta, "beta")  # its type is kept: beta=2 names chrF2, not chrF2.0
        if not beta > 0:
            raise ValueError(f"beta must be > 0, got {beta!r}")
        if not math.isfinite(float(beta) * float(beta)):  # the F-score weighs by beta ** 2
            raise ValueError(f"beta must have a finite square (beta <= 1e154), got {beta!r}")
        for name in ("lowercase", "whitespace", "eps_smoothing"):
            store(self, name, check_bool(getattr(self, name), name))

    def signature(self, n_refs: int | None) -> str:
        """sacrebleu's signature of chrF with these options and ``n_refs`` references per
        sentence (None: it varies)."""
        return make_signature(
            _name(self.beta, self.word_order),
            nrefs=n_refs if n_refs is not None else "var",
            lowercase=self.lowercase,
            eff=not self.eps_smoothing,
            nc=self.char_order,
            nw=self.word_order,
            space=self.whitespace,
        )


def _name(beta, word_order: int) -> str:
    return f"chrF{beta}" + "+" * word_order


# --- Results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CHRFScore:
    """A chrF (or chrF++) score.

    Attributes
    ----------
    score : float
        chrF on a 0-100 scale.
    char_order, word_order : int
        Character and word n-gram orders (``word_order=2``: chrF++).
    beta : float
        Weight of recall: F-β with β = ``beta``.
    signature : str
        Every setting that changes the number; starts with :attr:`name`.
    item_scores : None
        Corpus chrF is not a mean of sentence scores: :func:`sentence_chrf_scores` gives
        those.
    """

    score: float
    char_order: int
    word_order: int
    beta: float
    signature: str
    higher_is_better: ClassVar[bool] = True

    item_scores = None  # corpus chrF is no mean of sentence scores: see sentence_chrf_scores

    @property
    def name(self) -> str:
        """sacrebleu's name of the variant: ``chrF2``, ``chrF2++`` (one ``+`` per word order)."""
        return _name(self.beta, self.word_order)

    def __str__(self) -> str:
        return f"{self.name} = {self.score:.2f}"


@dataclass(frozen=True, eq=False)
class CHRFStatistics(SufficientStatistics):
    """Per-sentence sufficient statistics of chrF: one integer row per sentence.

    Attributes
    ----------
    matrix : ndarray of int64, shape (n, 3 * (char_order + word_order))
        sacrebleu's layout: for each order (characters ``1..char_order``, then words
        ``1..word_order``) the hypothesis n-grams, the reference n-grams and the matches.
    char_order, word_order : int
    beta : float
    lowercase, whitespace, eps_smoothing : bool
        The settings the statistics were counted with (``beta`` and ``eps_smoothing`` choose
        the reference when there are several, and score the sums).
    n_refs : int or None
        References per sentence (None when it varies).

    Examples
    --------
    >>> stats = chrf_statistics(["a cat", "a dog"], ["a cat", "the dog"], char_order=2)
    >>> stats.matrix.tolist()
    [[4, 4, 4, 3, 3, 3], [4, 6, 3, 3, 5, 2]]
    >>> round(float(stats.scores(stats.matrix.sum(axis=0, keepdims=True))[0]), 4)
    69.3629
    """

    matrix: np.ndarray
    char_order: int
    word_order: int
    beta: float
    lowercase: bool
    whitespace: bool
    eps_smoothing: bool
    n_refs: int | None

    @property
    def orders(self) -> int:
        """``char_order + word_order``."""
        return self.char_order + self.word_order

    @property
    def hyp_counts(self) -> np.ndarray:
        """Hypothesis n-grams per sentence and order, shape (n, orders)."""
        return self.matrix[:, 0::3]

    @property
    def ref_counts(self) -> np.ndarray:
        """Reference n-grams per sentence and order, shape (n, orders)."""
        return self.matrix[:, 1::3]

    @property
    def matches(self) -> np.ndarray:
        """Matching n-grams per sentence and order, shape (n, orders)."""
        return self.matrix[:, 2::3]

    @property
    def options(self) -> ChrFOptions:
        """The options the statistics were counted with."""
        return ChrFOptions(self.char_order, self.word_order, self.beta, self.lowercase,
                           self.whitespace, self.eps_smoothing)

    def take(self, indices) -> CHRFStatistics:
        """The statistics of the sentences at ``indices`` (in that order; repeats allowed)."""
        return dataclasses.replace(self, matrix=self.matrix[np.asarray(indices, dtype=np.int64)])

    def scores(self, sums, *, float32: bool = False) -> np.ndarray:
        """chrF (0-100) of each row of ``sums``, an array of shape (m, 3 * orders).

        Each row is a sum of rows of :attr:`matrix` (one sentence, a corpus, a bootstrap
        resample); the scores repeat sacrebleu's floating-point operations. ``float32`` is
        accepted and changes nothing: sacrebleu's float32 sums of chrF counts are exact and
        its F-scores are computed in Python floats.
        """
        sums = np.asarray(sums)
        if sums.ndim != 2 or sums.shape[1] != 3 * self.orders:
            raise ValueError(f"sums must have shape (m, {3 * self.orders}), got {sums.shape}")
        return _f_scores(sums, self.options)

    @property
    def signature(self) -> str:
        """The signature of scores from these statistics."""
        return self.options.signature(self.n_refs)


# --- Scoring (vectorised over rows, sacrebleu's float operations in its order) ---------------


def _f_score(row: list[int], options: ChrFOptions) -> float:
    """The score of one row, in plain Python (the same operations as :func:`_f_scores`)."""
    eps_smoothing = options.eps_smoothing
    factor = options.beta ** 2
    orders = len(row) // 3
    score = avg_prec = avg_rec = 0.0
    effective = 0
    for i in range(orders):
        n_hyp, n_ref, n_match = row[3 * i: 3 * i + 3]
        prec = n_match / n_hyp if n_hyp > 0 else EPS
        rec = n_match / n_ref if n_ref > 0 else EPS
        if eps_smoothing:
            denom = factor * prec + rec
            score += (1 + factor) * prec * rec / denom if denom > 0 else EPS
        elif n_hyp > 0 and n_ref > 0:
            avg_prec += prec
            avg_rec += rec
            effective += 1
    if eps_smoothing:
        return 100 * score / orders
    if effective:
        avg_prec /= effective
        avg_rec /= effective
    if avg_prec + avg_rec == 0:
        return 0.0
    return 100 * ((1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec))


def _f_scores(stats: np.ndarray, options: ChrFOptions) -> np.ndarray:
    """sacrebleu's ``CHRF._compute_f_score`` of every row of ``stats`` (m, 3 * orders)."""
    if len(stats) < SMALL:  # numpy's per-call overhead would dominate
        return np.array([_f_score(row, options) for row in np.asarray(stats).tolist()],
                        dtype=np.float64)
    stats = np.asarray(stats, dtype=np.float64)  # exact: counts are far below 2**53
    m, orders = stats.shape[0], stats.shape[1] // 3
    eps_smoothing = options.eps_smoothing
    factor = options.beta ** 2
    score = np.zeros(m)
    avg_prec, avg_rec = np.zeros(m), np.zeros(m)
    effective = np.zeros(m, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(orders):
            n_hyp, n_ref, n_match = stats[:, 3 * i], stats[:, 3 * i + 1], stats[:, 3 * i + 2]
            prec = np.where(n_hyp > 0, n_match / n_hyp, EPS)
            rec = np.where(n_ref > 0, n_match / n_ref, EPS)
            if eps_smoothing:
                denom = factor * prec + rec
                score = score + np.where(denom > 0, (1 + factor) * prec * rec / denom, EPS)
            else:
                both = (n_hyp > 0) & (n_ref > 0)
                avg_prec = avg_prec + np.where(both, prec, 0.0)
                avg_rec = avg_rec + np.where(both, rec, 0.0)
                effective += both
        if eps_smoothing:
            return 100 * score / orders
        some = effective > 0
        avg_prec = np.where(some, avg_prec / effective, 0.0)
        avg_rec = np.where(some, avg_rec / effective, 0.0)
        f = (1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec)
    return np.where(avg_prec + avg_rec != 0, 100 * f, 0.0)


# --- Counting ------------------------------------------------------------------------------------


def _chars(texts: list[str], whitespace: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Dense character ids ``1..V`` of all texts concatenated, their lengths, and ``V``."""
    if not whitespace:
        texts = ["".join(t.split()) for t in texts]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if codes.size == 0:
        return codes.astype(np.int64), lengths, 1
    present = np.zeros(int(codes.max()) + 1, dtype=np.int64)
    present[codes] = 1
    rank = np.cumsum(present)
    return rank[codes], lengths, int(rank[-1])


def _split_words(text: str) -> list[str]:
    """chrF++'s words: whitespace-split, one punctuation mark split off the end, else the start.

    ``"(hi)"`` gives ``["(hi", ")"]`` (sacrebleu issue #124; kept for parity).
    """
    out = []
    for w in text.split():
        if len(w) > 1:
            if w[-1] in PUNCTUATION:
                out += (w[:-1], w[-1])
                continue
            if w[0] in PUNCTUATION:
                out += (w[0], w[1:])
                continue
        out.append(w)
    return out


def _words(texts: list[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Word ids ``1..V`` of all texts concatenated, their lengths (in words), and ``V``."""
    words = [_split_words(t) for t in texts]
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    vocabulary: dict[str, int] = {}
    ids = [vocabulary.setdefault(w, len(vocabulary) + 1) for w in chain.from_iterable(words)]
    return np.array(ids, dtype=np.int64), lengths, max(1, len(vocabulary))


#: Bits of a packed window key: pair | n symbols | side, kept below the sign bit.
_KEY_BITS = 63
#: At most 2**_CHUNK_CAP sentence pairs are sorted at once.
_CHUNK_CAP = 7


def _matches(symbols: np.ndarray, lengths: np.ndarray, n_pairs: int, order: int, vocab: int,
             *, packed: bool = True) -> np.ndarray:
    """Matching n-grams, shape (n_pairs, order), of hypothesis ``p`` and reference ``p``.

    ``symbols`` holds the ids (``1..vocab``) of units ``0..2P-1`` concatenated: the P
    hypotheses, then the P references; ``lengths`` their lengths. ``packed=False`` forces
    the general path (taken anyway where the keys would not fit in 63 bits).
    """
    bits = max(1, int(vocab).bit_length())
    window_bits = order * bits + 1
    out = np.zeros((n_pairs, order), dtype=np.int64)
    if not packed or window_bits > _KEY_BITS - 1:
        return _matches_general(symbols, lengths, n_pairs, order, vocab)
    # pairs per sort: so that keys fit, and a few MB per array
    chunk = 1 << min(_KEY_BITS - window_bits, _CHUNK_CAP)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for a in range(0, n_pairs, chunk):
        b = min(n_pairs, a + chunk)
        hyp = symbols[offsets[a]:offsets[b]]
        ref = symbols[offsets[n_pairs + a]:offsets[n_pairs + b]]
        out[a:b] = _matches_packed(hyp, lengths[a:b], ref, lengths[n_pairs + a:n_pairs + b],
                                   order, bits)
    return out


def _windows(symbols: np.ndarray, lengths: np.ndarray, order: int, bits: int, side: int):
    """Packed keys ``pair | window of `order` symbols (0 past the end) | side`` per position."""
    units = lengths.size
    owner = np.repeat(np.arange(units, dtype=np.int64), lengths)
    pad = order - 1
    positions = np.arange(symbols.size, dtype=np.int64) + pad * owner
    padded = np.zeros(symbols.size + pad * units + pad, dtype=np.int64)
    padded[positions] = symbols
    window = padded.copy()
    for j in range(1, order):
        window <<= bits
        window[:-j] |= padded[j:]
    return (owner << (order * bits + 1)) | (window[positions] << 1) | side


def _matches_packed(hyp, hyp_len, ref, ref_len, order: int, bits: int) -> np.ndarray:
    pairs = hyp_len.size
    out = np.zeros((pairs, order), dtype=np.int64)
    keys = np.concatenate([_windows(hyp, hyp_len, order, bits, 0),
                           _windows(ref, ref_len, order, bits, 1)])
    if keys.size == 0:
        return out
    keys.sort()
    # Two neighbours share their pair and first n symbols iff their keys differ only below
    # bit 1 + (order - n) * bits; the side bit (1: reference) is counted by a running sum.
    differ = keys[1:] ^ keys[:-1]
    in_refs = np.concatenate([[0], np.cumsum(keys & 1)])
    mask = (1 << bits) - 1
    for n in range(1, order + 1):
        shift = 1 + (order - n) * bits
        starts = np.flatnonzero(differ >= (1 << shift)) + 1  # first of each group but one
        ends = np.append(starts, keys.size)
        starts = np.insert(starts, 0, 0)
        shared = ends - starts > 1  # a singleton cannot match
        starts, ends = starts[shared], ends[shared]
        first = keys[starts] >> shift
        in_ref = in_refs[ends] - in_refs[starts]
        both = np.minimum(ends - starts - in_ref, in_ref)
        both[(first & mask) == 0] = 0  # the n-th symbol is past the end: no n-gram
        out[:, n - 1] = np.bincount(first >> (n * bits), weights=both, minlength=pairs)
    return out


def _matches_general(symbols, lengths, n_pairs: int, order: int, vocab: int) -> np.ndarray:
    """The same counts by renumbering n-grams densely order by order (any vocabulary)."""
    out = np.zeros((n_pairs, order), dtype=np.int64)
    if symbols.size == 0:
        return out
    unit = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    pair = unit % n_pairs
    side = (unit >= n_pairs).astype(np.int64)
    remaining = np.concatenate([[0], np.cumsum(lengths)])[unit + 1] - np.arange(symbols.size)
    position = np.arange(symbols.size, dtype=np.int64)
    _, ids = np.unique(pair * (vocab + 1) + symbols, return_inverse=True)
    for n in range(1, order + 1):
        if n > 1:
            keep = remaining >= n
            position, pair, side, remaining, ids = (
                position[keep], pair[keep], side[keep], remaining[keep], ids[keep])
            if ids.size == 0:
                break
            _, ids = np.unique(ids * (vocab + 1) + symbols[position + n - 1],
                               return_inverse=True)
        groups = int(ids.max()) + 1
        in_ref = np.bincount(ids, weights=side, minlength=groups)
        in_hyp = np.bincount(ids, minlength=groups) - in_ref
        owner = np.zeros(groups, dtype=np.int64)
        owner[ids] = pair
        both = np.minimum(in_hyp, in_ref)
        out[:, n - 1] = np.rint(np.bincount(owner, weights=both, minlength=n_pairs))
    return out


def _pair_statistics(hyps: list[str], refs: list[str], options: ChrFOptions,
                     method: str = "auto") -> np.ndarray:
    """Statistics of hypothesis ``i`` against reference ``i``: shape (P, 3 * orders).

    ``method``: ``"auto"`` (``"counter"`` below :data:`SMALL` pairs, else ``"packed"``),
    ``"packed"`` (one sort of packed windows), ``"general"`` (dense renumbering, taken by
    ``"packed"`` where keys would not fit in 63 bits) or ``"counter"`` (plain dicts). All
    give the same integers; the tests hold them to each other and to sacrebleu.
    """
    if method == "auto":
        method = "counter" if len(hyps) < SMALL else "packed"
    if method == "counter":
        return _pair_statistics_counter(hyps, refs, options)
    packed = method == "packed"
    pairs = len(hyps)
    columns = []
    streams = [(options.char_order, _chars(hyps + refs, options.whitespace))]
    if options.word_order:
        streams.append((options.word_order, _words(hyps + refs)))
    for order, (symbols, lengths, vocab) in streams:
        matches = _matches(symbols, lengths, pairs, order, vocab, packed=packed)
        for n in range(1, order + 1):
            ref_count = np.maximum(lengths[pairs:] - n + 1, 0)
            hyp_count = np.where(ref_count > 0, np.maximum(lengths[:pairs] - n + 1, 0), 0)
            columns += [hyp_count, ref_count, matches[:, n - 1]]
    return np.column_stack(columns).astype(np.int64)


def _order_counts(hyp, ref, n: int) -> tuple[int, int, int]:
    """(hypothesis n-grams, reference n-grams, matches) of two strs or tuples of words."""
    ref_count = max(0, len(ref) - n + 1)
    if not ref_count:
        return 0, 0, 0
    hyp_count = max(0, len(hyp) - n + 1)
    in_ref = Counter([ref[i:i + n] for i in range(ref_count)])
    in_hyp = Counter([hyp[i:i + n] for i in range(hyp_count)])
    return hyp_count, ref_count, sum(min(c, in_ref[g]) for g, c in in_hyp.items() if g in in_ref)


def _pair_statistics_counter(hyps, refs, options: ChrFOptions) -> np.ndarray:
    char_order, word_order = options.char_order, options.word_order
    rows = []
    for hyp, ref in zip(hyps, refs):
        row: list[int] = []
        chars = [t if options.whitespace else "".join(t.split()) for t in (hyp, ref)]
        for n in range(1, char_order + 1):
            row += _order_counts(chars[0], chars[1], n)
        if word_order:
            words = [tuple(_split_words(t)) for t in (hyp, ref)]
            for n in range(1, word_order + 1):
                row += _order_counts(words[0], words[1], n)
        rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(len(rows), 3 * (char_order + word_order))


# --- Public functions ----------------------------------------------------------------------------


def chrf_statistics(
        hypotheses, references, *, char_order: int = ChrFOptions.char_order,
        word_order: int = ChrFOptions.word_order, beta: float = ChrFOptions.beta,
        lowercase: bool = ChrFOptions.lowercase, whitespace: bool = ChrFOptions.whitespace,
        eps_smoothing: bool = ChrFOptions.eps_smoothing, _method: str = "auto"
) -> CHRFStatistics:
    """Count the per-sentence sufficient statistics of chrF (chrF++ with ``word_order=2``).

    Parameters
    ----------
    hypotheses : list of str
        System outputs, one per sentence.
    references : list
        ``references[i]``: the reference string, or list of reference strings, of
        ``hypotheses[i]``. With several, the one giving the best sentence chrF is used (the
        first on ties), as in sacrebleu.
    char_order, word_order, beta, lowercase, whitespace, eps_smoothing :
        As in :func:`chrf`.

    Returns
    -------
    CHRFStatistics

    Examples
    --------
    A pair to count by hand, character orders 1-3: without spaces ``"thecat"`` against
    ``"thehat"``. Unigrams: 6 and 6, matching t, t, h, e, a (5). Bigrams: th he ec ca at
    against th he eh ha at, 3 match. Trigrams: the hec eca cat against the heh eha hat, 1.

    >>> stats = chrf_statistics(["the cat"], ["the hat"], char_order=3)
    >>> stats.matrix.tolist()
    [[6, 6, 5, 5, 5, 3, 4, 4, 1]]

    So precision and recall both average ``(5/6 + 3/5 + 1/4) / 3 = 0.5611``, and so does
    their F-β:

    >>> round(chrf_from_statistics(stats).score, 2)
    56.11
    """
    options = ChrFOptions(char_order=char_order, word_order=word_order, beta=beta,
                          lowercase=lowercase, whitespace=whitespace,
                          eps_smoothing=eps_smoothing)
    return _statistics(hypotheses, references, options, _method)


def _statistics(hypotheses, references, options: ChrFOptions,
                method: str = "auto") -> CHRFStatistics:
    """:func:`chrf_statistics` with its options checked (``method``: see
    :func:`_pair_statistics`)."""
    hypotheses = check_strings(hypotheses, "hypotheses")
    references = check_references(hypotheses, references)
    if options.lowercase:
        hypotheses = [h.lower() for h in hypotheses]
        references = [[r.lower() for r in refs] for refs in references]
    counts = {len(refs) for refs in references}
    n_refs = counts.pop() if len(counts) == 1 else None
    if n_refs == 1:
        matrix = _pair_statistics(hypotheses, [refs[0] for refs in references], options,
                                  method)
    else:
        owner = np.repeat(np.arange(len(hypotheses)), [len(refs) for refs in references])
        matrix = _pair_statistics([hypotheses[i] for i in owner],
                                  list(chain.from_iterable(references)), options, method)
        matrix = matrix[_best_references(_f_scores(matrix, options), owner)]
    return CHRFStatistics(matrix, **dataclasses.asdict(options), n_refs=n_refs)


def _best_references(f: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Index of the first pair with the highest ``f`` of each sentence (pairs grouped by
    ``owner``, in order): sacrebleu keeps a reference only if it is strictly better."""
    starts = np.flatnonzero(np.diff(owner, prepend=-1))
    best = np.maximum.reduceat(f, starts)
    candidates = np.where(f == best[owner], np.arange(f.size), f.size)
    return np.minimum.reduceat(candidates, starts)


def chrf_from_statistics(stats: CHRFStatistics) -> CHRFScore:
    """Corpus chrF from per-sentence statistics: the score of their column sums.

    Examples
    --------
    >>> stats = chrf_statistics(["the cat sat", "a dog"], ["the cat sat down", "the dog"])
    >>> round(chrf_from_statistics(stats).score, 4)
    56.9246
    >>> chrf_from_statistics(stats.take([0])).score == sentence_chrf(
    ...     "the cat sat", ["the cat sat down"]).score
    True
    """
    if not isinstance(stats, CHRFStatistics):
        raise TypeError(f"stats must be CHRFStatistics, got {type(stats).__name__}")
    if len(stats) == 0:
        raise ValueError("stats has no sentences")
    return CHRFScore(score=float(stats.corpus_score()), char_order=stats.char_order,
                     word_order=stats.word_order, beta=stats.beta, signature=stats.signature)


def chrf(
        hypotheses, references, *, char_order: int = ChrFOptions.char_order,
        word_order: int = ChrFOptions.word_order, beta: float = ChrFOptions.beta,
        lowercase: bool = ChrFOptions.lowercase, whitespace: bool = ChrFOptions.whitespace,
        eps_smoothing: bool = ChrFOptions.eps_smoothing) -> CHRFScore:
    """Corpus chrF (Popović, 2015), or chrF++ with ``word_order=2`` (Popović, 2017).

    Identical to sacrebleu 2.x's ``CHRF(...).corpus_score``: per-sentence statistics are
    summed over the corpus, then scored (see the module docstring).

    .. math::

        \\mathrm{chrF}_\\beta = 100\\cdot\\frac{(1+\\beta^2)\\,\\mathrm{chrP}\\cdot
        \\mathrm{chrR}}{\\beta^2\\,\\mathrm{chrP} + \\mathrm{chrR}}

    with ``chrP`` and ``chrR`` the character (and word) n-gram precision and recall averaged
    over the orders.

    Parameters
    ----------
    hypotheses : list of str
        System outputs.
    references : list
        ``references[i]``: the reference string or list of reference strings for
        ``hypotheses[i]`` (sacrebleu's transposed layout is refused; pass
        ``list(zip(*streams))``).
    char_order : int, default 6
        Character n-gram orders ``1..char_order``.
    word_order : int, default 0
        Word n-gram orders ``1..word_order``; 2 gives chrF++.
    beta : float, default 2
        Recall is ``beta`` times as important as precision.
    lowercase : bool, default False
        Lower-case hypotheses and references first.
    whitespace : bool, default False
        Keep whitespace in the character n-grams (sacrebleu removes it by default).
    eps_smoothing : bool, default False
        Average the per-order F scores with ``1e-16`` for undefined terms (``chrF++.py``,
        NLTK, Moses) instead of sacrebleu's default effective-order averaging of precision
        and recall.

    Returns
    -------
    CHRFScore

    Examples
    --------
    >>> hyps = ["the cat sat on the mat", "a dog barked"]
    >>> refs = [["the cat sat on the mat"], ["the dog barked loudly"]]
    >>> result = chrf(hyps, refs)
    >>> print(result)
    chrF2 = 73.57
    >>> print(chrf(hyps, refs, word_order=2))
    chrF2++ = 75.08
    >>> result.signature  # doctest: +ELLIPSIS
    'chrF2|nrefs:1|lowercase:no|eff:yes|nc:6|nw:0|space:no|version:...'
    """
    options = ChrFOptions(char_order=char_order, word_order=word_order, beta=beta,
                          lowercase=lowercase, whitespace=whitespace,
                          eps_smoothing=eps_smoothing)
    return chrf_from_statistics(_statistics(hypotheses, references, options))


def sentence_chrf(
        hypothesis: str, references, *, char_order: int = ChrFOptions.char_order,
        word_order: int = ChrFOptions.word_order, beta: float = ChrFOptions.beta,
        lowercase: bool = ChrFOptions.lowercase, whitespace: bool = ChrFOptions.whitespace,
        eps_smoothing: bool = ChrFOptions.eps_smoothing) -> CHRFScore:
    """chrF of one sentence, identical to sacrebleu's ``CHRF(...).sentence_score``.

    Parameters
    ----------
    hypothesis : str
        One system output.
    references : str or list of str
        Its reference(s); with several, the best one counts.
    char_order, word_order, beta, lowercase, whitespace, eps_smoothing :
        As in :func:`chrf`.

    Examples
    --------
    >>> round(sentence_chrf("the cat", "the hat", char_order=3).score, 2)
    56.11
    >>> sentence_chrf("the cat", ["a dog", "the cat"]).score
    100.0
    """
    check_string(hypothesis, "hypothesis")
    if not isinstance(references, str):
        references = check_strings(references, "references")
    options = ChrFOptions(char_order=char_order, word_order=word_order, beta=beta,
                          lowercase=lowercase, whitespace=whitespace,
                          eps_smoothing=eps_smoothing)
    return chrf_from_statistics(_statistics([hypothesis], [references], options))


def sentence_chrf_scores(
        hypotheses, references, *, char_order: int = ChrFOptions.char_order,
        word_order: int = ChrFOptions.word_order, beta: float = ChrFOptions.beta,
        lowercase: bool = ChrFOptions.lowercase, whitespace: bool = ChrFOptions.whitespace,
        eps_smoothing: bool = ChrFOptions.eps_smoothing) -> SentenceScores:
    """Sentence chrF of every hypothesis (the numbers :func:`sentence_chrf` gives one by one).

    Returns
    -------
    SentenceScores
        Array-like; ``item_scores`` holds the sentence scores, ``score`` their mean (which
        is *not* corpus chrF).

    Examples
    --------
    >>> scores = sentence_chrf_scores(["the cat", "a dog"], ["the cat", "the dog"])
    >>> [round(x, 2) for x in scores], round(scores.score, 2)
    ([100.0, 31.25], 65.62)
    """
    options = ChrFOptions(char_order=char_order, word_order=word_order, beta=beta,
                          lowercase=lowercase, whitespace=whitespace,
                          eps_smoothing=eps_smoothing)
    stats = _statistics(hypotheses, references, options)
    return SentenceScores(tuple(float(x) for x in stats.item_scores()), stats.signature)
