"""Vectorised n-gram matching shared by BLEU and GLEU.

The readable version of what happens here is ``markeval.text.ngram_counts`` plus a loop
over sentences. That loop builds millions of small tuples and ``Counter`` objects; this
module replaces it by integer arithmetic on numpy arrays, exactly (no hashing, so no
collisions):

1. Reference tokens get integer ids ``0..V-1``; hypothesis tokens that never occur in a
   reference get ``-1`` (they cannot match anything).
2. n-grams are numbered order by order. A reference n-gram is its (n-1)-gram prefix
   number times ``V`` plus its last token id; ``np.unique`` turns these codes into dense
   numbers ``0..D_n-1``. A hypothesis n-gram is looked up in the sorted reference codes
   (``np.searchsorted``); it can only exist in a reference if its prefix did, so numbers
   stay small (``< D_{n-1} * V``) and never overflow.
3. Clipping is a join on the key ``sentence * G + ngram`` (``G`` = distinct reference
   n-grams of all orders): counts of each key in the hypotheses and (maximum) counts in
   the references, then ``min``. Per-sentence sums use ``np.bincount``.

:class:`NGramReferences` holds steps 1-2 and the reference half of step 3 for a set of
references, so that scoring many systems against the same references (all WMT systems of
a language pair) tokenises and counts the references only once.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, count, repeat
from typing import ClassVar

import numpy as np

from markeval._checks import check_bool, check_list, check_references, check_strings
from markeval.text import check_tokenizer, tokenize_many
from markeval._result import alias


@dataclass(frozen=True)
class SentenceScores:
    """Sentence-level scores of a corpus (BLEU or GLEU of each sentence on its own).

    It behaves like the 1-D float array it used to be (``np.asarray``, ``len``, iteration,
    indexing), and follows the result protocol: ``item_scores`` are the per-sentence
    scores, ``score`` their mean (the "mean sentence BLEU", which is *not* corpus BLEU).

    Attributes
    ----------
    scores : tuple of float
        One score per sentence, 0-100.
    signature : str
        The settings of the sentence-level metric.

    Examples
    --------
    >>> s = SentenceScores((100.0, 50.0), "toy")
    >>> s.score, len(s), s[1], np.asarray(s).tolist()
    (75.0, 2, 50.0, [100.0, 50.0])
    """

    scores: tuple[float, ...]
    signature: str
    higher_is_better: ClassVar[bool] = True

    @property
    def score(self) -> float:
        """Mean of the sentence scores (0 for an empty corpus)."""
        return float(np.mean(self.scores)) if self.scores else 0.0

    item_scores = alias("scores", "The per-sentence scores (alias of ``scores``).")

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.scores, dtype=np.float64 if dtype is None else dtype)

    def __len__(self) -> int:
        return len(self.scores)

    def __iter__(self):
        return iter(self.scores)

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            return self.scores[index]
        return np.asarray(self.scores)[index]  # slices, masks and index arrays, as an array


def _encode(token_lists, vocabulary: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids (``-1`` when not in ``vocabulary``) of all sentences, and their lengths."""
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    flat = chain.from_iterable(token_lists)
    ids = np.fromiter(map(vocabulary.get, flat, repeat(-1)), dtype=np.int64,
                      count=int(lengths.sum()))
    return ids, lengths


