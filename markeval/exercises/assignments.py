"""The four graded assignments of the book: questions, points and auto-checks.

Each assignment is an :class:`Assignment`: an ordered list of :class:`Task` objects, each worth
some points. A *code* task wraps a :class:`~markeval.exercises.Question` whose reference is the
markeval library (or, for the few helpers the library has no public name for, a short function
defined here), run on generated cases — random toy inputs and, where the assignment says
"real", lines of WMT17 or MiniLM embeddings of BBC News sentences. A *written* task is graded
by hand; its model answer lives in the instructor edition of the notebook.

In a notebook::

    from markeval.exercises.assignments import assignment
    A = assignment(1)
    A.points_table()             # what each question is worth
    A.check("q1", my_ngrams)     # ✓ Q1 n-gram counts [10 pts]: passed 30 cases
    A.hint("q1")
    A.summary()                  # points earned by the auto-checks so far

The checks never print the expected answer: a failure names the case (its number and its
input) and what the answer returned. Cases are seeded, so a check is reproducible.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from markeval.exercises._question import CheckResult, Question

__all__ = [
    "A4_K",
    "A4_SIZES",
    "A4_TOPIC_ORDER",
    "ASSIGNMENT_TITLES",
    "Assignment",
    "Task",
    "assignment",
    "bbc_collapse_data",
    "collapse_schedule",
    "points_table",
    "toy_problem",
    "wmt17_judged",
]

ASSIGNMENT_TITLES = {
    1: "n-gram metrics from scratch",
    2: "Alignment metrics",
    3: "Embedding metrics",
    4: "Mark-Evaluate",
}

_NO_SOLUTION = "Model solutions are in the instructor edition of this notebook."


# --- the containers --------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    """One graded question of an assignment.

    Attributes
    ----------
    key : str
        ``"q1"``, ``"q2"``, … (written parts of a question: ``"q8b"``).
    title : str
        Short name, shown in verdicts and in the points table.
    points : int
    kind : {"code", "value", "written"}
        ``code``: a function checked on cases; ``value``: a computed value checked against
        the library; ``written``: an explanation graded by hand.
    question : Question or None
        The auto-check (None for written tasks).
    """

    key: str
    title: str
    points: int
    kind: str
    question: Question | None = None

    @property
    def auto(self) -> bool:
        """Whether the task is graded by an automatic check."""
        return self.question is not None


@dataclass
class Assignment:
    """A graded assignment: tasks with points, auto-checks, hints and a score summary.

    Parameters
    ----------
    number : int
    title : str
    tasks : list of Task

    Examples
    --------
    >>> A = assignment(1)
    >>> A.total, [t.key for t in A.tasks][:3]
    (100, ['q1', 'q2', 'q3'])
    >>> from collections import Counter
    >>> ok = A.check("q4", lambda c, r: 1.0)  # no penalty at all: wrong
    ✗ Q4 Brevity penalty [5 pts]: case 1 of 24 failed — input: (0, 5); your answer returned 1.0 (stuck? call .hint() on this question)
    """

    number: int
    title: str
    tasks: list[Task]
    results: dict[str, CheckResult] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        keys = [t.key for t in self.tasks]
        if len(keys) != len(set(keys)):
            raise ValueError(f"assignment {self.number}: duplicate task keys in {keys}")

    @property
    def total(self) -> int:
        """Points of the whole assignment."""
        return sum(t.points for t in self.tasks)

    def task(self, key: str) -> Task:
        """The task called ``key`` (e.g. ``"q3"``)."""
        for t in self.tasks:
            if t.key == key:
                return t
        raise KeyError(f"assignment {self.number} has no question {key!r}; "
                       f"questions: {', '.join(t.key for t in self.tasks)}")

    def _auto_task(self, key: str) -> Task:
        t = self.task(key)
        if not t.auto:
            raise ValueError(f"{key} ({t.title}) is a written question, graded by hand: "
                             "there is nothing to check automatically")
        return t

    def check(self, key: str, answer) -> CheckResult:
        """Check the answer to question ``key``, print the verdict and remember it.

        Returns a :class:`~markeval.exercises.CheckResult` (truthy when right), so that an
        autograder cell can say ``assert A.check("q1", my_ngrams)``.
        """
        result = self._auto_task(key).question.check(answer)
        self.results[key] = result
        return result

    def hint(self, key: str) -> None:
        """Print the next hint for question ``key``."""
        self._auto_task(key).question.hint()

    def points_table(self):
        """A pandas DataFrame: question, title, kind, points, how it is graded."""
        import pandas as pd

        return pd.DataFrame(
            [(t.key.upper(), t.title, t.kind, t.points, "auto-check" if t.auto else "by hand")
             for t in self.tasks],
            columns=["question", "title", "kind", "points", "graded"],
        ).set_index("question")

    def score(self) -> dict:
        """Points from the auto-checks run so far.

        Returns
        -------
        dict
            ``earned`` (points of passed checks), ``auto_points`` (points of all auto-checked
            questions), ``written_points`` (points graded by hand), ``unchecked`` (keys of
            auto-checked questions not checked yet) and ``failed`` (keys that failed).
        """
        auto = [t for t in self.tasks if t.auto]
        return {
            "earned": sum(t.points for t in auto if self.results.get(t.key)),
            "auto_points": sum(t.points for t in auto),
            "written_points": sum(t.points for t in self.tasks if not t.auto),
            "unchecked": [t.key for t in auto if t.key not in self.results],
            "failed": [t.key for t in auto if t.key in self.results and not self.results[t.key]],
        }

    def summary(self) -> dict:
        """Print and return :meth:`score`: one line per question, then the totals."""
        s = self.score()
        print(f"Assignment {self.number}: {self.title}")
        for t in self.tasks:
            if not t.auto:
                status = "graded by hand"
            elif t.key not in self.results:
                status = "not checked"
            else:
                status = "passed" if self.results[t.key] else "failed"
            earned = (f"{t.points if self.results.get(t.key) else 0:>3}" if t.auto else "  ?")
            print(f"  {t.key.upper():<4} {t.title:<38} {earned}/{t.points:<3} {status}")
        print(f"  auto-checked: {s['earned']}/{s['auto_points']} points; "
              f"written: {s['written_points']} points to grade by hand")
        return s


def _task(number: int, key: str, title: str, points: int, kind: str, **question) -> Task:
    if kind == "written":
        return Task(key, title, points, kind)
    label = f"{key.upper()} {title} [{points} pts]"
    question.setdefault("solution", _NO_SOLUTION)
    return Task(key, title, points, kind, Question(label, **question))


def assignment(number: int) -> Assignment:
    """A fresh :class:`Assignment` (1–4), with no answers checked yet.

    Examples
    --------
    >>> [assignment(n).total for n in (1, 2, 3, 4)]
    [100, 100, 100, 100]
    """
    builders = {1: _assignment_1, 2: _assignment_2, 3: _assignment_3, 4: _assignment_4}
    if number not in builders:
        raise ValueError(f"assignment number must be one of {sorted(builders)}, got {number!r}")
    return Assignment(number, ASSIGNMENT_TITLES[number], builders[number]())


def points_table():
    """Points of every question of every assignment, as one pandas DataFrame."""
    import pandas as pd

    frames = []
    for n in ASSIGNMENT_TITLES:
        t = assignment(n).points_table().reset_index()
        t.insert(0, "assignment", n)
        frames.append(t)
    return pd.concat(frames, ignore_index=True)


# --- shared case material ---------------------------------------------------------------------

_VOCAB = "the a cat dog sat on mat rug ran big small red".split()


def _toy_sentence(rng, low: int = 0, high: int = 10) -> str:
    return " ".join(rng.choice(_VOCAB, size=int(rng.integers(low, high))).tolist())


@functools.lru_cache(maxsize=4)
def _wmt17(pair: str = "de-en", detokenize: bool = False):
    from markeval.datasets import load_wmt17

    return load_wmt17(pair, detokenize=detokenize)


def _wmt17_rows(rng, count: int, *, detokenize: bool = False, max_words: int = 60):
    """``count`` random (hypothesis, reference, second system's output) lines of de-en."""
    data = _wmt17("de-en", detokenize)
    systems = sorted(data.systems)
    rows = []
    while len(rows) < count:
        i = int(rng.integers(len(data.references)))
        a, b = rng.choice(len(systems), size=2, replace=False)
        hyp, other = data.systems[systems[a]][i], data.systems[systems[b]][i]
        ref = data.references[i]
        if max(len(hyp.split()), len(ref.split())) <= max_words and hyp.strip() and ref.strip():
            rows.append((hyp, ref, other))
    return rows


@functools.lru_cache(maxsize=2)
def wmt17_judged(pair: str = "de-en", n: int | None = None):
    """The WMT17 segments with human direct-assessment scores, with their texts.

    Parameters
    ----------
    pair : str, default "de-en"
    n : int, optional
        Keep the first ``n`` judged segments (file order); default all (560 per pair).

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``sid``, ``score`` (standardised DA), ``hypothesis`` and
        ``reference`` (lower-cased, Moses-tokenised, as distributed).
    """
    from markeval.datasets import wmt17_da_segments

    seg = wmt17_da_segments(pair, with_text=True)
    seg = seg[["system", "sid", "score", "hypothesis", "reference"]]
    return (seg if n is None else seg.head(n)).reset_index(drop=True)


def _pearson(x, y) -> float:
    return float(np.corrcoef(np.asarray(x, float), np.asarray(y, float))[0, 1])


# --- Assignment 1: n-gram metrics from scratch -------------------------------------------------

def _a1_ngram_cases(rng):
    cases = [(["a"], 2), ([], 1), (["a", "b", "a", "b"], 2), (["x"] * 5, 3)]
    for _ in range(16):
        cases.append((_toy_sentence(rng).split(), int(rng.integers(1, 5))))
    for hyp, _, _ in _wmt17_rows(rng, 10):
        cases.append((hyp.split(), int(rng.integers(1, 5))))
    return cases


def _a1_clip_cases(rng):
    cases = [("the the the the the the the",
              ["the cat is on the mat", "there is a cat on the mat"], 1),
             ("on the mat the cat sat on the mat", ["the cat sat on the mat"], 2),
             ("", ["a cat"], 1), ("a cat", ["a cat"], 3)]
    for _ in range(12):
        refs = [_toy_sentence(rng, 1) for _ in range(int(rng.integers(1, 4)))]
        cases.append((_toy_sentence(rng), refs, int(rng.integers(1, 5))))
    for hyp, ref, other in _wmt17_rows(rng, 10):
        refs = [ref, other] if rng.random() < 0.5 else [ref]
        cases.append((hyp, refs, int(rng.integers(1, 5))))
    return cases


def _a1_clip_reference(hypothesis, references, n):
    from markeval.lexical.bleu import bleu_statistics

    s = bleu_statistics([hypothesis], [references], max_order=n, tokenize="none")
    return int(s.counts[0, n - 1]), int(s.totals[0, n - 1])


def _a1_ref_len_reference(c, ref_lengths):
    from markeval.lexical.bleu import bleu_statistics

    s = bleu_statistics([" ".join(["x"] * c)], [[" ".join(["y"] * r) for r in ref_lengths]],
                        max_order=1, tokenize="none")
    return int(s.ref_len[0])


def _a1_ref_len_cases(rng):
    cases = [(5, [5]), (5, [4, 6]), (5, [6, 4]), (0, [3, 1]), (10, [2, 30, 9, 11]), (7, [3, 11])]
    for _ in range(20):
        cases.append((int(rng.integers(0, 30)),
                      [int(x) for x in rng.integers(1, 30, size=int(rng.integers(1, 5)))]))
    return cases


def _a1_bp_reference(c, r):
    from markeval.lexical.bleu import sentence_bleu

    return sentence_bleu(" ".join(["x"] * c), " ".join(["x"] * r), tokenize="none").bp


def _a1_corpus_cases(rng):
    cases = [(["the cat sat on the mat"], [["the cat sat on the mat"]]),
             (["the cat", "a dog sat on the rug today"],
              [["the cat sat on the mat", "a cat sat on a mat"], ["a dog sat on the rug"]])]
    for size in (20, 30, 40):  # real system output, one reference per line
        rows = _wmt17_rows(rng, size)
        cases.append(([h for h, _, _ in rows], [[r] for _, r, _ in rows]))
    rows = _wmt17_rows(rng, 25)  # two references: the human one and another system's output
    cases.append(([h for h, _, _ in rows], [[r, o] for _, r, o in rows]))
    rows = _wmt17_rows(rng, 25)  # short hypotheses: the brevity penalty matters
    cases.append(([" ".join(h.split()[: max(1, len(h.split()) // 2)]) for h, _, _ in rows],
                  [[r] for _, r, _ in rows]))
    return cases


def _a1_corpus_reference(hypotheses, references):
    from markeval.lexical.bleu import bleu

    return bleu(hypotheses, references, tokenize="none", smooth="none").score


def _a1_gleu_cases(rng):
    cases = [("the cat sat", ["the cat sat"]), ("", ["a cat"]), ("a", ["b"]),
             ("the cat", ["the cat sat on the mat", "the cat"])]
    for _ in range(12):
        refs = [_toy_sentence(rng) for _ in range(int(rng.integers(1, 4)))]
        cases.append((_toy_sentence(rng), refs))
    for hyp, ref, other in _wmt17_rows(rng, 10):
        cases.append((hyp, [ref, other] if rng.random() < 0.5 else [ref]))
    return cases


def _a1_gleu_reference(hypothesis, references):
    from markeval.lexical.gleu import sentence_gleu

    return sentence_gleu(hypothesis, references, tokenize="none").score / 100


def _a1_13a_cases(rng):
    cases = ["Hello, world!", "It costs $3.50, or 1,000.5 yen.", "well-known 2017-18 results.",
             "A &quot;quoted&quot; word &amp; more", "the victim &apos;s brother",
             "e-mail: a@b.com (see p.5)", "end.", "U.S. troops", "5-4 win"]
    cases += [h for h, _, _ in _wmt17_rows(rng, 12, detokenize=True)]
    cases += [h for h, _, _ in _wmt17_rows(rng, 8)]  # as distributed: Moses escapes
    return [(c,) for c in cases]


def _a1_13a_reference(line):
    from markeval.text import tokenize

    return tokenize(line, "13a")


A1_SYSTEM = "uedin-nmt.4723"  #: the WMT17 de-en system of the tokenisation question


def _a1_tokenization_table() -> dict:
    """Assignment 1, Q8: BLEU of :data:`A1_SYSTEM` under four tokenisation settings (de-en)."""
    from markeval.lexical.bleu import bleu

    raw, detok = _wmt17("de-en", False), _wmt17("de-en", True)
    out = {}
    for name, data, tok in (("none/escaped", raw, "none"), ("13a/escaped", raw, "13a"),
                            ("13a/detokenized", detok, "13a"), ("none/detokenized", detok, "none")):
        out[name] = bleu(list(data.systems[A1_SYSTEM]), [[r] for r in data.references],
                         tokenize=tok).score
    return out


def _assignment_1() -> list[Task]:
    return [
        _task(1, "q1", "n-gram counts", 10, "code",
              reference=lambda tokens, n: Counter(tuple(tokens[i:i + n])
                                                  for i in range(len(tokens) - n + 1)),
              cases=_a1_ngram_cases,
              hints=["A sentence of L tokens has max(0, L - n + 1) n-grams of order n.",
                     "Counter(tuple(tokens[i:i + n]) for i in ...) counts them."]),
        _task(1, "q2", "Clipped n-gram matches", 15, "code",
              reference=_a1_clip_reference, cases=_a1_clip_cases,
              hints=["Clip each hypothesis n-gram at its largest count in ONE reference.",
                     "The maximum is over references, the minimum is with the hypothesis count; "
                     "summing over references over-credits repeated words.",
                     "The second number is the number of hypothesis n-grams, clipped or not."]),
        _task(1, "q3", "Closest reference length", 10, "code",
              reference=_a1_ref_len_reference, cases=_a1_ref_len_cases,
              hints=["Minimise |r - c| over the reference lengths.",
                     "On a tie (one shorter, one longer by the same amount) take the shorter."]),
        _task(1, "q4", "Brevity penalty", 5, "code",
              reference=_a1_bp_reference,
              cases=lambda rng: [(0, 5), (5, 5), (6, 5), (1, 30)] + [
                  (int(rng.integers(0, 40)), int(rng.integers(1, 40))) for _ in range(20)],
              hints=["1 when c > r, exp(1 - r/c) otherwise.",
                     "An empty hypothesis gets 0, the limit of exp(1 - r/c) as c -> 0."]),
        _task(1, "q5", "Corpus BLEU", 20, "code",
              reference=_a1_corpus_reference, cases=_a1_corpus_cases, rtol=1e-7,
              hints=["Sum matches and totals over the corpus BEFORE dividing; do not average "
                     "sentence scores.",
                     "references[i] is the LIST of references of hypotheses[i].",
                     "BP uses the summed hypothesis length and the summed closest reference "
                     "lengths; a zero precision makes the score 0.",
                     "Return 100 * BP * exp(mean of log p_n)."]),
        _task(1, "q6", "Sentence GLEU", 15, "code",
              reference=_a1_gleu_reference, cases=_a1_gleu_cases,
              hints=["For one reference: m / max(h, r), with m the clipped matches of orders 1-4 "
                     "and h, r the n-gram totals of hypothesis and reference.",
                     "With several references keep the best score; a pair with no n-grams at "
                     "all scores 0."]),
        _task(1, "q7", "13a tokenizer", 15, "code",
              reference=_a1_13a_reference, cases=_a1_13a_cases,
              hints=["Unescape only &quot; &amp; &lt; &gt; (not &apos;), then pad ASCII "
                     "punctuation and symbols other than . , ' - with spaces.",
                     "A period or comma is split off unless it has a digit on BOTH sides; a dash "
                     "is split off after a digit."]),
        _task(1, "q8", "Tokenisation pitfalls (table)", 5, "value",
              expected=_a1_tokenization_table, rtol=1e-6,
              hints=["Use markeval.bleu with tokenize='none' or '13a' on the files as "
                     "distributed and on load_wmt17('de-en', detokenize=True)."]),
        _task(1, "q8b", "Tokenisation pitfalls (explanation)", 5, "written"),
    ]


# --- Assignment 2: alignment metrics -----------------------------------------------------------

def _chunks_reference(alignment):
    from markeval.lexical.meteor import _count_chunks

    pairs = sorted((int(i), int(j), "exact") for i, j in alignment)
    return 0 if not pairs else _count_chunks(pairs)


def _a2_chunk_cases(rng):
    from markeval.lexical.meteor import meteor

    cases = [[], [(0, 0)], [(0, 0), (1, 1), (2, 2)], [(0, 1), (1, 0)], [(0, 0), (2, 1)],
             [(0, 0), (1, 2)], [(0, 3), (1, 4), (3, 0), (4, 1)]]
    for _ in range(10):  # random partial one-to-one alignments
        n, m = int(rng.integers(1, 12)), int(rng.integers(1, 12))
        k = int(rng.integers(0, min(n, m) + 1))
        hyp = np.sort(rng.choice(n, size=k, replace=False))
        ref = rng.choice(m, size=k, replace=False)
        if rng.random() < 0.5:
            ref = np.sort(ref)  # monotone: chunks break only at gaps
        cases.append([(int(i), int(j)) for i, j in zip(hyp, ref)])
    for hyp, ref, _ in _wmt17_rows(rng, 8):  # real METEOR alignments
        cases.append([(i, j) for i, j, _ in meteor(hyp, ref).alignment])
    return [(c,) for c in cases]


def _a2_meteor_cases(rng):
    cases = [("the cat sat on the mat", "the mat the cat sat"), ("a b c", "a b c"),
             ("x y", "a b"), ("the cats", "the cat")]
    cases += [(h, r) for h, r, _ in _wmt17_rows(rng, 14)]
    return cases


def _a2_meteor_reference(hypothesis, reference):
    from markeval.lexical.meteor import meteor

    return meteor(hypothesis, reference).score


def _a2_exact_reference(hyp_tokens, ref_tokens):
    from markeval.lexical.meteor import meteor

    r = meteor(" ".join(hyp_tokens), " ".join(ref_tokens), stem=False, synonyms=False)
    return [(i, j) for i, j, _ in r.alignment]


def _a2_exact_cases(rng):
    cases = [("the cat sat on the mat".split(), "the mat the cat sat".split()),
             ("a a b".split(), "a b a".split()), ([], "a".split()), ("x".split(), "y".split())]
    small = ["the", "a", "cat", "sat"]
    for _ in range(12):
        cases.append((rng.choice(small, size=int(rng.integers(1, 9))).tolist(),
                      rng.choice(small, size=int(rng.integers(1, 9))).tolist()))
    cases += [(h.split(), r.split()) for h, r, _ in _wmt17_rows(rng, 8)]
    return cases


def _a2_lcs_reference(a, b):
    from markeval.lexical.rouge import rouge

    r = rouge([" ".join(a)], [" ".join(b)], types=["rougeL"], tokenizer=str.split)
    return int(round(r["rougeL"].recalls[0] * len(b)))


def _a2_lcs_cases(rng):
    cases = [("a b c d".split(), "a c d".split()), ("a b".split(), "b a".split()),
             ([], ["a"]), ("a b a b a".split(), "b a b".split()),
             ("x a b c y".split(), "a z b c".split())]
    for _ in range(14):
        cases.append((rng.choice(_VOCAB[:5], size=int(rng.integers(0, 12))).tolist(),
                      rng.choice(_VOCAB[:5], size=int(rng.integers(1, 12))).tolist()))
    cases += [(h.split(), r.split()) for h, r, _ in _wmt17_rows(rng, 6)]
    return cases


def _a2_rougel_reference(hypothesis, reference):
    from markeval.lexical.rouge import rouge

    s = rouge([hypothesis], [reference], types=["rougeL"], tokenizer=str.split)["rougeL"]
    return (s.precisions[0], s.recalls[0], s.fmeasures[0])


def _a2_rougel_cases(rng):
    cases = [("the cat sat on the mat", "the mat the cat sat"), ("", "a b"), ("a b", "c d"),
             ("police killed the gunman", "the gunman killed police")]
    cases += [(_toy_sentence(rng), _toy_sentence(rng, 1)) for _ in range(8)]
    cases += [(h, r) for h, r, _ in _wmt17_rows(rng, 8)]
    return cases


def _largest_disagreements(metric, human, n: int) -> list[int]:
    """Indices of the ``n`` segments where a metric and humans disagree most, worst first.

    Both score lists are turned into fractional ranks ``rankdata(x) / len(x)`` (ties get the
    average rank); the disagreement of a segment is the absolute difference of its two ranks.
    Indices are sorted by decreasing disagreement, ties by increasing index.

    Examples
    --------
    >>> _largest_disagreements([0.1, 0.9, 0.5, 0.4], [0.2, 0.1, 0.6, 0.5], 2)
    [1, 0]
    """
    from scipy.stats import rankdata

    metric, human = np.asarray(metric, float), np.asarray(human, float)
    if metric.shape != human.shape or metric.ndim != 1:
        raise ValueError(f"metric and human must be 1-D of one length, got {metric.shape} "
                         f"and {human.shape}")
    gap = np.abs(rankdata(metric) - rankdata(human)) / len(metric)
    order = sorted(range(len(gap)), key=lambda i: (-gap[i], i))
    return order[: int(n)]


def _a2_disagreement_cases(rng):
    cases = [([0.1, 0.9, 0.5, 0.4], [0.2, 0.1, 0.6, 0.5], 2), ([1, 2, 3], [3, 2, 1], 3),
             ([0.5, 0.5, 0.1, 0.9], [0.2, 0.3, 0.1, 0.9], 2)]
    for _ in range(10):
        size = int(rng.integers(5, 40))
        m = rng.normal(size=size)
        h = m + rng.normal(size=size)
        if rng.random() < 0.4:  # ties
            m, h = np.round(m), np.round(h, 1)
        cases.append((m.tolist(), h.tolist(), int(rng.integers(1, 6))))
    return cases


def _a2_correlations(n: int | None = None) -> dict:
    """Assignment 2, Q6: Pearson r with DA of sentence METEOR, ROUGE-L F1 and sentence BLEU."""
    from markeval.lexical.bleu import bleu_statistics, sentence_bleu_scores
    from markeval.lexical.meteor import corpus_meteor
    from markeval.lexical.rouge import rouge

    seg = wmt17_judged("de-en", n)
    hyps, refs = list(seg["hypothesis"]), list(seg["reference"])
    scores = {
        "meteor": corpus_meteor(hyps, refs).scores,
        "rougeL": rouge(hyps, refs, types=["rougeL"])["rougeL"].fmeasures,
        "sentence_bleu": sentence_bleu_scores(bleu_statistics(hyps, refs, tokenize="none")),
    }
    return {k: _pearson(v, seg["score"]) for k, v in scores.items()}


def _assignment_2() -> list[Task]:
    return [
        _task(2, "q1", "Counting chunks", 10, "code",
              reference=_chunks_reference, cases=_a2_chunk_cases,
              hints=["Sort the pairs by hypothesis position; a new chunk starts unless the pair "
                     "is (i + 1, j + 1) after (i, j).",
                     "No matches: 0 chunks. One match: 1 chunk."]),
        _task(2, "q2", "METEOR from an alignment", 15, "code",
              reference=_a2_meteor_reference, cases=_a2_meteor_cases,
              hints=["P = m / w_t, R = m / w_r, F_mean = P R / (alpha P + (1 - alpha) R).",
                     "penalty = gamma (chunks / m) ** beta; score = (1 - penalty) F_mean; "
                     "no match scores 0."]),
        _task(2, "q3", "Exact-match alignment", 20, "code",
              reference=_a2_exact_reference, cases=_a2_exact_cases,
              hints=["Go through the hypothesis from its LAST word to its first.",
                     "Match each word to the LAST still-free identical reference word.",
                     "Return the pairs sorted by hypothesis position."]),
        _task(2, "q4", "Longest common subsequence", 15, "code",
              reference=_a2_lcs_reference, cases=_a2_lcs_cases,
              hints=["A subsequence need not be contiguous: this is not the longest common "
                     "substring.",
                     "L[i][j] = L[i-1][j-1] + 1 if a[i-1] == b[j-1] else "
                     "max(L[i-1][j], L[i][j-1]), with a table of (len(a)+1) x (len(b)+1)."]),
        _task(2, "q5", "ROUGE-L", 10, "code",
              reference=_a2_rougel_reference, cases=_a2_rougel_cases,
              hints=["P = LCS / len(hypothesis), R = LCS / len(reference), F = 2PR / (P + R).",
                     "An empty hypothesis, or no common word, gives (0, 0, 0)."]),
        _task(2, "q6", "Correlation with humans", 15, "value",
              expected=lambda: _a2_correlations(), rtol=1e-6,
              hints=["corpus_meteor(...).scores, rouge(..., types=['rougeL'])['rougeL'].fmeasures "
                     "and sentence_bleu_scores(bleu_statistics(..., tokenize='none')) give "
                     "per-segment scores.",
                     "Pearson r with np.corrcoef or markeval.pearson(...).value."]),
        _task(2, "q7", "Largest disagreements", 10, "code",
              reference=_largest_disagreements, cases=_a2_disagreement_cases,
              hints=["Compare RANKS, not raw scores: the two scales differ.",
                     "scipy.stats.rankdata gives average ranks on ties; divide by the length.",
                     "Sort by decreasing disagreement, ties by index, and keep n."]),
        _task(2, "q8", "Where metrics and humans disagree", 5, "written"),
    ]


# --- Assignment 3: embedding metrics -----------------------------------------------------------

def _cosine_reference(X, Y):
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    return (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (
        Y / np.linalg.norm(Y, axis=1, keepdims=True)).T


def _a3_vector_cases(rng, with_weights: bool):
    cases = []
    for i in range(14):
        n, m, d = int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(2, 6))
        X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3)
        Y = rng.normal(size=(m, d)) + (rng.normal(size=d) if i % 2 else 0)
        if not with_weights:
            cases.append((X, Y))
            continue
        wx, wy = rng.uniform(0, 2, size=n), rng.uniform(0, 2, size=m)
        if n > 1 and i % 3 == 0:
            wx[0] = 0.0  # a zero-weight token: still a candidate of every match
        if m > 1 and i % 3 == 1:
            wy[-1] = 0.0
        cases.append((X, Y, wx, wy))
    return cases


def _a3_greedy_reference(hyp_vecs, ref_vecs, hyp_w, ref_w):
    from markeval.semantic.bertscore import greedy_match

    return greedy_match(hyp_vecs, ref_vecs, hyp_w, ref_w)


def _a3_emd_reference(a, b, cost):
    from markeval.semantic.emd import earth_movers_distance

    return earth_movers_distance(a, b, cost).distance


def _a3_emd_cases(rng):
    cases = [([1, 1], [1, 1], [[0, 3], [1, 2]]), ([1], [1, 1, 2], [[1.0, 2.0, 3.0]]),
             ([2, 1], [1, 2], [[0, 1], [1, 0]])]
    for _ in range(12):
        n, m = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        X, Y = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
        cost = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1))
        cases.append((rng.uniform(0.1, 3, size=n), rng.uniform(0.1, 3, size=m), cost))
    return cases


def toy_problem():
    """Assignment 3, Q4: the toy problem "the the the" against "the cat sat", in 2-D.

    The hypothesis is three copies of ``e1``; the reference is ``e1``, ``e2`` and their unit
    diagonal.

    Returns
    -------
    hyp, ref : numpy.ndarray, shape (3, 2)

    Examples
    --------
    >>> hyp, ref = toy_problem()
    >>> hyp.shape, ref.shape
    ((3, 2), (3, 2))
    """
    hyp = np.array([[1.0, 0.0]] * 3)
    ref = np.array([[1.0, 0.0], [0.0, 1.0], [math.sqrt(0.5), math.sqrt(0.5)]])
    return hyp, ref


def _a3_toy_answer() -> dict:
    """Greedy P and R (uniform weights) and the EMD (Euclidean cost) of :func:`toy_problem`."""
    from markeval.semantic.bertscore import greedy_match
    from markeval.semantic.emd import earth_movers_distance

    hyp, ref = toy_problem()
    p, r, _ = greedy_match(hyp, ref, np.ones(3), np.ones(3))
    cost = np.sqrt(((hyp[:, None] - ref[None]) ** 2).sum(-1))
    return {"precision": p, "recall": r,
            "emd": earth_movers_distance(np.ones(3), np.ones(3), cost).distance}


# Words that all-MiniLM-L6-v2's tokenizer keeps whole, so whitespace words are word pieces.
_IDF_WORDS = ("the a cat dog sat on mat rug ran big small red blue house car tree river city "
              "news market game film music school water").split()


def _a3_idf_cases(rng):
    cases = [["the cat sat", "the dog sat", "the cat ran"], ["cat"], ["a a a", "a"]]
    for _ in range(8):
        docs = int(rng.integers(1, 8))
        cases.append([" ".join(rng.choice(_IDF_WORDS[: int(rng.integers(3, 25))],
                                          size=int(rng.integers(1, 9))).tolist())
                      for _ in range(docs)])
    return [(c,) for c in cases]


def _a3_idf_reference(corpus):
    from markeval.semantic.idf import idf_weights

    return dict(idf_weights(corpus).weights)


A3_SEGMENTS = {"ci": 100, "full": 560}  #: judged de-en segments used by Assignment 3, Q6


@functools.lru_cache(maxsize=2)
def _a3_idf_correlations(n: int) -> dict:
    """Assignment 3, Q6: Pearson r with DA of BERTScore F1 without and with idf (first n)."""
    from markeval.semantic.bertscore import bertscore
    from markeval.semantic.idf import idf_weights

    seg = wmt17_judged("de-en", n)
    hyps, refs = list(seg["hypothesis"]), list(seg["reference"])
    plain = bertscore(hyps, refs, progress=False).sentence_f1
    weighted = bertscore(hyps, refs, idf=idf_weights(refs), progress=False).sentence_f1
    return {"plain": _pearson(plain, seg["score"]), "idf": _pearson(weighted, seg["score"])}


def _a3_segments() -> int:
    from markeval.profile import current_profile

    return A3_SEGMENTS[current_profile()]


def _assignment_3() -> list[Task]:
    return [
        _task(3, "q1", "Cosine similarity matrix", 10, "code",
              reference=_cosine_reference, cases=lambda rng: _a3_vector_cases(rng, False),
              rtol=1e-7, atol=1e-9,
              hints=["Normalise every ROW to unit length, then one matrix product.",
                     "The result has shape (len(X), len(Y))."]),
        _task(3, "q2", "Greedy matching (BERTScore)", 20, "code",
              reference=_a3_greedy_reference, cases=lambda rng: _a3_vector_cases(rng, True),
              rtol=1e-7, atol=1e-9,
              hints=["Precision: each HYPOTHESIS token takes its best reference token "
                     "(a max over the reference axis), weighted by the hypothesis weights.",
                     "Every token is a candidate of the max, even one whose own weight is 0.",
                     "F = 2PR / (P + R), and 0 when P + R = 0."]),
        _task(3, "q3", "Earth Mover's Distance", 20, "code",
              reference=_a3_emd_reference, cases=_a3_emd_cases, rtol=1e-6, atol=1e-9,
              hints=["Normalise a and b to sum 1 first.",
                     "A linear programme: minimise sum F*C subject to row sums a, column sums "
                     "b, F >= 0 (scipy.optimize.linprog with A_eq).",
                     "Sending every unit to its nearest point is a lower bound, not the EMD."]),
        _task(3, "q4", "Greedy vs EMD on a toy problem", 10, "value",
              expected=_a3_toy_answer,
              rtol=1e-6,
              hints=["A dict with keys 'precision', 'recall' and 'emd'.",
                     "Three hypothesis tokens may all take the same reference token in greedy "
                     "matching; in a transport each reference token receives exactly 1/3."]),
        _task(3, "q4b", "Greedy vs EMD (explanation)", 5, "written"),
        _task(3, "q5", "Inverse document frequency", 15, "code",
              reference=_a3_idf_reference, cases=_a3_idf_cases, rtol=1e-9,
              hints=["df(w) counts DOCUMENTS that contain w at least once.",
                     "idf(w) = log((M + 1) / (df(w) + 1)) with M documents."]),
        _task(3, "q6", "idf on WMT17 (correlations)", 15, "value",
              expected=lambda: _a3_idf_correlations(_a3_segments()), rtol=1e-4,
              hints=["idf weights from the references: idf_weights(references); pass them as "
                     "bertscore(..., idf=weights).",
                     "Use the first A3_SEGMENTS[profile] judged segments of wmt17_judged()."]),
        _task(3, "q6b", "idf effects (explanation)", 5, "written"),
    ]


# --- Assignment 4: Mark-Evaluate ----------------------------------------------------------------

def _a4_point_sets(rng, count: int, *, grid: bool):
    """Pairs of point sets; on a small integer grid (ties, duplicates) or Gaussian."""
    out = []
    for i in range(count):
        n, n_p, d = int(rng.integers(4, 25)), int(rng.integers(4, 25)), int(rng.integers(1, 4))
        if grid and i % 2 == 0:
            S = rng.integers(0, 5, size=(n, d)).astype(float)
            Sp = rng.integers(0, 5, size=(n_p, d)).astype(float) + float(rng.integers(0, 3))
        else:
            S = rng.normal(size=(n, d))
            Sp = rng.normal(size=(n_p, d)) + rng.uniform(0, 4)
        out.append((S, Sp, int(rng.integers(1, min(n, n_p)))))
    return out


def _a4_radii_reference(X, k):
    from markeval.geometry import knn_balls

    return np.asarray(knn_balls(X, k).radii)


def _a4_inside_reference(Q, S, k):
    from markeval.geometry import ball_membership, knn_balls

    return np.asarray(ball_membership(Q, knn_balls(S, k)).inside_any)


def _a4_counts_reference(S, Sp, k):
    from markeval.population.mark_evaluate import me_petersen

    r = me_petersen(S, Sp, k)
    return (r.marked, r.captured, r.recaptured)


def _a4_me_score_reference(estimate, population):
    from markeval.population.mark_evaluate import me_score

    return me_score(estimate, population)


def _a4_me_score_cases(rng):
    cases = [(20.0, 20), (25.0, 20), (15.0, 20), (60.0, 20), (0.0, 20), (math.inf, 20)]
    cases += [(float(rng.uniform(0, 300)), int(rng.integers(2, 150))) for _ in range(14)]
    return cases


def _a4_petersen_cases(rng):
    cases = _a4_point_sets(rng, 12, grid=True)
    far = rng.normal(size=(8, 2))
    cases.append((far, far + 100.0, 2))  # disjoint: nothing recaptured
    ref, pool, _ = bbc_collapse_data()
    for _ in range(2):  # real sentence embeddings
        a = rng.choice(len(ref), size=30, replace=False)
        b = rng.choice(len(pool), size=30, replace=False)
        cases.append((ref[a], pool[b], int(rng.integers(1, 6))))
    return cases


def _a4_petersen_reference(S, Sp, k):
    from markeval.population.mark_evaluate import me_petersen

    return me_petersen(S, Sp, k).score


def collapse_schedule(labels, topic_order, n: int) -> dict:
    """Rows of the evaluation set at every diversity level of the mode-collapse study.

    Level ``L`` (``L = len(topic_order), …, 1``) keeps the first ``L`` topics of
    ``topic_order``. It takes ``n // L`` rows from each kept topic, one more from each of the
    first ``n % L`` of them, always the *first* rows of that topic in pool order, so the set
    always has ``n`` rows.

    Returns
    -------
    dict
        ``{L: list of row indices into the pool}``, levels in decreasing order.

    Examples
    --------
    >>> collapse_schedule(["x", "y", "x", "y", "x"], ["y", "x"], 3)
    {2: [1, 3, 0], 1: [1, 3]}

    (Level 1 has only two "y" rows, fewer than ``n``: the function takes what there is.)
    """
    labels = list(labels)
    out = {}
    for level in range(len(topic_order), 0, -1):
        rows = []
        for t, topic in enumerate(topic_order[:level]):
            share = n // level + (1 if t < n % level else 0)
            rows += [i for i, lab in enumerate(labels) if lab == topic][:share]
        out[level] = rows
    return out


def _mode_collapse_scores(reference, pool, labels, topic_order, n: int, k: int) -> dict:
    """The mode-collapse study of Assignment 4, Q6, with markeval's estimators.

    For every level of :func:`collapse_schedule`, the evaluation set ``pool[rows]`` is scored
    against ``reference`` with :func:`markeval.mark_evaluate`.

    Returns
    -------
    dict
        ``{level: (petersen, schnabel_quality, schnabel_diversity)}`` (floats), levels in
        decreasing order.
    """
    from markeval.population.mark_evaluate import mark_evaluate

    pool = np.asarray(pool, float)
    out = {}
    for level, rows in collapse_schedule(labels, topic_order, n).items():
        r = mark_evaluate(reference, pool[rows], k=k)
        out[level] = (r.petersen.score, r.schnabel_quality.score, r.schnabel_diversity.score)
    return out


def _a4_collapse_cases(rng):
    cases = []
    for _ in range(3):  # well separated Gaussian clusters
        topics = ["t0", "t1", "t2", "t3"]
        centres = rng.normal(size=(4, 3)) * 10
        labels = rng.permutation(np.repeat(topics, 12)).tolist()
        pool = np.array([centres[topics.index(lab)] for lab in labels]) + rng.normal(size=(48, 3))
        ref = np.repeat(centres, 5, axis=0) + rng.normal(size=(20, 3))
        order = rng.permutation(topics).tolist()
        cases.append((ref, pool, labels, order, 20, int(rng.integers(1, 4))))
    ref, pool, labels = bbc_collapse_data()
    cases.append((ref, pool, labels, list(A4_TOPIC_ORDER), len(ref), A4_K))
    return cases


A4_SIZES = {"ci": (100, 40), "full": (500, 200)}  #: (reference size, pool rows per topic)
A4_TOPIC_ORDER = ("business", "entertainment", "politics", "sports", "tech")
A4_K = 3  #: neighbours of the BBC study (at k = 1 or 2 the ci-sized study is mostly noise)


@functools.lru_cache(maxsize=2)
def _bbc_collapse_data(profile: str):
    from markeval.experiments.sensitivity import bbc_sets
    from markeval.encoders import sentence_embeddings

    n_ref, per_topic = A4_SIZES[profile]
    ref_texts, pool = bbc_sets(n_ref, pool_per_topic=per_topic, seed=0)
    ref = sentence_embeddings(ref_texts, progress=False)
    emb = sentence_embeddings(list(pool["sentence"]), progress=False)
    return (np.asarray(ref, float), np.asarray(emb, float), tuple(pool["topic"]))


def bbc_collapse_data():
    """BBC News sentence embeddings (all-MiniLM-L6-v2) for the Assignment 4 study.

    A reference of ``n`` sentences from half 'a' of the corpus (equal shares of the five
    topics) and a pool from half 'b', sizes from :data:`A4_SIZES` for the current profile.
    Cached: the notebook and its checker encode once.

    Returns
    -------
    reference : numpy.ndarray, shape (n, 384)
    pool : numpy.ndarray, shape (5 * per_topic, 384)
    labels : tuple of str
        The topic of every pool row (rows are ordered by topic).
    """
    from markeval.profile import current_profile

    ref, pool, labels = _bbc_collapse_data(current_profile())
    return ref.copy(), pool.copy(), list(labels)


def _a4_biggest_drop() -> str:
    """Assignment 4, Q7: which score falls most from 5 topics to 1 on the BBC study."""
    ref, pool, labels = bbc_collapse_data()
    table = _mode_collapse_scores(ref, pool, labels, list(A4_TOPIC_ORDER), len(ref), A4_K)
    names = ("petersen", "schnabel_quality", "schnabel_diversity")
    drops = {name: table[5][i] - table[1][i] for i, name in enumerate(names)}
    return max(drops, key=drops.get)


def _assignment_4() -> list[Task]:
    return [
        _task(4, "q1", "k-NN radii", 10, "code",
              reference=_a4_radii_reference,
              cases=lambda rng: [(S, k) for S, _, k in _a4_point_sets(rng, 14, grid=True)],
              hints=["The radius of x is the distance to its k-th nearest neighbour in its own "
                     "set, x itself excluded (a duplicate of x is a neighbour at distance 0).",
                     "Set the diagonal of the distance matrix to inf, sort each row, take "
                     "column k - 1; return distances, not squared distances."]),
        _task(4, "q2", "Inside any ball", 15, "code",
              reference=_a4_inside_reference,
              cases=lambda rng: [(Sp, S, k) for S, Sp, k in _a4_point_sets(rng, 14, grid=True)],
              hints=["The balls are those of S (radii from S alone); the queries are Q.",
                     "Balls are closed: a point exactly on the boundary is inside."]),
        _task(4, "q3", "Petersen counts M, C, R", 15, "code",
              reference=_a4_counts_reference, cases=lambda rng: _a4_point_sets(rng, 14, grid=True),
              hints=["a = number of s' inside some ball of S; b = number of s inside some ball "
                     "of S'.",
                     "M = |S| + a, C = |S'| + b, R = a + b."]),
        _task(4, "q4", "ME from an estimate (Eq. 1)", 10, "code",
              reference=_a4_me_score_reference, cases=_a4_me_score_cases,
              hints=["Eq. 1 as printed uses max; the erratum is min: 1 - min(|P̂ - P| / P, 1).",
                     "The score is always in [0, 1]."]),
        _task(4, "q5", "ME_Petersen", 15, "code",
              reference=_a4_petersen_reference, cases=_a4_petersen_cases,
              hints=["P̂ = M C / R, P = |S| + |S'|.",
                     "R = 0 (nothing recaptured) means P̂ = inf and a score of 0."]),
        _task(4, "q6", "Mode-collapse study", 20, "code",
              reference=_mode_collapse_scores, cases=_a4_collapse_cases, rtol=1e-9,
              hints=["collapse_schedule(labels, topic_order, n) gives the rows of every level.",
                     "mark_evaluate(reference, evaluation, k) returns petersen, "
                     "schnabel_quality and schnabel_diversity results; keep their .score.",
                     "Quality is ME_Schnabel(S_r, S_e), diversity ME_Schnabel(S_e, S_r): the "
                     "argument order matters."]),
        _task(4, "q7", "Which score falls most?", 5, "value",
              expected=_a4_biggest_drop,
              hints=["One of 'petersen', 'schnabel_quality', 'schnabel_diversity': compare the "
                     "level-5 and level-1 scores of your study on the BBC data."]),
        _task(4, "q8", "Quality vs diversity (interpretation)", 10, "written"),
    ]
