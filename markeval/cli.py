"""The ``markeval`` command line: ``score``, ``compare``, ``me``, ``list``, ``data`` and ``cache``.

``python -m markeval score --metric bleu --hyp system.txt --ref reference.txt`` scores a
system output (one sentence per line) against one or more line-aligned reference files;
``python -m markeval compare --baseline a.txt --system b.txt --ref ref.txt`` runs sacrebleu's
paired significance tests (bootstrap or approximate randomization) of systems against a
baseline; ``python -m markeval me --reference a.txt --candidate b.txt`` gives the Mark-Evaluate
scores of two sets of sentences; ``python -m markeval list`` prints the metrics and their options;
``python -m markeval data`` finds the human-judgement data sets, downloading (and checking) what
is missing (``make install`` runs it); ``python -m markeval cache`` shows where the on-disk
cache lives and its size per kind, ``python -m markeval cache clear KIND`` removes what markeval
wrote of a kind (``--dry-run`` lists it) and ``python -m markeval cache verify`` hashes data
sets and models.

Every user error (missing file, line counts that differ, unknown metric or option, a file that
is not UTF-8, a value the metric rejects) ends with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import warnings
from pathlib import Path

from markeval import __version__, registry
from markeval._cli_io import (format_comparison, format_corpus, format_sentences, name_lines,
                              read_aligned, read_lines, read_npy, read_systems)
from markeval._cli_registry import (NOT_SCORED, CLIError, OneLineParser, Row, available,
                                    get_metric, not_scored, parse_options)
from markeval.population.mark_evaluate import SCHNABEL_ESTIMATORS

__all__ = ["main"]

EXIT_USAGE = 2


def _progress(args) -> bool:
    # Bars only where someone watches: not with --quiet, and not into a log file or a pipe.
    return not args.quiet and sys.stderr.isatty()


def _add_output(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--json", dest="fmt", action="store_const", const="json",
                       help="print JSON")
    group.add_argument("--tsv", dest="fmt", action="store_const", const="tsv",
                       help="print tab-separated values")
    p.set_defaults(fmt="table")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars on stderr")


def _score(args) -> str:
    metrics = []
    for name in args.metric:
        metric = get_metric(name)
        if metric not in metrics:
            metrics.append(metric)
    options = parse_options(args.opt, metrics)
    hypotheses, references = read_aligned(args.hyp, args.ref)
    progress = _progress(args)
    rows: list[Row] = []
    for metric in metrics:
        score = metric.sentence_rows if args.sentence else metric.corpus_rows
        # Library messages name list positions (references[1][0]); say file and line instead.
        with warnings.catch_warnings(record=True) as caught:
            try:
                rows += score(hypotheses, references, options[metric.name], progress)
            except (ValueError, TypeError) as err:
                message = name_lines(" ".join(str(err).split()), args.hyp, args.ref)
                raise CLIError(f"{metric.name}: {message}") from None
        for warning in caught:
            message = name_lines(str(warning.message), args.hyp, args.ref)
            print(f"markeval: warning: {metric.name}: {message}", file=sys.stderr)
    meta = {"hyp": args.hyp, "refs": args.ref, "lines": len(hypotheses),
            "level": "sentence" if args.sentence else "corpus"}
    return (format_sentences if args.sentence else format_corpus)(rows, args.fmt, meta)


def _compare_metric(name: str):
    """The command-line metric whose options ``--opt`` sets for ``compare -m name``: the
    registry family's (``rouge1`` -> ``rouge``)."""
    try:
        family = registry.get(name).family
    except ValueError:
        family = name  # get_metric refuses it, suggesting the closest name
    return get_metric(family)


def _compare(args) -> str:
    from markeval.significance import paired_significance

    names = list(dict.fromkeys(args.metric or ["bleu"]))
    cli_metrics = {name: _compare_metric(name) for name in names}
    unique = list({m.name: m for m in cli_metrics.values()}.values())
    options = parse_options(args.opt, unique)
    named, references = read_systems(args.baseline, args.system, args.ref)
    results = []
    for name in names:
        opts = options.get(cli_metrics[name].name, {})
        with warnings.catch_warnings(record=True) as caught:
            try:
                metric = name if name in registry.names() else name.lower()
                results.append(paired_significance(
                    named[0], dict(named[1:]), references, metric=metric, test=args.test,
                    n_resamples=args.n_resamples, seed=args.seed, options=opts,
                    progress=_progress(args)))
            except (ValueError, TypeError) as err:
                message = name_lines(" ".join(str(err).split()), args.baseline, args.ref)
                raise CLIError(f"{name}: {message}") from None
        for warning in caught:
            print(f"markeval: warning: {name}: {warning.message}", file=sys.stderr)
    first = results[0]
    meta = {"baseline": named[0][0], "systems": [n for n, _ in named[1:]], "refs": args.ref,
            "lines": len(references), "test": first.test, "n_resamples": first.n_resamples,
            "seed": first.seed}
    return format_comparison(results, args.fmt, meta)


