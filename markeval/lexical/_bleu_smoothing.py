"""BLEU smoothing: sacrebleu's and NLTK's, reproduced operation by operation.

The scores agree with the reference implementations to the last bit or nearly (sacrebleu
2.6.0 ``BLEU.compute_bleu``; NLTK 3.10 ``corpus_bleu`` and ``SmoothingFunction``). sacrebleu's
smoothing is scored for many rows at once by :func:`markeval.lexical.bleu._scores_from_sums`,
with :func:`sacrebleu_log` for its logarithm; NLTK's, by :func:`nltk_bleu` one row at a time,
on plain Python integers and exact fractions. Quirks are kept on purpose and documented where
they happen.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

# Smoothing method -> default parameter (None: the method has none).
SACREBLEU_SMOOTHING = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
# NLTK's SmoothingFunction(epsilon=0.1, alpha=5, k=5): method1 uses epsilon, method4 and
# method7 use k, method6 uses alpha.
NLTK_SMOOTHING = {
    "nltk0": None, "nltk1": 0.1, "nltk2": None, "nltk3": None,
    "nltk4": 5, "nltk5": None, "nltk6": 5, "nltk7": 5,
}
SMOOTHING = tuple(SACREBLEU_SMOOTHING) + tuple(NLTK_SMOOTHING)
# NLTK's method5 always looks one order past 4: at the 5-gram precision of one sentence.
NLTK_METHOD5_ORDER = 5


def sacrebleu_log(x: float) -> float:
    """sacrebleu's ``my_log``: ``log(0)`` is "floored" to -9999999999, so ``exp`` of a mean
    that includes it is 0.0. The floor stays a Python ``int``, as in sacrebleu, so that
    ``sum`` adds exactly what sacrebleu's ``sum`` adds (the type changes how CPython >= 3.12,
    which compensates float sums, adds it)."""
    return -9999999999 if x == 0.0 else math.log(x)


def nltk_bleu(
    numerators: list[int],
    denominators: list[int],
    hyp_len: int,
    ref_len: int,
    smooth: str,
    value,
    last_len: int,
    last_5gram: tuple[int, int] | None,
    weights: tuple[float, ...] | None = None,
) -> tuple[float, list[float], float]:
    """Score (0-100), smoothed precisions (percent) and BP, as NLTK's ``corpus_bleu`` does.

    ``weights`` (one per order; default uniform, ``1 / n_orders``) weigh the log precisions
    as NLTK's ``weights`` argument does.

    ``denominators`` are NLTK's: the sum over sentences of ``max(1, n-gram count)``, so a
    sentence too short for an order still adds 1. ``last_len`` and ``last_5gram`` (clipped
    5-gram count and ``max(1, 5-gram count)``) describe the *last* sentence of the corpus:
    NLTK hands its loop variables to the smoothing function, so methods 5-7 use them.
    """
    n_orders = len(numerators)
    if hyp_len > ref_len:
        bp = 1
    elif hyp_len == 0:
        bp = 0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    if numerators[0] == 0:
        return 0.0, [0.0] * n_orders, float(bp)
    p = [Fraction(a, b) for a, b in zip(numerators, denominators)]
    if smooth == "nltk0":
        p = [pi if a != 0 else sys.float_info.min for pi, a in zip(p, numerators)]
    elif smooth == "nltk1":
        p = [(a + value) / b if a == 0 else pi for pi, a, b in zip(p, numerators, denominators)]
    elif smooth == "nltk2":
        p = [pi if i == 0 else Fraction(a + 1, b + 1)
             for i, (pi, a, b) in enumerate(zip(p, numerators, denominators))]
    elif smooth == "nltk3":
        incvnt = 1
        for i, (a, b) in enumerate(zip(numerators, denominators)):
            if a == 0:
                p[i] = 1 / (2**incvnt * b)
                incvnt += 1
    elif smooth == "nltk6":
        p = _nltk_method6(p, numerators, last_len, value)
    if smooth in ("nltk4", "nltk7"):
        incvnt = 1
        for i, (a, b) in enumerate(zip(numerators, denominators)):
            # NLTK's hyp_len here is the corpus length; with one token it skips smoothing
            # and leaves the zero precision, which the final sum then ignores.
            if a == 0 and hyp_len > 1:
                p[i] = (1 / (2**incvnt * value / math.log(hyp_len))) / b
                incvnt += 1
    if smooth in ("nltk5", "nltk7"):
        p = _nltk_method5(p, last_5gram)
    if weights is None:
        weights = (1 / n_orders,) * n_orders
    # NLTK skips non-positive precisions in the sum (as if they were 1), not just zeros
    # from failed smoothing; with nltk0 a zero is replaced by the smallest float instead.
    log_sum = math.fsum(w * math.log(pi) for w, pi in zip(weights, p) if pi > 0)
    score = bp * math.exp(log_sum)
    return 100 * score, [100 * float(pi) if pi > 0 else 0.0 for pi in p], float(bp)


def _nltk_method5(p: list, last_5gram: tuple[int, int]) -> list:
    # Average of the previous smoothed, the current and the next precision; "next" for the
    # highest order is the 5-gram precision of the last sentence only.
    nxt = p + [Fraction(*last_5gram)]
    previous = p[0] + 1
    out = list(p)
    for i, pi in enumerate(p):
        out[i] = (previous + pi + nxt[i + 1]) / 3
        previous = out[i]
    return out


def _nltk_method6(p: list, numerators: list[int], last_len: int, alpha) -> list:
    if len(p) < 3 or numerators[2] == 0:
        raise ValueError(
            "smooth='nltk6' needs max_order >= 3 and at least one matching trigram "
            "(NLTK asserts a non-zero trigram precision; its message says bigram)"
        )
    out = list(p)
    for i in range(2, len(p)):
        pi0 = 0 if out[i - 2] == 0 else out[i - 1] ** 2 / out[i - 2]
        # NLTK counts the (i+1)-grams of the last hypothesis only, even in corpus_bleu.
        n_ngrams = max(0, last_len - i)
        out[i] = (numerators[i] + alpha * pi0) / (n_ngrams + alpha)
    return out
