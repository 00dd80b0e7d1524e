"""Run the three sensitivity experiments at the paper's sizes (the `full` profile) and time them.

    MARKEVAL_PROFILE=full python benchmarks/sensitivity_full.py OUTDIR [STAGE ...]

STAGE is any of ``k_sweep``, ``mode_collapse``, ``word_swap`` (default: all three). The sizes
are the paper's (Mark-Evaluate §3 and §4): the K sweep and word swap on 10k + 10k sentences,
mode collapse on 4k + 4k. Sentence embeddings are cached in ``cache_dir() / "embeddings"``: a
second run re-encodes nothing but the swapped texts it has not seen. Writes k_sweep.csv,
mode_collapse.csv, word_swap.csv and the verdict tables to OUTDIR and prints the time of each
stage.
"""

import sys
import time
from pathlib import Path

from markeval.datasets import cache_dir
from markeval.experiments.sensitivity import (bbc_sets, default_encoder, k_sweep,
                                              mode_collapse, word_swap)
from markeval.experiments.sensitivity_verdicts import k_sweep_verdicts, verdicts

STAGES = ("k_sweep", "mode_collapse", "word_swap")
out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
stages = sys.argv[2:] or list(STAGES)
unknown = sorted(set(stages) - set(STAGES))
if unknown:
    sys.exit(f"unknown stage(s) {unknown}; choose from {STAGES}")
out.mkdir(parents=True, exist_ok=True)
N_COLLAPSE, N_10K, SEEDS = 4000, 10000, (0, 1, 2)  # the paper's 4k + 4k and 10k + 10k
PS = tuple(i / 10 for i in range(11))
enc = default_encoder(cache_dir=cache_dir() / "embeddings", progress=True)
t0 = time.perf_counter()


def stamp(what):
    print(f"{what}: {time.perf_counter() - t0:.0f} s since start", flush=True)


if "k_sweep" in stages or "word_swap" in stages:
    ref_10k, pool_10k = bbc_sets(N_10K)
    ref_10k_emb = enc(ref_10k)
    ev_10k = list(pool_10k.sample(N_10K, random_state=0).sort_index()["sentence"])
    stamp(f"encoded the {N_10K}-sentence reference")
if "k_sweep" in stages:
    ksw = k_sweep(ref_10k_emb, enc(ev_10k), range(1, 41))
    ksw.to_csv(out / "k_sweep.csv", index=False)
    k_sweep_verdicts(ksw).to_csv(out / "verdicts_k_sweep.csv", index=False)
    stamp("K sweep, 10k + 10k, K = 1..40")
if "mode_collapse" in stages:
    ref, pool = bbc_sets(N_COLLAPSE)  # pool: every sentence of half 'b'
    R, P = enc(ref), enc(list(pool["sentence"]))
    stamp(f"encoded {len(ref)} + {len(pool)} sentences")
    mc = mode_collapse(R, P, pool["topic"], seeds=SEEDS)
    mc.to_csv(out / "mode_collapse.csv", index=False)
    verdicts(mc, "mode_collapse").to_csv(out / "verdicts_mode_collapse.csv", index=False)
    stamp("mode collapse, 4k + 4k, 3 seeds")
if "word_swap" in stages:
    ws = word_swap(ref_10k_emb, ev_10k, PS, seeds=SEEDS, encoder=enc)
    ws.to_csv(out / "word_swap.csv", index=False)
    verdicts(ws, "word_swap").to_csv(out / "verdicts_word_swap.csv", index=False)
    stamp("word swap, 10k + 10k, 11 p, 3 seeds")