def _me(args) -> str:
    from markeval.population.mark_evaluate import mark_evaluate

    if args.embeddings:
        if args.reference or args.candidate:
            raise CLIError("give either --embeddings or --reference/--candidate, not both")
        reference, candidate = (read_npy(path) for path in args.embeddings)
        meta = {"reference": args.embeddings[0], "candidate": args.embeddings[1]}
    else:
        if not (args.reference and args.candidate):
            raise CLIError("me needs --reference FILE and --candidate FILE (or --embeddings "
                           "ref.npy cand.npy)")
        if [args.reference, args.candidate].count("-") > 1:
            raise CLIError("only one of --reference and --candidate can read stdin ('-')")
        texts = [read_lines(args.reference), read_lines(args.candidate)]
        if args.model is not None and not Path(args.model).is_dir():
            # A non-directory would be taken as a hub id and downloaded: never from here.
            raise CLIError(f"--model {args.model}: not a directory (a local encoder is needed)")
        from markeval.encoders import default_model, load_encoder, sentence_embeddings

        encoder = (default_model(args.device) if args.model is None
                   else load_encoder(args.model, args.device))
        reference, candidate = (
            sentence_embeddings(t, encoder, progress=_progress(args)) for t in texts)
        meta = {"reference": args.reference, "candidate": args.candidate,
                "encoder": encoder.name, "level": "sentence"}
    result = mark_evaluate(reference, candidate, k=args.k, schnabel_estimator=args.estimator,
                           progress=_progress(args))
    order = [f.name for f in dataclasses.fields(result)]  # rows in the result's order
    parts = sorted(registry.metrics(family="mark_evaluate"), key=lambda m: order.index(m.part))
    rows = [Row(m.part, m.value(part), part.signature,
                {"estimate": part.estimate, "population": part.population})
            for m in parts for part in [m.select(result)]]
    meta.update(k=result.k, samples=[len(reference), len(candidate)])
    table = format_corpus(rows, args.fmt, meta)
    if args.fmt == "table" and "encoder" in meta:
        table += f"\n\nencoder: {meta['encoder']} (sentence embeddings)"
    return table


def _list(args) -> str:
    lines = []
    for name, metric in available().items():
        lines.append(f"{name}: {metric.description}")
        for opt in metric.options().values():
            lines.append(f"    {opt.name}={opt.default!r}  ({opt.type_name})")
    lines.append("")
    lines += [f"not here: {name}: {why}" for name, why in NOT_SCORED.items()]
    others = [name for name in not_scored() if name not in NOT_SCORED]
    lines.append(f"not here: {', '.join(others)}: they compare two sets (of sentences or "
                 "embeddings), not line-aligned texts: see markeval.registry, and `markeval me` "
                 "for Mark-Evaluate")
    lines.append("options: --opt key=value (every chosen metric that has it) or "
                 "--opt metric.key=value")
    return "\n".join(lines)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _listing(paths, root: Path, limit: int = 20) -> list[str]:
    def shown(path: Path) -> str:
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            return f"{name} -> {os.readlink(path)} (a link: not followed)"
        return name + ("/" if path.is_dir() else "")

    lines = [f"  {shown(path)}" for path in paths[:limit]]
    if len(paths) > limit:
        lines.append(f"  ... and {len(paths) - limit} more")
    return lines


