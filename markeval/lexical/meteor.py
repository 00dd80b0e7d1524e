"""METEOR (Banerjee & Lavie 2005): unigram alignment with exact, stem and synonym matches.

A hypothesis is aligned to a reference word by word in three stages, each on the
words left unmatched by the previous ones: identical (lower-cased) words, then
identical Porter stems, then WordNet synonyms. With ``m`` matches, a hypothesis of
``w_t`` words and a reference of ``w_r`` words,

    P = m / w_t,   R = m / w_r,   F_mean = P R / (alpha P + (1 - alpha) R),
    penalty = gamma (chunks / m) ** beta,   score = (1 - penalty) F_mean,

where ``chunks`` is the number of runs of matches that are contiguous and in the
same order in both sentences. With several references the best score counts.

Two alignment modes:

``"nltk"``
    NLTK 3.10's ``meteor_score`` exactly: each stage greedily matches hypothesis
    words from the last to the first, each to the last unused reference word that
    qualifies.
``"min_chunks"``
    Among the alignments with the most exact matches, then the most stem matches,
    then the most synonym matches (the staged maximum of Banerjee & Lavie), the one
    with the fewest chunks: an exact small integer program (HiGHS via SciPy). Same
    word-matching rules as ``"nltk"``, so only the choice of alignment differs.

Two synonym rules (``synonym_match``): ``"nltk"`` (the default, for parity) looks
WordNet up with the Porter *stems* of the words left over, so it misses big/large
("larg" is no WordNet lemma); ``"synset"`` asks whether the two words share a synset.
"""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import (check_bool, check_choice, check_number, check_probability,
                              check_references, check_string, check_strings)
from markeval._signature import make_signature
from markeval.lexical.stem import porter_stem
from markeval.lexical.wordnet import WordNet
from markeval._result import alias

MODES = ("nltk", "min_chunks")
SYNONYM_MATCHES = ("nltk", "synset")
STAGES = ("exact", "stem", "synonym")


@dataclass(frozen=True)
class MeteorResult:
    """METEOR of one hypothesis against its best reference.

    Attributes
    ----------
    score : float
        ``(1 - penalty) * fmean``; 0 when nothing matches or the hypothesis is empty.
    precision, recall, fmean : float
        ``m / w_t``, ``m / w_r`` and their weighted harmonic mean.
    fragmentation : float
        ``chunks / matches`` (0 without matches).
    penalty : float
        ``gamma * fragmentation ** beta``.
    matches, chunks : int
        Aligned word pairs, and the runs they form.
    hypothesis_length, reference_length : int
        Token counts ``w_t`` and ``w_r``.
    reference_index : int
        Which reference gave the best score (the first one on ties).
    alignment : tuple of (int, int, str)
        ``(hypothesis position, reference position, stage)`` sorted by hypothesis
        position; stage is ``'exact'``, ``'stem'`` or ``'synonym'``.
    signature : str
        Settings, e.g. ``meteor|mode:nltk|alpha:0.9|...``.
    """

    score: float
    precision: float
    recall: float
    fmean: float
    fragmentation: float
    penalty: float
    matches: int
    chunks: int
    hypothesis_length: int
    reference_length: int
    reference_index: int
    alignment: tuple[tuple[int, int, str], ...]
    signature: str
    higher_is_better: ClassVar[bool] = True

    @property
    def item_scores(self) -> tuple[float]:
        """The one sentence's score, as a 1-tuple (the result protocol's per-item scores)."""
        return (self.score,)


@dataclass(frozen=True)
class CorpusMeteorResult:
    """METEOR of a corpus: the mean of the sentence scores.

    Attributes
    ----------
    score : float
        Arithmetic mean of ``scores`` (NLTK's convention; the original METEOR
        instead pools matches and chunks over the corpus).
    scores : tuple of float
        Sentence-level METEOR of each hypothesis.
    signature : str
    """

    score: float
    scores: tuple[float, ...]
    signature: str
    higher_is_better: ClassVar[bool] = True

    item_scores = alias("scores")


# --- tokens -----------------------------------------------------------------------------------

def _tokenizer(tokenize) -> Callable[[str], list[str]]:
    if callable(tokenize):
        return lambda text: list(tokenize(text))
    if tokenize == "whitespace":
        return str.split
    if isinstance(tokenize, str):
        from markeval.text import TOKENIZERS, tokenize_many

        name = check_choice(tokenize, "tokenize", ("whitespace", *TOKENIZERS))
        return lambda text: list(tokenize_many([text], name)[0])
    raise TypeError(f"tokenize must be 'whitespace', a markeval.text tokenizer name or a "
                    f"callable, got {type(tokenize).__name__}")


