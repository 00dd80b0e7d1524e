"""The metrics that ``markeval score`` knows: name → functions, options, how a result prints.

Functions are named as ``"module:function"`` strings and imported on first use, so that
``markeval score --metric bleu`` never imports torch. A metric's options are read from its
function's signature with :mod:`inspect` (``int``, ``float``, ``bool``, ``str`` and their
``| None`` forms convert by themselves); the ``converters`` of an entry add the options whose
annotation says nothing a command line can use (callables, paths, lists).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.util
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


class CLIError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


def _to_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true/false, yes/no, on/off or 1/0")


def _to_str_list(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _to_int_list(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in _to_str_list(text))


def _or_none(convert: Callable[[str], object]) -> Callable[[str], object]:
    # Only numeric and bool options take "none": for str options it can be a real value
    # (BLEU's tokenize="none").
    def converted(text: str):
        return None if text.strip().lower() == "none" else convert(text)

    return converted


_SIMPLE = {"int": (int, "int"), "float": (float, "float"), "bool": (_to_bool, "bool"),
           "str": (str, "str")}
#: Converters for options whose annotation is not simple (used in the registry below).
STR_LIST = (_to_str_list, "comma-separated str")
INT_LIST = (_to_int_list, "comma-separated int")
PATH = (str, "path")
STR = (str, "str")
#: Set by the CLI itself (``--quiet``), never by ``--opt``.
_INPUTS = {"hypotheses", "references", "hypothesis", "progress"}


@dataclass(frozen=True)
class Option:
    """One ``--opt key=value`` option of a metric."""

    name: str
    convert: Callable[[str], object]
    type_name: str
    default: object


@dataclass(frozen=True)
class Row:
    """One printed result: a name, its score, its signature, details and per-line scores.

    ``score`` is None for a row made by a metric's sentence function (no corpus score).
    """

    metric: str
    score: float | None
    signature: str
    details: dict = field(default_factory=dict)
    sentences: tuple[float, ...] | None = None


def _load(spec: str) -> Callable:
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def _derive(annotation) -> tuple[Callable[[str], object], str] | None:
    """(converter, type name) from an annotation such as ``'int | None'``; None if not simple."""
    if annotation is inspect.Parameter.empty:
        return None
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    parts = {part.strip() for part in text.split("|")}
    optional = "None" in parts
    parts.discard("None")
    if len(parts) != 1 or (kind := parts.pop()) not in _SIMPLE:
        return None
    convert, type_name = _SIMPLE[kind]
    if optional and kind != "str":
        return _or_none(convert), f"{type_name} or none"
    return convert, type_name


def _scalar_details(result, skip: set[str]) -> dict:
    """The fields of a result dataclass that are numbers, strings or short tuples of them."""
    details = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if f.name in skip or f.name.startswith("sentence_"):
            continue
        if isinstance(value, (int, float, str, bool)) or (
            isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)
        ):
            details[f.name] = list(value) if isinstance(value, tuple) else value
    return details


@dataclass(frozen=True)
class Metric:
    """A registry entry.

    Attributes
    ----------
    name, description : str
    corpus : str
        ``"module:function"`` of the corpus-level function ``f(hypotheses, references, **opts)``.
    sentence : str, optional
        ``"module:function"`` scoring one line, ``f(hypothesis, references_i, **opts)``; when
        None, ``--sentence`` reads the per-line scores from the ``per_sentence`` attribute of
        the corpus result.
    score, per_sentence : str
        Attributes of the corpus result: the headline score and the per-line scores.
    converters : Mapping[str, (converter, type name)]
        Options whose annotation is not simple; the others come from the signature.
    rows : callable, optional
        ``result -> list[Row]`` when one result makes several rows (ROUGE: one per type).
    """

    name: str
    corpus: str
    description: str
    sentence: str | None = None
    score: str = "score"
    per_sentence: str | None = None
    converters: Mapping[str, tuple[Callable[[str], object], str]] = field(default_factory=dict)
    rows: Callable[[object], list[Row]] | None = None

    def options(self) -> dict[str, Option]:
        """Options of the corpus function, in signature order."""
        options = {}
        for p in inspect.signature(_load(self.corpus)).parameters.values():
            if p.name in _INPUTS or p.default is inspect.Parameter.empty:
                continue
            derived = self.converters.get(p.name) or _derive(p.annotation)
            if derived is not None:
                options[p.name] = Option(p.name, derived[0], derived[1], p.default)
        return options

    def corpus_rows(self, hypotheses, references, opts: dict, progress: bool) -> list[Row]:
        """Score the corpus; one Row per printed result."""
        fn = _load(self.corpus)
        accepts = "progress" in inspect.signature(fn).parameters
        extra = {"progress": progress} if accepts else {}
        result = fn(hypotheses, references, **opts, **extra)
        if self.rows is not None:
            return self.rows(result)
        return [Row(self.name, float(getattr(result, self.score)), result.signature,
                    _scalar_details(result, {"signature", self.score}))]

    def sentence_rows(self, hypotheses, references, opts: dict, progress: bool) -> list[Row]:
        """Per-line scores; one Row per printed result with ``sentences`` filled in."""
        if self.sentence is None:  # the corpus result carries them (see register)
            return self.corpus_rows(hypotheses, references, opts, progress)
        fn = _load(self.sentence)
        from tqdm.auto import tqdm

        results = [fn(h, r, **opts) for h, r in tqdm(
            list(zip(hypotheses, references)), desc=self.name, unit="line", disable=not progress,
            leave=False)]
        scores = tuple(float(getattr(r, self.score)) for r in results)
        return [Row(self.name, None, results[0].signature, {}, scores)]


def _rouge_rows(result) -> list[Row]:
    rows = []
    for t in result.scores:
        details = {"precision": t.precision, "recall": t.recall, "fmeasure": t.fmeasure}
        for name in ("low", "mid", "high"):  # bootstrap intervals, when asked for
            if getattr(t, name) is not None:
                details[name] = dataclasses.asdict(getattr(t, name))
        rows.append(Row(t.rouge_type, t.fmeasure, result.signature, details, t.fmeasures))
    return rows


def _per_sentence_rows(metric: Metric) -> Callable[[object], list[Row]]:
    """Rows for metrics whose corpus result carries the per-line scores (METEOR, BERTScore)."""

    def rows(result) -> list[Row]:
        skip = {"signature", metric.score, metric.per_sentence}
        return [Row(metric.name, float(getattr(result, metric.score)), result.signature,
                    _scalar_details(result, skip),
                    tuple(float(x) for x in getattr(result, metric.per_sentence)))]

    return rows


_LEX = "markeval.lexical"
_ENCODER_OPTIONS = {"model": PATH, "device": STR, "cache_dir": PATH}
REGISTRY: dict[str, Metric] = {}


def register(metric: Metric) -> None:
    """Add ``metric``; metrics whose result carries per-line scores get their rows built."""
    if metric.per_sentence is not None and metric.rows is None:
        metric = dataclasses.replace(metric, rows=_per_sentence_rows(metric))
    REGISTRY[metric.name] = metric


register(Metric("bleu", f"{_LEX}.bleu:bleu", "BLEU, sacrebleu-compatible (0-100)",
                sentence=f"{_LEX}.bleu:sentence_bleu"))
register(Metric("gleu", f"{_LEX}.gleu:gleu", "Google-BLEU, NLTK-compatible (0-100)",
                sentence=f"{_LEX}.gleu:sentence_gleu"))
register(Metric("meteor", f"{_LEX}.meteor:corpus_meteor",
                "METEOR, NLTK-compatible; corpus = mean of sentence scores",
                per_sentence="scores", converters={"tokenizer": STR, "wordnet": PATH}))
register(Metric("rouge", f"{_LEX}.rouge:rouge", "ROUGE F-measure, one row per type",
                converters={"types": STR_LIST, "tokenizer": STR}, rows=_rouge_rows))
# Embedding metrics (they import torch when used, not when listed as names).
register(Metric("bertscore", "markeval.semantic.bertscore:bertscore",
                "BERTScore F1 on contextual token embeddings", score="f1",
                per_sentence="sentence_f1", converters=_ENCODER_OPTIONS))
register(Metric("moverscore", "markeval.semantic.moverscore:moverscore",
                "MoverScore: earth mover's distance on contextual embeddings",
                per_sentence="sentence_scores",
                converters={**_ENCODER_OPTIONS, "layers": INT_LIST, "stop_words": STR_LIST}))

#: Names users try that are not reference metrics (or not implemented), with the reason.
NOT_SCORED = {
    "perplexity": "perplexity scores text against a language model, not against references: "
                  "use markeval.perplexity in Python",
    "chrf": "chrF is not implemented in markeval: use sacrebleu's chrF",
}


def available() -> dict[str, Metric]:
    """The registered metrics whose module imports (an embedding metric may be absent)."""
    out = {}
    for name, metric in REGISTRY.items():
        module = metric.corpus.split(":")[0]
        if importlib.util.find_spec(module) is not None:
            out[name] = metric
    return out


def suggest(word: str, choices) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices``, or an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def get_metric(name: str) -> Metric:
    """The registry entry for ``name`` (case-insensitive), or a CLIError that suggests one."""
    metrics = available()
    key = name.lower()
    if key in metrics:
        return metrics[key]
    if key in NOT_SCORED:
        raise CLIError(f"{name}: {NOT_SCORED[key]}")
    raise CLIError(f"unknown metric {name!r}{suggest(key, metrics)} "
                   f"(known: {', '.join(metrics)})")


def parse_options(pairs: list[str], metrics: list[Metric]) -> dict[str, dict]:
    """Turn ``--opt key=value`` / ``--opt metric.key=value`` into per-metric keyword dicts.

    An unscoped key goes to every chosen metric that has it; a key that none has is an error
    that suggests the closest option name.
    """
    options = {m.name: m.options() for m in metrics}
    out: dict[str, dict] = {m.name: {} for m in metrics}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CLIError(f"--opt expects key=value (e.g. smooth=exp), got {pair!r}")
        scope, dot, bare = key.rpartition(".")
        targets = [scope] if dot else [m.name for m in metrics]
        if dot and scope not in options:
            raise CLIError(f"--opt {pair}: {scope!r} is not one of the chosen metrics "
                           f"({', '.join(options)}){suggest(scope, options)}")
        matched = [name for name in targets if bare in options[name]]
        if not matched:
            names = {o for name in targets for o in options[name]}
            raise CLIError(f"unknown option {bare!r} for {', '.join(targets)}"
                           f"{suggest(bare, names)} (see `markeval list`)")
        for name in matched:
            opt = options[name][bare]
            try:
                out[name][bare] = opt.convert(value)
            except ValueError as err:
                raise CLIError(f"option {bare} of {name} expects {opt.type_name}, got "
                               f"{value!r} ({err})") from None
    return out