def _cache(args) -> str:
    import json

    from markeval.cache import CLEAR_CHOICES, cache_root, cache_usage, clear_cache, verify_cache

    root = cache_root()
    if args.dry_run and args.action != "clear":
        raise CLIError(f"--dry-run goes with cache clear, not cache {args.action}")
    if args.action == "clear":
        unknown = [kind for kind in args.kinds if kind not in CLEAR_CHOICES]
        if unknown or not args.kinds:
            raise CLIError(f"cache clear needs kinds from {', '.join(CLEAR_CHOICES)}"
                           + (f"; got {' '.join(unknown)}" if unknown else ""))
        done = [clear_cache(kind, dry_run=args.dry_run) for kind in dict.fromkeys(args.kinds)]
        removed = [p for d in done for p in d.removed]
        kept = list(dict.fromkeys(p for d in done for p in d.kept))
        size = _size(sum(d.bytes for d in done))
        if args.dry_run:
            lines = [f"would remove {_count(len(removed), 'file')} ({size}) from {root}"
                     + (":" if removed else "")] + _listing(removed, root, limit=len(removed))
        else:
            lines = [f"removed {_count(len(removed), 'file')} ({size}) from {root}"]
        if kept:
            lines += [f"left {_count(len(kept), 'entry', 'entries')} markeval did not write "
                      "(or a link it does not follow):"] + _listing(kept, root)
        return "\n".join(lines)
    if args.kinds:
        raise CLIError(f"cache {args.action} takes no kind (got {' '.join(args.kinds)})")
    if args.action == "verify":
        checks = verify_cache()
        lines = [f"{'ok' if c.sound else 'DAMAGED'}  {c.kind}: {c.path}: {c.finding}"
                 for c in checks] or [f"nothing to verify under {root}"]
        if not all(c.sound for c in checks):
            print("\n".join(lines))
            raise _Damaged("some cache content is damaged and could not be repaired")
        return "\n".join(lines)
    usage = cache_usage()
    setting = ("set by MARKEVAL_CACHE" if os.environ.get("MARKEVAL_CACHE")
               else "the default; set MARKEVAL_CACHE to move it")
    if args.fmt == "json":
        return json.dumps({"root": str(root), "usage": usage}, indent=2)
    lines = [f"cache root: {root} ({setting})", f"{'kind':<12}{'files':>8}{'size':>12}"]
    lines += [f"{kind:<12}{u['files']:>8}{_size(u['bytes']):>12}" for kind, u in usage.items()]
    lines.append("other: what markeval did not write there; never cleared")
    return "\n".join(lines)


def _data(args) -> str:
    from markeval.datasets import locate, search_roots
    from markeval.datasets._sources import SOURCES

    names = list(dict.fromkeys(args.names)) or sorted(SOURCES)
    unknown = [name for name in names if name not in SOURCES]
    if unknown:
        raise CLIError(f"data takes data sets from {', '.join(sorted(SOURCES))}; "
                       f"got {' '.join(unknown)}")
    lines = []
    for name in names:
        folder = locate(name, download_if_missing=True)
        why = next((why for root, why in search_roots() if root / name == folder), "")
        lines.append(f"{name}: {folder} ({why})")
    return "\n".join(lines)


