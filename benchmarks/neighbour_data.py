"""Real embeddings for the neighbour-index benchmarks: word samples of WMT17, BBC sentences.

Imported by ``benchmarks/neighbour_index.py``, ``neighbour_agreement.py`` and
``mark_evaluate_scale.py`` (run from the repository root, or with ``benchmarks/`` on the path).

* :func:`word_sets` — Mark-Evaluate's word-level samples (paper §6: one per word piece per
  layer of the last five, special tokens left out) of WMT17 into-English references (``S``)
  against one system's outputs of the same sources (``S'``), pair after pair (de-en first)
  until ``n`` samples, then the first ``n`` rows. Sentences are encoded in fixed chunks of
  250, each cached on disk under ``cache_root() / "embeddings"``, so a larger ``n`` re-uses
  the chunks a smaller one encoded and the slow model (all-mpnet-base-v2, about 14 sentences
  per second here) encodes only what the largest size needs.
* :func:`sentence_sets` — all-MiniLM-L6-v2 sentence embeddings of unique BBC News sentences,
  one half of the articles against the other (``bbc_sentences(split="a"/"b")``), ``n`` of each
  drawn with a fixed seed.
"""

from __future__ import annotations

import numpy as np

#: The pairs in the order their sentences are taken.
PAIRS = ("de-en", "cs-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en")
#: Sentences per cached encoder call.
CHUNK = 250
#: Short names of the two encoders.
MODELS = {"minilm": "all-MiniLM-L6-v2", "mpnet": "all-mpnet-base-v2"}


def _encoder(model: str):
    from markeval.cache import cache_root
    from markeval.encoders import load_encoder

    return load_encoder(MODELS[model]).configure(cache_dir=cache_root() / "embeddings")


def _system(data) -> str:
    """The system whose outputs are S': the first by name (a fixed, documented choice)."""
    return sorted(data.systems)[0]


def word_sets(n: int, model: str = "minilm", *, progress: bool = True):
    """``(S, S')``: ``n`` word samples each of WMT17 references and one system's outputs.

    Returns float32 arrays of shape ``(n, dim)`` (384 for MiniLM, 768 for mpnet).
    """
    from tqdm import tqdm

    from markeval.datasets import load_wmt17
    from markeval.population.samples import word_samples

    encoder = _encoder(model)
    sides = {"reference": [], "system": []}
    done = {"reference": 0, "system": 0}
    with tqdm(total=2 * n, desc=f"{model} word samples", unit="sample",
              disable=not progress) as bar:
        for pair in PAIRS:
            data = load_wmt17(pair)
            texts = {"reference": data.references, "system": data.systems[_system(data)]}
            for start in range(0, len(data.references), CHUNK):
                if all(done[s] >= n for s in sides):
                    break
                for side in sides:
                    if done[side] >= n:
                        continue
                    x = word_samples(list(texts[side][start:start + CHUNK]), encoder,
                                     progress=False)
                    sides[side].append(x)
                    bar.update(min(len(x), n - done[side]))
                    done[side] += len(x)
    if any(done[s] < n for s in sides):
        raise SystemExit(f"WMT17 holds fewer than n={n} word samples per side")
    return tuple(np.ascontiguousarray(np.concatenate(sides[s])[:n]) for s in sides)


def sentence_sets(n: int, *, seed: int = 0):
    """``(S, S')``: MiniLM sentence embeddings of ``n`` unique BBC sentences from each half."""
    from markeval.cache import cache_root
    from markeval.datasets import bbc_sentences
    from markeval.encoders import sentence_embeddings

    rng = np.random.default_rng(seed)
    sets = []
    for split in ("a", "b"):
        sentences = bbc_sentences(split=split, unique=True)["sentence"].tolist()
        if len(sentences) < n:
            raise SystemExit(f"split {split!r} has only {len(sentences)} unique sentences < {n}")
        chosen = [sentences[i] for i in np.sort(rng.choice(len(sentences), n, replace=False))]
        sets.append(sentence_embeddings(chosen, progress=False,
                                        cache_dir=cache_root() / "embeddings"))
    return tuple(np.ascontiguousarray(s, dtype=np.float32) for s in sets)
