"""Mark-Evaluate (Mordido & Meinel 2020): population estimators on two embedding sets.

Every embedding is an animal and a trap at once. The trap of ``s ∈ S`` is its closed k-NN ball
(Eq. 2): ``s'`` is captured by ``s`` when ``‖s' − s‖ ≤`` the distance from ``s`` to its
``k``-th nearest neighbour in ``S``, ``s`` itself excluded (so ``NN_k(s, S)`` holds ``s`` and
``k`` neighbours). If ``S'`` is drawn from the population of ``S``, the union behaves as one
population of size ``P = |S| + |S'|`` and an estimator's ``P̂`` lands near ``P``. The score is
(Eq. 1, with the erratum ``min`` for the printed ``max``)::

    ME = 1 − min(|P̂ − P| / P, 1)

and ``P̂ = inf`` (no recapture) scores 0.

* :func:`me_petersen` (Eq. 3) — ``M = |S| + Σ f(s', S)``, ``C = |S'| + Σ f(s, S')``,
  ``R = Σ f(s', S) + Σ f(s, S')``, ``f(x, A) = 1`` when ``x`` is in some ball of ``A``;
* :func:`me_schnabel` (Eqs. 4–5) — one census per ``s'_i`` in input order (not symmetric);
  by default Eq. 4 as printed, ``P̂ = C_T M_T / R_T`` with ``M_T = |S ∪ S'|``, and Schnabel's
  own census estimator ``Σ C_i |M(i)| / Σ R_i`` as the option ``estimator="census"``;
* :func:`me_capture` (Eqs. 6–7) — the M0 MLE with ``t = |S| + |S'|`` occasions;
* :func:`mark_evaluate` — all four scores from one geometry pass.

The two sets have one meaning and two spellings: ``S`` is the reference set and ``S'`` the
candidate (generated) set. The three estimators keep the paper's ``(S, S_prime)``, the names
of markeval's API contract, so that each line reads against its equation; every other
function of two sets, :func:`mark_evaluate` among them (and FID, PRD, IPR), takes
``(reference, candidate)`` in that order.

The estimators work on two arrays of samples. Text input passes through a thin text layer
first (:mod:`markeval.population.samples`), with the default model or ``model``:
``level="sentence"`` gives one sample per text (:func:`markeval.encoders.sentence_embeddings`),
``level="word"`` one sample per token per layer of ``layers`` (default the last five, as in the
paper's Figure 5).

Duplicate points are allowed: a duplicate is a neighbour at distance 0 (see
:mod:`markeval.geometry`).

The ball counts are exact by default, and quadratic in the number of samples (all four scores
on 10⁴ × 10⁴ samples take seconds, on 10⁵ × 10⁵ minutes). ``neighbours="index"`` takes them
from a neighbour index instead (:mod:`markeval.geometry.index`: what it can miss, what its
candidates settle); every result then carries ``neighbour_report``, with the share of balls
settled by their candidates and an audit against exact distances (which warns below its gate),
and ``estimated_error``, the audit's estimate of the score's error. ``n_jobs`` runs the exact
path's tiles as tasks, on a Dask cluster inside ``joblib.parallel_config(backend="dask")``
(:mod:`markeval.geometry.tasks`).

Examples
--------
>>> import numpy as np
>>> S = np.random.default_rng(0).normal(size=(30, 2))
>>> r = mark_evaluate(S, S.copy(), k=3, progress=False)
>>> r.petersen.score, r.schnabel_quality.score, r.schnabel_diversity.score, r.capture.score
(1.0, 1.0, 1.0, 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from markeval import geometry
from markeval._checks import check_choice
from markeval._signature import make_signature
from markeval.geometry.arithmetic import Arithmetic, takes_arithmetic
from markeval.population.ecology import m0_mle
from markeval.population.samples import encode_sets

__all__ = [
    "MEPetersenResult",
    "MESchnabelResult",
    "MECaptureResult",
    "MarkEvaluateResult",
    "me_petersen",
    "me_schnabel",
    "me_capture",
    "mark_evaluate",
    "mark_evaluate_from_balls",
    "me_score",
    "SCHNABEL_ESTIMATORS",
]

#: ME_Schnabel's estimators: Eq. 4 as printed (the default) and Schnabel's census form.
SCHNABEL_ESTIMATORS = ("printed", "census")


@dataclass(frozen=True)
class MEPetersenResult:
    """ME_Petersen: ``score``, the estimate ``P̂``, ``P = |S| + |S'|`` and the counts of Eq. 3.

    ``item_scores`` is None: the score belongs to the two sets, not to any one sample.
    ``neighbour_report`` says how ``neighbours="index"`` decided the balls (None: exact), and
    ``estimated_error`` is its audit's estimate of ``score`` minus the exact path's score
    (None on the exact path or without an audit; see :mod:`markeval.population.mark_evaluate`).
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    score: float
    estimate: float
    population: int
    marked: int
    captured: int
    recaptured: int
    k: int
    signature: str
    neighbour_report: geometry.NeighbourReport | None = None
    estimated_error: float | None = None


