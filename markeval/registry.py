"""Every metric of markeval in one list, with what a caller needs to know to use it blindly.

One :class:`MetricInfo` per metric says which function computes it, what it takes (line-aligned
texts, two sets of embeddings, token probabilities), where its headline number sits in the
result, whether higher is better, what it is meant to measure and whether swapping its two
inputs leaves it unchanged. The command line (``markeval list`` and ``markeval score``), the
sensitivity and ranking experiments and ``tests/test_common.py`` read this list instead of
keeping their own.

Functions are named as ``"module:function"`` strings and imported on first use, so that reading
the registry (or scoring BLEU) never imports torch.

Adding a metric is one module and one line in :data:`METRICS` below; ``tests/test_common.py``
then checks it like every other. A user's own metric (or a test's) joins at run time through
:func:`register`; the studies that take metrics of its kind then score it too
(``tests/test_study_registry.py``).

Examples
--------
>>> info = get("bleu")
>>> info.inputs, info.higher_is_better, info.best
('texts', True, 100.0)
>>> round(info.score(["the cat sat on the mat"], ["the cat sat on a mat"]), 2)
53.73
>>> [m.name for m in metrics(inputs="embeddings", measures="diversity")]
['prd_recall', 'ipr_recall', 'coverage', 'vendi', 'me_schnabel_diversity']
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from markeval._checks import check_choice

__all__ = ["INPUTS", "MEASURES", "METRICS", "MetricInfo", "added", "get", "metrics", "names",
           "register", "unregister"]

#: What a metric compares, and so the call it takes:
#: ``texts``: ``f(hypotheses, references)``, ``references[i]`` the reference(s) of hypothesis i;
#: ``text sets``: ``f(generated, real)``, two unaligned lists of tokenised sentences;
#: ``embeddings``: ``f(reference, candidate)``, two arrays of shape (n, d) and (m, d);
#: ``probabilities``: ``f(probabilities)``, per-token probabilities of one or more sequences.
INPUTS = ("texts", "text sets", "embeddings", "probabilities")
#: What a metric is meant to measure: how good each output is, how much of the reference's
#: variety the outputs cover, or one number for both.
MEASURES = ("quality", "diversity", "both")


@dataclass(frozen=True)
class MetricInfo:
    """One metric: how to compute it and how to read it.

    Attributes
    ----------
    name : str
        The key (``"bleu"``, ``"rougeL"``, ``"me_petersen"``); also the CLI's name when
        ``family`` is the name itself.
    label : str
        The name in tables and figures (``"ME Petersen"``).
    description : str
        One line.
    corpus : str
        ``"module:function"`` computing the metric over a corpus or a pair of sets; the call
        depends on ``inputs`` (see :data:`INPUTS`).
    inputs : str
        One of :data:`INPUTS`.
    higher_is_better : bool
        Agrees with the result class's ``higher_is_better``.
    measures : str
        One of :data:`MEASURES`.
    symmetric : bool or None
        Whether swapping the two inputs leaves the score unchanged (with one reference per
        hypothesis, for ``texts``); None for a metric of one input.
    best : float or None
        The score of a perfect output (for two-input metrics: both inputs equal); None when
        no input attains it (a smoothed language model never gives probability 1), or when
        equal inputs give no fixed score (density, the Vendi score).
    headline : str, default "score"
        Attribute of the metric's result holding the headline float.
    items : str, optional
        Attribute of the metric's result holding one score per hypothesis (or sequence).
    sentence : str, optional
        ``"module:function"`` scoring one hypothesis, ``f(hypothesis, references_i)``.
    part : str, optional
        When one call computes several metrics (the four Mark-Evaluate scores, the ROUGE
        types): the attribute, or key, of the call's result that is this metric's result.
    family : str, optional
        Metrics computed by one call share a family (``"mark_evaluate"``, ``"rouge"``);
        default the name.
    options : mapping
        Keyword arguments this metric always passes (``types=("rougeL",)``, ``k=1``); a
        caller's keywords override them.
    statistics : str, optional
        ``"module:function"`` giving the metric's per-sentence
        :class:`~markeval.resampling.SufficientStatistics`, ``f(hypotheses, references,
        **options)``: how the bootstrap and the paired tests resample it. Metrics without
        one are resampled through their per-item scores (``items``).
    prepare : str, optional
        ``"module:function"`` preparing references once for many systems, ``f(references,
        **options)`` with those of the statistics function's options it names; ``statistics``
        takes its result in place of the references (BLEU's and GLEU's n-gram tables), so
        that the paired tests tokenise and count the references once, as sacrebleu does.
    """

    name: str
    label: str
    description: str
    corpus: str
    inputs: str
    higher_is_better: bool
    measures: str
    symmetric: bool | None
    best: float | None
    headline: str = "score"
    items: str | None = None
    sentence: str | None = None
    part: str | None = None
    family: str = ""
    options: Mapping[str, object] = field(default_factory=dict, hash=False)
    statistics: str | None = None
    prepare: str | None = None

    def __post_init__(self):
        check_choice(self.inputs, f"{self.name}: inputs", INPUTS)
        check_choice(self.measures, f"{self.name}: measures", MEASURES)
        object.__setattr__(self, "family", self.family or self.name)
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    def __reduce__(self):
        # A mappingproxy does not pickle: rebuild from the fields, so that a registered metric
        # travels to the worker processes of a study.
        return MetricInfo, tuple(dict(self.options) if f.name == "options" else
                                 getattr(self, f.name) for f in fields(self))

    @property
    def function(self) -> Callable:
        """The corpus-level function (imported now)."""
        return _load(self.corpus)

    @property
    def statistics_function(self) -> Callable | None:
        """The function giving the metric's sufficient statistics, or None."""
        return None if self.statistics is None else _load(self.statistics)

    def prepared_references(self, references, options: Mapping):
        """``references`` prepared once for the statistics of many systems scored with
        ``options`` (see ``prepare``); as given when the metric prepares nothing."""
        if self.prepare is None:
            return references
        function = _load(self.prepare)
        names = inspect.signature(function).parameters
        return function(references, **{k: v for k, v in options.items() if k in names})

    @property
    def sentence_function(self) -> Callable | None:
        """The sentence-level function, or None."""
        return None if self.sentence is None else _load(self.sentence)

    def compute(self, *inputs, **options):
        """This metric's result object on ``inputs`` (the function's result, or its ``part``)."""
        return self.select(self.function(*inputs, **{**self.options, **options}))

    def select(self, result):
        """This metric's own result inside the result of a call of its family's function."""
        if self.part is None:
            return result
        return getattr(result, self.part) if hasattr(result, self.part) else result[self.part]

    def value(self, result) -> float:
        """The headline of this metric's result (from :meth:`compute`), a Python float."""
        return float(getattr(result, self.headline))

    def score(self, *inputs, **options) -> float:
        """The headline score on ``inputs``: ``value(compute(*inputs, **options))``."""
        return self.value(self.compute(*inputs, **options))

    def item_scores(self, hypotheses, references, **options) -> list[float]:
        """One score per hypothesis of a ``texts`` metric: the result's ``items``, or else the
        sentence function line by line (``references[i]``: the reference(s) of hypothesis i).

        Examples
        --------
        >>> chrf = get("chrf")
        >>> [round(s, 1) for s in chrf.item_scores(["a cat", "the dog"], ["a cat", "a dog"])]
        [100.0, 42.3]
        """
        if self.inputs != "texts":
            raise ValueError(f"{self.name} takes {self.inputs}, not texts: it has no item scores")
        if self.items is not None:
            return [float(v) for v in getattr(self.compute(hypotheses, references, **options),
                                              self.items)]
        if self.sentence is None:
            raise ValueError(f"{self.name} has neither item scores (items) nor a sentence "
                             "function (sentence)")
        one = self.sentence_function
        return [self.value(self.select(one(h, [r] if isinstance(r, str) else r,
                                           **{**self.options, **options})))
                for h, r in zip(hypotheses, references)]


