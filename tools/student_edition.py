"""Build the student edition of the book: solutions hidden, solution code stripped.

``python -m tools.student_edition OUTDIR`` (``make student``, from the repository root) copies
the book's sources into ``OUTDIR`` and builds them there with Jupyter Book, without executing
anything:

* every chapter is taken from its committed, executed ``.ipynb`` (so the pages keep their
  outputs and figures) instead of its paired ``.md``;
* the instructor notes (:data:`INSTRUCTOR_ONLY`) are left out;
* every ``{solution}`` directive block is replaced by a one-line note, in notebooks and in
  plain pages;
* in code cells, every region between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (the
  nbgrader markers) becomes ``raise NotImplementedError()`` at the marker's indentation; the
  outputs of such cells, and of the cells that call ``.check(`` in the same notebook, are
  cleared; a cell whose stripped region is at the top level (so that the cell now raises) gets
  the ``raises-exception`` tag;
* the configuration turns execution off and drops the Colab launch buttons (they would open
  the instructor notebooks of the repository) unless ``--repository-url`` names a repository
  that holds the student edition.

After the build the HTML is scanned; any marker or solution block that survived is an error.

This is book tooling, not library code: it needs nbformat, PyYAML and jupyter-book, pinned in
``requirements.txt`` (the environment that builds the book), which ``markeval`` does not
declare.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

__all__ = ["BEGIN", "END", "build", "prepare", "scan_html", "strip_solution_blocks",
           "strip_solution_code"]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
HIDDEN_NOTE = "*The solution is not included in the student edition.*"
#: Pages left out of the student edition (and its table of contents).
INSTRUCTOR_ONLY = ("book/instructor_notes",)

_FENCE_START = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})\{solution\}.*$")


def strip_solution_blocks(text: str) -> tuple[str, int]:
    """Replace every ``{solution}`` directive block of MyST text by :data:`HIDDEN_NOTE`.

    A block opens with a fence of backticks, tildes or colons followed by ``{solution}`` and
    closes at the next line that is the same fence character repeated at least as often.

    Returns
    -------
    (text, count) : tuple of str and int

    Examples
    --------
    >>> src = "a\\n````{solution} ex-1\\n:class: dropdown\\n\\nsecret\\n````\\nb\\n"
    >>> out, n = strip_solution_blocks(src)
    >>> n, "secret" in out, out.splitlines()[0], out.splitlines()[-1]
    (1, False, 'a', 'b')
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
        out.append(match["indent"] + HIDDEN_NOTE)
        count += 1
        i = j + 1
    return "\n".join(out), count


def strip_solution_code(source: str) -> tuple[str, int, bool]:
    """Replace every ``### BEGIN SOLUTION`` … ``### END SOLUTION`` region of code.

    The region, markers included, becomes ``raise NotImplementedError()`` at the indentation of
    the ``BEGIN`` marker (what nbgrader's ``ClearSolutions`` writes).

    Returns
    -------
    (source, count, top_level) : tuple
        The new code, the number of regions, and whether one of them was at indentation 0
        (the cell itself now raises).

    Examples
    --------
    >>> code = "def f(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION\\n"
    >>> print(strip_solution_code(code)[0])
    def f(x):
        raise NotImplementedError()
    <BLANKLINE>
    """
    lines = source.split("\n")
    out, count, top_level, i = [], 0, False, 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped == END:
            raise ValueError(f"{END!r} without {BEGIN!r} at line {i + 1}")
        if stripped != BEGIN:
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        j = i + 1
        while j < len(lines) and lines[j].strip() != END:
            if lines[j].strip() == BEGIN:
                raise ValueError(f"nested {BEGIN!r} at line {j + 1}")
            j += 1
        if j == len(lines):
            raise ValueError(f"{BEGIN!r} at line {i + 1} has no {END!r}")
        out.append(f"{indent}raise NotImplementedError()")
        count += 1
        top_level = top_level or indent == ""
        i = j + 1
    return "\n".join(out), count, top_level


_MD_LINK = re.compile(r"\]\((?P<target>[\w./-]+)\.md(?P<anchor>#[^)\s]*)?\)")


def _relink(text: str, here: Path) -> str:
    """Point Markdown links at paired pages to their ``.ipynb`` (the page the edition builds)."""
    def repl(match):
        target = here / f"{match['target']}.md"
        if target.is_file() and _is_paired(target):
            return f"]({match['target']}.ipynb{match['anchor'] or ''})"
        return match.group(0)

    return _MD_LINK.sub(repl, text)


def _student_notebook(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    has_markers = any(c.cell_type == "code" and BEGIN in c.source for c in nb.cells)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source, _ = strip_solution_blocks(_relink(cell.source, path.parent))
            continue
        if cell.cell_type != "code":
            continue
        cell.source, count, top_level = strip_solution_code(cell.source)
        if count or (has_markers and ".check(" in cell.source):
            cell.outputs = []
            cell.execution_count = None
        if top_level:
            tags = cell.metadata.setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
    return nb


def _is_paired(md: Path) -> bool:
    head = md.read_text(encoding="utf-8")[:600]
    return "jupytext" in head and md.with_suffix(".ipynb").is_file()


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
    toc = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))
    (outdir / "_toc.yml").write_text(
        "# Generated by tools.student_edition: do not edit.\n"
        + yaml.safe_dump(_student_toc(toc), sort_keys=False), encoding="utf-8")
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
        target = outdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.with_suffix("").as_posix() in INSTRUCTOR_ONLY:
            continue
        if path.suffix == ".md" and _is_paired(path):
            continue  # its executed .ipynb is the page
        if path.suffix == ".ipynb":
            if not path.with_suffix(".md").is_file():
                continue  # not a book page
            nb = _student_notebook(path)
            counts["notebooks"] += 1
            counts["solution_regions"] += sum(
                strip_solution_code(c.source)[1] for c in nbformat.read(path, 4).cells
                if c.cell_type == "code")
            counts["solution_blocks"] += sum(
                strip_solution_blocks(c.source)[1] for c in nbformat.read(path, 4).cells
                if c.cell_type == "markdown")
            nbformat.write(nb, target)
        elif path.suffix == ".md":
            text, n = strip_solution_blocks(_relink(path.read_text(encoding="utf-8"),
                                                    path.parent))
            counts["pages"] += 1
            counts["solution_blocks"] += n
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copy2(path, target)
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
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book if jupyter_book.exists() else "jupyter-book"), "build",
               str(outdir), "-n", "--keep-going"] + (["-W"] if strict else [])
    proc = subprocess.run(command, cwd=outdir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("jupyter-book build of the student edition failed:\n"
                           + (proc.stdout + proc.stderr)[-6000:])
    html = outdir / "_build" / "html"
    problems = scan_html(html)
    if problems:
        raise RuntimeError("the student edition leaks solutions:\n" + "\n".join(problems))
    return html


def main(argv=None) -> int:
    """Command line: ``python -m tools.student_edition OUTDIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.student_edition",
        description="Build the student edition of the markeval book (solutions hidden, "
                    "solution code stripped) into OUTDIR/_build/html.")
    parser.add_argument("outdir", type=Path, help="where to write the sources and the build")
    parser.add_argument("--source", type=Path, default=Path.cwd(),
                        help="the book's root (with _config.yml and _toc.yml); default: .")
    parser.add_argument("--repository-url", default=None,
                        help="repository holding the student edition (keeps launch buttons)")
    parser.add_argument("--no-build", action="store_true", help="write the sources only")
    parser.add_argument("--no-strict", action="store_true",
                        help="do not turn Sphinx warnings into errors (no -W)")
    args = parser.parse_args(argv)
    try:
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
