"""The index path of markeval.geometry, the tile tasks, and both on a local Dask cluster.

The index path is checked three ways: where its condition holds (an index that scans every
list) it must equal the exact path bit for bit; where no list can settle a ball every ball
falls back to exact distances and it must again equal the exact path; and on real word-level
embeddings (BBC News, the packaged MiniLM) it must agree with the exact path on at least
99.9 % of the samples' counts, with all four Mark-Evaluate scores and improved precision and
recall within 1e-3 (the small version of ``benchmarks/neighbour_agreement.py``).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from markeval.distribution.ipr import (improved_precision_recall,
                                       improved_precision_recall_from_balls)
from markeval.geometry import (IndexAgreementError, IndexAgreementWarning, IndexSettings,
                               NeighbourReport, ball_membership, default_probes, knn_balls,
                               mutual_balls, mutual_balls_at, mutual_membership,
                               mutual_memberships)
from markeval.geometry.tasks import knn_tiles, membership_tiles
from markeval.population.mark_evaluate import mark_evaluate, mark_evaluate_from_balls

faiss = pytest.importorskip("faiss")


def clustered(n, d=8, centres=12, seed=0, dtype=np.float32):
    """Points around a few centres: the structure an inverted file is made for."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, d)) * 6
    return (c[rng.integers(0, centres, n)] + rng.normal(size=(n, d))).astype(dtype)


def assert_same(got, want):
    """Two MutualBalls with identical neighbours, radii and counts."""
    for name in ("balls_a", "balls_b"):
        np.testing.assert_array_equal(getattr(got, name).indices, getattr(want, name).indices)
        np.testing.assert_array_equal(getattr(got, name).sq_distances,
                                      getattr(want, name).sq_distances)
    for name in ("a_in_b", "b_in_a"):
        np.testing.assert_array_equal(getattr(got, name).balls_per_point,
                                      getattr(want, name).balls_per_point)
        np.testing.assert_array_equal(getattr(got, name).points_per_ball,
                                      getattr(want, name).points_per_ball)


def assert_same_memberships(got, want, ks):
    """Two ``k -> (a_in_b, b_in_a)`` mappings with the ks in order and identical counts."""
    assert list(got) == ks
    for k in ks:
        for g, w in zip(got[k], want[k]):
            np.testing.assert_array_equal(g.balls_per_point, w.balls_per_point)
            np.testing.assert_array_equal(g.points_per_ball, w.points_per_ball)


# --------------------------------------------------------------------------- the index path


def test_an_index_that_scans_everything_equals_the_exact_path():
    """probes >= lists: every list is the true nearest, so consistent means exact."""
    a, b = clustered(900, seed=1), clustered(700, seed=2)
    exact = mutual_balls(a, b, 4)
    got = mutual_balls(a, b, 4, neighbours=IndexSettings(probes=10_000, audit=50))
    assert_same(got, exact)
    r = got.report
    assert isinstance(r, NeighbourReport) and r.balls == 1600
    assert r.consistent + r.fallback == r.balls and r.consistent_fraction > 0.9
    assert (r.audited, r.agreed) == (100, 100) and r.audit_agreement == 1.0
    assert not r.below_gate
    assert got.balls_a.report is r and got.a_in_b.report is r
    assert "balls consistent with their candidates" in str(r)
    assert "audit 100/100 agree (100.00%, at or above the 99.5% gate)" in str(r)


def test_one_query_probing_every_list():
    """A ball searched again alone, its probes raised to every list: too few (query, list)
    pairs for the list-by-list search (faiss's bucket sort asserts more pairs than lists), so
    the plain search answers, with the true nearest (every list is scanned)."""
    from markeval.geometry.index import _Faiss

    x = clustered(2000, seed=7)
    index = _Faiss(x, IndexSettings())
    for queries in (x[:1], x[:2]):  # the plain search, then the list-by-list one
        found = index.search(queries, 10, probes=index.lists)
        for row, point in zip(found, queries):
            nearest = np.argsort(((x - point) ** 2).sum(axis=1), kind="stable")[:10]
            assert set(row) == set(nearest)