def _load(spec: str) -> Callable:
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


_LEX, _SEM = "markeval.lexical", "markeval.semantic"
_DIST, _ME = "markeval.distribution", "markeval.population.mark_evaluate:mark_evaluate"
_NGRAMS = f"{_LEX}._ngram:prepare_references"


def _rouge(rouge_type: str, label: str, what: str, symmetric: bool) -> MetricInfo:
    return MetricInfo(rouge_type, label, f"{label} F-measure: {what}", f"{_LEX}.rouge:rouge",
                      "texts", True, "quality", symmetric, 1.0, headline="fmeasure",
                      items="fmeasures", part=rouge_type, family="rouge",
                      options={"types": (rouge_type,)})


def _me(part: str, label: str, measures: str, symmetric: bool) -> MetricInfo:
    return MetricInfo(f"me_{part}", label, f"Mark-Evaluate {label[3:]} score (k-NN balls)",
                      _ME, "embeddings", True, measures, symmetric, 1.0, part=part,
                      family="mark_evaluate", options={"k": 1})


def _mauve(name: str, label: str, what: str, headline: str, higher: bool, best: float,
           part: str | None = None) -> MetricInfo:
    # Symmetric in its two histograms, but not in its inputs: k-means++ sees the union in the
    # order [candidate; reference].
    return MetricInfo(name, label, what, f"{_DIST}.mauve:mauve", "embeddings", higher, "both",
                      False, best, headline=headline, part=part, family="mauve")


