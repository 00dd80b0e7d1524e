"""Paired significance tests between systems scored on the same references.

Is system B better than the baseline A, or is the gap noise? Both tests here compare the
actual score difference ``delta = |score(B) - score(A)|`` with the differences that arise by
chance, as ``sacrebleu --paired-bs`` / ``--paired-ar`` (sacrebleu 2.6.0) do, defaults and
random streams included, so that the p-values, means and intervals are sacrebleu's own:

* **Paired bootstrap resampling** (``test="bs"``; Koehn, 2004): draw ``n_resamples``
  (1000) resamples of the sentences with replacement, the *same* resamples for every
  system, and score each system on each. The p-value counts the resamples whose centred
  difference ``|B_r - A_r| - mean_r |B_r - A_r|`` exceeds ``delta``. Each system also gets
  the bootstrap mean of its score and a 95 % confidence interval.
* **Paired approximate randomization** (``test="ar"``; Riezler and Maxwell, 2005): in each of
  ``n_resamples`` (10000) trials, swap the two systems' outputs on a random half of the
  sentences and score both pseudo-systems; the p-value counts the trials whose
  ``|A'_t - B'_t|`` exceeds ``delta``.

Both p-values are ``(c + 1) / (n + 1)``, where ``c`` counts the resamples or trials strictly
above the observed ``delta`` (the +1 keeps the test's false-rejection rate at or below its
level). Ties matter for discrete scores: TER's pseudo-systems share their reference length,
so ``|A'_t - B'_t|`` often equals ``delta`` exactly; like sacrebleu, a tie is not counted.

How a metric is resampled: through its :class:`~markeval.resampling.SufficientStatistics`,
the one path from sentences to scores that corpus scores and the bootstrap use too.

* **Sufficient statistics** (BLEU, GLEU, chrF, chrF++ and TER; the registry's
  ``statistics``): per-sentence statistics are computed once, a resample sums rows of them (a
  matrix product with the resample's multiplicities), and the score is recomputed from the
  sums, vectorised over all resamples (:func:`~markeval.resampling.resampled_scores`).
  Nothing is re-tokenised, and references are prepared once for all systems (the
  registry's ``prepare``: BLEU's and GLEU's n-gram tables).
* **Per-sentence scores**: any other line-aligned text metric of :mod:`markeval.registry`
  with per-item scores (METEOR, the ROUGE types, BERTScore, MoverScore) is resampled as the
  mean of its item scores (:class:`~markeval.resampling.ItemScores`). That mean is the
  metric's corpus score: exactly for the ROUGE types and MoverScore (``numpy`` mean);
  METEOR's ``sum / len`` can differ from numpy's mean in the last bit, and BERTScore's F1 is
  the mean taken in the model's precision. The reported ``score`` (and the observed
  difference) is the metric's own corpus score.

Random streams (identical to sacrebleu's): ``numpy.random.default_rng(seed)``;
``rng.choice(n, size=(n_resamples, n))`` gives the bootstrap resamples (the same for the
baseline and every system); ``rng.integers(2, size=(n_trials, n), dtype=bool)`` the AR swaps,
followed, on the same generator, by 1000 bootstrap resamples for each system's interval
(sacrebleu's ``n_ar_confidence``; the baseline's interval under AR uses a fresh generator,
as in sacrebleu). sacrebleu's paired bootstrap casts the statistics to float32 before summing
them; that is reproduced too, so BLEU agrees exactly.

**The smallest test set: six sentences.** Approximate randomization is an exact permutation
test drawn at random: of the ``2**n`` ways to swap ``n`` sentences between two systems, two
(swap none, swap all) give the observed difference itself, so the exact p-value can never be
below ``2 / 2**n``. For ``n <= 5`` that floor is above 0.05 (1/16 at five sentences): no
outcome could be evidence at the usual level. The bootstrap draws from the same ``n``
sentences and is as blind (one sentence has one resample: itself). Yet the strict count
below, sacrebleu's, gives a single sentence p = 1 / (N + 1), "significant". So fewer than
:data:`MIN_SENTENCES` sentences are refused, with the count and the minimum. Refusing was
chosen over returning p = 1 with a warning: a p-value of 1 reads as a measured "no
difference" in every table and script that drops warnings, and nothing was measured.

**What a request may cost.** The index draws (resamples or trials times sentences) are capped
by :data:`markeval.resampling.MAX_DRAWS`, and approximate randomization's swap matrix, which
sacrebleu's random stream draws in one array (drawing it in blocks gives other swaps), by
:data:`MAX_SWAP_BYTES`; a larger request is refused with its size and the largest allowed.

Two deliberate differences from sacrebleu 2.6.0:

* no difference: when the two corpus scores are equal (``delta = 0``: a system compared with
  itself, or with an identical output) the p-value is 1. sacrebleu's strict count finds no
  null value above 0 and reports p = 1 / (n + 1), "significant";
* the seed 0: sacrebleu leaves the systems' generator unseeded when the seed is 0
  (``if self._seed``); here every seed, 0 included, is used as given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from markeval._checks import (check_bool, check_choice, check_confidence, check_int,
                              check_references, check_seed, check_string, check_strings)
from markeval._signature import extend_signature
from markeval.resampling import (ItemScores, SufficientStatistics, check_draws, exact_dtype,
                                 resample_indices, resampled_scores)

__all__ = ["SignificanceResult", "SystemComparison", "TESTS", "paired_significance"]

#: The two tests and their default number of resamples (bs) or trials (ar), as in sacrebleu.
TESTS = ("bs", "ar")
DEFAULT_RESAMPLES = {"bs": 1000, "ar": 10000}
#: Bootstrap resamples behind each system's interval under AR (sacrebleu's n_ar_confidence).
AR_CONFIDENCE_RESAMPLES = 1000
#: Rows of resamples or trials handled at once (bounds the memory of a block).
_BLOCK_ENTRIES = 4_000_000
#: Fewest sentences the tests can say anything about (see the module notes): the smallest n
#: with 2 / 2**n <= 0.05.
MIN_SENTENCES = 6
#: Largest swap matrix (trials x sentences, one byte each) approximate randomization draws.
MAX_SWAP_BYTES = 2**31


@dataclass(frozen=True)
class SystemComparison:
    """One system of a paired test: its score, bootstrap mean and interval, p-value.

    Attributes
    ----------
    name : str
    score : float
        The metric on the whole test set.
    mean : float
        Mean of the system's bootstrap scores.
    ci_low, ci_high : float
        The bootstrap scores at ranks ``floor(n (1 - confidence) / 2)`` and the mirror rank
        from the top, as sacrebleu reads its 95 % interval (``n // 40``).
    p_value : float or None
        Against the baseline; None for the baseline itself.
    """

    name: str
    score: float
    mean: float
    ci_low: float
    ci_high: float
    p_value: float | None

    @property
    def ci(self) -> float:
        """Half-width of the interval: sacrebleu's ``± ci``."""
        return 0.5 * (self.ci_high - self.ci_low)

    @property
    def is_baseline(self) -> bool:
        return self.p_value is None

    def significant(self, alpha: float = 0.05) -> bool | None:
        """``p_value < alpha`` (None for the baseline). sacrebleu stars ``p <= 0.05``."""
        return None if self.p_value is None else self.p_value < alpha


@dataclass(frozen=True)
class SignificanceResult:
    """The outcome of :func:`paired_significance`: one row per system, baseline first.

    Attributes
    ----------
    rows : tuple of SystemComparison
    test : {"bs", "ar"}
    metric : str
    n_resamples : int
        Bootstrap resamples (bs) or randomization trials (ar).
    seed : int
    confidence : float
    signature : str
        The metric's signature with the test, its size and the seed.
    higher_is_better : bool
        The metric's orientation (TER: False); the tests are two-sided either way.
    """

    rows: tuple[SystemComparison, ...]
    test: str
    metric: str
    n_resamples: int
    seed: int
    confidence: float
    signature: str
    higher_is_better: bool = True

    item_scores: ClassVar[None] = None

    @property
    def baseline(self) -> SystemComparison:
        return self.rows[0]

    @property
    def score(self) -> float:
        """The baseline's score (the result protocol's headline)."""
        return self.rows[0].score

    def __getitem__(self, name: str) -> SystemComparison:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(f"no system named {name!r} (systems: {[r.name for r in self.rows]})")

    def to_frame(self):
        """The rows as a pandas DataFrame indexed by system name."""
        import pandas as pd

        records = [{"system": r.name, "score": r.score, "mean": r.mean, "ci": r.ci,
                    "ci_low": r.ci_low, "ci_high": r.ci_high, "p_value": r.p_value,
                    "baseline": r.is_baseline} for r in self.rows]
        return pd.DataFrame.from_records(records, index="system")

    def __str__(self) -> str:
        return format_table([self])


def format_table(results: list[SignificanceResult], width: int = 2) -> str:
    """sacrebleu's paired-test table (plain text) for one or more metrics' results."""
    first = results[0]
    pct = f"{first.confidence:.0%}"
    header = ["System", *(f"{_label(r)} (μ ± {pct} CI)" for r in results)]
    body = []
    for i, row in enumerate(first.rows):
        name = f"Baseline: {row.name}" if i == 0 else row.name
        cells = [name]
        for result in results:
            r = result.rows[i]
            cell = f"{r.score:.{width}f} ({r.mean:.{width}f} ± {r.ci:.{width}f})"
            if r.p_value is not None:
                cell += f" (p = {r.p_value:.4f})" + ("*" if r.p_value <= 0.05 else "")
            cells.append(cell)
        body.append(cells)
    widths = [max(len(line[j]) for line in [header, *body]) for j in range(len(header))]
    lines = ["  ".join(c.rjust(w) if j == 0 else c.ljust(w)
                       for j, (c, w) in enumerate(zip(line, widths))).rstrip()
             for line in [header, *body]]
    kind = ("bootstrap resampling" if first.test == "bs" else "approximate randomization")
    what = "resampling trials" if first.test == "bs" else "trials"
    msg = f"Paired {kind} test with {first.n_resamples} {what}"
    lines += ["", "-" * len(msg), msg, "-" * len(msg),
              f" - Each system is pairwise compared to the baseline {first.rows[0].name!r}.",
              f"   Actual score (bootstrap mean ± {pct} CI half-width) for each metric.",
              " - p-value: the chance of an absolute difference larger than the observed",
              "   one if the system and the baseline came from the same process;",
              "   '*' marks p <= 0.05 (a difference, not proof that the system is better).",
              "", "-----------------", "Metric signatures", "-----------------"]
    lines += [f" - {r.metric:<10} {r.signature}" for r in results]
    return "\n".join(lines)


def _label(result: SignificanceResult) -> str:
    if result.metric in ("chrf", "chrf++"):  # chrF2 or chrF2++, as sacrebleu names the column
        return result.signature.split("|")[0]
    from markeval import registry

    return registry.get(result.metric).label


# --- How each metric is resampled -----------------------------------------------------------


def _statistics(name: str, references, options, progress: bool
                ) -> Callable[[list[str]], SufficientStatistics]:
    """``hypotheses -> SufficientStatistics`` of the registry metric ``name`` on
    ``references``, its ``options`` checked as a direct call of the metric checks them."""
    from markeval import registry

    info = registry.get(name)
    usable = [m.name for m in registry.metrics(inputs="texts")
              if m.statistics is not None or m.items is not None]
    if name not in usable:
        raise ValueError(f"metric={name!r} has neither sufficient statistics nor per-sentence "
                         f"scores to resample (choose one of {usable})")
    if info.statistics is not None:
        function = info.statistics_function
        options = {**info.options, **_check_options(info, function, options)}
        prepared = info.prepared_references(references, options)
        return lambda hypotheses: function(hypotheses, prepared, **options)
    options = _check_options(info, info.function, options)
    if "progress" in _parameters(info.function):
        options["progress"] = progress

    def item_scores(hypotheses):
        result = info.compute(hypotheses, references, **options)
        return ItemScores(np.asarray(getattr(result, info.items), dtype=np.float64),
                          result.signature, info.higher_is_better, score=info.value(result))

    return item_scores


def _check_options(info, function, options) -> dict:
    """``options`` as keyword arguments of ``function`` (the metric's statistics or corpus
    function): a mapping of its option names, none of them one that the metric's name fixes
    (chrF++'s ``word_order``, a ROUGE type's ``types``). Values are checked by the metric
    itself, as in a direct call."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict of {info.name}'s keyword arguments (e.g. "
                        f"{{'tokenize': 'intl'}}), got {type(options).__name__}: {options!r}")
    known = sorted(_parameters(function) - {"hypotheses", "references", "progress"})
    for key, value in options.items():
        if key not in known:
            raise TypeError(f"unknown option {key!r} for metric={info.name!r} (its options: "
                            f"{', '.join(known)})")
        if key in info.options and value != info.options[key]:
            raise ValueError(f"metric={info.name!r} fixes {key}={info.options[key]!r}, so "
                             f"options cannot set {key}={value!r}; choose the metric by name "
                             f"instead (e.g. metric={info.family!r})")
    return dict(options)


def _parameters(fn) -> set[str]:
    import inspect

    return set(inspect.signature(fn).parameters)


# --- The tests ------------------------------------------------------------------------------


def _estimate(scores: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """sacrebleu's ``estimate_ci``: mean of the sorted scores and the bounds at rank
    ``floor(n * (1 - confidence) / 2)`` from either end."""
    ordered = np.sort(scores)
    n = len(ordered)
    lower = int(math.floor(n * (1.0 - confidence) / 2 + 1e-9))
    return float(ordered.mean()), float(ordered[lower]), float(ordered[n - lower - 1])


def _p_value(null: np.ndarray, delta: float) -> float:
    # sacrebleu's count, strictly above delta; no difference at all is never significant.
    if delta == 0:
        return 1.0
    return (int(np.sum(null > delta)) + 1) / (len(null) + 1)


def _blocks(n: int, rows_total: int):
    rows = max(1, _BLOCK_ENTRIES // max(n, 1))
    return [(start, min(rows, rows_total - start)) for start in range(0, rows_total, rows)]


def paired_significance(baseline, systems, references, *, metric: str = "bleu",
                        test: str = "bs", n_resamples: int | None = None, seed: int = 12345,
                        confidence: float = 0.95, options: Mapping | None = None,
                        progress: bool = True) -> SignificanceResult:
    """Paired bootstrap or approximate-randomization test of systems against a baseline.

    Parameters
    ----------
    baseline : tuple (str, list of str)
        ``(name, hypotheses)`` of the baseline system.
    systems : dict
        ``name -> hypotheses`` of the systems compared with the baseline (line-aligned with
        it and with ``references``).
    references : list
        ``references[i]``: the reference string, or list of reference strings, of line ``i``.
    metric : str, default "bleu"
        ``"bleu"``, ``"gleu"``, ``"chrf"``, ``"chrf++"`` and ``"ter"`` resample sufficient
        statistics; any registry text metric with per-item scores (``"meteor"``,
        ``"rouge1"`` … ``"rougeLsum"``, ``"bertscore"``, ``"moverscore"``) resamples those.
    test : {"bs", "ar"}, default "bs"
        Paired bootstrap resampling or paired approximate randomization.
    n_resamples : int, optional
        Bootstrap resamples (bs, default 1000) or randomization trials (ar, default 10000).
    seed : int, default 12345
        Seed of ``numpy.random.default_rng`` (sacrebleu's ``SACREBLEU_SEED`` default).
    confidence : float, default 0.95
        Coverage of each system's bootstrap interval.
    options : mapping, optional
        Keyword arguments of the metric (``{"tokenize": "intl"}``, ``{"smooth": "floor"}``),
        checked as a direct call of the metric checks them; an unknown name, or one the
        metric's name fixes (``word_order`` of ``"chrf++"``), is refused.
    progress : bool, default True
        Progress bar over the systems (and the metric's own, if it has one).

    Returns
    -------
    SignificanceResult
        ``rows`` (baseline first), ``to_frame()``, and sacrebleu's table as ``str()``.

    Raises
    ------
    ValueError
        For fewer than :data:`MIN_SENTENCES` sentences (see the module notes), and for a
        request beyond :data:`~markeval.resampling.MAX_DRAWS` draws or, under ``"ar"``,
        :data:`MAX_SWAP_BYTES` of swaps.

    Examples
    --------
    >>> refs = ["the cat sat on the mat", "a dog barked at the postman",
    ...         "it rained all day long", "we went to the beach",
    ...         "she reads a book every night", "the train was late again"]
    >>> base = ("base", ["the cat sat on a mat", "a dog barked at postman",
    ...                  "it rained all day", "we went to a beach",
    ...                  "she reads books every night", "the train is late again"])
    >>> result = paired_significance(base, {"same": base[1]}, refs, test="ar",
    ...                              n_resamples=200, progress=False)
    >>> result["same"].p_value  # a system against itself: never significant
    1.0
    >>> round(result.baseline.score, 2)
    43.35
    """
    test = check_choice(test, "test", TESTS)
    if n_resamples is None:
        n_resamples = DEFAULT_RESAMPLES[test]
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1)
    seed = check_seed(seed)
    confidence = check_confidence(confidence)
    progress = check_bool(progress, "progress")
    metric = check_string(metric, "metric")
    if not (isinstance(baseline, tuple) and len(baseline) == 2):
        raise TypeError(f"baseline must be a (name, hypotheses) tuple, got "
                        f"{type(baseline).__name__}")
    base_name = check_string(baseline[0], "baseline name")
    base_hyps = check_strings(baseline[1], "baseline hypotheses")
    if not isinstance(systems, Mapping) or not systems:
        raise TypeError("systems must be a non-empty dict name -> hypotheses, got "
                        f"{type(systems).__name__}" + (" (empty)" if systems == {} else ""))
    named = []
    for name, hyps in systems.items():
        name = check_string(name, "system name")
        if name == base_name:
            raise ValueError(f"system {name!r} has the baseline's name")
        hyps = check_strings(hyps, f"systems[{name!r}]")
        if len(hyps) != len(base_hyps):
            raise ValueError(f"systems[{name!r}] has {len(hyps)} lines but the baseline "
                             f"{base_name!r} has {len(base_hyps)}")
        named.append((name, hyps))
    references = check_references(base_hyps, references)
    n = len(base_hyps)
    if n < MIN_SENTENCES:
        raise ValueError(f"the paired tests need at least {MIN_SENTENCES} sentences to say "
                         f"anything at p <= 0.05 (below that, no outcome could); the test set "
                         f"has {n}")
    check_draws(n, n_resamples, "trials" if test == "ar" else "resamples")
    if test == "ar" and n * n_resamples > MAX_SWAP_BYTES:
        raise ValueError(f"n_resamples={n_resamples} trials of {n} sentences need a "
                         f"{n * n_resamples / 2**30:.3g} GiB swap matrix in one array (the "
                         f"random stream that gives sacrebleu's p-values), beyond the "
                         f"{MAX_SWAP_BYTES / 2**30:.0f} GiB allowed; ask for at most "
                         f"{MAX_SWAP_BYTES // n} trials")
    statistics_of = _statistics(metric, references, options, progress)
    from tqdm import tqdm

    all_named = [(base_name, base_hyps), *named]
    stats = [statistics_of(hyps) for _, hyps in tqdm(
        all_named, desc=f"{metric} statistics", unit="system", disable=not progress,
        leave=False)]
    scores = [stats_j.corpus_score() for stats_j in stats]
    if test == "bs":
        comparisons = _paired_bootstrap(stats, scores, n_resamples, seed, confidence)
        fields = {"test": "bs", "n": n_resamples, "seed": seed}
    else:
        comparisons = _paired_randomization(stats, scores, n_resamples, seed, confidence)
        fields = {"test": "ar", "n": n_resamples, "bs": AR_CONFIDENCE_RESAMPLES, "seed": seed}
    rows = tuple(SystemComparison(name, score, *rest)
                 for (name, _), score, rest in zip(all_named, scores, comparisons))
    return SignificanceResult(rows, test, metric, n_resamples, seed, confidence,
                              extend_signature(stats[0].signature, **fields),
                              stats[0].higher_is_better)


def _paired_bootstrap(stats, scores, n_resamples, seed, confidence):
    n = len(stats[0])
    indices = resample_indices(n, n_resamples, seed, block_entries=_BLOCK_ENTRIES)
    boot = resampled_scores(stats, indices, float32=True)
    out = [(*_estimate(boot[0], confidence), None)]
    for j in range(1, len(stats)):
        delta = abs(scores[0] - scores[j])
        diffs = np.abs(boot[j] - boot[0])
        out.append((*_estimate(boot[j], confidence), _p_value(diffs - diffs.mean(), delta)))
    return out


def _paired_randomization(stats, scores, n_trials, seed, confidence):
    n = len(stats[0])
    rng = np.random.default_rng(seed)
    swaps = rng.integers(2, size=(n_trials, n), dtype=bool)
    ci_indices = rng.choice(n, size=(AR_CONFIDENCE_RESAMPLES, n), replace=True)
    # the baseline's interval under AR uses a fresh generator, as in sacrebleu
    base_boot = resampled_scores(stats[:1], resample_indices(
        n, AR_CONFIDENCE_RESAMPLES, seed, block_entries=_BLOCK_ENTRIES), float32=True)[0]
    out = [(*_estimate(base_boot, confidence), None)]
    boots = resampled_scores(stats[1:], [ci_indices], float32=True)
    base = stats[0].matrix.astype(np.float64)
    systems = [system.matrix.astype(np.float64) for system in stats[1:]]
    # Pseudo-system A takes the baseline's sentence where the swap is on, B the system's:
    # A = system total + swaps @ (base - system), B = both totals - A. Integer statistics
    # give exact products, so the systems side by side make one product per block, in
    # float32 where it holds the sums; float ones keep a float64 product each (BLAS sums in
    # an order that depends on the shape).
    exact = all(np.array_equal(rows, np.rint(rows)) for rows in [base, *systems])
    groups = [range(len(systems))] if exact else [[j] for j in range(len(systems))]
    diffs = [np.concatenate([base - systems[j] for j in group], axis=1) for group in groups]
    dtype = exact_dtype(max(np.abs(d).sum(axis=0).max() for d in diffs)) if exact else np.float64
    diffs = [diff.astype(dtype) for diff in diffs]
    totals = [rows.sum(axis=0) for rows in systems]
    both = [base.sum(axis=0) + total for total in totals]
    k = base.shape[1]
    null = [[] for _ in systems]
    for start, count in _blocks(n, n_trials):
        weights = swaps[start : start + count].astype(dtype)
        for group, diff in zip(groups, diffs):
            product = weights @ diff
            for i, j in enumerate(group):
                a = product[:, i * k : (i + 1) * k] + totals[j]
                b = both[j] - a
                null[j].append(np.abs(stats[j + 1].scores(a) - stats[j + 1].scores(b)))
    for j, system_null in enumerate(null):
        delta = abs(scores[0] - scores[j + 1])
        out.append((*_estimate(boots[j], confidence),
                    _p_value(np.concatenate(system_null), delta)))
    return out
