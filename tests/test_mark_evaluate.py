"""Mark-Evaluate: a literal from-the-equations reference, the paper's theorems, disjoint sets."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.encoders.loading import normalize_device
from markeval.geometry import pairwise_sq_distances
from markeval.population.ecology import m0_mle
from markeval.population.mark_evaluate import (
    mark_evaluate,
    me_capture,
    me_petersen,
    me_schnabel,
    me_score,
)

# ----------------------------------------------------------------- literal reference


# Text input names its encoder in the signature.
# The default encoder in a signature: its name and the device "auto" chose.
_MODEL = f"model:sentence-transformers/all-MiniLM-L6-v2|device:{normalize_device('auto')}"

def _nn_and_radii(x, k):
    """NN_k(s, S) as index lists (s first, then k neighbours, ties by index) and squared radii."""
    d = pairwise_sq_distances(x)
    np.fill_diagonal(d, np.inf)
    order = np.argsort(d, axis=1, kind="stable")[:, :k]
    nn = [[i] + order[i].tolist() for i in range(len(x))]
    return nn, d[np.arange(len(x)), order[:, -1]]


def _reference(S, Sp, k):
    """Eqs. 1–7 as loops over Python sets (slow, obviously the text of the paper).

    Schnabel comes out both ways: Eq. 4 as printed, C_T M_T / R_T with M_T = |M(T)| the marks
    after the last census, and Schnabel's census estimator Σ C_i |M(i)| / Σ R_i.
    """
    n, n_p = len(S), len(Sp)
    nn_s, r_s = _nn_and_radii(S, k)
    nn_p, r_p = _nn_and_radii(Sp, k)
    cross = pairwise_sq_distances(S, Sp)               # cross[a, b] = ‖s_a − s'_b‖²
    in_ball_of_s = cross <= r_s[:, None]                # s'_b in ball of s_a
    in_ball_of_p = cross <= r_p[None, :]                # s_a in ball of s'_b
    f_p = [bool(in_ball_of_s[:, b].any()) for b in range(n_p)]   # f(s', S)
    f_s = [bool(in_ball_of_p[a, :].any()) for a in range(n)]     # f(s, S')
    pop = n + n_p
    # Petersen.
    M, C, R = n + sum(f_p), n_p + sum(f_s), sum(f_p) + sum(f_s)
    petersen = math.inf if R == 0 else M * C / R
    # Schnabel: marks are ("s", a) and ("p", b).
    marks = {("s", a) for a in range(n)} | {("p", b) for b in range(n_p) if f_p[b]}
    sum_cm = sum_c = sum_r = 0
    for i in range(n_p):
        s_caught = {("s", a) for a in range(n) if in_ball_of_p[a, i]}
        p_caught = {("p", b) for b in nn_p[i]}
        c_i = len(p_caught) + len(s_caught)
        r_i = len(s_caught & marks) + len(p_caught & marks)
        sum_cm += c_i * len(marks)
        sum_c += c_i
        sum_r += r_i
        marks |= p_caught
    m_t = len(marks)                                   # M(T): S ∪ S' after the last census
    printed = math.inf if sum_r == 0 else sum_c * m_t / sum_r
    census = math.inf if sum_r == 0 else sum_cm / sum_r
    # CAPTURE.
    c_total = (sum(k + 1 + int(in_ball_of_s[a].sum()) for a in range(n))
               + sum(k + 1 + int(in_ball_of_p[:, b].sum()) for b in range(n_p)))
    capture = m0_mle(pop, c_total, pop).estimate
    return {"petersen": (petersen, M, C, R), "schnabel": (printed, sum_c, m_t, sum_r),
            "census": (census, sum_cm, sum_r), "capture": (capture, c_total)}


@st.composite
def _two_sets(draw, grid=False):
    """Two small point sets; on an integer grid they have many ties and duplicates."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(2, 14))
    n_p = draw(st.integers(2, 14))
    d = draw(st.integers(1, 3))
    k = draw(st.integers(1, min(n, n_p) - 1))
    shift = draw(st.sampled_from([0.0, 0.5, 2.0]))
    rng = np.random.default_rng(seed)
    if grid:
        S = rng.integers(0, 3, size=(n, d)).astype(float)
        Sp = rng.integers(0, 3, size=(n_p, d)).astype(float) + shift
    else:
        S = rng.normal(size=(n, d))
        Sp = rng.normal(size=(n_p, d)) + shift
    return S, Sp, k


