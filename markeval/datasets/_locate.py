"""Find a human-judgement data set on disk, or download it into the cache.

Search order (first complete copy wins):

1. ``$MARKEVAL_DATA`` (a folder holding ``wmt17/`` and/or ``tac/``);
2. ``shared/data`` next to the working directory or any of its parents, then the
   same next to the installed package and its parents (a checkout at
   ``<work>/main`` finds ``<work>/shared/data``, from the repository root or from
   ``book/``);
3. the download cache, ``markeval.cache.cache_root()`` (``$MARKEVAL_CACHE`` or
   ``~/.cache/markeval``);
4. a download from the public source into that cache, unless
   ``MARKEVAL_OFFLINE=1``. ``$MARKEVAL_DATA_MIRROR`` (a URL ending in ``/``) names a mirror of
   the public sources' host laid out as they are (``<mirror>AIPHES/emnlp19-moverscore/master/
   examples/data/tac.08.mds.gen.resp-pyr``): every download then comes from there, verified
   against the same checksums (a course behind a firewall, or a test that serves the files).

A candidate folder counts only when every file of the data set's manifest is
there, so that an interrupted download is completed rather than trusted. The first
folder found is then checked against the pinned checksums: sizes on every call, SHA-256
once per process (:func:`verify` checks again on request). A file that is not the pinned
one is refused by name (:class:`DataIntegrityError`), in the download cache too: markeval keeps
a download only once it matches, so a file there that differs changed since (an edit, a damaged
disk) and is left as it is for its owner to move away (:mod:`markeval._written`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from markeval._checks import check_bool
from markeval.cache import atomic_write, cache_root
from markeval.datasets._integrity import DataIntegrityError, file_problem
from markeval.datasets._sources import SOURCES, Source

_TIMEOUT_S = 60
#: The environment variable naming a mirror of the sources' host (see the module notes).
MIRROR_ENV = "MARKEVAL_DATA_MIRROR"
_BLOCK = 1 << 16
_MOVE_AWAY = "move it away (or delete it) and markeval downloads the pinned file again"
_PACKAGE_DIR = Path(__file__).resolve().parent
# Folders whose every file matched its pinned SHA-256 in this process (sizes are re-checked).
_hashed: set[Path] = set()


class DataNotFoundError(FileNotFoundError):
    """A data set is in none of the searched places and could not be downloaded."""


def cache_dir() -> Path:
    """The download cache: :func:`markeval.cache.cache_root` (data sets go in ``<name>/``).

    Examples
    --------
    >>> from markeval.cache import cache_root
    >>> cache_dir() == cache_root()
    True
    """
    return cache_root()


def cached_files(folder: Path) -> list[Path]:
    """The files of data set ``folder.name`` in this cache folder that are the pinned ones
    (what ``markeval cache clear data`` may remove). markeval downloads nothing else and keeps
    a download only once it matches, so the pinned size and SHA-256 prove a file is what
    markeval wrote; anything else there, an edited data file included, is the user's.

    Examples
    --------
    >>> cached_files(Path("no-such-cache") / "tac"), cached_files(Path("cache") / "thesis")
    ([], [])
    """
    source = SOURCES.get(folder.name)
    if source is None:
        return []
    return [folder / rel for rel in source.files
            if (folder / rel).is_file() and not (folder / rel).is_symlink()
            and file_problem(folder / rel, source.checksums[rel], full=True) is None]


def verify_cached(folder: Path) -> list[tuple[Path, str, bool]]:
    """Hash the files of data set ``folder.name`` in this cache folder against the pinned
    ones. For ``markeval cache verify``: ``(path, what was found, whether it is sound)``; a
    file that differs is not what markeval downloaded and is left as it is."""
    source = SOURCES.get(folder.name)
    if source is None:
        return []
    _hashed.discard(folder)
    problems = _problems(folder, source, full=True)
    report = []
    for rel, problem in problems.items():
        report.append((folder / rel, f"not the pinned file ({problem}); left in place, as "
                                     f"markeval did not write it so: {_MOVE_AWAY}", False))
    present = len(source.files) - len(_missing(folder, source))
    if present:
        report.append((folder, f"{present} files match their pinned SHA-256", True))
    return report


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


def _open(url: str):
    """Open ``url`` for reading (tests replace this function: no network in tests)."""
    return urllib.request.urlopen(url, timeout=_TIMEOUT_S)


def _fetch_verified(url: str, target: Path, pinned: tuple[int, str], bar) -> None:
    """Stream ``url`` into ``target`` through a temporary file; keep it only if it is pinned."""
    size, sha = pinned

    def save(handle) -> None:
        digest, written = hashlib.sha256(), 0
        with _open(url) as response:
            for block in iter(lambda: response.read(_BLOCK), b""):
                written += len(block)
                if written > size:  # a server that sends more never fills the disk
                    raise DataIntegrityError(
                        f"the download of {target.name} from {url} is larger than the pinned "
                        f"file ({size} bytes): stopped after {written} bytes; nothing was kept")
                handle.write(block)
                digest.update(block)
                bar.update(len(block))
        if (written, digest.hexdigest()) != (size, sha):
            raise DataIntegrityError(
                f"the download of {target.name} from {url} is not the pinned file: sha256 "
                f"{digest.hexdigest()} ({written} bytes), expected sha256 {sha} ({size} bytes). "
                "Nothing was kept; if the source changed on purpose, the pinned checksums in "
                "markeval/datasets/checksums.json must be renewed.")

    atomic_write(target, save)


def download(name: str, root: Path | None = None, *, base_url: str | None = None,
             progress: bool = True) -> Path:
    """Download data set ``name`` from its public source into ``root / name``.

    Files already present are kept. Each new file streams into a temporary name and is
    renamed into place only after its size and SHA-256 match the pinned ones, so neither an
    interruption nor a wrong file is ever left under the data file's name.

    Parameters
    ----------
    name : {'wmt17', 'tac'}
        The data set.
    root : pathlib.Path, optional
        Data root; default :func:`cache_dir`.
    base_url : str, optional
        A mirror to download from instead of the public source (``https://``, or ``file://``
        for a local folder laid out as the source). Default: the public source, or its
        path under ``$MARKEVAL_DATA_MIRROR`` when that is set.
    progress : bool, default True
        A tqdm bar (bytes) on stderr.

    Returns
    -------
    pathlib.Path
        The data set folder ``root / name``.

    Raises
    ------
    DataIntegrityError
        When a downloaded file is not the pinned one (naming the file, both hashes, the URL).
    urllib.error.URLError, OSError
        When a file cannot be fetched or written.

    Examples
    --------
    The URL of each file is the source's ``base_url`` plus its name at the source:

    >>> from markeval.datasets._sources import SOURCES
    >>> SOURCES["tac"].url("tac.09.mds.gen.resp-pyr.json").rsplit("/", 1)[1]
    'tac.09.mds.gen.resp-pyr'
    """
    from tqdm import tqdm

    progress = check_bool(progress, "progress")
    source = _source(name)
    if base_url is None and os.environ.get(MIRROR_ENV):
        mirror = _check_base_url(os.environ[MIRROR_ENV], f"${MIRROR_ENV}")
        base_url = mirror + urllib.parse.urlsplit(source.base_url).path.lstrip("/")
    if base_url is not None:
        source = dataclasses.replace(source, base_url=_check_base_url(base_url, "base_url"))
    folder = (cache_dir() if root is None else Path(root)) / source.name
    missing = _missing(folder, source)
    total = sum(source.checksums[rel][0] for rel in missing)
    with tqdm(total=total, unit="B", unit_scale=True, desc=f"downloading {name}",
              disable=not progress or not missing) as bar:
        for rel in missing:
            _fetch_verified(source.url(rel), folder / rel, source.checksums[rel], bar)
    return folder


def _check_base_url(value, name: str) -> str:
    """``value`` if it is a URL urllib can fetch from (http, https, file) ending in ``/``.

    Checked before anything is fetched, so that a mistyped mirror (a bare folder, say) is
    named in one line rather than by urllib's "unknown url type" from inside the download.
    """
    parts = urllib.parse.urlsplit(value) if isinstance(value, str) else None
    if (parts is None or not value.endswith("/") or parts.scheme not in ("http", "https", "file")
            or (parts.scheme != "file" and not parts.netloc)):
        raise ValueError(f"{name} must be an http://, https:// or file:// URL ending in '/', "
                         f"got {value!r}")
    return value


def _source(name: str) -> Source:
    if name not in SOURCES:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(SOURCES)}")
    return SOURCES[name]


def _problems(folder: Path, source: Source, *, full: bool) -> dict[str, str]:
    """Why each file present in ``folder`` is not the pinned one (missing files are skipped)."""
    problems = {}
    for rel in source.files:
        if not (folder / rel).is_file():
            continue
        problem = file_problem(folder / rel, source.checksums[rel], full=full)
        if problem is not None:
            problems[rel] = problem
    return problems


def _check_copy(folder: Path, source: Source, why: str, *, full: bool) -> bool:
    """True when the files in ``folder`` are the pinned ones; refuse a copy that is not, by
    name (:class:`DataIntegrityError`), saying what to do for the download cache and for the
    user's own folders."""
    problems = _problems(folder, source, full=full or folder not in _hashed)
    if not problems:
        _hashed.add(folder)
        return True
    _hashed.discard(folder)
    rel, problem = next(iter(problems.items()))
    more = f" ({len(problems) - 1} more files differ too)" if len(problems) > 1 else ""
    if folder == cache_dir() / source.name:
        # markeval keeps a download only once it matches: this file changed since (an edit,
        # a damaged disk) and may be someone's work, so it is not deleted or overwritten.
        raise DataIntegrityError(
            f"{folder / rel} ({why}) is not the pinned file: {problem}{more}. markeval "
            f"downloaded the pinned file there and leaves a changed one alone: {_MOVE_AWAY}.")
    raise DataIntegrityError(
        f"{folder / rel} ({why}) is not the pinned file: {problem}{more}. The pinned file is "
        f"{source.url(rel)}; replace the copy with it, or point MARKEVAL_DATA elsewhere.")


