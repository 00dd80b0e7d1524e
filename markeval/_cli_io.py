"""Reading line files and printing results for the command line (table, JSON, TSV)."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np

from markeval._cli_registry import CLIError, Row


def _label(path: str) -> str:
    return "<stdin>" if path == "-" else path


def read_lines(path: str) -> list[str]:
    """One sentence per line of a UTF-8 file (``-``: stdin); CLIError on any problem.

    Lines are split on ``\\n`` only (``\\r\\n`` endings are stripped) so that a U+2028 or form
    feed inside a sentence does not shift the alignment with the references, as
    ``str.splitlines`` would.
    """
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise CLIError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise CLIError(f"{path}: is a directory, not a file") from None
        except OSError as err:
            raise CLIError(f"{path}: cannot read ({err.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise CLIError(
            f"{_label(path)}: not UTF-8 text (byte 0x{data[err.start]:02x} on line {line}); "
            "convert it first, e.g. iconv -f latin1 -t utf-8") from None
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise CLIError(f"{_label(path)}: empty file (one sentence per line is expected)")
    return [line.removesuffix("\r") for line in lines]


def read_aligned(hyp_path: str, ref_paths: list[str]) -> tuple[list[str], list[list[str]]]:
    """Hypotheses and, per hypothesis, its references (line i of every reference file)."""
    if [hyp_path, *ref_paths].count("-") > 1:
        raise CLIError("only one of --hyp and --ref can read stdin ('-')")
    hypotheses = read_lines(hyp_path)
    streams = []
    for path in ref_paths:
        lines = read_lines(path)
        if len(lines) != len(hypotheses):
            raise CLIError(
                f"line counts differ: {_label(hyp_path)} has {len(hypotheses)} lines but "
                f"{_label(path)} has {len(lines)} (files must be line-aligned)")
        streams.append(lines)
    return hypotheses, [list(refs) for refs in zip(*streams)]


def read_systems(baseline: str, systems: list[str], ref_paths: list[str]
                 ) -> tuple[list[tuple[str, list[str]]], list[list[str]]]:
    """``[(path, lines), ...]`` (the baseline first) and the references, all line-aligned.

    Systems are named by their paths, as sacrebleu names them; a path given twice (or the
    baseline again) is an error.
    """
    paths = [baseline, *systems]
    if paths.count("-") + ref_paths.count("-") > 1:
        raise CLIError("only one of --baseline, --system and --ref can read stdin ('-')")
    seen = set()
    for path in paths:
        if path in seen:
            raise CLIError(f"{_label(path)} is given twice (as the baseline or a --system): "
                           "each system must be a different file")
        seen.add(path)
    hypotheses, references = read_aligned(baseline, ref_paths)
    named = [(_label(baseline), hypotheses)]
    for path in systems:
        lines = read_lines(path)
        if len(lines) != len(hypotheses):
            raise CLIError(
                f"line counts differ: {_label(baseline)} has {len(hypotheses)} lines but "
                f"{_label(path)} has {len(lines)} (files must be line-aligned)")
        named.append((_label(path), lines))
    return named, references


def format_comparison(results: list, fmt: str, meta: dict) -> str:
    """Paired-test results (one :class:`~markeval.significance.SignificanceResult` per
    metric) as sacrebleu's table, ``json`` or ``tsv``."""
    if fmt == "json":
        out = [{"metric": r.metric, "signature": r.signature,
                "higher_is_better": r.higher_is_better,
                "systems": [{"system": row.name, "baseline": row.is_baseline,
                             "score": row.score, "mean": row.mean, "ci": row.ci,
                             "ci_low": row.ci_low, "ci_high": row.ci_high,
                             "p_value": row.p_value} for row in r.rows]} for r in results]
        return _json({**meta, "results": out})
    if fmt == "tsv":
        lines = [f"# {r.metric}: {r.signature}" for r in results]
        lines.append("system\tmetric\tscore\tmean\tci\tp_value")
        lines += [f"{row.name}\t{r.metric}\t{row.score!r}\t{row.mean!r}\t{row.ci!r}\t"
                  f"{'' if row.p_value is None else repr(row.p_value)}"
                  for r in results for row in r.rows]
        return "\n".join(lines)
    from markeval.significance import format_table

    return format_table(results)


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def read_npy(path: str) -> np.ndarray:
    """A 2-D numeric array from a ``.npy`` file; CLIError naming the file on any problem.

    The first bytes tell a ``.npy`` file from a ``.npz`` archive or a text file, so the message
    says what the file is instead of numpy's advice about pickles or string conversion.
    """
    try:
        with open(path, "rb") as f:
            magic = f.read(len(_NPY_MAGIC))
    except FileNotFoundError:
        raise CLIError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CLIError(f"{path}: is a directory, not a file") from None
    except OSError as err:
        raise CLIError(f"{path}: cannot read ({err.strerror})") from None
    if magic.startswith(_ZIP_MAGIC):
        raise CLIError(f"{path}: a .npz archive of several arrays; --embeddings takes one array "
                       "per file, saved with numpy.save (e.g. numpy.save('ref.npy', "
                       "numpy.load(path)['name']))")
    if magic != _NPY_MAGIC:
        raise CLIError(f"{path}: not a .npy file (no numpy header: text or another format?); "
                       "save the embeddings with numpy.save, one row per sentence")
    try:
        array = np.load(path, allow_pickle=False)
    except ValueError:  # allow_pickle=False refused an array of Python objects
        raise CLIError(f"{path}: holds Python objects, not numbers; save a numeric 2-D "
                       "array (sentences x dimensions)") from None
    except (OSError, EOFError) as err:
        raise CLIError(f"{path}: damaged .npy file ({err})") from None
    if array.ndim != 2 or array.dtype.kind not in "iuf":
        raise CLIError(f"{path}: holds a {array.dtype} array of shape {array.shape}; a numeric "
                       "2-D array (one row per sentence) is needed")
    return array


