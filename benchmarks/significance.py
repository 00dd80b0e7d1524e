"""Paired significance tests on the 11 WMT17 de-en systems: markeval vs sacrebleu 2.6.

Each row runs one whole paired test from the texts: the first system is the baseline, the
other ten are compared with it; statistics are extracted for all 11 systems (references
prepared once by both libraries, tokenizer caches cleared before each run), then the
resamples or trials are scored. Rows:

- BLEU, paired bootstrap, 1000 resamples (``markeval.significance.paired_significance``
  vs ``sacrebleu.significance.PairedTest(test_type="bs")``, sacrebleu's ``--paired-bs``);
- BLEU, approximate randomization, 10000 trials (``--paired-ar``);
- chrF and TER, paired bootstrap, when their markeval modules exist.

Prints CPU seconds of this process (``time.process_time``; single-threaded BLAS), best of
``--repeats`` with the two sides alternating, the ratio markeval / sacrebleu (goal <= 0.5)
and whether the p-values agree.

    OPENBLAS_NUM_THREADS=1 python benchmarks/significance.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import time

from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

from markeval import text
from markeval.datasets import load_wmt17
from markeval.significance import paired_significance

logging.getLogger("sacrebleu").setLevel(logging.ERROR)


def clear_caches() -> None:
    text._token_cache.clear()
    Tokenizer13a.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()


def timed(fn):
    clear_caches()
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    data = load_wmt17("de-en")
    named = [(name, list(hyps)) for name, hyps in data.systems.items()]
    refs = list(data.references)
    ours_refs = [[r] for r in refs]
    rows = [("BLEU", "bleu", "bs", 1000, lambda: BLEU(references=[refs], force=True)),
            ("BLEU", "bleu", "ar", 10000, lambda: BLEU(references=[refs], force=True))]
    if importlib.util.find_spec("markeval.lexical.chrf"):
        rows.append(("chrF", "chrf", "bs", 1000, lambda: CHRF(references=[refs])))
    if importlib.util.find_spec("markeval.lexical.ter"):
        rows.append(("TER", "ter", "bs", 1000, lambda: TER(references=[refs])))
    print(f"{len(named)} systems x {len(refs)} sentences (WMT17 de-en), baseline "
          f"{named[0][0]}; CPU seconds, best of {args.repeats}")
    print(f"{'metric':<6} {'test':<4} {'n':>6} {'markeval':>9} {'sacrebleu':>10} {'ratio':>6}  "
          "p-values")
    for label, metric, test, n, make in rows:
        best = [float("inf"), float("inf")]
        for _ in range(args.repeats):
            t_ours, ours = timed(lambda: paired_significance(
                named[0], dict(named[1:]), ours_refs, metric=metric, test=test,
                n_resamples=n, progress=False))
            t_sacre, (_, theirs) = timed(lambda: PairedTest(
                named, {label: make()}, references=None, test_type=test, n_samples=n)())
            best = [min(best[0], t_ours), min(best[1], t_sacre)]
        theirs = list(theirs.values())[1]
        same = all(r.p_value == t.p_value for r, t in zip(ours.rows, theirs))
        print(f"{label:<6} {test:<4} {n:>6} {best[0]:>9.2f} {best[1]:>10.2f} "
              f"{best[0] / best[1]:>6.3f}  {'identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