class _GivenLists:
    """An index stand-in whose search returns fixed candidate lists, one row per point."""

    def __init__(self, found):
        self.found = np.asarray(found, dtype=np.int64)

    def search(self, queries, L, probes):
        return self.found[:len(queries), :L]


def test_a_pair_found_from_one_end_reaches_both_lists_within_reach():
    """Points on a line at 0, 1, 2, 10, 11. The index misses 1 for the point at 0, but the point
    at 1 found it: 0's list gains 1, nearest first. The point at 11 found 0 too, but at 121,
    beyond the farthest of 0's own list (100): not added, which would let 0's list look as if
    it ran past a radius it never searched to. A pair both ends found is listed once."""
    from markeval.geometry.index import _lists

    x = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    found = [[0, 2, 3], [1, 0, 2], [2, 1, 0], [3, 4, 2], [4, 3, 0]]
    got = _lists(_GivenLists(found), x, x.astype(np.float32), np.arange(5), 3, 1)
    assert got.ids[0].tolist() == [1, 2, 3]
    assert got.sq[0].tolist() == [1.0, 4.0, 100.0]
    assert got.ids[2].tolist()[:2] == [1, 0]  # 3 found 2 at 64, past 2's reach of 4
    assert got.ids[4].tolist()[:2] == [3, 0]  # 3 and 4 found each other: once
    assert got.full.all()
    np.testing.assert_array_equal(got.ids >= 0, np.isfinite(got.sq))


@pytest.mark.parametrize("merge_rows", [7, 1 << 16])
def test_a_point_many_others_found_keeps_its_nearest_two_lists_worth(monkeypatch, merge_rows):
    """Forty copies of one point that all found the first: its list holds 2 L of them (the
    nearest, ties by id), not forty; the others keep their own lists. The same when the
    lists are merged seven rows at a time."""
    from markeval.geometry import index

    monkeypatch.setattr(index, "_MERGE_ROWS", merge_rows)
    x = np.zeros((40, 2))
    found = [[0, 1, 2]] + [[i, 0, i % 39 + 1] for i in range(1, 40)]
    got = index._lists(_GivenLists(found), x, x.astype(np.float32), np.arange(40), 3, 1)
    assert got.ids.shape == (40, 6)
    assert got.ids[0].tolist() == [1, 2, 3, 4, 5, 6]
    assert got.ids[7].tolist()[:3] == [0, 6, 8]
    assert (got.ids[8:, 3:] == -1).all()  # three at most: their own two and who found them


def test_lists_too_short_to_settle_fall_back_to_exact_distances():
    """L = k + 1: a list of a point and k others never runs past the k-th, so every ball is
    decided by exact distances."""
    a, b = clustered(300, seed=3), clustered(250, seed=4)
    got = mutual_balls(a, b, 3, neighbours=IndexSettings(candidates=4, escalate=1, probes=1,
                                                         audit=0))
    assert_same(got, mutual_balls(a, b, 3))
    assert (got.report.consistent, got.report.fallback) == (0, 550)
    assert got.report.audited == 0 and np.isnan(got.report.audit_agreement)
    assert not got.report.below_gate and "no audit (agreement not measured)" in str(got.report)


def test_one_set_and_given_balls_through_the_index():
    a, b = clustered(600, seed=5), clustered(500, seed=6)
    settings = IndexSettings(probes=10_000, audit=20)
    exact_a = knn_balls(a, 3)
    got_a = knn_balls(a, 3, neighbours=settings)
    np.testing.assert_array_equal(got_a.indices, exact_a.indices)
    np.testing.assert_array_equal(got_a.sq_distances, exact_a.sq_distances)
    assert got_a.report.balls == 600
    m = ball_membership(b, exact_a, neighbours=settings)
    want = ball_membership(b, exact_a)
    np.testing.assert_array_equal(m.balls_per_point, want.balls_per_point)
    np.testing.assert_array_equal(m.points_per_ball, want.points_per_ball)
    exact_b = knn_balls(b, 3)
    for got, want in zip(mutual_membership(exact_a, exact_b, neighbours=settings),
                         mutual_membership(exact_a, exact_b)):
        np.testing.assert_array_equal(got.balls_per_point, want.balls_per_point)
        np.testing.assert_array_equal(got.points_per_ball, want.points_per_ball)


