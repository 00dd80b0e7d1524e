"""The committed full-scale results, for chapters and users: find, read, check against the code.

Chapters show the rows ``make reproduce`` committed and recompute a slice of them live
(:func:`check_slice`). The results ship inside the package (:data:`PACKAGE_RESULTS`, the
repository's ``markeval/results``), so a chapter finds them wherever markeval is installed,
Colab included, with nothing to download; ``$MARKEVAL_RESULTS`` points the chapters (and
``python -m markeval.reproduce``) at another results folder instead.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from markeval._checks import check_choice
from markeval.experiments.vocabulary import LONG_COLUMNS
from markeval.reproduce.run import compute_units, read_rows
from markeval.reproduce.stages import get_stage

__all__ = ["BENCHMARK_FILES", "PACKAGE_RESULTS", "GluedMarkdown", "benchmark_rows",
           "check_slice", "encoder_gaps", "load_comparison", "load_provenance", "load_rows",
           "provenance_box", "provenance_summary", "results_dir", "shown_profile"]

#: The committed results, shipped as package data: each stage's rows, ``paper_comparison.csv``,
#: ``provenance.json``, ``timings.csv``, and the benchmark scripts' rows in ``benchmarks/``.
PACKAGE_RESULTS = Path(__file__).resolve().parents[1] / "results"
#: The benchmark results a chapter reads (:func:`benchmark_rows`).
BENCHMARK_FILES = ("mark_evaluate_scale", "mauve_scale", "neighbour_agreement", "word_curve_exact")


def results_dir() -> Path:
    """The results folder the chapters read: ``$MARKEVAL_RESULTS`` when set, else the
    results shipped with the package (:data:`PACKAGE_RESULTS`).

    Examples
    --------
    >>> import os
    >>> results_dir() == (Path(os.environ["MARKEVAL_RESULTS"]).expanduser()
    ...                   if os.environ.get("MARKEVAL_RESULTS") else PACKAGE_RESULTS)
    True
    """
    env = os.environ.get("MARKEVAL_RESULTS")
    return Path(env).expanduser() if env else PACKAGE_RESULTS


def benchmark_rows(name: str) -> pd.DataFrame:
    """The committed rows of a benchmark script, shipped as ``<PACKAGE_RESULTS>/benchmarks/
    <name>.csv`` (the scripts in the repository's ``benchmarks/`` write them there).

    Parameters
    ----------
    name : str
        One of :data:`BENCHMARK_FILES`.
    """
    check_choice(name, "name", BENCHMARK_FILES)
    return pd.read_csv(PACKAGE_RESULTS / "benchmarks" / f"{name}.csv")


def load_rows(stage: str, profile: str = "full") -> pd.DataFrame:
    """The committed rows of ``stage`` in ``profile``; raises if that profile was never run."""
    rows = read_rows(results_dir(), get_stage(stage).name)
    rows = rows[rows["profile"] == profile].reset_index(drop=True)
    if rows.empty:
        raise LookupError(f"no committed {profile!r} rows for stage {stage!r}: "
                          f"run `python -m markeval.reproduce --stage {stage} --profile {profile}`")
    return rows


def shown_profile(*stages: str) -> str:
    """``'full'`` when every one of ``stages`` has committed full rows, else ``'ci'``.

    Chapters show the full run and fall back, saying so, to the small one while a stage's full
    run is not committed yet (a long run is committed when it has finished, never in part).
    """
    folder = results_dir()
    complete = all("full" in set(read_rows(folder, get_stage(s).name)["profile"]) for s in stages)
    return "full" if complete else "ci"


def load_comparison(paper: str | None = None, table: str | None = None,
                    profile: str = "full") -> pd.DataFrame:
    """``paper_comparison.csv``, optionally one paper's table, in one profile."""
    frame = pd.read_csv(results_dir() / "paper_comparison.csv", keep_default_na=False,
                        na_values=[""])
    keep = frame["profile"] == profile
    if paper is not None:
        keep &= frame["paper"] == paper
    if table is not None:
        keep &= frame["table"] == table
    return frame[keep].reset_index(drop=True)


def encoder_gaps(comparison: pd.DataFrame) -> pd.DataFrame:
    """How far each encoder's numbers are from the paper's, per paper table.

    Parameters
    ----------
    comparison : DataFrame
        Lines of ``paper_comparison.csv`` (:func:`load_comparison`). The encoder is the first
        word of ``setting`` (``"all-MiniLM-L6-v2; ..."``); lines without one (ROUGE, BLEU)
        are left out.

    Returns
    -------
    DataFrame
        One row per (paper, table, encoder, protocol): ``lines``, ``mean |gap|`` (mean
        absolute difference, ours minus the paper's, over the lines with a number on both
        sides) and ``mean gap`` (signed: below zero, ours are lower). ``protocol`` is what the
        setting names after ``protocol:`` (``pooled``, ``per segment``), else empty.

    Examples
    --------
    >>> lines = pd.DataFrame({"paper": "MoverScore", "table": "Table 1",
    ...     "paper_value": [0.5, 0.5, 0.5], "our_value": [0.3, 0.45, 0.7],
    ...     "setting": ["all-MiniLM-L6-v2; x", "all-mpnet-base-v2; x", "ROUGE; recall"]})
    >>> encoder_gaps(lines)[["encoder", "lines", "mean |gap|"]].round(2).values.tolist()
    [['all-MiniLM-L6-v2', 1, 0.2], ['all-mpnet-base-v2', 1, 0.05]]
    """
    encoder = comparison["setting"].str.extract(r"^(all-[A-Za-z0-9.-]+)", expand=False)
    protocol = comparison["setting"].str.extract(r"protocol: ([a-z ]+?)[,;]", expand=False)
    lines = comparison.assign(encoder=encoder, protocol=protocol.fillna(""),
                              gap=comparison["our_value"] - comparison["paper_value"]
                              ).dropna(subset=["encoder", "gap"])
    grouped = lines.groupby(["paper", "table", "encoder", "protocol"])["gap"]
    return pd.DataFrame({"lines": grouped.size(), "mean |gap|": grouped.apply(
        lambda gap: gap.abs().mean()), "mean gap": grouped.mean()}).reset_index()


def load_provenance(stage: str, profile: str = "full") -> dict:
    """Settings, commit, command, machine and times of the committed run of ``stage``."""
    provenance = json.loads((results_dir() / "provenance.json").read_text())
    try:
        return provenance[stage][profile]
    except KeyError:
        raise LookupError(f"no provenance for stage {stage!r} in profile {profile!r}") from None


def check_slice(stage: str, profile: str = "ci", units=None, *,
                progress: bool = False) -> pd.DataFrame:
    """Recompute some units of ``stage`` now and set them beside the committed rows.

    Parameters
    ----------
    stage : str
    profile : {'ci', 'full'}, default 'ci'
    units : sequence of str, optional
        Default: the stage's ``check_units`` for that profile.

    Returns
    -------
    DataFrame
        One row per recomputed number: ``unit``, the row's identifying columns, ``column``,
        ``committed``, ``recomputed`` and ``equal`` (within the stage's ``tolerance``,
        absolute, plus the rounding of the committed files to 12 significant digits). Raises
        if a committed row is missing or an extra one appears. Where the stage narrows its
        check units (:attr:`~markeval.reproduce.stage.Stage.check_narrowing`), the units are
        recomputed under the narrowed settings and each recomputed row is set beside the
        committed row of the same name; raises if one has none.
    """
    definition = get_stage(stage)
    settings = definition.settings_for(profile)
    units = list(definition.check_units(settings) if units is None else units)
    if not units:
        raise ValueError(f"stage {stage!r} names no units to check in profile {profile!r}")
    narrowing = definition.check_narrowing(settings)
    fresh, _, _ = compute_units(definition, profile, units, progress=progress,
                                overrides=narrowing)
    if fresh.empty:  # a check of nothing would pass
        raise AssertionError(f"stage {stage!r}, units {units}: no rows recomputed "
                             f"(narrowed by {narrowing})")
    committed = load_rows(stage, profile)
    committed = committed[committed["unit"].isin(units)].reset_index(drop=True)
    if list(committed.columns) != list(fresh.columns) or (
            not narrowing and len(committed) != len(fresh)):
        raise AssertionError(
            f"stage {stage!r}, units {units}: {len(fresh)} recomputed rows with columns "
            f"{list(fresh.columns)}, {len(committed)} committed with {list(committed.columns)}")
    # floats are the results; every other column (labels, integer sizes) identifies a row, as
    # do the columns that name a metric (a K is a float where some rows have none)
    naming = set(LONG_COLUMNS) - {"value"}
    numbers = [c for c in fresh.columns
               if pd.api.types.is_float_dtype(fresh[c]) and c not in naming]
    keys = [c for c in fresh.columns if c not in numbers]
    if narrowing:
        committed = _rows_named_like(committed, fresh, keys, stage, narrowing)
    out = []
    for column in numbers:
        a = committed[column].to_numpy(float)
        b = fresh[column].to_numpy(float)
        # rtol: the committed files keep 12 significant digits (a relative 5e-12)
        equal = np.isclose(a, b, rtol=1e-11, atol=definition.tolerance, equal_nan=True)
        out.append(fresh[keys].assign(column=column, committed=a, recomputed=b, equal=equal))
    for column in keys:
        a, b = committed[column], fresh[column]
        # a unit's own rows may hold only whole numbers where the file holds 0.1 as well:
        # 0 and 0.0 name the same row
        numeric = all(pd.api.types.is_numeric_dtype(c) for c in (a, b))
        if numeric:
            x, y = a.to_numpy(float), b.to_numpy(float)
            same = (x == y) | (np.isnan(x) & np.isnan(y))
        else:  # an empty field (options "") reads back as a missing value on both sides
            same = (a.isna() & b.isna()) | (a.astype(str) == b.astype(str)).fillna(False)
        if not same.all():
            raise AssertionError(f"stage {stage!r}: column {column!r} differs from the "
                                 "committed rows (rows in another order or other labels)")
    return pd.concat(out, ignore_index=True).drop(columns="profile")


def _rows_named_like(committed: pd.DataFrame, fresh: pd.DataFrame, keys: list[str],
                     stage: str, narrowing: dict) -> pd.DataFrame:
    """The committed rows named as ``fresh``'s rows are (by ``keys``), in ``fresh``'s order."""
    def names(rows):
        # as text: "" reads back from a file as missing, 3 as 3.0 where a column also holds
        # 0.5, and a missing K must match a missing K
        return pd.DataFrame({c: rows[c].astype(float).map(repr)
                             if pd.api.types.is_numeric_dtype(rows[c])
                             else rows[c].fillna("").astype(str) for c in keys})

    index = pd.MultiIndex.from_frame(names(committed))
    if index.has_duplicates:
        raise AssertionError(f"stage {stage!r}: columns {keys} do not name its rows uniquely")
    position = index.get_indexer(pd.MultiIndex.from_frame(names(fresh)))
    if (position < 0).any():
        missing = fresh[keys][position < 0].head(3).to_dict("records")
        raise AssertionError(f"stage {stage!r}, narrowed by {narrowing}: recomputed rows with "
                             f"no committed counterpart, e.g. {missing}")
    return committed.iloc[position].reset_index(drop=True)


def _duration(seconds: float) -> str:
    """``'42 s'``, ``'17 min'``, ``'1 h 50 min'``: a compute time at the precision that matters."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 90 else f"{minutes // 60} h {minutes % 60:02d} min"


def _commit(commit: str) -> str:
    head, _, dirty = commit.partition("+")
    return f"`{head[:10]}`" + (f" ({dirty})" if dirty else "")


def provenance_summary(shown: Mapping[str, str], check: Mapping[str, str] | None = None, *,
                       units: Mapping[str, Sequence[str]] | None = None,
                       notes: Sequence[str] = ()) -> str:
    """How the committed numbers a page shows were made, as Markdown for the page's collapsed
    "How these numbers were made" box.

    One item per committed run the page shows: the stage and what it reproduces, the profile,
    its units, their compute time (added up over the units, however many runs or workers
    computed them), the machine, the commit, when it finished and the command. Then, for each
    stage of ``check``, the live recompute check: :func:`check_slice` runs now and the box
    says how many numbers it recomputed and whether all equal the committed ones.

    Parameters
    ----------
    shown : mapping of str to str
        ``{stage: profile}``: the committed runs the page shows (profile ``'full'`` or
        ``'ci'``, e.g. from :func:`shown_profile`).
    check : mapping of str to str, optional
        ``{stage: profile}``: the stages to recompute a slice of now, and in which profile.
    units : mapping of str to sequence of str, optional
        ``{stage: units}``: the units to recompute for a stage of ``check`` instead of its
        check units.
    notes : sequence of str, optional
        Further items of the list (Markdown), such as what a cached input of the run cost.

    Returns
    -------
    str
        MyST Markdown, a list; :func:`provenance_box` shows it in a chapter.

    Examples
    --------
    >>> text = provenance_summary({"tac_rouge": "full"})
    >>> print(text.splitlines()[0])
    - **`tac_rouge`**: MoverScore Table 2, ROUGE-1/2 rows (TAC 2008, 2009)
    """
    if not shown:
        raise ValueError("shown must name at least one stage, got an empty mapping")
    lines = []
    for stage, profile in shown.items():
        run = load_provenance(stage, profile)
        lines += [f"- **`{stage}`**: {get_stage(stage).title}",
                  f"  - the `{profile}` run: {run['units']} units, "
                  f"{_duration(run['cold_compute_s'])} of compute (the units' times added up)",
                  f"  - machine: {run['machine']}",
                  f"  - commit {_commit(run['commit'])}, finished "
                  f"{run['finished'][:16].replace('T', ' ')} UTC",
                  f"  - command: `{run['command']}`"]
    for stage, profile in (check or {}).items():
        chosen = (units or {}).get(stage)
        checked = check_slice(stage, profile, chosen)
        call = f"check_slice({stage!r}, {profile!r}{', units' if chosen is not None else ''})"
        n_units = checked["unit"].nunique()
        lines.append(
            f"- **Recomputed now**, while this page was executed (`{call}`): {len(checked)} "
            f"numbers of {n_units} unit{'s' * (n_units != 1)} of `{stage}` at the `{profile}` "
            f"sizes, all equal: {bool(checked['equal'].all())}")
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines)


@dataclass(frozen=True)
class GluedMarkdown:
    """Markdown that a notebook shows as a cell's output and that MyST-NB also keeps under
    ``name``, so that a book page can paste it elsewhere with ``{glue:md}`` — the output of
    ``myst_nb.glue(name, Markdown(markdown), display=True)``, without needing MyST-NB where
    no book is built (Colab shows the Markdown in place).

    Examples
    --------
    >>> data, metadata = GluedMarkdown("note", "*hello*")._repr_mimebundle_()
    >>> data["text/markdown"], metadata
    ('*hello*', {'scrapbook': {'name': 'note', 'mime_prefix': ''}})
    """

    name: str
    markdown: str

    def _repr_mimebundle_(self, include=None, exclude=None):
        # the plain-text form keeps the lines of a printed output within 100 characters
        plain = "\n".join(textwrap.fill(line, 100, subsequent_indent=" " * (
            len(line) - len(line.lstrip(" -")) or 2)) for line in self.markdown.splitlines())
        return ({"text/markdown": self.markdown, "text/plain": plain},
                {"scrapbook": {"name": self.name, "mime_prefix": ""}})


def provenance_box(shown: Mapping[str, str], check: Mapping[str, str] | None = None, *,
                   units: Mapping[str, Sequence[str]] | None = None, notes: Sequence[str] = (),
                   name: str = "provenance") -> GluedMarkdown:
    """The content of a chapter's collapsed "How these numbers were made" box.

    :func:`provenance_summary` of ``shown``, ``check``, ``units`` and ``notes``, as the output
    of the cell that returns it, kept under ``name`` for the page. In a chapter, the cell is
    tagged ``remove-cell`` (and ``nbval-check-output``, so that nbval compares the recompute
    check) and the box pastes it::

        ````{admonition} How these numbers were made
        :class: dropdown

        ```{glue:md} provenance
        :format: myst
        ```
        ````

    Where no book is built (Colab), the cell shows the same text in place.
    """
    return GluedMarkdown(name, provenance_summary(shown, check, units=units, notes=notes))