@dataclass(frozen=True)
class MESchnabelResult:
    """ME_Schnabel over the ``|S'|`` censuses (Eqs. 4–5).

    ``estimate`` is ``sum_captured * marked_total / sum_recaptured`` (Eq. 4 as printed,
    ``C_T M_T / R_T``) or ``sum_captured_times_marked / sum_recaptured`` (Schnabel's census
    estimator), as ``estimator`` says. ``item_scores`` is None (a set-level score);
    ``neighbour_report`` and ``estimated_error`` as in :class:`MEPetersenResult`.
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    score: float
    estimate: float
    population: int
    sum_captured_times_marked: int
    sum_captured: int
    sum_recaptured: int
    initially_marked: int
    marked_total: int
    estimator: str
    k: int
    signature: str
    neighbour_report: geometry.NeighbourReport | None = None
    estimated_error: float | None = None


@dataclass(frozen=True)
class MECaptureResult:
    """ME_CAPTURE: the M0 MLE from ``occasions``, ``captures`` (``C_total``), ``distinct``.

    ``item_scores`` is None (a set-level score); ``neighbour_report`` and ``estimated_error``
    as in :class:`MEPetersenResult`.
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    score: float
    estimate: float
    population: int
    occasions: int
    captures: int
    distinct: int
    ci_low: float
    ci_high: float
    k: int
    signature: str
    neighbour_report: geometry.NeighbourReport | None = None
    estimated_error: float | None = None


@dataclass(frozen=True)
class MarkEvaluateResult:
    """All of Mark-Evaluate: quality = ME_Schnabel(S_r, S_e), diversity = ME_Schnabel(S_e, S_r).

    ``score`` is ME_Petersen's: of the four it is the one that, like a distance between
    distributions, treats the two sets alike (symmetric), and it is the paper's first
    estimator (Eq. 3). It is a convenience for code that wants one number per result; a study
    should report the four scores, which the metric registry lists as separate metrics.
    ``item_scores`` is None (set-level scores); ``neighbour_report`` as in
    :class:`MEPetersenResult` (the same for all four).
    """

    higher_is_better: ClassVar[bool] = True
    item_scores: ClassVar[None] = None

    petersen: MEPetersenResult
    schnabel_quality: MESchnabelResult
    schnabel_diversity: MESchnabelResult
    capture: MECaptureResult
    k: int
    signature: str
    neighbour_report: geometry.NeighbourReport | None = None

    @property
    def score(self) -> float:
        """ME_Petersen's score (see the class docstring for why that one)."""
        return self.petersen.score


def me_score(estimate: float, population: int) -> float:
    """Eq. 1 with the erratum: ``1 − min(|P̂ − P| / P, 1)``; ``P̂ = inf`` gives 0.

    With the printed ``max`` the loss would be at least 1, so ME would never exceed 0.

    Examples
    --------
    >>> me_score(25.0, 20), me_score(float("inf"), 20), me_score(60.0, 20)
    (0.75, 0.0, 0.0)
    """
    if math.isinf(estimate):
        return 0.0
    return float(1.0 - min(abs(estimate - population) / population, 1.0))


@dataclass(frozen=True)
class _Audited:
    """One set's audited rows, as exact distances decided them (see :func:`_estimated_error`).

    ``indices``: their balls' ``k`` nearest; ``members``: the other set's points in their balls;
    ``marks``: the other set's balls holding them. Each None where the audit did not decide it
    (balls or counts that came from elsewhere)."""

    rows: np.ndarray
    indices: np.ndarray | None
    members: np.ndarray | None
    marks: np.ndarray | None