def test_memberships_at_several_k_from_one_search():
    """At each k the counts of mutual_membership on the balls' prefixes: exactly, through an
    index that scans every list (lists of 22: every ball settled), and through lists of 6
    (most balls fall back to exact distances, at each of their radii); audited at each k."""
    a, b = clustered(600, seed=8), clustered(500, seed=9)
    balls_a, balls_b = knn_balls(a, 5), knn_balls(b, 5)
    ks = [5, 1, 3]
    want = {k: mutual_membership(balls_a.prefix(k), balls_b.prefix(k)) for k in ks}
    scanned = IndexSettings(probes=10_000, audit=30)
    too_short = IndexSettings(candidates=6, escalate=1, probes=10_000, audit=30)
    for settings in ("exact", scanned, too_short):
        got = mutual_memberships(balls_a, balls_b, ks, neighbours=settings)
        assert_same_memberships(got, want, ks)
        report = got[1][0].report
        if settings == "exact":
            assert report is None
        else:
            assert report.balls == 1100 and (report.audited, report.agreed) == (60, 60)
            assert (report.fallback > 550) if settings is too_short else report.fallback == 0
    with pytest.raises(ValueError, match=r"ks must be a non-empty sequence of k in 1..5"):
        mutual_memberships(balls_a, balls_b, [3, 6])
    with pytest.raises(ValueError, match="must have the same k, got 5 and 2"):
        mutual_memberships(balls_a, balls_b.prefix(2), [1])
    with pytest.raises(ValueError, match="k must be at most the balls' k=5, got 6"):
        balls_a.prefix(6)


def test_both_sets_balls_and_memberships_at_several_k_from_one_pass():
    """mutual_balls_at equals knn_balls of each set and mutual_memberships: exactly, through
    an index that scans every list, and through lists too short to settle (every ball falls
    back to exact distances, at each radius); one report for all of it, audited at each k."""
    a, b = clustered(600, seed=10), clustered(500, seed=11)
    ks = [4, 1, 2]
    balls_a, balls_b = knn_balls(a, 4), knn_balls(b, 4)
    want = mutual_memberships(balls_a, balls_b, ks)
    scanned = IndexSettings(probes=10_000, audit=30)
    too_short = IndexSettings(candidates=5, escalate=1, probes=1, audit=30)
    for settings in ("exact", scanned, too_short):
        got_a, got_b, got = mutual_balls_at(a, b, ks, neighbours=settings)
        for g, w in ((got_a, balls_a), (got_b, balls_b)):
            assert g.k == 4
            np.testing.assert_array_equal(g.indices, w.indices)
            np.testing.assert_array_equal(g.sq_distances, w.sq_distances)
        assert_same_memberships(got, want, ks)
        report = got[1][0].report
        if settings == "exact":
            assert report is None
        else:
            assert got_a.report == report and report.balls == 1100  # each k: its own sample
            assert (report.audited, report.agreed) == (60, 60)
            assert report.fallback == (1100 if settings is too_short else 0)
    with pytest.raises(ValueError, match=r"ks\[1\] must be a positive int, got 0"):
        mutual_balls_at(a, b, [1, 0])
    with pytest.raises(ValueError, match="ks must be a non-empty sequence"):
        mutual_balls_at(a, b, [])
    with pytest.raises(ValueError, match="k=3 is too large for points_b of 3 points"):
        mutual_balls_at(a, b[:3], [1, 3])


def test_the_index_reads_float64_points_as_given():
    """Direct distances read float64 points from a float32 copy only where it is exact: float64
    points with bits past float32 still equal the exact path bit for bit (a float32 copy would
    move their distances), as do float64 points that float32 holds."""
    a, b = clustered(500, seed=12), clustered(400, seed=13)
    scanned = IndexSettings(probes=10_000, audit=0)
    nudged = (a.astype(np.float64) * (1 + 1e-12), b.astype(np.float64) * (1 + 1e-12))
    for x, y in ((a, b), (a.astype(np.float64), b.astype(np.float64)), nudged):
        got_a, got_b, got = mutual_balls_at(x, y, [1, 3], neighbours=scanned)
        want_a, want_b, want = mutual_balls_at(x, y, [1, 3])
        for g, w in ((got_a, want_a), (got_b, want_b)):
            np.testing.assert_array_equal(g.sq_distances, w.sq_distances)
            np.testing.assert_array_equal(g.indices, w.indices)
        assert_same_memberships(got, want, [1, 3])


