"""The forward passes behind the public embedding functions, on a plain :class:`Encoder`.

Arguments arrive validated and resolved (:mod:`markeval.encoders.embed` does that); the disk
cache is read before and written after the model runs.
"""

from __future__ import annotations

import numpy as np

from markeval.cache import read_entry, write_entry
from markeval.encoders._disk import (cache_entry, check_shape, check_tokens, token_arrays,
                                     tokens_from)
from markeval.encoders._run import batches, forward, progress_bar, read_only, tokenize_texts
from markeval.encoders.loading import Encoder, torch_module
from markeval.encoders.tokens import TokenEmbeddings, merge_pieces

# The warning points at the caller of the public function: public → compute → tokenize_texts.
_STACKLEVEL = 3


def compute_sentences(encoder: Encoder, texts: list[str], batch_size: int, progress: bool,
                      normalize: bool, cache_dir) -> np.ndarray:
    """Mean-pooled (and, with ``normalize``, unit-length) last-layer vectors, one per text."""
    encoding = tokenize_texts(encoder, texts, stacklevel=_STACKLEVEL)
    entry = None
    if cache_dir is not None:
        entry = cache_entry(cache_dir, encoder, "sentence", {"normalize": normalize}, texts)
        cached = read_entry(*entry, check=lambda a: check_shape(
            a["vectors"], (len(texts), encoder.dim)))
        if cached is not None:
            return cached["vectors"]
    torch = torch_module()
    out = np.empty((len(texts), encoder.dim), dtype=np.float32)
    lengths = [len(ids) for ids in encoding["input_ids"]]
    with torch.inference_mode(), progress_bar(len(texts), progress, "sentence embeddings") as bar:
        for batch in batches(lengths, batch_size):
            outputs, mask = forward(encoder, encoding, batch)
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


def compute_tokens(encoder: Encoder, texts: list[str], selected: tuple[int, ...],
                   batch_size: int, progress: bool, merge_subwords: bool,
                   cache_dir) -> list[TokenEmbeddings]:
    """The hidden states ``selected`` of every token of every text."""
    encoding = tokenize_texts(encoder, texts, stacklevel=_STACKLEVEL)
    entry = None
    if cache_dir is not None:
        options = {"layers": list(selected), "merge_subwords": merge_subwords}
        entry = cache_entry(cache_dir, encoder, "tokens", options, texts)
        cached = read_entry(*entry, check=lambda a: check_tokens(
            a, len(texts), selected, encoder.dim))
        if cached is not None:
            return tokens_from(cached)
    torch = torch_module()
    tokenizer = encoder.tokenizer
    out: list[TokenEmbeddings | None] = [None] * len(texts)
    lengths = [len(ids) for ids in encoding["input_ids"]]
    with torch.inference_mode(), progress_bar(len(texts), progress, "token embeddings") as bar:
        for batch in batches(lengths, batch_size):
            outputs, _ = forward(encoder, encoding, batch)
            states = torch.stack([outputs.hidden_states[layer] for layer in selected])
            states = states.float().cpu().numpy()  # (layers, batch, width, dim)
            for row, i in enumerate(batch):
                item = TokenEmbeddings(
                    tokens=tuple(tokenizer.convert_ids_to_tokens(encoding["input_ids"][i])),
                    # A copy, so that the batch array is freed once the loop moves on.
                    vectors=read_only(states[:, row, : lengths[i]].copy()),
                    layers=selected,
                    special=read_only(np.array(encoding["special_tokens_mask"][i], dtype=bool)),
                    word_ids=tuple(encoding.word_ids(i)),
                )
                out[i] = merge_pieces(tokenizer, item) if merge_subwords else item
            bar.update(len(batch))
    if entry is not None:
        write_entry(*entry, token_arrays(out))
    return out