@settings(max_examples=80, deadline=None)
@given(st.one_of(_two_sets(), _two_sets(grid=True)))
def test_equals_literal_reference(sets):
    S, Sp, k = sets
    ref = _reference(S, Sp, k)
    p, s, c = me_petersen(S, Sp, k), me_schnabel(S, Sp, k), me_capture(S, Sp, k)
    census = me_schnabel(S, Sp, k, estimator="census")
    # Integer counts, and estimates from one division of integers: exact.
    assert (p.estimate, p.marked, p.captured, p.recaptured) == ref["petersen"]
    assert (s.estimate, s.sum_captured, s.marked_total, s.sum_recaptured) == ref["schnabel"]
    assert (census.estimate, census.sum_captured_times_marked,
            census.sum_recaptured) == ref["census"]
    assert (s.estimator, census.estimator) == ("printed", "census")
    assert (c.estimate, c.captures) == (ref["capture"][0], ref["capture"][1])
    pop = len(S) + len(Sp)
    for r in (p, s, c):
        assert r.population == pop and r.k == k
        assert r.score == me_score(r.estimate, pop) and 0.0 <= r.score <= 1.0
        assert type(r.score) is float and type(r.estimate) is float


# ----------------------------------------------------------------- a hand-worked 2-D case


def test_tiny_2d_case_by_hand():
    """S = {(0,0), (1,0), (0,3)}, S' = {(0,1), (5,5), (6,5)}, k = 1.

    Balls of S (radius = distance to the nearest other point of S): (0,0) → 1, (1,0) → 1,
    (0,3) → 3. Balls of S': (0,1) → √41 (its nearest in S' is (5,5): ‖(0,1)−(5,5)‖² = 41,
    ‖(0,1)−(6,5)‖² = 52), (5,5) → 1, (6,5) → 1.

    s' inside balls of S: (0,1) is in the ball of (0,0) (distance 1 ≤ 1) and of (0,3)
    (distance 2 ≤ 3); (5,5), (6,5) in none. So Σ f(s', S) = 1, and S' points per S-ball:
    (0,0): 1, (1,0): 0, (0,3): 1.
    s inside balls of S': ball of (0,1) has radius² 41 and holds all of S (squared distances
    1, 2, 4); the other two balls hold none. So Σ f(s, S') = 3.

    Petersen: M = 3 + 1 = 4, C = 3 + 3 = 6, R = 1 + 3 = 4, P̂ = 24/4 = 6 = P: score 1.

    Schnabel(S, S'): M(1) = S ∪ {s'_1}, |M(1)| = 4.
      i=1, s'_1 = (0,1): NN = {s'_1, s'_2} (nearest of S' to (0,1) is (5,5)), s caught = 3.
          C = 2 + 3 = 5, R = 3 + |{s'_1}| = 4, M = 4; then s'_2 is marked, |M| = 5.
      i=2, s'_2 = (5,5): NN = {s'_2, s'_3}, no s. C = 2, R = |{s'_2}| = 1, M = 5; mark s'_3.
      i=3, s'_3 = (6,5): NN = {s'_3, s'_2}, no s. C = 2, R = 2, M = 6.
      Eq. 4 as printed: C_T = 9, M_T = 6, R_T = 7, P̂ = 54/7, score 1 − (12/7)/6 = 5/7.
      Census estimator: P̂ = (5·4 + 2·5 + 2·6) / (4 + 1 + 2) = 42/7 = 6: score 1.

    CAPTURE: t = 6, C_total = (2+1) + (2+0) + (2+1) + (2+3) + (2+0) + (2+0) = 17, M_T = 6.
    """
    S = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
    Sp = np.array([[0.0, 1.0], [5.0, 5.0], [6.0, 5.0]])
    p = me_petersen(S, Sp, 1)
    assert (p.marked, p.captured, p.recaptured, p.estimate, p.score) == (4, 6, 4, 6.0, 1.0)
    s = me_schnabel(S, Sp, 1)
    assert (s.initially_marked, s.sum_captured_times_marked, s.sum_captured,
            s.sum_recaptured, s.marked_total) == (4, 42, 9, 7, 6)
    assert s.estimate == 54 / 7 and s.score == pytest.approx(5 / 7, rel=1e-15)
    census = me_schnabel(S, Sp, 1, estimator="census")
    assert census.estimate == 6.0 and census.score == 1.0
    c = me_capture(S, Sp, 1)
    assert (c.occasions, c.captures, c.distinct) == (6, 17, 6)
    assert c.estimate == m0_mle(6, 17, 6).estimate


