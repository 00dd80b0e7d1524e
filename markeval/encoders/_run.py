"""Running the model: tokenising once, batching by length, one forward pass, a progress bar."""

from __future__ import annotations

import warnings

import numpy as np

from markeval.encoders.loading import Encoder, torch_module

__all__ = ["TruncationWarning", "tokenize_texts"]


class TruncationWarning(UserWarning):
    """Some texts were longer than the encoder's ``max_length`` and were cut."""


def tokenize_texts(encoder: Encoder, texts: list[str], *, stacklevel: int = 2):
    """Tokenise once, unpadded, as every embedding function does; warn about texts cut.

    Returns the tokenizer's ``BatchEncoding`` (``input_ids``, ``special_tokens_mask``, word
    ids), truncated at ``encoder.max_length``. Metrics that need the word pieces without the
    vectors (:func:`markeval.semantic.idf_weights`) call it to cut texts exactly as the
    encoder does. ``stacklevel`` is that of the :class:`TruncationWarning`, counted from the
    caller of this function (2: the caller's caller).
    """
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
            stacklevel=stacklevel + 1,
        )
    return encoding


def batches(lengths: list[int], batch_size: int):
    """Index batches, longest texts first, so that each batch pads to similar lengths."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def forward(encoder: Encoder, encoding, batch: list[int]):
    """Run the model on one batch (right padding); return (outputs, attention mask)."""
    torch = torch_module()
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


def progress_bar(total: int, enabled: bool, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="text")


def read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array