@dataclass(frozen=True)
class _Geometry:
    """Balls of both sets and who is inside whose ball: everything the estimators count."""

    n: int
    n_prime: int
    k: int
    balls: geometry.KNNBalls
    balls_prime: geometry.KNNBalls
    s_in_prime: geometry.Membership    # queries S, balls of S'
    prime_in_s: geometry.Membership    # queries S', balls of S
    settings: dict                     # how text became samples, for signatures
    report: geometry.NeighbourReport | None = None   # the index path's account (else None)
    audited: tuple = (None, None)      # the audit of S and of S' (_Audited or None each)

    def signature(self, metric: str, **fields) -> str:
        """The signature of ``metric``: its fields, the text settings, the index settings."""
        extra = {} if self.report is None else {"neighbours": self.report.method}
        return make_signature(metric, k=self.k, **fields, **self.settings, **extra)

    def reversed(self) -> _Geometry:
        """The same geometry with the roles of the two sets swapped (no new distances)."""
        return _Geometry(self.n_prime, self.n, self.k, self.balls_prime, self.balls,
                         self.prime_in_s, self.s_in_prime, self.settings, self.report,
                         self.audited[::-1])


def _audits(report, k: int) -> tuple:
    """``(S's, S''s)`` :class:`_Audited` from a report of a pass whose sets 0 and 1 are S and
    S' (None each where it holds no single-radius sample of them)."""
    sample = None if report is None else report.sample
    if sample is None or any(c.shape[1] != 1 for c in (*sample.per_ball.values(),
                                                       *sample.per_point.values())):
        return (None, None)

    def of(own: int, other: int) -> _Audited | None:
        if own not in sample.rows:
            return None
        knn = sample.knn.get(own)
        members, marks = sample.per_ball.get((own, other)), sample.per_point.get((other, own))
        return _Audited(sample.rows[own],
                        knn[0] if knn is not None and knn[0].shape[1] == k else None,
                        None if members is None else members[:, 0],
                        None if marks is None else marks[:, 0])

    return of(0, 1), of(1, 0)


def _geometry(S, S_prime, k, names, *, model, level, layers,
              arithmetic: Arithmetic) -> _Geometry:
    a, b, settings = encode_sets(S, S_prime, names, model=model, level=level, layers=layers,
                                 progress=arithmetic.progress)
    # The sets, their dimension and k are checked there, naming the sets as here.
    g = geometry.mutual_balls(a, b, k, names=names, arithmetic=arithmetic)
    return _Geometry(len(g.balls_a), len(g.balls_b), g.balls_a.k, g.balls_a, g.balls_b,
                     g.a_in_b, g.b_in_a, settings, g.report, _audits(g.report, g.balls_a.k))


def _put(values: np.ndarray, rows: np.ndarray, new: np.ndarray) -> np.ndarray:
    out = values.copy()
    out[rows] = new
    return out


def _patched(g: _Geometry, side: int) -> _Geometry:
    """``g`` with the audited rows of one set (0: S, 1: S') as exact distances decide them."""
    a = g.audited[side]
    own = g.balls if side == 0 else g.balls_prime
    in_own = g.prime_in_s if side == 0 else g.s_in_prime      # the other set in own balls
    own_in = g.s_in_prime if side == 0 else g.prime_in_s      # own points in the other's
    if a.indices is not None:
        own = replace(own, indices=_put(own.indices, a.rows, a.indices))
    if a.members is not None:
        in_own = replace(in_own, points_per_ball=_put(in_own.points_per_ball, a.rows, a.members))
    if a.marks is not None:
        own_in = replace(own_in, balls_per_point=_put(own_in.balls_per_point, a.rows, a.marks))
    if side == 0:
        return replace(g, balls=own, prime_in_s=in_own, s_in_prime=own_in)
    return replace(g, balls_prime=own, s_in_prime=in_own, prime_in_s=own_in)