# ----------------------------------------------------------------- the paper's theorems


@st.composite
def _one_set(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(3, 25))
    d = draw(st.integers(1, 4))
    k = draw(st.integers(1, n - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        S = rng.normal(size=(n, d))
    else:  # integer grid: duplicates and ties
        S = rng.integers(0, 3, size=(n, d)).astype(float)
    return S, k, rng.permutation(n)


@settings(max_examples=60, deadline=None)
@given(_one_set())
def test_theorems_a1_a2_equal_sets_score_one(case):
    """Theorems A.1 (Petersen) and A.2 (Schnabel): S' = S (any order) → ME = 1, any k, any size.

    A.2 holds exactly: M(1) is everything (2|S|), and C_i = R_i for every census.
    """
    S, k, perm = case
    for estimator in ("printed", "census"):
        r = mark_evaluate(S, S[perm], k, schnabel_estimator=estimator)
        assert r.petersen.score == 1.0 and r.petersen.estimate == 2 * len(S)
        assert r.schnabel_quality.score == 1.0 and r.schnabel_diversity.score == 1.0
        assert r.schnabel_quality.estimate == 2 * len(S)
        assert r.schnabel_quality.sum_captured == r.schnabel_quality.sum_recaptured


@settings(max_examples=60, deadline=None)
@given(_one_set())
def test_theorem_a3_capture_equal_sets_small(case):
    """Theorem A.3 (CAPTURE): S' = S → ME = 1 — true for the small sets the paper checks."""
    S, k, perm = case
    assert me_capture(S, S[perm], k).score == 1.0


def test_theorem_a3_fails_for_larger_sets():
    """A.3 is not a theorem for every |S|: with S' = S in general position,
    t = M_T = 2|S| and C_total = 2t(k + 1) (each ball holds k + 1 points of each set), and the
    M0 MLE exceeds 2|S| from |S| = 30 at k = 1 (209 at k = 2, 1504 at k = 3): then ME < 1.
    Asymptotically P̂/P → 1/x with x = 1 − exp(−2(k+1)x): 1.0203 at k = 1.
    """
    rng = np.random.default_rng(1)
    for n, expect_one in ((29, True), (30, False)):
        S = rng.normal(size=(n, 5))
        c = me_capture(S, S.copy(), 1)
        assert c.captures == 2 * (2 * n) * 2
        assert (c.score == 1.0) is expect_one
    assert m0_mle(2 * 208, 4 * 208 * 3, 2 * 208).estimate == 2 * 208
    assert m0_mle(2 * 209, 4 * 209 * 3, 2 * 209).estimate > 2 * 209


# ----------------------------------------------------------------- symmetry and bounds


@settings(max_examples=50, deadline=None)
@given(st.one_of(_two_sets(), _two_sets(grid=True)))
def test_petersen_and_capture_are_symmetric(sets):
    S, Sp, k = sets
    a, b = mark_evaluate(S, Sp, k), mark_evaluate(Sp, S, k)
    assert a.petersen.estimate == b.petersen.estimate
    assert a.capture.estimate == b.capture.estimate and a.capture.captures == b.capture.captures
    # Quality and diversity swap roles.
    assert a.schnabel_quality == b.schnabel_diversity


@settings(max_examples=50, deadline=None)
@given(st.one_of(_two_sets(), _two_sets(grid=True)))
def test_petersen_estimate_is_never_below_population(sets):
    """P̂ ≥ P always. With a = Σ f(s', S) ≤ |S'| and b = Σ f(s, S') ≤ |S|:
    M C − P R = (|S| + a)(|S'| + b) − (|S| + |S'|)(a + b) = (|S| − b)(|S'| − a) ≥ 0.
    So ME_Petersen only sees over-estimates, and equals 1 iff every s is in a ball of S' or
    every s' in a ball of S.
    """
    S, Sp, k = sets
    p = me_petersen(S, Sp, k)
    a, b = p.marked - len(S), p.captured - len(Sp)
    assert p.marked * p.captured - p.population * p.recaptured == (len(S) - b) * (len(Sp) - a)
    assert p.estimate >= p.population
    assert (p.score == 1.0) == (a == len(Sp) or b == len(S))


# ----------------------------------------------------------------- far-apart sets


def test_far_apart_petersen_is_zero():
    rng = np.random.default_rng(2)
    S = rng.normal(size=(40, 3))
    p = me_petersen(S, rng.normal(size=(30, 3)) + 100.0, 3)
    assert p.recaptured == 0 and p.estimate == math.inf and p.score == 0.0


@pytest.mark.parametrize("k, clusters", [(1, 20), (2, 10), (4, 8), (9, 10)])
def test_far_apart_schnabel_census_is_not_zero(k, clusters):
    """Schnabel's census estimator on disjoint sets. No s' is in a ball of S nor s in a ball
    of S', so
    C_i = k + 1, M(1) = S, R_i = |NN_k(s'_i) ∩ ⋃_{j<i} NN_k(s'_j)|. Every s' is in its own
    NN, so ⋃_i NN_k(s'_i) = S' and Σ R_i = |S'|(k + 1) − |S'| = |S'| k, whatever the layout.
    With m_i = |⋃_{j<i} NN_k(s'_j)|:  P̂ = (k + 1)(|S||S'| + Σ m_i) / (|S'| k).

    Layout: S' = G clusters of k + 1 points (each point's k neighbours are its cluster),
    listed cluster by cluster; |S| = |S'| = n = G(k + 1). The first member of cluster c sees
    m = (k + 1)(c − 1), the other k see (k + 1)c, so Σ m_i = n(n + k − 1)/2 and
    P̂ = (k + 1)(3n + k − 1) / (2k),  P = 2n.
    At k = 1: P̂ = 3n, ME = 0.5 for sets that share nothing; for k → ∞ with n/k fixed, P̂ → 1.5n
    and ME → 0.75. ME_Schnabel does not go to 0 on disjoint sets.
    """
    rng = np.random.default_rng(3)
    n = clusters * (k + 1)
    centres = np.arange(clusters)[:, None] * np.array([[100.0, 0.0]])
    Sp = np.repeat(centres, k + 1, axis=0) + rng.uniform(-1, 1, size=(n, 2)) + 1e4
    S = rng.normal(size=(n, 2))
    s = me_schnabel(S, Sp, k, estimator="census")
    assert s.sum_recaptured == n * k and s.initially_marked == n
    expected = (k + 1) * (3 * n + k - 1) / (2 * k)
    assert s.estimate == pytest.approx(expected, rel=1e-12)
    assert s.score == pytest.approx(1 - min(abs(expected - 2 * n) / (2 * n), 1), rel=1e-12)
    assert s.score > 0.45


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 20), st.integers(2, 20), st.integers(1, 6))
def test_far_apart_schnabel_general_formula(seed, n, n_p, k):
    """The closed forms on disjoint sets, for any layout of S' (m_i counted directly).

    Eq. 4 as printed: C_T = (k + 1)|S'|, M_T = |S| + |S'| = P and R_T = k|S'|, so
    P̂ = P (k + 1) / k and ME = 1 − 1/k exactly, whatever the sizes and the order of S'.
    """
    k = min(k, n - 1, n_p - 1)
    rng = np.random.default_rng(seed)
    S, Sp = rng.normal(size=(n, 2)), rng.normal(size=(n_p, 2)) + 1e3
    census = me_schnabel(S, Sp, k, estimator="census")
    nn = [set([i] + np.argsort(pairwise_sq_distances(Sp)[i], kind="stable")[1:k + 1].tolist())
          for i in range(n_p)]
    m = [len(set().union(*nn[:i])) for i in range(n_p)]
    assert census.sum_recaptured == n_p * k
    assert census.estimate == pytest.approx((k + 1) * (n * n_p + sum(m)) / (n_p * k),
                                            rel=1e-12)
    printed = me_schnabel(S, Sp, k)
    assert (printed.sum_captured, printed.marked_total) == ((k + 1) * n_p, n + n_p)
    assert printed.estimate == pytest.approx((n + n_p) * (k + 1) / k, rel=1e-15)
    assert printed.score == pytest.approx(1 - 1 / k, abs=1e-15)
    assert me_schnabel(S, Sp[::-1], k).score == pytest.approx(1 - 1 / k, abs=1e-15)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_far_apart_capture_is_not_zero(k):
    """CAPTURE on disjoint sets: t = M_T = |S| + |S'| and C_total = t(k + 1) exactly, so P̂
    is the M0 MLE at (t, t(k+1), t): a function of t and k only, never inf. For large t,
    N̂/t → 1/x with x = 1 − exp(−(k+1)x) (the M0 score equation M = N(1 − (1 − p)^t),
    p = n/(tN)): ME → 2 − 1/x, i.e. 0.745 at k = 1, 0.937 at k = 2, 0.98 at k = 3, 0.9975 at
    k = 5. Disjoint sets score close to 1, and closer as k grows.
    """
    rng = np.random.default_rng(4)
    n = 300
    S, Sp = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)) + 1e3
    c = me_capture(S, Sp, k)
    t = 2 * n
    assert (c.occasions, c.captures, c.distinct) == (t, t * (k + 1), t)
    assert c.estimate == m0_mle(t, t * (k + 1), t).estimate
    x = 0.5
    for _ in range(200):
        x = 1 - math.exp(-(k + 1) * x)
    assert c.score == pytest.approx(2 - 1 / x, abs=0.01)
    assert c.score > 0.7


