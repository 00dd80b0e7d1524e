"""The course kit: an nbgrader course folder written from the book's instructor notebooks.

``python -m tools.course [OUTDIR]`` (``make course``; OUTDIR defaults to ``_build/course``)
writes::

    OUTDIR/nbgrader_config.py
    OUTDIR/source/assignment_N_slug/assignment_N_slug.ipynb     (one per assignment)

Each source notebook is the executed instructor notebook ``book/assignment_N_slug.ipynb``,
outputs cleared, with nbgrader's cell metadata (schema 3) on every cell
(:func:`course_notebook`):

* an **answer cell** (code holding ``### BEGIN SOLUTION`` … ``### END SOLUTION``) is an
  autograded answer: ``solution``, not locked, grade id ``answer-qN`` (its question's heading);
* a **check cell** (``A.check("qN", answer)``) is an autograder test worth the points of
  ``qN`` in the assignment's ``points_table()``, locked, grade id ``qN``. Its visible check is
  the student's feedback; its hidden test (removed from the released notebook) grades:
  ``verify(N, "qN", answer, seed=S)`` (:func:`markeval.exercises.autograde.verify`) runs the
  answer the assignment names on hidden cases drawn with the course's grading seed ``S``,
  under the question's module rule and time limit, compares it with the reference in that
  cell, and fails the cell unless it passed. Nothing the notebook's checker ``A`` recorded is
  read, so nothing a student does to it changes a grade;
* a **written answer** (the Markdown cell ``**Answer to QNb.** *Your answer here.*``) is a
  manually graded answer worth its points, grade id ``qNb``; the model answer of the
  ``{solution}`` block that follows it moves inside it, between solution markers, so that the
  formgrader shows it to the grader and nbgrader removes it from the release;
* **every other cell** (the questions, the setup, the data, the summary) is locked.

Links to the book's pages point at the published book (``--book-url``). The grading seed is
``--seed``, or drawn at random when the course is written; it lives only in the source
notebooks' hidden tests (keep the course folder from students).

``nbgrader_config.py`` names the course, limits every cell to :data:`CELL_TIMEOUT_S` seconds
(nbgrader then interrupts the kernel, the cell scores 0 and the next cell runs), and makes
``nbgrader generate_assignment`` write the same starter code as the book's student notebooks
(:mod:`markeval.exercises.starter`): ``raise NotImplementedError()`` inside functions and a
comment at the top level, so that *Run all* in a released notebook reaches the score. It also
keeps nbgrader's checksum warnings meaningful: nbgrader stores a check cell's checksum *before*
it removes the hidden tests (jupyter/nbgrader#1961), so every check cell of every submission
would "have changed"; a locked cell that is exactly as released gets its hidden tests back
before nbgrader compares, so that only a real edit is reported (and overwritten). nbgrader
itself (a test-only dependency of the book, ``requirements.txt``) and markeval must be
installed where the course is graded.

This is book tooling, not library code (see :mod:`tools`).
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
from pathlib import Path

import nbformat
import yaml

from markeval.exercises.assignments import assignment
from markeval.exercises.starter import BEGIN, END
from tools.student_edition import ANSWER_PLACEHOLDER, assignment_sources, strip_solution_blocks

__all__ = ["COURSE_ID", "DEFAULT_OUTDIR", "book_url", "course_notebook", "nbgrader_config",
           "write_course"]

COURSE_ID = "markeval"
DEFAULT_OUTDIR = Path("_build/course")
#: The autograder's limit for one cell, in seconds (the course page states it).
CELL_TIMEOUT_S = 60
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"

_CHECK = re.compile(r"""\bA\.check\(\s*["'](q\d+[a-z]?)["']\s*,\s*(\w+)""")
_HEADING = re.compile(r"^#{1,4} +(Q\d+[a-z]?)\b", re.M)
_ANSWER = re.compile(r"^\*\*Answer to (Q\d+[a-z]?)\.\*\*")
_MD_LINK = re.compile(r"\]\((?P<target>[\w./-]+)\.md(?P<anchor>#[^)\s]*)?\)")
_SOLUTION_FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})\{solution\}")