@functools.lru_cache(maxsize=2**18)
def _synonym_set(wordnet: WordNet, word: str) -> frozenset[str]:
    # NLTK's rule: single-word lemma names (no "_") of every synset of the word, plus the word.
    return frozenset(n for n in wordnet.synonyms(word) if "_" not in n) | {word}


@functools.lru_cache(maxsize=2**18)
def _synset_ids(wordnet: WordNet, word: str) -> frozenset[tuple[str, int]]:
    return frozenset(wordnet.synsets(word))


@dataclass(frozen=True)
class _Sentence:
    words: tuple[str, ...]
    stems: tuple[str, ...]


def _prepare(tokens: list[str], lowercase: bool, stem: bool) -> _Sentence:
    words = tuple(t.lower() for t in tokens) if lowercase else tuple(tokens)
    return _Sentence(words, tuple(map(porter_stem, words)) if stem else words)


# --- alignment --------------------------------------------------------------------------------

def _greedy_stage(hyp_keys, ref_keys, hyp_left, ref_left):
    """NLTK's exact/stem stage: last hypothesis word first, to the last free equal reference word."""
    positions = defaultdict(list)
    for j in ref_left:
        positions[ref_keys[j]].append(j)
    pairs = []
    for i in reversed(hyp_left):
        free = positions.get(hyp_keys[i])
        if free:
            pairs.append((i, free.pop()))
    return pairs


def _synonym_keys(hyp: _Sentence, ref: _Sentence, s: _Settings):
    """Keys such that hypothesis word i and reference word j are synonyms iff their keys meet.

    ``'nltk'``: the reference stem is among the lemma names of the synsets of the hypothesis
    stem (plus the stem itself). ``'synset'``: the two words share a synset.
    """
    wordnet = s.wordnet
    if s.synonym_match == "nltk":
        return (lambda i: _synonym_set(wordnet, hyp.stems[i])), (lambda j: (ref.stems[j],))
    return (lambda i: _synset_ids(wordnet, hyp.words[i])), (
        lambda j: _synset_ids(wordnet, ref.words[j]))


def _greedy_synonym_stage(hyp_left, ref_left, hyp_keys, ref_keys):
    """NLTK's synonym stage: last hypothesis word first, to the last free reference synonym."""
    positions = defaultdict(list)  # key -> free reference positions, ascending
    for j in ref_left:
        for key in ref_keys(j):
            positions[key].append(j)
    taken = set()
    pairs = []
    for i in reversed(hyp_left):
        best = -1
        for key in hyp_keys(i) & positions.keys():
            free = positions[key]
            while free and free[-1] in taken:  # drop positions matched through another key
                free.pop()
            if free and free[-1] > best:
                best = free[-1]
        if best >= 0:
            taken.add(best)
            pairs.append((i, best))
    return pairs


def _align_nltk(hyp: _Sentence, ref: _Sentence, s: _Settings):
    hyp_left, ref_left = list(range(len(hyp.words))), list(range(len(ref.words)))
    alignment = []
    for stage in STAGES:
        if stage == "exact":
            pairs = _greedy_stage(hyp.words, ref.words, hyp_left, ref_left)
        elif stage == "stem" and s.stem:
            pairs = _greedy_stage(hyp.stems, ref.stems, hyp_left, ref_left)
        elif stage == "synonym" and s.wordnet is not None:
            pairs = _greedy_synonym_stage(hyp_left, ref_left, *_synonym_keys(hyp, ref, s))
        else:
            continue
        alignment += [(i, j, stage) for i, j in pairs]
        used_h, used_r = {i for i, _ in pairs}, {j for _, j in pairs}
        hyp_left = [i for i in hyp_left if i not in used_h]
        ref_left = [j for j in ref_left if j not in used_r]
    return sorted(alignment)


def _candidate_edges(hyp: _Sentence, ref: _Sentence, s: _Settings) -> dict[tuple[int, int], int]:
    """Every pair that some stage could match, labelled with the earliest such stage."""
    hyp_keys, ref_keys = _synonym_keys(hyp, ref, s) if s.wordnet is not None else (None, None)
    edges = {}
    for i, (w, stem) in enumerate(zip(hyp.words, hyp.stems)):
        keys = hyp_keys(i) if hyp_keys is not None else ()
        for j, (w2, stem2) in enumerate(zip(ref.words, ref.stems)):
            if w == w2:
                edges[i, j] = 0
            elif s.stem and stem == stem2:
                edges[i, j] = 1
            elif keys and not keys.isdisjoint(ref_keys(j)):
                edges[i, j] = 2
    return edges


