"""The index path of :mod:`markeval.geometry`: k-NN balls and ball counts from a neighbour index.

The exact path computes every distance (quadratic in the number of points). This path asks an
approximate nearest-neighbour index for a short *candidate list* per point instead, and
decides everything it can from those candidates, with exact float64 distances.

What a query can miss
---------------------
Ball membership is not a plain k-NN query: ``s'`` is in the union of the balls of ``S`` when
``d(s, s') ≤ r_k(s)`` for *some* ``s``, each ball with its own radius. So we turn it around
and query from the ball's side: the candidate list of a centre ``s`` (its ``L`` nearest
points of all the sets, from one index over their union, sorted by exact distance) holds its
``k`` nearest in its own set, whose ``k``-th gives the radius, and the points of the other set
near it, of which those within the radius are its members. The search is a self-join, so each
pair it finds is a candidate both ways: ``s`` also gets, at no extra search, the centres whose
lists found it, where they lie no farther than the farthest of its own ``L`` (farther ones are
dropped: they would stretch the list past points nobody searched for, see below). These
*reverse edges* catch much of what one direction misses: at 10⁵ + 10⁵ MiniLM word samples
they cut the samples whose counts differ from the exact ones from 0.45 % to 0.10 %
(``benchmarks/neighbour_agreement.py``).
The list can still miss in two ways, both because the index is approximate (it may skip a
point nearer than others it returns, and no centre's list returned it either):

* a true ``k``-nearest neighbour of ``s`` is skipped: the radius comes out *too large*
  (never too small: it is the distance to a real ``k``-th point), the ball may then hold
  points it should not, and ``indices`` names a farther neighbour;
* a point of the other set inside the ball is skipped: it is not counted in that ball.

Nothing else can be wrong: every distance that decides anything is computed directly in
float64 (and compared as in the exact path), so an answer can only differ from the exact one
where the index skipped a point.

What the candidates settle, and what the audit measures
-------------------------------------------------------
*A ball is consistent with its candidates when its list runs past its radius*: the farthest
candidate lies strictly beyond ``r_k(s)`` and the list holds ``k`` points of the ball's own set.
Then, **if the list holds every point nearer than its farthest** (what an exact k-NN query
returns), no point outside the list can be in the ball or be one of its ``k`` nearest: the
ball's radius, neighbours and members all follow from the list. This is the stopping rule
"once the candidates of ``s'`` run past the largest radius in ``S``, no farther point can
contain ``s'``" applied ball by ball, with each ball's own radius instead of the
largest. A ball whose list stops inside it (a dense region: more than ``L`` points within its
radius) is searched again with a longer list (``escalate × L``), and if that still stops
inside, decided by exact distances to every point (the exact path, for that ball only): those
balls are exact unconditionally.

The condition in bold is the index's recall, and nothing here proves it, so the count is
called what it is: balls *consistent with their candidates*, not balls certified. We weighed
the other way, a real bound: skip an inverted list only when the triangle inequality (the
query's distance to the list's centroid, minus the list's radius) proves it holds no point
inside the ball. Measured on 25,000 + 25,000 MiniLM word samples
(``benchmarks/triangle_bound.py``, each ball at its exact radius, the best case), the bound
cannot skip 190 of the 223 lists for the median ball; no ball is proven within 32 lists, 3 %
within 128. A proof would scan most
of the index, and the index path would become the exact path with overhead. So recall is
*measured* instead, and the measurement is a gate:

* ``audit`` randomly chosen points of each set (seeded) are decided again by exact distances
  to every point, and the report counts on how many the index path agreed (radius,
  neighbours, members of its ball, and the balls containing it, at their exact radii: a
  decided radius is never too small, so only the few balls that hold a point at their
  decided radius need their exact one);
* when that agreement falls below ``min_agreement`` (default 99.5 %) the pass warns
  (:class:`IndexAgreementWarning`), or raises (:class:`IndexAgreementError`) with
  ``strict=True``, and the report says so: a starved index (``probes=1``) cannot give a clean
  report;
* the audited points' exact decisions travel with the report (:class:`AuditSample`), from
  which Mark-Evaluate and improved precision and recall estimate the error of each score
  (``estimated_error``: a difference estimator over the audited points).

``benchmarks/neighbour_agreement.py`` measures the agreement of the whole path with the exact
one on real embeddings. The default number of probed lists grows with the dimension
(:func:`default_probes`), so that the measured agreement on WMT17 word samples stays at or
above 99.9 % at 10⁵ samples per set, for 384-d MiniLM and 768-d mpnet alike.

The index
---------
faiss-cpu's ``IndexIVFFlat`` (an inverted file: k-means lists, each probed list scanned
exactly), chosen by measurement among faiss-cpu, hnswlib and usearch on word-level and
sentence embeddings (``benchmarks/neighbour_index.py``). It is deterministic (seeded k-means,
exact scans), so a rerun gives the same counts. Install it with ``pip install "markeval[index]"``
(or ``pip install faiss-cpu``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from markeval._checks import check_bool, check_int, check_number, check_probability
from markeval.geometry._kernels import (check_distance_range, direct_sq, knn_rows,
                                       membership_counts)

__all__ = ["AuditSample", "IndexAgreementError", "IndexAgreementWarning", "IndexSettings",
           "NeighbourReport", "default_probes", "index_pass"]

INSTALL = 'pip install "markeval[index]" (or: pip install faiss-cpu)'
#: The largest k-means seed faiss accepts (``ClusteringParameters.seed`` is a C ``int``).
FAISS_MAX_SEED = 2**31 - 1
#: The audit's agreement below which a result warns, or raises with ``strict=True``.
MIN_AGREEMENT = 0.995


class IndexAgreementWarning(UserWarning):
    """The index path's audit agreed with exact distances on fewer points than its gate."""