# ----------------------------------------------------------------- scores and inputs


def test_me_score_uses_min_not_max():
    assert me_score(20.0, 20) == 1.0
    assert me_score(30.0, 20) == 0.5
    assert me_score(10.0, 20) == 0.5
    assert me_score(100.0, 20) == 0.0 and me_score(math.inf, 20) == 0.0


def test_duplicates_allowed():
    S = np.array([[0.0], [0.0], [0.0], [1.0]])
    r = mark_evaluate(S, S.copy(), 2)
    assert r.petersen.score == r.schnabel_quality.score == 1.0


def test_texts_are_encoded(monkeypatch):
    import markeval.population.samples as text_layer

    table = {"a": [0.0, 0.0], "b": [1.0, 0.0], "c": [0.0, 1.0]}
    monkeypatch.setattr(text_layer, "sentence_embeddings",
                        lambda texts, model=None, progress=True: np.array([table[t] for t in texts]))
    r = me_petersen(["a", "b", "c"], ["a", "b", "c"], 1)
    assert r.score == 1.0


@pytest.mark.parametrize("S, Sp, k, err, match", [
    (np.zeros((3, 2)), np.zeros((3, 2)), 3, ValueError, "k=3 is too large for S of 3"),
    (np.zeros((5, 2)), np.zeros((3, 2)), 3, ValueError, "k=3 is too large for S_prime of 3"),
    (np.zeros((1, 2)), np.zeros((3, 2)), 1, ValueError, "S has 1 rows; at least 2"),
    (np.zeros((0, 2)), np.zeros((3, 2)), 1, ValueError, "S has 0 rows"),
    (np.zeros((3, 2)), np.zeros((3, 3)), 1, ValueError, "dimension 2 but S_prime has dimension 3"),
    (np.array([[0.0, np.nan], [1, 1], [2, 2]]), np.zeros((3, 2)), 1, ValueError, "NaN at row 0"),
    (np.zeros((3, 2)), np.array([[0.0, 1], [np.inf, 1], [2, 2]]), 1, ValueError,
     "S_prime contains 1 non-finite values"),
    (np.zeros((3, 2)), np.zeros((3, 2)), 0, ValueError, "k must be >= 1"),
    (np.zeros((3, 2)), np.zeros((3, 2)), 1.5, TypeError, "k must be an int"),
    (np.zeros(3), np.zeros((3, 2)), 1, ValueError, "S must be 2-D"),
])
def test_bad_input(S, Sp, k, err, match):
    for fn in (me_petersen, me_schnabel, me_capture):
        with pytest.raises(err, match=match):
            fn(S, Sp, k)


