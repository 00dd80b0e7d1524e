"""NGramLM: hand values, a from-scratch Kneser–Ney reference, nltk parity, properties, bad input."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markeval.datasets import bbc_sentences
from markeval.lexical.ngram_lm import BOS, EOS, UNK, NGramLM
from markeval.lexical.perplexity import ZeroProbabilityWarning
from markeval.text import tokenize_many

SAM = [["I", "am", "Sam"], ["Sam", "I", "am"], ["I", "do", "not", "like", "green", "eggs", "and", "ham"]]


@pytest.fixture(scope="module")
def bbc():
    """Tokenised BBC sentences: article half 'a' for training, half 'b' for testing."""
    train = tokenize_many(bbc_sentences(split="a")["sentence"].tolist())
    test = tokenize_many(bbc_sentences(split="b")["sentence"].tolist())
    return [list(s) for s in train], [list(s) for s in test]


# -------------------------------------------------------------------- hand values


def test_jurafsky_martin_bigram_mle():
    lm = NGramLM(order=2, smoothing="mle", min_count=1).fit(SAM)
    expected = {("I", ()): 2 / 3, ("Sam", ()): 1 / 3, ("am", ("I",)): 2 / 3, (EOS, ("Sam",)): 1 / 2,
                ("Sam", ("am",)): 1 / 2, ("do", ("I",)): 1 / 3}
    for (word, ctx), p in expected.items():
        assert lm.prob(word, ctx) == pytest.approx(p)


def test_laplace_by_hand():
    lm = NGramLM(order=2, smoothing="add-k", k=1, min_count=1).fit(SAM)
    # 10 words + </s> + <unk> = 12 predictable symbols; c(I am) = 2, c(I) = 3.
    assert len(lm.vocabulary) == 12
    assert lm.prob("am", ["I"]) == pytest.approx((2 + 1) / (3 + 12))
    assert lm.prob("ham", ["I"]) == pytest.approx(1 / 15)


def test_kneser_ney_bigram_by_hand():
    real = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 5
    lm = NGramLM(order=2, discount=0.75).fit(real)
    # Continuation counts N1+(. w): the 1, cat 1, dog 1, sat 2, </s> 1; 6 bigram types, 5 words.
    p_the = 0.25 / 6 + 0.75 * 5 / 6 / 6
    assert lm.prob("the", []) == pytest.approx(9.25 / 10 + 0.075 * p_the)
    assert lm.prob("cat", ["the"]) == pytest.approx(0.425 + 0.75 * 2 / 10 * p_the)
    assert lm.prob("sat", ["cat"]) == pytest.approx(4.25 / 5 + 0.75 / 5 * (1.25 / 6 + 0.75 * 5 / 36))
    assert lm.prob(UNK, []) == pytest.approx(0.075 * 0.75 * 5 / 36)


def test_unigram_absolute_discounting_equals_mle_when_every_word_was_seen():
    # When every predictable symbol (<unk> included, thanks to min_count=2) has a count,
    # the mass freed by the discount (D * V / N) is returned uniformly: D / N each, i.e. MLE.
    corpus = [["a", "b", "a"], ["c", "a"], ["b", "d"]]
    kn = NGramLM(order=1, discount=0.5, min_count=2).fit(corpus)
    mle = NGramLM(order=1, smoothing="mle", min_count=2).fit(corpus)
    np.testing.assert_allclose(kn.distribution(), mle.distribution(), rtol=1e-12)
    # With min_count=1, <unk> has no count: it gets the uniform share, the others lose it.
    kn1 = NGramLM(order=1, discount=0.5, min_count=1).fit(corpus)
    assert kn1.prob(UNK) == pytest.approx(0.5 * 5 / 10 / 6)  # D * types / N / V


def test_unknown_words_min_count_and_fixed_vocabulary():
    lm = NGramLM(order=1, smoothing="mle", min_count=2).fit([["a", "b"], ["a", "c"]])
    assert lm.vocabulary == (UNK, EOS, "a")
    # b and c became <unk>: P(<unk>) = 2/6 in training; unseen test words get it too.
    assert lm.prob("b") == lm.prob("zebra") == lm.prob(UNK) == pytest.approx(2 / 6)
    fixed = NGramLM(order=1, smoothing="mle", vocabulary=["c", "a"]).fit([["a", "b"], ["a", "c"]])
    assert fixed.vocabulary == (UNK, EOS, "c", "a")
    assert fixed.prob("b") == pytest.approx(1 / 6)


def test_mle_zero_probability_gives_inf_with_a_warning():
    lm = NGramLM(order=2, smoothing="mle", min_count=1).fit(SAM)
    with pytest.warns(ZeroProbabilityWarning, match="smoothing='add-k' or smoothing='kneser-ney'"):
        r = lm.perplexity([["Sam", "am"], ["I", "am"]])
    assert r.perplexity == math.inf
    assert math.isinf(r.sequence_perplexities[0]) and math.isfinite(r.sequence_perplexities[1])
    assert lm.logprob("am", ["Sam"]) == -math.inf


def test_unigram_perplexity_by_hand():
    lm = NGramLM(order=1, smoothing="mle", min_count=1).fit([["a", "b"], ["a"]])
    # P(a) = 2/5, P(b) = 1/5, P(</s>) = 2/5; test "a b": (2/5 * 1/5 * 2/5) ** (-1/3).
    assert lm.perplexity([["a", "b"]]).perplexity == pytest.approx((2 / 5 * 1 / 5 * 2 / 5) ** (-1 / 3))


# ------------------------------------------------- from-scratch reference (dicts)


class ReferenceKN:
    """Interpolated (modified) Kneser–Ney written directly from Chen & Goodman's equations."""

    def __init__(self, sentences, order, vocabulary, discount, modified=False):
        self.order, self.vocab = order, set(vocabulary)
        self.n_pred = len(vocabulary)
        padded = [[BOS] * (order - 1) + [w if w in self.vocab else UNK for w in s] + [EOS] for s in sentences]
        grams = {m: Counter() for m in range(1, order + 1)}
        for s in padded:
            for i in range(order - 1, len(s)):
                for m in range(1, order + 1):
                    grams[m][tuple(s[i - m + 1: i + 1])] += 1
        self.counts = {order: grams[order]}
        for m in range(1, order):
            cont = Counter()
            for g in grams[m + 1]:
                cont[g[1:]] += 1
            self.counts[m] = cont
        self.d = {m: self._discounts(self.counts[m], discount, modified) for m in self.counts}
        self.tot, self.gamma = defaultdict(float), defaultdict(float)
        for m, table in self.counts.items():
            for g, c in table.items():
                self.tot[g[:-1]] += c
                self.gamma[g[:-1]] += self.d[m](c)

    @staticmethod
    def _discounts(table, discount, modified):
        if discount == "estimate":
            n = Counter(table.values())
            y = n[1] / (n[1] + 2 * n[2])
            ds = [j - (j + 1) * y * n[j + 1] / n[j] if modified else y for j in (1, 2, 3)]
        else:
            ds = list(discount) if isinstance(discount, tuple) else [discount] * 3
        return lambda c: 0.0 if c == 0 else ds[min(c, 3) - 1]

    def prob(self, word, history):
        h = tuple(history)
        m = len(h) + 1
        c = self.counts[m].get(h + (word,), 0)
        lower = 1 / self.n_pred if m == 1 else self.prob(word, h[1:])
        if self.tot[h] == 0:
            return lower
        return (c - self.d[m](c)) / self.tot[h] + self.gamma[h] / self.tot[h] * lower


