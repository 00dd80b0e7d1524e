"""Assignment 4, Mark-Evaluate: k-NN balls, capture counts, ME scores and a mode-collapse study."""

from __future__ import annotations

import functools
import math

import numpy as np

from markeval.exercises.assignments._grading import Task, make_task

__all__ = ["ALLOWED", "A4_K", "A4_SIZES", "A4_TOPIC_ORDER", "NUMBER", "TITLE", "bbc_collapse_data",
           "collapse_schedule", "tasks"]

NUMBER = 4
TITLE = "Mark-Evaluate"
#: What a from-scratch answer may use: the standard library and NumPy.
ALLOWED = ("numpy",)
#: (reference size, pool rows per topic). The pool holds a whole evaluation set of every topic,
#: so every level of the mode-collapse study, down to one topic, scores a set of the same size.
A4_SIZES = {"ci": (100, 100), "full": (500, 500)}
A4_TOPIC_ORDER = ("business", "entertainment", "politics", "sports", "tech")
A4_K = 3  #: neighbours of the BBC study (at k = 1 or 2 the ci-sized study is mostly noise)


def _point_sets(rng, count: int, *, grid: bool):
    """Pairs of point sets; on a small integer grid (ties, duplicates) or Gaussian."""
    out = []
    for i in range(count):
        n, n_p, d = int(rng.integers(4, 25)), int(rng.integers(4, 25)), int(rng.integers(1, 4))
        if grid and i % 2 == 0:
            S = rng.integers(0, 5, size=(n, d)).astype(float)
            Sp = rng.integers(0, 5, size=(n_p, d)).astype(float) + float(rng.integers(0, 3))
        else:
            S = rng.normal(size=(n, d))
            Sp = rng.normal(size=(n_p, d)) + rng.uniform(0, 4)
        out.append((S, Sp, int(rng.integers(1, min(n, n_p)))))
    return out


def _radii_reference(X, k):
    from markeval.geometry import knn_balls

    return np.asarray(knn_balls(X, k).radii)


def _inside_reference(Q, S, k):
    from markeval.geometry import ball_membership, knn_balls

    return np.asarray(ball_membership(Q, knn_balls(S, k)).inside_any)


def _counts_reference(S, Sp, k):
    from markeval.population.mark_evaluate import me_petersen

    r = me_petersen(S, Sp, k, progress=False)
    return (r.marked, r.captured, r.recaptured)


def _me_score_reference(estimate, population):
    from markeval.population.mark_evaluate import me_score

    return me_score(estimate, population)


def _me_score_cases(rng):
    cases = [(20.0, 20), (25.0, 20), (15.0, 20), (60.0, 20), (0.0, 20), (math.inf, 20)]
    cases += [(float(rng.uniform(0, 300)), int(rng.integers(2, 150))) for _ in range(14)]
    return cases


def _petersen_cases(rng):
    cases = _point_sets(rng, 12, grid=True)
    far = rng.normal(size=(8, 2))
    cases.append((far, far + 100.0, 2))  # disjoint: nothing recaptured
    ref, pool, _ = bbc_collapse_data()
    for _ in range(2):  # real sentence embeddings
        a = rng.choice(len(ref), size=30, replace=False)
        b = rng.choice(len(pool), size=30, replace=False)
        cases.append((ref[a], pool[b], int(rng.integers(1, 6))))
    return cases


def _petersen_reference(S, Sp, k):
    from markeval.population.mark_evaluate import me_petersen

    return me_petersen(S, Sp, k, progress=False).score


