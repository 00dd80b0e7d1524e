"""Where a model's files are, what they hold, and how long a text it reads.

A loaded encoder is identified by the bytes of its files (:func:`fingerprint`), not by where
they live, so that a disk cache stays valid after a reinstall or on another machine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

# Files that do not affect the vectors (model cards, git metadata) stay out of the fingerprint.
_FINGERPRINT_SKIP_SUFFIXES = (".md",)


def offline() -> bool:
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


def stat_key(directory: Path) -> str:
    parts = [
        f"{p.relative_to(directory).as_posix()}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
        for p in _model_files(directory)
    ]
    return "local:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


@functools.lru_cache(maxsize=16)
def fingerprint(path: str, source_key: str) -> str:
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


def max_length(directory: Path | None, tokenizer, config) -> int:
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
