"""The disk cache of encoder outputs: one ``.npz`` per call, keyed by model content and texts."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

from markeval import _written as written
from markeval.encoders._run import read_only
from markeval.encoders.loading import Encoder
from markeval.encoders.tokens import TokenEmbeddings

# Bumped whenever the arrays a call produces change meaning, so old disk caches are ignored.
_CACHE_FORMAT = 2  # 2: every entry an .npz that stores its own key


#: The file name of an entry: its kind and 40 hex digits of its key's hash.
_ENTRY_NAME = re.compile(r"[a-z]+-[0-9a-f]{40}\.npz")


def cached_files(folder: Path) -> list[Path]:
    """The embedding entries markeval wrote in ``folder``, unchanged since (for ``markeval
    cache``; :mod:`markeval._written`)."""
    records = written.recorded(folder)
    return [path for path in Path(folder).iterdir()
            if _ENTRY_NAME.fullmatch(path.name) and written.is_ours(path, records)]


def cache_entry(cache_dir, encoder: Encoder, kind: str, options: dict,
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


def check_shape(array: np.ndarray, shape: tuple[int, ...]) -> None:
    if array.dtype != np.float32 or array.shape != shape:
        raise ValueError(f"vectors are {array.dtype} {array.shape}, expected float32 {shape}")


def token_arrays(items: list[TokenEmbeddings]) -> dict[str, np.ndarray]:
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


def check_tokens(arrays: dict, n_texts: int, layers: tuple[int, ...], dim: int) -> None:
    lengths = arrays["lengths"]
    if lengths.shape != (n_texts,):
        raise ValueError(f"it holds {lengths.size} texts, expected {n_texts}")
    total = int(lengths.sum())
    check_shape(arrays["vectors"], (len(layers), total, dim))
    if tuple(arrays["layers"].tolist()) != layers:
        raise ValueError(f"layers {tuple(arrays['layers'].tolist())}, expected {layers}")
    for name in ("tokens", "special", "word_ids"):
        if arrays[name].shape != (total,):
            raise ValueError(f"{name} has shape {arrays[name].shape}, expected ({total},)")


def tokens_from(arrays: dict) -> list[TokenEmbeddings]:
    vectors, lengths, tokens = arrays["vectors"], arrays["lengths"], arrays["tokens"]
    special, word_ids, layers = arrays["special"], arrays["word_ids"], arrays["layers"]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        out.append(
            TokenEmbeddings(
                tokens=tuple(str(t) for t in tokens[a:b]),
                vectors=read_only(np.ascontiguousarray(vectors[:, a:b])),
                layers=tuple(int(x) for x in layers),
                special=read_only(special[a:b].copy()),
                word_ids=tuple(None if w < 0 else int(w) for w in word_ids[a:b]),
            )
        )
    return out
