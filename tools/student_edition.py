"""The student edition: the assignments' student notebooks, and the whole book for students.

Two commands, run from the repository root.

``python -m tools.student_edition --notebooks`` writes the committed **student notebooks**,
``book/student/assignment_N_*.ipynb`` (:data:`STUDENT_DIR`), one per instructor assignment
``book/assignment_N_*.md``, from its executed ``.ipynb`` pair (:func:`student_notebook`):

* every region between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` becomes starter code
  (:func:`markeval.exercises.starter.strip_solution_code`): ``raise NotImplementedError()``
  inside a function, a ``# YOUR CODE HERE`` comment at the top level of a cell, so that no
  cell raises and *Run all* reaches the score;
* the outputs of those cells, and of the cells that call ``.check(`` or ``.summary(`` (verdicts
  and instructor scores), are cleared; no cell keeps an execution count;
* every ``{solution}`` block (the model answers of the written questions) is removed; the
  answer cells (``*Your answer here.*``) of the instructor source stay;
* Markdown links to other pages are rewritten for the notebook's folder;
* the ``jupytext`` pairing is dropped from the metadata (the student notebook has no ``.md``).

The public book lists these notebooks in its Assignments part, unexecuted, and their Colab
buttons open them. ``--check`` reports stale notebooks instead of writing them
(``tests/test_student_edition.py`` requires them in sync with the instructor notebooks).

``python -m tools.student_edition OUTDIR`` (``make student``) copies the book's sources into
``OUTDIR`` and builds them there with Jupyter Book, without executing anything:

* every chapter is taken from its committed, executed ``.ipynb`` (so the pages keep their
  outputs and figures) instead of its paired ``.md``; a page listed in the table of contents
  as a notebook without a ``.md`` (the student notebooks) is taken as it is, and pages not in
  the table of contents are not copied;
* the instructor notes (:data:`INSTRUCTOR_ONLY`) are left out;
* every ``{solution}`` directive block is replaced by a one-line note, in notebooks and in
  plain pages;
* in code cells, every region between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (the
  nbgrader markers) becomes starter code, as in the student notebooks; the outputs of such
  cells, and of the cells that call ``.check(`` in the same notebook, are cleared;
* the configuration turns execution off and drops the Colab launch buttons (they would open
  the instructor notebooks of the repository) unless ``--repository-url`` names a repository
  that holds the student edition.

After the build the HTML is scanned; any marker or solution block that survived is an error.
(The instructor edition, with the model solutions, is :mod:`tools.instructor_edition`.)

This is book tooling, not library code: it needs nbformat, PyYAML and jupyter-book, pinned in
``requirements.txt`` (the environment that builds the book), which ``markeval`` does not
declare.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import yaml

from markeval.exercises.starter import BEGIN, END, strip_solution_code
from tools import jupyter_book

__all__ = ["ANSWER_PLACEHOLDER", "BEGIN", "END", "STUDENT_DIR", "assignment_sources", "build",
           "prepare", "scan_html", "strip_solution_blocks", "strip_solution_code",
           "student_notebook", "student_notebook_text", "write_student_notebooks"]

HIDDEN_NOTE = "*The solution is not included in the student edition.*"
#: Pages left out of the student edition (and its table of contents).
INSTRUCTOR_ONLY = ("book/instructor_notes",)
#: Where the committed student notebooks live, relative to the book's root.
STUDENT_DIR = "book/student"
#: The text of an answer cell of a written question (in the instructor source and the student
#: notebook alike).
ANSWER_PLACEHOLDER = "*Your answer here.*"
#: Calls whose outputs are cleared in a notebook with solution markers: verdicts and scores.
CHECK_CALLS = (".check(", ".summary(")

_FENCE_START = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})\{solution\}.*$")


def strip_solution_blocks(text: str, note: str | None = HIDDEN_NOTE) -> tuple[str, int]:
    """Replace every ``{solution}`` directive block of MyST text by ``note``.

    A block opens with a fence of backticks, tildes or colons followed by ``{solution}`` and
    closes at the next line that is the same fence character repeated at least as often. With
    ``note=None`` the block is removed, with one blank line that separated it from the text
    before.

    Returns
    -------
    (text, count) : tuple of str and int

    Examples
    --------
    >>> src = "a\\n````{solution} ex-1\\n:class: dropdown\\n\\nsecret\\n````\\nb\\n"
    >>> out, n = strip_solution_blocks(src)
    >>> n, "secret" in out, out.splitlines()[0], out.splitlines()[-1]
    (1, False, 'a', 'b')
    >>> strip_solution_blocks("a\\n\\n:::{solution} x\\nsecret\\n:::\\n\\nb", note=None)
    ('a\\n\\nb', 1)
    """
    lines = text.split("\n")
    out, count, i = [], 0, 0
    while i < len(lines):
        match = _FENCE_START.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        fence = match["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        if j == len(lines):
            raise ValueError(f"unclosed {{solution}} block starting at line {i + 1}: "
                             f"{lines[i]!r}")
        if note is not None:
            out.append(match["indent"] + note)
        elif out and not out[-1].strip() and j + 1 < len(lines) and not lines[j + 1].strip():
            out.pop()  # one blank line between the text before and after is enough
        count += 1
        i = j + 1
    return "\n".join(out), count


_MD_LINK = re.compile(r"\]\((?P<target>[\w./-]+)\.md(?P<anchor>#[^)\s]*)?\)")


def _relink(text: str, here: Path) -> str:
    """Point Markdown links at paired pages to their ``.ipynb`` (the page the edition builds)."""
    def repl(match):
        target = here / f"{match['target']}.md"
        if target.is_file() and _is_paired(target):
            return f"]({match['target']}.ipynb{match['anchor'] or ''})"
        return match.group(0)

    return _MD_LINK.sub(repl, text)


def _move_links(text: str, here: Path, there: Path) -> str:
    """Rewrite Markdown links to ``.md`` pages of folder ``here`` for a page in folder ``there``.

    Examples
    --------
    >>> _move_links("see [BLEU](03_bleu.md#bp)", Path("/b"), Path("/b/student"))
    'see [BLEU](../03_bleu.md#bp)'
    """
    def repl(match):
        target = os.path.relpath(here / f"{match['target']}.md", there)
        return f"]({Path(target).as_posix()}{match['anchor'] or ''})"

    return _MD_LINK.sub(repl, text)


def _strip_notebook(nb: nbformat.NotebookNode, *, note: str | None, clear_checks: bool,
                    clear_counts: bool = False) -> tuple[int, int]:
    """Strip solutions from ``nb`` in place (see the module docstring).

    Returns
    -------
    (blocks, regions) : tuple of int
        The ``{solution}`` blocks and solution code regions removed.
    """
    blocks = regions = 0
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            source, n = strip_solution_blocks(cell.source, note=note)
            blocks += n
            if n and note is None:
                source = source.strip("\n")
                if not source.strip():
                    continue  # the cell held only the solution block
            cell.source = source
        elif cell.cell_type == "code":
            cell.source, count = strip_solution_code(cell.source)
            regions += count
            if count or (clear_checks and any(call in cell.source for call in CHECK_CALLS)):
                cell.outputs = []
                cell.execution_count = None
            if clear_counts:
                cell.execution_count = None
        cells.append(cell)
    nb.cells = cells
    return blocks, regions


def _has_markers(nb: nbformat.NotebookNode) -> bool:
    return any(c.cell_type == "code" and BEGIN in c.source for c in nb.cells)


def _student_notebook(path: Path) -> nbformat.NotebookNode:
    """A page of the student edition (``make student``): solutions replaced by a note."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _relink(cell.source, path.parent)
    _strip_notebook(nb, note=HIDDEN_NOTE, clear_checks=_has_markers(nb))
    return nb