#: Every metric, in table order. name, label, description, function, inputs,
#: higher_is_better, measures, symmetric, best, then where the numbers are.
METRICS: tuple[MetricInfo, ...] = (
    MetricInfo("bleu", "BLEU", "BLEU, sacrebleu-compatible (0-100)", f"{_LEX}.bleu:bleu",
               "texts", True, "quality", False, 100.0, sentence=f"{_LEX}.bleu:sentence_bleu",
               statistics=f"{_LEX}.bleu:bleu_statistics", prepare=_NGRAMS),
    MetricInfo("gleu", "GLEU", "Google-BLEU, NLTK-compatible (0-100)", f"{_LEX}.gleu:gleu",
               "texts", True, "quality", True, 100.0, sentence=f"{_LEX}.gleu:sentence_gleu",
               statistics=f"{_LEX}.gleu:gleu_statistics", prepare=_NGRAMS),
    MetricInfo("chrf", "chrF", "character 1-6-gram F-score (beta=2), sacrebleu-compatible (0-100)",
               f"{_LEX}.chrf:chrf", "texts", True, "quality", False, 100.0,
               sentence=f"{_LEX}.chrf:sentence_chrf", statistics=f"{_LEX}.chrf:chrf_statistics"),
    MetricInfo("chrf++", "chrF++", "chrF plus word 1-2-grams, sacrebleu-compatible (0-100)",
               f"{_LEX}.chrf:chrf", "texts", True, "quality", False, 100.0,
               sentence=f"{_LEX}.chrf:sentence_chrf", options={"word_order": 2},
               statistics=f"{_LEX}.chrf:chrf_statistics"),
    MetricInfo("ter", "TER", "translation edit rate, sacrebleu-compatible (lower is better)",
               f"{_LEX}.ter:ter", "texts", False, "quality", False, 0.0,
               sentence=f"{_LEX}.ter:sentence_ter", statistics=f"{_LEX}.ter:ter_statistics"),
    MetricInfo("meteor", "METEOR", "METEOR, NLTK-compatible; corpus = mean of sentence scores",
               f"{_LEX}.meteor:corpus_meteor", "texts", True, "quality", False, 1.0,
               items="scores", sentence=f"{_LEX}.meteor:meteor"),
    _rouge("rouge1", "ROUGE-1", "unigram overlap", True),
    _rouge("rouge2", "ROUGE-2", "bigram overlap", True),
    _rouge("rougeL", "ROUGE-L", "longest common subsequence", True),
    _rouge("rougeLsum", "ROUGE-Lsum", "union LCS over the lines (sentences)", False),
    MetricInfo("bertscore", "BERTScore", "BERTScore F1 on contextual token embeddings",
               f"{_SEM}.bertscore:bertscore", "texts", True, "quality", True, 1.0,
               headline="f1", items="sentence_f1"),
    MetricInfo("moverscore", "MoverScore",
               "MoverScore: earth mover's distance on contextual embeddings",
               f"{_SEM}.moverscore:moverscore", "texts", True, "quality", True, 1.0,
               items="sentence_scores"),
    MetricInfo("perplexity", "perplexity", "perplexity of token probabilities (micro average)",
               f"{_LEX}.perplexity:perplexity", "probabilities", False, "quality", None, 1.0,
               headline="perplexity", items="sequence_perplexities"),
    MetricInfo("forward_ce", "forward CE",
               "forward cross-entropy (bits/token): an n-gram LM of the real text scores the "
               "generated text", f"{_LEX}.perplexity:forward_cross_entropy", "text sets", False,
               "quality", False, None, headline="cross_entropy_bits"),
    MetricInfo("reverse_ce", "reverse CE",
               "reverse cross-entropy (bits/token): an n-gram LM of the generated text scores "
               "the real text", f"{_LEX}.perplexity:reverse_cross_entropy", "text sets", False,
               "diversity", False, None, headline="cross_entropy_bits"),
    MetricInfo("fid", "FID", "Fréchet distance between Gaussians fitted to the two sets",
               f"{_DIST}.fid:fid", "embeddings", False, "both", True, 0.0, headline="value"),
    MetricInfo("prd_precision", "PRD F1/8", "PRD curve's F_1/8 (precision-like)",
               f"{_DIST}.prd:prd", "embeddings", True, "quality", False, 1.0,
               headline="f_beta_inv", family="prd"),
    MetricInfo("prd_recall", "PRD F8", "PRD curve's F_8 (recall-like)", f"{_DIST}.prd:prd",
               "embeddings", True, "diversity", False, 1.0, headline="f_beta", family="prd"),
    MetricInfo("ipr_precision", "IPR precision", "improved precision: candidates in the "
               "reference's k-NN balls", f"{_DIST}.ipr:improved_precision_recall",
               "embeddings", True, "quality", False, 1.0, headline="precision", family="ipr"),
    MetricInfo("ipr_recall", "IPR recall", "improved recall: references in the candidates' "
               "k-NN balls", f"{_DIST}.ipr:improved_precision_recall", "embeddings", True,
               "diversity", False, 1.0, headline="recall", family="ipr"),
    # density has no best: for two equal sets it depends on the set (about 1, not a bound)
    MetricInfo("density", "density", "density: reference k-NN balls holding each candidate, "
               "over k (Naeem et al. 2020)", f"{_DIST}.coverage:density_coverage",
               "embeddings", True, "quality", False, None, headline="density",
               family="density_coverage"),
    # coverage of a set by itself is 1 unless a point is repeated more than k times
    MetricInfo("coverage", "coverage", "coverage: share of the reference's k-NN balls holding "
               "a candidate (Naeem et al. 2020)", f"{_DIST}.coverage:density_coverage",
               "embeddings", True, "diversity", False, 1.0, headline="coverage",
               family="density_coverage"),
    MetricInfo("vendi", "Vendi", "Vendi score of the candidates (cosine kernel): their "
               "effective number of distinct samples", f"{_DIST}.vendi:vendi", "embeddings",
               True, "diversity", False, None),
    _me("schnabel_quality", "ME Schnabel Q", "quality", False),
    _me("schnabel_diversity", "ME Schnabel D", "diversity", False),
    _me("petersen", "ME Petersen", "both", True),
    _me("capture", "ME CAPTURE", "both", True),
    _mauve("mauve", "MAUVE", "the area under the divergence frontier of quantised sets",
           "mauve", True, 1.0),
    _mauve("mauve_star", "MAUVE*", "MAUVE on add-1/2 smoothed histograms (JMLR 2023)",
           "mauve_star", True, 1.0),
    _mauve("frontier_integral", "frontier integral",
           "the divergence frontier's integral (lower is better)", "score", False, 0.0,
           part="frontier"),
)