def test_tiny_sets_are_exact_through_the_index():
    a = np.array([[0.0], [1.0], [3.0]])
    b = np.array([[0.5], [10.0], [11.0]])
    got = mutual_balls(a, b, 1, neighbours="index")
    assert_same(got, mutual_balls(a, b, 1))
    assert got.report.consistent_fraction == 1.0  # every list holds every point


@pytest.fixture(scope="module")
def bbc_word_samples():
    """Word-level samples (MiniLM, last five layers) of 45 BBC sentences from each half."""
    from markeval.datasets import bbc_sentences
    from markeval.population.samples import word_samples

    sets = []
    for split in ("a", "b"):
        sentences = bbc_sentences(split=split, unique=True)["sentence"].tolist()[:45]
        sets.append(word_samples(sentences, progress=False))
    return sets


def test_agreement_with_exact_on_real_word_embeddings(bbc_word_samples):
    """The small version of benchmarks/neighbour_agreement.py (there: 25k and 100k)."""
    a, b = bbc_word_samples
    assert min(len(a), len(b)) > 4000
    k = 3
    exact = mutual_balls(a, b, k)
    got = mutual_balls(a, b, k, neighbours="index")
    agree = np.concatenate([
        (got.balls_a.indices == exact.balls_a.indices).all(axis=1)
        & (got.a_in_b.balls_per_point == exact.a_in_b.balls_per_point)
        & (got.b_in_a.points_per_ball == exact.b_in_a.points_per_ball),
        (got.balls_b.indices == exact.balls_b.indices).all(axis=1)
        & (got.b_in_a.balls_per_point == exact.b_in_a.balls_per_point)
        & (got.a_in_b.points_per_ball == exact.a_in_b.points_per_ball)])
    assert agree.mean() >= 0.999
    me = [mark_evaluate_from_balls(g.balls_a, g.balls_b, membership=(g.a_in_b, g.b_in_a))
          for g in (exact, got)]
    for part in ("petersen", "schnabel_quality", "schnabel_diversity", "capture"):
        assert abs(getattr(me[0], part).score - getattr(me[1], part).score) <= 1e-3, part
    ipr = improved_precision_recall(a, b, k, progress=False, neighbours="index")
    assert abs(ipr.precision - exact.b_in_a.inside_any.mean()) <= 1e-3  # exact precision
    assert abs(ipr.recall - exact.a_in_b.inside_any.mean()) <= 1e-3
    assert ipr.neighbour_report.audited == 2000


def test_results_carry_the_report_and_say_so_in_the_signature():
    a, b = clustered(400, seed=7), clustered(400, seed=8)
    exact = mark_evaluate(a, b, 3, progress=False)
    got = mark_evaluate(a, b, 3, progress=False, neighbours=IndexSettings(probes=10_000))
    assert exact.neighbour_report is None and "neighbours" not in exact.signature
    assert got.neighbour_report.balls == 800
    for part in (got, got.petersen, got.schnabel_quality, got.schnabel_diversity, got.capture):
        assert part.neighbour_report is got.neighbour_report
        assert "|neighbours:faiss-ivf(" in part.signature
    assert got.petersen.score == exact.petersen.score
    ipr = improved_precision_recall(a, b, progress=False, neighbours="index")
    assert "|neighbours:faiss-ivf(" in ipr.signature and ipr.neighbour_report.balls == 800


ME_PARTS = ("petersen", "schnabel_quality", "schnabel_diversity", "capture")


def one_population(n, seed, d=16):
    """A sample of one clustered distribution (its centres fixed): two such samples overlap,
    so each set's balls hold many of the other's points and a missed point changes scores."""
    centres = np.random.default_rng(99).normal(size=(8, d)) * 3
    rng = np.random.default_rng(seed)
    return (centres[rng.integers(0, 8, n)] + rng.normal(size=(n, d))).astype(np.float32)


