"""The result every language-model score returns, and how it is built from per-sequence NLLs.

Shared by :mod:`~markeval.lexical.perplexity` (scores given as probabilities),
:mod:`~markeval.lexical.ngram_lm` and :mod:`~markeval.encoders.causal_lm` (models that score
texts), below all three so that none of them imports another for it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import check_int, check_list, check_same_length
from markeval._result import alias

__all__ = ["PerplexityResult", "ZeroProbabilityWarning"]


class ZeroProbabilityWarning(RuntimeWarning):
    """A model gave a test token probability 0, so the perplexity is infinite."""


@dataclass(frozen=True)
class PerplexityResult:
    """Perplexity of one sequence or a corpus, with its cross-entropy.

    Attributes
    ----------
    perplexity : float
        Micro (corpus) perplexity: ``exp(total NLL / total units)``; also :attr:`score`.
    cross_entropy_bits : float
        Per-unit cross-entropy in bits: ``log2(perplexity)``.
    cross_entropy_nats : float
        Per-unit cross-entropy in nats: ``ln(perplexity)``; what
        ``torch.nn.functional.cross_entropy`` returns.
    mean_sequence_perplexity : float
        Macro average: the mean of ``sequence_perplexities``.
    sequence_perplexities : tuple of float
        One perplexity per sequence; also :attr:`item_scores`.
    n_tokens : int
        Number of scored tokens (log-probabilities).
    n_units : int
        The denominator: ``n_tokens`` unless other units (e.g. words for a
        sub-word model) were given.
    n_sequences : int
        Number of sequences.
    signature : str
        How the number was computed.
    higher_is_better : bool
        ``False`` (class attribute): a lower perplexity is a better model of the text.

    Examples
    --------
    >>> from markeval.lexical.perplexity import perplexity
    >>> r = perplexity([[0.5, 0.5], [0.25]])
    >>> round(r.score, 4), r.item_scores, r.higher_is_better
    (2.5198, (2.0, 4.0), False)
    """

    perplexity: float
    cross_entropy_bits: float
    cross_entropy_nats: float
    mean_sequence_perplexity: float
    sequence_perplexities: tuple[float, ...]
    n_tokens: int
    n_units: int
    n_sequences: int
    signature: str

    higher_is_better: ClassVar[bool] = False

    score = alias("perplexity", "The headline number: the micro (corpus) :attr:`perplexity`.")

    item_scores = alias("sequence_perplexities")

    def __float__(self) -> float:
        return self.perplexity


def _exp(x: float) -> float:
    return math.exp(x) if x < 709.0 else math.inf


def perplexity_result(nll: np.ndarray, n_tokens: np.ndarray, n_units: np.ndarray,
                      signature: str) -> PerplexityResult:
    """Build a result from per-sequence NLLs (nats), token counts and unit counts."""
    total = float(nll.sum())
    units = int(n_units.sum())
    nats = total / units
    per_seq = tuple(_exp(float(x) / int(u)) for x, u in zip(nll, n_units))
    return PerplexityResult(
        perplexity=_exp(nats),
        cross_entropy_bits=nats / math.log(2),
        cross_entropy_nats=nats,
        mean_sequence_perplexity=float(np.mean(per_seq)),
        sequence_perplexities=per_seq,
        n_tokens=int(n_tokens.sum()),
        n_units=units,
        n_sequences=len(per_seq),
        signature=signature,
    )


def check_units(n_units, n_tokens: np.ndarray) -> np.ndarray:
    """The per-sequence denominators: ``n_tokens``, or the validated ``n_units`` (one per sequence)."""
    if n_units is None:
        return n_tokens
    if isinstance(n_units, (numbers.Integral, str)) and not isinstance(n_units, bool):
        n_units = [n_units]  # one sequence; a str is refused by check_int below
    units = check_list(n_units, "n_units", "an int or a sequence of ints (one per sequence)")
    check_same_length(units, n_tokens, "n_units", "the sequences")
    name = "n_units" if len(units) == 1 else "n_units[{}]"
    return np.array([check_int(u, name.format(i), minimum=1) for i, u in enumerate(units)],
                    dtype=np.int64)