_BY_NAME = {m.name: m for m in METRICS}
# Metrics added at run time by register(), after the built-in ones, in the order added.
_REGISTERED: dict[str, MetricInfo] = {}


def register(info: MetricInfo) -> MetricInfo:
    """Add a metric after the built-in ones: :func:`metrics`, :func:`get`, the command line
    and every study that takes metrics of its kind (``inputs``) see it from now on.

    Parameters
    ----------
    info : MetricInfo
        Its ``name`` must be new; ``corpus`` names the metric's own function
        (``"package.module:function"``).

    Returns
    -------
    MetricInfo
        ``info``, as registered.

    Examples
    --------
    >>> info = register(MetricInfo("mean_gap", "mean gap", "distance between the set means",
    ...                            "numpy:mean", "embeddings", False, "both", True, 0.0))
    >>> "mean_gap" in names(inputs="embeddings")
    True
    >>> unregister("mean_gap"); "mean_gap" in names()
    False
    """
    if not isinstance(info, MetricInfo):
        raise TypeError(f"info must be a MetricInfo, got {type(info).__name__}")
    if info.name in _BY_NAME or info.name in _REGISTERED:
        raise ValueError(f"a metric named {info.name!r} is already registered")
    _REGISTERED[info.name] = info
    return info


def unregister(name: str) -> None:
    """Remove a metric added by :func:`register` (the built-in ones cannot be removed)."""
    if name not in _REGISTERED:
        raise ValueError(f"metric {name!r} was not added by register(); added: "
                         f"{', '.join(_REGISTERED) or 'none'}")
    del _REGISTERED[name]


