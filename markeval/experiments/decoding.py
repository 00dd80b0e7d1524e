"""Decoding study: SmolLM2-135M continues BBC News openings under six decoding algorithms.

The protocol follows MAUVE's (Pillutla et al. 2021, §4): a language model continues prompts
taken from real text, under several decoding algorithms, and a distribution metric compares
each set of model continuations with the human continuations of the same prompts. Both sides
have the same token budget, so length is not what tells them apart.

Data
----
* **Articles**: BBC News split ``"b"`` (:func:`markeval.datasets.bbc_sentences`: even article
  ids, with articles that share a sentence kept together, so that no sentence of split
  ``"a"`` occurs here). Split ``"b"`` is the book's held-out half: every study that fits
  something on BBC text fits it on split ``"a"`` (the n-gram generators and the cross-entropy
  judges of :mod:`markeval.experiments.generators`, the reference sets of
  :mod:`markeval.experiments.sensitivity`), so a chapter can take human text of split ``"a"``
  as a baseline or fit on it without having seen these continuations. An article's body is
  its sentences joined by single spaces (title left out; paragraph breaks become spaces).
* **Eligible**: the split-``"b"`` articles whose body has at least ``PROMPT_TOKENS +
  CONTINUATION_TOKENS`` SmolLM2 tokens (all 1,096 do), dropping an article whose first
  ``PROMPT_TOKENS`` tokens repeat an earlier article's (the corpus repeats stories: 75 such
  repeats, 1,021 eligible articles). They are shuffled with ``seed`` and the first ``n``
  taken: the prompts for a smaller ``n`` are the first ones of a larger, so a slice of the
  packaged study (its first batches) is itself a random sample of the articles.
* **Prompt**: the body's first ``PROMPT_TOKENS`` = 32 tokens (MAUVE: about 35); **human
  continuation**: the next ``CONTINUATION_TOKENS`` = 48, decoded. On this corpus, decoding and
  re-encoding gives back exactly these token ids (tests check it).

Generation
----------
SmolLM2 (:func:`markeval.encoders.causal_lm.load_causal_lm`) reads ``<|endoftext|>`` (its
document separator, :data:`~markeval.encoders.causal_lm.SMOLLM2_PREFIX`) and the prompt's 32
token ids, and adds at most ``CONTINUATION_TOKENS`` new tokens, stopping early only at
``<|endoftext|>`` or ``<|im_end|>`` (the GGUF's end-of-sequence token), under each decoding of
:data:`DECODINGS`. The continuation is stored without the prompt and without the stop token.
Each batch is seeded on its own (:func:`markeval.experiments.generators.batch_seed`), so a
batch regenerates identically on the same device and library versions, whatever else ran.
Finished batches are appended to a JSON-lines file as they come, so a run stopped by Ctrl-C
or a crash resumes where it stopped (:func:`generate_decodings`).

The finished study ships as package data (:data:`DATA_FILE`, written by
``python -m markeval.experiments.decoding --n 1000``; read it with
:func:`load_decoding_generations`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from markeval._checks import check_bool, check_int, check_seed
from markeval.cache import CacheWarning, atomic_write
from markeval.experiments.generators import read_generations, batch_seed, generate_ids

__all__ = ["BATCH_SIZE", "CONTINUATION_TOKENS", "DATA_FILE", "DECODINGS", "MAUVE_ORDER",
           "PROMPT_TOKENS", "Prompts", "bbc_prompts", "decoding_batch", "decoding_orders",
           "decoding_unit_rows", "generate_decodings", "load_decoding_generations",
           "write_decoding_generations"]

PROMPT_TOKENS = 32
CONTINUATION_TOKENS = 48
#: Prompts per ``generate`` call. All prompts have the same length, so there is no padding;
#: 64 rows keep a CPU's matrix kernels busy (about 0.3 s a continuation on two cores).
BATCH_SIZE = 64
DATA_FILE = Path(__file__).with_name("data") / "decoding_generations.json.gz"

#: The decodings, in the order of the study, with their ``model.generate`` settings.
#: ``top_k=0`` switches off transformers' default top-k of 50, so that "pure" sampling,
#: nucleus and temperature draw from the whole vocabulary as in MAUVE's paper.
DECODINGS = {
    "greedy": {"do_sample": False},
    "pure": {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0},
    "top-p 0.9": {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 0.9},
    "top-p 0.95": {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 0.95},
    "T 0.7": {"do_sample": True, "temperature": 0.7, "top_k": 0, "top_p": 1.0},
    "T 1.3": {"do_sample": True, "temperature": 1.3, "top_k": 0, "top_p": 1.0},
}
_STOPS = ("<|endoftext|>", "<|im_end|>")


def _check_decoding(decoding) -> str:
    if decoding not in DECODINGS:
        raise ValueError(f"unknown decoding {decoding!r}; known: {', '.join(DECODINGS)}")
    return decoding


def _stream(decoding: str) -> int:
    """The sampling stream of a decoding: from its name, so that adding or reordering
    decodings changes no other decoding's draws."""
    return zlib.crc32(decoding.encode("utf-8"))


