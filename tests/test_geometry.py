"""markeval.geometry: exact k-NN balls and ball membership against a brute-force distance matrix."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from markeval.geometry import (
    KNNBalls,
    ball_membership,
    knn_balls,
    mutual_membership,
    pairwise_sq_distances,
    sq_distance_blocks,
)


def brute_sq(x, y):
    """Independent reference: the full (n, m, d) difference tensor."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)


def brute_knn(x, k):
    d = brute_sq(x, x)
    n = len(x)
    idx = np.array([sorted((j for j in range(n) if j != i), key=lambda j: (d[i, j], j))[:k]
                    for i in range(n)])
    return idx, np.take_along_axis(d, idx, axis=1)


def brute_membership(q, centres, sq_radii):
    inside = brute_sq(q, centres) <= np.asarray(sq_radii)[None, :]
    return inside.sum(1), inside.sum(0)


# Small integer coordinates: many exact ties and duplicates, and every float operation exact,
# so any correct method must agree with the brute force to the last bit.
def int_points(max_rows=25, min_rows=2):
    return st.integers(1, 4).flatmap(
        lambda d: st.tuples(
            arrays(np.int64, st.tuples(st.integers(min_rows, max_rows), st.just(d)),
                   elements=st.integers(-2, 2)),
            arrays(np.int64, st.tuples(st.integers(1, max_rows), st.just(d)),
                   elements=st.integers(-2, 2)),
        )
    )


@settings(max_examples=150, deadline=None)
@given(int_points(), st.data())
def test_knn_and_membership_exact_on_integer_grids(sets, data):
    s, q = (a.astype(float) for a in sets)
    k = data.draw(st.integers(1, len(s) - 1), label="k")
    block = data.draw(st.one_of(st.none(), st.integers(1, len(s) + 2)), label="block_size")
    balls = knn_balls(s, k, block_size=block)
    idx, dist = brute_knn(s, k)
    np.testing.assert_array_equal(balls.indices, idx)
    np.testing.assert_array_equal(balls.sq_distances, dist)
    m = ball_membership(q, balls, block_size=block)
    per_point, per_ball = brute_membership(q, s, dist[:, -1])
    np.testing.assert_array_equal(m.balls_per_point, per_point)
    np.testing.assert_array_equal(m.points_per_ball, per_ball)
    np.testing.assert_array_equal(m.inside_any, per_point > 0)


@settings(max_examples=60, deadline=None)
@given(int_points(), st.data())
def test_mutual_membership_equals_two_one_way_passes(sets, data):
    a, b = (x.astype(float) for x in sets)
    if len(b) < 2:
        b = np.vstack([b, b])  # a duplicate: legal, radius 0
    ka = data.draw(st.integers(1, len(a) - 1))
    kb = data.draw(st.integers(1, len(b) - 1))
    balls_a, balls_b = knn_balls(a, ka), knn_balls(b, kb)
    a_in_b, b_in_a = mutual_membership(balls_a, balls_b, block_size=data.draw(st.integers(1, 7)))
    one_a, one_b = ball_membership(a, balls_b), ball_membership(b, balls_a)
    for got, want in ((a_in_b, one_a), (b_in_a, one_b)):
        np.testing.assert_array_equal(got.balls_per_point, want.balls_per_point)
        np.testing.assert_array_equal(got.points_per_ball, want.points_per_ball)


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_exact_on_continuous_data_far_from_origin(offset, dtype):
    """Continuous coordinates, shifted far from 0 where the matmul identity cancels badly."""
    rng = np.random.default_rng(1)
    s = rng.normal(size=(120, 8)) + offset
    # Queries: half fresh points, half exact copies of points of s, which sit exactly on the
    # boundary of the balls whose k-th neighbour they are.
    q = np.vstack([rng.normal(size=(60, 8)) + offset, s[::2]])
    balls = knn_balls(s, 5, dtype=dtype, block_size=17)
    d = pairwise_sq_distances(s)
    np.fill_diagonal(d, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(len(s)), d.shape), d), axis=1)[:, :5]
    np.testing.assert_array_equal(balls.indices, order)
    np.testing.assert_array_equal(balls.sq_distances, np.take_along_axis(d, order, 1))
    m = ball_membership(q, balls, dtype=dtype, block_size=23)
    inside = pairwise_sq_distances(q, s) <= balls.sq_radii[None, :]
    np.testing.assert_array_equal(m.balls_per_point, inside.sum(1))
    np.testing.assert_array_equal(m.points_per_ball, inside.sum(0))


def test_each_ball_holds_its_centre_and_k_neighbours():
    rng = np.random.default_rng(2)
    s = rng.normal(size=(300, 16)).astype(np.float32)  # float32 input, as encoders return
    balls = knn_balls(s, 4)
    m = ball_membership(s, balls)
    assert (m.points_per_ball >= 5).all()


def test_identical_sets_are_inside_each_other():
    """The situation of Mark-Evaluate's theorems: S' = S, so every s' is in the ball of s."""
    rng = np.random.default_rng(3)
    s = rng.normal(size=(200, 10))
    balls = knn_balls(s, 3)
    a_in_b, b_in_a = mutual_membership(balls, knn_balls(s.copy(), 3))
    assert a_in_b.inside_any.all() and b_in_a.inside_any.all()
    np.testing.assert_array_equal(a_in_b.points_per_ball, b_in_a.points_per_ball)


def test_duplicates_are_neighbours_at_distance_zero():
    s = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [5.0, 0.0]])
    balls = knn_balls(s, 2)
    assert balls.indices.tolist() == [[1, 2], [0, 2], [0, 1], [0, 1]]
    assert balls.sq_radii.tolist() == [0.0, 0.0, 0.0, 25.0]
    m = ball_membership(np.array([[0.0, 0.0], [1e-9, 0.0]]), balls)
    # The zero-radius balls are the single point {0}: closed, so an exact copy is inside.
    assert m.balls_per_point.tolist() == [4, 1]


