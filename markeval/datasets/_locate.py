"""Find a human-judgement data set on disk, or download it into the cache.

Search order (first complete copy wins):

1. ``$MARKEVAL_DATA`` (a folder holding ``wmt17/`` and/or ``tac/``);
2. ``shared/data`` next to the working directory or any of its parents, then the
   same next to the installed package and its parents (a checkout at
   ``<work>/main`` finds ``<work>/shared/data``, from the repository root or from
   ``book/``);
3. the download cache ``~/.cache/markeval``;
4. a download from the public source into that cache, unless
   ``MARKEVAL_OFFLINE=1``.

A candidate folder counts only when every file of the data set's manifest is
there, so that an interrupted download is completed rather than trusted.
"""

from __future__ import annotations

import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from markeval.datasets._sources import SOURCES, Source

_TIMEOUT_S = 60
_PACKAGE_DIR = Path(__file__).resolve().parent


class DataNotFoundError(FileNotFoundError):
    """A data set is in none of the searched places and could not be downloaded."""


def cache_dir() -> Path:
    """The download cache, ``~/.cache/markeval``.

    Examples
    --------
    >>> cache_dir().name
    'markeval'
    """
    return Path.home() / ".cache" / "markeval"


def search_roots() -> list[tuple[Path, str]]:
    """Candidate data roots in search order, each with why it is searched.

    Returns
    -------
    list of (pathlib.Path, str)
        Distinct folders; a data set ``name`` is looked for in ``root / name``.

    Examples
    --------
    >>> roots = search_roots()
    >>> roots[-1][0] == cache_dir()
    True
    """
    roots: list[tuple[Path, str]] = []
    env = os.environ.get("MARKEVAL_DATA")
    if env:
        roots.append((Path(env).expanduser(), "$MARKEVAL_DATA"))
    for start, what in ((Path.cwd(), "working directory"),
                        (_PACKAGE_DIR, "markeval package")):
        for folder in (start, *start.parents):
            roots.append((folder / "shared" / "data", f"shared/data in the {what} or a parent"))
    roots.append((cache_dir(), "download cache"))
    seen: set[Path] = set()
    unique = []
    for path, why in roots:
        if path not in seen:
            seen.add(path)
            unique.append((path, why))
    return unique


def _missing(folder: Path, source: Source) -> list[str]:
    return [f for f in source.files if not (folder / f).is_file()]


def _fetch(url: str) -> bytes:
    """Download ``url`` (tests replace this function: no network in tests)."""
    with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
        return response.read()


def download(name: str, root: Path | None = None) -> Path:
    """Download data set ``name`` from its public source into ``root / name``.

    Files already present are kept; each new file is written to a temporary
    name and renamed, so an interruption never leaves a truncated file behind.

    Parameters
    ----------
    name : {'wmt17', 'tac'}
        The data set.
    root : pathlib.Path, optional
        Data root; default :func:`cache_dir`.

    Returns
    -------
    pathlib.Path
        The data set folder ``root / name``.

    Raises
    ------
    urllib.error.URLError, OSError
        When a file cannot be fetched or written.

    Examples
    --------
    The URL of each file is the source's ``base_url`` plus its manifest path:

    >>> from markeval.datasets._sources import SOURCES
    >>> tac = SOURCES["tac"]
    >>> print(tac.base_url + tac.files[0])
    https://raw.githubusercontent.com/AIPHES/emnlp19-moverscore/master/examples/data/tac.08.mds.gen.resp-pyr.json
    """
    source = _source(name)
    folder = (cache_dir() if root is None else Path(root)) / source.name
    for rel in _missing(folder, source):
        data = _fetch(source.base_url + rel)
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return folder


def _source(name: str) -> Source:
    if name not in SOURCES:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(SOURCES)}")
    return SOURCES[name]


def locate(name: str, *, download_if_missing: bool = True) -> Path:
    """Return the folder of data set ``name``, downloading it when allowed and needed.

    Parameters
    ----------
    name : {'wmt17', 'tac'}
        The data set.
    download_if_missing : bool, default True
        Try the public source when no local copy is complete. Also disabled by
        the environment variable ``MARKEVAL_OFFLINE=1``.

    Returns
    -------
    pathlib.Path
        A folder holding every file of the data set's manifest.

    Raises
    ------
    DataNotFoundError
        Listing every place searched (and why each failed) and how to get the data.

    Notes
    -----
    Search order: ``$MARKEVAL_DATA``; ``shared/data`` in the working directory or
    any parent; the same from the installed package's folder; ``~/.cache/markeval``;
    then a download into that cache (see :func:`download`).

    Examples
    --------
    >>> try:
    ...     folder = locate("tac", download_if_missing=False)
    ... except DataNotFoundError:
    ...     folder = None
    >>> folder is None or (folder / "tac.08.mds.gen.resp-pyr.json").is_file()
    True
    """
    source = _source(name)
    report = []
    if not os.environ.get("MARKEVAL_DATA"):
        report.append("  - $MARKEVAL_DATA: not set")
    for root, why in search_roots():
        folder = root / source.name
        missing = _missing(folder, source)
        if not missing:
            return folder
        state = ("absent" if not folder.is_dir()
                 else f"incomplete, {len(missing)} of {len(source.files)} files missing "
                      f"(e.g. {missing[0]})")
        report.append(f"  - {folder} ({why}): {state}")

    if os.environ.get("MARKEVAL_OFFLINE", "") not in ("", "0"):
        attempt = "Download skipped: MARKEVAL_OFFLINE is set."
    elif not download_if_missing:
        attempt = "Download not attempted (download_if_missing=False)."
    else:
        try:
            return download(name)
        except (urllib.error.URLError, OSError) as err:
            attempt = f"Download from {source.base_url} into {cache_dir()} failed: {err}"
    raise DataNotFoundError(
        f"{source.title}: data set {source.name!r} not found. Searched:\n"
        + "\n".join(report)
        + f"\n{attempt}\n"
        f"To get it: set MARKEVAL_DATA to a folder that contains {source.name}/ "
        f"(files: {', '.join(source.files[:3])}{', ...' if len(source.files) > 3 else ''}), "
        f"or run once with internet access "
        f"so that it downloads into {cache_dir() / source.name}."
    )
