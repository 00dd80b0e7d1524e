"""Set metrics on word samples: PRD, IPR and Mark-Evaluate of one set against another.

The correlation studies (TAC summaries, WMT17 systems and segments) score a text's word
samples (one per word piece per layer) against its references' pooled samples with the same
scorer, :class:`WordSetMetrics`: it shares the reference side's geometry between the texts
scored against it, and computes every K of a grid from one geometry. Where a pair of sets is
too small for the settings (a short segment), :func:`adapted_set_scores` adapts them by the
stated rules of :data:`ADAPTATION_RULES`.

Every score is keyed by its registry name and K, ``("me_petersen", 1)``, the names a result
row carries (:mod:`markeval.experiments.vocabulary`); tables label them when printing. Besides
its own, the scorer scores every metric of two embedding sets added to the registry
(:func:`markeval.registry.added`) on the same pair of sets, under ``(name, None)``: a user's
metric joins the TAC and WMT17 studies through the registry alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from markeval import geometry, registry
from markeval._checks import check_choice, check_int, check_seed
from markeval.distribution.prd import prd
from markeval.experiments.parallel import run_units
from markeval.population.mark_evaluate import mark_evaluate_from_balls

__all__ = ["ADAPTATION_RULES", "WordSetMetrics", "adapted_set_scores"]

# Texts per parallel unit (about 2.5 s of work for TAC word samples).
_UNIT = 8
#: The k-NN set metrics, in the order they are returned at each K (PRD, without a K, first).
_WITH_K = ("ipr_precision", "me_petersen", "me_schnabel_quality", "me_capture")


class WordSetMetrics:
    """PRD precision, IPR precision and Mark-Evaluate of one summary against its references.

    A callable for :func:`set_scores`. The summary's samples and the references' samples come
    from ``embed`` (word level: :func:`markeval.population.mark_evaluate.word_samples`, one
    sample per word piece per layer); the reference set is all the given references' samples
    pooled. For every ``K`` in ``ks`` it returns, from one geometry per ``K`` (the balls of
    both sets and who lies in whose ball), each score keyed by its registry name and K, as a
    result row names it (:mod:`markeval.experiments.vocabulary`):

    * ``("me_petersen", k)``, ``("me_schnabel_quality", k)``, ``("me_capture", k)`` —
      exactly :func:`markeval.population.mark_evaluate.mark_evaluate` ``(reference, summary,
      k)`` (quality = ME_Schnabel(S_r, S_e));
    * ``("ipr_precision", k)`` — exactly
      :func:`markeval.distribution.ipr.improved_precision_recall` ``(reference, summary, k)``:
      the share of the summary's samples inside some reference ball;

    and ``("prd_precision", None)`` (``F_{1/8}`` of :func:`markeval.distribution.prd.prd`). PRD
    clusters the union of the two sets, so the larger (the references, about four times the
    summary) is subsampled without replacement to the size of the smaller, with ``seed``.
    Last come the metrics of ``added``, each ``(name, None)``: its registry headline of
    ``(references' samples, summary's samples)``.

    Work is shared: the reference set's samples and its balls (computed once at the largest
    ``K``; the balls at a smaller ``K`` are their first neighbours) are kept for the next
    call with the same references, i.e. for all the system summaries of a topic. On the index
    path only the samples are kept: each call searches one index over the union of the
    references and the summary for both sets' balls and their members
    (:func:`markeval.geometry.mutual_balls_at`), faster than three searches.

    A summary with fewer than ``min_samples`` samples (an empty summary has none) gets 0 on
    every score: it is the worst possible summary, and the metrics are undefined on it
    (k-NN balls need ``K + 1`` points, the clustering ``num_clusters``).
    :attr:`n_too_short` counts them.

    Parameters
    ----------
    embed : callable
        ``embed(texts) -> array (n_samples, dim)``.
    ks : sequence of int, default (1, 2, 3, 5)
    prd_clusters : int, default 20
    prd_runs : int, default 2
        Clusterings averaged per PRD curve.
    seed : int, default 0
    dtype : {"float32", "float64"}, default "float32"
        Arithmetic of the distance blocks; the k-NN and membership decisions are exact either
        way (:mod:`markeval.geometry`), float32 is faster.
    neighbours : {"exact", "index"} or IndexSettings, default "exact"
        How the balls and their members are found (:mod:`markeval.geometry`): every distance,
        or a neighbour index's candidates, for sets of 10^5 samples and more (what the index
        can miss, and its audit: :mod:`markeval.geometry.index`).
    added : sequence of str, optional
        Registry names of further metrics of two embedding sets to score on the same sets;
        default every one added by :func:`markeval.registry.register`
        (:func:`markeval.registry.added`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> vectors = {w: rng.normal(size=4) for w in "abcdefghij"}
    >>> embed = lambda texts: np.array([vectors[w] for t in texts for w in t.split()])
    >>> scorer = WordSetMetrics(embed, ks=(1, 2), prd_clusters=3, prd_runs=1)
    >>> s = scorer(["a b c d"], ["a b c e f", "g h i j a"])
    >>> list(s)  # doctest: +NORMALIZE_WHITESPACE
    [('prd_precision', None), ('ipr_precision', 1), ('me_petersen', 1),
     ('me_schnabel_quality', 1), ('me_capture', 1), ('ipr_precision', 2), ('me_petersen', 2),
     ('me_schnabel_quality', 2), ('me_capture', 2)]
    >>> s[("ipr_precision", 1)]  # a, b, c are reference samples; d lies in no reference ball
    0.75
    >>> scorer([""], ["a b c e f", "g h i j a"])[("me_petersen", 1)]  # empty summary
    0.0
    """

    def __init__(self, embed: Callable[[list[str]], np.ndarray], *,
                 ks: Sequence[int] = (1, 2, 3, 5), prd_clusters: int = 20, prd_runs: int = 2,
                 seed: int = 0, dtype: str = "float32", neighbours="exact",
                 added: Sequence[str] | None = None):
        if not callable(embed):
            raise TypeError(f"embed must be a callable texts -> array, got {type(embed).__name__}")
        ks = tuple(check_int(k, f"ks[{i}]", minimum=1) for i, k in enumerate(ks))
        if not ks:
            raise ValueError("ks must be a non-empty sequence of positive ints, got ()")
        if len(set(ks)) != len(ks):
            raise ValueError(f"ks has repeated values: {ks!r}")
        check_choice(dtype, "dtype", ("float32", "float64"))
        geometry.check_neighbours(neighbours)
        self.embed = embed
        self._scorer = _SetScorer(tuple(int(k) for k in sorted(ks)), int(prd_clusters),
                                  int(prd_runs), check_seed(seed), dtype, neighbours,
                                  _added_set_metrics(added))
        self.n_too_short = 0
        self._reference: tuple | None = None  # (texts, samples, balls at max K)

    @property
    def ks(self) -> tuple[int, ...]:
        """The values of K, ascending."""
        return self._scorer.ks

    @property
    def min_samples(self) -> int:
        """Fewest samples a summary needs (max K + 1 and the PRD clusters); fewer score 0."""
        return self._scorer.min_samples

    @property
    def names(self) -> list[tuple[str, int | None]]:
        """The scores' keys (registry name, K), in the order of each returned mapping."""
        return self._scorer.names

    def _samples(self, texts: list[str]) -> np.ndarray:
        given = self.embed(list(texts))
        samples = np.asarray(given, dtype=np.float64)
        if samples is not given and samples.base is None:
            samples.flags.writeable = False  # our own copy: the balls keep it without another
        return samples

    def __call__(self, candidate_texts: list[str], reference_texts: list[str]
                 ) -> dict[tuple, float]:
        key = tuple(reference_texts)
        if self._reference is None or self._reference[0] != key:
            self._reference = (key, *self._scorer.reference(self._samples(reference_texts)))
        return self._count(self._scorer.score(self._samples(candidate_texts),
                                              *self._reference[1:]))

    def _count(self, scores: dict | None) -> dict[tuple, float]:
        if scores is None:
            self.n_too_short += 1
            return dict.fromkeys(self.names, 0.0)
        return scores

    def _score_groups(self, items: Sequence, *, n_jobs, progress):
        """Scores of ``items`` (in order; each with a ``text`` and its ``references``, as
        :class:`~markeval.experiments.summarization.SummaryItem`), in parallel units of at
        most ``_UNIT`` summaries.

        A unit holds summaries with the same references (one topic), so that the references'
        samples are embedded once per topic; each unit builds their balls again (cheap next to
        scoring eight summaries), so that a single topic spreads over all workers too.
        """
        chunks: list[list] = []
        for item in items:
            last = chunks[-1] if chunks else None
            if last and last[0].references == item.references and len(last) < _UNIT:
                last.append(item)
            else:
                chunks.append([item])

        def units():
            # A generator: samples are embedded (here, by the one encoder) only when a worker
            # is about to be free, so memory holds a few units' samples, not all of them.
            reference = (None, None)
            for chunk in chunks:
                if reference[0] != chunk[0].references:
                    reference = (chunk[0].references,
                                 self._samples(list(chunk[0].references)))
                yield (self._scorer, reference[1],
                       [self._samples([item.text]) for item in chunk])

        for scores in run_units(_score_group, units(), n_jobs=n_jobs, progress=progress,
                                desc=f"summaries (units of {_UNIT})", total=len(chunks)):
            yield from (self._count(s) for s in scores)


@dataclass(frozen=True)
class _SetScorer:
    """The settings and arithmetic of :class:`WordSetMetrics`, without the encoder.

    Picklable (arrays in, floats out), so that a worker process can score a topic.
    """

    ks: tuple[int, ...]
    prd_clusters: int
    prd_runs: int
    seed: int
    dtype: str
    neighbours: str | geometry.IndexSettings = "exact"
    added: tuple[registry.MetricInfo, ...] = ()

    @property
    def min_samples(self) -> int:
        return max(max(self.ks) + 1, self.prd_clusters)

    @property
    def names(self) -> list[tuple[str, int | None]]:
        return [("prd_precision", None), *((metric, k) for k in self.ks for metric in _WITH_K),
                *((info.name, None) for info in self.added)]

    def reference(self, samples: np.ndarray) -> tuple[np.ndarray, geometry.KNNBalls | None]:
        """The reference samples and their balls at the largest K (the smaller are prefixes).

        On the index path the balls are None: one index over the union of the references and
        a summary finds both sets' balls and their members in one search per point, where
        keeping the references' would still search every reference point again for its
        members (about 40,000 word samples a set: three passes took 47 s, one about 31 s).
        """
        if samples.ndim != 2 or len(samples) < self.min_samples:
            raise ValueError(f"the references give {len(samples)} samples; at least "
                             f"{self.min_samples} are needed (max K + 1 and the PRD clusters)")
        if self.neighbours != "exact":
            return samples, None
        return samples, geometry.knn_balls(samples, max(self.ks), dtype=self.dtype,
                                           name="reference samples")

    def score(self, cand: np.ndarray, ref: np.ndarray,
              ref_balls: geometry.KNNBalls | None) -> dict[tuple, float] | None:
        """Every score of one summary's samples; None when it has too few samples."""
        if cand.ndim != 2 or len(cand) < self.min_samples:
            return None
        out = {("prd_precision", None): self.prd_precision(ref, cand, self.prd_clusters)}
        ks = {k: k for k in self.ks}
        if ref_balls is None:
            ref_balls, cand_balls, memberships = geometry.mutual_balls_at(
                ref, cand, self.ks, dtype=self.dtype, neighbours=self.neighbours,
                names=("reference samples", "summary samples"))
            out.update(self.ball_scores(ref_balls, cand_balls, ks, memberships))
        else:
            cand_balls = geometry.knn_balls(cand, max(self.ks), dtype=self.dtype,
                                            name="summary samples")
            out.update(self.ball_scores(ref_balls, cand_balls, ks))
        out.update(self.added_scores(ref, cand))
        return {name: float(out[name]) for name in self.names}

    def added_scores(self, ref: np.ndarray, cand: np.ndarray) -> dict[tuple, float]:
        """The metrics of ``added`` (registry headlines) of the reference and candidate sets."""
        return {(info.name, None): info.score(ref, cand) for info in self.added}

    def prd_precision(self, ref: np.ndarray, cand: np.ndarray, clusters: int) -> float:
        """PRD's ``F_{1/8}``, the larger set subsampled (``seed``) to the smaller's size."""
        rng = np.random.default_rng(self.seed)
        n = min(len(ref), len(cand))
        sub_ref = ref[np.sort(rng.choice(len(ref), n, replace=False))] if len(ref) > n else ref
        sub_cand = cand[np.sort(rng.choice(len(cand), n, replace=False))] if len(cand) > n else cand
        return prd(sub_ref, sub_cand, num_clusters=clusters, num_runs=self.prd_runs,
                   seed=self.seed).f_beta_inv

    def ball_scores(self, ref_balls: geometry.KNNBalls, cand_balls: geometry.KNNBalls,
                    ks: Mapping[int, int], memberships=None) -> dict[tuple, float]:
        """IPR precision and Mark-Evaluate under each key K ``k`` of ``ks`` (k -> the K used),
        from balls at a K at least as large, and their ``memberships`` at every K used
        (:func:`markeval.geometry.mutual_memberships`; computed exactly here when None)."""
        out = {}
        if memberships is None:
            memberships = geometry.mutual_memberships(ref_balls, cand_balls,
                                                      sorted(set(ks.values())), dtype=self.dtype)
        for k, used in ks.items():
            a, b = ref_balls.prefix(used), cand_balls.prefix(used)
            # S = the references, S' = the summary, as in mark_evaluate(reference, candidate, k).
            s_in_prime, prime_in_s = memberships[used]
            me = mark_evaluate_from_balls(a, b, membership=(s_in_prime, prime_in_s))
            out[("ipr_precision", k)] = float(prime_in_s.inside_any.mean())
            out[("me_petersen", k)] = me.petersen.score
            out[("me_schnabel_quality", k)] = me.schnabel_quality.score
            out[("me_capture", k)] = me.capture.score
        return out


#: Rules :func:`adapted_set_scores` may apply to a pair of small sets, by name.
ADAPTATION_RULES = ("empty", "k capped", "clusters capped")


def adapted_set_scores(reference: np.ndarray, candidate: np.ndarray, *, ks: Sequence[int],
                       prd_clusters: int = 20, prd_runs: int = 2, seed: int = 0,
                       dtype: str = "float32", added: Sequence[str] | None = None
                       ) -> tuple[dict[tuple, float], set[str]]:
    """The scores of :class:`WordSetMetrics` for one pair of small sets, every set scored.

    Where :class:`WordSetMetrics` gives a summary too short for the largest ``K`` or the
    clusters 0, this adapts the settings to the pair, by three stated rules:

    * ``"empty"``: a side without samples (an empty output) scores 0 on every metric, the
      worst possible, since nothing of it matches the other side;
    * ``"k capped"``: a ``K`` with ``K >= n = min(|R|, |C|)`` is scored at ``K = n - 1``, the
      largest that leaves every k-NN ball a neighbour (under its own key ``(metric, k)``);
    * ``"clusters capped"``: PRD clusters the union of the two sets balanced to ``n`` each,
      so at most ``2n`` clusters; fewer than ``prd_clusters`` when ``2n`` is smaller.

    The metrics of ``added`` (as in :class:`WordSetMetrics`) are scored on the pair as given.

    Returns
    -------
    scores : dict
        As :class:`WordSetMetrics` returns them.
    rules : set of str
        The rules of :data:`ADAPTATION_RULES` applied to this pair.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> scores, rules = adapted_set_scores(rng.normal(size=(6, 3)), rng.normal(size=(4, 3)),
    ...                                    ks=(1, 10), prd_clusters=20, prd_runs=1)
    >>> sorted(rules), 0 <= scores[("me_petersen", 10)] <= 1
    (['clusters capped', 'k capped'], True)
    """
    reference = np.asarray(reference, dtype=np.float64)
    candidate = np.asarray(candidate, dtype=np.float64)
    scorer = _SetScorer(tuple(sorted(int(k) for k in ks)), int(prd_clusters), int(prd_runs),
                        check_seed(seed), dtype, added=_added_set_metrics(added))
    n = min(len(reference), len(candidate))
    if n < 2:  # an empty side (one sample cannot happen with several layers per token)
        return dict.fromkeys(scorer.names, 0.0), {"empty"}
    used = {k: min(k, n - 1) for k in scorer.ks}
    clusters = min(scorer.prd_clusters, 2 * n)
    rules = ({"k capped"} if used[scorer.ks[-1]] < scorer.ks[-1] else set()) | (
        {"clusters capped"} if clusters < scorer.prd_clusters else set())
    out = {("prd_precision", None): scorer.prd_precision(reference, candidate, clusters)}
    top = max(used.values())
    balls = [geometry.knn_balls(x, top, dtype=dtype, name=name)
             for x, name in ((reference, "reference"), (candidate, "candidate"))]
    out.update(scorer.ball_scores(*balls, used))
    out.update(scorer.added_scores(reference, candidate))
    return {name: float(out[name]) for name in scorer.names}, rules


def _added_set_metrics(names: Sequence[str] | None) -> tuple[registry.MetricInfo, ...]:
    """The registry entries of ``names`` (each of two embedding sets); None: every one added."""
    if names is None:
        return registry.added(inputs="embeddings")
    infos = tuple(registry.get(name) for name in names)
    for info in infos:
        if info.inputs != "embeddings":
            raise ValueError(f"added: {info.name!r} takes {info.inputs}, not two embedding sets")
    return infos


def _score_group(scorer: _SetScorer, reference: np.ndarray,
                 candidates: list[np.ndarray]) -> list[dict[tuple, float] | None]:
    """One parallel unit: a few summaries of a topic against the topic's reference samples."""
    ref, balls = scorer.reference(reference)
    return [scorer.score(cand, ref, balls) for cand in candidates]