def test_a_starved_index_cannot_give_a_clean_report():
    """One probed list of 70: every candidate list still runs past its radius (every ball
    looks settled), but most lists missed points. The audit sees it: the pass warns, raises
    under strict=True, and the report says it is below its gate."""
    a, b = one_population(3000, seed=1), one_population(2500, seed=2)
    with pytest.warns(IndexAgreementWarning, match=r"audit agreed with exact distances on \d+ "
                                                   r"of 2000 points .* below min_agreement=0.995"):
        got = mutual_balls(a, b, 3, neighbours=IndexSettings(probes=1))
    r = got.report
    assert r.consistent == r.balls == 5500
    assert r.below_gate and r.audit_agreement < 0.5
    assert "5500/5500 balls consistent with their candidates" in str(r)
    assert "BELOW the 99.5% gate" in str(r)
    with pytest.raises(IndexAgreementError, match="below min_agreement=0.995"):
        mutual_balls(a, b, 3, neighbours=IndexSettings(probes=1, strict=True))
    with warnings.catch_warnings():  # the gate is the caller's to set
        warnings.simplefilter("error")
        mutual_balls(a, b, 3, neighbours=IndexSettings(probes=1, min_agreement=0.0))


def test_a_full_audit_estimates_each_score_error_exactly():
    """With every point audited the difference estimator is the error itself: for the four
    ME scores and IPR's two, through a starved index; 0 through an index that scans every
    list; None on the exact path."""
    a, b = one_population(700, seed=3), one_population(600, seed=4)
    exact_me = mark_evaluate(a, b, 3, progress=False)
    exact_ipr = improved_precision_recall(a, b, 3, progress=False)
    starved = IndexSettings(probes=1, audit=700, min_agreement=0.0)
    me = mark_evaluate(a, b, 3, progress=False, neighbours=starved)
    ipr = improved_precision_recall(a, b, 3, progress=False, neighbours=starved)
    errors = [getattr(me, p).score - getattr(exact_me, p).score for p in ME_PARTS]
    ipr_errors = [ipr.precision - exact_ipr.precision, ipr.recall - exact_ipr.recall]
    assert me.neighbour_report.audit_agreement < 0.5  # the gate set aside: min_agreement=0
    assert sum(e != 0 for e in errors) >= 3 and all(e != 0 for e in ipr_errors)
    for part, error in zip(ME_PARTS, errors):
        assert getattr(me, part).estimated_error == pytest.approx(error, abs=1e-12), part
    assert ipr.estimated_error == pytest.approx(ipr_errors, abs=1e-12)
    scanned = IndexSettings(probes=10_000, audit=50)
    me = mark_evaluate(a, b, 3, progress=False, neighbours=scanned)
    assert [getattr(me, p).estimated_error for p in ME_PARTS] == [0.0] * 4
    assert improved_precision_recall(a, b, 3, progress=False,
                                     neighbours=scanned).estimated_error == (0.0, 0.0)
    assert all(getattr(exact_me, p).estimated_error is None for p in ME_PARTS)
    assert exact_ipr.estimated_error is None
    no_audit = mark_evaluate(a, b, 3, progress=False,
                             neighbours=IndexSettings(probes=1, audit=0))
    assert no_audit.petersen.estimated_error is None


def test_each_k_of_one_pass_gets_its_own_audit():
    """mutual_balls_at audits every k at once; the memberships of each k carry that k's
    sample, so that the scores at each k estimate their own errors (exactly, all audited)."""
    a, b = one_population(500, seed=5), one_population(450, seed=6)
    ks = [1, 3]
    starved = IndexSettings(probes=1, audit=500, min_agreement=0.0)
    balls_a, balls_b, got = mutual_balls_at(a, b, ks, neighbours=starved)
    for k in ks:
        me = mark_evaluate_from_balls(balls_a.prefix(k), balls_b.prefix(k), membership=got[k])
        exact = mark_evaluate(a, b, k, progress=False)
        for part in ME_PARTS:
            error = getattr(me, part).score - getattr(exact, part).score
            assert getattr(me, part).estimated_error == pytest.approx(error, abs=1e-12), (k, part)