def test_mark_evaluate_names_its_arguments():
    with pytest.raises(ValueError, match="candidate has dimension 3"):
        mark_evaluate(np.zeros((3, 2)), np.zeros((3, 3)), 1)


def test_signatures():
    S = np.random.default_rng(5).normal(size=(6, 2))
    r = mark_evaluate(S, S + 0.1, 2)
    assert r.petersen.signature.startswith("me_petersen|k:2|")
    assert r.schnabel_quality.signature.startswith("me_schnabel|k:2|estimator:printed|")
    assert r.signature.startswith("mark_evaluate|k:2|schnabel:printed|")
    census = mark_evaluate(S, S + 0.1, 2, schnabel_estimator="census")
    assert census.schnabel_diversity.signature.startswith("me_schnabel|k:2|estimator:census|")
    with pytest.raises(ValueError, match="estimator must be one of"):
        me_schnabel(S, S, 2, estimator="schnabel1938")
    assert r.capture.signature.startswith("me_capture|k:2|")
    assert r.signature.startswith("mark_evaluate|k:2|")


def test_torch_backend_is_identical():
    pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(60, 5)), rng.normal(size=(50, 5)) + 0.3
    assert mark_evaluate(a, b, 3) == mark_evaluate(a, b, 3, backend="torch", device="cpu")


