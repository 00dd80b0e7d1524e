"""Parallel experiment units: identical to the serial run, in processes and on a Dask cluster."""

from __future__ import annotations

import operator
import os

import numpy as np
import pandas as pd
import pytest

from markeval.experiments.parallel import DASK_WORKER_ENV, run_units
from markeval.experiments.ranking import ForwardCE, score_generators
from markeval.experiments.sensitivity import k_sweep, mode_collapse, perturbation_sweep
from markeval.experiments.summarization import SummaryItem, set_scores
from markeval.experiments.word_set_metrics import WordSetMetrics


def _fail_on_three(x):
    if x == 3:
        raise ValueError(f"unit {x} failed")
    return x


def test_run_units_keeps_order_and_counts(capsys):
    units = [(i, i * i) for i in range(20)]
    serial = run_units(operator.add, units, n_jobs=1)
    assert serial == [i + i * i for i in range(20)]
    assert run_units(operator.add, units, n_jobs=2, progress=True, desc="adding") == serial
    bar = capsys.readouterr().err
    assert "adding: 100%" in bar and "20/20" in bar  # the bar counted every finished unit
    assert run_units(operator.add, iter(units), n_jobs=2, total=20) == serial  # a generator
    assert run_units(operator.add, [], n_jobs=2) == []


def test_a_failing_unit_raises_its_own_error():
    with pytest.raises(ValueError, match="unit 3 failed"):
        run_units(_fail_on_three, [(i,) for i in range(8)], n_jobs=2)


@pytest.mark.parametrize("n_jobs, error, message", [
    (0, ValueError, "n_jobs must be a positive int, got 0"),
    (-1, ValueError, "n_jobs must be a positive int, got -1"),
    (2.0, TypeError, "n_jobs must be an int, got float"),
    (True, TypeError, "n_jobs must be an int, got bool"),
])
def test_bad_n_jobs_is_refused_by_name(n_jobs, error, message):
    with pytest.raises(error, match=message):
        run_units(operator.add, [(1, 2)], n_jobs=n_jobs)


# --------------------------------------------------------------------------- the experiments

def _topics(n_topics=4, seed=0):
    """Fabricated summaries: words are points in 3-D; one empty summary (too short)."""
    rng = np.random.default_rng(seed)
    vocab = {f"w{i}": rng.normal(size=3) for i in range(200)}
    words = list(vocab)
    items = []
    for t in range(n_topics):
        refs = tuple(" ".join(rng.choice(words, 30)) for _ in range(4))
        for s in range(10):  # a topic is more than one unit (8 summaries)
            text = "" if (t, s) == (1, 2) else " ".join(rng.choice(words, 25 + s))
            items.append(SummaryItem(f"T{t}", str(s), False, text, refs, rng.random(), 3.0))
    return items, (lambda texts: np.array([vocab[w] for t in texts for w in t.split()]
                                          ).reshape(-1, 3))


def test_set_scores_in_parallel_equal_the_serial_scores():
    items, embed = _topics()
    serial_metric = WordSetMetrics(embed, ks=(1, 3), prd_clusters=5, prd_runs=1)
    serial = set_scores(items, serial_metric, n_jobs=1)
    parallel_metric = WordSetMetrics(embed, ks=(1, 3), prd_clusters=5, prd_runs=1)
    parallel = set_scores(items, parallel_metric, n_jobs=2, progress=True)
    assert list(parallel) == list(serial) == serial_metric.names
    for name in serial:
        np.testing.assert_array_equal(parallel[name], serial[name], err_msg=name)
    assert serial_metric.n_too_short == parallel_metric.n_too_short == 1
    assert serial[("me_petersen", 1)][12] == 0.0  # the empty summary


