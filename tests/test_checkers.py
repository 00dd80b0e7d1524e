"""Every exercise checker of the book: a right answer passes, plausible wrong answers fail.

A registry in the style of scikit-learn's ``test_common.py``: ``REGISTRY`` maps every question
of every module in :mod:`markeval.exercises.checkers` (``"module.name"``) to one right answer
and at least two wrong ones — the mistakes a reader plausibly makes (off by one, no clipping,
natural instead of base-2 log, max instead of min, ...). The tests check that

- the registry covers every question, so a new checker without answers fails the suite;
- the right answer passes;
- every wrong answer fails, and the verdict (lines of at most 100 characters) names the failing
  case (its number and inputs), what the answer returned and, for a function question, what the
  reference returns there; a value question never shows its expected value;
- an untouched starter (``raise NotImplementedError``, ``None``) gets one neutral line.

Right answers are written independently of the checker's reference (from the definition, in
plain Python or NumPy), so a broken reference fails too. Nothing here loads a model except the
few checkers that need the encoder, and those run on small cases.
"""

from __future__ import annotations

import copy
import functools
import importlib
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from math import lgamma, log
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_wmt17
from markeval.exercises import Question, checkers
from markeval.exercises import close
from markeval.exercises._describe import WIDTH, describe as _describe, render as _render


@dataclass
class Entry:
    """Answers for one checker: ``right`` passes, each of ``wrong`` (label → answer) fails."""

    right: object
    wrong: dict
    cases: object = None  # smaller cases for a checker whose own are expensive (encoder runs)
    marks: tuple = field(default_factory=tuple)


# --------------------------------------------------------------------------- helpers


def _frontier_integral(p, q, lone=4):
    total = 0.0
    for a, b in zip(p, q):
        if a == 0 or b == 0:
            total += (a + b) / lone
        elif abs(a - b) > 1e-8:
            total += (a + b) / 4 - a * b * (math.log(a) - math.log(b)) / (2 * (a - b))
    return 2 * total


