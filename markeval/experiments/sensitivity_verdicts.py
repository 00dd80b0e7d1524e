"""Verdicts for the sensitivity experiments: did each metric move as expected?

The expectations are typed as data (:data:`EXPECTED`), each with the figure of Mordido & Meinel
(2020) it belongs to and where the expectation comes from. The verdict is computed from the
mean score per step (over seeds) with two numbers:

* Kendall's τ between step and mean score (the trend's direction and monotonicity);
* the relative change ``(mean_last − mean_first) / |mean_first|`` and the largest relative
  deviation from the first step, ``max_j |mean_j − mean_first| / |mean_first|``.

A metric is *flat* when the largest relative deviation is at most ``flat_tolerance``;
*decreasing* (*increasing*) when τ ≤ −``tau_threshold`` (≥) and the relative change is below
−``flat_tolerance`` (above); otherwise *mixed*.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from markeval._tolerance import constant, negligible
from markeval.experiments.sensitivity import METRICS, summarize

_FIG = {"mode_collapse": "Fig. 3 (§4)", "word_swap": "Fig. 4 (§4)"}
_ISSUE = "expected by issue #9"


def _rows():
    mc = {
        "fid": ("increasing", f"{_ISSUE}: single-valued scores get worse (FID is a distance, "
                              "so worse = larger)"),
        "prd_precision": ("flat", f"{_ISSUE}: quality-type scores flat; the issue reports that "
                                  "the paper found PRD precision dropping"),
        "prd_recall": ("decreasing", f"{_ISSUE}: diversity-type scores fall"),
        "ipr_precision": ("flat", f"{_ISSUE}: quality-type scores flat"),
        "ipr_recall": ("decreasing", f"{_ISSUE}: diversity-type scores fall"),
        "me_schnabel_quality": ("flat", f"{_ISSUE}: ME quality flat"),
        "me_schnabel_diversity": ("decreasing", f"{_ISSUE}: ME diversity falls"),
        "me_petersen": ("decreasing", f"{_ISSUE}: single-valued scores fall"),
        "me_capture": ("decreasing", f"{_ISSUE}: single-valued scores fall"),
    }
    ws = {
        "fid": ("increasing", f"{_ISSUE}: single-valued scores get worse (FID grows)"),
        "prd_precision": ("decreasing", f"{_ISSUE}: quality-type scores fall"),
        "prd_recall": ("flat", f"{_ISSUE}: diversity-type scores flat"),
        "ipr_precision": ("decreasing", f"{_ISSUE}: quality-type scores fall"),
        "ipr_recall": ("flat", f"{_ISSUE}: diversity-type scores flat"),
        "me_schnabel_quality": ("decreasing", f"{_ISSUE}: ME quality falls"),
        "me_schnabel_diversity": ("flat", f"{_ISSUE}: ME diversity flat"),
        "me_petersen": ("decreasing", f"{_ISSUE}: single-valued scores fall"),
        "me_capture": ("decreasing", f"{_ISSUE}: single-valued scores fall"),
    }
    for experiment, table in (("mode_collapse", mc), ("word_swap", ws)):
        for metric in METRICS:
            expected, description = table[metric]
            yield {"experiment": experiment, "metric": metric, "figure": _FIG[experiment],
                   "expected": expected, "paper": description}


#: Expected behaviour of each metric as the perturbation grows, per experiment.
EXPECTED = pd.DataFrame(list(_rows()))

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
    if not 0 < tau_threshold <= 1:
        raise ValueError(f"tau_threshold must be in (0, 1], got {tau_threshold}")
    if flat_tolerance < 0:
        raise ValueError(f"flat_tolerance must be >= 0, got {flat_tolerance}")
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
        ``kendall_tau``, ``relative_change``, ``max_relative_deviation``, ``paper``.

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
    expected = EXPECTED if expected is None else expected
    known = sorted(expected["experiment"].unique())
    if experiment not in known:
        raise ValueError(f"unknown experiment {experiment!r}; experiments are {', '.join(known)}")
    exp = expected[expected["experiment"] == experiment].set_index("metric")
    summary = summarize(table)
    rows = []
    for metric in summary["metric"].unique():
        if metric not in exp.index:
            raise ValueError(f"unknown metric {metric!r} for {experiment}; metrics are "
                             f"{', '.join(exp.index)}")
        means = summary[summary["metric"] == metric].sort_values("step")["mean"]
        trend = classify_trend(means, tau_threshold=tau_threshold, flat_tolerance=flat_tolerance)
        e = exp.loc[metric]
        rows.append({"metric": metric, "figure": e["figure"], "expected": e["expected"],
                     "observed": trend["observed"],
                     "agrees": bool(trend["observed"] == e["expected"]),
                     "kendall_tau": trend["kendall_tau"],
                     "relative_change": trend["relative_change"],
                     "max_relative_deviation": trend["max_relative_deviation"],
                     "paper": e["paper"]})
    order = {m: i for i, m in enumerate(METRICS)}
    out = pd.DataFrame(rows)
    return out.sort_values("metric", key=lambda s: s.map(order)).reset_index(drop=True)


__all__ = ["EXPECTED", "classify_trend", "verdicts"]
