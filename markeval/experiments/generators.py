"""A ladder of text generators whose quality order is known by construction.

Mark-Evaluate's §5 (Tables 1 and 4) ranks ten generators by human fluency ratings (Cífka et
al. 2018); those texts and ratings are not public. This module builds the honest analogue on BBC
News: generators whose order is known *because we built them that way*.

Data (all from :func:`markeval.datasets.bbc_sentences`, ``unique=True``)
--------------------------------------------------------------------------
* **train**: split ``"a"``: the n-gram generators learn from it.
* **held-out**: split ``"b"``, shuffled with ``seed`` and cut into the **reference** set (``n``
  sentences: what every generator is compared with), the **real** pool (``n`` other sentences:
  the "real" generator, the source of word-swap noise and of the SmolLM2 prompts), and the rest.
  The **CE text** (the real text an n-gram LM learns from for forward cross-entropy, and the
  vocabulary of both cross-entropies) is all of split ``"b"`` except the real pool and the
  collapsed generators' sentences, so that the judge has seen no generator's output.

Generators (each emits exactly ``n`` non-empty sentences)
---------------------------------------------------------
* ``real``: held-out sentences: the ceiling of quality and diversity.
* ``swap-p``: the real pool with word-swap noise ``p``
  (:func:`markeval.experiments.sensitivity.swapped_texts`: each word joins the shuffle with
  probability ``p``): quality falls with ``p`` by construction; diversity (the set of words
  and topics) is unchanged.
* ``ngram-m``: an interpolated Kneser–Ney n-gram LM of order ``m`` (1–5, discount 0.75),
  sampled at temperature 1: quality rises with ``m`` (more context), but less than one might
  think: a context seen once passes 75% of its mass to the lower order, so high-order samples
  mostly back off (in the ``ci`` run only 23% of the 5-gram's word 4-grams occur in the
  training half, 8% of the trigram's). Orders 3–5 are close calls, kept in the chain.
* ``ngram3-T``: the trigram at temperature ``T``: quality falls with ``T`` (``T > 1`` flattens
  towards word salad) while diversity first rises; below 1 the samples concentrate on frequent
  phrases (fluent, repetitive). The quality order of ``T < 1`` against ``T = 1`` is the
  ambiguous quality–diversity trade-off, so it is not forced.
* ``smollm2-T``: SmolLM2-135M continuing the first three words of a real-pool sentence
  (prompted, because unprompted from ``<|endoftext|>`` it writes web text, code and maths, not
  news); quality falls with ``T`` for ``T >= 1``; 0.7 vs 1.0 is again the trade-off.
  Generating is slow on a CPU, so the ``ci`` sizes ship as package data
  (:func:`write_smollm2_cache`, ``python -m markeval.experiments.generators --write-cache``).
* ``collapsed-1``/``collapsed-2``: real held-out sentences from one (sports) or two (sports,
  tech) of the five topics: quality as high as ``real``, diversity lower, 1 < 2 < 5 topics.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from markeval._checks import (check_bool, check_choice, check_int, check_number, check_seed,
                              check_strings)
from markeval._signature import make_signature
from markeval.cache import CacheWarning, atomic_write
from markeval.datasets import sha256_file
from markeval.experiments.sensitivity import swapped_texts
from markeval.text import split_sentences

__all__ = ["CACHE_FILE", "DIVERSITY_CHAINS", "GENERATORS", "QUALITY_CHAINS", "SMOLLM2_TEMPERATURES",
           "GeneratorSpec", "Ladder", "batch_seed", "build_ladder", "collapsed_sentences",
           "generate_ids", "load_smollm2_cache", "ngram_sentences", "read_generations",
           "smollm2_sentences", "write_smollm2_cache"]

SWAP_RATES = (0.1, 0.25, 0.5, 1.0)
NGRAM_ORDERS = (1, 2, 3, 4, 5)
NGRAM_TEMPERATURES = (0.5, 0.7, 1.5, 2.0)
SMOLLM2_TEMPERATURES = (0.7, 1.0, 1.3)
COLLAPSED_TOPICS = {1: ("sports",), 2: ("sports", "tech")}
PROMPT_WORDS = 3
_MAX_NEW_TOKENS = 40
_BATCH = 20
CACHE_FILE = Path(__file__).with_name("data") / "smollm2_generations.json"


@dataclass(frozen=True)
class GeneratorSpec:
    """One rung of the ladder.

    Attributes
    ----------
    name : str
    family : str
        ``real``, ``swap``, ``ngram``, ``temperature``, ``smollm2`` or ``collapsed``.
    why : str
        What it is and where it should rank.
    """

    name: str
    family: str
    why: str


def _specs() -> tuple[GeneratorSpec, ...]:
    s = [GeneratorSpec("real", "real", "held-out BBC sentences: the ceiling of quality and diversity")]
    s += [GeneratorSpec(f"swap-{p:g}", "swap", f"real sentences, each word shuffled with "
                        f"probability {p:g}: less fluent as p grows, same words")
          for p in SWAP_RATES]
    s += [GeneratorSpec(f"ngram-{m}", "ngram", f"Kneser-Ney {m}-gram at T=1: more context, more "
                        "fluent") for m in NGRAM_ORDERS]
    s += [GeneratorSpec(f"ngram3-T{t:g}", "temperature", "the trigram sharpened (T<1: fluent, "
                        "repetitive) or flattened (T>1: towards word salad)") for t in NGRAM_TEMPERATURES]
    s += [GeneratorSpec(f"smollm2-T{t:g}", "smollm2", "SmolLM2-135M continuing 3 real words: T>1 "
                        "drifts off the news distribution") for t in SMOLLM2_TEMPERATURES]
    s += [GeneratorSpec(f"collapsed-{k}", "collapsed", f"real sentences from {'+'.join(t)} only: "
                        f"real quality, {k} of 5 topics") for k, t in COLLAPSED_TOPICS.items()]
    return tuple(s)


GENERATORS: tuple[GeneratorSpec, ...] = _specs()

# The orders fixed by construction, best first. Each chain is a total order; generators in
# different chains are not compared (is a 5-gram better than 25% word swaps? nothing in the
# construction says). Left out on purpose, because the construction does not decide them:
# trigram T<1 against T=1 and SmolLM2 T=0.7 against T=1 in quality (sharper sampling is more
# fluent but less varied: the quality-diversity trade-off), and the collapsed generators in
# quality (they emit real sentences: a tie with ``real``).
QUALITY_CHAINS = {
    "word swap": ("real", *(f"swap-{p:g}" for p in SWAP_RATES)),
    "n-gram order": ("real", *(f"ngram-{m}" for m in reversed(NGRAM_ORDERS))),
    "n-gram T>=1": ("real", "ngram-3", *(f"ngram3-T{t:g}" for t in NGRAM_TEMPERATURES if t > 1)),
    "SmolLM2 T>=1": ("real", *(f"smollm2-T{t:g}" for t in SMOLLM2_TEMPERATURES if t >= 1)),
}
DIVERSITY_CHAINS = {
    "topics": ("real", "collapsed-2", "collapsed-1"),
    "n-gram T<=1": ("ngram-3", *(f"ngram3-T{t:g}" for t in reversed(NGRAM_TEMPERATURES) if t < 1)),
}


def ngram_sentences(lm, n: int, *, temperature: float = 1.0, seed: int = 0) -> list[str]:
    """``n`` non-empty sentences sampled from a fitted :class:`markeval.NGramLM`.

    Empty samples (``</s>`` drawn first) are skipped, so the first ``n`` non-empty draws of
    one seeded stream are returned: deterministic under ``seed``.

    Examples
    --------
    >>> from markeval.lexical.ngram_lm import NGramLM
    >>> lm = NGramLM(order=2, min_count=1).fit([["a", "b"], ["b", "a"]] * 3)
    >>> ngram_sentences(lm, 2, seed=0) == ngram_sentences(lm, 2, seed=0)
    True
    """
    n = check_int(n, "n", minimum=1)
    out: list[str] = []
    round_ = 0
    while len(out) < n:
        draws = lm.generate(n - len(out), seed=seed + 1_000_003 * round_, temperature=temperature)
        out.extend(" ".join(s) for s in draws if s)
        round_ += 1
        if round_ > 100:
            raise RuntimeError("the n-gram LM keeps generating empty sentences")
    return out


def collapsed_sentences(table, topics, n: int, *, seed: int = 0) -> list[str]:
    """``n`` sentences drawn without replacement from rows of ``table`` in ``topics`` only.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"topic": ["a", "b", "a"], "sentence": ["x y", "z", "u v"]})
    >>> sorted(collapsed_sentences(t, ["a"], 2))
    ['u v', 'x y']
    """
    n = check_int(n, "n", minimum=1)
    topics = [topics] if isinstance(topics, str) else list(topics)
    pool = table[table["topic"].isin(topics)]["sentence"].tolist()
    if len(pool) < n:
        raise ValueError(f"only {len(pool)} sentences in topics {topics}, {n} needed")
    idx = np.random.default_rng(check_seed(seed)).choice(len(pool), size=n, replace=False)
    return [pool[i] for i in idx]


# ---------------------------------------------------------------------------- SmolLM2
def _first_sentence(text: str) -> str:
    text = text.split("<|")[0]  # a special token such as <|im_end|> ends the text
    pieces = split_sentences(text)
    return pieces[0] if pieces else ""


def _prompt(sentence: str) -> str:
    return " ".join(sentence.split()[:PROMPT_WORDS])


def batch_seed(seed: int, stream: int, batch: int) -> int:
    """The torch seed of batch ``batch`` of sampling stream ``stream`` in a run seeded ``seed``.

    Seeding each batch on its own makes a batch regenerate identically whatever other batches
    (or streams) ran before it, so a cache can be checked, or a run resumed, batch by batch.

    Examples
    --------
    >>> batch_seed(0, 700, 3), batch_seed(1, 700, 3)
    (706303, 1706306)
    """
    return int(seed) * 1_000_003 + int(stream) * 1009 + int(batch)


def _batch_seed(seed: int, temperature: float, batch: int) -> int:
    return batch_seed(seed, round(temperature * 1000), batch)


def generate_ids(model, prompt_ids, *, seed: int, pad_id: int, stop_ids, max_new_tokens: int,
                 device: str = "cpu", **sampling) -> list[list[int]]:
    """One batch of ``model.generate``: the new token ids of each prompt.

    The shared core of SmolLM2 generation (:func:`smollm2_sentences`,
    :mod:`markeval.experiments.decoding`): the prompts (token id lists, context token
    included) are left-padded with ``pad_id`` (masked out), torch is seeded with ``seed``
    right before generating, and each row is returned without its prompt: at most
    ``max_new_tokens`` ids, ending with ``pad_id`` padding after a row that met one of
    ``stop_ids`` (the stop id itself included).

    Parameters
    ----------
    model
        A Hugging Face causal LM (:func:`markeval.encoders.causal_lm.load_causal_lm`).
    prompt_ids : list of list of int
    seed : int
        Passed to ``torch.manual_seed``.
    pad_id : int
    stop_ids : list of int
        ``eos_token_id`` of ``generate``.
    max_new_tokens : int
    device : str, default "cpu"
        Where the model is.
    **sampling
        The decoding's ``generate`` settings (``do_sample``, ``temperature``, ``top_k``,
        ``top_p`` ...).

    Returns
    -------
    list of list of int
        One row of ``<= max_new_tokens`` ids per prompt (rows of one batch share a length).
    """
    import torch

    width = max(map(len, prompt_ids))
    input_ids = torch.tensor([[pad_id] * (width - len(x)) + list(x) for x in prompt_ids])
    mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in prompt_ids])
    torch.manual_seed(seed)
    with torch.inference_mode():
        gen = model.generate(input_ids.to(device), attention_mask=mask.to(device),
                             max_new_tokens=max_new_tokens, eos_token_id=list(stop_ids),
                             pad_token_id=pad_id, **sampling)
    return gen[:, width:].tolist()


def smollm2_sentences(prompts, *, temperature: float, seed: int = 0, batch_size: int = _BATCH,
                      max_new_tokens: int = _MAX_NEW_TOKENS, batches=None, device: str = "cpu",
                      progress: bool = True) -> list[str]:
    """Continue each prompt with SmolLM2-135M by ancestral sampling; keep the first sentence.

    Every prompt is put after ``<|endoftext|>`` (SmolLM2's document separator) and the batch
    is left-padded. Sampling is plain (no top-k, no top-p) at ``temperature``, at most
    ``max_new_tokens`` tokens, stopping at a newline or end of text. The output is the first
    sentence (:func:`markeval.text.split_sentences`) of prompt + continuation. Batch ``b`` is
    sampled after ``torch.manual_seed(f(seed, temperature, b))``, so a batch regenerates
    identically on the same device and library versions, whatever other batches are run.

    Parameters
    ----------
    prompts : list of str
    temperature : float
        > 0.
    seed : int
    batch_size, max_new_tokens : int
    batches : iterable of int, optional
        Generate only these batches (e.g. ``[0]`` to check a cache); default all.
    device : str
    progress : bool, default True

    Returns
    -------
    list of str
        One sentence per prompt of the generated batches.
    """
    from tqdm import tqdm

    from markeval.encoders.causal_lm import SMOLLM2_PREFIX, load_causal_lm

    prompts = check_strings(prompts, "prompts", allow_empty_list=True)
    if check_number(temperature, "temperature") <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    max_new_tokens = check_int(max_new_tokens, "max_new_tokens", minimum=1)
    model, tok = load_causal_lm(device=device)
    start_id = tok.convert_tokens_to_ids(SMOLLM2_PREFIX)
    newline_ids = [i for t, i in tok.get_vocab().items() if "Ċ" in t]  # byte-level "\n"
    stops = sorted({start_id, tok.eos_token_id, *newline_ids})
    n_batches = math.ceil(len(prompts) / batch_size)
    todo = range(n_batches) if batches is None else list(batches)
    out = []
    for b in tqdm(todo, desc=f"SmolLM2 T={temperature:g}", disable=not progress):
        chunk = prompts[b * batch_size:(b + 1) * batch_size]
        ids = [[start_id] + tok(p, add_special_tokens=False)["input_ids"] for p in chunk]
        rows = generate_ids(model, ids, seed=_batch_seed(seed, temperature, b), pad_id=start_id,
                            stop_ids=stops, max_new_tokens=max_new_tokens, device=device,
                            do_sample=True, temperature=float(temperature), top_k=0, top_p=1.0)
        for p, row in zip(chunk, rows):
            cont = tok.decode(row, skip_special_tokens=False)
            out.append(_first_sentence(p + cont) or p)
    return out


def _smollm2_settings(n: int, seed: int) -> dict:
    return {"n": n, "seed": seed, "temperatures": list(SMOLLM2_TEMPERATURES),
            "prompt_words": PROMPT_WORDS, "max_new_tokens": _MAX_NEW_TOKENS, "batch_size": _BATCH,
            "sampling": "ancestral (top_k=0, top_p=1)", "device": "cpu"}


def write_smollm2_cache(n: int, *, seed: int = 0, path: Path = CACHE_FILE, progress: bool = True) -> Path:
    """Generate the SmolLM2 rungs for ``build_ladder(n, seed=seed)`` and save them as JSON.

    The JSON holds the settings, the seed, the GGUF file's name and SHA-256, the prompts and
    the texts per temperature, and the seconds each temperature took.
    """
    import torch
    import transformers

    from markeval.encoders.causal_lm import smollm2_path

    split = _held_out(n, seed)
    prompts = [_prompt(s) for s in split.real]
    texts, seconds = {}, {}
    for t in SMOLLM2_TEMPERATURES:
        start = time.perf_counter()
        texts[f"{t:g}"] = smollm2_sentences(prompts, temperature=t, seed=seed, progress=progress)
        seconds[f"{t:g}"] = round(time.perf_counter() - start, 1)
    model = smollm2_path()
    data = {"settings": _smollm2_settings(n, seed), "model_file": model.name,
            "model_sha256": sha256_file(model), "torch": torch.__version__,
            "transformers": transformers.__version__, "seconds": seconds,
            "prompts": prompts, "texts": texts}
    path = Path(path)
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
    return path


def read_generations(path: Path) -> dict | None:
    """The generations file's content (JSON, gzip-compressed when the name ends in ``.gz``);
    None (with a CacheWarning) when it cannot be read.

    The packaged file is not deleted when it is damaged (it is part of the installation):
    the caller's error then says how to write it again.
    """
    try:
        raw = path.read_bytes()
        data = json.loads((gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("settings"), dict):
            raise ValueError("no 'settings' object")
    except FileNotFoundError:
        return None
    except (OSError, EOFError, ValueError) as err:  # gzip: BadGzipFile (OSError), EOFError
        warnings.warn(f"the SmolLM2 generations file {path} is unreadable ({err}); "
                      "ignoring it", CacheWarning, stacklevel=3)
        return None
    return data


def load_smollm2_cache(n: int, *, seed: int = 0, path: Path = CACHE_FILE) -> dict | None:
    """The cached SmolLM2 generations if they were made for ``(n, seed)``; else None."""
    data = read_generations(Path(path))
    return data if data is not None and data["settings"] == _smollm2_settings(n, seed) else None


# ---------------------------------------------------------------------------- the ladder
@dataclass(frozen=True)
class _Split:
    reference: list[str]
    real: list[str]
    collapsed: dict  # number of topics -> sentences
    ce_text: list[str]


def _held_out(n: int, seed: int) -> _Split:
    from markeval.datasets import bbc_sentences

    b = bbc_sentences(split="b", unique=True)
    if len(b) < 4 * n:
        raise ValueError(f"n={n} is too large: split 'b' has {len(b)} sentences")
    order = np.random.default_rng(check_seed(seed)).permutation(len(b))
    ref, real, rest = order[:n], order[n:2 * n], b.iloc[order[2 * n:]]
    collapsed = {k: collapsed_sentences(rest, topics, n, seed=seed)
                 for k, topics in COLLAPSED_TOPICS.items()}
    # The forward-CE judge must not have seen any generator's output: drop the real pool
    # (real, swap, SmolLM2 prompts) and the collapsed draws from its training text.
    seen = set(b["sentence"].iloc[real]).union(*collapsed.values())
    return _Split(reference=b["sentence"].iloc[ref].tolist(), real=b["sentence"].iloc[real].tolist(),
                  collapsed=collapsed, ce_text=[t for t in b["sentence"] if t not in seen])


@dataclass(frozen=True)
class Ladder:
    """Generated sentences of every rung, the reference set and the text for cross-entropy.

    Attributes
    ----------
    reference : tuple of str
        ``n`` held-out sentences every generator is compared with.
    ce_text : tuple of str
        Held-out text for the forward-CE language model (no generator's sentences in it).
    generated : dict of str to tuple of str
        ``n`` sentences per generator name, in :data:`GENERATORS` order.
    seconds : dict of str to float
        Generation time per generator (SmolLM2: as measured when the cache was written).
    signature : str
    """

    reference: tuple[str, ...]
    ce_text: tuple[str, ...]
    generated: dict
    seconds: dict = field(default_factory=dict)
    signature: str = ""


def build_ladder(n: int, *, seed: int = 0, smollm2: str = "cache", names=None,
                 progress: bool = True) -> Ladder:
    """Build every generator of :data:`GENERATORS` with ``n`` sentences each.

    Parameters
    ----------
    n : int
        Sentences per generator (and in the reference set).
    seed : int
        Seeds the held-out split, the n-gram sampling, the word swaps, the collapsed draws and
        SmolLM2.
    smollm2 : {"cache", "generate", "skip"}
        ``"cache"``: read the packaged generations (error if they were made for another
        ``(n, seed)``); ``"generate"``: run SmolLM2 now (slow on a CPU); ``"skip"``: leave the
        SmolLM2 rungs out.
    names : iterable of str, optional
        Build only these generators.
    progress : bool, default True
        A bar per SmolLM2 temperature when generating.

    Returns
    -------
    Ladder
    """
    from markeval.lexical.ngram_lm import NGramLM
    from markeval.datasets import bbc_sentences

    n = check_int(n, "n", minimum=1)
    check_choice(smollm2, "smollm2", ("cache", "generate", "skip"))
    progress = check_bool(progress, "progress")
    known = [g.name for g in GENERATORS]
    wanted = known if names is None else list(names)
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise ValueError(f"unknown generators {unknown}; known: {known}")
    if smollm2 == "skip":
        wanted = [w for w in wanted if not w.startswith("smollm2")]
    split = _held_out(n, seed)
    gen, seconds = {}, {}

    def timed(name, fn):
        start = time.perf_counter()
        gen[name] = tuple(fn())
        seconds[name] = time.perf_counter() - start

    train = [s.split() for s in bbc_sentences(split="a", unique=True)["sentence"]]
    lms = {}
    for name in wanted:
        if name == "real":
            timed(name, lambda: split.real)
        elif name.startswith("swap-"):
            timed(name, lambda: swapped_texts(split.real, float(name[5:]), seed=seed))
        elif name.startswith("ngram"):
            order, t = (int(name[6:]), 1.0) if name.startswith("ngram-") else (3, float(name[8:]))

            def sample(order=order, t=t):
                if order not in lms:
                    lms[order] = NGramLM(order=order).fit(train)
                return ngram_sentences(lms[order], n, temperature=t, seed=seed + order)
            timed(name, sample)
        elif name.startswith("collapsed-"):
            timed(name, lambda: split.collapsed[int(name[10:])])
    smol = [w for w in wanted if w.startswith("smollm2")]
    if smol and smollm2 == "cache":
        data = load_smollm2_cache(n, seed=seed)
        if data is None:
            raise FileNotFoundError(
                f"no packaged SmolLM2 generations for n={n}, seed={seed} (the cache holds "
                f"{_cache_settings()}): pass smollm2='generate' (slow) or 'skip', or write them with "
                f"python -m markeval.experiments.generators --write-cache --n {n} --seed {seed}")
        if data["prompts"] != [_prompt(s) for s in split.real]:
            raise ValueError("the packaged SmolLM2 generations were made from other prompts (did the "
                             "BBC split change?): rewrite them with --write-cache")
        for name in smol:
            gen[name] = tuple(data["texts"][name[len("smollm2-T"):]])
            seconds[name] = data["seconds"][name[len("smollm2-T"):]]
    elif smol:
        prompts = [_prompt(s) for s in split.real]
        for name in smol:
            timed(name, lambda: smollm2_sentences(prompts, temperature=float(name[9:]), seed=seed,
                                                  progress=progress))
    gen = {k: gen[k] for k in known if k in gen}
    sig = make_signature("ladder", n=n, seed=seed, smollm2=smollm2, data="bbc:a/b")
    return Ladder(tuple(split.reference), tuple(split.ce_text), gen, seconds, sig)


def _cache_settings():
    data = read_generations(CACHE_FILE)
    if data is None:
        return "nothing"
    s = data["settings"]
    return f"n={s.get('n')}, seed={s.get('seed')}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m markeval.experiments.generators",
                                     description="Write the packaged SmolLM2 generations.")
    parser.add_argument("--write-cache", action="store_true", help="generate and save the cache")
    parser.add_argument("--n", type=int, default=100, help="sentences per temperature (ci: 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--path", type=Path, default=CACHE_FILE)
    args = parser.parse_args(argv)
    if not args.write_cache:
        parser.error("nothing to do: pass --write-cache")
    print(write_smollm2_cache(args.n, seed=args.seed, path=args.path))


if __name__ == "__main__":
    main()