# ---------------------------------------------------------------------------- prompts
@dataclass(frozen=True)
class Prompts:
    """Prompts and human continuations from BBC News articles.

    Attributes
    ----------
    articles : tuple of str
        ``"topic/article_id"`` of each prompt's article.
    prompt_ids : tuple of tuple of int
        The first ``PROMPT_TOKENS`` SmolLM2 token ids of each article body.
    prompts : tuple of str
        ``prompt_ids`` decoded.
    human : tuple of str
        The next ``CONTINUATION_TOKENS`` token ids, decoded: the human continuation.
    """

    articles: tuple[str, ...]
    prompt_ids: tuple[tuple[int, ...], ...]
    prompts: tuple[str, ...]
    human: tuple[str, ...]


def _eligible(tokenizer) -> list[tuple[str, list[int]]]:
    """(article name, first prompt + continuation token ids) of the eligible articles."""
    from markeval.datasets import bbc_sentences, load_bbc

    # bbc_sentences defines the halves; an article without a sentence of 5 words (none in
    # split 'b') would be too short anyway.
    half = set(map(tuple, bbc_sentences(split="b")[["topic", "article_id"]].to_numpy()))
    held_out = [a for a in load_bbc() if (a.topic, a.article_id) in half]
    ids = tokenizer([" ".join(a.sentences) for a in held_out],
                    add_special_tokens=False)["input_ids"]
    need = PROMPT_TOKENS + CONTINUATION_TOKENS
    out, seen = [], set()
    for article, row in zip(held_out, ids):
        prompt = tuple(row[:PROMPT_TOKENS])
        if len(row) >= need and prompt not in seen:  # repeated stories give repeated prompts
            seen.add(prompt)
            out.append((f"{article.topic}/{article.article_id}", row[:need]))
    return out


def bbc_prompts(n: int, *, seed: int = 0, tokenizer=None) -> Prompts:
    """``n`` prompts and human continuations from held-out BBC News articles.

    See the module's docstring for which articles and why.

    Parameters
    ----------
    n : int
        Number of articles, 1 to the number eligible (1,021).
    seed : int, default 0
        Seeds the choice of articles.
    tokenizer : optional
        SmolLM2's tokenizer; default that of :func:`markeval.encoders.causal_lm.load_causal_lm`
        (loading the model takes about 20 s, once per process).

    Returns
    -------
    Prompts

    Examples
    --------
    >>> p = bbc_prompts(2, seed=0)  # doctest: +SKIP
    >>> len(p.prompt_ids[0]), p.articles  # doctest: +SKIP
    (32, ('politics/318', 'tech/344'))
    """
    n = check_int(n, "n", minimum=1)
    seed = check_seed(seed)
    if tokenizer is None:
        from markeval.encoders.causal_lm import load_causal_lm

        tokenizer = load_causal_lm(device="cpu")[1]
    pool = _eligible(tokenizer)
    if n > len(pool):
        raise ValueError(f"n={n} is too large: BBC split 'b' has {len(pool)} articles with "
                         f"{PROMPT_TOKENS + CONTINUATION_TOKENS} tokens and a distinct prompt")
    chosen = [pool[i] for i in np.random.default_rng(seed).permutation(len(pool))[:n]]
    prompt_ids = tuple(tuple(ids[:PROMPT_TOKENS]) for _, ids in chosen)
    return Prompts(articles=tuple(name for name, _ in chosen), prompt_ids=prompt_ids,
                   prompts=tuple(tokenizer.batch_decode([list(p) for p in prompt_ids])),
                   human=tuple(tokenizer.batch_decode([ids[PROMPT_TOKENS:] for _, ids in chosen])))


