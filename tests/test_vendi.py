"""The Vendi score: values by hand, the Gram trick against the n × n matrix, parity with
vendi-score 0.0.3, properties, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.distribution import vendi as vendi_module
from markeval.distribution.vendi import VendiResult, vendi, vendi_score

ORDERS = (0.5, 1.0, 2.0, 3.7, math.inf)


def brute(x, q):
    """The definition on the n × n matrix: cosine similarities, eigenvalues of K / n."""
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    w = np.linalg.eigvalsh(u @ u.T / len(x))
    p = w[w > 1e-12]  # the rank is known in these tests: drop the rounding noise
    p = p / p.sum()
    if q == 1:
        return math.exp(-np.sum(p * np.log(p)))
    if q == math.inf:
        return 1 / p.max()
    return np.sum(p**q) ** (1 / (1 - q))


# --- by hand ------------------------------------------------------------------------------------


@pytest.mark.parametrize("q", ORDERS)
def test_identical_samples_score_one_and_orthogonal_ones_score_n(q):
    same = np.tile([[0.3, -1.2, 2.0]], (7, 1))
    assert vendi_score(same, q=q) == pytest.approx(1.0, abs=1e-12)
    # n orthogonal directions, any lengths (the kernel is the cosine): n distinct samples
    assert vendi_score(np.diag([1.0, 2.0, 0.5, 9.0]), q=q) == pytest.approx(4.0, rel=1e-12)
    assert vendi_score(np.eye(5)[[0, 1, 2]], q=q) == pytest.approx(3.0, rel=1e-12)


def test_two_kinds_by_hand():
    # Two samples of one direction, one of another: K / 3 has eigenvalues 2/3 and 1/3.
    x = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    p = np.array([2 / 3, 1 / 3])
    want = {0.5: (math.sqrt(2 / 3) + math.sqrt(1 / 3)) ** 2, 1.0: math.exp(-np.sum(p * np.log(p))),
            2.0: 9 / 5, math.inf: 3 / 2}
    for q, value in want.items():
        assert vendi_score(x, q=q) == pytest.approx(value, rel=1e-12), q


def test_duplicating_every_sample_changes_nothing():
    # The score counts kinds, not samples: two copies of each of 3 orthogonal samples is 3.
    x = np.eye(3)
    assert vendi_score(np.vstack([x, x]), q=1.0) == pytest.approx(3.0, rel=1e-12)


def test_the_result_of_two_sets():
    rng = np.random.default_rng(0)
    ref, cand = rng.normal(size=(30, 5)), rng.normal(size=(12, 5))
    r = vendi(ref, cand, q=2.0)
    assert isinstance(r, VendiResult) and VendiResult.higher_is_better is True
    assert r.score == vendi_score(cand, q=2.0) and r.reference_score == vendi_score(ref, q=2.0)
    assert (r.q, r.n_reference, r.n_candidate, r.item_scores) == (2.0, 30, 12, None)
    assert r.signature.startswith("vendi|kernel:cosine|q:2.0|version:")
    assert vendi(ref, cand, q=math.inf).signature.startswith("vendi|kernel:cosine|q:inf|")
    swapped = vendi(cand, ref, q=2.0)
    assert (swapped.score, swapped.reference_score) == (r.reference_score, r.score)


# --- the Gram trick -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(40, 6), (6, 40), (9, 9), (1, 3), (50, 1)])
@pytest.mark.parametrize("q", ORDERS)
def test_either_gram_matrix_gives_the_n_by_n_value(shape, q):
    x = np.random.default_rng(sum(shape)).normal(size=shape) + 0.3
    assert vendi_score(x, q=q) == pytest.approx(brute(x, q), rel=1e-12)


def test_the_d_by_d_gram_matrix_in_blocks(monkeypatch):
    x = np.random.default_rng(1).normal(size=(200, 7)).astype(np.float32)
    whole = vendi_score(x)
    monkeypatch.setattr(vendi_module, "_BLOCK_BYTES", 8 * 7 * 13)  # 13 rows a block
    assert vendi_score(x) == pytest.approx(whole, rel=1e-13)
    assert whole == pytest.approx(brute(x.astype(float), 1.0), rel=1e-12)


def test_rounding_noise_does_not_count_at_small_q():
    # 200 samples in 3 dimensions: K has rank 3, and its other 197 eigenvalues are rounding
    # noise of about 1e-17, which q = 0.25 would lift to about 1e-4 each (vendi-score's n × n
    # path scores 3.0078 here, above the rank). They count as 0: the score stays <= 3.
    x = np.random.default_rng(2).normal(size=(200, 3))
    assert vendi_score(x, q=0.25) <= 3.0
    assert vendi_score(x, q=0.25) == pytest.approx(brute(x, 0.25), rel=1e-12)


# --- parity with vendi-score 0.0.3 --------------------------------------------------------------


def _reference():
    return pytest.importorskip("vendi_score.vendi")


# vendi-score 0.0.3 reads scipy.sparse.csr, which scipy deprecates: its warning, not ours.
_ITS_WARNING = pytest.mark.filterwarnings("ignore:Please import `csr_matrix`:DeprecationWarning")


@_ITS_WARNING
@pytest.mark.parametrize("seed", range(8))
def test_parity_with_vendi_score(seed):
    # Same eigenvalues from the same matrix in float64: the scores agree to rounding (measured
    # at most 2e-15 relative). Compared where the two computations decompose the same matrix,
    # of full rank: score_dual's d × d Xᵀ X / n when d < n, score_K's n × n X Xᵀ / n when
    # n <= d. On a rank-deficient matrix and q < 1 vendi-score counts rounding noise (see
    # test_rounding_noise_does_not_count_at_small_q). vendi-score spells the limit q = "inf".
    V = _reference()
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 120)), int(rng.integers(1, 50))
    x = rng.normal(size=(n, d)) + rng.uniform(-1, 1, size=d)
    for q in ORDERS:
        theirs_q = "inf" if q == math.inf else q
        if d < n:
            theirs = V.score_dual(x, q=theirs_q)
        else:
            u = normalize(x, axis=1)
            theirs = V.score_K(u @ u.T, q=theirs_q)
        assert vendi_score(x, q=q) == pytest.approx(theirs, rel=1e-12), (n, d, q)
    # score_X, the package's entry point, is Shannon's whatever its q (0.0.3 passes q=1 on)
    assert vendi_score(x) == pytest.approx(V.score_X(x), rel=1e-12)


@_ITS_WARNING
def test_parity_with_vendi_score_on_unit_rows_without_normalising():
    V = _reference()
    x = np.random.default_rng(9).normal(size=(80, 10))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    for q in (1.0, 2.0):
        assert vendi_score(x, q=q, normalize=False) == pytest.approx(
            V.score_dual(x, q=q, normalize=False), rel=1e-12)
    assert vendi_score(x, normalize=False) == pytest.approx(vendi_score(x), rel=1e-12)


# --- properties ---------------------------------------------------------------------------------

_samples = st.tuples(st.integers(0, 2**32 - 1), st.integers(2, 30), st.integers(1, 8)).map(
    lambda t: np.random.default_rng(t[0]).normal(size=(t[1], t[2]))
    + np.random.default_rng(t[0]).normal(size=t[2]))


@settings(max_examples=40, deadline=None)
@given(_samples, st.sampled_from(ORDERS))
def test_between_one_and_the_rank(x, q):
    score = vendi_score(x, q=q)
    assert 1.0 - 1e-9 <= score <= min(x.shape) * (1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(_samples, st.integers(0, 2**32 - 1))
def test_rotations_and_permutations_change_nothing(x, seed):
    rng = np.random.default_rng(seed)
    rotation, _ = np.linalg.qr(rng.normal(size=(x.shape[1],) * 2))
    moved = (x @ rotation)[rng.permutation(len(x))]
    for q in ORDERS:
        assert vendi_score(moved, q=q) == pytest.approx(vendi_score(x, q=q), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(_samples)
def test_non_increasing_in_q(x):
    scores = [vendi_score(x, q=q) for q in (0.1, 0.5, 0.99, 1.0, 1.01, 2.0, 5.0, 50.0, math.inf)]
    assert all(b <= a * (1 + 1e-9) for a, b in zip(scores, scores[1:])), scores


def test_large_orders_do_not_underflow():
    # λ^q underflows for q = 2000 (0.1 ** 2000 is 0.0); the score approaches 1 / λ_max.
    x = np.eye(10)
    assert vendi_score(x, q=2000.0) == pytest.approx(10.0, rel=1e-12)
    x = np.vstack([np.eye(10), np.eye(10)[:1]])
    assert vendi_score(x, q=2000.0) == pytest.approx(11 / 2, rel=1e-2)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("x, kwargs, err, match", [
    (np.eye(3), {"q": 0}, ValueError, r"q must be > 0 \(or math.inf\), got 0.0"),
    (np.eye(3), {"q": -1.0}, ValueError, r"q must be > 0"),
    (np.eye(3), {"q": math.nan}, ValueError, r"q must be finite, got nan"),
    (np.eye(3), {"q": -math.inf}, ValueError, r"q must be finite, got -inf"),
    (np.eye(3), {"q": "inf"}, TypeError, r"q must be a number, got str"),
    (np.eye(3), {"q": True}, TypeError, r"q must be a number, got bool"),
    (np.eye(3), {"normalize": "yes"}, TypeError, r"normalize"),
    (np.array([[1.0, 0.0], [0.0, 0.0]]), {}, ValueError, r"samples row 1 is all zeros"),
    (np.array([[1.0, 0.0], [0.0, 2.0]]), {"normalize": False}, ValueError,
     r"samples row 1 has squared norm 4, not 1"),
    (np.zeros((0, 3)), {}, ValueError, r"samples has 0 rows"),
    (np.zeros(3), {}, ValueError, r"samples must be 2-D"),
    (np.array([[1.0, np.nan]]), {}, ValueError, r"samples contains 1 non-finite"),
    ("the cat sat", {}, TypeError, r"samples must be a 2-D array"),
])
def test_bad_input_is_refused_naming_the_argument(x, kwargs, err, match):
    with pytest.raises(err, match=match):
        vendi_score(x, **kwargs)


def test_bad_sets_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="reference has dimension 2 but candidate has "):
        vendi(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="candidate row 0 is all zeros"):
        vendi(np.eye(2), np.zeros((1, 2)))
    with pytest.raises(TypeError, match="reference must be a 2-D array"):
        vendi("the cat", np.eye(2))
    with pytest.raises(ValueError, match="q must be > 0"):
        vendi(np.eye(2), np.eye(2), q=0.0)
