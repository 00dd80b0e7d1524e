"""Checksums of the data we read: pinned sizes and SHA-256, and the check of a copy.

A truncated transfer, an HTML error page saved under a data file's name or an upstream file
that changed would otherwise change every table computed from it without a word. The pinned
values live in ``checksums.json`` beside this module; :mod:`markeval.datasets.checksums`
regenerates them (only when a source changes on purpose) from a trusted data root.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from markeval import _written as written

CHECKSUMS_FILE = Path(__file__).with_name("checksums.json")


class DataIntegrityError(ValueError):
    """A data file is not the pinned one (size or SHA-256 differs)."""


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of a file, read in 1 MiB blocks.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x"
    >>> _ = path.write_bytes(b"abc")
    >>> sha256_file(path)[:16]
    'ba7816bf8f01cfea'
    """
    return written.sha256(path)


def file_problem(path: Path, pinned: tuple[int, str], *, full: bool) -> str | None:
    """Why the file at ``path`` is not the pinned ``(size, sha256)``; None when it is.

    The size is always compared (one ``stat``); the hash only when ``full`` or when the size
    already differs (so that the message can give both hashes).
    """
    size, sha = pinned
    actual_size = path.stat().st_size
    if actual_size == size and not full:
        return None
    actual_sha = sha256_file(path)
    if actual_size == size and actual_sha == sha:
        return None
    return (f"sha256 {actual_sha} ({actual_size} bytes), expected sha256 {sha} "
            f"({size} bytes)")


def corpus_digest(files: list[Path], root: Path) -> dict:
    """Count, total size and one SHA-256 over many files (their paths relative to ``root``).

    The digest hashes each relative path and each file's own digest in sorted path order, so
    it changes when any file is changed, added, removed or renamed.
    """
    digest = hashlib.sha256()
    total = 0
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(bytes.fromhex(sha256_file(path)))
        total += path.stat().st_size
    return {"files": len(files), "bytes": total, "sha256": digest.hexdigest()}