def student_notebook(path: Path, *, folder: Path | None = None) -> nbformat.NotebookNode:
    """The student notebook of the executed instructor notebook ``path``, for ``folder``.

    ``folder`` is where the student notebook will live (default: :data:`STUDENT_DIR` of the
    book that holds ``path``); Markdown links to pages are rewritten for it. What is stripped
    and cleared is described in the module docstring. The instructor notebook is not changed.
    """
    path = Path(path).resolve()
    folder = Path(folder).resolve() if folder else path.parents[1] / STUDENT_DIR
    nb = nbformat.read(path, as_version=4)
    if not _has_markers(nb):
        raise ValueError(f"{path.name} has no {BEGIN!r} region: not an instructor notebook")
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _move_links(cell.source, path.parent, folder)
    _strip_notebook(nb, note=None, clear_checks=True, clear_counts=True)
    nb.metadata.pop("jupytext", None)
    nb.metadata["markeval"] = {
        "edition": "student",
        "source": f"book/{path.stem}.md",
        "generated_by": "python -m tools.student_edition --notebooks",
    }
    return nb


def student_notebook_text(path: Path, *, folder: Path | None = None) -> str:
    """:func:`student_notebook` as the exact text written to the committed file."""
    return nbformat.writes(student_notebook(path, folder=folder)) + "\n"


