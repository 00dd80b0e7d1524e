"""Sensitivity experiments of Mark-Evaluate (Mordido & Meinel 2020, §3 Fig. 2, §4 Figs. 3–4).

Three experiments that run on any corpus (texts or precomputed embeddings) and return tidy
pandas tables, one row per (seed, step, metric):

* :func:`k_sweep` — every ME estimator's population estimate and score against K (Fig. 2);
* :func:`mode_collapse` — the evaluation set drawn from fewer and fewer labels (topics, genres)
  at a fixed size, the reference fixed (Fig. 3);
* :func:`word_swap` — the words of each evaluation text shuffled with probability ``p``
  (:func:`swap_words`), texts re-encoded (Fig. 4).

Both perturbation experiments are :func:`perturbation_sweep` with a candidate maker; the
verdicts (did each metric move the expected way?) live in
:mod:`markeval.experiments.sensitivity_verdicts`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

import numpy as np
import pandas as pd

from markeval import registry
from markeval._checks import (check_embeddings, check_int, check_k, check_list, check_probability,
                              check_seed, check_strings, is_texts)
from markeval.experiments.parallel import run_units
from markeval.paper_values import OBSERVED_METRICS
from markeval.population.mark_evaluate import MarkEvaluateResult, mark_evaluate


#: The set metrics Mark-Evaluate's experiments compare (§3-4, Table 1): FID, PRD, IPR and the
#: four Mark-Evaluate scores, by registry name (:data:`markeval.paper_values.OBSERVED_METRICS`).
#: The stages that reproduce those experiments score these; metrics published since (MAUVE,
#: density and coverage, Vendi: :func:`recent_set_metric_names`) are scored on the same sets by
#: stages of their own, so that adding one to the library leaves the reproduction's committed
#: rows as they are.
PAPER_SET_METRICS = OBSERVED_METRICS


def set_metric_names() -> tuple[str, ...]:
    """The metrics these experiments score by default, in table order: :data:`PAPER_SET_METRICS`
    and every metric of two embedding sets added by :func:`markeval.registry.register`, read
    when called. PRD's precision and recall are the curve's summaries F_{1/8}
    (precision-like) and F_8 (recall-like) of Sajjadi et al. (2018).

    Examples
    --------
    >>> set_metric_names()[:3]
    ('fid', 'prd_precision', 'prd_recall')
    """
    return (*PAPER_SET_METRICS, *(m.name for m in registry.added(inputs="embeddings")))


def recent_set_metric_names() -> tuple[str, ...]:
    """The built-in metrics of two embedding sets that Mark-Evaluate's experiments did not
    have, in registry order.

    Examples
    --------
    >>> recent_set_metric_names()
    ('density', 'coverage', 'vendi', 'mauve', 'mauve_star', 'frontier_integral')
    """
    added = {m.name for m in registry.added()}
    return tuple(m for m in registry.names(inputs="embeddings")
                 if m not in PAPER_SET_METRICS and m not in added)


#: Estimators of the K sweep: the registry's Mark-Evaluate parts, in the field order of
#: :class:`markeval.population.MarkEvaluateResult`.
ESTIMATORS = tuple(f.name for f in dataclasses.fields(MarkEvaluateResult)
                   if f.name in {m.part for m in registry.metrics(family="mark_evaluate")})


def _check_metrics(metrics) -> tuple[str, ...]:
    """``metrics`` as a tuple of registry names; None: :func:`set_metric_names`."""
    if metrics is None:
        return set_metric_names()
    known = registry.names(inputs="embeddings")
    if isinstance(metrics, str):
        metrics = (metrics,)
    metrics = tuple(metrics)
    if not metrics:
        raise ValueError("metrics is empty: name at least one of " + ", ".join(known))
    for m in metrics:
        if m not in known:
            raise ValueError(f"unknown metric {m!r}; metrics are {', '.join(known)}")
    return metrics


def _encode(x, name: str, encoder, min_rows: int = 2) -> np.ndarray:
    """Embeddings as given, or texts through ``encoder``."""
    if is_texts(x):
        x = encoder(check_strings(list(x), name))
    return check_embeddings(x, name, min_rows=min_rows)


def default_encoder(*, model=None, cache_dir=None, batch_size: int = 64, progress: bool = True):
    """The text encoder the experiments use by default: MiniLM sentence embeddings.

    Returns a function ``texts -> (n, d) array`` wrapping
    :func:`markeval.encoders.sentence_embeddings` with these settings.

    Examples
    --------
    >>> enc = default_encoder()
    >>> enc(["A cat sat on the mat.", "Stocks fell."]).shape
    (2, 384)
    """
    from markeval.encoders import sentence_embeddings

    def encode(texts):
        return sentence_embeddings(list(texts), model, batch_size=batch_size, progress=progress,
                                   cache_dir=cache_dir)

    return encode


def scores(reference, candidate, metrics=None, *, me_k: int = 1, ipr_k: int = 3,
           prd_runs: int = 10, fid_allow_singular: bool = False,
           seed: int = 0) -> dict[str, float]:
    """Every requested metric of ``candidate`` against ``reference`` (embeddings), as floats.

    ``metrics`` are registry names (default: :func:`set_metric_names`). The four ME
    scores come from one :func:`markeval.population.mark_evaluate` call (one
    geometry); PRD and MAUVE cluster with ``seed``. FID needs more points than dimensions unless
    ``fid_allow_singular`` (then it is biased upwards: compare its trend, not its value).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ref, cand = rng.normal(size=(50, 4)), rng.normal(size=(50, 4))
    >>> s = scores(ref, cand, ("ipr_recall", "me_petersen"))
    >>> sorted(s), 0 <= s["ipr_recall"] <= 1
    (['ipr_recall', 'me_petersen'], True)
    """
    metrics = _check_metrics(metrics)
    ref = check_embeddings(reference, "reference", min_rows=2)
    cand = check_embeddings(candidate, "candidate", min_rows=2)
    # This function's settings, as the keywords of each family's function (no bars: the
    # callers count units); a metric of another family (one registered by a user) is called
    # with its registry options alone.
    settings = {"fid": {"allow_singular": fid_allow_singular},
                "prd": {"num_runs": prd_runs, "seed": seed},
                "ipr": {"k": ipr_k, "progress": False},
                "mark_evaluate": {"k": me_k, "progress": False},
                "mauve": {"seed": seed}}
    results: dict[str, object] = {}  # one call per family: the four ME scores share a geometry
    out: dict[str, float] = {}
    for name in metrics:
        info = registry.get(name)
        if info.family not in results:
            results[info.family] = info.function(ref, cand, **{**info.options,
                                                               **settings.get(info.family, {})})
        out[name] = info.value(info.select(results[info.family]))
    return out


def k_sweep(reference, evaluation, ks=range(1, 41), *, encoder=None, progress: bool = True,
            n_jobs: int | None = None) -> pd.DataFrame:
    """Population estimate and score of every ME estimator against K (paper Fig. 2).

    Parameters
    ----------
    reference, evaluation : array_like (n, d) or list of str
        The two sets (texts are encoded with ``encoder``).
    ks : iterable of int, default 1…40
        Neighbour counts, each ``1 <= K < min(n, n')``.
    encoder : callable, optional
        ``texts -> embeddings``; default :func:`default_encoder`.
    progress : bool, default True
    n_jobs : int or None, default None
        Worker processes, one value of K each (None: one per core, or the workers of an active
        joblib backend; 1: serial). The table is identical whatever ``n_jobs``.

    Returns
    -------
    pandas.DataFrame
        Columns ``k``, ``estimator`` (one of :data:`ESTIMATORS`), ``estimate`` (P̂, ``inf``
        when nothing is recaptured), ``population`` (the true P = n + n') and ``score``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = k_sweep(rng.normal(size=(30, 3)), rng.normal(size=(30, 3)), ks=[1, 2],
    ...             progress=False)
    >>> t.shape, sorted(t["k"].unique().tolist()), int(t["population"].iloc[0])
    ((8, 5), [1, 2], 60)
    """
    encoder = encoder or default_encoder(progress=progress)
    ref = _encode(reference, "reference", encoder)
    ev = _encode(evaluation, "evaluation", encoder)
    ks = [check_k(k, min(len(ref), len(ev)), name="K", set_name="the smaller set") for k in ks]
    units = [(ref, ev, k) for k in ks]
    rows = run_units(_k_rows, units, n_jobs=n_jobs, progress=progress, desc="K sweep")
    return pd.DataFrame([row for part in rows for row in part])


def _k_rows(ref: np.ndarray, ev: np.ndarray, k: int) -> list[dict]:
    """One unit of :func:`k_sweep`: every estimator at one K."""
    r = mark_evaluate(ref, ev, k=k, progress=False)
    return [{"k": int(k), "estimator": name, "estimate": float(getattr(r, name).estimate),
             "population": int(getattr(r, name).population),
             "score": float(getattr(r, name).score)} for name in ESTIMATORS]


def perturbation_sweep(reference, make_candidate, levels, *, seeds=(0, 1, 2), metrics=None,
                       me_k: int = 1, ipr_k: int = 3, prd_runs: int = 10,
                       fid_allow_singular: bool = False, progress: bool = True,
                       desc: str = "sweep", n_jobs: int | None = None) -> pd.DataFrame:
    """Score candidates made at each perturbation level against a fixed reference.

    Parameters
    ----------
    reference : array_like (n, d)
        Reference embeddings, the same for every level and seed.
    make_candidate : callable
        ``make_candidate(level, seed) -> (m, d) embeddings``. Called here, in this process
        (it may encode texts), one unit at a time as workers become free.
    levels : sequence
        Perturbation levels, from none to the strongest (the ``step`` column is the index).
    seeds : sequence of int
    metrics : sequence of str
        Registry names (default: :func:`set_metric_names`).
    me_k, ipr_k, prd_runs, fid_allow_singular
        Neighbours for ME and IPR; clusterings for PRD; FID below dim + 1 points (:func:`scores`).
    progress : bool, default True
    desc : str
        Label of the progress bar.
    n_jobs : int or None, default None
        Worker processes scoring the (seed, level) units (None: one per core, or the workers of
        an active joblib backend; 1: serial, here). The table is identical whatever ``n_jobs``.

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, ``step``, ``level``, ``metric``, ``value``.

    Examples
    --------
    Gaussian noise of growing scale added to a copy of the reference lowers IPR precision:

    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(100, 3))
    >>> def noisy(sigma, seed):
    ...     return ref + np.random.default_rng(seed).normal(scale=sigma, size=ref.shape)
    >>> t = perturbation_sweep(ref, noisy, [0.0, 3.0], seeds=[0], metrics=["ipr_precision"],
    ...                        progress=False)
    >>> t["value"].round(2).tolist()
    [1.0, 0.08]
    """
    metrics = _check_metrics(metrics)
    ref = check_embeddings(reference, "reference", min_rows=2)
    levels = list(levels)
    seeds = [check_seed(s, f"seeds[{i}]") for i, s in
             enumerate(check_list(seeds, "seeds", "a sequence of int seeds"))]
    if not levels or not seeds:
        raise ValueError("levels and seeds must each hold at least one value")
    todo = list(itertools.product(seeds, enumerate(levels)))
    options = {"me_k": me_k, "ipr_k": ipr_k, "prd_runs": prd_runs,
               "fid_allow_singular": fid_allow_singular}
    # A generator: each candidate is made (encoded) only when a worker is about to be free.
    units = ((ref, make_candidate(level, seed), metrics, {**options, "seed": seed})
             for seed, (_, level) in todo)
    results = run_units(_scores_unit, units, n_jobs=n_jobs, progress=progress, desc=desc,
                        total=len(todo))
    return pd.DataFrame([{"seed": seed, "step": step, "level": level, "metric": metric,
                          "value": value}
                         for (seed, (step, level)), values in zip(todo, results)
                         for metric, value in values.items()])


def _scores_unit(reference: np.ndarray, candidate: np.ndarray, metrics, options: dict) -> dict:
    """One unit of :func:`perturbation_sweep`: :func:`scores` of one (seed, level)."""
    return scores(reference, candidate, metrics, **options)


def collapse_order(labels, n: int, seed: int = 0) -> tuple:
    """A seeded order in which to drop labels, keeping every step of size ``n`` feasible.

    Step ``j`` keeps the last ``T − j`` labels of the order and draws ``n`` rows from them,
    as equal a share per label as ``n`` allows; the order is a random permutation, redrawn
    until every kept label has enough rows at every step (after 1000 draws: the labels by
    increasing size, which is feasible whenever any order is).

    Examples
    --------
    >>> labels = ["a"] * 10 + ["b"] * 4 + ["c"] * 4
    >>> collapse_order(labels, 8, seed=0)[-1]   # only "a" can give 8 rows alone
    'a'
    """
    counts = pd.Series([str(v) for v in labels]).value_counts()
    if len(counts) < 2:
        raise ValueError(f"mode collapse needs at least 2 distinct labels, got {len(counts)}")
    rng = np.random.default_rng(check_seed(seed))
    names = sorted(counts.index)
    for _ in range(1000):
        order = tuple(names[i] for i in rng.permutation(len(names)))
        if all(_feasible(counts, order[j:], n) for j in range(len(order))):
            return order
    # Smallest labels first is feasible whenever any order is: each step keeps the largest.
    order = tuple(sorted(names, key=lambda name: (counts[name], name)))
    if all(_feasible(counts, order[j:], n) for j in range(len(order))):
        return order
    sizes = {name: int(counts[name]) for name in names}
    raise ValueError(
        f"an evaluation set of n={n} cannot be drawn at every step (the last step needs {n} rows "
        f"of one label; rows per label: {sizes}); lower n")


def _shares(n: int, m: int) -> list[int]:
    return [n // m + (1 if i < n % m else 0) for i in range(m)]


def _feasible(counts, kept, n) -> bool:
    return all(counts[label] >= share for label, share in zip(kept, _shares(n, len(kept))))


def _collapsed_indices(labels: np.ndarray, order, step: int, n: int, rng) -> np.ndarray:
    kept = order[step:]
    parts = [rng.choice(np.flatnonzero(labels == label), size=share, replace=False)
             for label, share in zip(kept, _shares(n, len(kept)))]
    return np.sort(np.concatenate(parts))


def collapse_step(labels, n: int, seed: int, step: int) -> tuple[np.ndarray, str]:
    """Rows of one mode-collapse step: the indices into the pool and the kept labels.

    The step of :func:`mode_collapse` with ``seed``: :func:`collapse_order` with ``seed``,
    then ``n`` rows from the labels still kept at ``step``, drawn by a generator seeded by
    ``(seed, step)`` alone, so that one step can be recomputed by itself.

    Returns
    -------
    indices : array of int
        Sorted row indices into the pool.
    kept : str
        The kept labels, sorted and joined by commas.

    Examples
    --------
    >>> labels = ["a"] * 10 + ["b"] * 4 + ["c"] * 4
    >>> idx, kept = collapse_step(labels, 6, seed=0, step=2)
    >>> len(idx), kept
    (6, 'a')
    """
    labels = np.asarray(list(labels))
    seed = check_seed(seed)
    order = collapse_order(labels, n, seed=seed)
    step = check_int(step, "step", minimum=0)
    if step >= len(order):
        raise ValueError(f"step must be below the number of labels ({len(order)}), got {step}")
    rng = np.random.default_rng([seed, step])
    return _collapsed_indices(labels, order, step, n, rng), ",".join(sorted(order[step:]))


def mode_collapse(reference, evaluation, labels, *, n: int | None = None, seeds=(0, 1, 2),
                  metrics=None, me_k: int = 1, ipr_k: int = 3, prd_runs: int = 10,
                  fid_allow_singular: bool = False, encoder=None,
                  progress: bool = True, n_jobs: int | None = None) -> pd.DataFrame:
    """Mode collapse (paper Fig. 3): the evaluation set from T, T−1, …, 1 labels, same size.

    For each seed, :func:`collapse_order` draws the order in which labels are dropped; step
    ``j`` draws ``n`` evaluation rows from the ``T − j`` labels still kept (equal shares per
    label, without replacement) and scores them against the fixed reference.

    Parameters
    ----------
    reference : array_like (n_ref, d) or list of str
    evaluation : array_like (N, d) or list of str
        The pool the evaluation sets are drawn from.
    labels : sequence
        One label (topic, genre) per row of ``evaluation``; at least 2 distinct.
    n : int, optional
        Evaluation set size; default ``len(reference)`` (equal sizes, as in the paper).
    seeds, metrics, me_k, ipr_k, prd_runs, fid_allow_singular, n_jobs
        As in :func:`perturbation_sweep`.
    encoder : callable, optional
        For text input; default :func:`default_encoder`.
    progress : bool, default True

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, ``step``, ``level`` (labels kept), ``kept`` (their names),
        ``metric``, ``value``.

    Examples
    --------
    Three well separated Gaussian clusters; dropping them one by one lowers IPR recall:

    >>> rng = np.random.default_rng(0)
    >>> centres = np.repeat(np.eye(3) * 20, 60, axis=0)
    >>> pool = centres + rng.normal(size=centres.shape)
    >>> labels = np.repeat(["x", "y", "z"], 60)
    >>> ref = np.repeat(np.eye(3) * 20, 20, axis=0) + rng.normal(size=(60, 3))
    >>> t = mode_collapse(ref, pool, labels, seeds=[0], metrics=["ipr_recall"], progress=False)
    >>> t[["level", "kept", "value"]].round(2).values.tolist()
    [[3, 'x,y,z', 0.9], [2, 'x,y', 0.65], [1, 'y', 0.3]]
    """
    encoder = encoder or default_encoder(progress=progress)
    metrics = _check_metrics(metrics)
    ref = _encode(reference, "reference", encoder)
    labels = np.asarray(list(labels))
    if len(labels) != len(evaluation):
        raise ValueError(f"labels has {len(labels)} items but evaluation has "
                         f"{len(evaluation)}: one label per evaluation row")
    n = len(ref) if n is None else check_int(n, "n", minimum=2)
    for s in seeds:  # errors before any encoding
        collapse_order(labels, n, seed=int(s))
    pool = _encode(evaluation, "evaluation", encoder)
    kept_names = {}

    def make(step, seed):
        indices, kept_names[seed, step] = collapse_step(labels, n, seed, step)
        return pool[indices]

    n_labels = len(set(labels.tolist()))
    t = perturbation_sweep(ref, make, list(range(n_labels)), seeds=seeds, metrics=metrics,
                           me_k=me_k, ipr_k=ipr_k, prd_runs=prd_runs,
                           fid_allow_singular=fid_allow_singular, progress=progress,
                           desc="mode collapse", n_jobs=n_jobs)
    t["kept"] = [kept_names[s, j] for s, j in zip(t["seed"], t["step"])]
    t["level"] = n_labels - t["step"]
    return t[["seed", "step", "level", "kept", "metric", "value"]]


def swap_words(text: str, p: float, rng: np.random.Generator) -> str:
    """Shuffle the words of ``text`` chosen with probability ``p`` among their own positions.

    Words are the white-space separated tokens. Each word is chosen independently with
    probability ``p``; the chosen words are permuted uniformly at random among the chosen
    positions, the permutation redrawn until the text changes whenever the chosen words are not
    all the same string. Unchosen words stay where they are. So ``p = 0`` returns the text
    unchanged (white space normalised to single spaces), every ``p`` keeps the multiset of
    words, and ``p = 1`` changes every text that has two different words.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> swap_words("the cat sat on the mat", 0.0, rng)
    'the cat sat on the mat'
    >>> swap_words("the cat sat on the mat", 1.0, np.random.default_rng(0))
    'on sat the mat the cat'
    """
    p = check_probability(p, "p")
    words = text.split()
    chosen = np.flatnonzero(rng.random(len(words)) < p)
    picked = [words[i] for i in chosen]
    if len(set(picked)) < 2:  # nothing to reorder: no word, one word, or copies of one word
        return " ".join(words)
    while True:
        shuffled = [picked[i] for i in rng.permutation(len(picked))]
        if shuffled != picked:
            break
    for i, w in zip(chosen, shuffled):
        words[i] = w
    return " ".join(words)


def swapped_texts(texts, p: float, seed: int) -> list[str]:
    """:func:`swap_words` on every text, with one generator seeded by ``(seed, round(p·10⁶))``.

    Examples
    --------
    >>> swapped_texts(["a b c d", "e f"], 1.0, seed=0) == swapped_texts(["a b c d", "e f"], 1.0, 0)
    True
    """
    texts = check_strings(texts, "texts")
    p = check_probability(p, "p")
    rng = np.random.default_rng([check_seed(seed), round(p * 1_000_000)])
    return [swap_words(t, p, rng) for t in texts]


def word_swap(reference, evaluation, ps=tuple(i / 10 for i in range(11)), *, seeds=(0, 1, 2),
              metrics=None, me_k: int = 1, ipr_k: int = 3, prd_runs: int = 10,
              fid_allow_singular: bool = False, encoder=None,
              progress: bool = True, n_jobs: int | None = None) -> pd.DataFrame:
    """Word swap (paper Fig. 4): evaluation texts perturbed by :func:`swap_words`, re-encoded.

    Parameters
    ----------
    reference : array_like (n, d) or list of str
    evaluation : list of str
        The evaluation texts (the same texts at every ``p``; only the swaps change).
    ps : sequence of float, default 0, 0.1, …, 1
    seeds, metrics, me_k, ipr_k, prd_runs, fid_allow_singular, n_jobs
        As in :func:`perturbation_sweep`; the seed drives the swaps (and PRD's clusters).
        The swapped texts are encoded here, one unit at a time, as workers become free.
    encoder : callable, optional
        ``texts -> embeddings``; default :func:`default_encoder`.
    progress : bool, default True

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, ``step``, ``level`` (= p), ``metric``, ``value``.

    Examples
    --------
    A toy encoder (position-weighted letter counts) is enough to see the pipeline work:

    >>> def enc(texts):
    ...     return np.array([[sum(ord(c) * (i + 1) for i, w in enumerate(t.split()) for c in w)
    ...                       % 97, len(t)] for t in texts], dtype=float)
    >>> texts = [f"w{i} x{i % 7} y{i % 5} z{i % 3}" for i in range(40)]
    >>> t = word_swap(enc(texts), texts, [0.0, 1.0], seeds=[0], metrics=["me_petersen"],
    ...               encoder=enc, progress=False)
    >>> t["level"].tolist()
    [0.0, 1.0]
    """
    encoder = encoder or default_encoder(progress=progress)
    texts = check_strings(list(evaluation), "evaluation")
    ps = [check_probability(p, "p") for p in ps]
    ref = _encode(reference, "reference", encoder)
    if len(texts) < 2:
        raise ValueError(f"evaluation must hold at least 2 texts, got {len(texts)}")
    unperturbed = {}

    def make(p, seed):
        if p == 0:  # the identity: encode once for all seeds
            if "x" not in unperturbed:
                unperturbed["x"] = _encode(texts, "evaluation", encoder)
            return unperturbed["x"]
        return _encode(swapped_texts(texts, p, seed), "evaluation", encoder)

    return perturbation_sweep(ref, make, ps, seeds=seeds, metrics=metrics, me_k=me_k,
                              ipr_k=ipr_k, prd_runs=prd_runs,
                              fid_allow_singular=fid_allow_singular, progress=progress,
                              desc="word swap", n_jobs=n_jobs)


def bbc_sets(n: int, *, pool_per_topic: int | None = None, seed: int = 0):
    """BBC News sets for the experiments: a reference from half ``'a'``, a pool from half ``'b'``.

    The reference holds ``n`` sentences of half ``'a'`` (equal shares of the five topics, drawn
    without replacement); the pool holds up to ``pool_per_topic`` sentences per topic of half
    ``'b'`` (all of them when None), so no sentence text is in both (see
    :func:`markeval.datasets.bbc_sentences`).

    Returns
    -------
    reference : list of str
    pool : pandas.DataFrame
        Columns ``topic`` and ``sentence``, ordered by topic.

    Examples
    --------
    >>> ref, pool = bbc_sets(10, pool_per_topic=4)
    >>> len(ref), len(pool), pool["topic"].value_counts().tolist()
    (10, 20, [4, 4, 4, 4, 4])
    """
    from markeval.datasets import BBC_TOPICS, bbc_sentences

    rng = np.random.default_rng(check_seed(seed))
    a, b = bbc_sentences(split="a"), bbc_sentences(split="b")
    ref = []
    for topic, share in zip(BBC_TOPICS, _shares(int(n), len(BBC_TOPICS))):
        rows = a.loc[a["topic"] == topic, "sentence"].to_numpy()
        if share > len(rows):
            raise ValueError(f"n={n} needs {share} reference sentences of {topic!r}; half 'a' "
                             f"has {len(rows)}")
        ref.extend(rows[np.sort(rng.choice(len(rows), share, replace=False))].tolist())
    parts = []
    for topic in BBC_TOPICS:
        rows = b[b["topic"] == topic]
        if pool_per_topic is not None and pool_per_topic < len(rows):
            rows = rows.iloc[np.sort(rng.choice(len(rows), pool_per_topic, replace=False))]
        parts.append(rows[["topic", "sentence"]])
    return ref, pd.concat(parts, ignore_index=True)


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and seed count of ``value`` per (metric, step, level).

    Examples
    --------
    >>> t = pd.DataFrame({"seed": [0, 1], "step": [0, 0], "level": [0.0, 0.0],
    ...                   "metric": ["fid", "fid"], "value": [1.0, 3.0]})
    >>> summarize(t)[["metric", "mean", "std", "seeds"]].to_dict("records")
    [{'metric': 'fid', 'mean': 2.0, 'std': 1.414..., 'seeds': 2}]
    """
    missing = {"metric", "step", "level", "value"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks the columns {sorted(missing)}")
    g = table.groupby(["metric", "step", "level"], sort=True)["value"]
    out = g.agg(mean="mean", std="std", seeds="count").reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out


def sensitivity_tables(rows: pd.DataFrame) -> dict:
    """The rows of the reproduction's stages ``sensitivity`` and ``word_swap`` as this
    module's tables.

    Returns ``{"k_sweep": ..., "mode_collapse": ..., "word_swap": ...}`` with the columns of
    :func:`k_sweep`, :func:`mode_collapse` and :func:`word_swap`.
    """
    out = {}
    ks = rows[rows["experiment"] == "k_sweep"]
    columns = ["k", "estimator", "estimate", "population", "score"]
    if ks.empty:  # the rows of word swap alone, or of a stage of recent metrics
        out["k_sweep"] = pd.DataFrame(columns=columns)
    else:
        part = {m: registry.get(m).part for m in ks["metric"].unique()}
        wide = (ks.assign(estimator=ks["metric"].map(part), k=ks["k"].astype(int))
                .pivot_table(index=["k", "estimator"], columns="quantity", values="value",
                             sort=False)
                .reset_index().rename_axis(columns=None))
        wide["population"] = wide["population"].astype(int)
        out["k_sweep"] = wide[columns]
    mc = rows[rows["experiment"] == "mode_collapse"].copy()
    mc["level"] = mc["level"].astype(int)
    out["mode_collapse"] = mc[["seed", "step", "level", "kept", "metric", "value"]].reset_index(
        drop=True)
    out["word_swap"] = rows[rows["experiment"] == "word_swap"][
        ["seed", "step", "level", "metric", "value"]].reset_index(drop=True)
    return out


# --------------------------------------------------------------------------------------------
# The reproduction's synthetic experiments (stages sensitivity and word_swap, on BBC News)

#: Columns of the rows of the stages ``sensitivity`` and ``word_swap``: ``experiment``
#: (k_sweep, mode_collapse, word_swap), ``seed``, ``step``, ``level`` (K, topics kept, or p),
#: ``kept`` (topics kept; "-" elsewhere),
#: ``quantity`` (``score``; the K sweep also gives each estimator's ``estimate`` and the
#: ``population`` it is divided by) and the columns of
#: :data:`markeval.experiments.vocabulary.LONG_COLUMNS` (protocol ``pooled``; ``k``: the
#: sweep's K, else the K of IPR and of the Mark-Evaluate scores).
SENSITIVITY_COLUMNS = ("experiment", "seed", "step", "level", "kept", "quantity",
                       "encoder", "protocol", "metric", "k", "options", "value")


@functools.lru_cache(maxsize=2)
def sensitivity_inputs(n_collapse: int, n_swap: int, pool_per_topic, data_seed: int):
    """The chapter's sets, embedded once per process.

    Returns a dict: ``reference`` and ``pool`` (mode collapse: texts, pool table with topics),
    ``ref_emb``, ``pool_emb``, ``ref_10k``, ``ref_10k_emb`` and ``evaluation`` (K sweep and
    word swap: reference texts and embeddings, evaluation texts), ``encode`` (the encoder).
    """
    from markeval.datasets import cache_dir

    encode = default_encoder(cache_dir=cache_dir() / "embeddings", progress=False)
    reference, pool = bbc_sets(n_collapse, pool_per_topic=pool_per_topic, seed=data_seed)
    if n_swap == n_collapse:
        ref_10k, pool_10k = reference, pool
    else:
        ref_10k, pool_10k = bbc_sets(n_swap, pool_per_topic=pool_per_topic, seed=data_seed)
    pick = np.sort(np.random.default_rng(1).choice(len(pool_10k), n_swap, replace=False))
    evaluation = [pool_10k["sentence"].iloc[i] for i in pick]
    return {"reference": reference, "pool": pool, "ref_10k": ref_10k, "evaluation": evaluation,
            "encode": encode, "_cache": {}}


def _embedded(inputs: dict, key: str) -> np.ndarray:
    """Embeddings of one of the input sets, computed on first use."""
    cache = inputs["_cache"]
    if key not in cache:
        texts = {"ref": inputs["reference"], "pool": list(inputs["pool"]["sentence"]),
                 "ref_10k": inputs["ref_10k"], "evaluation": inputs["evaluation"]}[key]
        cache[key] = inputs["encode"](texts)
    return cache[key]


def encode_sensitivity_sets(settings: dict) -> None:
    """Encode every set of both stages into the disk cache before the units fan out."""
    inputs = sensitivity_inputs(settings["n_collapse"], settings["n_swap"],
                                settings["pool_per_topic"], settings["data_seed"])
    for key in ("ref", "pool", "ref_10k", "evaluation"):
        _embedded(inputs, key)


def sensitivity_unit_rows(experiment: str, fields: dict, settings: dict) -> pd.DataFrame:
    """The rows of one unit of the stages ``sensitivity`` and ``word_swap``: the K sweep at one
    K (``fields``: ``{"K": "07"}``), or every metric of ``settings["metrics"]`` (default
    :func:`set_metric_names`) at one step of mode collapse (``{"seed": "1", "step": "3"}``) or
    of word swap (``{"seed": "0", "p": "0.3"}``), in the columns :data:`SENSITIVITY_COLUMNS`."""
    from markeval.datasets import BBC_TOPICS
    from markeval.experiments.vocabulary import encoder_name

    inputs = sensitivity_inputs(settings["n_collapse"], settings["n_swap"],
                                settings["pool_per_topic"], settings["data_seed"])
    options = {"me_k": settings["me_k"], "ipr_k": settings["ipr_k"],
               "prd_runs": settings["prd_runs"]}
    if experiment == "k_sweep":
        k = int(fields["K"])
        table = k_sweep(_embedded(inputs, "ref_10k"), _embedded(inputs, "evaluation"), [k],
                        progress=False, n_jobs=1)
        me = {info.part: info.name for info in registry.metrics(family="mark_evaluate")}
        rows = [{"seed": 0, "step": settings["ks"].index(k), "level": float(k), "kept": "-",
                 "quantity": what, "metric": me[r["estimator"]], "k": k,
                 "value": float(r[what])}
                for r in table.to_dict("records") for what in ("score", "estimate", "population")]
    else:
        seed = int(fields["seed"])
        if experiment == "mode_collapse":
            step = int(fields["step"])
            n = settings["n_collapse"]
            indices, kept = collapse_step(inputs["pool"]["topic"], n, seed, step)
            ref, cand = _embedded(inputs, "ref"), _embedded(inputs, "pool")[indices]
            level = float(len(BBC_TOPICS) - step)
        else:
            p = float(fields["p"])
            step, kept, n = settings["ps"].index(p), "-", settings["n_swap"]
            texts = inputs["evaluation"]
            ref = _embedded(inputs, "ref_10k")
            cand = (_embedded(inputs, "evaluation") if p == 0
                    else inputs["encode"](swapped_texts(texts, p, seed)))
            level = p
        # a stage of later metrics names them (settings "metrics"); the paper's score its own
        values = scores(ref, cand, settings.get("metrics"), fid_allow_singular=n <= ref.shape[1],
                        seed=seed, **options)
        k_of = {"mark_evaluate": settings["me_k"], "ipr": settings["ipr_k"]}
        rows = [{"seed": seed, "step": step, "level": level, "kept": kept, "quantity": "score",
                 "metric": metric, "k": k_of.get(registry.get(metric).family),
                 "value": float(value)} for metric, value in values.items()]
    rows = pd.DataFrame(rows).assign(experiment=experiment, protocol="pooled", options="",
                                     encoder=encoder_name(settings["encoder"]))
    return rows[list(SENSITIVITY_COLUMNS)]


__all__ = [
    "ESTIMATORS", "PAPER_SET_METRICS", "SENSITIVITY_COLUMNS", "bbc_sets", "collapse_order",
    "collapse_step", "default_encoder", "encode_sensitivity_sets", "k_sweep", "mode_collapse",
    "perturbation_sweep", "recent_set_metric_names", "scores", "sensitivity_inputs",
    "sensitivity_tables", "sensitivity_unit_rows", "set_metric_names", "summarize", "swap_words",
    "swapped_texts", "word_swap",
]