def test_improved_precision_recall_from_drawn_balls():
    a, b = one_population(300, seed=7), one_population(250, seed=8)
    g = mutual_balls(a, b, 3, neighbours="index")
    got = improved_precision_recall_from_balls(g)
    want = improved_precision_recall(a, b, 3, progress=False, neighbours="index")
    assert (got.precision, got.recall, got.signature) == (want.precision, want.recall,
                                                           want.signature)


def test_default_probes_grow_with_the_dimension():
    """32 lists up to 384 dimensions, 128 at 768 (measured); the report names the number."""
    assert [default_probes(d) for d in (1, 384, 385, 768, 1536)] == [32, 32, 128, 128, 512]
    rng = np.random.default_rng(0)
    for dim, probes in ((384, 32), (768, 128)):
        x = rng.normal(size=(100, dim)).astype(np.float32)
        got = knn_balls(x, 2, neighbours=IndexSettings(audit=0))
        assert f"probes={probes}," in got.report.method
    with pytest.raises(ValueError, match="dim must be a positive int, got 0"):
        default_probes(0)


def test_float32_points_stay_float32_and_decide_as_float64():
    a = clustered(200, seed=9)
    balls32 = knn_balls(a, 2)
    balls64 = knn_balls(a.astype(np.float64), 2)
    assert balls32.points.dtype == np.float32 and balls64.points.dtype == np.float64
    np.testing.assert_array_equal(balls32.indices, balls64.indices)
    np.testing.assert_array_equal(balls32.sq_distances, balls64.sq_distances)


def test_neighbours_bad_input(monkeypatch):
    x = np.zeros((5, 2))
    with pytest.raises(ValueError, match=r"neighbours must be one of \('exact', 'index'\) or "
                                         r"an IndexSettings, got 'fast'"):
        knn_balls(x, 1, neighbours="fast")
    with pytest.raises(ValueError, match="n_jobs=2 runs the exact path's tiles as tasks"):
        knn_balls(x, 1, neighbours="index", n_jobs=2)
    with pytest.raises(ValueError, match="n_jobs must be a positive int, got 0"):
        knn_balls(x, 1, n_jobs=0)
    with pytest.raises(ValueError, match="probes must be a positive int, got 0"):
        IndexSettings(probes=0)
    with pytest.raises(ValueError, match="candidates must be >= 2, got 1"):
        IndexSettings(candidates=1)
    with pytest.raises(ValueError, match="lists_per_sqrt_n must be a positive number"):
        IndexSettings(lists_per_sqrt_n=0)
    with pytest.raises(ValueError, match=r"block_size must be an int or a pair"):
        knn_balls(x, 1, block_size=(1, 2, 3))
    monkeypatch.setitem(__import__("sys").modules, "faiss", None)
    with pytest.raises(ImportError, match=r'pip install "markeval\[index\]"'):
        knn_balls(x + np.arange(5)[:, None], 1, neighbours="index")


@pytest.mark.parametrize("field, value, error, message", [
    ("lists_per_sqrt_n", float("inf"), ValueError, "lists_per_sqrt_n must be finite, got inf"),
    ("lists_per_sqrt_n", float("nan"), ValueError, "lists_per_sqrt_n must be finite, got nan"),
    ("lists_per_sqrt_n", True, TypeError, "lists_per_sqrt_n must be a number, got bool: True"),
    ("lists_per_sqrt_n", "2", TypeError, "lists_per_sqrt_n must be a number, got str: '2'"),
    ("lists_per_sqrt_n", -1.0, ValueError, "lists_per_sqrt_n must be a positive number, got -1.0"),
    ("seed", 2**31, ValueError, "seed must be in 0..2147483647 (faiss's k-means seed is a 32-bit "
                                "int), got 2147483648"),
    ("seed", -1, ValueError, "seed must be in 0..2147483647"),
    ("seed", 1.0, TypeError, "seed must be an int, got float: 1.0"),
    ("escalate", True, TypeError, "escalate must be an int, got bool: True"),
    ("audit", -1, ValueError, "audit must be a non-negative int, got -1"),
    ("candidates", 2.5, TypeError, "candidates must be an int, got float: 2.5"),
    ("probes", 0, ValueError, "probes must be a positive int, got 0"),
    ("min_agreement", 1.5, ValueError, "min_agreement must be in [0, 1], got 1.5"),
    ("min_agreement", "0.9", TypeError, "min_agreement must be a number in [0, 1], got '0.9'"),
    ("strict", 1, TypeError, "strict must be True or False, got int: 1"),
])
def test_index_settings_refuse_each_field_by_name(field, value, error, message):
    with pytest.raises(error, match=re.escape(message)):
        IndexSettings(**{field: value})