def _align_min_chunks(hyp: _Sentence, ref: _Sentence, s: _Settings):
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    edges = _candidate_edges(hyp, ref, s)
    hyp_degree, ref_degree = defaultdict(int), defaultdict(int)
    for i, j in edges:
        hyp_degree[i] += 1
        ref_degree[j] += 1
    # An edge whose two words have no other candidate is in every maximum alignment.
    forced = {e for e in edges if hyp_degree[e[0]] == 1 and ref_degree[e[1]] == 1}
    keys = [e for e in edges if e not in forced]
    if not keys:
        return sorted((i, j, STAGES[edges[i, j]]) for i, j in edges)  # nothing to choose

    # Variables: x_e (free edge e is used) then y_l (free edges (i, j) and (i+1, j+1) both
    # used: one chunk boundary fewer). A link to a forced edge is simply worth 1 more for the
    # free edge. Lexicographic objective through weights: the most exact matches, then stem,
    # then synonym matches, then the most links (= fewest chunks); each weight exceeds all
    # that the lower levels can add (at most M of each, M = the most matches possible).
    index = {e: k for k, e in enumerate(keys)}
    big = min(len(hyp.words), len(ref.words)) + 1
    weights = [big**3, big**2, big]
    gain = [float(weights[edges[e]]) for e in keys]
    links = []
    for i, j in edges:
        nxt = (i + 1, j + 1)
        if nxt not in edges or ((i, j) in forced and nxt in forced):
            continue
        if (i, j) in forced:
            gain[index[nxt]] += 1
        elif nxt in forced:
            gain[index[i, j]] += 1
        else:
            links.append((index[i, j], index[nxt]))
    n_x, n_y = len(keys), len(links)
    cost = -np.array(gain + [1.0] * n_y)

    rows, cols, vals, upper = [], [], [], []

    def add_row(entries, bound):
        for col, val in entries:
            rows.append(len(upper))
            cols.append(col)
            vals.append(val)
        upper.append(bound)

    for side in (0, 1):  # each hypothesis word, and each reference word, is used at most once
        groups = defaultdict(list)
        for k, e in enumerate(keys):
            groups[e[side]].append((k, 1.0))
        for members in groups.values():
            if len(members) > 1:
                add_row(members, 1.0)
    for y, (a, b) in enumerate(links):  # a link needs both of its edges: y <= x_a, y <= x_b
        add_row([(n_x + y, 1.0), (a, -1.0)], 0.0)
        add_row([(n_x + y, 1.0), (b, -1.0)], 0.0)
    matrix = coo_array((vals, (rows, cols)), shape=(len(upper), n_x + n_y)).tocsr()
    solution = milp(cost, integrality=np.ones(n_x + n_y), bounds=Bounds(0, 1),
                    constraints=LinearConstraint(matrix, -np.inf, np.array(upper)),
                    options={"mip_rel_gap": 0.0})
    if not solution.success:  # pragma: no cover - the problem is always feasible (x = 0)
        raise RuntimeError(f"min_chunks alignment failed: {solution.message}")
    chosen = [keys[k] for k in np.flatnonzero(solution.x[:n_x] > 0.5)] + sorted(forced)
    return sorted((i, j, STAGES[edges[i, j]]) for i, j in chosen)


def _count_chunks(alignment) -> int:
    chunks = 1
    for (i, j, _), (i2, j2, _) in zip(alignment, alignment[1:]):
        if not (i2 == i + 1 and j2 == j + 1):
            chunks += 1
    return chunks


# --- scores -----------------------------------------------------------------------------------

def _score(hyp, ref, alignment, alpha, beta, gamma):
    """NLTK's arithmetic, operation for operation, so that floats agree to the last bit."""
    matches = len(alignment)
    if matches == 0 or not hyp.words:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0
    chunks = _count_chunks(alignment)
    precision = float(matches) / len(hyp.words)
    recall = float(matches) / len(ref.words)
    fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
    fragmentation = float(chunks) / matches
    penalty = gamma * fragmentation**beta
    return (1 - penalty) * fmean, precision, recall, fmean, fragmentation, penalty, chunks


@dataclass(frozen=True)
class _Settings:
    alpha: float
    beta: float
    gamma: float
    mode: str
    stem: bool
    wordnet: WordNet | None
    synonym_match: str
    tokenize: Callable[[str], list[str]]
    lowercase: bool
    signature: str