class _Damaged(Exception):
    """``cache verify`` found damage it could not repair: exit status 1."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``markeval`` command."""
    parser = OneLineParser(prog="markeval", description="Metrics for generated text.")
    parser.add_argument("--version", action="version", version=f"markeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    p = sub.add_parser("score", help="score a system output against references",
                       description="Score hypotheses (one per line) against line-aligned "
                                   "reference files. '-' reads stdin. Each --ref file is one "
                                   "reference stream (sacrebleu's layout), and line i of every "
                                   "file goes with line i of --hyp. In Python the layout is the "
                                   "other way round, references[i] = the references of "
                                   "hypothesis i; a stream list passed there is refused when "
                                   "its length differs from the number of hypotheses, and "
                                   "cannot be detected when it is the same (say 2 streams for "
                                   "2 hypotheses).")
    p.add_argument("--metric", "-m", action="append", required=True,
                   help="metric name (repeat for several; see `markeval list`)")
    p.add_argument("--hyp", required=True, help="hypothesis file, one sentence per line")
    p.add_argument("--ref", action="append", required=True,
                   help="reference file (repeat for several references per line)")
    p.add_argument("--sentence", action="store_true", help="per-line scores")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                   help="metric option, e.g. smooth=exp or bleu.tokenize=none")
    _add_output(p)
    p.set_defaults(run=_score)

    p = sub.add_parser("compare", help="paired significance tests of systems against a baseline",
                       description="sacrebleu's --paired-bs / --paired-ar: is each system's "
                                   "score different from the baseline's by more than chance? "
                                   "Same defaults and random streams as sacrebleu 2.6 (1000 "
                                   "bootstrap resamples or 10000 randomization trials, seed "
                                   "12345), so the p-values are sacrebleu's. Systems are named "
                                   "by their files; all files are line-aligned.")
    p.add_argument("--baseline", required=True, help="baseline system output, one line each")
    p.add_argument("--system", action="append", required=True,
                   help="system output compared with the baseline (repeat for several)")
    p.add_argument("--ref", action="append", required=True,
                   help="reference file (repeat for several references per line)")
    p.add_argument("--metric", "-m", action="append",
                   help="bleu (default), chrf, ter, or a metric with per-line scores "
                        "(meteor, rouge1, rouge2, rougeL, rougeLsum, bertscore); repeat")
    p.add_argument("--test", choices=("bs", "ar"), default="bs",
                   help="bs: paired bootstrap resampling (default); ar: approximate "
                        "randomization")
    p.add_argument("--n-resamples", type=int, default=None, metavar="N",
                   help="bootstrap resamples (bs, default 1000) or trials (ar, default 10000)")
    p.add_argument("--seed", type=int, default=12345, help="random seed (default 12345)")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                   help="metric option, e.g. tokenize=intl or chrf.word_order=2")
    _add_output(p)
    p.set_defaults(run=_compare)

    p = sub.add_parser("me", help="Mark-Evaluate scores of a candidate set against a reference set",
                       description="ME_Petersen, ME_Schnabel (quality and diversity) and "
                                   "ME_CAPTURE on sentence embeddings.")
    p.add_argument("--reference", help="reference sentences, one per line")
    p.add_argument("--candidate", help="candidate sentences, one per line")
    p.add_argument("--embeddings", nargs=2, metavar=("REF.npy", "CAND.npy"),
                   help="precomputed embeddings instead of text")
    p.add_argument("--k", type=int, default=1, help="neighbours per k-NN ball (default 1)")
    p.add_argument("--estimator", choices=SCHNABEL_ESTIMATORS, default="printed",
                   help="ME_Schnabel's estimator: Eq. 4 as printed, C_T M_T / R_T (default), or "
                        "Schnabel's census form, sum C_i M_i / sum R_i")
    p.add_argument("--model", help="encoder directory (default: the packaged MiniLM)")
    p.add_argument("--device", default="auto",
                   help="torch device for the encoder: auto (default: cuda when available, "
                        "else cpu), cpu, cuda, cuda:1 ...")
    _add_output(p)
    p.set_defaults(run=_me)

    p = sub.add_parser("list", help="list the metrics and their options")
    p.set_defaults(run=_list)

    p = sub.add_parser("data", help="find the human-judgement data sets; download what is missing",
                       description="Each data set (default: all) is looked for in "
                                   "$MARKEVAL_DATA, in shared/data beside the working folder or "
                                   "the package, and in the cache; where none holds it, it is "
                                   "downloaded from its public source (or $MARKEVAL_DATA_MIRROR) "
                                   "into the cache, each file checked against its pinned SHA-256, "
                                   "unless MARKEVAL_OFFLINE is set. Prints where each one is.")
    p.add_argument("names", nargs="*", metavar="NAME", help="wmt17, tac (default: both)")
    p.set_defaults(run=_data)

    p = sub.add_parser("cache", help="where the on-disk cache lives, its size; verify, clear it",
                       description="markeval keeps downloaded data sets (kind 'data'), "
                                   "embeddings, assembled models, reproduction units and more "
                                   "under one folder: $MARKEVAL_CACHE, or ~/.cache/markeval. "
                                   "'partial' files are what a killed process left while "
                                   "writing. clear removes only files markeval wrote and lists "
                                   "anything else it finds; verify hashes data sets and models "
                                   "and repairs what it can.")
    p.add_argument("action", nargs="?", choices=("info", "clear", "verify"), default="info",
                   help="info (default): the folder and its size per kind; clear: delete kinds; "
                        "verify: check hashes and repair")
    p.add_argument("kinds", nargs="*", metavar="KIND",
                   help="for clear: data, embeddings, models, reproduce, wordnet, "
                        "partial or all")
    p.add_argument("--dry-run", action="store_true",
                   help="for clear: list what would be removed, remove nothing")
    p.add_argument("--json", dest="fmt", action="store_const", const="json", default="table",
                   help="print JSON (info)")
    p.set_defaults(run=_cache)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"markeval: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status.

    0 on success, 2 on a user error (one line on stderr), 1 when the reader of stdout went
    away (``| head``) or ``cache verify`` found damage it could not repair, 130 on Ctrl-C.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "hyp.txt").write_text("the cat sat on the mat\\n", encoding="utf-8")
    >>> _ = (folder / "ref.txt").write_text("the cat sat on a mat\\n", encoding="utf-8")
    >>> main(["score", "-m", "gleu", "--hyp", str(folder / "hyp.txt"),
    ...       "--ref", str(folder / "ref.txt")])  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    metric    score  signature
    gleu    61.1111  gleu|nrefs:1|tok:13a|lowercase:no|min_len:1|max_len:4|version:...
    0
    """
    warnings.showwarning = _one_line_warning
    try:
        args = build_parser().parse_args(argv)
        print(args.run(args))
    except SystemExit as done:  # --help and --version end here, status 0
        return done.code
    except BrokenPipeError:
        # The reader stopped early (`| head`): silence the flush at exit, as Python's docs advise.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except CLIError as err:
        print(f"markeval: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except _Damaged as err:
        print(f"markeval: error: {err}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError, ArithmeticError) as err:
        # Bad input that the library rejects: its message names the offending value.
        message = " ".join(str(err).split())
        print(f"markeval: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("markeval: error: out of memory (a smaller input or fewer resamples may fit)",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    return 0