def _positions(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every token position: its sentence and how many tokens are left in it."""
    owner = np.repeat(np.arange(len(lengths)), lengths)
    ends = np.cumsum(lengths)
    remaining = ends[owner] - np.arange(int(ends[-1]) if len(ends) else 0)
    return owner, remaining


def count_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and how often each occurs."""
    if keys.size == 0:
        return keys, np.zeros(0, dtype=np.int64)
    return np.unique(keys, return_counts=True)


def lookup(sorted_keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``values`` at ``queries`` in ``sorted_keys``, and 0 where a query is absent."""
    if sorted_keys.size == 0:
        return np.zeros(queries.shape, dtype=np.int64)
    idx = np.minimum(np.searchsorted(sorted_keys, queries), sorted_keys.size - 1)
    return np.where(sorted_keys[idx] == queries, values[idx], 0)


class NGramReferences:
    """References tokenised and counted once, reusable across systems (BLEU and GLEU).

    Passing the same ``references`` list to :func:`markeval.bleu` for eleven systems
    tokenises and counts it eleven times; passing an ``NGramReferences`` does it once.
    The scores are identical either way.

    Parameters
    ----------
    references : list
        ``references[i]`` is the reference string, or list of reference strings, for
        hypothesis ``i``.
    tokenize : {"13a", "intl", "none"}
        Tokenizer (see :func:`markeval.text.tokenize_many`).
    lowercase : bool
        Lower-case before tokenising.

    Examples
    --------
    >>> from markeval.lexical.bleu import bleu
    >>> refs = NGramReferences(["the cat is on the mat"], tokenize="none")
    >>> len(refs), refs.n_refs
    (1, 1)
    >>> round(bleu(["the cat is on the mat"], refs).score, 6)
    100.0
    """

    def __init__(self, references, *, tokenize: str = "13a", lowercase: bool = False):
        if isinstance(references, NGramReferences):
            raise TypeError("references are already an NGramReferences object")
        self.tokenize = check_tokenizer(tokenize)
        self.lowercase = check_bool(lowercase, "lowercase")
        references = check_list(references, "references", "a list (one entry per hypothesis)")
        # The layout check needs only the number of hypotheses, which is len(references).
        self.references = check_references(range(len(references)), references)
        counts = [len(refs) for refs in self.references]
        self.n_refs: int | None = counts[0] if counts and min(counts) == max(counts) else None
        flat = [r for refs in self.references for r in refs]
        tokens = tokenize_many(flat, tokenize, lowercase=lowercase)
        flat_tokens = list(chain.from_iterable(tokens))
        # Ids in order of first appearance; dict/zip/map keep the loop in C.
        self.vocabulary: dict[str, int] = dict(zip(dict.fromkeys(flat_tokens), count()))
        self.ids = np.fromiter(
            map(self.vocabulary.__getitem__, flat_tokens), dtype=np.int64, count=len(flat_tokens)
        )
        self.lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        # ref_owner[r] is the hypothesis (sentence) that flat reference r belongs to.
        self.ref_owner = np.repeat(np.arange(len(counts)), counts)
        self.ref_starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        # For every reference token: its flat reference index, and tokens left in it.
        self._token_ref, self._remaining = _positions(self.lengths)
        # _codes[n-1]: sorted distinct codes of reference n-grams; _dense[n-1]: the dense
        # number of the n-gram starting at each token position (-1 where none fits).
        self._codes: list[np.ndarray] = []
        self._dense: list[np.ndarray] = []
        self._tables: dict = {}

    def __len__(self) -> int:
        return len(self.references)

    def __repr__(self) -> str:
        return (
            f"NGramReferences({len(self)} sentences, n_refs={self.n_refs}, "
            f"tokenize={self.tokenize!r}, lowercase={self.lowercase})"
        )

    @property
    def vocabulary_size(self) -> int:
        return len(self.vocabulary)

    def _extend(self, max_order: int) -> None:
        """Number the reference n-grams of every order up to ``max_order``."""
        v = max(self.vocabulary_size, 1)
        while len(self._codes) < max_order:
            n = len(self._codes) + 1
            if n == 1:
                dense = self.ids.copy()
                self._codes.append(np.arange(self.vocabulary_size, dtype=np.int64))
                self._dense.append(dense)
                continue
            prev = self._dense[-1]
            dense = np.full(self.ids.shape, -1, dtype=np.int64)
            fits = np.flatnonzero(self._remaining >= n)
            codes = prev[fits] * v + self.ids[fits + n - 1]
            uniq, inverse = np.unique(codes, return_inverse=True)
            dense[fits] = inverse
            self._codes.append(uniq)
            self._dense.append(dense)

    def offsets(self, max_order: int) -> np.ndarray:
        """``offsets[n-1]``: first global n-gram number of order ``n`` (length max_order+1)."""
        self._extend(max_order)
        sizes = [len(c) for c in self._codes[:max_order]]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def _ref_keys(self, min_order: int, max_order: int) -> tuple[np.ndarray, np.ndarray]:
        """(reference index, global n-gram number) of every reference n-gram occurrence."""
        offsets = self.offsets(max_order)
        refs, grams = [], []
        for n in range(min_order, max_order + 1):
            dense = self._dense[n - 1]
            ok = np.flatnonzero(dense >= 0)
            refs.append(self._token_ref[ok])
            grams.append(dense[ok] + offsets[n - 1])
        return np.concatenate(refs), np.concatenate(grams)

    def bleu_table(self, max_order: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Sorted keys ``sentence * G + ngram`` and the maximum count over the references."""
        key = ("bleu", max_order)
        if key not in self._tables:
            g = int(self.offsets(max_order)[-1])
            refs, grams = self._ref_keys(1, max_order)
            keys, counts = count_keys(refs * g + grams)
            if self.n_refs != 1:
                # Several references: clip by the largest count in any one of them.
                sentence_keys = self.ref_owner[keys // g] * g + keys % g
                order = np.argsort(sentence_keys, kind="stable")
                sentence_keys, counts = sentence_keys[order], counts[order]
                if sentence_keys.size:
                    starts = np.flatnonzero(np.diff(sentence_keys, prepend=-1))
                    keys = sentence_keys[starts]
                    counts = np.maximum.reduceat(counts, starts)
                else:
                    keys = sentence_keys
            self._tables[key] = (keys, counts, g)
        return self._tables[key]

    def gleu_table(self, min_order: int, max_order: int):
        """Per-reference counts: (reference index, key ``sentence * G + ngram``, count, G)."""
        key = ("gleu", min_order, max_order)
        if key not in self._tables:
            g = int(self.offsets(max_order)[-1])
            refs, grams = self._ref_keys(min_order, max_order)
            ref_keys, counts = count_keys(refs * g + grams)
            ref_index = ref_keys // g
            sentence_keys = self.ref_owner[ref_index] * g + ref_keys % g
            self._tables[key] = (ref_index, sentence_keys, counts, g)
        return self._tables[key]

    def hypothesis_keys(
        self, token_lists, min_order: int, max_order: int, g: int
    ) -> np.ndarray:
        """Keys ``sentence * g + ngram`` of every hypothesis n-gram that occurs in a reference."""
        self._extend(max_order)
        ids, lengths = _encode(token_lists, self.vocabulary)
        if ids.size == 0:
            return np.zeros(0, dtype=np.int64)
        owner, remaining = _positions(lengths)
        offsets = self.offsets(max_order)
        v = max(self.vocabulary_size, 1)
        # Follow only the n-grams still matching some reference n-gram: the candidates
        # shrink with every order. pos: start positions; dense: their n-gram numbers.
        pos = np.flatnonzero(ids >= 0)
        dense = ids[pos]
        keys = []
        for n in range(1, max_order + 1):
            if n > 1:
                fits = remaining[pos] >= n
                pos, dense = pos[fits], dense[fits]
                last = ids[pos + n - 1]
                known = last >= 0
                pos, codes = pos[known], dense[known] * v + last[known]
                codes_n = self._codes[n - 1]
                if codes_n.size == 0 or pos.size == 0:
                    break
                idx = np.minimum(np.searchsorted(codes_n, codes), codes_n.size - 1)
                found = codes_n[idx] == codes
                pos, dense = pos[found], idx[found]
            if n >= min_order:
                keys.append(owner[pos] * g + dense + offsets[n - 1])
        if not keys:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate(keys)

    def check_hypotheses(self, hypotheses, name: str = "hypotheses") -> list[str]:
        """Validate ``hypotheses`` against these references (count, types)."""
        hypotheses = check_strings(hypotheses, name)
        if len(hypotheses) != len(self):
            # Re-run the layout check so that the message (and transposition hint) is the
            # same as for plain lists.
            check_references(hypotheses, self.references)
        return hypotheses

    def tokenize_hypotheses(self, hypotheses) -> list[tuple[str, ...]]:
        return tokenize_many(hypotheses, self.tokenize, lowercase=self.lowercase)


def check_text_options(tokenize, lowercase) -> tuple[str | None, bool | None]:
    """BLEU's and GLEU's ``tokenize`` and ``lowercase``, checked; None (the prepared
    references' setting, or the default) stays None."""
    return (None if tokenize is None else check_tokenizer(tokenize),
            None if lowercase is None else check_bool(lowercase, "lowercase"))


def resolve_references(hypotheses, references, options) -> tuple[list[str], NGramReferences]:
    """Validate inputs and return ``(hypotheses, NGramReferences)``.

    ``options`` are BLEU's or GLEU's (checked): their ``tokenize``/``lowercase`` of ``None``
    mean the prepared references' settings, or ``"13a"``/``False`` for plain lists.
    Conflicting explicit settings are an error, because silently re-tokenising would make
    the cached references useless.
    """
    tokenize, lowercase = options.tokenize, options.lowercase
    if isinstance(references, NGramReferences):
        for arg, value, have in (
            ("tokenize", tokenize, references.tokenize),
            ("lowercase", lowercase, references.lowercase),
        ):
            if value is not None and value != have:
                raise ValueError(
                    f"{arg}={value!r} conflicts with the NGramReferences, which were "
                    f"prepared with {arg}={have!r}"
                )
        return references.check_hypotheses(hypotheses), references
    hypotheses = check_strings(hypotheses, "hypotheses")
    check_references(hypotheses, references)
    return hypotheses, prepare_references(references, tokenize=tokenize, lowercase=lowercase)


def prepare_references(references, *, tokenize: str | None = None,
                       lowercase: bool | None = None) -> NGramReferences:
    """:class:`NGramReferences` with BLEU's and GLEU's defaults for None (``"13a"``, not
    lower-cased): what their statistics build from a plain list, kept for many systems."""
    return NGramReferences(references, tokenize="13a" if tokenize is None else tokenize,
                           lowercase=False if lowercase is None else lowercase)


def closest_lengths(hyp_len: np.ndarray, prepared: NGramReferences) -> np.ndarray:
    """Per sentence, the reference length closest to the hypothesis length (ties: shorter)."""
    ref_len = prepared.lengths
    if ref_len.size == 0:
        return np.zeros(0, dtype=np.int64)
    width = int(ref_len.max()) + 1
    # Lexicographic (distance, length) packed into one integer, so that a minimum breaks
    # ties between equally distant references towards the shorter one.
    key = np.abs(ref_len - hyp_len[prepared.ref_owner]) * width + ref_len
    return np.minimum.reduceat(key, prepared.ref_starts) % width