# ---------------------------------------------------------------------------- generation
def decoding_batch(prompt_ids, decoding: str, *, seed: int = 0, batch: int = 0,
                   max_new_tokens: int = CONTINUATION_TOKENS,
                   device: str = "cpu") -> tuple[list[str], list[int]]:
    """Continue one batch of prompts with SmolLM2 under one decoding.

    Parameters
    ----------
    prompt_ids : list of list of int
        The batch's prompts as token ids, without the ``<|endoftext|>`` context token (added
        here).
    decoding : str
        A name of :data:`DECODINGS`.
    seed : int, default 0
    batch : int, default 0
        The batch's index: with ``seed`` and ``decoding`` it seeds torch
        (:func:`markeval.experiments.generators.batch_seed`).
    max_new_tokens : int, default CONTINUATION_TOKENS
    device : str, default "cpu"

    Returns
    -------
    texts : list of str
        Each prompt's continuation, decoded, without the prompt and the stop token.
    new_tokens : list of int
        Its length in tokens (``max_new_tokens`` unless the model stopped).

    Examples
    --------
    >>> p = bbc_prompts(2)  # doctest: +SKIP
    >>> decoding_batch(p.prompt_ids, "greedy", max_new_tokens=4)  # doctest: +SKIP
    (['-based survey.', ' the BBC, will'], [4, 4])
    """
    from markeval.encoders.causal_lm import SMOLLM2_PREFIX, load_causal_lm

    settings = DECODINGS[_check_decoding(decoding)]
    seed = check_seed(seed)
    batch = check_int(batch, "batch", minimum=0)
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens", minimum=1)
    model, tok = load_causal_lm(device=device)
    start = tok.convert_tokens_to_ids(SMOLLM2_PREFIX)
    stops = sorted({tok.convert_tokens_to_ids(t) for t in _STOPS})
    rows = generate_ids(model, [[start, *p] for p in prompt_ids],
                        seed=batch_seed(seed, _stream(decoding), batch), pad_id=start,
                        stop_ids=stops, max_new_tokens=max_new_tokens, device=device, **settings)
    # A finished row is padded with <|endoftext|>: cut each row at its first stop.
    cut = [next((i for i, t in enumerate(row) if t in stops), len(row)) for row in rows]
    texts = tok.batch_decode([row[:k] for row, k in zip(rows, cut)])
    return texts, cut


def _prompts_sha256(prompt_ids) -> str:
    return hashlib.sha256(json.dumps([list(p) for p in prompt_ids]).encode()).hexdigest()


def _open_cache(path: Path, header: dict) -> dict:
    """The batches a JSON-lines cache holds, ``{(decoding, batch): record}``.

    A missing file is created with ``header`` as its first line; a file made with another
    header is refused. A last line cut short (a kill while appending) is removed, so the next
    batch starts on a line of its own; any other unreadable line is ignored with a warning.
    """
    header = json.loads(json.dumps(header))  # as it reads back (tuples become lists)
    if not path.exists() or path.stat().st_size == 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(header) + "\n", encoding="utf-8")
        return {}
    raw = path.read_bytes()
    whole = raw[: raw.rfind(b"\n") + 1]
    if len(whole) < len(raw):
        with open(path, "r+b") as fh:
            fh.truncate(len(whole))
    lines = whole.decode("utf-8").splitlines()
    try:
        found = json.loads(lines[0]) if lines else None
    except ValueError:
        found = None
    if found != header:
        differ = (sorted(k for k in header | found if header.get(k) != found.get(k))
                  if isinstance(found, dict) else "its first line is not a header")
        raise ValueError(f"the cache {path} holds batches made with other settings (differ: "
                         f"{differ}): delete it to start over, or pass another cache path")
    done = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = json.loads(line)
            key = (record["decoding"], record["batch"])
            if key[0] not in DECODINGS or len(record["texts"]) != len(record["new_tokens"]):
                raise ValueError("not a batch of this study")
        except (ValueError, KeyError, TypeError) as err:
            warnings.warn(f"{path}, line {number}: unreadable ({err}); that batch is generated "
                          "again", CacheWarning, stacklevel=3)
            continue
        done[key] = record
    return done