def test_the_largest_faiss_seed_is_taken():
    x = np.random.default_rng(0).normal(size=(40, 3))
    got = knn_balls(x, 2, neighbours=IndexSettings(seed=2**31 - 1, probes=10_000))
    np.testing.assert_array_equal(got.indices, knn_balls(x, 2).indices)


@pytest.mark.parametrize("scale", [1e19, 1e200])
def test_index_refuses_points_float32_cannot_measure_by_name(scale):
    """faiss reads the points as given, in float32: beyond ~9e18 apart, distances overflow."""
    a = np.random.default_rng(1).normal(size=(30, 4)) * scale
    b = np.random.default_rng(2).normal(size=(30, 4))
    message = (r"the points lie up to .* apart, beyond 9.22e\+18, the most whose squared "
               r"distances float32 arithmetic holds \(rescale the points, or centre them: the "
               r"neighbour index reads them as given\)")
    with pytest.raises(ValueError, match=r"^points_a and points_b: " + message):
        mutual_balls(a, b, 2, neighbours="index")
    with pytest.raises(ValueError, match=r"^points: " + message):
        knn_balls(a, 2, neighbours="index")
    with pytest.raises(ValueError, match=r"^balls.points and queries: " + message):
        ball_membership(a, knn_balls(b, 2), neighbours="index")


def test_index_takes_far_offset_points_only_as_the_exact_path_does():
    """The exact path centres the points: an offset of 2^64 costs it nothing, faiss refuses.

    Multiples of 4096 plus 2^64 are exact in float64 (its spacing there is 4096)."""
    x = np.random.default_rng(3).integers(0, 1000, size=(40, 3)) * 4096.0
    want = knn_balls(x, 3)
    far = knn_balls(x + 2.0**64, 3)
    np.testing.assert_array_equal(far.indices, want.indices)
    np.testing.assert_array_equal(far.sq_distances, want.sq_distances)
    with pytest.raises(ValueError, match="or centre them"):
        knn_balls(x + 2.0**64, 3, neighbours="index")


@pytest.mark.parametrize("scale, dtype, hint", [
    (1e19, "float32", ", or pass dtype='float64'"),
    (1e160, "float64", ""),
    (1e200, "float32", ""),
])
def test_exact_path_refuses_distances_its_dtype_cannot_hold(scale, dtype, hint):
    """Before, the tiles overflowed to inf or nan with a RuntimeWarning at most."""
    a = np.random.default_rng(4).normal(size=(20, 3)) * scale
    b = np.random.default_rng(5).normal(size=(20, 3))
    message = (f"the points lie up to .* apart, beyond .*, the most whose squared distances "
               f"{dtype} arithmetic holds \\(rescale the points{re.escape(hint)}\\)$")
    with pytest.raises(ValueError, match="^points: " + message):
        knn_balls(a, 2, dtype=dtype)
    with pytest.raises(ValueError, match="^points_a: " + message):
        mutual_balls(a, b, 2, dtype=dtype)
    with pytest.raises(ValueError, match="^balls.points and queries: " + message):
        ball_membership(a, knn_balls(b, 2), dtype=dtype)


# --------------------------------------------------------------------------- tile tasks