# ----------------------------------------------------------------- word level (paper §6)

_TEXTS_A = ["The fish swim in the lake.", "A heron waits by the shore.", "Nets catch trout."]
_TEXTS_B = ["Trout swim near the shore.", "The lake is cold.", "Herons eat fish."]


@pytest.fixture(scope="module")
def tokens_a():
    from markeval.encoders import token_embeddings

    return token_embeddings(_TEXTS_A, layers=range(-5, 0), progress=False)


def test_word_samples_one_row_per_token_per_layer_without_specials(tokens_a):
    from markeval.population.samples import word_samples

    x = word_samples(_TEXTS_A)
    rows = [item.vectors[layer, t] for item in tokens_a
            for t in range(item.n_tokens) if not item.special[t] for layer in range(5)]
    assert x.shape == (len(rows), 384)
    # Exact: word_samples encodes the same texts in the same batch as the fixture, in this
    # process, and only reshapes the vectors (another batch would need a tolerance).
    np.testing.assert_array_equal(x, np.stack(rows))
    # The [CLS]/[SEP] vectors are nowhere among the samples.
    specials = np.concatenate([item.vectors[:, item.special].reshape(-1, 384) for item in tokens_a])
    assert not (pairwise_sq_distances(specials, x) == 0).any()


def test_word_samples_layer_choice(tokens_a):
    from markeval.population.samples import word_samples

    last = word_samples(_TEXTS_A, layers=[-1])
    expected = np.concatenate([item.vectors[-1][~item.special] for item in tokens_a])
    np.testing.assert_array_equal(last, expected)  # same batch, one forward pass: exact
    assert word_samples(_TEXTS_A, layers=-1).shape == last.shape


