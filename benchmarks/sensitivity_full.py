"""Run the three sensitivity experiments at the paper's sizes (the `full` profile) and time them.

    MARKEVAL_PROFILE=full python benchmarks/sensitivity_full.py OUTDIR

Sentence embeddings are cached in ``cache_dir() / "embeddings"``: a second run re-encodes
nothing but the swapped texts it has not seen. Writes k_sweep.csv, mode_collapse.csv,
word_swap.csv and the verdict tables to OUTDIR and prints the time of each stage.
"""

import sys
import time
from pathlib import Path

from markeval.datasets import cache_dir
from markeval.experiments.sensitivity import (bbc_sets, default_encoder, k_sweep,
                                              mode_collapse, word_swap)
from markeval.experiments.sensitivity_verdicts import verdicts

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)
N_COLLAPSE, N_SWAP, SEEDS = 4000, 10000, (0, 1, 2)  # the paper's 4k + 4k and 10k + 10k
PS = tuple(i / 10 for i in range(11))
enc = default_encoder(cache_dir=cache_dir() / "embeddings", progress=True)
t0 = time.perf_counter()


def stamp(what):
    print(f"{what}: {time.perf_counter() - t0:.0f} s since start", flush=True)


ref, pool = bbc_sets(N_COLLAPSE)  # pool: every sentence of half 'b'
R, P = enc(ref), enc(list(pool["sentence"]))
stamp(f"encoded {len(ref)} + {len(pool)} sentences")
ev = P[pool.sample(N_COLLAPSE, random_state=0).index.sort_values()]
k_sweep(R, ev, range(1, 41)).to_csv(out / "k_sweep.csv", index=False)
stamp("K sweep, 4k + 4k, K = 1..40")
mc = mode_collapse(R, P, pool["topic"], seeds=SEEDS)
mc.to_csv(out / "mode_collapse.csv", index=False)
verdicts(mc, "mode_collapse").to_csv(out / "verdicts_mode_collapse.csv", index=False)
stamp("mode collapse, 4k + 4k, 3 seeds")
ref_s, pool_s = bbc_sets(N_SWAP)
ev_s = list(pool_s.sample(N_SWAP, random_state=0).sort_index()["sentence"])
ws = word_swap(enc(ref_s), ev_s, PS, seeds=SEEDS, encoder=enc)
ws.to_csv(out / "word_swap.csv", index=False)
verdicts(ws, "word_swap").to_csv(out / "verdicts_word_swap.csv", index=False)
stamp("word swap, 10k + 10k, 11 p, 3 seeds")
