"""Build the instructor edition of the book: the assignments with their model solutions.

The public book (``make book``) lists the *student* notebooks of the assignments
(``book/student/assignment_N_*.ipynb``, written by ``python -m tools.student_edition
--notebooks``). ``python -m tools.instructor_edition [OUTDIR]`` (``make instructor``; OUTDIR
defaults to ``_build/instructor``) builds the same book with the instructor pages instead:

* ``OUTDIR/_toc.yml`` is the book's ``_toc.yml`` with every ``book/student/X`` replaced by the
  instructor page ``book/X`` (the MyST source with the solutions, executed like every chapter)
  and ``book/instructor_notes`` added after the last assignment (:func:`instructor_toc`);
* ``OUTDIR/_config.yml`` is the book's ``_config.yml`` with an "(instructor edition)" title, the
  execution cache of ``make book`` (``_build/.jupyter_cache``, so chapters already executed
  there are not executed again) and local extension paths made absolute
  (:func:`instructor_config`);
* the book is built in place, from the repository root::

      jupyter-book build . --toc OUTDIR/_toc.yml --config OUTDIR/_config.yml \\
          --path-output OUTDIR -W -n --keep-going

  Jupyter Book resolves the files of a table of contents relative to the source root, not to
  the folder of the ``_toc.yml``, so the derived toc names pages as the book's own does. The
  HTML is in ``OUTDIR/_build/html``.

This is book tooling, not library code (see :mod:`tools`).
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path

import yaml

from tools import jupyter_book

__all__ = ["INSTRUCTOR_NOTES", "build", "instructor_config", "instructor_toc", "prepare"]

#: The page only the instructor edition has, placed after the last assignment.
INSTRUCTOR_NOTES = "book/instructor_notes"
STUDENT_PREFIX = "book/student/"
_ASSIGNMENT = re.compile(r"^book/assignment_\d+_\w+$")
DEFAULT_OUTDIR = Path("_build/instructor")


def _entry_lists(node):
    """Every list of toc entries (``chapters``, ``sections``) in a toc, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("parts", "chapters", "sections") and isinstance(value, list):
                if key != "parts":
                    yield value
                for item in value:
                    yield from _entry_lists(item)
    elif isinstance(node, list):
        for item in node:
            yield from _entry_lists(item)


def instructor_toc(toc: dict) -> dict:
    """The instructor table of contents derived from the public one (a new dict).

    Every ``book/student/X`` becomes ``book/X``; :data:`INSTRUCTOR_NOTES` follows the last
    assignment, unless the toc lists it already.

    Examples
    --------
    >>> toc = {"root": "book/index", "parts": [
    ...     {"caption": "Assignments", "chapters": [
    ...         {"file": "book/assignments"},
    ...         {"file": "book/student/assignment_1_ngram_metrics"},
    ...         {"file": "book/student/assignment_2_alignment_metrics"}]},
    ...     {"caption": "Back matter", "chapters": [{"file": "book/bibliography"}]}]}
    >>> for entry in instructor_toc(toc)["parts"][0]["chapters"]:
    ...     print(entry["file"])
    book/assignments
    book/assignment_1_ngram_metrics
    book/assignment_2_alignment_metrics
    book/instructor_notes
    >>> toc["parts"][0]["chapters"][1]["file"]  # the argument is not changed
    'book/student/assignment_1_ngram_metrics'
    """
    toc = copy.deepcopy(toc)
    last = None
    for entries in _entry_lists(toc):
        for i, entry in enumerate(entries):
            name = entry.get("file") if isinstance(entry, dict) else None
            if not isinstance(name, str):
                continue
            if name.startswith(STUDENT_PREFIX):
                name = entry["file"] = "book/" + name[len(STUDENT_PREFIX):]
            if _ASSIGNMENT.match(name):
                last = (entries, entry)
    listed = any(isinstance(e, dict) and e.get("file") == INSTRUCTOR_NOTES
                 for entries in _entry_lists(toc) for e in entries)
    if not listed:
        if last is None:
            raise ValueError("the table of contents lists no assignment (book/assignment_N_* or "
                             "book/student/assignment_N_*)")
        entries, entry = last
        entries.insert(entries.index(entry) + 1, {"file": INSTRUCTOR_NOTES})
    return toc


def instructor_config(config: dict, source: Path) -> dict:
    """The instructor build's configuration derived from the book's (a new dict).

    Examples
    --------
    >>> c = instructor_config({"title": "T", "execute": {"execute_notebooks": "cache"},
    ...                        "sphinx": {"local_extensions": {"ext": "book/_ext"}}}, Path("/b"))
    >>> c["title"], c["execute"]["cache"], c["sphinx"]["local_extensions"]["ext"]
    ('T (instructor edition)', '/b/_build/.jupyter_cache', '/b/book/_ext')
    """
    source = Path(source).resolve()
    config = copy.deepcopy(config)
    config["title"] = f"{config.get('title', 'Book')} (instructor edition)"
    execute = config.setdefault("execute", {})
    # `make book` executes into _build/.jupyter_cache (next to its _build/html); share it.
    cache = Path(execute.get("cache") or "_build/.jupyter_cache")
    execute["cache"] = str(cache if cache.is_absolute() else source / cache)
    jupyter_book.absolute_extensions(config, source)
    return config


