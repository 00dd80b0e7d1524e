"""chrF, chrF++ (and TER) over the 11 WMT17 de-en systems: markeval vs sacrebleu 2.6.

Each ``bench_*`` function times one metric family, both libraries on the same inputs, and
prints one row per variant; ``__main__`` runs every ``bench_*`` function defined here, in
order. A timing is the CPU seconds of this process (``time.process_time``: the work is
single-threaded and CPU time is not inflated by other jobs on a shared machine) to score all
11 systems, one plain call per system (``chrf(hyps, refs)`` against
``CHRF(...).corpus_score(hyps, [refs])``: both count the references afresh on each call),
best of ``--repeats`` with the two sides alternating. Printed: both times, the ratio
markeval / sacrebleu (goal: <= 0.5 for chrF) and the largest score difference.

    python benchmarks/chrf_ter.py [--repeats 3] [--only chrf] [--only ter] [--smoke]
"""

from __future__ import annotations

import argparse
import sys
import time

from markeval.datasets import load_wmt17


def load_de_en(smoke: bool = False):
    """The references and the 11 system outputs of WMT17 de-en, as lists (with ``smoke``, 2
    systems x 20 sentences)."""
    data = load_wmt17("de-en")
    refs, systems = list(data.references), [list(h) for h in data.systems.values()]
    if smoke:
        return refs[:20], [h[:20] for h in systems[:2]]
    return refs, systems


def compare(ours, anchor, repeats: int):
    """Best-of-``repeats`` CPU seconds and outputs of ``ours()`` and ``anchor()``, alternating."""
    best = [float("inf"), float("inf")]
    outs = [None, None]
    for _ in range(repeats):
        for i, fn in enumerate((ours, anchor)):
            start = time.process_time()
            outs[i] = fn()
            best[i] = min(best[i], time.process_time() - start)
    return (best[0], outs[0]), (best[1], outs[1])


def row(label: str, ours, anchor, repeats: int) -> float:
    """Time both, print one row; return the ratio markeval / sacrebleu."""
    (t_ours, s_ours), (t_anchor, s_anchor) = compare(ours, anchor, repeats)
    diff = max(abs(a - b) for a, b in zip(s_ours, s_anchor))
    ratio = t_ours / t_anchor
    print(f"{label:<28} markeval {t_ours:6.2f} s   sacrebleu {t_anchor:6.2f} s   "
          f"ratio {ratio:5.3f}   max |diff| {diff:.1e}", flush=True)
    return ratio


def bench_chrf(repeats: int = 3, smoke: bool = False) -> dict[str, float]:
    """Corpus chrF and chrF++ of the 11 de-en systems; returns {variant: ratio}."""
    from sacrebleu.metrics import CHRF

    from markeval.lexical.chrf import chrf

    refs, systems = load_de_en(smoke)
    print(f"chrF: WMT17 de-en, {len(systems)} systems x {len(refs)} sentences; "
          f"best of {repeats}; goal: ratio <= 0.5")
    ratios = {}
    for label, word_order in (("corpus chrF", 0), ("corpus chrF++", 2)):
        ratios[label] = row(
            label,
            lambda: [chrf(h, refs, word_order=word_order).score for h in systems],
            lambda: [CHRF(word_order=word_order).corpus_score(h, [refs]).score
                     for h in systems],
            repeats,
        )
    return ratios


def bench_ter(repeats: int = 3, smoke: bool = False) -> dict[str, float]:
    """Corpus TER (default options) of the 11 de-en systems; returns {"corpus TER": ratio}.

    sacrebleu's TER takes about 2 minutes (CPU) for the 11 systems, so each repeat is
    slow; ``--repeats 1`` is enough to see the ratio (goal: <= 1.0). Both sides start
    from cold tokenizer caches on every run.
    """
    from sacrebleu.metrics import TER
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    from markeval.lexical import ter as ter_module

    refs, systems = load_de_en(smoke)
    print(f"TER: WMT17 de-en, {len(systems)} systems x {len(refs)} sentences; "
          f"best of {repeats}; goal: ratio <= 1.0")

    def ours():
        ter_module._CACHE.clear()
        return [ter_module.ter(h, refs).score for h in systems]

    def anchor():
        TercomTokenizer.__call__.cache_clear()
        return [TER().corpus_score(h, [refs]).score for h in systems]

    return {"corpus TER": row("corpus TER", ours, anchor, repeats)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", action="append", default=[],
                        help="run only bench_NAME (repeatable), e.g. --only chrf")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 2 systems x 20 sentences, 1 repeat")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeats = 1
    module = sys.modules[__name__]
    for name in sorted(n for n in dir(module) if n.startswith("bench_")):
        if not args.only or name[len("bench_"):] in args.only:
            getattr(module, name)(repeats=args.repeats, smoke=args.smoke)


if __name__ == "__main__":
    main()