def _reference_logprobs(ref, sentences, order, vocab):
    out = []
    for s in sentences:
        s = [BOS] * (order - 1) + [w if w in vocab else UNK for w in s] + [EOS]
        out.append([math.log(ref.prob(s[i], s[i - order + 1: i])) for i in range(order - 1, len(s))])
    return out


@pytest.mark.parametrize(
    ("smoothing", "discount"),
    [("kneser-ney", 0.75), ("kneser-ney", "estimate"), ("modified-kneser-ney", (0.6, 1.1, 1.4)),
     ("modified-kneser-ney", "estimate")],
)
def test_matches_reference_implementation_on_bbc(bbc, smoothing, discount):
    train, test = bbc[0][:400], bbc[1][:40]
    lm = NGramLM(order=3, smoothing=smoothing, discount=discount).fit(train)
    ref = ReferenceKN(train, 3, lm.vocabulary, discount, modified=smoothing.startswith("modified"))
    ours = lm.token_logprobs(test)
    theirs = _reference_logprobs(ref, test, 3, set(lm.vocabulary))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_mle_matches_nltk_on_bbc(bbc):
    from nltk.lm import MLE
    from nltk.lm.preprocessing import padded_everygram_pipeline

    train, test = bbc[0][:500], bbc[0][:20]  # test on seen sentences: MLE has no zeros there
    ngrams, words = padded_everygram_pipeline(3, train)
    ref = MLE(3)
    ref.fit(ngrams, words)
    lm = NGramLM(order=3, smoothing="mle", min_count=1).fit(train)
    for s in test:
        padded = [BOS, BOS, *s, EOS]
        for i in range(2, len(padded)):
            ctx = padded[i - 2: i]
            # tolerance 1e-12: both are ratios of the same integer counts
            assert lm.prob(padded[i], ctx) == pytest.approx(ref.score(padded[i], ctx), rel=1e-12)


