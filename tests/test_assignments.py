"""The assignments' auto-checks: a right answer passes, typical wrong answers fail usefully.

The registry below holds, for every auto-checked question of every assignment, one correct
answer written from scratch (as a student would) and at least two wrong answers that model
real mistakes: off-by-one, no clipping, the transposed reference layout, a forgotten brevity
penalty, ``max`` for ``min`` in Eq. 1, swapped arguments … Each wrong answer must fail, and the
failure message must name the question and the failing case (or say the value is wrong)
without printing the expected answer.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest

from conftest import needs_wmt17
from markeval.exercises import CheckResult
from markeval.exercises.assignments import (
    A3_SEGMENTS,
    A4_K,
    A4_TOPIC_ORDER,
    A1_SYSTEM,
    assignment,
    bbc_collapse_data,
    collapse_schedule,
    points_table,
    toy_problem,
    wmt17_judged,
)


class Value:
    """A value answer, computed lazily (some need data or a model)."""

    def __init__(self, make):
        self.make = make


# --- Assignment 1 ----------------------------------------------------------------------------

def ngrams_right(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def ngrams_off_by_one(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n))


def ngrams_all_orders(tokens, n):
    return Counter(tuple(tokens[i:i + m]) for m in range(1, n + 1)
                   for i in range(len(tokens) - m + 1))


def _best_ref_counts(references, n, combine):
    best = Counter()
    for r in references:
        best = combine(best, ngrams_right(r.split(), n))
    return best


def clip_right(hypothesis, references, n):
    hyp = ngrams_right(hypothesis.split(), n)
    best = _best_ref_counts(references, n, lambda a, b: a | b)  # | is the element-wise max
    return sum(min(c, best[g]) for g, c in hyp.items()), sum(hyp.values())


def clip_none(hypothesis, references, n):
    hyp = ngrams_right(hypothesis.split(), n)
    best = _best_ref_counts(references, n, lambda a, b: a | b)
    return sum(c for g, c in hyp.items() if best[g] > 0), sum(hyp.values())


def clip_sum_of_references(hypothesis, references, n):
    hyp = ngrams_right(hypothesis.split(), n)
    best = _best_ref_counts(references, n, lambda a, b: a + b)
    return sum(min(c, best[g]) for g, c in hyp.items()), sum(hyp.values())


def reflen_right(c, ref_lengths):
    return min(ref_lengths, key=lambda r: (abs(r - c), r))


def reflen_shortest(c, ref_lengths):
    return min(ref_lengths)


def reflen_ties_longer(c, ref_lengths):
    return min(ref_lengths, key=lambda r: (abs(r - c), -r))


def bp_right(c, r):
    return 1.0 if c > r else (math.exp(1 - r / c) if c > 0 else 0.0)


def bp_inverted(c, r):
    return 1.0 if c > r else math.exp(1 - c / r)


def bp_no_empty_case(c, r):
    return 1.0 if c > r else math.exp(1 - r / c)


def _bleu(hypotheses, references, *, use_bp=True, reflen=reflen_right, pairs=None):
    c = r = 0
    matches, totals = [0] * 4, [0] * 4
    for hyp, refs in pairs if pairs is not None else zip(hypotheses, references):
        c += len(hyp.split())
        r += reflen(len(hyp.split()), [len(x.split()) for x in refs])
        for n in range(1, 5):
            m, t = clip_right(hyp, refs, n)
            matches[n - 1] += m
            totals[n - 1] += t
    if min(matches) == 0:
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(matches, totals)) / 4
    return 100 * (bp_right(c, r) if use_bp else 1.0) * math.exp(log_p)


def bleu_right(hypotheses, references):
    return _bleu(hypotheses, references)


def bleu_no_bp(hypotheses, references):
    return _bleu(hypotheses, references, use_bp=False)


def bleu_transposed_layout(hypotheses, references):
    # sacrebleu's layout: references[j] is the j-th reference stream
    return _bleu(hypotheses, references, pairs=zip(hypotheses, zip(*references)))


def bleu_mean_of_sentences(hypotheses, references):
    return float(np.mean([_bleu([h], [r]) for h, r in zip(hypotheses, references)]))


def _gleu_parts(hyp, ref):
    m = h = r = 0
    for n in range(1, 5):
        hc, rc = ngrams_right(hyp, n), ngrams_right(ref, n)
        m += sum((hc & rc).values())
        h += sum(hc.values())
        r += sum(rc.values())
    return m, h, r


def gleu_right(hypothesis, references):
    best = None
    for reference in references:
        m, h, r = _gleu_parts(hypothesis.split(), reference.split())
        if max(h, r) > 0:
            best = m / max(h, r) if best is None else max(best, m / max(h, r))
    return 0.0 if best is None else best


def gleu_mean_over_references(hypothesis, references):
    scores = []
    for reference in references:
        m, h, r = _gleu_parts(hypothesis.split(), reference.split())
        scores.append(m / max(h, r) if max(h, r) else 0.0)
    return float(np.mean(scores))


def gleu_precision_only(hypothesis, references):
    best = 0.0
    for reference in references:
        m, h, _ = _gleu_parts(hypothesis.split(), reference.split())
        best = max(best, m / h if h else 0.0)
    return best


def _13a(line, *, unescape=True, keep_numbers=True):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if unescape:
        for a, b in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
            line = line.replace(a, b)
    line = re.sub(r"([!-&(-+/:-@\[-`{-~])", r" \1 ", f" {line} ")
    if keep_numbers:
        line = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", line)
        line = re.sub(r"([\.,])([^0-9])", r" \1 \2", line)
    else:
        line = re.sub(r"([\.,])", r" \1 ", line)
    line = re.sub(r"([0-9])(-)", r"\1 \2 ", line)
    return line.split()


def table_right():
    from markeval import bleu
    from markeval.datasets import load_wmt17

    out = {}
    for name, detok, tok in (("none/escaped", False, "none"), ("13a/escaped", False, "13a"),
                             ("13a/detokenized", True, "13a"), ("none/detokenized", True, "none")):
        data = load_wmt17("de-en", detokenize=detok)
        out[name] = bleu(list(data.systems[A1_SYSTEM]), [[r] for r in data.references],
                         tokenize=tok).score
    return out


def table_swapped():
    t = table_right()
    t["13a/escaped"], t["13a/detokenized"] = t["13a/detokenized"], t["13a/escaped"]
    return t


def table_unit_scale():
    return {k: v / 100 for k, v in table_right().items()}


# --- Assignment 2 ----------------------------------------------------------------------------

def chunks_right(alignment):
    pairs = sorted(alignment)
    if not pairs:
        return 0
    return 1 + sum(1 for (i, j), (i2, j2) in zip(pairs, pairs[1:]) if (i2, j2) != (i + 1, j + 1))


def chunks_boundaries(alignment):
    return max(0, chunks_right(alignment) - 1)


def chunks_ignore_reference(alignment):
    pairs = sorted(alignment)
    if not pairs:
        return 0
    return 1 + sum(1 for (i, _), (i2, _) in zip(pairs, pairs[1:]) if i2 != i + 1)


def _meteor(hypothesis, reference, *, alpha=0.9, penalty=True, frag_by_length=False):
    from markeval import meteor

    alignment = [(i, j) for i, j, _ in meteor(hypothesis, reference).alignment]
    m, wt, wr = len(alignment), len(hypothesis.split()), len(reference.split())
    if m == 0:
        return 0.0
    p, r = m / wt, m / wr
    fmean = p * r / (alpha * p + (1 - alpha) * r)
    frag = chunks_right(alignment) / (wt if frag_by_length else m)
    return (1 - 0.5 * frag ** 3) * fmean if penalty else fmean


def meteor_right(hypothesis, reference):
    return _meteor(hypothesis, reference)


def meteor_alpha_swapped(hypothesis, reference):
    return _meteor(hypothesis, reference, alpha=0.1)


def meteor_no_penalty(hypothesis, reference):
    return _meteor(hypothesis, reference, penalty=False)


def meteor_frag_by_length(hypothesis, reference):
    return _meteor(hypothesis, reference, frag_by_length=True)


def exact_right(hyp, ref):
    free = {}
    for j, w in enumerate(ref):
        free.setdefault(w.lower(), []).append(j)
    pairs = []
    for i in reversed(range(len(hyp))):
        positions = free.get(hyp[i].lower())
        if positions:
            pairs.append((i, positions.pop()))
    return sorted(pairs)


def exact_left_to_right(hyp, ref):
    used, pairs = set(), []
    for i, w in enumerate(hyp):
        for j, v in enumerate(ref):
            if v == w and j not in used:
                used.add(j)
                pairs.append((i, j))
                break
    return pairs


def exact_reuse(hyp, ref):
    last = {w: j for j, w in enumerate(ref)}
    return [(i, last[w]) for i, w in enumerate(hyp) if w in last]


def lcs_right(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = (table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                           else max(table[i - 1][j], table[i][j - 1]))
    return table[len(a)][len(b)]


def lcs_substring(a, b):
    best = 0
    for i in range(len(a)):
        for j in range(len(b)):
            k = 0
            while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                k += 1
            best = max(best, k)
    return best


def lcs_greedy(a, b):
    j, found = 0, 0
    for w in a:
        try:
            j = b.index(w, j) + 1
            found += 1
        except ValueError:
            continue
    return found


def _rouge_l(hypothesis, reference, *, swap=False, mean=False):
    h, r = hypothesis.split(), reference.split()
    lcs = lcs_right(h, r)
    p, rec = (lcs / len(h) if h else 0.0), lcs / len(r)
    if swap:
        p, rec = rec, p
    f = (p + rec) / 2 if mean else (2 * p * rec / (p + rec) if p + rec > 0 else 0.0)
    return (p, rec, f)


def rougel_right(hypothesis, reference):
    return _rouge_l(hypothesis, reference)


def rougel_swapped(hypothesis, reference):
    return _rouge_l(hypothesis, reference, swap=True)


def rougel_arithmetic_mean(hypothesis, reference):
    return _rouge_l(hypothesis, reference, mean=True)


def _segment_scores():
    from markeval import bleu_statistics, corpus_meteor, rouge, sentence_bleu_scores

    seg = wmt17_judged("de-en")
    hyps, refs = list(seg["hypothesis"]), list(seg["reference"])
    return seg["score"].to_numpy(), {
        "meteor": np.array(corpus_meteor(hyps, refs).scores),
        "rougeL": np.array(rouge(hyps, refs, types=["rougeL"])["rougeL"].fmeasures),
        "sentence_bleu": sentence_bleu_scores(bleu_statistics(hyps, refs, tokenize="none")),
    }


def correlations_right():
    human, scores = _segment_scores()
    return {k: float(np.corrcoef(v, human)[0, 1]) for k, v in scores.items()}


def correlations_kendall():
    from scipy.stats import kendalltau

    human, scores = _segment_scores()
    return {k: float(kendalltau(v, human)[0]) for k, v in scores.items()}


def correlations_swapped():
    c = correlations_right()
    c["meteor"], c["rougeL"] = c["rougeL"], c["meteor"]
    return c


def _disagree(metric, human, n, *, ranks=True, descending=True, extra=0):
    from scipy.stats import rankdata

    metric, human = np.asarray(metric, float), np.asarray(human, float)
    gap = (np.abs(rankdata(metric) - rankdata(human)) / len(metric) if ranks
           else np.abs(metric - human))
    order = sorted(range(len(gap)), key=lambda i: ((-gap[i] if descending else gap[i]), i))
    return order[: n + extra]


def disagree_right(metric, human, n):
    return _disagree(metric, human, n)


def disagree_raw_scores(metric, human, n):
    return _disagree(metric, human, n, ranks=False)


def disagree_ascending(metric, human, n):
    return _disagree(metric, human, n, descending=False)


def disagree_off_by_one(metric, human, n):
    return _disagree(metric, human, n, extra=1)


# --- Assignment 3 ----------------------------------------------------------------------------

def cosine_right(X, Y):
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    return (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (
        Y / np.linalg.norm(Y, axis=1, keepdims=True)).T


def cosine_raw_dot(X, Y):
    return np.asarray(X, float) @ np.asarray(Y, float).T


def cosine_wrong_axis(X, Y):
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    return (X / np.linalg.norm(X, axis=0, keepdims=True)) @ (
        Y / np.linalg.norm(Y, axis=0, keepdims=True)).T


def _greedy(H, R, wh, wr, *, swap=False, weighted=True, skip_zero=False):
    S = cosine_right(H, R)
    wh, wr = np.asarray(wh, float), np.asarray(wr, float)
    if skip_zero:
        S = S[wh > 0][:, wr > 0]
        wh, wr = wh[wh > 0], wr[wr > 0]
    best_h, best_r = (S.max(axis=0), S.max(axis=1)) if swap else (S.max(axis=1), S.max(axis=0))
    if swap:
        wh, wr = wr, wh
    if not weighted:
        wh, wr = np.ones_like(wh), np.ones_like(wr)
    p = float(best_h @ wh / wh.sum()) if wh.sum() > 0 else 0.0
    r = float(best_r @ wr / wr.sum()) if wr.sum() > 0 else 0.0
    return p, r, (2 * p * r / (p + r) if p + r != 0 else 0.0)


def greedy_right(H, R, wh, wr):
    return _greedy(H, R, wh, wr)


def greedy_swapped(H, R, wh, wr):
    return _greedy(H, R, wh, wr, swap=True)


def greedy_unweighted(H, R, wh, wr):
    return _greedy(H, R, wh, wr, weighted=False)


def greedy_skips_zero_weight(H, R, wh, wr):
    return _greedy(H, R, wh, wr, skip_zero=True)


def emd_right(a, b, cost):
    from scipy.optimize import linprog

    a, b = np.asarray(a, float), np.asarray(b, float)
    a, b, C = a / a.sum(), b / b.sum(), np.asarray(cost, float)
    n, m = C.shape
    rows = [np.kron(np.eye(n)[i], np.ones(m)) for i in range(n)]
    cols = [np.kron(np.ones(n), np.eye(m)[j]) for j in range(m)]
    res = linprog(C.ravel(), A_eq=np.array(rows + cols), b_eq=np.concatenate([a, b]),
                  bounds=(0, None), method="highs")
    return float(res.fun)


def emd_nearest(a, b, cost):
    a = np.asarray(a, float)
    return float((a / a.sum()) @ np.asarray(cost, float).min(axis=1))


def emd_unnormalised(a, b, cost):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return emd_right(a, b * (a.sum() / b.sum()), cost) * a.sum()


def _toy_answer(*, swap=False, nearest=False):
    hyp, ref = toy_problem()
    p, r, _ = greedy_right(hyp, ref, np.ones(3), np.ones(3))
    cost = np.sqrt(((hyp[:, None] - ref[None]) ** 2).sum(-1))
    emd = (emd_nearest if nearest else emd_right)(np.ones(3), np.ones(3), cost)
    return {"precision": r, "recall": p, "emd": emd} if swap else {
        "precision": p, "recall": r, "emd": emd}


def _idf(corpus, *, plus_one=True, documents=True):
    df = Counter()
    for doc in corpus:
        df.update(set(doc.split()) if documents else doc.split())
    m = len(corpus)
    return {w: math.log((m + 1) / (c + 1)) if plus_one else math.log(m / c)
            for w, c in df.items()}


def idf_right(corpus):
    return _idf(corpus)


def idf_no_smoothing(corpus):
    return _idf(corpus, plus_one=False)


def idf_term_frequency(corpus):
    return _idf(corpus, documents=False)


def _bertscore_f1():
    from markeval import bertscore, idf_weights
    from markeval.profile import current_profile

    seg = wmt17_judged("de-en", A3_SEGMENTS[current_profile()])
    hyps, refs = list(seg["hypothesis"]), list(seg["reference"])
    plain = np.array(bertscore(hyps, refs, progress=False).sentence_f1)
    weighted = np.array(bertscore(hyps, refs, idf=idf_weights(refs), progress=False).sentence_f1)
    return seg["score"].to_numpy(), plain, weighted


_BERT_CACHE: list = []


def _bert():
    if not _BERT_CACHE:
        _BERT_CACHE.append(_bertscore_f1())
    return _BERT_CACHE[0]


def idf_corr_right():
    human, plain, weighted = _bert()
    return {"plain": float(np.corrcoef(plain, human)[0, 1]),
            "idf": float(np.corrcoef(weighted, human)[0, 1])}


def idf_corr_swapped():
    c = idf_corr_right()
    return {"plain": c["idf"], "idf": c["plain"]}


def idf_corr_spearman():
    from scipy.stats import spearmanr

    human, plain, weighted = _bert()
    return {"plain": float(spearmanr(plain, human)[0]), "idf": float(spearmanr(weighted, human)[0])}


# --- Assignment 4 ----------------------------------------------------------------------------

def _sq(X, Y):
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)


def _sq_radii(X, k, *, self_excluded=True):
    D = _sq(X, X)
    if self_excluded:
        np.fill_diagonal(D, np.inf)
    return np.sort(D, axis=1)[:, k - 1]


def radii_right(X, k):
    return np.sqrt(_sq_radii(X, k))


def radii_with_self(X, k):
    return np.sqrt(_sq_radii(X, k, self_excluded=False))


def radii_squared(X, k):
    return _sq_radii(X, k)


def inside_right(Q, S, k):
    return (_sq(Q, S) <= _sq_radii(S, k)[None, :]).any(axis=1)


def inside_strict(Q, S, k):
    return (_sq(Q, S) < _sq_radii(S, k)[None, :]).any(axis=1)


def inside_query_balls(Q, S, k):
    return (_sq(Q, S) <= _sq_radii(Q, k)[:, None]).any(axis=1)


def counts_right(S, Sp, k):
    a, b = int(inside_right(Sp, S, k).sum()), int(inside_right(S, Sp, k).sum())
    return (len(S) + a, len(Sp) + b, a + b)


def counts_swapped(S, Sp, k):
    a, b = int(inside_right(Sp, S, k).sum()), int(inside_right(S, Sp, k).sum())
    return (len(S) + b, len(Sp) + a, a + b)


def counts_all_memberships(S, Sp, k):
    a = int((_sq(Sp, S) <= _sq_radii(S, k)[None, :]).sum())
    b = int((_sq(S, Sp) <= _sq_radii(Sp, k)[None, :]).sum())
    return (len(S) + a, len(Sp) + b, a + b)


def me_right(estimate, population):
    return 1 - min(abs(estimate - population) / population, 1)


def me_printed_max(estimate, population):
    return 1 - max(abs(estimate - population) / population, 1)


def me_no_clamp(estimate, population):
    return 1 - abs(estimate - population) / population


def _petersen(S, Sp, k, me=me_right):
    M, C, R = counts_right(S, Sp, k)
    if R == 0:
        return 0.0
    return me(M * C / R, len(S) + len(Sp))


def petersen_right(S, Sp, k):
    return _petersen(S, Sp, k)


def petersen_printed_max(S, Sp, k):
    return _petersen(S, Sp, k, me=me_printed_max)


def petersen_divides_by_zero(S, Sp, k):
    M, C, R = counts_right(S, Sp, k)
    return me_right(M * C / R, len(S) + len(Sp))


def _collapse(reference, pool, labels, topic_order, n, k, *, swap_scores=False,
              swap_sets=False):
    from markeval import mark_evaluate

    pool = np.asarray(pool, float)
    out = {}
    for level, rows in collapse_schedule(labels, topic_order, n).items():
        a, b = (pool[rows], reference) if swap_sets else (reference, pool[rows])
        r = mark_evaluate(a, b, k=k)
        q, d = r.schnabel_quality.score, r.schnabel_diversity.score
        out[level] = (r.petersen.score, d, q) if swap_scores else (r.petersen.score, q, d)
    return out


def collapse_right(reference, pool, labels, topic_order, n, k):
    return _collapse(reference, pool, labels, topic_order, n, k)


def collapse_swapped_scores(reference, pool, labels, topic_order, n, k):
    return _collapse(reference, pool, labels, topic_order, n, k, swap_scores=True)


def collapse_swapped_sets(reference, pool, labels, topic_order, n, k):
    return _collapse(reference, pool, labels, topic_order, n, k, swap_sets=True)


_NAMES = ("petersen", "schnabel_quality", "schnabel_diversity")


def _drops(*, first=5, last=1, order=_NAMES):
    ref, pool, labels = bbc_collapse_data()
    t = collapse_right(ref, pool, labels, list(A4_TOPIC_ORDER), len(ref), A4_K)
    return {name: t[first][i] - t[last][i] for i, name in enumerate(order)}


def drops_right():
    return _drops()


def drops_reversed():  # level 1 minus level 5: a rise, not a drop
    return _drops(first=1, last=5)


def drops_quality_diversity_swapped():
    return _drops(order=("petersen", "schnabel_diversity", "schnabel_quality"))


def drops_name_only():  # the old one-in-three question's answer: a name, not the numbers
    drops = drops_right()
    return max(drops, key=drops.get)


# --- the registry ----------------------------------------------------------------------------

A = needs_wmt17  # the assignments that read WMT17 lines skip where the data is absent
REGISTRY = {
    (1, "q1"): (ngrams_right, [ngrams_off_by_one, ngrams_all_orders], A),
    (1, "q2"): (clip_right, [clip_none, clip_sum_of_references], A),
    (1, "q3"): (reflen_right, [reflen_shortest, reflen_ties_longer], None),
    (1, "q4"): (bp_right, [bp_inverted, bp_no_empty_case], None),
    (1, "q5"): (bleu_right, [bleu_no_bp, bleu_transposed_layout, bleu_mean_of_sentences], A),
    (1, "q6"): (gleu_right, [gleu_mean_over_references, gleu_precision_only], A),
    (1, "q7"): (_13a, [str.split, lambda s: _13a(s, unescape=False),
                       lambda s: _13a(s, keep_numbers=False)], A),
    (1, "q8"): (Value(table_right), [Value(table_swapped), Value(table_unit_scale)], A),
    (2, "q1"): (chunks_right, [chunks_boundaries, chunks_ignore_reference], A),
    (2, "q2"): (meteor_right, [meteor_alpha_swapped, meteor_no_penalty, meteor_frag_by_length], A),
    (2, "q3"): (exact_right, [exact_left_to_right, exact_reuse], A),
    (2, "q4"): (lcs_right, [lcs_substring, lcs_greedy], A),
    (2, "q5"): (rougel_right, [rougel_swapped, rougel_arithmetic_mean], A),
    (2, "q6"): (Value(correlations_right), [Value(correlations_kendall),
                                            Value(correlations_swapped)], A),
    (2, "q7"): (disagree_right, [disagree_raw_scores, disagree_ascending, disagree_off_by_one],
                None),
    (3, "q1"): (cosine_right, [cosine_raw_dot, cosine_wrong_axis], None),
    (3, "q2"): (greedy_right, [greedy_swapped, greedy_unweighted, greedy_skips_zero_weight], None),
    (3, "q3"): (emd_right, [emd_nearest, emd_unnormalised], None),
    (3, "q4"): (Value(_toy_answer), [Value(lambda: _toy_answer(swap=True)),
                                     Value(lambda: _toy_answer(nearest=True))], None),
    (3, "q5"): (idf_right, [idf_no_smoothing, idf_term_frequency], None),
    (3, "q6"): (Value(idf_corr_right), [Value(idf_corr_swapped), Value(idf_corr_spearman)], A),
    (4, "q1"): (radii_right, [radii_with_self, radii_squared], None),
    (4, "q2"): (inside_right, [inside_strict, inside_query_balls], None),
    (4, "q3"): (counts_right, [counts_swapped, counts_all_memberships], None),
    (4, "q4"): (me_right, [me_printed_max, me_no_clamp], None),
    (4, "q5"): (petersen_right, [petersen_printed_max, petersen_divides_by_zero], None),
    (4, "q6"): (collapse_right, [collapse_swapped_scores, collapse_swapped_sets], None),
    (4, "q7"): (Value(drops_right), [Value(drops_reversed),
                                     Value(drops_quality_diversity_swapped),
                                     Value(drops_name_only)], None),
}

_ASSIGNMENTS: dict[int, object] = {}


def _assignment(n):
    if n not in _ASSIGNMENTS:
        _ASSIGNMENTS[n] = assignment(n)
    return _ASSIGNMENTS[n]


def _answer(answer):
    return answer.make() if isinstance(answer, Value) else answer


def _param(key, *rest):
    mark = REGISTRY[key][2]
    ident = f"A{key[0]}{key[1]}" + (f"-wrong{rest[0]}" if rest else "")
    return pytest.param(key, *rest, id=ident, marks=[mark] if mark else [])


def test_every_auto_checked_question_is_in_the_registry():
    for n in (1, 2, 3, 4):
        for task in assignment(n).tasks:
            if task.auto:
                assert (n, task.key) in REGISTRY, f"A{n} {task.key} has no right/wrong answers"
                assert len(REGISTRY[n, task.key][1]) >= 2, f"A{n} {task.key}: < 2 wrong answers"
            else:
                assert (n, task.key) not in REGISTRY


@pytest.mark.parametrize("key", [_param(k) for k in REGISTRY])
def test_right_answer_passes(key, capsys):
    n, q = key
    result = _assignment(n).check(q, _answer(REGISTRY[key][0]))
    out = capsys.readouterr().out
    assert isinstance(result, CheckResult)
    assert result, out
    # The verdict, printed last (after anything the answer printed, e.g. progress bars).
    assert out.endswith(result.message + "\n")
    assert result.message.startswith(f"✓ {q.upper()} ") and "passed" in result.message


@pytest.mark.parametrize("key,i", [_param(k, i) for k in REGISTRY
                                   for i in range(len(REGISTRY[k][1]))])
def test_wrong_answer_fails_with_a_useful_message(key, i, capsys):
    n, q = key
    task = _assignment(n).task(q)
    result = _assignment(n).check(q, _answer(REGISTRY[key][1][i]))
    out = capsys.readouterr().out
    assert not result, f"wrong answer {i} passed A{n} {q}: {out}"
    assert out.endswith(result.message + "\n")  # the verdict, after what the answer printed
    out = result.message
    assert out.startswith(f"✗ {q.upper()} {task.title} [{task.points} pts]:"), out
    if task.kind == "code":
        # names the failing case: its number, its input, what the answer returned or raised
        pattern = r"case \d+ of \d+ failed\n(  (input|arg \d+)[^\n]*\n)+  (returned|raised):"
        assert re.search(pattern, out), out
    else:
        assert "is not correct" in out, out
    assert "expected:" not in out, out  # graded: markeval's own answer is never printed
    assert "hint" in out


def test_value_messages_do_not_reveal_the_answer(capsys):
    A = assignment(4)
    A.check("q4", lambda e, p: 0.5)
    out = capsys.readouterr().out
    # a code question prints the input and the answer's output, never the reference's
    assert "returned: 0.5" in out and "expected" not in out
    assert A.task("q4").question.failing_case().expected is None


def test_starter_answers_are_not_answered_yet(capsys):
    A = assignment(1)

    def my_ngrams(tokens, n):
        raise NotImplementedError()

    assert not A.check("q1", my_ngrams)
    A.summary()
    out = capsys.readouterr().out
    assert out.startswith("○ Q1 ") and "✗" not in out  # a starter is not a red failure
    assert re.search(r"Q1 .* 0/10\s+not answered yet", out), out


def test_points_and_summary(capsys):
    table = points_table()
    assert set(table["assignment"]) == {1, 2, 3, 4}
    assert (table.groupby("assignment")["points"].sum() == 100).all()
    A = assignment(1)
    A.check("q4", bp_right)
    A.check("q3", reflen_shortest)
    s = A.summary()
    out = capsys.readouterr().out
    assert s["earned"] == A.task("q4").points
    assert s["failed"] == ["q3"] and "q1" in s["unchecked"]
    assert s["written_points"] == A.task("q8b").points
    assert "graded by hand" in out and "auto-checked: 5/" in out


def test_bad_use_gives_clear_errors():
    A = assignment(2)
    with pytest.raises(KeyError, match="no question 'q9'"):
        A.check("q9", None)
    with pytest.raises(ValueError, match="written question"):
        A.check("q8", "my essay")
    with pytest.raises(ValueError, match="must be one of"):
        assignment(5)


def test_collapse_schedule_keeps_the_size():
    labels = ["a"] * 10 + ["b"] * 10 + ["c"] * 10
    schedule = collapse_schedule(labels, ["c", "a", "b"], 9)
    assert list(schedule) == [3, 2, 1]
    assert all(len(rows) == 9 for rows in schedule.values())
    assert {labels[i] for i in schedule[1]} == {"c"}
    assert {labels[i] for i in schedule[2]} == {"a", "c"}


# --- from scratch: answers that reach a module the question does not allow ------------------
# The tricks are held back from the assignments and the course page: an alias, a wrapper, a
# lambda, a name built at run time, importlib, exec of a string, a helper module written to
# disk, another library, the checker's own reference, and a system module.

def _bleu_wrapper(hypotheses, references):
    from markeval import bleu

    return bleu(hypotheses, references, tokenize="none", smooth="none").score


def bleu_through_a_wrapper(hypotheses, references):
    return _bleu_wrapper(hypotheses, references)


def bleu_through_an_alias_import(hypotheses, references):
    import markeval.lexical.bleu as mb

    return mb.bleu(hypotheses, references, tokenize="none", smooth="none").score


def _bleu_lambda():
    import markeval as me

    return lambda hypotheses, references: me.bleu(hypotheses, references, tokenize="none",
                                                  smooth="none").score


def bleu_by_a_name_built_at_run_time(hypotheses, references):
    lexical = getattr(__import__("mark" + "eval"), "lex" + "ical")
    return getattr(lexical, "bl" + "eu").bleu(hypotheses, references, tokenize="none",
                                              smooth="none").score


def bleu_through_importlib(hypotheses, references):
    import importlib

    return importlib.import_module("sacrebleu").corpus_bleu(
        hypotheses, [list(r) for r in zip(*references)], tokenize="none").score


def bleu_by_exec_of_a_string(hypotheses, references):
    found = {}
    exec("import markeval as m\nf = m.bleu", found)
    return found["f"](hypotheses, references, tokenize="none", smooth="none").score


def bleu_from_the_checkers_reference(hypotheses, references):
    from markeval.exercises.assignments import assignment

    return assignment(1).task("q5").question.reference(hypotheses, references)


def bleu_from_nltk(hypotheses, references):
    from nltk.translate.bleu_score import corpus_bleu

    return 100 * corpus_bleu([[r.split() for r in refs] for refs in references],
                             [h.split() for h in hypotheses])


def bleu_asking_the_system(hypotheses, references):
    import os

    os.getcwd()
    return bleu_right(hypotheses, references)


def _helper_module_answer(folder):
    def bleu_from_a_helper_module(hypotheses, references):
        import importlib
        import sys

        with open(f"{folder}/a1_helper.py", "w", encoding="utf-8") as handle:
            handle.write("def score(h, r):\n    import markeval\n"
                         "    return markeval.bleu(h, r, tokenize='none', smooth='none').score\n")
        sys.path.insert(0, folder)
        try:
            return importlib.import_module("a1_helper").score(hypotheses, references)
        finally:
            sys.path.remove(folder)
    return bleu_from_a_helper_module


TRICKS = {  # the answer: the module its verdict must name
    "wrapper": (bleu_through_a_wrapper, "markeval.lexical.bleu"),
    "alias-import": (bleu_through_an_alias_import, "markeval.lexical.bleu"),
    "lambda": (_bleu_lambda(), "markeval.lexical.bleu"),
    "getattr-at-run-time": (bleu_by_a_name_built_at_run_time, "markeval.lexical.bleu"),
    "importlib": (bleu_through_importlib, "sacrebleu"),
    "exec-of-a-string": (bleu_by_exec_of_a_string, "markeval.lexical.bleu"),
    "checkers-reference": (bleu_from_the_checkers_reference, "markeval.exercises.assignments"),
    "nltk": (bleu_from_nltk, "nltk"),
    "system-module": (bleu_asking_the_system, "posix"),
}


@needs_wmt17
@pytest.mark.parametrize("trick", [*TRICKS, "helper-module"])
def test_reaching_a_module_not_allowed_scores_zero_and_names_it(trick, capsys, tmp_path):
    answer, module = (TRICKS[trick] if trick in TRICKS
                      else (_helper_module_answer(str(tmp_path)), "a1_helper"))
    A = assignment(1)
    result = A.check("q5", answer)
    out = capsys.readouterr().out
    assert not result and result.attempted
    assert out.startswith(f"✗ Q5 Corpus BLEU [20 pts]: case 1 of 7 uses module '{module}"), out
    assert "(allowed: the standard library and numpy; write it from the definitions)" in out
    assert A.score()["earned"] == 0 and A.score()["failed"] == ["q5"]
    A.summary()
    assert re.search(r"Q5 .* 0/20\s+failed", capsys.readouterr().out)


def test_a_from_scratch_answer_may_print_and_import_the_standard_library(capsys):
    def counts(tokens, n):
        import fractions  # noqa: F401 - an import of the standard library is allowed
        import numpy

        print("counting", len(tokens))
        return Counter(tuple(tokens[i:i + n]) for i in range(int(numpy.int64(len(tokens)))
                                                             - n + 1))
    assert assignment(1).check("q1", counts), capsys.readouterr().out
    assert "counting" in capsys.readouterr().out or True


def test_a_question_that_allows_the_library_accepts_it(capsys):
    """A2 Q2 takes its alignment from markeval.meteor: calling it is no offence."""
    assert assignment(2).check("q2", meteor_right), capsys.readouterr().out


def test_every_from_scratch_question_follows_its_assignment_s_rule():
    from markeval.exercises.assignments import (alignment_metrics, embedding_metrics,
                                                mark_evaluate, ngram_metrics)

    modules = {m.NUMBER: m for m in (ngram_metrics, alignment_metrics, embedding_metrics,
                                     mark_evaluate)}
    rules = {(n, t.key): t.question.allowed for n in (1, 2, 3, 4)
             for t in assignment(n).tasks if t.question and t.question.allowed is not None}
    assert len(rules) >= 18
    for (n, key), allowed in rules.items():
        assert allowed == modules[n].ALLOWED, (n, key)
        for name in allowed:
            __import__(name)