def test_tiles_merge_exactly_across_many_small_tiles():
    """Integer coordinates (ties, duplicates) cut into 7 × 11 tiles, run in two processes."""
    rng = np.random.default_rng(10)
    x = rng.integers(-2, 3, size=(60, 3)).astype(float)
    y = rng.integers(-2, 3, size=(45, 3)).astype(float)
    arithmetic = ("numpy", None, "float32")
    for k in (1, 4):
        ids, sq = knn_tiles(x, k, arithmetic, (7, 11), n_jobs=2)
        want = knn_balls(x, k)
        np.testing.assert_array_equal(ids, want.indices)
        np.testing.assert_array_equal(sq, want.sq_distances)
    bx, by = knn_balls(x, 3), knn_balls(y, 2)
    got = membership_tiles(x, y, arithmetic, r_cols=by.sq_radii, r_rows=bx.sq_radii,
                           tile=(7, 11), n_jobs=2)
    a_in_b, b_in_a = mutual_membership(bx, by)
    np.testing.assert_array_equal(got["col"][0], a_in_b.balls_per_point)
    np.testing.assert_array_equal(got["col"][1], a_in_b.points_per_ball)
    np.testing.assert_array_equal(got["row"][0], b_in_a.balls_per_point)
    np.testing.assert_array_equal(got["row"][1], b_in_a.points_per_ball)


def test_the_selection_over_wide_tiles_is_exact():
    """Tiles wider than the columns the first bound is sampled from (see knn_tile)."""
    rng = np.random.default_rng(11)
    s = rng.integers(-3, 4, size=(700, 2)).astype(float)  # heavy ties
    for k in (1, 5, 40):
        for block in ((64, 700), (100, 300)):
            got = knn_balls(s, k, block_size=block)
            want = knn_balls(s, k, block_size=(700, 5))
            np.testing.assert_array_equal(got.indices, want.indices)
            np.testing.assert_array_equal(got.sq_distances, want.sq_distances)


def test_the_counts_on_a_local_dask_cluster_equal_one_process():
    distributed = pytest.importorskip("distributed")
    import joblib

    a, b = clustered(500, seed=12), clustered(400, seed=13)
    one = mutual_balls(a, b, 3)
    me_one = mark_evaluate(a, b, 3, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, timeout="60s"), \
            joblib.parallel_config(backend="dask"):
        on_cluster = mutual_balls(a, b, 3, n_jobs=None, block_size=(128, 128))
        me_cluster = mark_evaluate(a, b, 3, progress=False, n_jobs=None)
    assert_same(on_cluster, one)
    assert me_cluster == me_one


def test_reproduce_runs_a_stages_units_on_a_scheduler(tmp_path, monkeypatch, capsys):
    distributed = pytest.importorskip("distributed")
    import threading

    import pandas as pd

    from markeval.reproduce import cli, run
    from markeval.reproduce.stage import Stage

    stage = Stage(name="squares", title="squares", settings=lambda p: {"base": 3},
                  units=lambda s: [str(i) for i in range(6)], compute=_square_rows,
                  compare=lambda rows, s: pd.DataFrame([{
                      "paper": "-", "table": "-", "row": "-", "column": "-",
                      "paper_value": 0.0, "our_value": rows["value"].sum(), "setting": "-"}]),
                  parallel=True)
    monkeypatch.setattr(cli, "all_stages", lambda: {"squares": stage})
    monkeypatch.setattr(run, "all_stages", lambda: {"squares": stage})
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path / "cache"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        argv = ["--stage", "squares", "--profile", "ci", "--out", str(tmp_path / "out"),
                "--scheduler", cluster.scheduler_address]
        assert cli.main(argv) == 0
    # Each unit ran on a worker thread of the cluster, none in this (the main) thread.
    assert len(_threads_seen) == 6
    assert threading.main_thread().name not in _threads_seen
    assert "squares (ci): 6 units computed, 0 reused" in capsys.readouterr().out
    rows = run.read_rows(tmp_path / "out", "squares")
    assert sorted(rows["value"]) == [float(3 + i * i) for i in range(6)]
    assert cli.main(["--stage", "squares", "--profile", "ci", "--out", str(tmp_path / "x"),
                     "--scheduler", "tpc://127.0.0.1:8786"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--scheduler tpc://127.0.0.1:8786: cannot reach the scheduler (unknown address " \
           "scheme 'tpc'" in err


_threads_seen: list[str] = []


def _square_rows(unit, settings):
    import threading

    import pandas as pd

    _threads_seen.append(threading.current_thread().name)
    return pd.DataFrame({"metric": ["sq"], "value": [float(settings["base"] + int(unit) ** 2)]})