@pytest.mark.filterwarnings("error")  # e.g. torch's warning about read-only NumPy arrays
@pytest.mark.parametrize("k", [1, 3])
def test_torch_backend_equals_numpy(k):
    pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    s = np.round(rng.normal(size=(150, 6)), 1)  # rounded: ties happen
    q = np.vstack([np.round(rng.normal(size=(80, 6)), 1), s[:40]])
    for dtype in ("float64", "float32"):
        b_np = knn_balls(s, k)
        b_t = knn_balls(s, k, backend="torch", device="cpu", dtype=dtype, block_size=32)
        np.testing.assert_array_equal(b_np.indices, b_t.indices)
        np.testing.assert_array_equal(b_np.sq_distances, b_t.sq_distances)
        m_np = ball_membership(q, b_np)
        m_t = ball_membership(q, b_np, backend="torch", dtype=dtype, block_size=32)
        np.testing.assert_array_equal(m_np.balls_per_point, m_t.balls_per_point)
        np.testing.assert_array_equal(m_np.points_per_ball, m_t.points_per_ball)


def test_sq_distance_blocks_cover_the_matrix():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(11, 3)), rng.normal(size=(7, 3))
    got = np.vstack([blk for _, _, blk in sq_distance_blocks(x, y, block_size=4)])
    np.testing.assert_allclose(got, brute_sq(x, y), rtol=1e-12, atol=1e-12)


def test_results_are_read_only():
    balls = knn_balls(np.arange(8.0).reshape(4, 2), 1)
    with pytest.raises(ValueError, match="read-only"):
        balls.indices[0, 0] = 3
    assert repr(balls) == "KNNBalls(n=4, dim=2, k=1)"
    assert isinstance(balls, KNNBalls) and len(balls) == 4



def test_balls_keep_the_callers_points_only_where_nobody_can_write_them():
    """A caller's writeable array (or a read-only view of one) is copied, so writing to it
    later cannot move the balls; a read-only array that owns its memory is kept, not copied."""
    writeable = np.arange(8.0).reshape(4, 2)
    frozen = writeable.copy()
    frozen.flags.writeable = False
    view = writeable[:]
    view.flags.writeable = False
    for given, kept in ((writeable, False), (view, False), (frozen, True)):
        assert np.shares_memory(knn_balls(given, 1).points, given) == kept


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("points", "k", "error", "match"),
    [
        ([[0.0], [np.nan]], 1, ValueError, "points contains 1 non-finite values .*NaN"),
        ([[0.0], [np.inf]], 1, ValueError, "inf at row 1"),
        (np.zeros((0, 3)), 1, ValueError, "points has 0 rows; at least 2"),
        ([[1.0, 2.0]], 1, ValueError, "at least 2"),
        ([1.0, 2.0], 1, ValueError, "must be 2-D"),
        ([[0.0], [1.0], [2.0]], 3, ValueError, "k=3 is too large for points of 3 points"),
        ([[0.0], [1.0]], 0, ValueError, "k must be >= 1"),
        ([[0.0], [1.0]], 1.0, TypeError, "k must be an int"),
        ("abc", 1, TypeError, "must be a 2-D array of embeddings, got str"),
    ],
)
def test_knn_balls_bad_input(points, k, error, match):
    with pytest.raises(error, match=match):
        knn_balls(points, k)


def test_membership_bad_input():
    balls = knn_balls(np.zeros((3, 2)), 1)
    with pytest.raises(ValueError, match="queries has dimension 3 but the balls' points has dimension 2"):
        ball_membership(np.zeros((2, 3)), balls)
    with pytest.raises(ValueError, match="queries has 0 rows"):
        ball_membership(np.zeros((0, 2)), balls)
    with pytest.raises(TypeError, match="balls must be a KNNBalls"):
        ball_membership(np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="balls_a has dimension 2 but balls_b has dimension 1"):
        mutual_membership(balls, knn_balls(np.zeros((3, 1)), 1))
    with pytest.raises(ValueError, match="backend must be one of"):
        knn_balls(np.zeros((3, 2)), 1, backend="faiss")
    with pytest.raises(ValueError, match="dtype must be one of"):
        knn_balls(np.zeros((3, 2)), 1, dtype="float16")
    with pytest.raises(ValueError, match="runs on the CPU only"):
        knn_balls(np.zeros((3, 2)), 1, device="cuda")
    with pytest.raises(ValueError, match="block_size must be a positive int, got 0"):
        knn_balls(np.zeros((3, 2)), 1, block_size=0)
    with pytest.raises(ValueError, match="reference has 1 rows"):
        knn_balls(np.zeros((1, 2)), 1, name="reference")


def test_sq_distance_blocks_give_exact_zero_for_duplicates_and_small_relative_error():
    # In d >= 2 the matmul identity gives a duplicate 0 or ~1e-16 depending on the BLAS; the
    # entries near zero are recomputed directly, so a copy is exactly 0 on every machine.
    rng = np.random.default_rng(6)
    y = rng.normal(size=(40, 24)) * 10
    x = np.vstack([y[[3, 17]], y[5] + 1e-7, rng.normal(size=(5, 24))])
    block = np.vstack([blk for _, _, blk in sq_distance_blocks(x, y, block_size=3)])
    assert block[0, 3] == 0.0 and block[1, 17] == 0.0
    exact = brute_sq(x, y)
    # Near-zero entries are direct float64 sums: relative error at rounding level.
    assert block[2, 5] == pytest.approx(exact[2, 5], rel=1e-9)
    np.testing.assert_allclose(block, exact, rtol=1e-4, atol=0)