def _settings(alpha, beta, gamma, mode, stem, synonyms, synonym_match, tokenize, lowercase,
              wordnet):
    alpha = check_probability(alpha, "alpha")
    gamma = check_probability(gamma, "gamma")
    beta = check_number(beta, "beta", minimum=0.0)
    check_choice(mode, "mode", MODES)
    check_choice(synonym_match, "synonym_match", SYNONYM_MATCHES)
    for name, flag in (("stem", stem), ("synonyms", synonyms), ("lowercase", lowercase)):
        check_bool(flag, name)
    if synonyms:
        if wordnet is None or isinstance(wordnet, (str, os.PathLike)):
            # finding and reading the files is the edge's work (datasets), done on demand
            from markeval.datasets.wordnet import load_wordnet

            wordnet = load_wordnet(wordnet)
        elif not isinstance(wordnet, WordNet):
            raise TypeError(f"wordnet must be a WordNet, a path or None, got "
                            f"{type(wordnet).__name__}")
    else:
        wordnet = None
    modules = "+".join(["exact"] + ["stem"] * stem + ["synonym"] * synonyms)
    split = _tokenizer(tokenize)
    tok_name = getattr(tokenize, "__name__", "custom") if callable(tokenize) else tokenize
    signature = make_signature(
        "meteor", mode=mode, alpha=alpha, beta=beta, gamma=gamma, modules=modules,
        synonym_match=synonym_match if synonyms else None, tok=tok_name, lowercase=lowercase,
        wordnet=wordnet.version if wordnet is not None else None)
    return _Settings(alpha, beta, gamma, mode, stem, wordnet, synonym_match, split, lowercase,
                     signature)


def _sentence_meteor(hypothesis: str, references: list[str], s: _Settings,
                     name: str = "references") -> MeteorResult:
    hyp = _prepare(s.tokenize(hypothesis), s.lowercase, s.stem)
    align = _align_nltk if s.mode == "nltk" else _align_min_chunks
    best = None
    for k, reference in enumerate(references):
        ref = _prepare(s.tokenize(reference), s.lowercase, s.stem)
        if not ref.words:
            raise ValueError(f"{name}[{k}] has no tokens ({reference!r}): every reference "
                             "needs at least one word")
        alignment = align(hyp, ref, s)
        values = _score(hyp, ref, alignment, s.alpha, s.beta, s.gamma)
        if best is None or values[0] > best[0][0]:
            best = (values, k, len(ref.words), alignment)
    (score, precision, recall, fmean, fragmentation, penalty, chunks), k, ref_len, alignment = best
    return MeteorResult(
        score=float(score), precision=float(precision), recall=float(recall),
        fmean=float(fmean), fragmentation=float(fragmentation), penalty=float(penalty),
        matches=len(alignment), chunks=int(chunks) if alignment else 0,
        hypothesis_length=len(hyp.words), reference_length=ref_len, reference_index=k,
        alignment=tuple((int(i), int(j), stage) for i, j, stage in alignment),
        signature=s.signature)