_CONFIG = '''\
# The markeval course, for nbgrader. Written by `python -m tools.course` (make course) from the
# book's instructor notebooks: edit the book and write it again rather than editing here.
from nbgrader.api import MissingEntry
from nbgrader.converters import Autograde, GenerateAssignment
from nbgrader.preprocessors import ClearSolutions, OverwriteCells

c = get_config()  # noqa: F821 - provided by nbgrader's configuration loader
c.CourseDirectory.course_id = {course_id!r}
# The limit for one cell: past it nbgrader interrupts the kernel, and the cell scores 0.
c.Execute.timeout = {timeout}
c.ClearSolutions.text_stub = {text_stub!r}


class StarterCode(ClearSolutions):
    """Starter code as in the book's student notebooks: raise NotImplementedError() inside a
    function, a comment at the top level of a cell (so that Run all reaches the score)."""

    def _replace_solution_region(self, cell, language):
        if cell.cell_type != "code":
            return super()._replace_solution_region(cell, language)
        # Imported here: every nbgrader command reads this file, only this one needs markeval.
        from markeval.exercises.starter import strip_solution_code

        cell.source, count = strip_solution_code(cell.source)
        return count > 0


c.GenerateAssignment.preprocessors = [
    StarterCode if step is ClearSolutions else step
    for step in GenerateAssignment.class_traits()["preprocessors"].default()]


class RestoreHiddenTests(OverwriteCells):
    """nbgrader stores a check cell's checksum before it removes the hidden tests
    (jupyter/nbgrader#1961), so every check cell of every submission "has changed". A locked
    cell exactly as released gets its hidden tests back first; an edited one is still
    reported, and overwritten, by OverwriteCells."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {{}}).get("grade_id")
        try:
            saved = grade_id and self.gradebook.find_source_cell(
                grade_id, self.notebook_id, self.assignment_id)
        except MissingEntry:
            saved = None  # reported by OverwriteCells
        if saved and saved.locked and {hidden_begin!r} in saved.source:
            released = saved.source.split("\\n" + {hidden_begin!r})[0]
            if released == cell.source:
                cell.source = saved.source
        return super().preprocess_cell(cell, resources, cell_index)


c.Autograde.sanitize_preprocessors = [
    RestoreHiddenTests if step is OverwriteCells else step
    for step in Autograde.class_traits()["sanitize_preprocessors"].default()]
'''


def book_url(config: dict) -> str:
    """The published book's URL from ``_config.yml``: GitHub Pages of ``repository.url``.

    Examples
    --------
    >>> book_url({"repository": {"url": "https://github.com/markeval/markeval"}})
    'https://markeval.github.io/markeval/'
    """
    url = config.get("repository", {}).get("url", "")
    match = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)/?", url)
    if not match:
        raise ValueError(f"repository.url in _config.yml is not a GitHub repository: {url!r}")
    return f"https://{match[1].lower()}.github.io/{match[2]}/"


def nbgrader_config(*, course_id: str = COURSE_ID, timeout: int = CELL_TIMEOUT_S) -> str:
    """The text of the course's ``nbgrader_config.py``."""
    return _CONFIG.format(course_id=course_id, timeout=int(timeout), text_stub=ANSWER_PLACEHOLDER,
                          hidden_begin=HIDDEN_BEGIN)


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


def _leading_solution(source: str) -> tuple[str, str] | None:
    """A Markdown cell that opens with a ``{solution}`` block: (its inside, options dropped;
    the text after it), or None."""
    lines = source.lstrip("\n").split("\n")
    match = _SOLUTION_FENCE.match(lines[0])
    if not match:
        return None
    fence = match[1]
    closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    end = next((i for i in range(1, len(lines)) if closing.match(lines[i])), None)
    if end is None:
        raise ValueError(f"unclosed {{solution}} block: {lines[0]!r}")
    inside = lines[1:end]
    while inside and inside[0].startswith(":"):
        inside.pop(0)
    return "\n".join(inside).strip("\n"), "\n".join(lines[end + 1:]).strip("\n")


def _relink(text: str, base: str) -> str:
    return _MD_LINK.sub(lambda m: f"]({base}book/{Path(m['target']).name}.html"
                                  f"{m['anchor'] or ''})", text)


