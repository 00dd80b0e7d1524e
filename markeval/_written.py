"""What markeval wrote, folder by folder: the proof it needs before it deletes or overwrites.

markeval deletes or overwrites a file only when it can prove that it wrote that file, as it is
now. Each folder it writes into holds a manifest, :data:`MANIFEST`, with one JSON line per
event, appended after the event:

* ``{"name": ..., "size": ..., "sha256": ...}`` — a file was written (renamed into place);
* ``{"name": ..., "partial": true}`` — a temporary file was created (before its first byte);
* ``{"name": ..., "removed": true}`` — a file was deleted.

A file is markeval's (:func:`is_ours`) when the last line for its name records it with the
size and SHA-256 it has now. A file that changed since (edited, replaced, truncated) or that no
line names is the user's: it is kept and listed, never deleted or overwritten. Lines are
appended with one ``write`` on a file opened in append mode, so processes writing into the same
folder at once (pytest workers, two notebooks) interleave whole lines; a line cut short by a
killed process is skipped when read. A record written after the file counts only if the file
still matches it, so losing a line (a kill between the rename and the append) costs at most
markeval's claim to that file, never the user's.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = ["MANIFEST", "compact", "drop_if_spent", "foreign", "is_ours", "is_our_partial",
           "record", "record_partial", "record_removed", "recorded", "sha256"]

#: The manifest's file name, in every folder markeval writes into.
MANIFEST = ".markeval-written"
_BLOCK = 1 << 20


def _append(folder: Path, line: dict) -> None:
    data = (json.dumps(line, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(folder / MANIFEST, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def sha256(path: Path) -> str:
    """SHA-256 hex digest of the file at ``path``, read in 1 MiB blocks (the one file hash of
    the package: :func:`markeval.datasets._integrity.sha256_file` is this)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def record(path: Path, *, size: int | None = None, sha: str | None = None) -> None:
    """Record the file ``path`` as markeval's: as it is now, or as ``size`` and ``sha`` say
    this process wrote it (hashed before the rename, so that a process renaming the same entry
    at the same moment cannot make this record describe its content)."""
    path = Path(path)
    if size is None or sha is None:
        size, sha = path.stat().st_size, sha256(path)
    _append(path.parent, {"name": path.name, "size": size, "sha256": sha})


def record_partial(path: Path) -> None:
    """Record the temporary file ``path`` (created, not yet renamed into place)."""
    path = Path(path)
    _append(path.parent, {"name": path.name, "partial": True})


def record_removed(path: Path) -> None:
    """Record that markeval deleted ``path``."""
    path = Path(path)
    _append(path.parent, {"name": path.name, "removed": True})


def recorded(folder: Path) -> dict[str, dict]:
    """The last line for each name in ``folder``'s manifest (none for a removed file)."""
    try:
        text = (Path(folder) / MANIFEST).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    last: dict[str, dict] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
            name = entry["name"]
        except (ValueError, TypeError, KeyError):
            continue  # a line cut short by a killed process, or not ours
        if isinstance(name, str):
            last[name] = entry
    return {name: entry for name, entry in last.items() if not entry.get("removed")}


def is_ours(path: Path, records: dict[str, dict] | None = None) -> bool:
    """Whether ``path`` is a regular file markeval wrote, unchanged since (size and SHA-256).

    ``records``: :func:`recorded` of its folder, when the caller has read it already.
    """
    path = Path(path)
    entry = (recorded(path.parent) if records is None else records).get(path.name)
    if entry is None or "sha256" not in entry or path.is_symlink() or not path.is_file():
        return False
    return path.stat().st_size == entry.get("size") and sha256(path) == entry["sha256"]


def is_our_partial(path: Path, records: dict[str, dict] | None = None) -> bool:
    """Whether ``path`` is a temporary file markeval created (and did not rename into place)."""
    path = Path(path)
    entry = (recorded(path.parent) if records is None else records).get(path.name)
    return entry is not None and entry.get("partial") is True and not path.is_symlink()


def foreign(paths) -> list[Path]:
    """Of ``paths``, those that exist and are not markeval's (:func:`is_ours`)."""
    records: dict[Path, dict] = {}
    found = []
    for path in map(Path, paths):
        if not (path.exists() or path.is_symlink()):
            continue
        if path.parent not in records:
            records[path.parent] = recorded(path.parent)
        if not is_ours(path, records[path.parent]):
            found.append(path)
    return found


def drop_if_spent(folder: Path) -> None:
    """Delete ``folder``'s manifest when none of the files it names is there any more."""
    folder = Path(folder)
    if not any((folder / name).exists() or (folder / name).is_symlink()
               for name in recorded(folder)):
        (folder / MANIFEST).unlink(missing_ok=True)


def compact(folder: Path) -> None:
    """Rewrite ``folder``'s manifest with one line per file that is still markeval's, and per
    temporary file of its still there (for a folder with one writer at a time, such as a
    results folder, whose manifest is committed; elsewhere a line appended meanwhile is lost,
    which costs markeval its claim to that file, never the user's)."""
    folder = Path(folder)
    records = recorded(folder)
    keep = [records[name] for name in sorted(records)
            if is_ours(folder / name, records) or is_our_partial(folder / name, records)
            and (folder / name).exists()]
    text = "".join(json.dumps(entry, sort_keys=True) + "\n" for entry in keep)
    tmp = folder / f"{MANIFEST}.tmp-{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)
