"""Corpus BLEU and GLEU over the 11 WMT17 de-en systems: markeval vs sacrebleu 2.6 and NLTK 3.10.

Each timing scores all 11 systems against the shared reference, starting from cold
tokenizer caches (markeval's and sacrebleu's), so the references are tokenised once per
run by both and every hypothesis is tokenised afresh. Rows:

- BLEU, 13a and none: ``markeval.bleu(hyps, refs)`` vs ``sacrebleu.corpus_bleu`` (the plain
  calls), and ``bleu(hyps, NGramReferences(refs))`` vs ``BLEU(references=...)`` (both
  libraries' way to reuse references across systems).
- GLEU: ``markeval.gleu(hyps, refs, tokenize="none")`` vs NLTK ``corpus_gleu`` on
  whitespace-split tokens (the split is timed for NLTK as tokenisation is for markeval).

Prints CPU seconds of this process (``time.process_time``: all the work is single-threaded,
and CPU time is not inflated by other jobs on a shared machine; best of ``--repeats``, the
two sides alternating), the ratio markeval / anchor (goal <= 0.5) and the largest score
difference.

    python benchmarks/bleu.py [--repeats 3] [--smoke]
"""

from __future__ import annotations

import argparse
import time

import sacrebleu
from nltk.translate.gleu_score import corpus_gleu
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

from markeval import text
from markeval.datasets import load_wmt17
from markeval.lexical.bleu import NGramReferences, bleu
from markeval.lexical.gleu import gleu


def clear_caches() -> None:
    text._token_cache.clear()
    Tokenizer13a.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()


def compare(ours, anchor, repeats: int):
    """Best-of-``repeats`` seconds and outputs of both, alternating so that load spikes on a
    shared machine hit both sides alike."""
    best = [float("inf"), float("inf")]
    outs = [None, None]
    for _ in range(repeats):
        for i, fn in enumerate((ours, anchor)):
            clear_caches()
            start = time.process_time()
            outs[i] = fn()
            best[i] = min(best[i], time.process_time() - start)
    return (best[0], outs[0]), (best[1], outs[1])


def row(label: str, ours, anchor, anchor_name: str, repeats: int, scale: float = 1.0) -> None:
    (t_ours, s_ours), (t_anchor, s_anchor) = compare(ours, anchor, repeats)
    diff = max(abs(a - b * scale) for a, b in zip(s_ours, s_anchor))
    print(
        f"{label:<34} markeval {t_ours:6.2f} s   {anchor_name:>9} {t_anchor:6.2f} s   "
        f"ratio {t_ours / t_anchor:5.3f}   max |diff| {diff:.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 2 systems x 20 sentences, 1 repeat")
    args = parser.parse_args()

    data = load_wmt17("de-en")
    refs = list(data.references)
    systems = [list(h) for h in data.systems.values()]
    if args.smoke:
        args.repeats, refs, systems = 1, refs[:20], [h[:20] for h in systems[:2]]
    print(f"WMT17 de-en: {len(systems)} systems x {len(refs)} sentences; "
          f"best of {args.repeats}; goal: ratio <= 0.5")

    for tok in ("13a", "none"):
        row(
            f"corpus BLEU, plain call ({tok})",
            lambda: [bleu(h, refs, tokenize=tok).score for h in systems],
            lambda: [sacrebleu.corpus_bleu(h, [refs], tokenize=tok, force=True).score
                     for h in systems],
            "sacrebleu", args.repeats,
        )

        def ours_cached():
            prepared = NGramReferences(refs, tokenize=tok)
            return [bleu(h, prepared).score for h in systems]

        def sacre_cached():
            metric = BLEU(tokenize=tok, force=True, references=[refs])
            return [metric.corpus_score(h, None).score for h in systems]

        row(f"corpus BLEU, cached refs ({tok})", ours_cached, sacre_cached, "sacrebleu",
            args.repeats)

    def nltk_gleu():
        refs_tokens = [[r.split()] for r in refs]
        return [corpus_gleu(refs_tokens, [s.split() for s in h]) for h in systems]

    def ours_gleu_cached():
        prepared = NGramReferences(refs, tokenize="none")
        return [gleu(h, prepared).score for h in systems]

    row("corpus GLEU, plain call (none)",
        lambda: [gleu(h, refs, tokenize="none").score for h in systems], nltk_gleu, "NLTK",
        args.repeats, scale=100.0)
    row("corpus GLEU, cached refs (none)", ours_gleu_cached, nltk_gleu, "NLTK", args.repeats,
        scale=100.0)


if __name__ == "__main__":
    main()