def generate_decodings(prompt_ids, *, seed: int = 0, decodings=None, batch_size: int = BATCH_SIZE,
                       max_new_tokens: int = CONTINUATION_TOKENS, cache: Path | None = None,
                       device: str = "cpu", progress: bool = True) -> dict:
    """Continue every prompt under every decoding, batch by batch, resuming from ``cache``.

    Each finished batch is appended to ``cache`` (JSON lines: a header with the settings,
    then one line per batch: decoding, batch index, texts, new-token counts, seconds), so a
    run interrupted by Ctrl-C or a crash loses at most the batch under way: run it again with
    the same arguments and it skips the batches the cache holds. A cache made with other
    settings (seed, batch size, prompts, device ...) is refused, never mixed in.

    Parameters
    ----------
    prompt_ids : list of list of int
        Prompts as token ids (:attr:`Prompts.prompt_ids`).
    seed : int, default 0
    decodings : iterable of str, optional
        Names of :data:`DECODINGS`; default all, in their order.
    batch_size : int, default BATCH_SIZE
    max_new_tokens : int, default CONTINUATION_TOKENS
    cache : path, optional
        The JSON-lines file; default none (nothing saved, nothing resumed).
    device : str, default "cpu"
    progress : bool, default True
        One tqdm bar over the batches still to generate.

    Returns
    -------
    dict
        ``texts`` and ``new_tokens`` (decoding -> one entry per prompt), ``seconds``
        (decoding -> wall time of the batches generated by this call), ``resumed``
        (decoding -> indices of the batches read from the cache) and ``batch_seconds``
        (decoding -> each batch's generation time, as recorded when it was generated).
    """
    from tqdm import tqdm

    prompt_ids = [list(p) for p in prompt_ids]
    if not prompt_ids:
        raise ValueError("prompt_ids is empty: there is nothing to continue")
    seed = check_seed(seed)
    names = list(DECODINGS) if decodings is None else [_check_decoding(d) for d in decodings]
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens", minimum=1)
    progress = check_bool(progress, "progress")
    n_batches = -(-len(prompt_ids) // batch_size)
    done = {}
    if cache is not None:
        cache = Path(cache)
        header = {"seed": seed, "batch_size": batch_size, "max_new_tokens": max_new_tokens,
                  "device": device, "decodings": DECODINGS,
                  "prompts_sha256": _prompts_sha256(prompt_ids)}
        done = _open_cache(cache, header)
    todo = [(d, b) for d in names for b in range(n_batches) if (d, b) not in done]
    records = dict(done)
    seconds = {d: 0.0 for d in names}
    bar = tqdm(todo, desc="SmolLM2 decodings", unit="batch", disable=not progress)
    for d, b in bar:
        bar.set_postfix_str(f"{d}, batch {b + 1}/{n_batches}")
        start = time.perf_counter()
        texts, new = decoding_batch(prompt_ids[b * batch_size:(b + 1) * batch_size], d, seed=seed,
                                    batch=b, max_new_tokens=max_new_tokens, device=device)
        took = time.perf_counter() - start
        seconds[d] += took
        records[d, b] = {"decoding": d, "batch": b, "texts": texts, "new_tokens": new,
                         "seconds": round(took, 2)}
        if cache is not None:
            # One write per line, flushed to disk: a kill can cut only the line being written.
            with open(cache, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(records[d, b], ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
    bar.close()
    out = {"texts": {}, "new_tokens": {}, "seconds": {}, "resumed": {}, "batch_seconds": {}}
    for d in names:
        batches = [records[d, b] for b in range(n_batches)]
        out["texts"][d] = [t for r in batches for t in r["texts"]]
        out["new_tokens"][d] = [k for r in batches for k in r["new_tokens"]]
        out["seconds"][d] = round(seconds[d], 1)
        out["resumed"][d] = [b for b in range(n_batches) if (d, b) in done]
        out["batch_seconds"][d] = [records[d, b]["seconds"] for b in range(n_batches)]
    return out


# ---------------------------------------------------------------------------- the file
def _settings(n: int, seed: int, batch_size: int, device: str) -> dict:
    return {"n": n, "seed": seed,
            "data": "BBC News split 'b': article bodies, repeated prompts dropped",
            "prompt_tokens": PROMPT_TOKENS, "continuation_tokens": CONTINUATION_TOKENS,
            "max_new_tokens": CONTINUATION_TOKENS, "context": "<|endoftext|>",
            "stops": list(_STOPS), "decodings": DECODINGS, "batch_size": batch_size,
            "device": device}


# How the texts were made on this machine, not what they are: a file made with another batch
# size or on a GPU answers the same question.
_HOW = ("batch_size", "device")


def write_decoding_generations(n: int, *, seed: int = 0, path: Path = DATA_FILE,
                               device: str = "cpu", threads: int | None = None,
                               batch_size: int = BATCH_SIZE, cache: Path | None = None,
                               progress: bool = True) -> Path:
    """Generate the decoding study for ``n`` prompts and save it as gzip-compressed JSON.

    Resumable: finished batches go to ``cache`` as they come (:func:`generate_decodings`), and
    running this again after an interruption skips them. The cache is deleted once ``path``
    is written.

    Parameters
    ----------
    n : int
        Prompts (BBC articles), each continued under every decoding.
    seed : int, default 0
        Seeds the articles and the sampling.
    path : path, default DATA_FILE
        The output, written atomically (:func:`markeval.cache.atomic_write`).
    device : str, default "cpu"
    threads : int, optional
        ``torch.set_num_threads`` during the run (restored after it); default torch's.
    batch_size : int, default BATCH_SIZE
    cache : path, optional
        Default: ``path`` with ``.partial.jsonl`` appended.
    progress : bool, default True

    Returns
    -------
    pathlib.Path
        ``path``. The JSON holds ``settings``, ``model_file``, ``model_sha256``, ``torch``,
        ``transformers``, ``seconds`` (per decoding, generated by this call only),
        ``resumed`` (per decoding, the batches read from the cache instead),
        ``batch_seconds``, ``articles``, ``prompts``, ``human``, ``texts`` and ``new_tokens``
        (per decoding, one per prompt).
    """
    import torch
    import transformers

    from markeval.datasets import sha256_file
    from markeval.encoders.causal_lm import load_causal_lm, smollm2_path
    from markeval.encoders.loading import normalize_device

    n = check_int(n, "n", minimum=1)
    seed = check_seed(seed)
    device = normalize_device(device)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    if threads is not None:
        threads = check_int(threads, "threads", minimum=1)
    path = Path(path)
    cache = Path(cache) if cache is not None else path.with_name(path.name + ".partial.jsonl")
    before = torch.get_num_threads()
    try:
        if threads is not None:
            torch.set_num_threads(threads)
        prompts = bbc_prompts(n, seed=seed, tokenizer=load_causal_lm(device=device)[1])
        gen = generate_decodings(prompts.prompt_ids, seed=seed, batch_size=batch_size,
                                 cache=cache, device=device, progress=progress)
    finally:
        torch.set_num_threads(before)
    model = smollm2_path()
    data = {"settings": _settings(n, seed, batch_size, device), "model_file": model.name,
            "model_sha256": sha256_file(model), "torch": torch.__version__,
            "transformers": transformers.__version__, "seconds": gen["seconds"],
            "resumed": gen["resumed"], "batch_seconds": gen["batch_seconds"],
            "articles": list(prompts.articles), "prompts": list(prompts.prompts),
            "human": list(prompts.human), "texts": gen["texts"], "new_tokens": gen["new_tokens"]}
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    # mtime=0: the same data gives the same bytes (a rerun leaves git nothing to commit).
    atomic_write(path, lambda fh: fh.write(gzip.compress(text.encode("utf-8"), mtime=0)))
    cache.unlink()
    return path


def load_decoding_generations(n: int | None = None, *, seed: int = 0,
                              path: Path = DATA_FILE) -> dict | None:
    """The decoding study's generations if they were made for ``(n, seed)``; else None.

    Parameters
    ----------
    n : int, optional
        Number of prompts; default any.
    seed : int, default 0
    path : path, default DATA_FILE

    Returns
    -------
    dict or None
        The content described in :func:`write_decoding_generations`; None when the file is
        missing, unreadable (with a :class:`markeval.cache.CacheWarning`) or made with other
        settings (another ``n`` or ``seed``, or other decodings or token counts than this
        module's). The batch size and device may differ.

    Examples
    --------
    >>> data = load_decoding_generations()
    >>> data is None or list(data["texts"]) == list(DECODINGS)
    True
    """
    if n is not None:
        n = check_int(n, "n", minimum=1)
    seed = check_seed(seed)
    data = read_generations(Path(path))
    if data is None:
        return None
    found = data["settings"]
    want = _settings(found.get("n") if n is None else n, seed, None, None)
    return data if all(found.get(k) == v for k, v in want.items() if k not in _HOW) else None


# ---------------------------------------------------------------------------- scoring
#: The decodings MAUVE's paper orders (its §4: nucleus sampling closest to human text, then
#: pure sampling, then greedy decoding), best first: both nucleus settings tie for first.
MAUVE_ORDER = (("top-p 0.9", "top-p 0.95"), ("pure",), ("greedy",))


def _round_rows(n: int, round_index: int, fraction: float, seed: int) -> np.ndarray:
    """The prompts a round scores: all of them in round 0, else a random ``fraction``, drawn
    by a generator seeded by ``(seed, round)`` alone. One draw for every set: the continuations
    of a prompt (human and each decoding's) stay together."""
    if round_index == 0:
        return np.arange(n)
    rng = np.random.default_rng([seed, round_index])
    return np.sort(rng.choice(n, max(2, round(fraction * n)), replace=False))


def decoding_unit_rows(round_index: int, settings: dict) -> "pd.DataFrame":
    """The rows of one unit of the stage ``decoding``: every metric of ``settings["metrics"]``
    for every decoding's continuations against the human continuations of the same prompts,
    on round ``round_index``'s prompts (0: all ``settings["n"]``; later rounds: a random
    ``fraction``, for the intervals), long, protocol ``pooled``.

    The first ``n`` prompts of the packaged generations are used (a smaller ``n`` is the
    first part of a larger study). Continuations are embedded with ``settings["encoder"]``
    (disk-cached). Mark-Evaluate scores at ``me_k``, IPR at ``ipr_k``, PRD with ``prd_runs``
    clusterings; PRD and MAUVE cluster with the seed ``seed + round``. FID is the singular
    estimate when a set has no more rows than dimensions.
    """
    import pandas as pd

    from markeval import registry
    from markeval.datasets import cache_dir
    from markeval.experiments.sensitivity import default_encoder, scores
    from markeval.experiments.vocabulary import LONG_COLUMNS, encoder_name

    n = check_int(settings["n"], "n", minimum=2)
    round_index = check_int(round_index, "round_index", minimum=0,
                            maximum=check_int(settings["rounds"], "rounds", minimum=0))
    data = load_decoding_generations(seed=settings["seed"])
    if data is None:
        raise FileNotFoundError(f"no decoding generations for seed {settings['seed']} in "
                                f"{DATA_FILE}: python -m markeval.experiments.decoding "
                                f"--n {max(n, 1000)}")
    if len(data["human"]) < n:
        raise ValueError(f"n={n} exceeds the {len(data['human'])} prompts generated")
    encode = default_encoder(model=settings["encoder"], cache_dir=cache_dir() / "embeddings",
                             progress=False)
    rows = _round_rows(n, round_index, settings["fraction"], settings["seed"])
    human = np.asarray(encode(data["human"][:n]), dtype=np.float64)[rows]
    k_of = {"mark_evaluate": settings["me_k"], "ipr": settings["ipr_k"]}
    out = []
    for decoding in DECODINGS:
        model = np.asarray(encode(data["texts"][decoding][:n]), dtype=np.float64)[rows]
        values = scores(human, model, settings["metrics"], me_k=settings["me_k"],
                        ipr_k=settings["ipr_k"], prd_runs=settings["prd_runs"],
                        fid_allow_singular=len(rows) <= human.shape[1],
                        seed=settings["seed"] + round_index)
        out += [{"decoding": decoding, "metric": metric,
                 "k": k_of.get(registry.get(metric).family), "value": float(value)}
                for metric, value in values.items()]
    table = pd.DataFrame(out).assign(encoder=encoder_name(settings["encoder"]),
                                     protocol="pooled", options="")
    return table[["decoding", *LONG_COLUMNS]]


def decoding_orders(rows: "pd.DataFrame", order=MAUVE_ORDER) -> "pd.DataFrame":
    """Whether each metric orders the decodings as MAUVE's paper does, with bands over rounds.

    Parameters
    ----------
    rows : DataFrame
        Rows of the stage ``decoding`` (columns ``unit``, ``decoding``, ``metric``,
        ``value``), round ``round-000`` on all prompts and later rounds on subsets.
    order : tuple of tuples of str
        Groups of decodings, best first (default :data:`MAUVE_ORDER`).

    Returns
    -------
    pandas.DataFrame
        One row per metric (registry name): its oriented score (higher is better: a distance
        is negated) of each group's best decoding on all prompts, ``agrees`` (every group
        beats the next on all prompts), and ``rounds agreeing`` (the share of subset rounds in
        which it does; NaN without subset rounds).

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"unit": "round-000", "decoding": ["top-p 0.9", "pure", "greedy"],
    ...                      "metric": "mauve", "value": [0.9, 0.8, 0.1]})
    >>> decoding_orders(rows)[["metric", "agrees"]].to_dict("records")
    [{'metric': 'mauve', 'agrees': True}]
    """
    import pandas as pd

    from markeval import registry

    wide = rows.pivot_table(index=["unit", "metric"], columns="decoding", values="value")
    sign = np.array([1.0 if registry.get(m).higher_is_better else -1.0
                     for m in wide.index.get_level_values("metric")])
    wide = wide.mul(sign, axis=0)
    best = pd.concat({" / ".join(group): wide[[d for d in group if d in wide]].max(axis=1)
                      for group in order}, axis=1)
    agrees = pd.Series(True, index=best.index)
    for a, b in zip(best.columns, best.columns[1:]):
        agrees &= best[a] > best[b]
    full = best.xs("round-000", level="unit")
    out = full.assign(agrees=agrees.xs("round-000", level="unit"))
    rest = agrees[agrees.index.get_level_values("unit") != "round-000"]
    out["rounds agreeing"] = (rest.groupby(level="metric").mean() if len(rest)
                              else np.nan)
    names = registry.names()
    return out.reset_index().sort_values("metric", key=lambda m: m.map(names.index),
                                         ignore_index=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m markeval.experiments.decoding",
        description="Generate the decoding study (SmolLM2-135M continuing BBC News openings "
                    "under six decodings) and save it as gzip-compressed JSON. Resumable: "
                    "after Ctrl-C or a crash, run the same command again.")
    parser.add_argument("--n", type=int, default=1000, help="prompts (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: torch's; 1 on a shared machine)")
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument("--out", type=Path, default=DATA_FILE, help=f"default {DATA_FILE}")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    cache = args.out.with_name(args.out.name + ".partial.jsonl")
    try:
        path = write_decoding_generations(args.n, seed=args.seed, path=args.out,
                                          device=args.device, threads=args.threads,
                                          batch_size=args.batch_size, cache=cache,
                                          progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"\ninterrupted: the finished batches are in {cache}; run the same command again "
              "to continue from there", file=sys.stderr)
        return 130
    data = read_generations(path)
    print(f"wrote {path}")
    for name, s in data["seconds"].items():
        resumed = data["resumed"][name]
        print(f"  {name}: {s:.1f} s" + (f" ({len(resumed)} batches resumed from the cache)"
                                        if resumed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