def added(*, inputs: str | None = None) -> tuple[MetricInfo, ...]:
    """The metrics added by :func:`register`, in the order added, optionally of one kind.

    A study scores the built-in metrics it names, and every added metric of the kind it takes:
    a user's own metric joins the studies through the registry alone.

    Examples
    --------
    >>> info = register(MetricInfo("mean_gap", "mean gap", "distance between the set means",
    ...                            "numpy:mean", "embeddings", False, "both", True, 0.0))
    >>> [m.name for m in added(inputs="embeddings")], added(inputs="texts")
    (['mean_gap'], ())
    >>> unregister("mean_gap"); added()
    ()
    """
    if inputs is not None:
        check_choice(inputs, "inputs", INPUTS)
    return tuple(m for m in _REGISTERED.values() if inputs is None or m.inputs == inputs)


def metrics(*, inputs: str | None = None, measures: str | None = None,
            family: str | None = None) -> tuple[MetricInfo, ...]:
    """The registered metrics, in table order, optionally only those of one kind.

    Examples
    --------
    >>> [m.name for m in metrics(family="rouge")]
    ['rouge1', 'rouge2', 'rougeL', 'rougeLsum']
    """
    for value, name, allowed in ((inputs, "inputs", INPUTS), (measures, "measures", MEASURES)):
        if value is not None:
            check_choice(value, name, allowed)
    return tuple(m for m in (*METRICS, *_REGISTERED.values())
                 if (inputs is None or m.inputs == inputs)
                 and (measures is None or m.measures == measures)
                 and (family is None or m.family == family))


def names(**kinds) -> tuple[str, ...]:
    """The names of :func:`metrics` (same filters).

    Examples
    --------
    >>> names(inputs="embeddings")[:3]
    ('fid', 'prd_precision', 'prd_recall')
    """
    return tuple(m.name for m in metrics(**kinds))


def get(name: str) -> MetricInfo:
    """The metric called ``name``; ``ValueError`` naming the closest ones otherwise.

    Examples
    --------
    >>> get("fid").higher_is_better
    False
    >>> get("fd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown metric 'fd'; did you mean 'fid'? (metrics: bleu, gleu, ...)
    """
    known = {**_BY_NAME, **_REGISTERED}
    if isinstance(name, str) and name in known:
        return known[name]
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"unknown metric {name!r}{hint} (metrics: {', '.join(known)})")