class IndexAgreementError(RuntimeError):
    """:class:`IndexAgreementWarning`, raised instead under ``IndexSettings(strict=True)``."""


def default_probes(dim: int) -> int:
    """Lists scanned per query when ``IndexSettings(probes=None)``: 32 up to 384 dimensions,
    four times as many for each doubling beyond.

    Measured on WMT17 word samples at 10⁵ per set (``benchmarks/neighbour_agreement.py``):
    with 384-d MiniLM, 32 probes leave 99.90 % of samples with every count exact; with 768-d
    mpnet, 32 probes leave 97.4 %, 64 leave 99.55 % and 128 leave 99.96 %. Beyond 768
    dimensions the rule is an extrapolation, which the audit's gate checks.

    Examples
    --------
    >>> default_probes(2), default_probes(384), default_probes(768), default_probes(1024)
    (32, 32, 128, 512)
    """
    dim = check_int(dim, "dim", minimum=1)
    return 32 * 4 ** max(0, math.ceil(math.log2(dim / 384)))


@dataclass(frozen=True)
class IndexSettings:
    """How the index path searches; ``neighbours=IndexSettings(...)`` in :mod:`markeval.geometry`.

    Parameters
    ----------
    candidates : int, optional
        ``L``, points per candidate list in the first search (default ``2 k + 16``).
    escalate : int, default 8
        Balls whose list stops inside them are searched again with ``escalate × L``
        candidates before falling back to exact distances.
    lists_per_sqrt_n : float, default 1
        The inverted file has ``lists_per_sqrt_n × √n`` k-means lists (``n`` points indexed).
    probes : int, optional
        Lists scanned per query (``nprobe``): more is slower and misses less. Default
        :func:`default_probes` of the points' dimension (32 up to 384, 128 at 768).
    audit : int, default 1000
        Points of each set checked against exact distances (0: no audit, and no gate).
    seed : int, default 0
        Seeds the k-means of the index and the audit's sample (at most
        :data:`FAISS_MAX_SEED`).
    min_agreement : float, default 0.995
        The gate: an audit agreeing on a smaller share of its points warns
        (:class:`IndexAgreementWarning`).
    strict : bool, default False
        Raise :class:`IndexAgreementError` instead of warning.

    Examples
    --------
    >>> IndexSettings(probes=128).probes, IndexSettings().probes_for(768)
    (128, 128)
    """

    candidates: int | None = None
    escalate: int = 8
    lists_per_sqrt_n: float = 1.0
    probes: int | None = None
    audit: int = 1000
    seed: int = 0
    min_agreement: float = MIN_AGREEMENT
    strict: bool = False

    def __post_init__(self):
        if self.candidates is not None:
            check_int(self.candidates, "candidates", minimum=2)
        check_int(self.escalate, "escalate", minimum=1)
        if self.probes is not None:
            check_int(self.probes, "probes", minimum=1)
        check_int(self.audit, "audit", minimum=0)
        check_probability(self.min_agreement, "min_agreement")
        check_bool(self.strict, "strict")
        check_int(self.seed, "seed", minimum=0, maximum=FAISS_MAX_SEED,
                  why=f"seed must be in 0..{FAISS_MAX_SEED} (faiss's k-means seed is a 32-bit "
                      f"int)")
        if check_number(self.lists_per_sqrt_n, "lists_per_sqrt_n") <= 0:
            raise ValueError(f"lists_per_sqrt_n must be a positive number, "
                             f"got {self.lists_per_sqrt_n!r}")

    def probes_for(self, dim: int) -> int:
        """The lists scanned per query for points of ``dim`` dimensions."""
        return self.probes or default_probes(dim)

    def describe(self, k: int, dim: int) -> str:
        """A one-line account of the settings, for signatures and reports."""
        return (f"faiss-ivf(lists={self.lists_per_sqrt_n:g}sqrt(n),probes={self.probes_for(dim)},"
                f"L={self.list_length(k)},escalate={self.escalate},audit={self.audit},"
                f"seed={self.seed})")

    def list_length(self, k: int) -> int:
        return self.candidates or 2 * k + 16


