"""Run independent experiment units in parallel: all cores here, or a cluster's workers.

A long experiment is thousands of independent *units*: one topic's summaries against its
references, one perturbation level under one seed, one value of K. :func:`run_units` runs a
module-level function over such units through joblib and returns the results in unit order,
identical to a serial run (each unit is computed by the same code on the same arrays; nothing
depends on which worker ran it or when).

* **Here** (the default): joblib's process pool (loky), one worker per core, each worker's
  BLAS limited to one thread (two workers with two BLAS threads each would fight over two
  cores). Workers receive arrays, never models: encode first, in the calling process, then fan
  out. Arrays above 1 MB reach the workers memory-mapped, not copied.
* **On a cluster**: wrap the same call in joblib's backend setting, and the units go to the
  cluster's workers instead, e.g. with Dask (``pip install "dask[distributed]"``)::

      from dask.distributed import Client
      import joblib
      client = Client("tcp://scheduler:8786")      # or Client() for a local cluster
      with joblib.parallel_config(backend="dask"):
          scores = set_scores(items, metrics)       # any function that takes n_jobs

  Ray works the same way (``from ray.util.joblib import register_ray; register_ray()``, then
  ``backend="ray"``).

  Start Dask's workers with :data:`DASK_WORKER_ENV` as their environment
  (``dask.config.set({"distributed.nanny.pre-spawn-environ": DASK_WORKER_ENV})`` before the
  cluster starts, or the same key in the cluster's configuration): Dask's default adds
  ``MALLOC_TRIM_THRESHOLD_=65536``, which returns every freed block above 64 KiB to the
  system, and made these units (k-means and k-NN on NumPy temporaries) 4.5 times slower.

``n_jobs=1`` runs in the calling process without joblib (the reference for the tests that
require parallel and serial results to be identical). A progress bar counts finished units.
Ctrl-C stops the workers and raises ``KeyboardInterrupt`` in the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from markeval._checks import check_bool, check_int

__all__ = ["DASK_WORKER_ENV", "resolve_n_jobs", "run_units"]

#: Environment for Dask workers: one BLAS/OpenMP thread each (as Dask's default), without its
#: ``MALLOC_TRIM_THRESHOLD_`` (measured here: 2.3 s per unit without it, 10.6 s with it).
DASK_WORKER_ENV = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}


def resolve_n_jobs(n_jobs) -> int | None:
    """Check ``n_jobs``: None (all cores, or every worker of an active cluster) or an int ≥ 1.

    Examples
    --------
    >>> resolve_n_jobs(2), resolve_n_jobs(None)
    (2, None)
    >>> resolve_n_jobs(0)
    Traceback (most recent call last):
    ...
    ValueError: n_jobs must be a positive int, got 0
    """
    return None if n_jobs is None else check_int(n_jobs, "n_jobs", minimum=1)


def run_units(function: Callable, units: Iterable, *, n_jobs: int | None = None,
              progress: bool = True, desc: str = "units", total: int | None = None) -> list:
    """``[function(*unit) for unit in units]``, the units spread over processes or a cluster.

    Parameters
    ----------
    function : callable
        A module-level function (workers import it by name), called as ``function(*unit)``.
    units : iterable of tuple
        The arguments of each call. May be a generator: units are then produced one by one as
        workers become free (a few ahead), so that, e.g., the embeddings of unit 100 are not
        computed (and held) while unit 1 runs.
    n_jobs : int or None, default None
        Worker processes; None = one per core (or all workers of an active joblib backend
        such as Dask). 1 = run here, serially, without joblib.
    progress : bool, default True
        A tqdm bar on stderr counting finished units.
    desc : str
        The bar's label.
    total : int, optional
        Number of units, for the bar when ``units`` has no ``len``.

    Returns
    -------
    list
        The results in the order of ``units``.

    Examples
    --------
    >>> import operator
    >>> run_units(operator.add, [(1, 2), (3, 4), (5, 6)], n_jobs=2)
    [3, 7, 11]
    >>> run_units(operator.add, [(1, 2), (3, 4), (5, 6)], n_jobs=1)
    [3, 7, 11]
    """
    from tqdm import tqdm

    if not callable(function):
        raise TypeError(f"function must be callable, got {type(function).__name__}")
    n_jobs = resolve_n_jobs(n_jobs)
    progress = check_bool(progress, "progress")
    if total is None and hasattr(units, "__len__"):
        total = len(units)
    with tqdm(total=total, desc=desc, unit="unit", disable=not progress) as bar:
        if n_jobs == 1:
            out = []
            for unit in units:
                out.append(function(*unit))
                bar.update()
            return out
        failed: list[Exception] = []
        parallel, delayed = _joblib(n_jobs)
        results = parallel(delayed(function)(*unit) for unit in _until_error(units, failed))
        out = []
        try:
            for result in results:
                out.append(result)
                bar.update()
        finally:
            results.close()  # on Ctrl-C or an error: cancel what is queued, stop the workers
        if failed:
            raise failed[0]
        return out


def _leave_ctrl_c_to_the_caller() -> None:
    """Workers ignore Ctrl-C, which a terminal sends to every process of the group: a worker
    interrupted while it waits on the task queue dies holding the queue's lock (loky then
    warns at exit about a leaked semaphore). The caller alone stops, and stops the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _quiet_killed_worker_reports() -> None:
    """On Ctrl-C (or an error) :func:`run_units` kills the workers mid-unit. loky's resource
    tracker, a process of its own, may then report a killed worker's semaphore as leaked and
    fail to remove it because it is already gone (``FileNotFoundError``): noise printed after
    the caller's own message. The tracker takes its warning filters from this process's ``-W``
    options, so this filter, in place before the first pool starts it, silences just those
    reports."""
    import sys

    option = "ignore:resource_tracker:UserWarning"
    if option not in sys.warnoptions:
        sys.warnoptions.append(option)


def _until_error(units: Iterable, failed: list) -> Iterable:
    """The units, ending at the first one that cannot be made (its error goes in ``failed``).

    Making a unit may run user code (an encoder, a perturbation); an exception raised while
    joblib pulls units would abort its pool mid-dispatch. Ending the stream instead lets the
    units already sent finish; the caller then raises the error.
    """
    iterator = iter(units)
    while True:
        try:
            unit = next(iterator)
        except StopIteration:
            return
        except Exception as err:  # noqa: BLE001 - re-raised by run_units
            failed.append(err)
            return
        yield unit


def _joblib(n_jobs: int | None):
    """A joblib ``Parallel`` yielding results in order, and joblib's ``delayed``.

    Loky with one BLAS thread per worker, unless the caller chose another backend (a cluster)
    with ``joblib.parallel_config``. Imported here so that ``import markeval`` stays light.
    """
    import joblib
    from joblib._parallel_backends import LokyBackend
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    if isinstance(backend, LokyBackend):  # joblib's default: our process pool
        _quiet_killed_worker_reports()
        pool = LokyBackend(inner_max_num_threads=1, initializer=_leave_ctrl_c_to_the_caller)
        parallel = joblib.Parallel(n_jobs=n_jobs or joblib.cpu_count(), backend=pool,
                                   return_as="generator")
    else:
        parallel = joblib.Parallel(n_jobs=n_jobs or -1, return_as="generator")
    return parallel, joblib.delayed
