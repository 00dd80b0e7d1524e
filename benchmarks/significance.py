"""Paired significance tests on the 11 WMT17 de-en systems: markeval vs sacrebleu 2.6.

Each row runs one whole paired test from the texts: the first system is the baseline, the
other ten are compared with it; statistics are extracted for all 11 systems (references
prepared once by both libraries, tokenizer caches cleared before each run), then the
resamples or trials are scored. Rows:

- BLEU, paired bootstrap, 1000 resamples (``markeval.significance.paired_significance``
  vs ``sacrebleu.significance.PairedTest(test_type="bs")``, sacrebleu's ``--paired-bs``);
- BLEU, approximate randomization, 10000 trials (``--paired-ar``);
- chrF and TER, paired bootstrap.

Prints CPU seconds of this process (``time.process_time``; single-threaded BLAS), the median
of ``--repeats`` runs of each side, the runs interleaved (markeval, sacrebleu, markeval, ...)
so that a change in the machine's load falls on both; the ratio markeval / sacrebleu of the
medians (goal <= 0.5; issue #60 holds BLEU to 0.16 bs and 0.09 ar); and whether the p-values
agree. A p-value that differs from sacrebleu's makes the exit status 1.

    OPENBLAS_NUM_THREADS=1 python benchmarks/significance.py [--repeats 3] [--smoke]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
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


def interleaved(ours, theirs, repeats: int):
    """Median CPU seconds of ``ours()`` and ``theirs()`` run alternately ``repeats`` times
    each, and the outputs of their last runs."""
    times: tuple[list[float], list[float]] = ([], [])
    outs = [None, None]
    for _ in range(repeats):
        for i, fn in enumerate((ours, theirs)):
            seconds, outs[i] = timed(fn)
            times[i].append(seconds)
    return [statistics.median(t) for t in times], outs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 3 systems x 100 sentences, 50 resamples, "
                             "100 trials, 1 repeat")
    args = parser.parse_args()
    data = load_wmt17("de-en")
    named = [(name, list(hyps)) for name, hyps in data.systems.items()]
    refs = list(data.references)
    resamples, trials = 1000, 10000
    if args.smoke:
        named, refs = [(name, hyps[:100]) for name, hyps in named[:3]], refs[:100]
        args.repeats, resamples, trials = 1, 50, 100
    ours_refs = [[r] for r in refs]
    rows = [("BLEU", "bleu", "bs", resamples, lambda: BLEU(references=[refs], force=True)),
            ("BLEU", "bleu", "ar", trials, lambda: BLEU(references=[refs], force=True)),
            ("chrF", "chrf", "bs", resamples, lambda: CHRF(references=[refs])),
            ("TER", "ter", "bs", resamples, lambda: TER(references=[refs]))]
    print(f"{len(named)} systems x {len(refs)} sentences (WMT17 de-en), baseline "
          f"{named[0][0]}; CPU seconds, median of {args.repeats}, interleaved")
    print(f"{'metric':<6} {'test':<4} {'n':>6} {'markeval':>9} {'sacrebleu':>10} {'ratio':>6}  "
          "p-values", flush=True)
    differ = False
    for label, metric, test, n, make in rows:
        (t_ours, t_sacre), (ours, (_, theirs)) = interleaved(
            lambda: paired_significance(named[0], dict(named[1:]), ours_refs, metric=metric,
                                        test=test, n_resamples=n, progress=False),
            lambda: PairedTest(named, {label: make()}, references=None, test_type=test,
                               n_samples=n)(),
            args.repeats)
        theirs = list(theirs.values())[1]
        same = all(r.p_value == t.p_value for r, t in zip(ours.rows, theirs))
        differ |= not same
        print(f"{label:<6} {test:<4} {n:>6} {t_ours:>9.2f} {t_sacre:>10.2f} "
              f"{t_ours / t_sacre:>6.3f}  {'identical' if same else 'DIFFER'}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