@dataclass(frozen=True, eq=False)
class AuditSample:
    """The audited points and what exact distances decided for them, by set of the pass.

    Attributes
    ----------
    rows : dict
        Set ``i`` → the audited rows (sorted).
    knn : dict
        Set ``i`` whose balls the pass computed → ``(indices, sq_distances)`` of its audited
        rows, exact, shape ``(m_i, k)``.
    per_ball : dict
        ``(i, j)`` → exact count of points of set ``j`` in the balls of the audited rows of
        ``i`` (at their exact radii), shape ``(m_i, c)``, a column per radius.
    per_point : dict
        ``(i, j)`` → exact count of balls of set ``i`` (at their exact radii) holding the
        audited rows of ``j``, shape ``(m_j, c)``.
    """

    rows: dict
    knn: dict
    per_ball: dict
    per_point: dict

    def column(self, col: int, k: int) -> AuditSample:
        """The sample of the balls at one radius column, whose ``k`` neighbours are the
        first ``k`` (what a pass at several ``k`` hands each ``k``)."""
        return AuditSample(self.rows, {i: (ids[:, :k], sq[:, :k])
                                       for i, (ids, sq) in self.knn.items()},
                           {p: c[:, col:col + 1] for p, c in self.per_ball.items()},
                           {p: c[:, col:col + 1] for p, c in self.per_point.items()})


@dataclass(frozen=True)
class NeighbourReport:
    """What the index path decided how: balls settled by their candidates, exact fallbacks,
    and the audit that measures the rest.

    Attributes
    ----------
    method : str
        The index and its settings.
    balls : int
        Balls decided (radius, neighbours and members).
    consistent : int
        Decided from their candidate lists, which ran past the radius: exact *if* the index
        returned every point nearer than a list's farthest (its recall, which the audit
        measures; see :mod:`markeval.geometry.index`).
    fallback : int
        Decided by exact distances to every point (the list stayed inside the ball).
    audited : int
        Points checked against exact distances.
    agreed : int
        Of those, how many the index path decided exactly as the exact path does.
    min_agreement : float
        The gate the audit is held to.
    sample : AuditSample or None
        The audited points' exact decisions (None without an audit, or for a sum of reports).
    """

    method: str
    balls: int
    consistent: int
    fallback: int
    audited: int
    agreed: int
    min_agreement: float = MIN_AGREEMENT
    sample: AuditSample | None = field(default=None, compare=False, repr=False)

    @property
    def consistent_fraction(self) -> float:
        """``consistent / balls``: the share decided from the index's candidates alone."""
        return self.consistent / self.balls if self.balls else 1.0

    @property
    def audit_agreement(self) -> float:
        """``agreed / audited`` (nan without an audit)."""
        return self.agreed / self.audited if self.audited else math.nan

    @property
    def below_gate(self) -> bool:
        """The audit agreed on less than ``min_agreement`` of its points."""
        return bool(self.audited) and self.audit_agreement < self.min_agreement

    def at(self, col: int, k: int) -> NeighbourReport:
        """This report for the balls at one radius column (see :meth:`AuditSample.column`)."""
        return replace(self, sample=None if self.sample is None else self.sample.column(col, k))

    def __add__(self, other: NeighbourReport) -> NeighbourReport:
        if self.method != other.method:
            raise ValueError(f"cannot add reports of {self.method} and {other.method}")
        return NeighbourReport(self.method, self.balls + other.balls,
                               self.consistent + other.consistent,
                               self.fallback + other.fallback, self.audited + other.audited,
                               self.agreed + other.agreed,
                               max(self.min_agreement, other.min_agreement))

    def __str__(self) -> str:
        if not self.audited:
            audit = "no audit (agreement not measured)"
        else:
            audit = (f"audit {self.agreed}/{self.audited} agree "
                     f"({100 * self.audit_agreement:.2f}%"
                     f"{', BELOW' if self.below_gate else ', at or above'} the "
                     f"{100 * self.min_agreement:g}% gate)")
        return (f"{self.method}: {self.consistent}/{self.balls} balls consistent with their "
                f"candidates ({100 * self.consistent_fraction:.2f}%), {self.fallback} exact "
                f"fallback, {audit}")