def _ngram_counter(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _char_stats(hypothesis, reference, n, *, strip=True, clip=True):
    def grams(text):
        chars = text.replace(" ", "") if strip else text
        return Counter(chars[i:i + n] for i in range(len(chars) - n + 1))

    h, r = grams(hypothesis), grams(reference)
    matches = (h & r) if clip else Counter({g: c for g, c in h.items() if g in r})
    return sum(h.values()), sum(r.values()), sum(matches.values())


def _centred(x):
    m = sum(x) / len(x)
    return [a - m for a in x]


def _pearson(x, y):
    dx, dy = _centred(x), _centred(y)
    return sum(a * b for a, b in zip(dx, dy)) / math.sqrt(sum(a * a for a in dx) * sum(b * b for b in dy))


def _kendall_counts(x, y):
    c = d = tx = ty = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            if sx == 0 and sy == 0:
                continue
            if sx == 0:
                tx += 1
            elif sy == 0:
                ty += 1
            elif sx == sy:
                c += 1
            else:
                d += 1
    return c, d, tx, ty


def _tau_b(x, y):
    c, d, tx, ty = _kendall_counts(x, y)
    return (c - d) / math.sqrt((c + d + tx) * (c + d + ty))


def _tau_b_ties_in_both(x, y):  # a pair tied in x and y wrongly enters both tie counts
    c, d, tx, ty = _kendall_counts(x, y)
    both = sum(1 for i in range(len(x)) for j in range(i + 1, len(x)) if x[i] == x[j] and y[i] == y[j])
    return (c - d) / math.sqrt((c + d + tx + both) * (c + d + ty + both))


def _tau_a(x, y):
    c, d, _, _ = _kendall_counts(x, y)
    return (c - d) / (len(x) * (len(x) - 1) / 2)


def _de_en_lengths():
    from markeval.datasets import wmt17_da_segments

    seg = wmt17_da_segments("de-en", with_text=True)
    ratio = np.array([len(h.split()) / len(r.split()) for h, r in zip(seg.hypothesis, seg.reference)])
    return ratio, seg.score.to_numpy()


def _length_agreement(kind):
    def value():
        from scipy import stats

        ratio, human = _de_en_lengths()
        if kind == "right":
            return float(stats.pearsonr(np.minimum(ratio, 1 / ratio), human).statistic)
        if kind == "ratio":
            return float(stats.pearsonr(ratio, human).statistic)
        return float(stats.spearmanr(np.minimum(ratio, 1 / ratio), human).statistic)
    return value


# perplexity ----------------------------------------------------------------


def _ppl(seqs, base=math.e):
    total, n = sum(sum(s) for s in seqs), sum(len(s) for s in seqs)
    return base ** (-total / n)


def _ppl_mean_of_sequences(seqs):
    return sum(math.exp(-sum(s) / len(s)) for s in seqs) / len(seqs)


def _kn(sentences, word, previous, d=0.75, continuation=True, interpolate=True):
    bigrams = Counter((a, b) for s in sentences for a, b in zip(["<s>", *s], [*s, "</s>"]))
    vocab = {w for s in sentences for w in s} | {"</s>", "<unk>"}
    if continuation:
        cont = Counter(b for (a, b) in bigrams)
        p_uni = max(cont[word] - d, 0) / len(bigrams) + d * len(cont) / len(bigrams) / len(vocab)
    else:  # raw unigram frequencies instead of continuation counts
        freq = Counter(b for (a, b), c in bigrams.items() for _ in range(c))
        p_uni = freq[word] / sum(freq.values())
    c_prev = sum(c for (a, b), c in bigrams.items() if a == previous)
    if c_prev == 0:
        return p_uni
    n_after = sum(1 for (a, b) in bigrams if a == previous)
    if not interpolate:
        return max(bigrams[(previous, word)] - d, 0) / c_prev
    return max(bigrams[(previous, word)] - d, 0) / c_prev + d * n_after / c_prev * p_uni


# BLEU and GLEU --------------------------------------------------------------


def _modified_precision(hypothesis, references, n, combine="max", clip=True):
    hyp = _ngram_counter(hypothesis.split(), n)
    refs = [_ngram_counter(r.split(), n) for r in references]
    most = Counter()
    for r in refs:
        most = most | r if combine == "max" else most + r
    if not clip:
        return sum(c for g, c in hyp.items() if most[g]), sum(hyp.values())
    return sum(min(c, most[g]) for g, c in hyp.items()), sum(hyp.values())


def _bp(c, r):
    return 1.0 if c > r else (math.exp(1 - r / c) if c > 0 else 0.0)


def _gleu_counts(hypothesis, reference, max_n=4):
    h_tokens, r_tokens = hypothesis.split(), reference.split()
    m = h = r = 0
    for n in range(1, max_n + 1):
        hc, rc = _ngram_counter(h_tokens, n), _ngram_counter(r_tokens, n)
        m += sum((hc & rc).values())
        h += sum(hc.values())
        r += sum(rc.values())
    return m, h, r


def _gleu(hypothesis, references, max_n=4, combine="best", denominator=max):
    scores = []
    for reference in references:
        m, h, r = _gleu_counts(hypothesis, reference, max_n)
        if max(h, r) > 0:
            scores.append(m / denominator(h, r) if denominator(h, r) else 0.0)
    if not scores:
        return 0.0
    return max(scores) if combine == "best" else sum(scores) / len(scores)


# METEOR ---------------------------------------------------------------------


def _chunks(alignment, sort=True, plus_one=True, hyp_only=False):
    pairs = sorted(alignment) if sort else list(alignment)
    if not pairs:
        return 0
    breaks = sum(1 for (i, j), (k, l) in zip(pairs, pairs[1:])
                 if (k != i + 1 if hyp_only else (k, l) != (i + 1, j + 1)))
    return breaks + 1 if plus_one else breaks


def _meteor(m, chunks, hyp_len, ref_len, alpha=0.9, beta=3.0, gamma=0.5, variant="right"):
    if m == 0:
        return 0.0
    p, r = m / hyp_len, m / ref_len
    if variant == "swapped alpha":
        f = p * r / (alpha * r + (1 - alpha) * p)
    elif variant == "F1":
        f = 2 * p * r / (p + r)
    else:
        f = p * r / (alpha * p + (1 - alpha) * r)
    return f * (1 - gamma * (chunks / m) ** beta)


def _meteor_by_hand(chunks=2, penalty=True):
    p, r = 5 / 7, 5 / 6
    f = 10 * p * r / (r + 9 * p)
    return f * (1 - 0.5 * (chunks / 5) ** 3) if penalty else f


# ROUGE ----------------------------------------------------------------------


def _lcs(a, b):
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    return t[-1][-1]


def _longest_common_substring(a, b):
    best = 0
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                t[i][j] = t[i - 1][j - 1] + 1
                best = max(best, t[i][j])
    return best


def _rouge_n(hypothesis, references, n, clip=True, measure="recall", first_only=False):
    h = _ngram_counter(hypothesis, n)
    best = 0.0
    for ref in references[:1] if first_only else references:
        r = _ngram_counter(ref, n)
        match = sum(min(c, h[g]) if clip else (c if g in h else 0) for g, c in r.items())
        total = sum(r.values()) if measure == "recall" else sum(h.values())
        if total:
            best = max(best, match / total)
    return best


# embeddings -----------------------------------------------------------------


def _n_pieces_with_specials():
    from markeval.encoders import default_model

    return len(default_model().tokenizer("Tokenization is unbelievable!")["input_ids"])


def _idf(docs, per_document=True, smooth=True, logarithm=math.log):
    df = Counter(t for d in docs for t in (set(d) if per_document else d))
    m = len(docs)
    return {t: logarithm((m + 1) / (c + 1)) if smooth else logarithm(m / c) for t, c in df.items()}


def _unit(x):
    x = np.asarray(x, dtype=float)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _greedy(h, r, hw, rw, normalise=True, swap=False, weighted=True):
    sim = (_unit(h) @ _unit(r).T) if normalise else (np.asarray(h) @ np.asarray(r).T)
    rows, cols = (sim.max(axis=0), sim.max(axis=1)) if swap else (sim.max(axis=1), sim.max(axis=0))
    if weighted and not swap:
        p, rec = rows @ hw / hw.sum(), cols @ rw / rw.sum()
    else:
        p, rec = rows.mean(), cols.mean()
    return float(p), float(rec), float(2 * p * rec / (p + rec))


def _baseline(index):
    import json

    from markeval.semantic.baseline import BASELINE_FILE

    data = json.loads(Path(BASELINE_FILE).read_text(encoding="utf-8"))
    layers = data["models"]["sentence-transformers/all-MiniLM-L6-v2"]["layers"]
    last = max(layers, key=int)  # MiniLM-L6: hidden states 0-6, the last is 6
    return layers[last][index]


def _rescaled(kind):
    def value():
        b_f = _baseline(2)
        if kind == "right":
            return (0.60 - b_f) / (1 - b_f)
        if kind == "inverse map":
            return 0.60 * (1 - b_f) + b_f
        return 0.60 - b_f  # forgot to divide by 1 - b
    return value


# distributions --------------------------------------------------------------


def _radii_sq(points, k, drop_zeros=False, own_column=False):
    d = ((points[:, None, :] - points[None, :, :]) ** 2).sum(-1)
    if drop_zeros:  # drops the duplicates' zero distances along with the point itself
        return np.array([np.sort(row[row > 0])[k - 1] if (row > 0).sum() >= k else np.inf for row in d])
    return np.sort(d, axis=1)[:, k - 1 if own_column else k]


def _ipr_precision(reference, candidate, k, strict=False, **radius):
    ref, cand = np.asarray(reference, float), np.asarray(candidate, float)
    r2 = _radii_sq(ref, k, **radius)
    cross = ((cand[:, None, :] - ref[None, :, :]) ** 2).sum(-1)
    inside = cross < r2[None, :] if strict else cross <= r2[None, :]
    return float(inside.any(axis=1).mean())


def _fid_1d(x, y, stdev=statistics.stdev, square_means=True, variances=False):
    mean_gap = (statistics.mean(x) - statistics.mean(y))
    mean_term = mean_gap ** 2 if square_means else abs(mean_gap)
    if variances:
        return mean_term + (statistics.variance(x) - statistics.variance(y)) ** 2
    return mean_term + (stdev(x) - stdev(y)) ** 2


def _prd(p, q, num_angles, variant="right"):
    p, q = np.asarray(p), np.asarray(q)
    if variant == "swapped p, q":
        p, q = q, p
    lambdas = np.tan(np.linspace(1e-10, np.pi / 2 - 1e-10, num_angles))
    alpha = np.minimum(lambdas[:, None] * p, q).sum(axis=1)
    precision, recall = np.clip(alpha, 0, 1), np.clip(alpha / lambdas, 0, 1)
    return (recall, precision) if variant == "swapped outputs" else (precision, recall)


# population estimators ------------------------------------------------------


def _xlogx(x):
    return 0.0 if x == 0 else x * log(x)


def _m0(N, T, n, M, variant="right"):
    if variant == "lgamma(N)":
        return lgamma(N) - lgamma(N - M) + _xlogx(n) + _xlogx(T * N - n) - _xlogx(T * N)
    if variant == "no (TN - n) term":
        return lgamma(N + 1) - lgamma(N - M + 1) + _xlogx(n) - _xlogx(T * N)
    return lgamma(N + 1) - lgamma(N - M + 1) + _xlogx(n) + _xlogx(T * N - n) - _xlogx(T * N)


def _schnabel(history, marked_after=False, plus_one=False):
    seen = np.zeros(history.shape[1], dtype=bool)
    num = den = 0
    for row in history.astype(bool):
        if marked_after:
            seen_before = seen.copy()
            seen |= row
            num += row.sum() * seen.sum()
            den += (row & seen_before).sum()
        else:
            num += row.sum() * seen.sum()
            den += (row & seen).sum()
            seen |= row
    if plus_one:
        return num / (den + 1)
    return math.inf if den == 0 else num / den


def _me_petersen(S, Sp, k, clip=True, self_neighbour=False, chapman=False):
    def r2(x):
        d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        if not self_neighbour:
            np.fill_diagonal(d, np.inf)
        return np.sort(d, axis=1)[:, k - 1]
    cross = ((S[:, None, :] - Sp[None, :, :]) ** 2).sum(-1)
    a = int((cross <= r2(S)[:, None]).any(axis=0).sum())
    b = int((cross <= r2(Sp)[None, :]).any(axis=1).sum())
    M, C, R = len(S) + a, len(Sp) + b, a + b
    P = len(S) + len(Sp)
    if chapman:
        return 1 - min(abs((M + 1) * (C + 1) / (R + 1) - 1 - P) / P, 1)
    if R == 0:
        return 0.0
    err = abs(M * C / R - P) / P
    return 1 - (min(err, 1) if clip else err)


def _capture_limit(c, form=lambda x: 2 - 1 / x):
    from scipy.optimize import brentq

    return form(brentq(lambda x: x - (1 - math.exp(-c * x)), 0.1, 1.0))


# sensitivity and ranking ----------------------------------------------------


def _is_flat(means, tolerance, variant="right"):
    scale = abs(means[0]) if means[0] != 0 else 1.0
    if variant == "end to end":
        return abs(means[-1] - means[0]) / scale <= tolerance
    if variant == "range":
        return (max(means) - min(means)) / scale <= tolerance
    return max(abs(m - means[0]) for m in means) / scale <= tolerance


def _forward_ce(base=2, with_end=True):
    real = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["the", "cat", "ran"]] * 3
    bigrams = Counter((a, b) for s in real for a, b in zip(["<s>", *s], [*s, "</s>"]))
    contexts = Counter(a for (a, b), c in bigrams.items() for _ in range(c))
    tokens = ["the", "dog", "sat"] + (["</s>"] if with_end else [])
    logp = [math.log(bigrams[(a, b)] / contexts[a], base) for a, b in zip(["<s>", *tokens], tokens)]
    return -sum(logp) / len(logp)