def _estimated_error(g: _Geometry, counts, score) -> float | None:
    """The audit's estimate of a score's error: ``score`` minus the exact path's score.

    Every count an estimator sums runs over the rows of one set (Petersen's marks, Schnabel's
    censuses, CAPTURE's captures). The audit decided a simple random sample of ``m`` rows of
    each set again by exact distances. Put into the geometry, they change each count by what
    those rows got wrong; that change times ``n / m`` is the difference estimator (survey
    sampling's) of what all ``n`` rows got wrong. The score of the counts so corrected,
    subtracted from the score, is the estimate; with every row audited it is the error itself.
    Where a row's error changes other rows' terms (a census's neighbours decide when later
    censuses find them marked) the estimate is first order.
    """
    sides = [side for side, a in enumerate(g.audited) if a is not None]
    if not sides:
        return None
    base = np.asarray(counts(g), dtype=float)
    corrected = base.copy()
    for side in sides:
        expand = (g.n, g.n_prime)[side] / len(g.audited[side].rows)
        corrected += (np.asarray(counts(_patched(g, side)), dtype=float) - base) * expand
    return float(score(base) - score(corrected))


def _petersen_counts(g: _Geometry) -> tuple[int, int]:
    """``(Σ f(s', S), Σ f(s, S'))``."""
    return int(g.prime_in_s.inside_any.sum()), int(g.s_in_prime.inside_any.sum())


def _petersen_estimate(n: int, n_prime: int, f_prime: float, f_s: float) -> float:
    recaptured = f_prime + f_s
    return math.inf if recaptured == 0 else (n + f_prime) * (n_prime + f_s) / recaptured


def _petersen(g: _Geometry) -> MEPetersenResult:
    f_prime, f_s = _petersen_counts(g)
    marked, captured, recaptured = g.n + f_prime, g.n_prime + f_s, f_prime + f_s
    est = _petersen_estimate(g.n, g.n_prime, f_prime, f_s)
    pop = g.n + g.n_prime
    error = _estimated_error(
        g, _petersen_counts, lambda c: me_score(_petersen_estimate(g.n, g.n_prime, *c), pop))
    return MEPetersenResult(me_score(est, pop), float(est), pop, marked, captured, recaptured,
                            g.k, g.signature("me_petersen"), g.report, error)


def _check_estimator(estimator, name: str = "estimator") -> str:
    return check_choice(estimator, name, SCHNABEL_ESTIMATORS)


def _schnabel_counts(g: _Geometry) -> tuple[int, int, int, int]:
    """``(Σ C_i |M(i)|, C_T, R_T, |M(1)|)`` over the censuses of S' (Eqs. 4–5)."""
    n_p, k = g.n_prime, g.k
    # Census i catches NN_k(s'_i, S') (s'_i and its k neighbours) and the s inside its ball.
    caught = np.concatenate([np.arange(n_p)[:, None], g.balls_prime.indices], axis=1)
    s_caught = g.s_in_prime.points_per_ball.astype(np.int64)
    # M(1): all of S, and the s' inside S's balls. Then census i marks caught[i]. first[j] is
    # the census that marks s'_j (−1: marked from the start); j is marked before census i
    # exactly when first[j] < i, so the loop over censuses becomes two vectorised counts.
    initially = g.prime_in_s.inside_any
    first = np.full(n_p, n_p, dtype=np.int64)
    np.minimum.at(first, caught.ravel(), np.repeat(np.arange(n_p), k + 1))
    first[initially] = -1
    census = np.arange(n_p)
    already = (first[caught] < census[:, None]).sum(axis=1)   # |M(i) ∩ NN_k(s'_i, S')|
    newly = np.bincount(first[~initially], minlength=n_p)[:n_p]
    marked_before = g.n + int(initially.sum()) + np.concatenate([[0], np.cumsum(newly)[:-1]])
    captured = (k + 1) + s_caught
    # Every s caught is marked (S was marked first); Theorem A.2: the S' term once per census.
    recaptured = s_caught + already
    return (int((captured * marked_before).sum()), int(captured.sum()), int(recaptured.sum()),
            g.n + int(initially.sum()))


def _schnabel_estimate(counts, marked_total: int, estimator: str) -> float:
    sum_cm, sum_c, sum_r = counts[:3]
    numerator = sum_c * marked_total if estimator == "printed" else sum_cm
    return math.inf if sum_r == 0 else numerator / sum_r


