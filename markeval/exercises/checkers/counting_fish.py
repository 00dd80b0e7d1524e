"""Checkers for the chapter "Counting fish" (10): capture-recapture estimators."""

from __future__ import annotations

from markeval.exercises import Question

__all__ = ["by_hand", "m0_loglik", "schnabel"]


def _petersen_chapman():
    from markeval.population.ecology import chapman, lincoln_petersen

    return lincoln_petersen(60, 45, 9).estimate, chapman(60, 45, 9).estimate


by_hand = Question(
    "Petersen and Chapman by hand",
    expected=_petersen_chapman,
    hints=["Petersen: M C / R with M = 60, C = 45, R = 9.",
           "Chapman: (M + 1)(C + 1) / (R + 1) − 1."],
    solution="60 · 45 / 9 = 300; 61 · 46 / 10 − 1 = 279.6",
)


def _m0_cases(rng):
    cases = []
    for _ in range(25):
        T, M = int(rng.integers(2, 10)), int(rng.integers(1, 50))
        n = int(rng.integers(M + 1, T * M + 1)) if T * M > M else M
        cases.append((int(rng.integers(M, 5 * M + 10)), T, n, M))
    return cases


def _m0_log_likelihood(N, T, n, M):
    from markeval.population.ecology import m0_log_likelihood

    return m0_log_likelihood(N, T, n, M)


m0_loglik = Question(
    "M0 profile log-likelihood", reference=_m0_log_likelihood, cases=_m0_cases,
    hints=["Use x * math.log(x) for each x ln x term; tN − n can be 0 only if n = tN."],
    solution="lgamma(N + 1) - lgamma(N - M + 1) + n * log(n) "
             "+ (T*N - n) * log(T*N - n) - T*N * log(T*N)", rtol=1e-9)


def _counts(history):
    """Per-occasion C_t, R_t, M_t from a T × N 0/1 capture matrix."""
    import numpy as np

    seen = np.zeros(history.shape[1], dtype=bool)
    C, R, M = [], [], []
    for row in history:
        C.append(int(row.sum()))
        R.append(int((row & seen).sum()))
        M.append(int(seen.sum()))
        seen |= row
    return C, R, M


def _schnabel(history):
    from markeval.population.ecology import schnabel as estimate

    captured, recaptured, marked = _counts(history)
    return estimate(marked=marked, captured=captured, recaptured=recaptured).estimate


schnabel = Question(
    "Schnabel from a capture matrix",
    reference=_schnabel,
    cases=lambda rng: [(rng.random((int(rng.integers(2, 8)), int(rng.integers(20, 80))))
                        < rng.uniform(0.05, 0.4),) for _ in range(20)],
    hints=["Keep a boolean vector `seen`; R_t = (row & seen).sum(), M_t = seen.sum() before "
           "updating it."],
    solution="see counts() in the chapter, then sum(C*M) / sum(R)",
)