def _partial_tau(values, chains, ties="zero", flip=False):
    score = pairs = 0
    for chain in chains.values():
        for i in range(len(chain)):
            for j in range(i + 1, len(chain)):
                s = np.sign(values[chain[i]] - values[chain[j]])
                score += -1 if (s == 0 and ties == "discordant") else s
                pairs += 1
    return (-score if flip else score) / pairs


# embedding and set metrics against people (chapters 15, 17) ------------------


def _williams(r12=0.95, r13=0.90, r23=0.97, n=10, two=2):
    det = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    return (r12 - r13) * math.sqrt((n - 1) * (1 + r23)
                                   / (two * (n - 1) / (n - 3) * det + rbar ** 2 * (1 - r23) ** 3))


def _subset_r(pair, size, seed, detokenize=True, coefficient="pearson"):
    from scipy import stats

    from markeval import bleu
    from markeval.datasets import load_wmt17, wmt17_da_systems
    from markeval.experiments.translation import sentence_subset

    data = load_wmt17(pair, detokenize=detokenize)
    idx = sentence_subset(len(data.references), size, seed=seed)
    refs = [data.references[i] for i in idx]
    da = wmt17_da_systems(pair)
    scores = [bleu([data.systems[s][i] for i in idx], refs).score for s in da.system]
    corr = stats.pearsonr if coefficient == "pearson" else stats.spearmanr
    return float(corr(scores, da.score).statistic)


