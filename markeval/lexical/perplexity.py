"""Perplexity and cross-entropy from per-token probabilities.

A language model that gives the tokens :math:`w_1 \\dots w_N` of a test text the
conditional probabilities :math:`q_i = q(w_i \\mid w_{<i})` has per-token
cross-entropy :math:`H = -\\frac{1}{N}\\sum_i \\log_2 q_i` bits and perplexity
:math:`2^H = (\\prod_i q_i)^{-1/N}`, the inverse geometric mean probability.

Over a corpus of several sequences there are two different averages, and tools
disagree on which one "perplexity" means, so both are reported by name:

* ``perplexity`` (micro): exp of the total negative log-likelihood over the total
  number of tokens, as if the corpus were one long sequence. This is the
  standard corpus perplexity (Jurafsky & Martin; the number language-modelling
  papers report).
* ``mean_sequence_perplexity`` (macro): the mean of the per-sequence
  perplexities. Short sequences weigh as much as long ones, and since
  :math:`x \\mapsto e^x` is convex it is never below the micro value (Jensen) when all
  sequences have the same length, and usually above it otherwise.

Zero probabilities are rejected with an error here (they make perplexity
infinite); :class:`markeval.NGramLM` returns ``inf`` with a warning for its
unsmoothed (MLE) models instead, because there the zero is the lesson.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from markeval._checks import check_list, check_numbers, check_same_length
from markeval._signature import make_signature
from markeval.lexical._perplexity_result import (PerplexityResult, ZeroProbabilityWarning,
                                                 check_units, perplexity_result)
from markeval.lexical.ngram_lm import NGramLM, check_sentences

__all__ = [
    "PerplexityResult",
    "ZeroProbabilityWarning",
    "cross_entropy",
    "distribution_cross_entropy",
    "forward_cross_entropy",
    "perplexity",
    "reverse_cross_entropy",
]

# Probabilities computed in float32 (a softmax) can overshoot 1 by a few ulps.
_ONE_TOLERANCE = 1e-6


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _check_base(value, name: str) -> float:
    """A logarithm base: a positive number other than 1."""
    if not _is_number(value) or not value > 0 or value == 1:
        raise ValueError(f"{name} must be a positive number other than 1, got {value!r}")
    return value


def _as_sequences(values, name: str) -> list[np.ndarray]:
    """One sequence (flat numbers) or a corpus (a list of sequences) → list of float arrays."""
    if isinstance(values, np.ndarray):
        if values.ndim == 1:
            values = [values]
        elif values.ndim == 2:
            values = list(values)
        else:
            raise ValueError(f"{name} must be 1-D (one sequence) or 2-D, got shape {values.shape}")
    else:
        values = check_list(values, name, "a sequence of numbers, or a list of them")
        if not values:
            raise ValueError(f"{name} is empty: at least one token probability is needed")
        if all(_is_number(v) for v in values):
            values = [values]
        elif any(_is_number(v) for v in values):
            raise TypeError(
                f"{name} mixes numbers and sequences: pass one flat sequence or a list of sequences"
            )
    out = []
    for i, seq in enumerate(values):
        arr = check_numbers(seq, f"{name}[{i}]")
        if arr.size == 0:
            raise ValueError(f"{name}[{i}] is empty: every sequence needs at least one token")
        if np.isnan(arr).any():
            raise ValueError(f"{name}[{i}] contains NaN at position {int(np.argmax(np.isnan(arr)))}")
        out.append(arr)
    return out


_ZERO_HINT = (
    "a zero probability makes the perplexity infinite (the model says the text is impossible); "
    "smooth the model (add-k, Kneser-Ney) so that no token gets probability 0"
)


def _nll(probabilities, logprobs, logprob_base) -> tuple[list[np.ndarray], str]:
    """Per-token negative log-likelihoods in nats, from exactly one of the two inputs."""
    if (probabilities is None) == (logprobs is None):
        raise TypeError("pass exactly one of probabilities=... or logprobs=...")
    if probabilities is not None:
        seqs = _as_sequences(probabilities, "probabilities")
        for i, p in enumerate(seqs):
            bad = np.flatnonzero((p <= 0) | (p > 1 + _ONE_TOLERANCE) | ~np.isfinite(p))
            if bad.size:
                j = int(bad[0])
                where = f"probabilities[{i}][{j}] = {float(p[j])!r}"
                if p[j] == 0:
                    raise ValueError(f"{where}: {_ZERO_HINT}")
                if p[j] > 1:
                    raise ValueError(
                        f"{where} is above 1: probabilities must be in (0, 1] "
                        "(log-probabilities go in logprobs=...)"
                    )
                raise ValueError(f"{where}: probabilities must be in (0, 1]")
        return [-np.log(np.minimum(p, 1.0)) for p in seqs], "prob"
    _check_base(logprob_base, "logprob_base")
    seqs = _as_sequences(logprobs, "logprobs")
    scale = math.log(logprob_base)
    out = []
    for i, lp in enumerate(seqs):
        bad = np.flatnonzero((lp > _ONE_TOLERANCE) | ~np.isfinite(lp))
        if bad.size:
            j = int(bad[0])
            where = f"logprobs[{i}][{j}] = {float(lp[j])!r}"
            if lp[j] == -np.inf:
                raise ValueError(f"{where}: {_ZERO_HINT}")
            if lp[j] == np.inf or lp[j] > 0:
                raise ValueError(
                    f"{where} is above 0, i.e. a probability above 1: log-probabilities must be <= 0 "
                    "(raw probabilities go in probabilities=...)"
                )
        out.append(-np.minimum(lp, 0.0) * scale)
    return out, "logprob"


def perplexity(probabilities=None, *, logprobs=None, logprob_base: float = math.e, n_units=None) -> PerplexityResult:
    """Perplexity of one sequence, or of a corpus of sequences, from per-token scores.

    Parameters
    ----------
    probabilities : sequence of float, or list of sequences, optional
        Per-token conditional probabilities ``q(w_i | history)``, each in (0, 1].
        A flat sequence is one text; a list of sequences is a corpus.
    logprobs : same layout, optional
        Per-token log-probabilities instead (each <= 0), in base ``logprob_base``.
    logprob_base : float, default e
        Base of ``logprobs`` (``math.e`` for torch/transformers, 2 for bits, 10 for ARPA files).
    n_units : int or sequence of int, optional
        Divide the total NLL by these counts (one per sequence) instead of the number
        of tokens: e.g. words, to turn a sub-word model's NLL into a per-word perplexity.

    Returns
    -------
    PerplexityResult
        ``perplexity`` (micro, the standard corpus value) and
        ``mean_sequence_perplexity`` (the mean of per-sequence values) among others.

    Examples
    --------
    Four calls to a phone system, three routed to a department with probability 1/4
    and one to a name with probability 1/120,000 (Jurafsky & Martin's slide):

    >>> round(perplexity([1/4, 1/4, 1/4, 1/120_000]).perplexity, 2)
    52.64
    >>> r = perplexity(logprobs=[[-1.0, -1.0], [-3.0]], logprob_base=2)
    >>> round(r.perplexity, 4), round(r.mean_sequence_perplexity, 4), r.n_tokens
    (3.1748, 5.0, 3)
    """
    nll, kind = _nll(probabilities, logprobs, logprob_base)
    n_tokens = np.array([len(x) for x in nll], dtype=np.int64)
    units = check_units(n_units, n_tokens)
    base = None if kind == "prob" else ("e" if logprob_base == math.e else logprob_base)
    sig = make_signature("perplexity", input=kind, base=base, units=None if n_units is None else "custom")
    return perplexity_result(np.array([x.sum() for x in nll]), n_tokens, units, sig)


def cross_entropy(probabilities=None, *, logprobs=None, logprob_base: float = math.e, base: float = 2, n_units=None) -> float:
    """Per-token cross-entropy of a model on a sample, ``-(1/N) sum_i log q(w_i | history)``.

    This is the Monte-Carlo estimate of :math:`H(p, q)` between the source of the
    text and the model; ``perplexity = base ** cross_entropy``. Over a corpus it is
    the micro average (total NLL over total tokens).

    Parameters
    ----------
    probabilities, logprobs, logprob_base, n_units
        As in :func:`perplexity`.
    base : float, default 2
        Output unit: 2 for bits (the textbook convention), ``math.e`` for nats.

    Returns
    -------
    float

    Examples
    --------
    >>> cross_entropy([0.5, 0.25])
    1.5
    >>> round(cross_entropy(logprobs=[-1.0, -2.0], base=math.e), 4)
    1.5
    """
    _check_base(base, "base")
    result = perplexity(probabilities, logprobs=logprobs, logprob_base=logprob_base, n_units=n_units)
    return result.cross_entropy_nats / math.log(base)


def distribution_cross_entropy(p, q, *, base: float = 2) -> float:
    """Cross-entropy :math:`H(p, q) = -\\sum_x p(x) \\log q(x)` between two distributions.

    With ``q = p`` it is the entropy :math:`H(p)`, and ``base ** H(p)`` is the
    perplexity of the distribution: the number of equally likely outcomes that
    would be as hard to predict (the branching factor).

    Parameters
    ----------
    p : sequence of float
        The true distribution (non-negative, sums to 1).
    q : sequence of float
        The model distribution over the same outcomes, in the same order.
    base : float, default 2
        Logarithm base (2: bits).

    Returns
    -------
    float
        ``inf`` when ``q`` gives probability 0 to an outcome that ``p`` does not.

    Examples
    --------
    >>> distribution_cross_entropy([0.5, 0.5], [0.5, 0.5])
    1.0
    >>> round(distribution_cross_entropy([0.5, 0.5], [0.9, 0.1]), 4)
    1.737
    """
    _check_base(base, "base")
    arrays = []
    for name, x in (("p", p), ("q", q)):
        arr = _as_sequences(x, name)
        if len(arr) != 1:
            raise ValueError(f"{name} must be one flat distribution")
        arr = arr[0]
        if (arr < 0).any() or (arr > 1 + _ONE_TOLERANCE).any() or not np.isfinite(arr).all():
            raise ValueError(f"{name} must contain probabilities in [0, 1], got {arr.tolist()[:8]}")
        if abs(arr.sum() - 1.0) > 1e-6:
            raise ValueError(f"{name} must sum to 1, sums to {float(arr.sum())!r}")
        arrays.append(arr)
    p, q = arrays
    check_same_length(p, q, "p", "q")
    support = p > 0
    if (q[support] == 0).any():
        return math.inf
    return float(-(p[support] * np.log(q[support])).sum() / math.log(base))


def _lm_options(order, smoothing, options):
    return {"order": order, "smoothing": smoothing, **options}


def forward_cross_entropy(generated, real, *, order: int = 3, smoothing: str = "kneser-ney", **options) -> PerplexityResult:
    """Forward cross-entropy: an n-gram LM trained on real text scores the generated text.

    Low values mean the samples are fluent *as judged by real text* (quality);
    a generator that repeats one fluent sentence scores well, so pair it with
    :func:`reverse_cross_entropy` (Cífka et al., 2018; used as a baseline in
    Mordido & Meinel, 2020, §5).

    Parameters
    ----------
    generated, real : list of list of str
        Tokenised sentences.
    order, smoothing, **options
        Passed to :class:`markeval.NGramLM`. The vocabulary comes from ``real``
        (``min_count`` rule) in both directions so that different generators are
        scored over the same vocabulary.

    Returns
    -------
    PerplexityResult
        ``cross_entropy_bits`` is the forward cross-entropy.

    Examples
    --------
    >>> real = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 5
    >>> round(forward_cross_entropy([["the", "cat", "sat"]], real, order=2).cross_entropy_bits, 3)
    0.378
    """
    generated, real = check_sentences(generated, "generated"), check_sentences(real, "real")
    lm = NGramLM(**_lm_options(order, smoothing, options)).fit(real)
    return lm.perplexity(generated)


def reverse_cross_entropy(generated, real, *, order: int = 3, smoothing: str = "kneser-ney", **options) -> PerplexityResult:
    """Reverse cross-entropy: an n-gram LM trained on generated text scores real text.

    High values mean the samples miss much of what real text contains (low
    diversity / coverage): a mode-collapsed generator yields an LM that finds
    real text surprising (Cífka et al., 2018).

    Parameters
    ----------
    generated, real : list of list of str
        Tokenised sentences.
    order, smoothing, **options
        Passed to :class:`markeval.NGramLM`. Unless ``vocabulary`` is given, the
        vocabulary is taken from ``real`` (``min_count`` rule) so that LMs trained
        on different generators share it and their scores compare.

    Returns
    -------
    PerplexityResult
        ``cross_entropy_bits`` is the reverse cross-entropy.

    Examples
    --------
    >>> real = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 5
    >>> collapsed = [["the", "cat", "sat"]] * 10
    >>> diverse = real
    >>> reverse_cross_entropy(collapsed, real, order=2).perplexity > reverse_cross_entropy(diverse, real, order=2).perplexity
    True
    """
    generated, real = check_sentences(generated, "generated"), check_sentences(real, "real")
    options = dict(options)
    if options.get("vocabulary") is None:
        vocab_lm = NGramLM(order=1, smoothing="add-k", min_count=options.get("min_count", 2)).fit(real)
        options["vocabulary"] = vocab_lm.vocabulary
    lm = NGramLM(**_lm_options(order, smoothing, options)).fit(generated)
    return lm.perplexity(real)

