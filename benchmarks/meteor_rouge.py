"""Speed of markeval's ROUGE and METEOR beside rouge-score and NLTK, in one run.

    python benchmarks/meteor_rouge.py [--smoke]

ROUGE: the first 500 TAC 2009 summaries (topic order) x 4 references, rouge1, rouge2,
rougeL and rougeLsum, Porter-stemmed, best reference (``score_multi``). Goal: ratio <= 0.1.
METEOR: 1,000 WMT17 de-en pairs (first system by name, lines 1-1000), NLTK defaults.
Goal: ratio <= 0.2.

"first call" times a fresh start: markeval with its stem/synonym caches emptied and
WordNet re-read, NLTK with a freshly built WordNet reader (its files loaded in the
constructor). "repeat" runs the same call again with whatever each side cached. Imports
are not timed. Both sides' scores are compared, so a fast wrong answer cannot pass.
"""

from __future__ import annotations

import argparse
import time
import warnings


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def clear_markeval_caches():
    from markeval.datasets import wordnet as wordnet_files
    from markeval.lexical import meteor, stem, wordnet

    stem.porter_stem.cache_clear()
    meteor._synonym_set.cache_clear()
    wordnet_files._load.cache_clear()  # the database is read again (its loader moved here)
    wordnet.WordNet.synonyms.cache_clear()
    wordnet.WordNet.lemma_names.cache_clear()


def bench_rouge(n: int = 500) -> None:
    from rouge_score import rouge_scorer

    from markeval.datasets import load_tac
    from markeval.lexical.rouge import rouge

    hyps, refs = [], []
    for topic in load_tac(2009):
        references = ["\n".join(r) for r in topic.references]
        for summary in topic.annotations:
            hyps.append("\n".join(summary.sentences))
            refs.append(references)
    hyps, refs = hyps[:n], refs[:n]
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=True)

    clear_markeval_caches()
    ours, t_ours = timed(lambda: rouge(hyps, refs, types, use_stemmer=True))
    theirs, t_theirs = timed(lambda: [scorer.score_multi(r, h) for h, r in zip(hyps, refs)])
    _, t_again = timed(lambda: rouge(hyps, refs, types, use_stemmer=True))
    worst = max(abs(getattr(ours[t].pair(i), f) - getattr(s[t], f))
                for t in types for i, s in enumerate(theirs)
                for f in ("precision", "recall", "fmeasure"))
    print(f"ROUGE  {n} TAC 2009 summaries x 4 refs, 4 types, stemmed")
    print(f"  rouge-score {t_theirs:7.2f} s | markeval {t_ours:6.2f} s first call, "
          f"{t_again:6.2f} s repeat | ratio {t_ours / t_theirs:.3f} (goal <= 0.1) | "
          f"max |diff| {worst:.1e}")


def bench_meteor(n: int = 1000) -> None:
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.translate.meteor_score import meteor_score

    from markeval.datasets import load_wmt17
    from markeval.lexical.meteor import corpus_meteor
    from markeval.lexical.stem import _stemmer
    from markeval.datasets.wordnet import setup_nltk_wordnet

    data = load_wmt17("de-en")
    outputs = data.systems[sorted(data.systems)[0]]
    hyps, refs = list(outputs[:n]), list(data.references[:n])
    root = setup_nltk_wordnet()
    nltk.data.path.insert(0, str(root))
    _stemmer()  # constructing NLTK's stemmer is part of importing, not of scoring

    def nltk_run(reader):
        return [meteor_score([r.split()], h.split(), wordnet=reader) for h, r in zip(hyps, refs)]

    def nltk_first():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = WordNetCorpusReader(str(root / "corpora" / "wordnet"), None)
        return nltk_run(reader), reader

    clear_markeval_caches()
    ours, t_ours = timed(lambda: corpus_meteor(hyps, refs).scores)
    (theirs, reader), t_theirs = timed(nltk_first)
    _, t_ours_again = timed(lambda: corpus_meteor(hyps, refs))
    _, t_theirs_again = timed(lambda: nltk_run(reader))
    worst = max(abs(a - b) for a, b in zip(ours, theirs))
    print(f"METEOR {n} WMT17 de-en pairs, exact+stem+synonym, mode 'nltk'")
    print(f"  first call: NLTK {t_theirs:6.2f} s | markeval {t_ours:5.2f} s | "
          f"ratio {t_ours / t_theirs:.3f} (goal <= 0.2)")
    print(f"  repeat:     NLTK {t_theirs_again:6.2f} s | markeval {t_ours_again:5.2f} s | "
          f"ratio {t_ours_again / t_theirs_again:.3f} | max |diff| {worst:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="smallest run: 20 METEOR pairs and 20 ROUGE summaries")
    args = parser.parse_args()
    bench_meteor(20 if args.smoke else 1000)
    bench_rouge(20 if args.smoke else 500)


if __name__ == "__main__":
    main()