def _max_r(n, rho, rho_k, n_k, seed, statistic=max, shared=True):
    rng = np.random.default_rng(seed + 1000)  # another random stream than the reference's
    values = []
    for _ in range(1000):
        h = rng.normal(size=n)
        if shared:
            z = rho / np.sqrt(rho_k) * h + np.sqrt(1 - rho ** 2 / rho_k) * rng.normal(size=n)
            ms = [np.sqrt(rho_k) * z + np.sqrt(1 - rho_k) * rng.normal(size=n) for _ in range(n_k)]
        else:  # independent variants: ignores that the K variants agree with each other
            ms = [rho * h + np.sqrt(1 - rho ** 2) * rng.normal(size=n) for _ in range(n_k)]
        rs = [np.corrcoef(m, h)[0, 1] for m in ms]
        values.append(statistic(rs))
    return float(np.mean(values))


@functools.lru_cache(maxsize=4)
def _soft_and_hard(hyps, refs):
    from markeval import bertscore, moverscore

    soft = moverscore(list(hyps), list(refs), preset=None, layers=[-1], remove_subwords=False,
                      remove_punctuation=False, progress=False).sentence_scores
    return soft, bertscore(list(hyps), list(refs), progress=False).sentence_f1


def _hard_soft(hyps, refs, human, coefficient="pearson", flip=False):
    from scipy import stats

    soft, hard = _soft_and_hard(tuple(hyps), tuple(refs))  # the encoder runs once per case
    corr = (lambda a, b: stats.pearsonr(a, b).statistic) if coefficient == "pearson" else (
        lambda a, b: stats.spearmanr(a, b).statistic)
    gap = float(corr(soft, human) - corr(hard, human))
    return -gap if flip else gap


def _small_segments(rng):
    from markeval.datasets import wmt17_da_segments

    seg = wmt17_da_segments("de-en", with_text=True, detokenize=True)
    idx = np.sort(rng.choice(len(seg), 5, replace=False))
    part = seg.iloc[idx]
    return [(part["hypothesis"].tolist(), part["reference"].tolist(), part["score"].tolist())]


def _topic_pearson(metric, human, topics, pooled=False, skip_constant=True):
    metric, human, topics = np.asarray(metric), np.asarray(human), np.asarray(topics)
    if pooled:
        return float(np.corrcoef(metric, human)[0, 1])
    values = []
    for t in dict.fromkeys(topics.tolist()):
        x, y = metric[topics == t], human[topics == t]
        if skip_constant and (np.ptp(x) == 0 or np.ptp(y) == 0):
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            values.append(np.corrcoef(x, y)[0, 1])
    return float(np.mean(values))


def _cross_year(a, b, variant="right"):
    if variant == "same year":
        best = max(a, key=lambda k: (a[k], -k))
        return a[best]
    if variant == "larger K on ties":
        best = max(a, key=lambda k: (a[k], k))
        return b[best]
    best = max(a, key=lambda k: (a[k], -k))
    return b[best]


# --------------------------------------------------------------------------- the registry