def assignment_sources(source: Path) -> list[Path]:
    """The instructor assignment notebooks of the book in ``source``: ``book/assignment_*.ipynb``
    whose ``.md`` pair exists."""
    book = Path(source) / "book"
    return [p for p in sorted(book.glob("assignment_*.ipynb"))
            if p.with_suffix(".md").is_file() and _is_paired(p.with_suffix(".md"))]


def write_student_notebooks(source: Path = Path("."), *, check: bool = False) -> list[str]:
    """Write (or, with ``check``, only compare) the student notebooks of the book in ``source``.

    Student notebooks in :data:`STUDENT_DIR` without an instructor assignment are removed
    (reported as stale with ``check``).

    Returns
    -------
    list of str
        The student notebooks (paths relative to ``source``) that were out of date: written
        (``check=False``) or to be written (``check=True``).
    """
    source = Path(source).resolve()
    folder = source / STUDENT_DIR
    stale = []
    expected = {}
    for path in assignment_sources(source):
        expected[folder / path.name] = student_notebook_text(path, folder=folder)
    if not expected:
        raise FileNotFoundError(f"no paired book/assignment_*.md and .ipynb under {source}")
    for target, text in expected.items():
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            stale.append(target.relative_to(source).as_posix())
            if not check:
                folder.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    for extra in sorted(folder.glob("assignment_*.ipynb")) if folder.is_dir() else []:
        if extra not in expected:
            stale.append(extra.relative_to(source).as_posix())
            if not check:
                extra.unlink()
    return stale


def _is_paired(md: Path) -> bool:
    head = md.read_text(encoding="utf-8")[:600]
    return "jupytext" in head and md.with_suffix(".ipynb").is_file()


def _toc_stems(toc) -> set[str]:
    """Every ``file`` of a table of contents (and its root)."""
    stems = set()
    if isinstance(toc, dict):
        for key, value in toc.items():
            if key in ("file", "root") and isinstance(value, str):
                stems.add(value)
            else:
                stems |= _toc_stems(value)
    elif isinstance(toc, list):
        for value in toc:
            stems |= _toc_stems(value)
    return stems


def _student_toc(toc):
    """The table of contents without the :data:`INSTRUCTOR_ONLY` pages."""
    if isinstance(toc, dict):
        out = {}
        for key, value in toc.items():
            if isinstance(value, list):
                value = [_student_toc(v) for v in value
                         if not (isinstance(v, dict) and v.get("file") in INSTRUCTOR_ONLY)]
            out[key] = value
        return out
    return toc