def _schnabel(g: _Geometry, estimator: str = "printed") -> MESchnabelResult:
    counts = _schnabel_counts(g)
    sum_cm, sum_c, sum_r, initially = counts
    # Census i marks s'_i itself, so after the last census every point is marked: M_T = |S ∪ S'|.
    pop = marked_total = g.n + g.n_prime
    est = _schnabel_estimate(counts, marked_total, estimator)
    error = _estimated_error(
        g, _schnabel_counts,
        lambda c: me_score(_schnabel_estimate(c, marked_total, estimator), pop))
    return MESchnabelResult(me_score(est, pop), float(est), pop, sum_cm, sum_c, sum_r,
                            initially, marked_total, estimator, g.k,
                            g.signature("me_schnabel", estimator=estimator), g.report, error)


def _capture_counts(g: _Geometry) -> tuple[int]:
    """``(C_total,)``: each point's trap catches itself, its k neighbours, and the other set's
    points inside."""
    occasions = g.n + g.n_prime
    return (occasions * (g.k + 1) + int(g.prime_in_s.points_per_ball.sum())
            + int(g.s_in_prime.points_per_ball.sum()),)


def _capture_fit(occasions: int, captures: float):
    # The MLE takes whole captures, between one per animal and one per animal per occasion.
    return m0_mle(occasions, min(max(round(captures), occasions), occasions * occasions),
                  occasions)


def _capture(g: _Geometry) -> MECaptureResult:
    occasions = g.n + g.n_prime
    (captures,) = _capture_counts(g)
    fit = m0_mle(occasions, captures, occasions)
    error = _estimated_error(
        g, _capture_counts,
        lambda c: me_score(_capture_fit(occasions, c[0]).estimate, occasions))
    return MECaptureResult(me_score(fit.estimate, occasions), fit.estimate, occasions, occasions,
                           captures, occasions, fit.ci_low, fit.ci_high, g.k,
                           g.signature("me_capture"), g.report, error)


_DOC_PARAMS = """
    Parameters
    ----------
    S, S_prime : array_like of shape (n, d) and (n', d), or lists of str
        Embeddings (finite, at least 2 rows each; duplicate rows are allowed: a duplicate is a
        neighbour at distance 0), or texts, encoded with ``model`` as ``level`` says.
    k : int
        Neighbours per ball, ``1 <= k < min(n, n')`` (``n``, ``n'`` count samples: tokens ×
        layers at the word level).
    model : None, str, os.PathLike, Encoder or MemoEncoder, optional
        Encoder for text input (default: the offline default model), as in
        :func:`markeval.encoders.resolve_encoder`; its settings (batch size, disk cache)
        apply.
    level : {"sentence", "word"}, default "sentence"
        Text input only. ``"sentence"``: one sample per text
        (:func:`markeval.encoders.sentence_embeddings`). ``"word"``: one sample per token per
        layer of ``layers`` (:func:`word_samples`, paper §6).
    layers : int or sequence of int, optional
        ``level="word"`` only; default the last five layers.
    backend, device : optional
        Passed to :mod:`markeval.geometry` (``"torch"`` and ``"cuda"`` for a GPU; exact either
        way).
    neighbours : {"exact", "index"} or geometry.IndexSettings, default "exact"
        ``"index"``: the ball counts from a neighbour index (:mod:`markeval.geometry.index`);
        the result's ``neighbour_report`` says how the balls were decided and what the audit
        against exact distances found (it warns below its gate), and ``estimated_error`` what
        that implies for the score.
    n_jobs : int or None, default 1
        Exact path only: run the distance tiles as tasks (local processes, or a Dask cluster
        inside ``joblib.parallel_config(backend="dask")``); the same result.
    progress : bool, default True
        Show progress bars (encoding, and each pass over the distances).
    arithmetic : geometry.Arithmetic, optional
        ``backend``, ``device``, ``progress``, ``neighbours`` and ``n_jobs`` as one object,
        instead of giving them loosely (giving both is refused); it also sets the tiles'
        ``dtype`` and ``block_size`` (otherwise float32 and automatic).
"""


@takes_arithmetic
def me_petersen(S, S_prime, k: int, *, model=None, level: str = "sentence", layers=None,
                backend: str = "numpy", device=None, progress: bool = True,
                neighbours="exact", n_jobs: int | None = 1,
                arithmetic: Arithmetic | None = None) -> MEPetersenResult:
    """ME_Petersen (Eq. 3), symmetric in ``(S, S')``; ``R = 0`` gives ``P̂ = inf``, score 0.
    {params}
    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> r = me_petersen(S, S + 100.0, k=1, progress=False)
    >>> r.score, r.recaptured, r.estimate
    (0.0, 0, inf)
    """
    g = _geometry(S, S_prime, k, ("S", "S_prime"), model=model, level=level, layers=layers,
                  arithmetic=arithmetic)
    return _petersen(g)