REGISTRY: dict[str, Entry] = {
    # 01 Evaluating generated text
    "evaluating_generated_text.tau_by_hand": Entry(
        right=1 / 3, wrong={"C / pairs": 4 / 6, "(C - D) / C": 2 / 4, "sign flipped": -1 / 3}),
    "evaluating_generated_text.pearson": Entry(
        right=_pearson,
        wrong={"r squared": lambda x, y: _pearson(x, y) ** 2,
               "not centred (cosine)": lambda x, y: sum(a * b for a, b in zip(x, y))
               / math.sqrt(sum(a * a for a in x) * sum(b * b for b in y)),
               "n - 1 in the covariance only": lambda x, y: _pearson(x, y) * len(x) / (len(x) - 1)}),
    "evaluating_generated_text.kendall_b": Entry(
        right=_tau_b, wrong={"tau-a": _tau_a, "joint ties in both factors": _tau_b_ties_in_both}),
    "evaluating_generated_text.length_agreement": Entry(
        right=_length_agreement("right"),
        wrong={"length ratio itself": _length_agreement("ratio"),
               "Spearman instead of Pearson": _length_agreement("spearman")},
        marks=(needs_wmt17,)),
    # 02 Perplexity
    "perplexity.sam": Entry(
        right=(2 / 3 * 2 / 3 * 1 / 2 * 1 / 2) ** (-1 / 4),
        wrong={"without </s>": (2 / 3 * 2 / 3 * 1 / 2) ** (-1 / 3),
               "inverse probability, no root": 1 / (2 / 3 * 2 / 3 * 1 / 2 * 1 / 2),
               "sentence probability": 2 / 3 * 2 / 3 * 1 / 2 * 1 / 2}),
    "perplexity.corpus_perplexity": Entry(
        right=_ppl,
        wrong={"mean of per-sequence perplexities": _ppl_mean_of_sequences,
               "base 2 on natural logs": lambda seqs: _ppl(seqs, base=2),
               "off by one in the token count": lambda seqs: math.exp(
                   -sum(sum(s) for s in seqs) / (sum(len(s) for s in seqs) + 1))}),
    "perplexity.kneser_ney": Entry(
        right=_kn,
        wrong={"raw unigram frequencies": lambda s, w, p: _kn(s, w, p, continuation=False),
               "no interpolation": lambda s, w, p: _kn(s, w, p, interpolate=False),
               "discount 0.5": lambda s, w, p: _kn(s, w, p, d=0.5)}),
    # 03 BLEU and GLEU
    "bleu_gleu.clip": Entry(
        right=(6 / 9, 5 / 8),
        wrong={"no clipping": (9 / 9, 7 / 8), "swapped": (5 / 8, 6 / 9),
               "off-by-one bigram total": (6 / 9, 5 / 9)}),
    "bleu_gleu.modified_precision": Entry(
        right=_modified_precision,
        wrong={"no clipping": lambda h, refs, n: _modified_precision(h, refs, n, clip=False),
               "clip at the sum over references": lambda h, refs, n: _modified_precision(
                   h, refs, n, combine="sum"),
               "denominator: number of tokens": lambda h, refs, n: (
                   _modified_precision(h, refs, n)[0], len(h.split()))}),
    "bleu_gleu.brevity_penalty": Entry(
        right=_bp,
        wrong={"ratio inverted": lambda c, r: 1.0 if c > r else math.exp(1 - c / r),
               "linear penalty": lambda c, r: min(1.0, c / r),
               "penalises long hypotheses too": lambda c, r: math.exp(1 - max(r / c, c / r)) if c else 0.0}),
    "bleu_gleu.sentence_gleu": Entry(
        right=_gleu,
        wrong={"precision only": lambda h, refs: _gleu(h, refs, denominator=lambda a, b: a),
               "mean over references": lambda h, refs: _gleu(h, refs, combine="mean"),
               "orders 1 to 3": lambda h, refs: _gleu(h, refs, max_n=3)}),
    # 04 METEOR
    "meteor.by_hand": Entry(
        right=_meteor_by_hand(),
        wrong={"no fragmentation penalty": _meteor_by_hand(penalty=False),
               "three chunks": _meteor_by_hand(chunks=3)}),
    "meteor.chunks": Entry(
        right=_chunks,
        wrong={"not sorted": lambda a: _chunks(a, sort=False),
               "counts breaks, not chunks": lambda a: _chunks(a, plus_one=False),
               "adjacent in the hypothesis only": lambda a: _chunks(a, hyp_only=True)}),
    "meteor.score_from_counts": Entry(
        right=_meteor,
        wrong={"alpha on the wrong side": lambda *a: _meteor(*a, variant="swapped alpha"),
               "F1 instead of F_mean": lambda *a: _meteor(*a, variant="F1")}),
    # 05 ROUGE
    "rouge.by_hand": Entry(right=3 / 5, wrong={"over 6 words": 3 / 6, "ROUGE-1 recall": 5 / 6}),
    "rouge.lcs_length": Entry(
        right=_lcs,
        wrong={"longest common substring": _longest_common_substring,
               "common tokens, any order": lambda a, b: sum((Counter(a) & Counter(b)).values())}),
    "rouge.rouge_n_recall": Entry(
        right=_rouge_n,
        wrong={"no clipping": lambda h, refs, n: _rouge_n(h, refs, n, clip=False),
               "precision instead of recall": lambda h, refs, n: _rouge_n(h, refs, n, measure="precision"),
               "first reference only": lambda h, refs, n: _rouge_n(h, refs, n, first_only=True)}),
    # 18 Characters, edits and significance
    "characters_edits_significance.chrf_by_hand": Entry(
        right=100 * 5 * 0.45 * (17 / 24) / (4 * 0.45 + 17 / 24),
        wrong={"beta = 1 (plain F1)": 100 * 2 * 0.45 * (17 / 24) / (0.45 + 17 / 24),
               "spaces kept": 100 * 5 * (4 / 7 + 1 / 2) / 2 * 0.775
               / (4 * (4 / 7 + 1 / 2) / 2 + 0.775),
               "precision and recall swapped":
               100 * 5 * (17 / 24) * 0.45 / (4 * 17 / 24 + 0.45)}),
    "characters_edits_significance.char_ngram_statistics": Entry(
        right=_char_stats,
        wrong={"spaces kept": lambda h, r, n: _char_stats(h, r, n, strip=False),
               "no clipping": lambda h, r, n: _char_stats(h, r, n, clip=False)}),
    "characters_edits_significance.ter_by_hand": Entry(
        right=100 * 2 / 6, wrong={"no shift": 100 * 3 / 6, "shift not counted": 100 * 1 / 6}),
    # 06 Contextual embeddings
    "contextual_embeddings.token_count": Entry(
        right=_n_pieces_with_specials, wrong={"without [CLS] and [SEP]": 5, "words, not pieces": 3}),
    "contextual_embeddings.pool": Entry(
        right=lambda v, s: v[~s].mean(axis=0),
        wrong={"special tokens included": lambda v, s: v.mean(axis=0),
               "sum instead of mean": lambda v, s: v[~s].sum(axis=0),
               "only [CLS] dropped": lambda v, s: v[1:].mean(axis=0)}),
    "contextual_embeddings.idf": Entry(
        right=_idf,
        wrong={"repeats counted in df": lambda d: _idf(d, per_document=False),
               "no +1 smoothing": lambda d: _idf(d, smooth=False),
               "base-2 log": lambda d: _idf(d, logarithm=math.log2)}),
    "contextual_embeddings.idf_cat": Entry(
        right=math.log(4 / 3),
        wrong={"repeats counted (df = 3)": math.log(4 / 4), "no +1 smoothing": math.log(3 / 2),
               "base-2 log": math.log2(4 / 3)}),
    # 07 BERTScore
    "bertscore.by_hand": Entry(
        right=((2 + math.cos(math.radians(15))) / 3,) * 3,
        wrong={"60° matched to 90°": ((2 + math.cos(math.radians(30))) / 3,) * 3,
               "the two-token toy's answer": (
                   (2 + math.cos(math.radians(30))) / 3, 1.0,
                   2 * (2 + math.cos(math.radians(30))) / 3 / ((2 + math.cos(math.radians(30))) / 3 + 1)),
               "(P, R) only": ((2 + math.cos(math.radians(15))) / 3,) * 2}),
    "bertscore.greedy": Entry(
        right=_greedy,
        wrong={"not normalised": lambda *a: _greedy(*a, normalise=False),
               "rows and columns swapped": lambda *a: _greedy(*a, swap=True),
               "unweighted": lambda *a: _greedy(*a, weighted=False)}),
    "bertscore.rescale": Entry(
        right=_rescaled("right"),
        wrong={"inverse map": _rescaled("inverse map"), "not divided by 1 - b": _rescaled("undivided")}),
    # 08 MoverScore
    "moverscore.emd_line": Entry(
        right=0.4 * 1 + 0.4 * 2,
        wrong={"positions ignored": 0.4 + 0.4, "gap 3 for the second step": 0.4 * 1 + 0.4 * 3}),
    "moverscore.relaxed": Entry(
        right=lambda a, c: float(np.dot(a, np.min(c, axis=1)) / np.sum(a)),
        wrong={"a not normalised": lambda a, c: float(np.dot(a, np.min(c, axis=1))),
               "max instead of min": lambda a, c: float(np.dot(a, np.max(c, axis=1)) / np.sum(a)),
               "plain mean of the row minima": lambda a, c: float(np.min(c, axis=1).mean())}),
    # 09 Distribution metrics
    "distributions.by_hand": Entry(
        right=(1.0, 0.5),
        wrong={"precision and recall swapped": (0.5, 1.0), "self as nearest neighbour": (0.0, 0.0)}),
    "distributions.fid_1d": Entry(
        right=_fid_1d,
        wrong={"population std (pstdev)": lambda x, y: _fid_1d(x, y, stdev=statistics.pstdev),
               "variances instead of stds": lambda x, y: _fid_1d(x, y, variances=True),
               "mean gap not squared": lambda x, y: _fid_1d(x, y, square_means=False)}),
    "distributions.prd_curve": Entry(
        right=_prd,
        wrong={"p and q swapped": lambda p, q, n: _prd(p, q, n, "swapped p, q"),
               "outputs swapped": lambda p, q, n: _prd(p, q, n, "swapped outputs")}),
    "distributions.ipr_precision": Entry(
        right=_ipr_precision,
        wrong={"off by one (self as neighbour)": lambda r, c, k: _ipr_precision(r, c, k, own_column=True),
               "duplicates dropped with the point": lambda r, c, k: _ipr_precision(r, c, k, drop_zeros=True),
               "open balls": lambda r, c, k: _ipr_precision(r, c, k, strict=True)}),
    # 10 Counting fish
    "counting_fish.by_hand": Entry(
        right=(60 * 45 / 9, 61 * 46 / 10 - 1),
        wrong={"Chapman without - 1": (300.0, 61 * 46 / 10), "swapped": (61 * 46 / 10 - 1, 300.0)}),
    "counting_fish.m0_loglik": Entry(
        right=_m0,
        wrong={"off by one: lgamma(N)": lambda *a: _m0(*a, variant="lgamma(N)"),
               "(TN - n) ln(TN - n) forgotten": lambda *a: _m0(*a, variant="no (TN - n) term")}),
    "counting_fish.schnabel": Entry(
        right=_schnabel,
        wrong={"M_t counted after marking": lambda h: _schnabel(h, marked_after=True),
               "R + 1 in the denominator": lambda h: _schnabel(h, plus_one=True)}),
    # 11 Mark-Evaluate
    "mark_evaluate.by_hand": Entry(
        right=(8, 8, 8, 1.0),
        wrong={"13 outside 10's ball": (7, 8, 7, 1.0), "own sets not counted": (4, 4, 8, 1.0)}),
    "mark_evaluate.petersen": Entry(
        right=_me_petersen,
        wrong={"no clipping at 1": lambda S, Sp, k: _me_petersen(S, Sp, k, clip=False),
               "a point is its own neighbour": lambda S, Sp, k: _me_petersen(S, Sp, k, self_neighbour=True),
               "Chapman's estimator": lambda S, Sp, k: _me_petersen(S, Sp, k, chapman=True)}),
    "mark_evaluate.capture_limit": Entry(
        right=_capture_limit(5),
        wrong={"equal-set fixed point, 2(K + 1)": _capture_limit(10),
               "1/x instead of 2 - 1/x": _capture_limit(5, form=lambda x: 1 / x),
               "K instead of K + 1": _capture_limit(4)}),
    # 12 Sensitivity
    "sensitivity.swaps": Entry(right=2, wrong={"original counted": 3, "3! - 1": 5}),
    "sensitivity.flat": Entry(
        right=_is_flat,
        wrong={"first against last only": lambda m, t: _is_flat(m, t, "end to end"),
               "range of the means": lambda m, t: _is_flat(m, t, "range")}),
    # 15 Unconditional generation
    "unconditional_generation.forward_ce": Entry(
        right=_forward_ce(),
        wrong={"natural log": _forward_ce(base=math.e), "without </s>": _forward_ce(with_end=False)}),
    "unconditional_generation.partial_tau": Entry(
        right=_partial_tau,
        wrong={"ties count as discordant": lambda v, c: _partial_tau(v, c, ties="discordant"),
               "orientation reversed": lambda v, c: _partial_tau(v, c, flip=True)}),
    # 13 MT, lexical metrics
    "mt_correlation.williams": Entry(
        right=round(_williams(), 3),
        wrong={"factor 2 dropped": round(_williams(two=1), 3),
               "r12 and r13 swapped": round(-_williams(), 3)}),
    "mt_correlation.subset_r": Entry(
        right=_subset_r,
        wrong={"tokenized files": lambda p, n, s: _subset_r(p, n, s, detokenize=False),
               "Spearman instead of Pearson": lambda p, n, s: _subset_r(p, n, s, coefficient="spearman")},
        marks=(needs_wmt17,)),
    # 16 MT, embedding and set metrics
    "mt_embedding_correlation.best_k": Entry(
        right=_max_r,
        wrong={"mean, not max": lambda *a: _max_r(*a, statistic=np.mean),
               "independent variants": lambda *a: _max_r(*a, shared=False)}),
    "mt_embedding_correlation.samples": Entry(right=14 * 5, wrong={"all seven states": 14 * 7,
                                                                  "[CLS] and [SEP] counted": 16 * 5}),
    "mt_embedding_correlation.hard_soft": Entry(
        right=_hard_soft,
        wrong={"hard minus soft": lambda *a: _hard_soft(*a, flip=True),
               "Spearman instead of Pearson": lambda *a: _hard_soft(*a, coefficient="spearman")},
        cases=_small_segments, marks=(needs_wmt17,)),
    # 14, 17 Summarization
    "summarization_correlation.topic_pearson": Entry(
        right=_topic_pearson,
        wrong={"pooled over topics": lambda m, h, t: _topic_pearson(m, h, t, pooled=True),
               "constant topics not skipped": lambda m, h, t: _topic_pearson(m, h, t, skip_constant=False)}),
    "summarization_correlation.ipr_precision": Entry(
        right=_ipr_precision,
        wrong={"off by one (self as neighbour)": lambda r, c, k: _ipr_precision(r, c, k, own_column=True),
               "open balls": lambda r, c, k: _ipr_precision(r, c, k, strict=True)}),
    "summarization_correlation.cross_year_k": Entry(
        right=_cross_year,
        wrong={"reported on the same year": lambda a, b: _cross_year(a, b, "same year"),
               "larger K on ties": lambda a, b: _cross_year(a, b, "larger K on ties")}),
    # 19 MAUVE and the divergence frontier
    "mauve.frontier_point": Entry(
        right=(2 ** -2.5, 2 ** -2.5),
        wrong={"c = 1": (2 ** -0.5, 2 ** -0.5), "KL not scaled (exp(-KL))": (0.5 ** 0.5,) * 2,
               "the divergences, not the curve": (math.log(2) / 2,) * 2}),
    "mauve.frontier_integral": Entry(
        right=_frontier_integral,
        wrong={"not doubled": lambda p, q: _frontier_integral(p, q) / 2,
               "lone masses over 2": lambda p, q: _frontier_integral(p, q, lone=2)}),
    "mauve.smoothed": Entry(
        right=[3.5 / 5.5, 1.5 / 5.5, 0.5 / 5.5],
        wrong={"add-1 (Laplace)": [4 / 7, 2 / 7, 1 / 7], "not smoothed": [0.75, 0.25, 0.0]}),
}


