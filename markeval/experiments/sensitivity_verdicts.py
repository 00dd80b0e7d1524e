"""Verdicts for the sensitivity experiments: did each metric move as it should?

Three columns meet in every verdict table:

* ``expected`` — how an ideal metric behaves as the perturbation grows (:data:`EXPECTED`, with
  the reason in ``why``): a quality score stays flat when modes are dropped, a diversity score
  falls, and so on;
* ``observed`` — what the metric did here, computed from the mean score per step (over seeds)
  with two numbers: Kendall's τ between step and mean score (the trend's direction and
  monotonicity), and the relative change ``(mean_last − mean_first) / |mean_first|`` with the
  largest relative deviation from the first step, ``max_j |mean_j − mean_first| / |mean_first|``;
* ``paper_observed`` — what Mordido & Meinel (2020) report for the same experiment, from
  :mod:`markeval.paper_values` (with the quote in ``paper_quote``; "not stated" where their
  text says nothing about that metric, "not in the paper" for a metric published since).

A metric is *flat* when the largest relative deviation is at most ``flat_tolerance``;
*decreasing* (*increasing*) when τ ≤ −``tau_threshold`` (≥) and the relative change is below
−``flat_tolerance`` (above); otherwise *mixed*.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from markeval import registry
from markeval._checks import check_number
from markeval._tolerance import constant, negligible
from markeval.experiments.sensitivity import ESTIMATORS, summarize
from markeval.paper_values import OBSERVED_METRICS, paper_observation

_FIG = {"k_sweep": "Fig. 2 (§3)", "mode_collapse": "Fig. 3 (§4.1)", "word_swap": "Fig. 4 (§4.2)"}
# Per experiment, how an ideal score of each kind (the registry's ``measures``) moves and why.
_IDEAL = {
    "mode_collapse": {
        "quality": ("flat", "every kept sentence is as realistic as before"),
        "diversity": ("decreasing", "the dropped topics are covered by no generated sentence"),
        "both": ("decreasing", "one number that mixes quality and diversity must see the loss")},
    "word_swap": {
        "quality": ("decreasing", "shuffled sentences are less fluent"),
        "diversity": ("flat", "every topic is still covered"),
        "both": ("decreasing", "one number that mixes quality and diversity must see the loss")},
}
# The K sweep's estimators (MarkEvaluateResult's parts) -> their registry names.
_ME_NAMES = {m.part: m.name for m in registry.metrics(family="mark_evaluate")}
_KIND = {"quality": "a quality score: ", "diversity": "a diversity score: ", "both": ""}
_REVERSED = {"decreasing": "increasing", "increasing": "decreasing", "flat": "flat"}


def _rows():
    for metric in _ME_NAMES.values():
        yield "k_sweep", metric, "flat", (
            "the two sets come from one distribution: an ideal estimator finds P at every K")
    for experiment, ideal in _IDEAL.items():
        for metric in registry.names(inputs="embeddings"):
            info = registry.get(metric)
            behaviour, why = ideal[info.measures]
            if info.higher_is_better:
                yield experiment, metric, behaviour, _KIND[info.measures] + why
            else:  # a distance: worse is larger
                yield experiment, metric, _REVERSED[behaviour], f"lower is better: {why}"


#: How an ideal metric behaves as each perturbation grows (``k_sweep``: same-distribution sets,
#: K growing, ME estimators only), and why.
EXPECTED = pd.DataFrame(
    [{"experiment": e, "metric": m, "figure": _FIG[e], "expected": x, "why": w}
     for e, m, x, w in _rows()])

_BEHAVIOURS = ("decreasing", "increasing", "flat")


def classify_trend(means, *, tau_threshold: float = 0.6, flat_tolerance: float = 0.05) -> dict:
    """Classify a sequence of step means as flat, decreasing, increasing or mixed.

    Examples
    --------
    >>> classify_trend([1.0, 0.9, 0.7, 0.4])["observed"]
    'decreasing'
    >>> classify_trend([0.80, 0.81, 0.79, 0.80])["observed"]
    'flat'
    >>> classify_trend([1.0, 0.5, 1.2, 0.5])["observed"]
    'mixed'
    """
    m = np.asarray(means, dtype=float)
    if m.ndim != 1 or len(m) < 2:
        raise ValueError(f"a trend needs at least 2 step means, got {m.size}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"step means must be finite, got {m.tolist()}")
    if check_number(tau_threshold, "tau_threshold", maximum=1) <= 0:
        raise ValueError(f"tau_threshold must be in (0, 1], got {tau_threshold}")
    check_number(flat_tolerance, "flat_tolerance", minimum=0)
    # A first mean of 0 (up to rounding): absolute changes.
    scale = 1.0 if negligible(m[0], np.abs(m).max()) else abs(m[0])
    rel_change = float((m[-1] - m[0]) / scale)
    max_dev = float(np.max(np.abs(m - m[0])) / scale)
    tau = 0.0 if constant(m) else float(kendalltau(np.arange(len(m)), m).statistic)
    if max_dev <= flat_tolerance:
        observed = "flat"
    elif tau <= -tau_threshold and rel_change < -flat_tolerance:
        observed = "decreasing"
    elif tau >= tau_threshold and rel_change > flat_tolerance:
        observed = "increasing"
    else:
        observed = "mixed"
    return {"observed": observed, "kendall_tau": tau, "relative_change": rel_change,
            "max_relative_deviation": max_dev}


def _verdict_row(metric: str, means, expected: pd.Series, experiment: str, **thresholds) -> dict:
    trend = classify_trend(means, **thresholds)
    if metric in OBSERVED_METRICS:
        paper = paper_observation(experiment, metric)
        # The paper often says only "the expected behavior": spell out which one it means.
        said = (f"{expected['expected']} (as expected)" if paper.observed == "as expected"
                else paper.observed)
        quote = paper.quote
    else:  # a recent metric (MAUVE, density and coverage, Vendi): published after the paper
        said, quote = "not in the paper", ""
    return {"metric": metric, "figure": expected["figure"], "expected": expected["expected"],
            "observed": trend["observed"],
            "agrees": bool(trend["observed"] == expected["expected"]),
            "paper_observed": said,
            "kendall_tau": trend["kendall_tau"],
            "relative_change": trend["relative_change"],
            "max_relative_deviation": trend["max_relative_deviation"],
            "why": expected["why"], "paper_quote": quote}


def _expected_for(experiment: str, expected: pd.DataFrame | None) -> pd.DataFrame:
    expected = EXPECTED if expected is None else expected
    known = sorted(expected["experiment"].unique())
    if experiment not in known:
        raise ValueError(f"unknown experiment {experiment!r}; experiments are {', '.join(known)}")
    return expected[expected["experiment"] == experiment].set_index("metric")


def _ordered(rows: list[dict]) -> pd.DataFrame:
    order = {m: i for i, m in enumerate(registry.names(inputs="embeddings"))}
    out = pd.DataFrame(rows)
    return out.sort_values("metric", key=lambda s: s.map(order)).reset_index(drop=True)


def verdicts(table: pd.DataFrame, experiment: str, *, tau_threshold: float = 0.6,
             flat_tolerance: float = 0.05, expected: pd.DataFrame | None = None) -> pd.DataFrame:
    """Computed behaviour of each metric of an experiment table beside the expected one.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`~markeval.experiments.sensitivity.mode_collapse` or
        :func:`~markeval.experiments.sensitivity.word_swap` (columns ``seed``, ``step``,
        ``level``, ``metric``, ``value``).
    experiment : {"mode_collapse", "word_swap"}
    tau_threshold, flat_tolerance : float
        See the module notes.
    expected : pandas.DataFrame, optional
        Rows like :data:`EXPECTED` (default).

    Returns
    -------
    pandas.DataFrame
        One row per metric: ``metric``, ``figure``, ``expected``, ``observed``, ``agrees``,
        ``paper_observed``, ``kendall_tau``, ``relative_change``,
        ``max_relative_deviation``, ``why``, ``paper_quote``.

    Examples
    --------
    >>> t = pd.DataFrame({"seed": 0, "step": [0, 1, 2, 0, 1, 2], "level": [5, 4, 3] * 2,
    ...                   "metric": ["ipr_precision"] * 3 + ["ipr_recall"] * 3,
    ...                   "value": [0.9, 0.91, 0.9, 0.8, 0.6, 0.3]})
    >>> verdicts(t, "mode_collapse")[["metric", "expected", "observed", "agrees"]]
              metric    expected    observed  agrees
    0  ipr_precision        flat        flat    True
    1     ipr_recall  decreasing  decreasing    True
    """
    if experiment == "k_sweep":
        raise ValueError("unknown experiment 'k_sweep' for verdicts(); experiments are "
                         "mode_collapse, word_swap (the K sweep has k_sweep_verdicts)")
    exp = _expected_for(experiment, expected)
    summary = summarize(table)
    rows = []
    for metric in summary["metric"].unique():
        if metric not in exp.index:
            raise ValueError(f"unknown metric {metric!r} for {experiment}; metrics are "
                             f"{', '.join(exp.index)}")
        means = summary[summary["metric"] == metric].sort_values("step")["mean"]
        rows.append(_verdict_row(metric, means, exp.loc[metric], experiment,
                                 tau_threshold=tau_threshold, flat_tolerance=flat_tolerance))
    return _ordered(rows)


def k_sweep_verdicts(table: pd.DataFrame, *, tau_threshold: float = 0.6,
                     flat_tolerance: float = 0.05) -> pd.DataFrame:
    """Verdicts of the K sweep: how each ME score moves as K grows, on same-distribution sets.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`~markeval.experiments.sensitivity.k_sweep` (columns ``k``,
        ``estimator``, ``score``).
    tau_threshold, flat_tolerance : float
        See the module notes.

    Returns
    -------
    pandas.DataFrame
        As :func:`verdicts`, one row per ME score (``me_petersen``, ``me_schnabel_quality``,
        ``me_schnabel_diversity``, ``me_capture``).

    Examples
    --------
    >>> t = pd.DataFrame({"k": [1, 2, 3] * 2, "estimator": ["petersen"] * 3 + ["capture"] * 3,
    ...                   "score": [0.6, 0.8, 0.95, 0.99, 1.0, 1.0]})
    >>> k_sweep_verdicts(t)[["metric", "expected", "observed", "paper_observed"]]
            metric expected    observed paper_observed
    0  me_petersen     flat  increasing     increasing
    1   me_capture     flat        flat     increasing
    """
    exp = _expected_for("k_sweep", None)
    rows = []
    for name in ESTIMATORS:
        part = table[table["estimator"] == name].sort_values("k")
        if len(part):
            rows.append(_verdict_row(_ME_NAMES[name], part["score"], exp.loc[_ME_NAMES[name]],
                                     "k_sweep", tau_threshold=tau_threshold,
                                     flat_tolerance=flat_tolerance))
    return _ordered(rows)


__all__ = ["EXPECTED", "classify_trend", "k_sweep_verdicts", "verdicts"]