def collapse_schedule(labels, topic_order, n: int) -> dict:
    """Rows of the evaluation set at every diversity level of the mode-collapse study.

    Level ``L`` (``L = len(topic_order), …, 1``) keeps the first ``L`` topics of
    ``topic_order``. It takes ``n // L`` rows from each kept topic, one more from each of the
    first ``n % L`` of them, always the *first* rows of that topic in pool order, so the set
    has ``n`` rows whenever every topic has ``n`` rows in the pool (as in
    :func:`bbc_collapse_data`).

    Returns
    -------
    dict
        ``{L: list of row indices into the pool}``, levels in decreasing order.

    Examples
    --------
    >>> collapse_schedule(["x", "y", "x", "y", "x"], ["y", "x"], 3)
    {2: [1, 3, 0], 1: [1, 3]}

    (Level 1 has only two "y" rows, fewer than ``n``: the function takes what there is.)
    """
    labels = list(labels)
    out = {}
    for level in range(len(topic_order), 0, -1):
        rows = []
        for t, topic in enumerate(topic_order[:level]):
            share = n // level + (1 if t < n % level else 0)
            rows += [i for i, lab in enumerate(labels) if lab == topic][:share]
        out[level] = rows
    return out


def _mode_collapse_scores(reference, pool, labels, topic_order, n: int, k: int) -> dict:
    """The mode-collapse study of Assignment 4, Q6, with markeval's estimators.

    For every level of :func:`collapse_schedule`, the evaluation set ``pool[rows]`` is scored
    against ``reference`` with :func:`markeval.mark_evaluate`.

    Returns
    -------
    dict
        ``{level: (petersen, schnabel_quality, schnabel_diversity)}`` (floats), levels in
        decreasing order.
    """
    from markeval.population.mark_evaluate import mark_evaluate

    pool = np.asarray(pool, float)
    out = {}
    for level, rows in collapse_schedule(labels, topic_order, n).items():
        r = mark_evaluate(reference, pool[rows], k=k, progress=False)
        out[level] = (r.petersen.score, r.schnabel_quality.score, r.schnabel_diversity.score)
    return out


def _collapse_cases(rng):
    cases = []
    for _ in range(3):  # well separated Gaussian clusters
        topics = ["t0", "t1", "t2", "t3"]
        centres = rng.normal(size=(4, 3)) * 10
        labels = rng.permutation(np.repeat(topics, 12)).tolist()
        pool = np.array([centres[topics.index(lab)] for lab in labels]) + rng.normal(size=(48, 3))
        ref = np.repeat(centres, 5, axis=0) + rng.normal(size=(20, 3))
        order = rng.permutation(topics).tolist()
        cases.append((ref, pool, labels, order, 20, int(rng.integers(1, 4))))
    ref, pool, labels = bbc_collapse_data()
    cases.append((ref, pool, labels, list(A4_TOPIC_ORDER), len(ref), A4_K))
    return cases




@functools.lru_cache(maxsize=2)
def _bbc_collapse_data(profile: str):
    from markeval.experiments.sensitivity import bbc_sets
    from markeval.encoders import sentence_embeddings

    n_ref, per_topic = A4_SIZES[profile]
    ref_texts, pool = bbc_sets(n_ref, pool_per_topic=per_topic, seed=0)
    ref = sentence_embeddings(ref_texts, progress=False)
    emb = sentence_embeddings(list(pool["sentence"]), progress=False)
    return (np.asarray(ref, float), np.asarray(emb, float), tuple(pool["topic"]))


def bbc_collapse_data():
    """BBC News sentence embeddings (all-MiniLM-L6-v2) for the Assignment 4 study.

    A reference of ``n`` sentences from half 'a' of the corpus (equal shares of the five
    topics) and a pool from half 'b', sizes from :data:`A4_SIZES` for the current profile.
    Cached: the notebook and its checker encode once.

    Returns
    -------
    reference : numpy.ndarray, shape (n, 384)
    pool : numpy.ndarray, shape (5 * per_topic, 384)
    labels : tuple of str
        The topic of every pool row (rows are ordered by topic).
    """
    from markeval.profile import current_profile

    ref, pool, labels = _bbc_collapse_data(current_profile())
    return ref.copy(), pool.copy(), list(labels)