# --------------------------------------------------------------------------- the tests


def _questions_in(module_name):
    module = importlib.import_module(f"markeval.exercises.checkers.{module_name}")
    return module, {name: obj for name, obj in vars(module).items() if isinstance(obj, Question)}


def _question(key):
    module_name, name = key.split(".")
    question = getattr(importlib.import_module(f"markeval.exercises.checkers.{module_name}"), name)
    entry = REGISTRY[key]
    if entry.cases is not None:
        question = copy.copy(question)  # the same question on smaller cases
        question.cases = entry.cases
    return question


def _param(key, *values, label=None):
    return pytest.param(key, *values, id=f"{key}-{label}" if label else key, marks=REGISTRY[key].marks)


RIGHT = [_param(key) for key in REGISTRY]
WRONG = [_param(key, label, label=label) for key, e in REGISTRY.items() for label in e.wrong]


def test_registry_covers_every_checker():
    registered = set(REGISTRY)
    found = set()
    for module_name in checkers.modules():
        module, questions = _questions_in(module_name)
        exported = set(getattr(module, "__all__", ()))
        assert exported == set(questions), (
            f"checkers.{module_name}.__all__ must list exactly its questions: "
            f"{sorted(exported ^ set(questions))}")
        found |= {f"{module_name}.{name}" for name in questions}
    assert not found - registered, f"checkers without right and wrong answers here: {sorted(found - registered)}"
    assert not registered - found, f"registry entries for missing checkers: {sorted(registered - found)}"


