"""How ``markeval score`` presents the metrics: their options and how a result prints.

The metrics themselves (functions, headline attributes, per-line scores) come from
:mod:`markeval.registry`: every family of line-aligned text metrics there is one metric here.
Functions are named as ``"module:function"`` strings and imported on first use, so that
``markeval score --metric bleu`` never imports torch. A metric's options are read from its
function's signature with :mod:`inspect` (``int``, ``float``, ``bool``, ``str`` and their
``| None`` forms convert by themselves); the ``converters`` of an entry add the options whose
annotation says nothing a command line can use (callables, paths, lists).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib
import importlib.util
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from markeval import registry


class CLIError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (its default prints the usage first)."""

    def error(self, message):
        raise CLIError(f"{message} (see `{self.prog} --help`)")


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


def _to_float_list(text: str) -> tuple[float, ...]:
    return tuple(float(part) for part in _to_str_list(text))


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
FLOAT_LIST = (_to_float_list, "comma-separated float")
INT = (int, "int")
FLOAT = (float, "float")
BOOL = (_to_bool, "bool")
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
    """A metric of ``markeval score``: a registry metric and how the command line shows it.

    Attributes
    ----------
    name, description : str
    info : markeval.registry.MetricInfo
        The function ``f(hypotheses, references, **opts)``, the headline attribute of its
        result and, when the result has them, the per-line scores (``info.items``).
    converters : Mapping[str, (converter, type name)]
        Options whose annotation is not simple; the others come from the signature.
    rows : callable, optional
        ``result -> list[Row]`` when one result makes several rows (ROUGE: one per type).
    """

    name: str
    description: str
    info: registry.MetricInfo
    converters: Mapping[str, tuple[Callable[[str], object], str]] = field(default_factory=dict)
    rows: Callable[[object], list[Row]] | None = None

    @property
    def corpus(self) -> str:
        """``"module:function"`` of the corpus function."""
        return self.info.corpus

    def options(self) -> dict[str, Option]:
        """Options of the corpus function, in signature order."""
        options = {}
        for p in inspect.signature(self.info.function).parameters.values():
            if p.name in _INPUTS or p.default is inspect.Parameter.empty:
                continue
            derived = self.converters.get(p.name) or _derive(p.annotation)
            if derived is not None:
                options[p.name] = Option(p.name, derived[0], derived[1], p.default)
        return options

    @property
    def _defaults(self) -> Mapping[str, object]:
        """The registry entry's fixed options (chrf++ is chrf with ``word_order=2``); a family
        scored by one call (ROUGE) passes its members' options itself."""
        return {} if self.rows is not None else self.info.options

    def corpus_rows(self, hypotheses, references, opts: dict, progress: bool) -> list[Row]:
        """Score the corpus; one Row per printed result."""
        fn = self.info.function
        accepts = "progress" in inspect.signature(fn).parameters
        extra = {"progress": progress} if accepts else {}
        result = fn(hypotheses, references, **{**self._defaults, **opts}, **extra)
        if self.rows is not None:
            return self.rows(result)
        headline, items = self.info.headline, self.info.items
        details = _scalar_details(result, {"signature", headline, items})
        sentences = None if items is None else tuple(float(x) for x in getattr(result, items))
        return [Row(self.name, self.info.value(result), result.signature, details, sentences)]

    def sentence_rows(self, hypotheses, references, opts: dict, progress: bool) -> list[Row]:
        """Per-line scores; one Row per printed result with ``sentences`` filled in.

        A corpus result with per-line scores gives them in one call (METEOR, BERTScore);
        otherwise the sentence function scores line by line (BLEU, GLEU).
        """
        if self.rows is not None or self.info.items is not None:
            return self.corpus_rows(hypotheses, references, opts, progress)
        fn = self.info.sentence_function
        from tqdm.auto import tqdm

        opts = {**self._defaults, **opts}
        results = [fn(h, r, **opts) for h, r in tqdm(
            list(zip(hypotheses, references)), desc=self.name, unit="line", disable=not progress,
            leave=False)]
        scores = tuple(self.info.value(r) for r in results)
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


# Options whose annotation says nothing a command line can use, per CLI metric.
_ENCODER_OPTIONS = {"model": PATH, "device": STR, "cache_dir": PATH}
_CHRF_OPTIONS = {"char_order": INT, "word_order": INT, "beta": FLOAT, "lowercase": BOOL,
                 "whitespace": BOOL, "eps_smoothing": BOOL}
_CONVERTERS = {
    # max_order=None means 4 (or len(weights)); on the command line leave it out for that.
    "bleu": {"weights": FLOAT_LIST, "max_order": INT},
    "chrf": _CHRF_OPTIONS,
    "chrf++": _CHRF_OPTIONS,
    "ter": {"normalized": BOOL, "no_punct": BOOL, "asian_support": BOOL, "case_sensitive": BOOL},
    "meteor": {"tokenize": STR, "wordnet": PATH},
    "rouge": {"types": STR_LIST, "tokenize": STR},
    "bertscore": _ENCODER_OPTIONS,
    "moverscore": {**_ENCODER_OPTIONS, "layers": INT_LIST, "stop_words": STR_LIST},
}
#: Families of several registry metrics scored by one call: one CLI metric, one row per member.
_FAMILIES = {"rouge": ("ROUGE F-measure, one row per type", _rouge_rows)}


def _from_registry(members: tuple[registry.MetricInfo, ...]) -> Metric:
    """The CLI metric of one registry family of line-aligned text metrics."""
    first = members[0]
    converters = _CONVERTERS.get(first.family, {})
    if len(members) > 1:
        description, rows = _FAMILIES[first.family]
        return Metric(first.family, description, first, converters, rows)
    return Metric(first.name, first.description, first, converters)


#: The metrics of ``markeval score``: one per registry family of line-aligned text metrics.
REGISTRY: dict[str, Metric] = {
    family: _from_registry(registry.metrics(family=family))
    for family in dict.fromkeys(m.family for m in registry.metrics(inputs="texts"))}

#: Names users try that are not reference metrics (or not implemented), with the reason.
NOT_SCORED = {
    "perplexity": "perplexity scores text against a language model, not against references: "
                  "use markeval.perplexity in Python",
}
_ELSEWHERE = {"text sets": "two unaligned sets of tokenised sentences",
              "embeddings": "two sets of embeddings (`markeval me` gives Mark-Evaluate)",
              "probabilities": "token probabilities"}


def not_scored() -> dict[str, str]:
    """Every name ``markeval score`` refuses, with the reason: :data:`NOT_SCORED` and the
    registry's metrics of other inputs than line-aligned texts."""
    out = dict(NOT_SCORED)
    for m in registry.metrics():
        if m.inputs != "texts" and m.name not in out:
            function = m.corpus.split(":")[1]
            out[m.name] = (f"{m.name} compares {_ELSEWHERE[m.inputs]}, not line-aligned "
                           f"texts: use markeval.{function} in Python")
    return out


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
    refused = {n.lower(): why for n, why in not_scored().items()}
    if key in refused:
        raise CLIError(f"{name}: {refused[key]}")
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