def _student_config(config: dict, repository_url: str | None) -> dict:
    config = dict(config)
    config["title"] = f"{config.get('title', 'Book')} (student edition)"
    # Chapters come from their executed .ipynb; nothing is executed again.
    config["exclude_patterns"] = ["_build", ".venv"]
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    if repository_url:
        config["repository"] = {**config.get("repository", {}), "url": repository_url}
    else:  # the repository's notebooks contain the solutions: no buttons that open them
        config.pop("launch_buttons", None)
        html = dict(config.get("html", {}))
        html["use_repository_button"] = False
        config["html"] = html
    return config


def prepare(source: Path, outdir: Path, *, repository_url: str | None = None) -> dict:
    """Write the student sources of the book in ``source`` into ``outdir`` (no build).

    Only the pages listed in the (student) table of contents are written.

    Returns
    -------
    dict
        Counts: ``notebooks``, ``pages``, ``solution_blocks`` and ``solution_regions``.
    """
    source, outdir = Path(source).resolve(), Path(outdir).resolve()
    if not (source / "_toc.yml").is_file() or not (source / "_config.yml").is_file():
        raise FileNotFoundError(f"{source} is not the book's root: _toc.yml or _config.yml missing")
    if outdir == source or source in outdir.parents and outdir.parts[len(source.parts)] == "book":
        raise ValueError(f"OUTDIR {outdir} must not be the book or lie inside book/")
    if (outdir / "book").exists():
        shutil.rmtree(outdir / "book")
    outdir.mkdir(parents=True, exist_ok=True)
    toc = _student_toc(yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8")))
    pages = _toc_stems(toc)
    (outdir / "_toc.yml").write_text(
        "# Generated by tools.student_edition: do not edit.\n"
        + yaml.safe_dump(toc, sort_keys=False), encoding="utf-8")
    config = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8"))
    (outdir / "_config.yml").write_text(
        "# Generated by tools.student_edition: do not edit.\n"
        + yaml.safe_dump(_student_config(config, repository_url), sort_keys=False),
        encoding="utf-8")
    counts = {"notebooks": 0, "pages": 0, "solution_blocks": 0, "solution_regions": 0}
    book = source / "book"
    for path in sorted(book.rglob("*")):
        rel = path.relative_to(source)
        if "_build" in rel.parts or path.is_dir():
            continue
        stem = rel.with_suffix("").as_posix()
        if path.suffix in (".md", ".ipynb") and (stem not in pages or stem in INSTRUCTOR_ONLY):
            continue  # not a page of this edition
        target = outdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".md" and _is_paired(path):
            continue  # its executed .ipynb is the page
        if path.suffix == ".ipynb":
            original = nbformat.read(path, 4)
            counts["notebooks"] += 1
            counts["solution_regions"] += sum(
                strip_solution_code(c.source)[1] for c in original.cells if c.cell_type == "code")
            counts["solution_blocks"] += sum(
                strip_solution_blocks(c.source)[1] for c in original.cells
                if c.cell_type == "markdown")
            nbformat.write(_student_notebook(path), target)
        elif path.suffix == ".md":
            text, n = strip_solution_blocks(_relink(path.read_text(encoding="utf-8"),
                                                    path.parent))
            counts["pages"] += 1
            counts["solution_blocks"] += n
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copy2(path, target)
    missing = sorted(stem for stem in pages if not (outdir / f"{stem}.md").is_file()
                     and not (outdir / f"{stem}.ipynb").is_file())
    if missing:
        raise FileNotFoundError("pages of the table of contents not found: " + ", ".join(missing))
    leaks = _source_leaks(outdir / "book")
    if leaks:
        raise RuntimeError("solution text survived in the student sources: " + "; ".join(leaks))
    return counts


def _source_leaks(book: Path) -> list[str]:
    leaks = []
    for path in sorted(book.rglob("*")):
        if path.suffix not in (".md", ".ipynb"):
            continue
        text = path.read_text(encoding="utf-8")
        for needle in (BEGIN, END, "{solution}"):
            if needle in text:
                leaks.append(f"{path.name}: {needle}")
    return leaks


def scan_html(html_dir: Path) -> list[str]:
    """Problems in a built student edition: solution markers or solution blocks in any page.

    Returns
    -------
    list of str
        One entry per problem (empty when the edition is clean).
    """
    problems = []
    pages = sorted(Path(html_dir).rglob("*.html"))
    if not pages:
        return [f"no HTML pages under {html_dir}"]
    for page in pages:
        text = page.read_text(encoding="utf-8", errors="replace")
        for needle in ("BEGIN SOLUTION", "END SOLUTION", "{solution}"):
            if needle in text:
                problems.append(f"{page.name}: contains {needle!r}")
        if re.search(r'class="[^"]*\bsolution\b', text):
            problems.append(f"{page.name}: contains a rendered solution block")
    return problems


def build(outdir: Path, *, strict: bool = True) -> Path:
    """Run ``jupyter-book build`` on prepared sources (no execution) and scan the HTML.

    Returns the HTML directory; raises ``RuntimeError`` when the build fails or leaks.
    """
    outdir = Path(outdir).resolve()
    jupyter_book.build(outdir, strict=strict, what="the student edition")
    html = outdir / "_build" / "html"
    problems = scan_html(html)
    if problems:
        raise RuntimeError("the student edition leaks solutions:\n" + "\n".join(problems))
    return html


def main(argv=None) -> int:
    """Command line: ``python -m tools.student_edition OUTDIR`` or ``--notebooks [--check]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.student_edition",
        description="Write the student notebooks of the assignments (--notebooks), or build the "
                    "student edition of the markeval book (solutions hidden, solution code "
                    "stripped) into OUTDIR/_build/html.")
    parser.add_argument("outdir", type=Path, nargs="?",
                        help="where to write the sources and the build of the whole edition")
    parser.add_argument("--source", type=Path, default=Path.cwd(),
                        help="the book's root (with _config.yml and _toc.yml); default: .")
    parser.add_argument("--notebooks", action="store_true",
                        help=f"write the student notebooks into {STUDENT_DIR}/ from the "
                             "executed instructor notebooks")
    parser.add_argument("--check", action="store_true",
                        help="with --notebooks: write nothing, fail if a notebook is stale")
    parser.add_argument("--repository-url", default=None,
                        help="repository holding the student edition (keeps launch buttons)")
    parser.add_argument("--no-build", action="store_true", help="write the sources only")
    parser.add_argument("--no-strict", action="store_true",
                        help="do not turn Sphinx warnings into errors (no -W)")
    args = parser.parse_args(argv)
    if args.notebooks == (args.outdir is not None):
        parser.error("give either OUTDIR (the whole student edition) or --notebooks")
    if args.check and not args.notebooks:
        parser.error("--check goes with --notebooks")
    try:
        if args.notebooks:
            stale = write_student_notebooks(args.source, check=args.check)
            if args.check:
                for name in stale:
                    print(f"stale: {name}", file=sys.stderr)
                if stale:
                    print("run: python -m tools.student_edition --notebooks", file=sys.stderr)
                    return 1
                print(f"student notebooks in {STUDENT_DIR}/ are up to date")
            else:
                print(f"student notebooks in {STUDENT_DIR}/: "
                      + (", ".join(stale) + " written" if stale else "up to date"))
            return 0
        counts = prepare(args.source, args.outdir, repository_url=args.repository_url)
        print(f"student sources in {args.outdir}: {counts['notebooks']} notebooks, "
              f"{counts['pages']} pages; {counts['solution_blocks']} solution blocks and "
              f"{counts['solution_regions']} solution code regions removed")
        if not args.no_build:
            html = build(args.outdir, strict=not args.no_strict)
            print(f"student edition built: {html / 'index.html'}")
    except (FileNotFoundError, ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