@pytest.mark.parametrize("key", REGISTRY)
def test_every_checker_has_two_wrong_answers_and_help(key):
    assert len(REGISTRY[key].wrong) >= 2
    question = _question(key)
    assert question.hints, f"{key} has no hints"
    assert question.solution_text, f"{key} has no solution"


def test_importing_the_checkers_loads_no_model():
    import subprocess
    import sys

    code = ("import importlib, sys\n"
            "from markeval.exercises import checkers\n"
            "for m in checkers.modules(): importlib.import_module('markeval.exercises.checkers.' + m)\n"
            "heavy = [m for m in ('torch', 'transformers', 'pandas') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_checker_modules_are_attributes_of_the_package():
    assert checkers.bleu_gleu.modified_precision is importlib.import_module(
        "markeval.exercises.checkers.bleu_gleu").modified_precision
    with pytest.raises(AttributeError):
        checkers.no_such_chapter  # noqa: B018


@pytest.mark.parametrize("key", RIGHT)
def test_right_answer_passes(key, capsys):
    question = _question(key)
    right = REGISTRY[key].right
    if question.reference is None and callable(right):
        right = right()
    result = question.check(right)
    out = capsys.readouterr().out
    assert result.passed, out
    assert out == f"✓ {question.title}: passed {result.n_cases} case{'s' if result.n_cases != 1 else ''}\n"


def _floats(value):
    """The non-integral floats inside a (nested) value."""
    if isinstance(value, (bool, np.bool_, str)) or value is None:
        return []
    if isinstance(value, (int, float, np.integer, np.floating)):
        x = float(value)
        return [x] if math.isfinite(x) and x != round(x) else []
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [f for v in np.asarray(value, dtype=object).ravel().tolist() for f in _floats(v)]
    if hasattr(value, "__dataclass_fields__"):
        return [f for name in value.__dataclass_fields__ for f in _floats(getattr(value, name))]
    return []


def _assert_not_leaked(want, message, shown):
    """No rounding of an expected float appears in the message, except inside what it shows."""
    for x in _floats(want):
        for digits in (3, 4, 6):
            text = f"{x:.{digits}f}"
            assert text not in message or text in shown, f"expected value {text} leaked: {message}"


def _lines(out):
    lines = out.splitlines()
    assert all(len(line) <= WIDTH for line in lines), [line for line in lines if len(line) > WIDTH]
    return lines


@pytest.mark.parametrize("key, label", WRONG)
def test_wrong_answer_fails_naming_the_case(key, label, capsys):
    question = _question(key)
    wrong = REGISTRY[key].wrong[label]
    pointer = "  (stuck? call .hint() on this question"
    if question.reference is None:  # a value question: one case, the value itself
        if callable(wrong):
            wrong = wrong()
        result = question.check(wrong)
        out = capsys.readouterr().out
        assert not result.passed and result.attempted, f"wrong answer {label!r} passed: {out}"
        lines = _lines(out)
        exact = _render(wrong, WIDTH)
        shown = exact if exact is not None and lines[0].endswith(f" {exact} is not correct") \
            else _describe(wrong, WIDTH)
        assert lines[0] in (f"✗ {question.title}: your answer {shown} is not correct",
                            f"✗ {question.title}: your answer is not correct"), lines
        assert lines[-1] == pointer + ")"
        expected = question.expected() if callable(question.expected) else question.expected
        _assert_not_leaked(expected, out, shown)
        assert question.failing_case().got is wrong and question.failing_case().expected is None
        return
    result = question.check(wrong)
    out = capsys.readouterr().out
    assert not result.passed and result.attempted, f"wrong answer {label!r} passed: {out}"
    i, cases = result.failed_case, question._cases()
    assert i is not None and result.n_cases == len(cases)
    args = cases[i - 1]
    got = wrong(*copy.deepcopy(args))  # a plausible wrong answer returns a value, it does not crash
    want = question.reference(*copy.deepcopy(args))
    lines = _lines(out)
    assert lines[0] == f"✗ {question.title}: case {i} of {len(cases)} failed"
    arg_lines = lines[1:1 + len(args)]
    assert all(line.startswith("  input" if len(args) == 1 else f"  arg {k}")
               for k, line in enumerate(arg_lines, start=1)), arg_lines
    returned = lines[1 + len(args)]
    assert returned.startswith("  returned: "), lines
    assert lines[2 + len(args)] == f"  expected: {_describe(want, WIDTH - 12)}"
    assert lines[-1] == pointer + "; .failing_case() returns this case)"
    case = result.case
    assert case is question.failing_case() and case.number == i and case.error is None
    assert close(case.args, args, 0, 0) and close(case.got, got, 1e-12, 1e-12)
    assert close(case.expected, want, 0, 0)


@pytest.mark.parametrize("key", RIGHT)
def test_starter_is_not_answered_yet(key, capsys):
    question = _question(key)
    if question.reference is None:
        result = question.check(None)
    else:
        def starter(*args):
            raise NotImplementedError("your code here")

        result = question.check(starter)
    (line,) = _lines(capsys.readouterr().out)
    assert not result and result.attempted is False and question.failing_case() is None
    assert line.startswith(f"○ {question.title}: not answered yet — ")  # shorter for long titles
