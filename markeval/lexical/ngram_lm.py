"""N-gram language models trained with numpy: MLE, add-k and interpolated Kneser–Ney.

Training is vectorised: tokens are integer-encoded once, every m-gram gets an
integer id built from the id of its (m-1)-gram prefix and its last token
(``id_m = rank(id_{m-1} * V + w)``, so keys never overflow whatever the order),
and all counts come from ``np.unique`` / ``np.bincount`` on these id arrays.
A trigram model on a million tokens trains in about a second, where a
dict-of-Counters loop takes many times longer (see ``benchmarks/perplexity.py``).

Vocabulary and unknown words
----------------------------
The vocabulary is every training word seen at least ``min_count`` times (default
2), or an explicit ``vocabulary=`` list. Other words, in training and in test
text, become ``<unk>``: with ``min_count=2`` the training singletons give
``<unk>`` real counts, so the model learns how often a new word appears.
Perplexities are comparable only between models with the same vocabulary.

Each sentence is padded with ``order - 1`` start symbols ``<s>`` (context only,
never predicted) and one end symbol ``</s>``, which is predicted and counted as a
token, as in Jurafsky & Martin. The predictable vocabulary, over which every
conditional distribution sums to 1, is ``<unk>``, ``</s>`` and the words.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from markeval._checks import (check_bool, check_choice, check_int, check_list, check_number,
                              check_seed)
from markeval._signature import make_signature
from markeval.lexical._perplexity_result import (PerplexityResult, ZeroProbabilityWarning,
                                                 perplexity_result)

__all__ = ["BOS", "EOS", "UNK", "NGramLM"]

UNK, EOS, BOS = "<unk>", "</s>", "<s>"
_UNK, _EOS = 0, 1  # internal ids; <s> takes the last id, after the predictable symbols
_RESERVED = frozenset({BOS, EOS})
_SMOOTHINGS = ("mle", "add-k", "kneser-ney", "modified-kneser-ney")
_KN = ("kneser-ney", "modified-kneser-ney")


def check_sentences(sentences, name: str) -> list[Sequence[str]]:
    """``sentences`` as a non-empty list of tokenised sentences, each a list of str tokens
    without the reserved boundary symbols; errors name the argument and the sentence."""
    sentences = check_list(sentences, name, "a list of tokenised sentences (lists of str)",
                           "tokenise first, e.g. [s.split() for s in texts]")
    if not sentences:
        raise ValueError(f"{name} is empty: at least one sentence is needed")
    for i, sent in enumerate(sentences):
        sent = check_list(sent, f"{name}[{i}]", "a list of tokens")
        if not all(isinstance(t, str) for t in sent):
            bad = next(t for t in sent if not isinstance(t, str))
            raise TypeError(f"{name}[{i}] contains a {type(bad).__name__} token: {bad!r}")
        if not _RESERVED.isdisjoint(sent):
            raise ValueError(
                f"{name}[{i}] contains a reserved boundary symbol ({BOS} or {EOS}): the model adds "
                "them itself"
            )
    return sentences


class NGramLM:
    """An n-gram language model with MLE, add-k or interpolated (modified) Kneser–Ney smoothing.

    Parameters
    ----------
    order : int, default 3
        n: the model conditions on the previous ``order - 1`` tokens.
    smoothing : {"mle", "add-k", "kneser-ney", "modified-kneser-ney"}, default "kneser-ney"
        ``"mle"``: relative frequencies (unseen n-grams get probability 0).
        ``"add-k"``: add ``k`` to every count (``k=1`` is Laplace).
        ``"kneser-ney"``: interpolated Kneser–Ney (Chen & Goodman 1999)
        with one absolute discount per order; lower orders use continuation
        counts (the number of distinct left neighbours), and the unigram level is
        interpolated with the uniform distribution so that ``<unk>`` and every
        vocabulary word keep some probability.
        ``"modified-kneser-ney"``: the same with three discounts per order, for
        counts 1, 2 and 3+ (Chen & Goodman 1999).
    k : float, default 1.0
        Pseudo-count for add-k.
    discount : float, tuple of 3 floats, "estimate" or None
        Kneser–Ney discounts. ``None`` (default): 0.75 for ``"kneser-ney"`` (as in
        Jurafsky & Martin), estimated for ``"modified-kneser-ney"``. ``"estimate"``:
        per order from the count-of-counts n1, n2 …, as ``Y = n1 / (n1 + 2 n2)``
        (Ney et al. 1994) and ``D_j = j - (j + 1) Y n_{j+1} / n_j``. A float
        D in (0, 1] for ``"kneser-ney"``; a tuple ``(D1, D2, D3)`` with
        ``0 < D_j <= j`` for ``"modified-kneser-ney"``.
    min_count : int, default 2
        Training words seen fewer times become ``<unk>`` (ignored when
        ``vocabulary`` is given).
    vocabulary : iterable of str, optional
        A fixed vocabulary; every other word is ``<unk>``.

    Attributes
    ----------
    vocabulary : tuple of str
        After :meth:`fit`: the predictable symbols, ``("<unk>", "</s>", *words)`` with
        words by decreasing training frequency; :meth:`distribution` follows this order.
    n_train_tokens : int
        Predicted training tokens (words and ``</s>``).

    Examples
    --------
    >>> corpus = [["I", "am", "Sam"], ["Sam", "I", "am"], ["I", "do", "not", "like", "green", "eggs", "and", "ham"]]
    >>> lm = NGramLM(order=2, smoothing="mle", min_count=1).fit(corpus)
    >>> lm.prob("I", [])        # P(I | <s>) = 2/3, Jurafsky & Martin's example
    0.6666666666666666
    >>> lm.prob("Sam", ["am"])  # P(Sam | am) = 1/2
    0.5
    >>> kn = NGramLM(order=2, min_count=1).fit(corpus)
    >>> round(float(kn.distribution(["am"]).sum()), 9)
    1.0
    >>> kn.generate(2, seed=2)
    [['I', 'am', 'green'], ['Sam', 'do', 'I']]
    """

    def __init__(
        self,
        order: int = 3,
        smoothing: str = "kneser-ney",
        *,
        k: float = 1.0,
        discount: float | tuple[float, float, float] | str | None = None,
        min_count: int = 2,
        vocabulary: Iterable[str] | None = None,
    ):
        order = check_int(order, "order", minimum=1)
        smoothing = check_choice(smoothing, "smoothing", _SMOOTHINGS)
        if not check_number(k, "k") > 0:
            raise ValueError(f"k must be a positive number, got {k!r}")
        discount = self._check_discount(smoothing, discount)
        self.order = order
        self.smoothing = smoothing
        self.k = float(k)
        self.discount = discount
        self.min_count = check_int(min_count, "min_count", minimum=1)
        self._fixed_vocabulary = None if vocabulary is None else check_list(
            vocabulary, "vocabulary", "a collection of words")
        self._fitted = False

    @staticmethod
    def _check_discount(smoothing: str, discount):
        if discount is None:
            return 0.75 if smoothing == "kneser-ney" else "estimate"
        if discount == "estimate":
            return discount
        why = "so that no discounted count goes negative and the probabilities sum to 1"
        if smoothing == "modified-kneser-ney":
            ok = (isinstance(discount, (tuple, list)) and len(discount) == 3
                  and all(isinstance(d, (int, float)) and 0 < d <= j for j, d in enumerate(discount, 1)))
            if not ok:
                raise ValueError(
                    f"discount for modified Kneser-Ney must be 'estimate' or (D1, D2, D3) with "
                    f"0 < D1 <= 1, 0 < D2 <= 2, 0 < D3 <= 3 ({why}), got {discount!r}"
                )
            return tuple(float(d) for d in discount)
        if isinstance(discount, bool) or not isinstance(discount, (int, float)) or not 0 < discount <= 1:
            raise ValueError(f"discount must be in (0, 1] or 'estimate' ({why}), got {discount!r}")
        return float(discount)

    # ------------------------------------------------------------------ training
    def fit(self, sentences) -> NGramLM:
        """Count n-grams in tokenised ``sentences`` (a list of lists of str); return ``self``."""
        sentences = check_sentences(sentences, "sentences")
        if self._fixed_vocabulary is None:
            counts = Counter(t for s in sentences for t in s)
            words = sorted((w for w, c in counts.items() if c >= self.min_count and w != UNK),
                           key=lambda w: (-counts[w], w))
        else:
            words = list(dict.fromkeys(w for w in self._fixed_vocabulary if w not in (UNK, BOS, EOS)))
        self.vocabulary: tuple[str, ...] = (UNK, EOS, *words)
        self._stoi = {w: i for i, w in enumerate(self.vocabulary)}
        self._vp = len(self.vocabulary)  # predictable symbols
        self._bos = self._vp
        self._v = self._vp + 1  # with <s>

        tok = self._encode(sentences)
        predicted = tok != self._bos
        self.n_train_tokens = int(predicted.sum())
        n = self.order
        gram_ids = {1: tok}
        raw = {1: np.bincount(tok[predicted], minlength=self._v)}
        self._keys: dict[int, np.ndarray] = {}
        for m in range(2, n + 1):
            prev = np.empty_like(tok)
            prev[0] = 0  # position 0 is a <s>: its "gram" is never counted nor looked up
            prev[1:] = gram_ids[m - 1][:-1]
            keys, inv = np.unique(prev * self._v + tok, return_inverse=True)
            self._keys[m] = keys
            gram_ids[m] = inv.reshape(-1)
            raw[m] = np.bincount(gram_ids[m][predicted], minlength=len(keys))

        # Per order m: counts of each m-gram type and, per context type, their total and
        # (Kneser-Ney) the probability mass the discounts free for the lower order:
        # gamma(h) * total(h) = sum over seen continuations w of D(c(h w)). Lower KN
        # orders use continuation counts N1+(. h w): distinct (m+1)-gram types ending in (h w).
        kn = self.smoothing in _KN
        self._counts, self._totals, self._gamma, self._dvec = {}, {}, {}, {}
        for m in range(1, n + 1) if kn else [n]:
            if m == n:
                counts = raw[m]
            else:
                suffix = np.empty(len(raw[m + 1]), dtype=np.int64)
                suffix[gram_ids[m + 1]] = gram_ids[m]
                counts = np.bincount(suffix[raw[m + 1] > 0], minlength=len(raw[m]))
            self._counts[m] = counts = counts.astype(np.float64)
            freed = None
            if kn:
                self._dvec[m] = self._discounts(counts)
                freed = self._discount_of(m, counts)
            if m == 1:
                self._totals[m] = np.array([counts.sum()])
                if kn:
                    self._gamma[m] = np.array([freed.sum()])
            else:
                ctx = self._keys[m] // self._v
                size = len(raw[m - 1])
                self._totals[m] = np.bincount(ctx, weights=counts, minlength=size)
                if kn:
                    self._gamma[m] = np.bincount(ctx, weights=freed, minlength=size)
        if kn:
            c, tot = self._counts[1][: self._vp], self._totals[1][0]
            self._p1 = (c - self._discount_of(1, c)) / tot + self._gamma[1][0] / tot / self._vp
        self._fitted = True
        return self

    def _discounts(self, counts: np.ndarray) -> np.ndarray:
        """Discounts ``[0, D1, D2, D3+]`` of one order, indexed by min(count, 3)."""
        if self.discount != "estimate":
            d = self.discount
            return np.array([0.0, *((d,) * 3 if isinstance(d, float) else d)])
        # Estimates are clipped to [0.01, j]: on a tiny corpus a count-of-count can be 0,
        # and a zero discount would leave nothing for unseen words.
        n = [float((counts == j).sum()) for j in range(5)]
        y = n[1] / (n[1] + 2 * n[2]) if n[1] + 2 * n[2] > 0 else 0.5
        if self.smoothing == "kneser-ney":
            return np.array([0.0, *(3 * [min(max(y, 0.01), 1.0)])])
        d = [j - (j + 1) * y * n[j + 1] / n[j] if n[j] > 0 else y for j in (1, 2, 3)]  # Chen & Goodman
        return np.array([0.0, *(min(max(dj, 0.01), j) for j, dj in zip((1, 2, 3), d))])

    def _discount_of(self, m: int, counts: np.ndarray) -> np.ndarray:
        return self._dvec[m][np.minimum(counts, 3).astype(np.int64)]

    def _encode(self, sentences) -> np.ndarray:
        pad = [self._bos] * (self.order - 1)
        get = self._stoi.get
        flat: list[int] = []
        for s in sentences:
            flat.extend(pad)
            flat.extend([get(t, _UNK) for t in s])
            flat.append(_EOS)
        return np.asarray(flat, dtype=np.int64)

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise RuntimeError("this NGramLM is not trained yet: call fit(sentences) first")

    # ------------------------------------------------------------------ scoring
    def _lookup(self, tok: np.ndarray) -> dict[int, np.ndarray]:
        """Ids of the m-gram ending at each position (-1 where not seen in training)."""
        ids = {1: tok}
        for m in range(2, self.order + 1):
            prev = np.full_like(tok, -1)
            prev[1:] = ids[m - 1][:-1]
            keys = self._keys[m]
            key = prev * self._v + tok
            pos = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            ids[m] = np.where((prev >= 0) & (keys[pos] == key), pos, -1)
        return ids

    @staticmethod
    def _take(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.where(idx >= 0, table[np.maximum(idx, 0)], 0.0)

    def _probs_at(self, ids: dict[int, np.ndarray], pos: np.ndarray) -> np.ndarray:
        n = self.order
        if self.smoothing in _KN:
            p = self._p1[ids[1][pos]]
            for m in range(2, n + 1):
                tot = self._take(self._totals[m], ids[m - 1][pos - 1])
                c = self._take(self._counts[m], ids[m][pos])
                freed = self._take(self._gamma[m], ids[m - 1][pos - 1])
                safe = np.where(tot > 0, tot, 1.0)
                p = np.where(tot > 0, (c - self._discount_of(m, c) + freed * p) / safe, p)
            return p
        if n == 1:
            c, tot = self._counts[1][ids[1][pos]], np.full(len(pos), self._totals[1][0])
        else:
            c = self._take(self._counts[n], ids[n][pos])
            tot = self._take(self._totals[n], ids[n - 1][pos - 1])
        if self.smoothing == "add-k":
            return (c + self.k) / (tot + self.k * self._vp)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tot > 0, c / np.where(tot > 0, tot, 1.0), 0.0)

    def token_logprobs(self, sentences) -> list[np.ndarray]:
        """Natural-log probability of every token of every sentence, ``</s>`` included.

        Returns one float array per sentence, of length ``len(sentence) + 1``;
        ``-inf`` marks a zero probability (possible only with ``smoothing="mle"``).
        """
        self._check_fitted()
        sentences = check_sentences(sentences, "sentences")
        tok = self._encode(sentences)
        pos = np.flatnonzero(tok != self._bos)
        with np.errstate(divide="ignore"):
            logp = np.log(self._probs_at(self._lookup(tok), pos))
        return np.split(logp, np.cumsum([len(s) + 1 for s in sentences])[:-1])

    def perplexity(self, sentences) -> PerplexityResult:
        """Perplexity of tokenised ``sentences`` (``</s>`` counts as a token).

        An MLE model gives ``inf`` (with a :class:`ZeroProbabilityWarning`) as soon
        as one test n-gram was never seen in training.

        Examples
        --------
        >>> lm = NGramLM(order=1, smoothing="mle", min_count=1).fit([["a", "b"], ["a"]])
        >>> round(lm.perplexity([["a"]]).perplexity, 4)  # P(a) = 2/5, P(</s>) = 2/5
        2.5
        """
        logps = self.token_logprobs(sentences)
        nll = np.array([-lp.sum() for lp in logps])
        n_tok = np.array([len(lp) for lp in logps], dtype=np.int64)
        n_zero = int(sum(np.isneginf(lp).sum() for lp in logps))
        if n_zero:
            _warn_zero(n_zero, int(n_tok.sum()))
        return perplexity_result(nll, n_tok, n_tok, self.signature)

    @property
    def signature(self) -> str:
        self._check_fitted()
        per_order = 1 if self.smoothing == "kneser-ney" else 3
        discounts = ",".join(
            "/".join(f"{d:.4g}" for d in self._dvec[m][1 : 1 + per_order]) for m in sorted(self._dvec)
        )
        return make_signature(
            "ngram",
            order=self.order,
            smoothing=self.smoothing,
            k=self.k if self.smoothing == "add-k" else None,
            discount=discounts or None,
            unk="fixed-vocab" if self._fixed_vocabulary is not None else f"min_count:{self.min_count}",
            vocab=self._vp,
        )

    # -------------------------------------------------------- distributions
    def _context_ids(self, context) -> list[int]:
        if isinstance(context, str):
            raise TypeError(f"context must be a sequence of tokens, not a str: {context!r}")
        context = list(context)
        for t in context:
            if not isinstance(t, str):
                raise TypeError(f"context tokens must be str, got {type(t).__name__}: {t!r}")
        ids = [self._bos if t == BOS else self._stoi.get(t, _UNK) for t in context]
        if self.order == 1:
            return []
        ids = ids[-(self.order - 1):]
        return [self._bos] * (self.order - 1 - len(ids)) + ids

    def _gram_id(self, ids: Sequence[int]) -> int:
        """Id of the gram ``ids`` (length >= 1) or -1 when training never formed it."""
        g = ids[0]
        for j in range(1, len(ids)):
            keys = self._keys[j + 1]
            key = g * self._v + ids[j]
            i = int(np.searchsorted(keys, key))
            if i == len(keys) or keys[i] != key:
                return -1
            g = i
        return g

    def _distribution(self, ctx: list[int]) -> np.ndarray:
        n = self.order
        kn = self.smoothing in _KN
        orders = range(2, n + 1) if kn else ([n] if n > 1 else [])
        if kn:
            p = np.append(self._p1, 0.0)
        elif n == 1:
            c, tot = self._counts[1], self._totals[1][0]
            p = (c + self.k) / (tot + self.k * self._vp) if self.smoothing == "add-k" else c / tot
            p[self._bos] = 0.0
        for m in orders:
            h = self._gram_id(ctx[len(ctx) - (m - 1):])
            tot = self._totals[m][h] if h >= 0 else 0.0
            lo = hi = 0
            if tot > 0:
                keys = self._keys[m]
                lo, hi = np.searchsorted(keys, [h * self._v, (h + 1) * self._v])
            words, c = self._keys[m][lo:hi] - h * self._v, self._counts[m][lo:hi]
            if kn:
                if tot > 0:
                    p = p * (self._gamma[m][h] / tot)
                    p[words] += (c - self._discount_of(m, c)) / tot
            elif self.smoothing == "add-k":
                p = np.full(self._v, self.k / (tot + self.k * self._vp))
                p[words] += c / (tot + self.k * self._vp)
                p[self._bos] = 0.0
            else:
                p = np.zeros(self._v)
                if tot > 0:
                    p[words] += c / tot
        return p[: self._vp]

    def distribution(self, context: Sequence[str] = ()) -> np.ndarray:
        """Next-token probabilities after ``context``, aligned with :attr:`vocabulary`.

        Only the last ``order - 1`` tokens matter; a shorter context is the start of a
        sentence (left-padded with ``<s>``). Unknown context words are ``<unk>``. Sums
        to 1 for every context, except under MLE after a context never seen in
        training (all zeros: the MLE estimate 0/0 is undefined).
        """
        self._check_fitted()
        return self._distribution(self._context_ids(context))

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        """P(word | context); an out-of-vocabulary ``word`` gets the probability of ``<unk>``."""
        self._check_fitted()
        if not isinstance(word, str):
            raise TypeError(f"word must be a str, got {type(word).__name__}: {word!r}")
        if word == BOS:
            raise ValueError(f"{BOS} is a context-only symbol: the model never predicts it")
        return float(self.distribution(context)[self._stoi.get(word, _UNK)])

    def logprob(self, word: str, context: Sequence[str] = ()) -> float:
        """Natural log of :meth:`prob` (``-inf`` for a zero MLE probability)."""
        p = self.prob(word, context)
        return math.log(p) if p > 0 else -math.inf

    # ------------------------------------------------------------------ sampling
    def generate(
        self,
        n: int = 1,
        *,
        seed: int = 0,
        temperature: float = 1.0,
        max_length: int = 50,
        allow_unk: bool = False,
    ) -> list[list[str]]:
        """Sample ``n`` sentences (lists of tokens, without boundary symbols).

        Parameters
        ----------
        n : int
            Number of sentences.
        seed : int
            Seed of the numpy generator: the same seed gives the same sentences.
        temperature : float, default 1.0
            Sample from ``p ** (1 / temperature)`` renormalised: below 1 sharpens
            (more fluent, less diverse), above 1 flattens; 0 is greedy decoding.
        max_length : int
            Stop a sentence after this many tokens even without ``</s>``.
        allow_unk : bool, default False
            Whether ``<unk>`` may be generated (it is removed and the rest
            renormalised unless it is the only option).
        """
        self._check_fitted()
        n = check_int(n, "n", minimum=1)
        max_length = check_int(max_length, "max_length", minimum=1)
        temperature = check_number(temperature, "temperature", minimum=0.0)
        allow_unk = check_bool(allow_unk, "allow_unk")
        rng = np.random.default_rng(check_seed(seed))
        cache: dict[tuple[int, ...], np.ndarray] = {}
        out = []
        for _ in range(n):
            ctx = [self._bos] * (self.order - 1)
            sent: list[str] = []
            while len(sent) < max_length:
                key = tuple(ctx)
                if key not in cache:
                    cache[key] = self._sampling_distribution(ctx, temperature, allow_unk)
                cdf = cache[key]
                w = int(np.argmax(cdf)) if temperature == 0 else int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
                w = min(w, self._vp - 1)
                if w == _EOS:
                    break
                sent.append(self.vocabulary[w])
                ctx = (ctx + [w])[1:] if ctx else ctx
            out.append(sent)
        return out

    def _sampling_distribution(self, ctx: list[int], temperature: float, allow_unk: bool) -> np.ndarray:
        """The unnormalised cumulative distribution to sample from (probabilities, for greedy)."""
        p = self._distribution(ctx)
        if not allow_unk and p.sum() > p[_UNK]:
            p[_UNK] = 0.0  # _distribution returns a fresh array
        if temperature == 0:
            return p
        if temperature != 1:
            p = (p / p.max()) ** (1.0 / temperature)  # scaled first: no underflow at small T
        return np.cumsum(p)

    def __repr__(self) -> str:
        state = f", vocabulary={self._vp} symbols" if self._fitted else ", unfitted"
        return f"NGramLM(order={self.order}, smoothing={self.smoothing!r}{state})"


def _warn_zero(n_zero: int, n_total: int) -> None:
    warnings.warn(
        f"{n_zero} of {n_total} test tokens have probability 0 under the maximum-likelihood "
        "model (n-grams never seen in training), so the perplexity is infinite. Smoothing moves "
        "some probability to unseen n-grams: use smoothing='add-k' or smoothing='kneser-ney'.",
        ZeroProbabilityWarning,
        stacklevel=3,
    )