def test_bbc_perplexity_falls_with_order(bbc):
    train, test = bbc
    ppl = [NGramLM(order=n).fit(train).perplexity(test).perplexity for n in (1, 2, 3)]
    assert ppl[0] > ppl[1] > ppl[2] > 50
    mkn = NGramLM(order=3, smoothing="modified-kneser-ney").fit(train).perplexity(test).perplexity
    assert mkn < ppl[2]


# --------------------------------------------------------------------- properties

words = st.sampled_from(list("abcde"))
corpora = st.lists(st.lists(words, min_size=0, max_size=8), min_size=1, max_size=12)
contexts = st.lists(st.sampled_from(list("abcdez") + [BOS]), max_size=4)
models = st.one_of(
    st.builds(lambda d: ("kneser-ney", d), st.one_of(st.floats(0.05, 1.0), st.just("estimate"))),
    st.builds(lambda a, b, c: ("modified-kneser-ney", (a, b, c)), st.floats(0.05, 1.0), st.floats(0.05, 2.0), st.floats(0.05, 3.0)),
    st.just(("modified-kneser-ney", "estimate")),
    st.builds(lambda k: ("add-k", k), st.floats(0.01, 2.0)),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora, st.integers(1, 4), models, st.lists(contexts, min_size=1, max_size=5), st.integers(1, 2))
def test_distributions_sum_to_one_for_any_context(corpus, order, model, ctxs, min_count):
    smoothing, param = model
    options = {"k": param} if smoothing == "add-k" else {"discount": param}
    lm = NGramLM(order=order, smoothing=smoothing, min_count=min_count, **options).fit(corpus)
    for ctx in ctxs:
        p = lm.distribution(ctx)
        assert p.shape == (len(lm.vocabulary),)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        assert (p > 0).all()  # smoothed: nothing in the vocabulary is impossible


@settings(max_examples=40, deadline=None)
@given(corpora, corpora, st.integers(1, 4), models)
def test_token_logprobs_agree_with_the_distributions(corpus, test, order, model):
    smoothing, param = model
    options = {"k": param} if smoothing == "add-k" else {"discount": param}
    lm = NGramLM(order=order, smoothing=smoothing, min_count=1, **options).fit(corpus)
    for s, lps in zip(test, lm.token_logprobs(test)):
        assert len(lps) == len(s) + 1
        full = s + [EOS]
        expected = [lm.logprob(w, full[:i]) for i, w in enumerate(full)]
        np.testing.assert_allclose(lps, expected, rtol=1e-10)
        if smoothing != "add-k" and param != "estimate":  # tiny corpora need the clipped estimates
            ref = ReferenceKN(corpus, order, lm.vocabulary, param, modified=smoothing.startswith("modified"))
            np.testing.assert_allclose(lps, _reference_logprobs(ref, [s], order, set(lm.vocabulary))[0], rtol=1e-9)