def test_sweeps_in_parallel_equal_the_serial_sweeps():
    rng = np.random.default_rng(1)
    centres = np.repeat(np.eye(3) * 8, 40, axis=0)
    pool = centres + rng.normal(size=centres.shape)
    labels = np.repeat(["x", "y", "z"], 40)
    ref = np.repeat(np.eye(3) * 8, 10, axis=0) + rng.normal(size=(30, 3))
    metrics = ("prd_precision", "ipr_recall", "me_petersen", "me_schnabel_diversity", "fid")
    a, b = (mode_collapse(ref, pool, labels, n=30, seeds=[0, 1], metrics=metrics, prd_runs=2,
                          progress=False, n_jobs=n) for n in (1, 2))
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    a, b = (k_sweep(ref, pool[:30], ks=[1, 2, 5], progress=False, n_jobs=n) for n in (1, 2))
    pd.testing.assert_frame_equal(a, b, check_exact=True)

    def noisy(sigma, seed):
        return ref + np.random.default_rng(seed).normal(scale=sigma, size=ref.shape)
    a, b = (perturbation_sweep(ref, noisy, [0.0, 1.0, 2.0], seeds=[0, 1], metrics=metrics,
                               progress=False, n_jobs=n) for n in (1, 2))
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_an_error_while_making_a_candidate_reaches_the_caller():
    ref = np.random.default_rng(0).normal(size=(20, 3))

    def broken(level, seed):
        if level == 2:
            raise ValueError("level 2 cannot be made")
        return ref + level

    with pytest.raises(ValueError, match="level 2 cannot be made"):
        perturbation_sweep(ref, broken, [0, 1, 2, 3], seeds=[0], metrics=["ipr_recall"],
                           progress=False, n_jobs=2)


def test_generator_scores_in_parallel_equal_the_serial_scores():
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(30)]
    reference = [" ".join(rng.choice(words, 6)) for _ in range(40)]
    generated = {g: [" ".join(rng.choice(words[: 10 + 5 * i], 6)) for _ in range(40)]
                 for i, g in enumerate(("narrow", "middle", "wide"))}
    embeddings = {g: rng.normal(size=(40, 4)) + i for i, g in enumerate(generated)}
    ce, reference_embeddings = ForwardCE(reference * 2, order=2), rng.normal(size=(40, 4))
    a, b = (score_generators(generated, embeddings, reference, reference_embeddings, ce,
                             rounds=2, prd_runs=1, n_jobs=n) for n in (1, 2))
    pd.testing.assert_frame_equal(a, b, check_exact=True)


# --------------------------------------------------------------------------- a Dask cluster

def test_the_same_units_on_a_local_dask_cluster():
    distributed = pytest.importorskip("distributed")
    import dask
    import joblib

    items, embed = _topics(n_topics=3, seed=4)
    serial = set_scores(items, WordSetMetrics(embed, ks=(2,), prd_clusters=5, prd_runs=1),
                        n_jobs=1)
    # Two worker processes on loopback, no dashboard: nothing leaves this machine.
    with dask.config.set({"distributed.nanny.pre-spawn-environ": DASK_WORKER_ENV}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster, timeout="60s") as client, \
            joblib.parallel_config(backend="dask"):
        on_cluster = set_scores(items, WordSetMetrics(embed, ks=(2,), prd_clusters=5,
                                                      prd_runs=1))
        environ = client.run(lambda: {k: os.environ.get(k) for k in ("MALLOC_TRIM_THRESHOLD_",
                                                                     "OPENBLAS_NUM_THREADS")})
    assert list(environ.values()) == [{"MALLOC_TRIM_THRESHOLD_": None,
                                       "OPENBLAS_NUM_THREADS": "1"}] * 2  # two workers
    for name in serial:
        np.testing.assert_array_equal(on_cluster[name], serial[name], err_msg=name)


_SLOW_UNITS = """
import pathlib, sys, time
from markeval.experiments.parallel import run_units
def slow(i, started):
    (pathlib.Path(started) / str(i)).touch()
    time.sleep(30)
    return i
if __name__ == "__main__":
    try:
        run_units(slow, [(i, sys.argv[1]) for i in range(8)], n_jobs=2)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
"""


def test_ctrl_c_stops_the_workers_at_once(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "slow.py"
    script.write_text(_SLOW_UNITS)
    started = tmp_path / "started"
    started.mkdir()
    run = subprocess.Popen([sys.executable, str(script), str(started)], stdout=subprocess.PIPE,
                           text=True)
    # Wait until both workers are inside a 30-second unit (not a fixed sleep: on a loaded
    # machine the pool took longer than 5 s to start, and the test timed out).
    deadline = time.monotonic() + 120
    while len(list(started.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(list(started.iterdir())) >= 2, "the workers never started their units"
    run.send_signal(signal.SIGINT)
    start = time.perf_counter()
    out, _ = run.communicate(timeout=25)  # far less than the units' 30 s
    assert (out.strip(), run.returncode) == ("interrupted", 130)
    assert time.perf_counter() - start < 20