def course_notebook(path: Path, *, base_url: str, seed: int) -> nbformat.NotebookNode:
    """The nbgrader source notebook of the executed instructor notebook ``path``.

    ``base_url`` is the published book, for the links to its pages; ``seed`` the grading seed
    of the hidden tests. See the module notes for what each cell becomes.

    Raises
    ------
    ValueError
        When a check or an answer cell names a question the assignment does not have, or an
        answer by another name than the assignment's, when a question has no check or answer
        cell, or when a cell checks two questions.
    """
    path = Path(path)
    number = int(path.stem.split("_")[1])
    tasks = {t.key: t for t in assignment(number).tasks}
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("jupytext", None)
    nb.metadata["markeval"] = {"edition": "nbgrader source", "source": f"book/{path.stem}.md",
                               "generated_by": "python -m tools.course"}
    cells, graded, heading = [], [], "q0"
    used_ids: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
        if cell.cell_type == "markdown":
            solution = _leading_solution(cell.source)
            if solution is not None and cells and _ANSWER.match(cells[-1].source):
                answer = cells[-1]  # the model answer of the written question just before
                answer.source = f"{answer.source.split(ANSWER_PLACEHOLDER)[0].rstrip()}\n\n" \
                                f"{BEGIN}\n{solution[0]}\n{END}"
                if not solution[1].strip():
                    continue
                cell.source = solution[1]
            cell.source = _relink(strip_solution_blocks(cell.source, note=None)[0], base_url)
            headings = _HEADING.findall(cell.source)
            heading = headings[-1].lower() if headings else heading
        match_check = _CHECK.findall(cell.source) if cell.cell_type == "code" else []
        match_answer = _ANSWER.match(cell.source) if cell.cell_type == "markdown" else None
        if len(match_check) > 1:
            raise ValueError(f"{path.name}: one cell checks {len(match_check)} questions")
        if match_check:
            key, name = match_check[0]
            if key not in tasks or not tasks[key].auto:
                raise ValueError(f"{path.name}: A.check({key!r}) is not an auto-checked question")
            if name != tasks[key].answer:
                raise ValueError(f"{path.name}: A.check({key!r}, {name}) checks another name "
                                 f"than the assignment's answer, {tasks[key].answer}")
            cell.source = (f"{cell.source.rstrip()}\n{HIDDEN_BEGIN}\n"
                           "from markeval.exercises.autograde import verify\n"
                           f"verify({number}, {key!r}, {name}, seed={seed})\n{HIDDEN_END}")
            meta = _meta(key, grade=True, locked=True, points=tasks[key].points)
            graded.append(key)
        elif match_answer:
            key = match_answer[1].lower()
            if key not in tasks or tasks[key].auto:
                raise ValueError(f"{path.name}: {match_answer[0]} is not a written question")
            meta = _meta(key, solution=True, grade=True, points=tasks[key].points)
            graded.append(key)
        elif cell.cell_type == "code" and BEGIN in cell.source:
            grade_id = f"answer-{heading}"
            suffix = 2
            while grade_id in used_ids:
                grade_id, suffix = f"answer-{heading}-{suffix}", suffix + 1
            meta = _meta(grade_id, solution=True)
        else:
            meta = _meta(f"locked-{cell.get('id') or len(cells)}", locked=True)
        if meta["grade_id"] in used_ids:
            raise ValueError(f"{path.name}: two cells would have the grade id {meta['grade_id']}")
        used_ids.add(meta["grade_id"])
        cell.metadata["nbgrader"] = meta
        cells.append(cell)
    missing = sorted(set(tasks) - set(graded))
    if missing or len(graded) != len(set(graded)):
        raise ValueError(f"{path.name}: questions without exactly one check or answer cell: "
                         f"{missing or sorted(k for k in graded if graded.count(k) > 1)}")
    nb.cells = cells
    return nb


def write_course(source: Path = Path("."), outdir: Path = DEFAULT_OUTDIR, *,
                 base_url: str | None = None, seed: int | None = None) -> list[Path]:
    """Write the course folder (see the module notes) for the book in ``source``, its hidden
    tests drawing their cases with ``seed`` (default: a random one).

    Returns
    -------
    list of pathlib.Path
        The source notebooks written, one per assignment.
    """
    source, outdir = Path(source).resolve(), Path(outdir).resolve()
    if base_url is None:
        config = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8"))
        base_url = book_url(config)
    paths = assignment_sources(source)
    if not paths:
        raise FileNotFoundError(f"no paired book/assignment_*.md and .ipynb under {source}")
    seed = secrets.randbits(31) if seed is None else int(seed)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "nbgrader_config.py").write_text(nbgrader_config(), encoding="utf-8")
    written = []
    for path in paths:
        target = outdir / "source" / path.stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(course_notebook(path, base_url=base_url, seed=seed), target)
        written.append(target)
    return written


def main(argv=None) -> int:
    """Command line: ``python -m tools.course [OUTDIR] [--source .] [--book-url URL]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.course",
        description="Write an nbgrader course folder (nbgrader_config.py and source/) from the "
                    "book's instructor notebooks.")
    parser.add_argument("outdir", type=Path, nargs="?", default=DEFAULT_OUTDIR,
                        help=f"the course folder (default: {DEFAULT_OUTDIR})")
    parser.add_argument("--source", type=Path, default=Path.cwd(),
                        help="the book's root (with _config.yml); default: .")
    parser.add_argument("--book-url", default=None,
                        help="the published book, for links (default: GitHub Pages of "
                             "repository.url in _config.yml)")
    parser.add_argument("--seed", type=int, default=None,
                        help="the grading seed of the hidden tests (default: random)")
    args = parser.parse_args(argv)
    try:
        written = write_course(args.source, args.outdir, base_url=args.book_url, seed=args.seed)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"nbgrader course in {args.outdir}: " + ", ".join(p.parent.name for p in written))
    print(f"next: cd {args.outdir} && nbgrader generate_assignment {written[0].parent.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