_POSITION = re.compile(r"\b(references|hypotheses)\[(\d+)\](?:\[(\d+)\])?")


def name_lines(message: str, hyp_path: str, ref_paths: list[str]) -> str:
    """Turn the list positions in a library message into files and lines.

    The metrics name bad items by position (``references[3][1]``: hypothesis 3's second
    reference); on the command line that is line 4 of the second ``--ref`` file.
    """

    def place(match: re.Match) -> str:
        line = int(match.group(2)) + 1
        if match.group(1) == "hypotheses":
            return f"{_label(hyp_path)} line {line}"
        if match.group(3) is None:
            return f"line {line} of the reference files"
        return f"{_label(ref_paths[int(match.group(3))])} line {line}"

    return _POSITION.sub(place, message)


def _fmt(x) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4f}"


def _table(header: list[str], body: list[list[str]], right: set[int]) -> str:
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = []
    for r in [header, *body]:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _json(obj) -> str:
    """Strict JSON: an infinite estimate (no recapture) or NaN becomes the string "inf"/"nan"."""

    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return str(x)
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(obj), indent=2, allow_nan=False)


def format_corpus(rows: list[Row], fmt: str, meta: dict) -> str:
    """Corpus rows (also the ME rows) as ``table``, ``json`` or ``tsv``."""
    if fmt == "json":
        results = [{"metric": r.metric, "score": r.score, "signature": r.signature,
                    "details": r.details} for r in rows]
        return _json({**meta, "results": results})
    if fmt == "tsv":
        lines = ["metric\tscore\tsignature"]
        lines += [f"{r.metric}\t{r.score!r}\t{r.signature}" for r in rows]
        return "\n".join(lines)
    body = [[r.metric, _fmt(r.score), r.signature] for r in rows]
    return _table(["metric", "score", "signature"], body, right={1})


def format_sentences(rows: list[Row], fmt: str, meta: dict) -> str:
    """Per-line scores: one column per row, one line per hypothesis.

    TSV starts with ``# name: signature`` lines (read it with
    ``pandas.read_csv(path, sep="\\t", comment="#")``).
    """
    n = len(rows[0].sentences)
    if fmt == "json":
        results = [{"metric": r.metric, "signature": r.signature, "scores": list(r.sentences)}
                   for r in rows]
        return _json({**meta, "results": results})
    if fmt == "tsv":
        lines = [f"# {r.metric}: {r.signature}" for r in rows]
        lines.append("\t".join(["line", *(r.metric for r in rows)]))
        lines += ["\t".join([str(i + 1), *(repr(r.sentences[i]) for r in rows)])
                  for i in range(n)]
        return "\n".join(lines)
    body = [[str(i + 1), *(_fmt(r.sentences[i]) for r in rows)] for i in range(n)]
    table = _table(["line", *(r.metric for r in rows)], body, right=set(range(len(rows) + 1)))
    width = max(len(r.metric) for r in rows)
    signatures = "\n".join(f"{r.metric.ljust(width)}  {r.signature}" for r in rows)
    return f"{table}\n\nsignatures:\n{signatures}"