@takes_arithmetic
def me_schnabel(S, S_prime, k: int, *, estimator: str = "printed", model=None,
                level: str = "sentence", layers=None, backend: str = "numpy", device=None,
                progress: bool = True, neighbours="exact", n_jobs: int | None = 1,
                arithmetic: Arithmetic | None = None) -> MESchnabelResult:
    """ME_Schnabel (Eqs. 4–5): ``S`` marked first, then one census per ``s'_i`` in input order.

    Before the censuses, all of ``S`` and every ``s'`` inside a ball of ``S`` are marked
    (``M(1)``). Census ``i`` captures ``C_i = k + 1 + #{{s in the ball of s'_i}}`` points,
    ``NN_k(s'_i, S')`` and those ``s``; its recaptures are ``R_i`` = those ``s`` plus
    ``|M(i) ∩ NN_k(s'_i, S')|`` (counted once per census: the printed sum over ``j`` would add
    it ``|S|`` times, and Theorem A.2 holds only with once); then ``NN_k(s'_i, S')`` is
    marked. After the last census everything is marked, ``M_T = |S| + |S'|``.

    ``estimator="printed"`` (default): Eq. 4 as printed, ``P̂ = C_T M_T / R_T`` with
    ``C_T = Σ C_i`` and ``R_T = Σ R_i``. ``estimator="census"``: Schnabel's (1938) census
    estimator ``P̂ = Σ C_i |M(i)| / Σ R_i``, which weighs each census by the marks at large
    before it. The two agree on equal sets (both give ``2|S|``, Theorem A.2) and differ
    elsewhere; the signature says which one ran.

    Not symmetric: quality is ``me_schnabel(reference, candidate)``, diversity
    ``me_schnabel(candidate, reference)``.
    {params}
    estimator : {{"printed", "census"}}, default "printed"
        Which form of Eq. 4 turns the census counts into ``P̂``.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0.0], [1.0], [3.0]])
    >>> r = me_schnabel(S, S.copy(), k=1, progress=False)
    >>> r.score, r.sum_captured, r.marked_total, r.sum_recaptured
    (1.0, 12, 6, 12)
    >>> far = me_schnabel(S, S + 100.0, k=2, progress=False)   # disjoint: 1 - 1/K, any order
    >>> far.estimate, round(far.score, 4)
    (9.0, 0.5)
    >>> me_schnabel(S, S + 100.0, k=2, estimator="census",
    ...             progress=False).signature  # doctest: +ELLIPSIS
    'me_schnabel|k:2|estimator:census|version:...'
    """
    estimator = _check_estimator(estimator)
    g = _geometry(S, S_prime, k, ("S", "S_prime"), model=model, level=level, layers=layers,
                  arithmetic=arithmetic)
    return _schnabel(g, estimator)


@takes_arithmetic
def me_capture(S, S_prime, k: int, *, model=None, level: str = "sentence", layers=None,
               backend: str = "numpy", device=None, progress: bool = True,
               neighbours="exact", n_jobs: int | None = 1,
               arithmetic: Arithmetic | None = None) -> MECaptureResult:
    """ME_CAPTURE (Eqs. 6–7): model M0's MLE, symmetric in ``(S, S')``.

    ``t = |S| + |S'|`` occasions (one per trap), ``C_total = Σ_s (k + 1 + #s' in ball of s) +
    Σ_s' (k + 1 + #s in ball of s')``, ``M_T = |S| + |S'|`` distinct animals (each trap catches
    its own centre); ``P̂`` from :func:`markeval.population.ecology.m0_mle`.
    {params}
    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0.0], [1.0], [3.0]])
    >>> r = me_capture(S, S.copy(), k=1, progress=False)
    >>> r.score, r.occasions, r.captures
    (1.0, 6, 24)
    """
    g = _geometry(S, S_prime, k, ("S", "S_prime"), model=model, level=level, layers=layers,
                  arithmetic=arithmetic)
    return _capture(g)