_SCORE_NAMES = ("petersen", "schnabel_quality", "schnabel_diversity")  # the study's scores


def _score_drops() -> dict:
    """Assignment 4, Q7: each score with five topics minus the score with one, BBC study.

    Returns
    -------
    dict
        ``{name: drop}`` for the names of ``_SCORE_NAMES`` (positive: the score falls).
    """
    ref, pool, labels = bbc_collapse_data()
    table = _mode_collapse_scores(ref, pool, labels, list(A4_TOPIC_ORDER), len(ref), A4_K)
    return {name: table[5][i] - table[1][i] for i, name in enumerate(_SCORE_NAMES)}


def tasks() -> list[Task]:
    """The questions of Assignment 4, in order."""
    return [
        make_task("q1", "k-NN radii", 10, "code",
              answer="my_knn_radii",
              reference=_radii_reference, allowed=ALLOWED,
              cases=lambda rng: [(S, k) for S, _, k in _point_sets(rng, 14, grid=True)],
              hints=["The radius of x is the distance to its k-th nearest neighbour in its own "
                     "set, x itself excluded (a duplicate of x is a neighbour at distance 0).",
                     "Set the diagonal of the distance matrix to inf, sort each row, take "
                     "column k - 1; return distances, not squared distances."]),
        make_task("q2", "Inside any ball", 15, "code",
              answer="my_inside_any",
              reference=_inside_reference, allowed=ALLOWED,
              cases=lambda rng: [(Sp, S, k) for S, Sp, k in _point_sets(rng, 14, grid=True)],
              hints=["The balls are those of S (radii from S alone); the queries are Q.",
                     "Balls are closed: a point exactly on the boundary is inside."]),
        make_task("q3", "Petersen counts M, C, R", 15, "code",
              answer="my_petersen_counts",
              reference=_counts_reference, cases=lambda rng: _point_sets(rng, 14, grid=True),
              allowed=ALLOWED,
              hints=["a = number of s' inside some ball of S; b = number of s inside some ball "
                     "of S'.",
                     "M = |S| + a, C = |S'| + b, R = a + b."]),
        make_task("q4", "ME from an estimate (Eq. 1)", 10, "code",
              answer="my_me_score",
              reference=_me_score_reference, cases=_me_score_cases,
              allowed=ALLOWED,
              hints=["Eq. 1 as printed uses max; the erratum is min: 1 - min(|P̂ - P| / P, 1).",
                     "The score is always in [0, 1]."]),
        make_task("q5", "ME_Petersen", 15, "code",
              answer="my_me_petersen",
              reference=_petersen_reference, cases=_petersen_cases,
              allowed=ALLOWED,
              hints=["P̂ = M C / R, P = |S| + |S'|.",
                     "R = 0 (nothing recaptured) means P̂ = inf and a score of 0."]),
        make_task("q6", "Mode-collapse study", 20, "code",
              answer="my_mode_collapse",
              reference=_mode_collapse_scores, cases=_collapse_cases, rtol=1e-9,
              hints=["collapse_schedule(labels, topic_order, n) gives the rows of every level.",
                     "mark_evaluate(reference, evaluation, k) returns petersen, "
                     "schnabel_quality and schnabel_diversity results; keep their .score.",
                     "Quality is ME_Schnabel(S_r, S_e), diversity ME_Schnabel(S_e, S_r): the "
                     "argument order matters."]),
        make_task("q7", "Score drops, five topics to one", 5, "value",
              answer="my_drops",
              expected=_score_drops, rtol=1e-6, atol=1e-9,
              hints=["Run my_mode_collapse on the BBC data (reference, pool, labels, "
                     "list(A4_TOPIC_ORDER), len(reference), A4_K).",
                     "The drop of a score is its value at level 5 minus its value at level 1 "
                     "(positive when the score falls); one entry per score name."]),
        make_task("q8", "Quality vs diversity (interpretation)", 10, "written"),
    ]