def _gate(report: NeighbourReport, settings: IndexSettings) -> None:
    """Warn, or raise under ``strict``, when the audit agreed too rarely."""
    if not report.below_gate:
        return
    message = (f"the index path's audit agreed with exact distances on {report.agreed} of "
               f"{report.audited} points ({100 * report.audit_agreement:.2f}%), below "
               f"min_agreement={report.min_agreement:g}: its counts, and the scores from "
               f"them, differ from the exact ones ({report.method}). Raise probes, or use "
               f"neighbours='exact'")
    if settings.strict:
        raise IndexAgreementError(message)
    warnings.warn(message, IndexAgreementWarning, stacklevel=4)


# --------------------------------------------------------------------------- the index


class _Faiss:
    """faiss ``IndexIVFFlat`` over float32 points, searched for candidate ids."""

    def __init__(self, points: np.ndarray, settings: IndexSettings):
        try:
            import faiss
        except ImportError:
            raise ImportError(f"neighbours='index' needs faiss-cpu: {INSTALL}") from None
        n, d = points.shape
        self.lists = max(1, min(n // 39, int(settings.lists_per_sqrt_n * math.sqrt(n))))
        self.index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, self.lists)
        self.index.cp.seed = settings.seed
        # k-means on at most 64 points per list, and no warning below 39 (we keep >= 39).
        self.index.cp.max_points_per_centroid = 64
        self.index.cp.min_points_per_centroid = 1
        self.index.train(points)
        self.index.add(points)

    def search(self, queries: np.ndarray, L: int, probes: int) -> np.ndarray:
        import contextlib
        import io

        from faiss.contrib.big_batch_search import big_batch_search

        self.index.nprobe = min(probes, self.lists)
        if len(queries) * self.index.nprobe <= self.lists:
            # Too few (query, list) pairs for the list-by-list search, whose bucket sort
            # needs more of them than lists (faiss asserts it): a second search for one ball.
            return self.index.search(queries, L)[1].astype(np.int64)
        # List by list: the queries that probe a list against its points in one matrix
        # product (3 times faster here than query by query). It prints progress lines to
        # stdout whatever its verbosity: they are dropped.
        with contextlib.redirect_stdout(io.StringIO()):
            found = big_batch_search(self.index, queries, L, method="knn_function",
                                     threaded=1)[1]
        return found.astype(np.int64)


def _float32(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32)


def _exact_in_float32(x: np.ndarray) -> bool:
    """Whether float32 holds every value of ``x`` exactly (checked in bounded slices)."""
    if x.dtype == np.float32:
        return True
    step = max(1, (1 << 22) // max(1, x.shape[1]))  # 16 MiB of float32 a slice
    return all(np.array_equal(x[start:start + step].astype(np.float32), x[start:start + step])
               for start in range(0, len(x), step))


# --------------------------------------------------------------------------- the pass


@dataclass
class _Lists:
    """Candidate lists of some rows of the union, sorted by exact distance, self excluded."""

    ids: np.ndarray    # (m, L) int64 ids in the union, −1 padding
    sq: np.ndarray     # (m, L) float64 direct squared distances, inf padding
    full: np.ndarray   # (m,) bool: the index filled the list (or it holds every other point)

    def __getitem__(self, part) -> _Lists:
        return _Lists(self.ids[part], self.sq[part], self.full[part])


# Rows whose lists are merged at a time: bounds the merge's temporaries (a few hundred MiB).
_MERGE_ROWS = 1 << 16


def _lists(index: _Faiss, union: np.ndarray, union32: np.ndarray, rows: np.ndarray, L: int,
           probes: int) -> _Lists:
    L = min(L, len(union))
    m = len(rows)
    # A run of consecutive rows is searched through a view: a copy of every query would add
    # the size of the data to the peak (3 GiB at 10^6 + 10^6 samples, 384-d).
    contiguous = m > 0 and rows[-1] - rows[0] == m - 1 and (np.diff(rows) == 1).all()
    queries = union32[rows[0]:rows[-1] + 1] if contiguous else union32[rows]
    found = index.search(queries, L, probes)
    ids = np.where((found >= 0) & (found != rows[:, None]), found, -1)
    del found
    full = (ids >= 0).sum(axis=1) >= L - 1  # self, when returned, is the one left out
    sq = np.full(ids.shape, np.inf)
    for start in range(0, m, _MERGE_ROWS):
        part = slice(start, start + _MERGE_ROWS)
        r, c = np.nonzero(ids[part] >= 0)
        sq[part][r, c] = direct_sq(union, union, rows[part][r], ids[part][r, c])
    back_ids, back_sq, offsets = _reverse_edges(len(union), rows, ids, sq, 2 * L)
    # Each row: its own candidates and its reverse edges, nearest first (ties by id), a pair
    # both ends found once, at most 2 L (the nearest: more only where many points lie at one
    # distance, duplicates), so a list stays a sorted prefix of what was found.
    counts = (ids >= 0).sum(axis=1) + np.diff(offsets)
    width = max(L, int(min(2 * L, counts.max(initial=0))))
    out_ids = np.full((m, width), -1, dtype=np.int64)
    out_sq = np.full((m, width), np.inf)
    for start in range(0, m, _MERGE_ROWS):
        stop = min(start + _MERGE_ROWS, m)
        merged_ids, merged_sq = _merge_rows(
            ids[start:stop], sq[start:stop],
            *_rows_of(back_ids, back_sq, offsets[start:stop + 1]))
        w = min(width, merged_ids.shape[1])
        out_ids[start:stop, :w] = merged_ids[:, :w]
        out_sq[start:stop, :w] = merged_sq[:, :w]
    width = max(L, int((out_ids >= 0).sum(axis=1).max(initial=0)))
    return _Lists(out_ids[:, :width], out_sq[:, :width], full)


def _reverse_edges(n: int, rows: np.ndarray, ids: np.ndarray, sq: np.ndarray,
                   cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of the lists ``ids`` (of ``rows``, squared distances ``sq``) turned round: a
    candidate that is itself one of ``rows`` gets the row that found it. Returns them grouped
    by the row that gets them, ``(ids, sq, offsets)``: row ``i`` gets
    ``ids[offsets[i]:offsets[i + 1]]``, at most ``cap``, its nearest.

    The search is a self-join, so these come at no extra search, and an approximate index
    often finds in one direction a pair it misses in the other (a probed list holds the
    point, the list probed from the other end does not). A pair turned round is kept only
    within the candidate's own reach (the farthest of its own list): it then only fills in a
    list, whose farthest point, and so the test of the list against the radius, stay what the
    search gave. Farther ones would be points beyond the list whose nearer points were never
    searched for: a ball could then look settled by a point past its radius while the list
    stopped inside it.
    """
    m = len(rows)
    position = np.full(n, -1, dtype=np.int64)
    position[rows] = np.arange(m)
    found = ids >= 0
    reach = np.max(sq, axis=1, where=found, initial=-np.inf)
    back = np.where(found, position[np.where(found, ids, 0)], -1)
    turned = back >= 0
    turned[turned] = sq[turned] <= reach[back[turned]]
    r, c = np.nonzero(turned)
    src, dst, dd = back[r, c], rows[r], sq[r, c]
    del back, turned, r, c
    order = np.argsort(src, kind="stable")
    src, dst, dd = src[order], dst[order], dd[order]
    counts = np.bincount(src, minlength=m)
    crowded = counts[src] > cap
    if crowded.any():  # the nearest cap of a crowded row, which sit first once sorted
        part = np.flatnonzero(crowded)
        part = part[np.lexsort((dst[part], dd[part], src[part]))]
        dst[crowded], dd[crowded] = dst[part], dd[part]
        rank = np.arange(len(src)) - (np.cumsum(counts) - counts)[src]
        keep = rank < cap
        dst, dd = dst[keep], dd[keep]
        counts = np.minimum(counts, cap)
    return dst, dd, np.concatenate([[0], np.cumsum(counts)])


def _rows_of(ids: np.ndarray, sq: np.ndarray, offsets: np.ndarray):
    """Rows of the grouped pairs between ``offsets[0]`` and ``offsets[-1]`` as a padded
    ``(len(offsets) - 1, widest)`` matrix of ids (−1 padding) and squared distances (inf)."""
    per_row = np.diff(offsets)
    row = np.repeat(np.arange(len(per_row)), per_row)
    rank = np.arange(offsets[-1] - offsets[0]) - (offsets[:-1] - offsets[0])[row]
    out_ids = np.full((len(per_row), int(per_row.max(initial=0))), -1, dtype=np.int64)
    out_sq = np.full(out_ids.shape, np.inf)
    out_ids[row, rank] = ids[offsets[0]:offsets[-1]]
    out_sq[row, rank] = sq[offsets[0]:offsets[-1]]
    return out_ids, out_sq


def _merge_rows(ids, sq, more_ids, more_sq):
    """Two lists per row merged: nearest first, ties by id, an id found in both once."""
    ids, sq = np.concatenate([ids, more_ids], axis=1), np.concatenate([sq, more_sq], axis=1)
    order = np.lexsort((ids, sq), axis=1)
    ids, sq = np.take_along_axis(ids, order, axis=1), np.take_along_axis(sq, order, axis=1)
    # The same pair from both ends has the same distance (direct_sq is symmetric), so its
    # two copies sit side by side.
    twice = np.zeros(ids.shape, bool)
    twice[:, 1:] = (ids[:, 1:] == ids[:, :-1]) & (ids[:, 1:] >= 0)
    if twice.any():
        ids[twice], sq[twice] = -1, np.inf
        order = np.argsort(twice, axis=1, kind="stable")  # to the end, the order kept
        ids, sq = np.take_along_axis(ids, order, axis=1), np.take_along_axis(sq, order, axis=1)
    return ids, sq


@dataclass
class _SetBalls:
    """The balls of one set as the index path decided them."""

    ids: np.ndarray | None      # (n, k) neighbours within the set (computed sets only)
    sq: np.ndarray | None       # (n, k) their squared distances
    sq_radii: np.ndarray        # (n, c): one column per radius (computed sets: c = 1)
    members: dict               # other set j → list of (column, ball rows, member rows)
    exact: dict                 # other set j → (fallback rows, per-point, per-ball counts),
                                # the counts with a column per radius
    consistent: int
    fallback: int


def _balls_of_set(i, sets, offsets, union, union32, index, k, given, others, settings, ops,
                  block_size, first: _Lists, columns=None) -> _SetBalls:
    """Radius, neighbours and members of every ball of set ``i`` (see the module docstring),
    from ``first``, its rows' lists of the first search. Given radii (``given``, shape
    ``(n,)`` or ``(n, c)``) may hold several per centre: a ball is settled when its list runs
    past the largest, and its members are counted at each. Computed balls have one radius per
    entry of ``columns`` (0-based neighbour ranks below ``k``; default the ``k``-th
    neighbour's), all settled by the list running past the ``k``-th."""
    lo, hi = offsets[i], offsets[i + 1]
    n = hi - lo
    need_knn = given is None
    columns = [k - 1] if columns is None else list(columns)
    ids = np.full((n, k), -1, np.int64) if need_knn else None
    sq = np.full((n, k), np.inf) if need_knn else None
    rad = (np.full((n, len(columns)), np.inf) if need_knn
           else np.asarray(given, dtype=np.float64).reshape(n, -1))
    members = {j: [] for j in others}
    todo = np.arange(n)
    L, probes = _first_search(settings, k, union.shape[1])
    lists = first
    for search in range(2):  # the first search, then one longer one for the balls left open
        if search:
            lists = _lists(index, union, union32, todo + lo, L, probes)
        if need_knn:
            same = (lists.ids >= lo) & (lists.ids < hi)
            rank = np.cumsum(same, axis=1)
            enough = rank[:, -1] >= k
            # The first k candidates of the own set, nearest first (stable: list order).
            own = np.argsort(~(same & (rank <= k)), axis=1, kind="stable")[:, :k]
            cand_ids = np.take_along_axis(np.where(same, lists.ids - lo, -1), own, axis=1)
            cand_sq = np.take_along_axis(np.where(same, lists.sq, np.inf), own, axis=1)
            r_here = cand_sq[:, -1]
        else:
            enough = np.ones(len(todo), bool)
            r_here = rad[todo].max(axis=1)
        farthest = np.where(lists.ids >= 0, lists.sq, -np.inf).max(axis=1)
        everything = (lists.ids >= 0).sum(axis=1) >= len(union) - 1
        ok = enough & ((lists.full & (farthest > r_here)) | everything)
        done = todo[ok]
        if need_knn:
            ids[done], sq[done], rad[done] = cand_ids[ok], cand_sq[ok], cand_sq[ok][:, columns]
        for j in others:
            other = (lists.ids >= offsets[j]) & (lists.ids < offsets[j + 1]) & ok[:, None]
            for col in range(rad.shape[1]):
                r_idx, c_idx = np.nonzero(other & (lists.sq <= rad[todo, col][:, None]))
                members[j].append((col, todo[r_idx], lists.ids[r_idx, c_idx] - offsets[j]))
        todo = todo[~ok]
        if len(todo) == 0:
            break
        L, probes = L * settings.escalate, probes * settings.escalate
    exact = {}
    if len(todo):
        # The lists stayed inside these balls: exact distances to every point decide them.
        x = sets[i]
        if need_knn:
            e_ids, e_sq = knn_rows(x, x, k, ops, self_ids=np.arange(n), rows=todo,
                                   block_size=block_size)
            ids[todo], sq[todo], rad[todo] = e_ids, e_sq, e_sq[:, columns]
        for j in others:
            got = [membership_counts(x[todo], sets[j], ops, r_rows=rad[todo, col],
                                     block_size=block_size)["row"]
                   for col in range(rad.shape[1])]
            exact[j] = (todo, np.stack([g[0] for g in got], axis=1),
                        np.stack([g[1] for g in got], axis=1))
    return _SetBalls(ids, sq, rad, members, exact, n - len(todo), len(todo))


def _first_search(settings: IndexSettings, k: int, dim: int) -> tuple[int, int]:
    """``(L, probes)`` of the first search; a list must hold a point and its k neighbours."""
    return max(settings.list_length(k), k + 1), settings.probes_for(dim)


def index_pass(sets, k: int, memberships, settings: IndexSettings, ops, *, knn_sets=(),
               knn_ranks=None, radii=None, block_size=None, progress: bool = False,
               names=None):
    """Balls and ball counts of several point sets from one index over their union.

    Parameters
    ----------
    sets : list of numpy.ndarray
        The point sets (float32 or float64, same dimension).
    k : int
        Neighbours per ball, for the sets whose balls are computed here.
    memberships : list of (int, int)
        ``(i, j)``: count the points of set ``j`` in the balls of set ``i``.
    settings : IndexSettings
    ops
        Tile arithmetic of the exact fallbacks and the audit.
    knn_sets : sequence of int
        The sets whose k-NN balls are computed here.
    knn_ranks : sequence of int, optional
        Ranks ``1..k`` at which the balls of ``knn_sets`` are read for the counts: a ball per
        rank, its radius that neighbour's distance (the balls at a smaller ``k`` are the first
        neighbours), counted in one column each from the same candidate lists. Default: ``k``
        alone.
    radii : dict, optional
        ``{i: squared radii}`` of the given balls of the other sets ``i`` with balls: shape
        ``(n_i,)``, or ``(n_i, c)`` for ``c`` radii per centre (each point's ``k``-th
        neighbour at ``c`` values of ``k``, say), whose counts then come from the same
        candidate lists, one column per radius.
    block_size, progress
        As in :func:`markeval.geometry.knn_balls`.
    names : sequence of str, optional
        The sets' argument names, for errors (default ``sets[i]``).

    Returns
    -------
    (knn, counts, report)
        ``knn[i]`` = ``(indices, sq_distances)`` for each set of ``knn_sets``;
        ``counts[(i, j)]`` = ``(points_per_ball of set i, balls_per_point of set j)``, with a
        column per radius where ``radii[i]`` has columns;
        ``report``, a :class:`NeighbourReport`.
    """
    from tqdm import tqdm

    # faiss reads the points as given, in float32.
    check_distance_range(sets, names or [f"sets[{i}]" for i in range(len(sets))], "float32",
                         about_origin=True)
    sizes = [len(s) for s in sets]
    offsets = np.cumsum([0] + sizes)
    union32 = _float32(sets[0]) if len(sets) == 1 else np.concatenate(sets, dtype=np.float32)
    # The direct distances read the points as given; where float32 holds them exactly (word
    # samples from a float32 encoder, say) they read the float32 copy, and a float64 copy of
    # the union (1.8 GB at 3 * 10^5 + 3 * 10^5 samples, 384-d) is never made.
    exact = all(_exact_in_float32(s) for s in sets)
    union = union32 if exact else sets[0] if len(sets) == 1 else np.concatenate(sets)
    radii = dict(radii or {})
    rank_columns = None if knn_ranks is None else [rank - 1 for rank in knn_ranks]
    centres = sorted(set(knn_sets) | {bi for bi, _ in memberships})
    with tqdm(total=len(centres) + 3, desc="index", unit="step", disable=not progress) as bar:
        bar.set_postfix_str(f"building over {len(union)} points")
        index = _Faiss(union32, settings)
        bar.update()
        # One search for the rows of every set with balls: the index scans each of its lists
        # once for all the queries that probe it, and larger batches make larger products
        # (10^5 + 10^5 MiniLM word samples: the first lists took 66 s in one search, 74 in two).
        bar.set_postfix_str(f"searching for {sum(sizes[i] for i in centres)} lists")
        rows = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in centres])
        first = _lists(index, union, union32, rows,
                       *_first_search(settings, k, union.shape[1]))
        starts = dict(zip(centres, np.cumsum([0] + [sizes[i] for i in centres])))
        bar.update()
        decided = {}
        for i in centres:
            bar.set_postfix_str(f"balls of set {i}")
            others = [bj for bi, bj in memberships if bi == i]
            decided[i] = _balls_of_set(i, sets, offsets, union, union32, index, k,
                                       None if i in knn_sets else radii[i], others, settings,
                                       ops, block_size,
                                       first[starts[i]:starts[i] + sizes[i]], rank_columns)
            bar.update()
        counts = {}
        for bi, bj in memberships:
            columns = decided[bi].sq_radii.shape[1]
            per_ball = np.zeros((sizes[bi], columns), np.int64)
            per_point = np.zeros((sizes[bj], columns), np.int64)
            for col, balls, members in decided[bi].members[bj]:
                per_ball[:, col] += np.bincount(balls, minlength=sizes[bi])
                per_point[:, col] += np.bincount(members, minlength=sizes[bj])
            if bj in decided[bi].exact:
                rows, in_balls, ball_counts = decided[bi].exact[bj]
                per_point += in_balls
                per_ball[rows] += ball_counts
            counts[(bi, bj)] = (per_ball, per_point)
        bar.set_postfix_str("audit")
        knn = {i: (b.ids, b.sq) for i, b in decided.items() if b.ids is not None}
        sq_radii = {i: b.sq_radii for i, b in decided.items()}
        audited, agreed, sample = _audit(sets, k, knn, sq_radii, counts, settings, ops,
                                         block_size, rank_columns)
        bar.update()
    # One radius per centre (computed at k alone, or given as a vector): counts as vectors.
    columned = {i for i, r in radii.items() if np.ndim(r) == 2}
    if knn_ranks is not None:
        columned |= set(knn_sets)
    counts = {(bi, bj): (c if bi in columned else tuple(x[:, 0] for x in c))
              for (bi, bj), c in counts.items()}
    consistent = sum(b.consistent for b in decided.values())
    fallback = sum(b.fallback for b in decided.values())
    report = NeighbourReport(settings.describe(k, union.shape[1]), consistent + fallback,
                             consistent, fallback, audited, agreed, settings.min_agreement,
                             sample)
    _gate(report, settings)
    return knn, counts, report


def _audit(sets, k, knn, sq_radii, counts, settings, ops, block_size, columns=None):
    """Re-decide ``settings.audit`` random points of each set by exact distances (``columns``:
    the neighbour ranks, 0-based, of the computed balls' radii; default the ``k``-th).
    Returns ``(audited, agreed, AuditSample)`` (``(0, 0, None)`` without an audit)."""
    if settings.audit == 0:
        return 0, 0, None
    rng = np.random.default_rng(settings.seed)
    audited = agreed = 0
    sample = AuditSample({}, {}, {}, {})
    for i, x in enumerate(sets):
        involved = i in knn or any(i in pair for pair in counts)
        if not involved:
            continue
        rows = np.sort(rng.choice(len(x), min(settings.audit, len(x)), replace=False))
        sample.rows[i] = rows
        ok = np.ones(len(rows), bool)
        exact_rad = sq_radii[i][rows] if i in sq_radii else None
        if i in knn:
            e_ids, e_sq = knn_rows(x, x, k, ops, self_ids=np.arange(len(x)), rows=rows,
                                   block_size=block_size)
            sample.knn[i] = (e_ids, e_sq)
            ids, sq = knn[i]
            ok &= (ids[rows] == e_ids).all(axis=1) & (sq[rows] == e_sq).all(axis=1)
            exact_rad = e_sq[:, [k - 1] if columns is None else columns]
        for (bi, bj), (per_ball, per_point) in counts.items():
            if bi == i:  # as centres: the members of their exact balls
                got = np.stack([membership_counts(x[rows], sets[bj], ops,
                                                  r_rows=exact_rad[:, col],
                                                  block_size=block_size)["row"][1]
                                for col in range(per_ball.shape[1])], axis=1)
                sample.per_ball[(bi, bj)] = got
                ok &= (got == per_ball[rows]).all(axis=1)
            if bj == i:  # as queries: how many balls (at their exact radii) hold them
                got = _exact_holders(x[rows], sets[bi], sq_radii[bi], bi in knn, k, columns,
                                     ops, block_size)
                sample.per_point[(bi, bj)] = got
                ok &= (got == per_point[rows]).all(axis=1)
        audited += len(rows)
        agreed += int(ok.sum())
    return audited, agreed, sample


def _exact_holders(queries, centres, sq_radii, computed, k, columns, ops, block_size):
    """How many balls of ``centres`` hold each query at their exact radii, a column per radius.

    ``sq_radii`` are the radii as decided; where this pass computed them (``computed``) they
    may be too large, never too small, so every ball that holds a query at its exact radius
    holds it at the decided one: the exact radii are needed only for those (a few per query),
    found in the same pass that counts the queries at the decided radii."""
    wide = membership_counts(queries, centres, ops, r_cols=sq_radii.max(axis=1),
                             block_size=block_size)["col"][1]
    near = np.flatnonzero(wide)
    exact = sq_radii[near]
    if computed and len(near):
        exact = knn_rows(centres, centres, k, ops, self_ids=np.arange(len(centres)), rows=near,
                         block_size=block_size)[1][:, [k - 1] if columns is None else columns]
    return np.stack([membership_counts(queries, centres[near], ops, r_cols=exact[:, col],
                                       block_size=block_size)["col"][0]
                     for col in range(sq_radii.shape[1])], axis=1)
