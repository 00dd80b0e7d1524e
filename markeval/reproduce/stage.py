"""What a reproduction stage is: settings per profile, units of work, rows, paper comparisons.

A stage reproduces one experiment (one or more paper tables). Its work is split into *units* —
a TAC topic, a WMT17 language pair, one step of a sweep — so that an interrupted run resumes
where it stopped (:mod:`markeval.reproduce.store`) and a test can recompute one unit and find
it equal to the committed rows. Every unit returns tidy rows (a :class:`pandas.DataFrame`);
everything a chapter shows is derived from the rows of all units by the stage's functions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from markeval._checks import check_choice
from markeval.profile import PROFILES

__all__ = ["COMPARISON_COLUMNS", "Stage", "no_comparison", "settings_key"]

#: The columns of ``paper_comparison.csv``, in order (``profile`` is added by the runner).
COMPARISON_COLUMNS = ("paper", "table", "row", "column", "paper_value", "our_value", "profile",
                      "setting")



def no_comparison(rows: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """A stage's ``compare`` when the papers print no number for it (figures only, or metrics
    published since): no line of ``paper_comparison.csv``."""
    return pd.DataFrame(columns=[c for c in COMPARISON_COLUMNS if c != "profile"])


@dataclass(frozen=True)
class Stage:
    """One experiment of the reproduction.

    Attributes
    ----------
    name : str
        The result file's stem: the rows go to ``<results folder>/<name>.csv``.
    title : str
        What it reproduces, for the progress bar and the provenance file.
    settings : callable
        ``settings(profile) -> dict`` of JSON values: sizes, K, layers, encoder. Everything a
        unit's numbers depend on besides the code; the unit cache is keyed by it.
    units : callable
        ``units(settings) -> sequence of str``: the unit keys, in a stable order.
    compute : callable
        ``compute(unit, settings) -> DataFrame``: the unit's tidy rows. Pure given the
        settings (seeded), so recomputing a unit gives the committed rows again.
    compare : callable
        ``compare(rows, settings) -> DataFrame`` with the columns of
        :data:`COMPARISON_COLUMNS` but ``profile``: one row per number the book sets beside a
        paper's (see :func:`comparison_row`). ``rows`` are every unit's rows of one profile.
    check_units : callable
        ``check_units(settings) -> sequence of str``: the units the consistency test
        recomputes in that profile; cheap ones (seconds), chosen to cover every code path.
    check_narrowing : callable
        ``check_narrowing(settings) -> dict``: settings to override when the consistency test
        recomputes a check unit, for a unit CI cannot afford whole. Under them the unit must
        compute a subset of its own rows, each identical to the committed one (one seed of
        ten, one point of a grid); :func:`markeval.reproduce.results.check_slice` then matches
        the recomputed rows to the committed ones by their naming columns. ``{}`` (the
        default): the whole unit.
    row_format : int
        The version of the rows' columns, raised whenever ``compute`` names its numbers
        differently (new columns, renamed metrics): it is part of the unit cache key, so that
        no cached unit comes back in the old columns. Left at 1 it adds nothing to the key,
        and the caches of stages never reformatted keep their folders.
    tolerance : float
        Largest absolute difference allowed between a recomputed result and the committed
        one. 1e-9 (the precision of the result files) for arithmetic on counts such as
        ROUGE; an encoder's float32 vectors differ in the last bits between CPUs and BLAS
        builds, and a k-NN metric turns a neighbour swapped by such a difference into a step
        of 1/n, so stages that encode set a tolerance that covers one such step, saying why.
    selection : tuple of str
        Settings that only choose *which* units exist (the pairs, the sample sizes and draws),
        not what any unit computes. They are left out of the unit cache key, so that adding
        a sample size reuses every finished unit.
    parallel : bool
        Units are self-contained (each builds, or reads from the disk cache, everything it
        needs), so several may run at once in worker processes
        (:func:`markeval.reproduce.run.compute_units` with ``n_jobs``).
    prepare : callable, optional
        ``prepare(settings)``: computes the inputs every unit shares into the disk cache, once,
        before units go to worker processes (which would otherwise each compute them: the
        generator ladder's 12,000 sentences, say). It changes no number.
    cost : callable, optional
        ``cost(unit, settings) -> float``: a relative estimate of a unit's compute time. The
        missing units of a parallel stage are dispatched costliest first, so that a long unit
        does not start last and run alone (longest-processing-time scheduling). It changes no
        number: the rows are assembled in unit order.
    """

    name: str
    title: str
    settings: Callable[[str], dict]
    units: Callable[[dict], Sequence[str]]
    compute: Callable[[str, dict], pd.DataFrame]
    compare: Callable[[pd.DataFrame, dict], pd.DataFrame]
    check_units: Callable[[dict], Sequence[str]] = field(default=lambda settings: ())
    check_narrowing: Callable[[dict], dict] = field(default=lambda settings: {})
    row_format: int = 1
    tolerance: float = 1e-9
    selection: tuple[str, ...] = ()
    parallel: bool = False
    prepare: Callable[[dict], None] | None = None
    cost: Callable[[str, dict], float] | None = None

    def settings_for(self, profile: str) -> dict:
        """The settings of ``profile`` (``'ci'`` or ``'full'``), checked to be JSON values."""
        settings = self.settings(check_choice(profile, "profile", PROFILES))
        json.dumps(settings)  # a unit cache key must be plain data
        return settings


def settings_key(stage: Stage, settings: dict) -> str:
    """A short stable hash of a stage's name and settings: the folder of its cached units.

    The stage's :attr:`~Stage.selection` settings are left out: they choose units, and a unit
    computes the same rows whichever others are chosen beside it.

    Examples
    --------
    >>> s = Stage("demo", "demo", lambda p: {"n": 3}, lambda s: ["a"], None, None,
    ...           selection=("sizes",))
    >>> settings_key(s, {"n": 3}) == settings_key(s, {"n": 3}) != settings_key(s, {"n": 4})
    True
    >>> settings_key(s, {"n": 3, "sizes": [25]}) == settings_key(s, {"n": 3, "sizes": [25, 50]})
    True
    >>> v2 = Stage("demo", "demo", lambda p: {"n": 3}, lambda s: ["a"], None, None, row_format=2)
    >>> settings_key(v2, {"n": 3}) != settings_key(s, {"n": 3})
    True
    """
    kept = {key: value for key, value in settings.items() if key not in stage.selection}
    key = {"stage": stage.name, "settings": kept}
    if stage.row_format != 1:
        key["row_format"] = stage.row_format
    text = json.dumps(key, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