@settings(max_examples=30, deadline=None)
@given(corpora, st.integers(1, 3))
def test_mle_sums_to_one_after_seen_contexts(corpus, order):
    lm = NGramLM(order=order, smoothing="mle", min_count=1).fit(corpus)
    for s in corpus:
        for i in range(len(s) + 1):
            assert lm.distribution(s[:i]).sum() == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------------- generation


def test_generate_is_seeded_and_respects_the_vocabulary(bbc):
    lm = NGramLM(order=3).fit(bbc[0][:3000])
    a, b = lm.generate(5, seed=1), lm.generate(5, seed=1)
    assert a == b and a != lm.generate(5, seed=2)
    vocab = set(lm.vocabulary)
    assert all(w in vocab and w not in (UNK, EOS, BOS) for s in a for w in s)
    assert all(len(s) <= 7 for s in lm.generate(20, seed=0, max_length=7))
    assert lm.generate(3, seed=0, temperature=0) == lm.generate(3, seed=9, temperature=0)


def test_low_temperature_generates_more_probable_text(bbc):
    lm = NGramLM(order=2).fit(bbc[0][:3000])
    cold = lm.perplexity(lm.generate(100, seed=0, temperature=0.5)).perplexity
    warm = lm.perplexity(lm.generate(100, seed=0, temperature=1.5)).perplexity
    assert cold < warm


def test_allow_unk():
    lm = NGramLM(order=1, min_count=2).fit([["a", "b", "c", "d"], ["a"]])  # <unk> is most frequent
    sampled = [w for s in lm.generate(50, seed=0, allow_unk=True) for w in s]
    assert UNK in sampled
    assert UNK not in [w for s in lm.generate(50, seed=0) for w in s]


# ---------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"order": 0}, "order must be a positive int, got 0"), ({"smoothing": "witten-bell"}, "smoothing must be one of"),
     ({"smoothing": "add-k", "k": 0}, "k must be a positive"), ({"discount": 1.5}, r"discount must be in \(0, 1\]"),
     ({"smoothing": "modified-kneser-ney", "discount": 0.5}, r"\(D1, D2, D3\)"),
     ({"smoothing": "modified-kneser-ney", "discount": (0.5, 2.5, 1.0)}, "0 < D2 <= 2"),
     ({"min_count": 0}, "min_count must be a positive int, got 0")],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NGramLM(**kwargs)


def test_bad_sentences():
    lm = NGramLM(order=2)
    with pytest.raises(TypeError, match="not a single str: 'the cat sat'; tokenise first"):
        lm.fit("the cat sat")
    with pytest.raises(TypeError, match=r"sentences\[1\] must be a list of tokens, not a single str: 'b c'"):
        lm.fit([["a"], "b c"])
    with pytest.raises(ValueError, match="sentences is empty"):
        lm.fit([])
    with pytest.raises(ValueError, match="reserved boundary symbol"):
        lm.fit([["a", "</s>"]])
    with pytest.raises(TypeError, match="contains a int token"):
        lm.fit([["a", 3]])
    with pytest.raises(RuntimeError, match="call fit"):
        lm.perplexity([["a"]])
    lm.fit(SAM)
    with pytest.raises(ValueError, match="never predicts it"):
        lm.prob(BOS, ["I"])
    with pytest.raises(TypeError, match="context must be a sequence of tokens, not a str"):
        lm.prob("am", "I")
    with pytest.raises(ValueError, match="temperature"):
        lm.generate(1, temperature=-1)
    with pytest.raises(ValueError, match="n must be a positive int, got 0"):
        lm.generate(0)