def prepare(source: Path = Path("."), outdir: Path = DEFAULT_OUTDIR, *,
            execute: bool = True) -> tuple[Path, Path]:
    """Write ``OUTDIR/_toc.yml`` and ``OUTDIR/_config.yml`` for the instructor build.

    ``execute=False`` turns execution off (a quick check of the structure; the pages then have
    no outputs). Returns the two paths.
    """
    source = Path(source).resolve()
    outdir = (source / outdir).resolve()
    if not (source / "_toc.yml").is_file() or not (source / "_config.yml").is_file():
        raise FileNotFoundError(f"{source} is not the book's root: _toc.yml or _config.yml missing")
    if outdir == source or source / "book" in (outdir, *outdir.parents):
        raise ValueError(f"OUTDIR {outdir} must not be the book or lie inside book/")
    toc = instructor_toc(yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8")))
    config = instructor_config(
        yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8")), source)
    if not execute:
        config["execute"]["execute_notebooks"] = "off"
    missing = [stem for entries in _entry_lists(toc) for e in entries
               if isinstance(e, dict) and isinstance(e.get("file"), str)
               for stem in [e["file"]]
               if not any((source / f"{stem}{ext}").is_file() for ext in (".md", ".ipynb"))]
    if missing:
        raise FileNotFoundError("pages of the instructor edition not found: " + ", ".join(missing))
    outdir.mkdir(parents=True, exist_ok=True)
    header = "# Generated by tools.instructor_edition from the book's {}: do not edit.\n"
    toc_path, config_path = outdir / "_toc.yml", outdir / "_config.yml"
    toc_path.write_text(header.format("_toc.yml") + yaml.safe_dump(toc, sort_keys=False),
                        encoding="utf-8")
    config_path.write_text(header.format("_config.yml") + yaml.safe_dump(config, sort_keys=False),
                           encoding="utf-8")
    return toc_path, config_path


def build(source: Path = Path("."), outdir: Path = DEFAULT_OUTDIR, *, strict: bool = True,
          execute: bool = True) -> Path:
    """Prepare and run the instructor build; returns the HTML folder.

    Raises ``RuntimeError`` when the build fails or a page of the edition is missing from it.
    """
    source = Path(source).resolve()
    outdir = (source / outdir).resolve()
    toc_path, config_path = prepare(source, outdir, execute=execute)
    jupyter_book.build(source, "--toc", str(toc_path), "--config", str(config_path),
                       "--path-output", str(outdir), strict=strict,
                       what="the instructor edition", capture=False)
    html = outdir / "_build" / "html"
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    pages = [e["file"] for entries in _entry_lists(toc) for e in entries
             if isinstance(e, dict) and isinstance(e.get("file"), str)]
    absent = [p for p in pages if not (html / f"{p}.html").is_file()]
    if absent:
        raise RuntimeError("pages missing from the instructor edition: " + ", ".join(absent))
    return html


def main(argv=None) -> int:
    """Command line: ``python -m tools.instructor_edition [OUTDIR]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.instructor_edition",
        description="Build the instructor edition of the markeval book (assignments with model "
                    "solutions, instructor notes) into OUTDIR/_build/html.")
    parser.add_argument("outdir", type=Path, nargs="?", default=DEFAULT_OUTDIR,
                        help=f"where to write the toc, the config and the build "
                             f"(default: {DEFAULT_OUTDIR})")
    parser.add_argument("--source", type=Path, default=Path.cwd(),
                        help="the book's root (with _config.yml and _toc.yml); default: .")
    parser.add_argument("--no-build", action="store_true",
                        help="write OUTDIR/_toc.yml and OUTDIR/_config.yml only")
    parser.add_argument("--no-execute", action="store_true",
                        help="build without executing (pages without outputs; a quick check)")
    parser.add_argument("--no-strict", action="store_true",
                        help="do not turn Sphinx warnings into errors (no -W)")
    args = parser.parse_args(argv)
    try:
        if args.no_build:
            toc_path, config_path = prepare(args.source, args.outdir,
                                            execute=not args.no_execute)
            print(f"instructor toc and config: {toc_path}, {config_path}")
            return 0
        html = build(args.source, args.outdir, strict=not args.no_strict,
                     execute=not args.no_execute)
        print(f"instructor edition built: {html / 'index.html'}")
    except (FileNotFoundError, ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