def verify(name: str) -> Path:
    """Locate data set ``name`` and check every file's SHA-256 again, whatever was checked.

    :func:`locate` hashes a folder once per process and then only compares sizes; call this
    after changing files under a running process, or to check a copy on request.

    Returns
    -------
    pathlib.Path
        The verified folder.

    Raises
    ------
    DataIntegrityError
        Naming the first file that differs, its hash and the pinned one.
    """
    _hashed.clear()
    return locate(name)


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
    DataIntegrityError
        When the copy found is not the pinned one (outside the download cache, which heals).

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
        if not missing and _check_copy(folder, source, why, full=False):
            return folder
        missing = _missing(folder, source)
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
            # Files kept from an earlier, partial download are checked first (a changed one is
            # refused by name); new files are checked as they arrive.
            _check_copy(cache_dir() / source.name, source, "download cache", full=True)
            folder = download(name)
        except (urllib.error.URLError, OSError) as err:
            attempt = f"Download from {source.base_url} into {cache_dir()} failed: {err}"
        else:
            _hashed.add(folder)
            return folder
    files = f"{', '.join(source.files[:3])}{', ...' if len(source.files) > 3 else ''}"
    raise DataNotFoundError(
        f"{source.title}: data set {source.name!r} not found. Searched:\n"
        + "\n".join(report)
        + f"\n{attempt}\n"
        f"To get it: put the {len(source.files)} files ({files}) in {cache_dir() / source.name}, "
        f"or set MARKEVAL_DATA to a folder that contains {source.name}/ with them, "
        f"or run once with internet access so that they download there."
    )
