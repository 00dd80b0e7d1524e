"""Checkers for the chapter "Perplexity" (02): n-gram language models and perplexity."""

from __future__ import annotations

from markeval.exercises import Question

__all__ = ["corpus_perplexity", "kneser_ney", "sam"]

SAM = ["I am Sam", "Sam I am", "I do not like green eggs and ham"]


def _sam_perplexity():
    from markeval.lexical.ngram_lm import NGramLM

    mle = NGramLM(order=2, smoothing="mle", min_count=1).fit([s.split() for s in SAM])
    return mle.perplexity([["I", "am", "Sam"]]).perplexity


sam = Question(
    "Perplexity of 'I am Sam'",
    expected=_sam_perplexity,
    atol=5e-4,
    hints=["Four factors: P(I|<s>), P(am|I), P(Sam|am), P(</s>|Sam).",
           "The product is 2/3 * 2/3 * 1/2 * 1/2 = 1/9; take it to the power -1/4."],
    solution="(1/9) ** (-1/4) = sqrt(3) ≈ 1.732",
)


def _corpus_perplexity(seqs):
    from markeval.lexical.perplexity import perplexity

    return perplexity(logprobs=seqs).perplexity


corpus_perplexity = Question(
    "Corpus perplexity",
    reference=_corpus_perplexity,
    cases=lambda rng: [([(-rng.exponential(2.0, size=n)).tolist() for n in rng.integers(1, 30, size=k)],)
                       for k in (1, 2, 5, 10)],
    rtol=1e-9,
    hints=["Pool all tokens: total negative log-likelihood over the total number of tokens.",
           "math.exp(-sum(sum(s) for s in seqs) / sum(len(s) for s in seqs))"],
    solution="""
def my_perplexity(logprobs_list):
    total = sum(sum(s) for s in logprobs_list)
    n = sum(len(s) for s in logprobs_list)
    return math.exp(-total / n)
""",
)


def _kn_cases(rng):
    cases = []
    for _ in range(6):
        corpus = [[str(w) for w in rng.choice(list("abcdef"), size=rng.integers(1, 7))] for _ in range(8)]
        vocab = sorted({w for s in corpus for w in s}) + ["</s>", "<unk>"]
        cases.append((corpus, str(rng.choice(vocab)), str(rng.choice(["<s>", *vocab[:-2]]))))
    return cases


def _kn_bigram(sentences, word, previous):
    from markeval.lexical.ngram_lm import NGramLM

    lm = NGramLM(order=2, discount=0.75, min_count=1).fit(sentences)
    return lm.prob(word, [previous] if previous != "<s>" else [])


kneser_ney = Question(
    "Kneser-Ney bigram",
    reference=_kn_bigram,
    cases=_kn_cases,
    rtol=1e-9,
    hints=["Count bigrams (including <s> w and w </s>); c(prev) is the number of bigrams starting with prev.",
           "N1+(. w) is the number of distinct words seen before w; N1+(. .) the number of distinct bigram types.",
           "If prev was never seen as a context, P(w | prev) is just the unigram level."],
    solution="""
def my_kn_bigram(sentences, word, previous, d=0.75):
    bigrams = Counter((a, b) for s in sentences for a, b in zip(["<s>", *s], [*s, "</s>"]))
    vocab = {w for s in sentences for w in s} | {"</s>", "<unk>"}
    cont = Counter(b for (a, b) in bigrams)            # N1+(. w): distinct left neighbours
    p_uni = max(cont[word] - d, 0) / len(bigrams) + d * len(cont) / len(bigrams) / len(vocab)
    c_prev = sum(c for (a, b), c in bigrams.items() if a == previous)
    if c_prev == 0:
        return p_uni
    n_after = sum(1 for (a, b) in bigrams if a == previous)
    return max(bigrams[(previous, word)] - d, 0) / c_prev + d * n_after / c_prev * p_uni
""",
)