def test_word_level_equals_samples_as_arrays():
    from markeval.population.samples import word_samples

    a, b = word_samples(_TEXTS_A), word_samples(_TEXTS_B)
    by_text = mark_evaluate(_TEXTS_A, _TEXTS_B, 3, level="word")
    by_array = mark_evaluate(a, b, 3)
    for name in ("petersen", "schnabel_quality", "schnabel_diversity", "capture"):
        t, arr = getattr(by_text, name), getattr(by_array, name)
        assert (t.score, t.estimate) == (arr.score, arr.estimate)
    assert by_text.signature.startswith(f"mark_evaluate|k:3|schnabel:printed|{_MODEL}|level:word|layers:-5,-4,-3,-2,-1|")
    r = me_capture(_TEXTS_A, _TEXTS_A, 2, level="word", layers=[-2, -1])
    assert r.occasions == 2 * len(word_samples(_TEXTS_A, layers=[-2, -1]))
    assert r.signature.startswith(f"me_capture|k:2|{_MODEL}|level:word|layers:-2,-1|")


def test_sentence_level_signature_and_cache(tmp_path):
    from markeval.encoders import resolve_encoder

    enc = resolve_encoder(cache_dir=tmp_path)
    r = me_petersen(_TEXTS_A, _TEXTS_B, 1, model=enc, progress=False)
    assert r.signature.startswith(f"me_petersen|k:1|{_MODEL}|level:sentence|")
    assert len(list(tmp_path.glob("sentence-*.npz"))) == 2
    assert me_petersen(_TEXTS_A, _TEXTS_B, 1, model=enc, progress=False) == r


def test_result_protocol():
    S = np.random.default_rng(5).normal(size=(8, 2))
    r = mark_evaluate(S, S + 0.1, 2, progress=False)
    assert r.score == r.petersen.score and r.item_scores is None and r.higher_is_better
    for part in (r.petersen, r.schnabel_quality, r.schnabel_diversity, r.capture):
        assert part.item_scores is None and type(part).higher_is_better
        assert isinstance(part.score, float) and part.signature


@pytest.mark.parametrize("kwargs, err, match", [
    ({"level": "char"}, ValueError, "level must be one of 'sentence', 'word', got 'char'"),
    ({"level": "Word"}, ValueError, "level must be one of 'sentence', 'word'"),
    ({"layers": [-1]}, ValueError, r"layers=\[-1\] applies to level='word' only"),
    ({"level": "word", "layers": [99]}, ValueError, "layer 99 is out of range"),
    ({"level": "word", "layers": []}, ValueError, "layers is empty"),
    ({"level": "word", "layers": "last"}, TypeError, "layers must be None, an int"),
])
def test_word_level_bad_options(kwargs, err, match):
    for fn in (me_petersen, me_schnabel, me_capture, mark_evaluate):
        with pytest.raises(err, match=match):
            fn(_TEXTS_A, _TEXTS_B, 1, **kwargs)


def test_word_level_needs_texts():
    with pytest.raises(ValueError, match="level='word' needs S as a list of texts"):
        me_petersen(np.zeros((3, 2)), np.zeros((3, 2)), 1, level="word")