@takes_arithmetic
def mark_evaluate(reference, candidate, k: int, *, schnabel_estimator: str = "printed",
                  model=None, level: str = "sentence", layers=None, backend: str = "numpy",
                  device=None, progress: bool = True, neighbours="exact",
                  n_jobs: int | None = 1,
                  arithmetic: Arithmetic | None = None) -> MarkEvaluateResult:
    """All four Mark-Evaluate scores of ``candidate`` against ``reference`` from one geometry.

    ``petersen`` and ``capture`` are symmetric; ``schnabel_quality`` =
    ``me_schnabel(reference, candidate)`` and ``schnabel_diversity`` =
    ``me_schnabel(candidate, reference)``.

    Parameters
    ----------
    reference, candidate : array_like or lists of str
        As ``S`` and ``S_prime`` of :func:`me_petersen`.
    k, model, level, layers, backend, device, progress, neighbours, n_jobs, arithmetic
        As in :func:`me_petersen`.
    schnabel_estimator : {"printed", "census"}, default "printed"
        ``estimator`` of :func:`me_schnabel`, for both Schnabel scores.

    Examples
    --------
    >>> import numpy as np
    >>> ref = np.random.default_rng(0).normal(size=(40, 3))
    >>> r = mark_evaluate(ref, ref + 50.0, k=2, progress=False)
    >>> r.petersen.score, r.schnabel_quality.sum_recaptured
    (0.0, 80)
    """
    estimator = _check_estimator(schnabel_estimator, "schnabel_estimator")
    g = _geometry(reference, candidate, k, ("reference", "candidate"), model=model,
                  level=level, layers=layers, arithmetic=arithmetic)
    return _all_scores(g, estimator)


def mark_evaluate_from_balls(balls: geometry.KNNBalls, balls_prime: geometry.KNNBalls, *,
                             membership: tuple[geometry.Membership, geometry.Membership]
                             | None = None,
                             schnabel_estimator: str = "printed") -> MarkEvaluateResult:
    """All four Mark-Evaluate scores from k-NN balls computed beforehand.

    The array core of :func:`mark_evaluate`, for studies that reuse one set's balls against
    many others (a TAC topic's reference samples against each of its summaries): only the
    memberships are new for each pair.

    Parameters
    ----------
    balls, balls_prime : geometry.KNNBalls
        The balls of the reference set S and of the candidate set S', with the same ``k``
        (:func:`markeval.geometry.knn_balls`).
    membership : (Membership, Membership), optional
        ``geometry.mutual_membership(balls, balls_prime)``; computed when omitted.
    schnabel_estimator : {"printed", "census"}, default "printed"

    Examples
    --------
    >>> import numpy as np
    >>> from markeval import geometry
    >>> ref = np.random.default_rng(0).normal(size=(40, 3))
    >>> a, b = geometry.knn_balls(ref, 2), geometry.knn_balls(ref + 50.0, 2)
    >>> mark_evaluate_from_balls(a, b).petersen.score
    0.0
    """
    estimator = _check_estimator(schnabel_estimator, "schnabel_estimator")
    if balls.k != balls_prime.k:
        raise ValueError(f"balls and balls_prime must share k, got {balls.k} and {balls_prime.k}")
    if membership is None:
        membership = geometry.mutual_membership(balls, balls_prime)
    s_in_prime, prime_in_s = membership
    # The index path's account, from the memberships when they came from it, else the balls.
    report = next((x.report for x in (s_in_prime, balls) if x.report is not None), None)
    # Its audit estimates the scores' errors where its sets 0 and 1 are S and S': a pass over
    # these two ball sets (the memberships', or one that drew both sets' balls).
    paired = report is not None and (report is s_in_prime.report
                                     or balls_prime.report is report)
    g = _Geometry(len(balls), len(balls_prime), balls.k, balls, balls_prime, s_in_prime,
                  prime_in_s, {}, report, _audits(report, balls.k) if paired else (None, None))
    return _all_scores(g, estimator)


def _all_scores(g: _Geometry, estimator: str) -> MarkEvaluateResult:
    return MarkEvaluateResult(_petersen(g), _schnabel(g, estimator),
                              _schnabel(g.reversed(), estimator), _capture(g), g.k,
                              g.signature("mark_evaluate", schnabel=estimator), g.report)


for _f in (me_petersen, me_schnabel, me_capture):
    _f.__doc__ = _f.__doc__.format(params=_DOC_PARAMS)