def meteor(hypothesis: str, references: str | Sequence[str], *, alpha: float = 0.9,
           beta: float = 3.0, gamma: float = 0.5, mode: str = "nltk", stem: bool = True,
           synonyms: bool = True, synonym_match: str = "nltk",
           tokenize: str | Callable[[str], Sequence[str]] = "whitespace", lowercase: bool = True,
           wordnet: WordNet | str | os.PathLike | None = None) -> MeteorResult:
    """Sentence-level METEOR of one hypothesis against one or more references.

    Parameters
    ----------
    hypothesis : str
        The generated sentence. An empty one scores 0 (as in NLTK).
    references : str or sequence of str
        One reference, or several (the best score counts). Each needs a token.
    alpha : float in [0, 1], default 0.9
        Weight of precision in ``F_mean = P R / (alpha P + (1 - alpha) R)``; 0.9 gives
        ``10 P R / (R + 9 P)``, which favours recall.
    beta : float >= 0, default 3.0
        Shape of the fragmentation penalty ``gamma * (chunks / matches) ** beta``.
    gamma : float in [0, 1], default 0.5
        Maximum fragmentation penalty.
    mode : {'nltk', 'min_chunks'}, default 'nltk'
        Alignment: NLTK's greedy one, or the staged maximum with the fewest chunks.
    stem, synonyms : bool, default True
        Use the Porter-stem and the WordNet-synonym stages. ``synonyms=False`` needs
        no WordNet.
    synonym_match : {'nltk', 'synset'}, default 'nltk'
        When two words are synonyms. ``'nltk'``: the reference word's Porter stem is a
        lemma name of a WordNet synset of the hypothesis word's stem (NLTK's rule; it
        misses big/large, movie/film, happy/glad because WordNet does not know the
        stems "larg", "movi", "happi"). ``'synset'``: the two lower-cased words share a
        synset (each looked up with WordNet's morphology), as in Banerjee & Lavie.
    tokenize : 'whitespace', a :mod:`markeval.text` tokenizer name or callable
        How to split texts into words; default splits on white space, as for
        pre-tokenized text such as WMT's.
    lowercase : bool, default True
        Lower-case tokens before matching (NLTK's ``preprocess=str.lower``). The Porter
        stemmer lower-cases anyway, so with ``stem=True`` words differing only in case
        still match, at the stem stage.
    wordnet : WordNet or path, optional
        The WordNet for synonyms; default :func:`markeval.datasets.wordnet.load_wordnet`.

    Returns
    -------
    MeteorResult

    Raises
    ------
    TypeError, ValueError
        Bad types, parameters out of range, a reference without tokens.
    markeval.datasets.wordnet.WordNetNotFoundError
        ``synonyms=True`` and no WordNet installed (the message says how to install it).

    Examples
    --------
    All six words match. NLTK's greedy alignment pairs the two "the" crosswise and
    ends with six chunks; the fewest possible is three.

    >>> r = meteor("on the mat sat the cat", "the cat sat on the mat")
    >>> r.matches, r.chunks, round(r.penalty, 4), round(r.score, 4)
    (6, 6, 0.5, 0.5)
    >>> r = meteor("on the mat sat the cat", "the cat sat on the mat", mode="min_chunks")
    >>> r.matches, r.chunks, round(r.penalty, 4), round(r.score, 4)
    (6, 3, 0.0625, 0.9375)
    >>> r.signature  # doctest: +ELLIPSIS
    'meteor|mode:min_chunks|alpha:0.9|beta:3.0|gamma:0.5|modules:exact+stem+synonym|...'
    """
    check_string(hypothesis, "hypothesis")
    refs = check_references([hypothesis], [references])[0]
    s = _settings(alpha, beta, gamma, mode, stem, synonyms, synonym_match, tokenize, lowercase,
                  wordnet)
    return _sentence_meteor(hypothesis, refs, s)


def corpus_meteor(hypotheses: Sequence[str], references: Sequence[str | Sequence[str]], *,
                  alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5,
                  mode: str = "nltk", stem: bool = True, synonyms: bool = True,
                  synonym_match: str = "nltk",
                  tokenize: str | Callable[[str], Sequence[str]] = "whitespace",
                  lowercase: bool = True, wordnet: WordNet | str | os.PathLike | None = None,
                  progress: bool = True) -> CorpusMeteorResult:
    """Corpus METEOR: the arithmetic mean of the sentence-level scores.

    This is NLTK's and most toolkits' convention. The original METEOR scorer pools
    matches, lengths and chunks over the corpus before forming the score, which
    weighs long sentences more; the two differ.

    Parameters
    ----------
    hypotheses : sequence of str
    references : sequence of (str or sequence of str)
        ``references[i]`` is the reference, or list of references, for ``hypotheses[i]``.
    alpha, beta, gamma, mode, stem, synonyms, synonym_match, tokenize, lowercase, wordnet
        As in :func:`meteor`.
    progress : bool, default True
        Show a progress bar (METEOR with synonyms takes seconds on a test set).

    Returns
    -------
    CorpusMeteorResult

    Examples
    --------
    >>> r = corpus_meteor(["the cat sat on the mat", "a dog"],
    ...                   ["the cat sat on the mat", ["the dog barked", "a dog"]], progress=False)
    >>> [round(x, 4) for x in r.scores], round(r.score, 4)
    ([0.9977, 0.9375], 0.9676)
    """
    hypotheses = check_strings(hypotheses, "hypotheses")
    refs = check_references(hypotheses, references)
    progress = check_bool(progress, "progress")
    s = _settings(alpha, beta, gamma, mode, stem, synonyms, synonym_match, tokenize, lowercase,
                  wordnet)
    items = zip(hypotheses, refs)
    if progress:
        from tqdm.auto import tqdm

        items = tqdm(items, total=len(hypotheses), desc="METEOR")
    scores = tuple(_sentence_meteor(h, r, s, name=f"references[{i}]").score
                   for i, (h, r) in enumerate(items))
    return CorpusMeteorResult(score=float(sum(scores) / len(scores)), scores=scores,
                              signature=s.signature)
