"""Finished units on disk, so that an interrupted reproduction never recomputes them.

Each unit's rows are one CSV file under
``<cache root>/reproduce/<profile>/<stage>-<settings hash>/<unit>.csv``, written atomically
(:func:`markeval.cache.atomic_write`) with the seconds the unit took in a comment line, and
its provenance (commit, machine, when it finished) in a second one. A
killed run leaves only whole files; the next run reads them and computes the rest. Changed
settings hash to a new folder. Changed *code* does not: rerun the stage with ``--fresh``.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd

from markeval import _written as written
from markeval.cache import NotOursError, atomic_write, cache_root, refuse_foreign
from markeval.reproduce.stage import Stage, settings_key

__all__ = ["FLOAT_FORMAT", "UnitStore", "cached_files"]

#: Floats are written with 17 significant digits: a read-back unit equals the computed one.
FLOAT_FORMAT = "%.17g"
_SECONDS = re.compile(r"# seconds: ([0-9.eE+-]+)")
_PROVENANCE = re.compile(r"# provenance: (\{.*\})")


def cached_files(folder: Path) -> list[Path]:
    """The unit files :meth:`UnitStore.put` wrote under ``folder``
    (``<profile>/<stage>-<hash>/<unit>.csv``), unchanged since, for ``markeval cache``."""
    return [path for path in Path(folder).glob("*/*/*.csv") if written.is_ours(path)]


class UnitStore:
    """The cached units of one stage in one profile.

    Examples
    --------
    >>> import tempfile
    >>> s = Stage("demo", "demo", lambda p: {}, lambda s: ["a"], None, None)
    >>> store = UnitStore(s, "ci", {}, root=Path(tempfile.mkdtemp()))
    >>> store.get("a") is None
    True
    >>> store.put("a", pd.DataFrame({"x": [0.1]}), seconds=2.5)
    >>> rows, seconds = store.get("a")
    >>> float(rows["x"].iloc[0]), seconds
    (0.1, 2.5)
    """

    def __init__(self, stage: Stage, profile: str, settings: dict, *, root: Path | None = None):
        self.root = cache_root() / "reproduce" if root is None else Path(root)
        root = self.root
        self.folder = root / profile / f"{stage.name}-{settings_key(stage, settings)}"

    def _path(self, unit: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", unit)
        return self.folder / f"{safe}.csv"

    def get(self, unit: str) -> tuple[pd.DataFrame, float] | None:
        """The unit's rows and the seconds it took, or None when it has not finished."""
        found = self._read(unit)
        return None if found is None else found[:2]

    def provenance(self, unit: str) -> dict:
        """Where and when the unit was computed (``{}`` for a unit that has not finished)."""
        found = self._read(unit)
        return {} if found is None else found[2]

    def _read(self, unit: str):
        path = self._path(unit)
        if not path.exists():
            return None
        text = path.read_text()
        found = _SECONDS.match(text)
        if not found:  # not written by put(), and so not markeval's to replace
            raise NotOursError(f"{path}: holds unit {unit!r}'s name but is no unit markeval "
                               f"wrote; left as it is (move it away to compute the unit)")
        body = text[found.end():].lstrip("\n")
        provenance = {}
        line = _PROVENANCE.match(body)
        if line:
            provenance = json.loads(line.group(1))
            body = body[line.end():].lstrip("\n")
        rows = pd.read_csv(io.StringIO(body), keep_default_na=False, na_values=[""])
        return rows, float(found.group(1)), provenance

    def put(self, unit: str, rows: pd.DataFrame, *, seconds: float,
            provenance: dict | None = None) -> None:
        """Keep a finished unit's rows, the seconds it took and where it was computed."""
        text = (f"# seconds: {seconds!r}\n# provenance: {json.dumps(provenance or {})}\n"
                + rows.to_csv(index=False, float_format=FLOAT_FORMAT))
        atomic_write(self._path(unit), lambda fh: fh.write(text.encode()))

    def clear(self, units) -> list[Path]:
        """Forget every unit of this stage and profile (``--fresh``): delete the unit files
        markeval wrote, unchanged since, and nothing else; return the other files there.

        Raises :class:`~markeval.cache.NotOursError`, before deleting anything, when a file it
        cannot prove it wrote holds the name of one of ``units`` (it would be read again as
        that unit's finished rows)."""
        refuse_foreign([self._path(unit) for unit in units],
                       hint="move them away to compute their units afresh")
        records = written.recorded(self.folder)
        kept = []
        for path in sorted(self.folder.glob("*")) if self.folder.is_dir() else []:
            if path.name == written.MANIFEST:
                continue
            if path.suffix == ".csv" and written.is_ours(path, records):
                path.unlink()
                written.record_removed(path)
            else:
                kept.append(path)
        return kept
