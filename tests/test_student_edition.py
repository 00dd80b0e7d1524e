"""The student edition: the committed student notebooks, the whole edition, the instructor toc.

The secrets are read from the instructor sources: every line of code between the nbgrader
markers and every line of a ``{solution}`` block, in the assignments and in the chapters. A line
that also appears outside those regions (a blank line, ``return best`` …) is not a secret. The
committed student notebooks (``book/student/``, the public book's assignment pages) must be
exactly what ``python -m tools.student_edition --notebooks`` writes from the executed instructor
notebooks, and hold no secret. The whole student edition is built once, without executing
anything, and every page's text is searched for every secret line.
"""

from __future__ import annotations

import html
import json
import re

import jupytext
import nbformat
import pytest
import yaml

import markeval
from conftest import REPO, needs_wmt17, toc_files
from markeval.exercises.assignments import assignment
from markeval.exercises.starter import FUNCTION_STUB, TOP_LEVEL_STUB
from tools import instructor_edition as ie
from tools import student_edition as se

ASSIGNMENTS = sorted((REPO / "book").glob("assignment_*.md"))
STUDENT = REPO / se.STUDENT_DIR
IDS = [md.stem for md in ASSIGNMENTS]


def _number(md) -> int:
    return int(md.stem.split("_")[1])


def _answer_cell(key: str) -> str:
    """The answer cell of written question ``key`` ("q8b" -> "**Answer to Q8b.** ...")."""
    return f"**Answer to Q{key[1:]}.** {se.ANSWER_PLACEHOLDER}"


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _regions(text: str) -> tuple[list[str], str]:
    """Lines inside solution regions/blocks of one MyST source, and the text outside them."""
    secret, public, inside = [], [], None
    for line in text.split("\n"):
        stripped = line.strip()
        if inside is None and stripped == se.BEGIN:
            inside = "code"
        elif inside == "code" and stripped == se.END:
            inside = None
        elif inside is None and se._FENCE_START.match(line):
            inside = re.compile(rf"^[ \t]*{re.escape(se._FENCE_START.match(line)['fence'])}[ \t]*$")
        elif isinstance(inside, re.Pattern) and inside.match(line):
            inside = None
        elif inside is not None:
            if not stripped.startswith(":class:"):
                secret.append(stripped)
        else:
            public.append(line)
    return secret, "\n".join(public)


def _secret_lines(paths=None) -> list[str]:
    paths = paths or sorted((REPO / "book").glob("*.md"))
    sources = [p.read_text(encoding="utf-8") for p in paths
               if p.stem not in {s.split("/")[-1] for s in se.INSTRUCTOR_ONLY}]
    secrets, public = [], []
    for text in sources:
        s, p = _regions(text)
        secrets += s
        public.append(_normalise(p))
    public_text = "\n".join(public)
    # Distinctive lines only: long enough to be specific, and not also written in the open.
    return sorted({_normalise(s) for s in secrets
                   if len(_normalise(s)) >= 24 and _normalise(s) not in public_text})


def _page_text(path) -> str:
    raw = path.read_text(encoding="utf-8")
    raw = re.sub(r"<script.*?</script>", " ", raw, flags=re.S)
    return _normalise(html.unescape(re.sub(r"<[^>]+>", "", raw)))


#: The whole student edition, built and searched (a minute or two on two cores): `make test-full`.
#: `make test` checks the committed student notebooks (the public book's assignment pages, which
#: tests/test_book_build.py searches for solutions in the built book) and the stripping itself.
EDITION = pytest.mark.slow


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    counts = se.prepare(REPO, out)
    # -W is the main build's business (tests/test_book_build.py); here we look for leaks.
    html_dir = se.build(out, strict=False)
    return out, html_dir, counts


def test_there_are_secrets_to_hide():
    secrets = _secret_lines()
    assert len(secrets) >= 60, f"only {len(secrets)} solution lines found: is the scan broken?"
    assert any("def " not in s and "return" in s for s in secrets)


def test_every_assignment_has_solution_regions_and_checks():
    for md in ASSIGNMENTS:
        text = md.read_text(encoding="utf-8")
        assert text.count(se.BEGIN) == text.count(se.END) >= 5, md.name
        assert "A.check(" in text and "A.summary()" in text, md.name


def _toc_page(md) -> str:
    """The page of assignment ``md`` in the public toc: its student notebook, or (before the
    toc lists those) the instructor page."""
    stems = toc_files()
    student = f"{se.STUDENT_DIR}/{md.stem}"
    return student if student in stems else f"book/{md.stem}"


@EDITION
def test_prepare_counts(edition):
    _, _, counts = edition
    # The instructor pages' regions, unless the toc lists the (already stripped) student pages.
    assert counts["solution_regions"] == sum(
        md.read_text(encoding="utf-8").count(se.BEGIN) for md in ASSIGNMENTS
        if _toc_page(md) == f"book/{md.stem}")
    assert counts["solution_blocks"] >= 35  # chapters' (and assignments') {solution} blocks
    assert counts["notebooks"] >= 22


@EDITION
def test_pages_are_built_and_instructor_notes_left_out(edition):
    _, html_dir, _ = edition
    for stem in toc_files():
        path = html_dir / f"{stem}.html"
        if stem in se.INSTRUCTOR_ONLY:
            assert not path.exists(), f"{stem} is in the student edition"
        else:
            assert path.is_file(), f"{stem}.html missing from the student edition"


@EDITION
def test_no_solution_survives_in_the_html(edition):
    _, html_dir, _ = edition
    assert se.scan_html(html_dir) == []
    secrets = _secret_lines()
    pages = {p.relative_to(html_dir).as_posix(): _page_text(p) for p in html_dir.rglob("*.html")}
    leaks = [(name, s) for name, text in pages.items() for s in secrets if s in text]
    assert not leaks, f"{len(leaks)} solution lines in the HTML, e.g. {leaks[:3]}"
    # Positive control: the same text extraction does find code that belongs on the page.
    page = pages[f"{_toc_page(ASSIGNMENTS[0])}.html"]
    assert 'A.check("q5", my_corpus_bleu)' in page
    assert "def my_corpus_bleu(hypotheses, references): raise NotImplementedError()" in page


@EDITION
def test_edition_notebooks(edition):
    out, _, _ = edition
    for md in ASSIGNMENTS:
        nb = nbformat.read(out / f"{_toc_page(md)}.ipynb", 4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            if _is_starter(cell.source):
                assert cell.outputs == [], f"{md.stem}: a stripped cell kept its outputs"
                assert "raises-exception" not in cell.metadata.get("tags", []), md.stem
            if ".check(" in cell.source:
                assert cell.outputs == [], f"{md.stem}: a check cell kept its verdict"


def _is_starter(source: str) -> bool:
    """Whether a code cell holds starter code where a solution region was."""
    return any(line.strip() in (FUNCTION_STUB, TOP_LEVEL_STUB) for line in source.split("\n"))


def test_strip_solution_code_keeps_indentation_and_never_raises_at_the_top_level():
    code = "x = None\n### BEGIN SOLUTION\nx = 2\n### END SOLUTION\nprint(x)"
    assert se.strip_solution_code(code) == (f"x = None\n{TOP_LEVEL_STUB}\nprint(x)", 1)
    nested = "def f():\n        ### BEGIN SOLUTION\n        return 1\n        ### END SOLUTION"
    assert se.strip_solution_code(nested) == ("def f():\n        raise NotImplementedError()", 1)
    for bad, message in (("### BEGIN SOLUTION\nx = 1", "has no"),
                         ("x = 1\n### END SOLUTION", "without"),
                         ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "nested")):
        with pytest.raises(ValueError, match=message):
            se.strip_solution_code(bad)


def test_strip_solution_blocks():
    text = "a\n:::{solution} x\nhidden\n:::\nb\n````{solution} y\n```python\ncode\n```\n````\nc"
    out, n = se.strip_solution_blocks(text)
    assert n == 2 and "hidden" not in out and "code" not in out
    assert out.split("\n") == ["a", se.HIDDEN_NOTE, "b", se.HIDDEN_NOTE, "c"]
    with pytest.raises(ValueError, match="unclosed"):
        se.strip_solution_blocks("````{solution} x\nnever closed\n```")


def test_outdir_inside_book_is_refused(tmp_path):
    with pytest.raises(ValueError, match="must not"):
        se.prepare(REPO, REPO / "book" / "student")


# --- the committed student notebooks ---------------------------------------------------------

def test_student_notebooks_are_in_sync():
    """``book/student/`` is exactly what ``python -m tools.student_edition --notebooks`` writes."""
    assert ASSIGNMENTS, "no assignments"
    assert sorted(p.name for p in STUDENT.iterdir()) == sorted(f"{md.stem}.ipynb"
                                                               for md in ASSIGNMENTS)
    for md in ASSIGNMENTS:
        committed = (STUDENT / f"{md.stem}.ipynb").read_text(encoding="utf-8")
        assert committed == se.student_notebook_text(md.with_suffix(".ipynb")), (
            f"{se.STUDENT_DIR}/{md.stem}.ipynb is stale: run "
            "python -m tools.student_edition --notebooks")
    assert se.write_student_notebooks(REPO, check=True) == []


def _notebook_text(nb) -> str:
    """Every source and every output text of a notebook, as one string."""
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts += [v if isinstance(v, str) else json.dumps(v)
                      for v in out.get("data", {}).values()]
    return "\n".join(parts)


@pytest.mark.parametrize("md", ASSIGNMENTS, ids=IDS)
def test_student_notebook_hides_the_answers(md):
    nb = nbformat.read(STUDENT / f"{md.stem}.ipynb", 4)
    raw = (STUDENT / f"{md.stem}.ipynb").read_text(encoding="utf-8")
    for needle in (se.BEGIN, se.END, "{solution}", "BEGIN SOLUTION"):
        assert needle not in raw, f"{md.stem}: {needle!r} in the student notebook"
    text = _normalise(_notebook_text(nb))
    leaks = [s for s in _secret_lines([md]) if s in text]
    assert not leaks, f"{md.stem}: solution lines in the student notebook: {leaks[:3]}"
    stripped = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert cell.execution_count is None
        if _is_starter(cell.source):
            stripped += 1
            assert cell.outputs == [], f"{md.stem}: a stripped cell kept its outputs"
            # Run all reaches the score: no starter cell raises at the top level
            assert "raise NotImplementedError()" not in cell.source.split("\n"), cell.source
            assert "raises-exception" not in cell.metadata.get("tags", []), cell.source
        if ".check(" in cell.source or ".summary(" in cell.source:
            assert cell.outputs == [], f"{md.stem}: {cell.source!r} kept its output"
    assert stripped == md.read_text(encoding="utf-8").count(se.BEGIN)
    # No verdict and no score: an instructor's "95/95" must not greet the student.
    outputs = "\n".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert not re.search(r"[✓✗]|\bpassed\b|\d+/\d+ points|auto-checked:", outputs), outputs
    # What the student needs stays: the check cells, the summary, the questions.
    sources = "\n".join(c.source for c in nb.cells)
    assert len(re.findall(r'A\.check\("q\d+', sources)) == sum(
        t.auto for t in assignment(_number(md)).tasks)
    assert "A.summary()" in sources and "{exercise}" in sources
    assert "jupytext" not in nb.metadata and nb.metadata["markeval"]["edition"] == "student"


@pytest.mark.parametrize("md", ASSIGNMENTS, ids=IDS)
def test_every_written_question_has_an_answer_cell(md):
    written = [t.key for t in assignment(_number(md)).tasks if not t.auto]
    assert written, f"{md.stem} has no written question"
    for nb, where in ((jupytext.read(md), md.name),
                      (nbformat.read(STUDENT / f"{md.stem}.ipynb", 4), "its student notebook")):
        answers = [c.source for c in nb.cells if c.cell_type == "markdown"
                   and c.source.startswith("**Answer to Q")]
        assert sorted(answers) == sorted(_answer_cell(k) for k in written), (
            f"{where}: answer cells {answers} for the written questions {written}")


@pytest.mark.parametrize("md", ASSIGNMENTS, ids=IDS)
def test_student_notebook_links_and_colab_setup(md):
    """Links resolve from book/student/; in Colab the first cell installs what the page needs."""
    nb = nbformat.read(STUDENT / f"{md.stem}.ipynb", 4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for target in re.findall(r"\]\(([\w./-]+\.md)(?:#[^)]*)?\)", cell.source):
                assert (STUDENT / target).resolve().is_file(), f"{md.stem}: dead link {target}"
    setup = next(c for c in nb.cells if c.cell_type == "code").source
    pinned = re.compile(r'"markeval\[book(,[a-z]+)*\]==' + re.escape(markeval.__version__) + '"')
    assert 'if "google.colab" in sys.modules' in setup and pinned.search(setup)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    if re.search(r"\b(meteor|corpus_meteor|wordnet|synonyms)\(", code):
        colab = setup.split('if "google.colab" in sys.modules', 1)[1].split("\nimport ", 1)[0]
        assert 'nltk.download("wordnet"' in colab, f"{md.stem} uses WordNet: download it in Colab"


def test_student_notebook_of_a_plain_notebook_is_refused(tmp_path):
    path = tmp_path / "book" / "x.ipynb"
    path.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), path)
    with pytest.raises(ValueError, match="not an instructor notebook"):
        se.student_notebook(path)


def test_student_notebook_strips_a_toy_assignment(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    (book / "chapter.md").write_text("# Chapter\n", encoding="utf-8")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A\n\nRead [the chapter](chapter.md#x) first."),
        nbformat.v4.new_code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return x\n"
                                  "    ### END SOLUTION", execution_count=1),
        nbformat.v4.new_code_cell('A.check("q1", f)', execution_count=2, outputs=[
            nbformat.v4.new_output("stream", text="✓ Q1 passed\n")]),
        nbformat.v4.new_markdown_cell(f"**Answer to Q2.** {se.ANSWER_PLACEHOLDER}"),
        nbformat.v4.new_markdown_cell("````{solution} q2\n:class: dropdown\n\nsecret\n````"),
        nbformat.v4.new_markdown_cell("````{solution} q3\nsecret\n````\n\n## Your score"),
        nbformat.v4.new_code_cell("A.summary();", execution_count=3, outputs=[
            nbformat.v4.new_output("stream", text="auto-checked: 95/95 points\n")]),
    ])
    nb.metadata["jupytext"] = {"formats": "ipynb,md:myst"}
    nbformat.write(nb, book / "a.ipynb")
    out = se.student_notebook(book / "a.ipynb")
    assert [c.source for c in out.cells] == [
        "# A\n\nRead [the chapter](../chapter.md#x) first.",
        "def f(x):\n    raise NotImplementedError()",
        'A.check("q1", f)',
        f"**Answer to Q2.** {se.ANSWER_PLACEHOLDER}",
        "## Your score",
        "A.summary();"]
    assert all(c.get("outputs", []) == [] and c.get("execution_count") is None
               for c in out.cells if c.cell_type == "code")
    assert "jupytext" not in out.metadata
    assert nbformat.read(book / "a.ipynb", 4).cells[2].outputs  # the source is unchanged


def test_notebooks_command_line(capsys):
    assert se.main(["--notebooks", "--check", "--source", str(REPO)]) == 0
    assert "up to date" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        se.main([])  # neither OUTDIR nor --notebooks


# --- the instructor edition's table of contents and configuration ----------------------------

def test_instructor_toc_from_the_books_toc():
    toc = ie.instructor_toc(yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8")))
    files = [e["file"] for entries in ie._entry_lists(toc) for e in entries if "file" in e]
    assert not [f for f in files if f.startswith(se.STUDENT_DIR)]
    assignments = [f"book/{md.stem}" for md in ASSIGNMENTS]
    assert [f for f in files if f in assignments] == assignments
    assert files.count(ie.INSTRUCTOR_NOTES) == 1
    assert files.index(ie.INSTRUCTOR_NOTES) == files.index(assignments[-1]) + 1
    for stem in files + [toc["root"]]:
        assert (REPO / f"{stem}.md").is_file() or (REPO / f"{stem}.ipynb").is_file(), stem


def test_instructor_prepare_writes_toc_and_config(tmp_path):
    toc_path, config_path = ie.prepare(REPO, tmp_path / "instructor")
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    book = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    assert toc == ie.instructor_toc(yaml.safe_load((REPO / "_toc.yml").read_text("utf-8")))
    assert config["title"] == f"{book['title']} (instructor edition)"
    assert config["execute"]["cache"] == str(REPO / "_build" / ".jupyter_cache")
    assert config["repository"] == book["repository"]
    with pytest.raises(ValueError, match="must not"):
        ie.prepare(REPO, REPO / "book" / "instructor")
    with pytest.raises(ValueError, match="lists no assignment"):
        ie.instructor_toc({"root": "book/index", "chapters": [{"file": "book/x"}]})


# --- Run all reaches the score ---------------------------------------------------------------

_NEEDS_DATA = {1: needs_wmt17, 2: needs_wmt17, 3: needs_wmt17}  # A4 reads packaged BBC News


# `make test` runs Assignment 1's notebook; `make test-full` all four.
@pytest.mark.parametrize("md", [pytest.param(md, marks=[
                                    *([_NEEDS_DATA[_number(md)]] if _number(md) in _NEEDS_DATA
                                      else []),
                                    *([] if _number(md) == 1 else [pytest.mark.slow])])
                                for md in ASSIGNMENTS], ids=IDS)
def test_run_all_of_an_untouched_student_notebook_reaches_the_score(md):
    """A student who opens the notebook and runs every cell sees the score: no cell raises (a
    starter function raises only when the checker calls it), and the summary gives 0 points,
    every auto-checked question "not answered yet", the written ones "graded by hand"."""
    from nbclient import NotebookClient

    nb = nbformat.read(STUDENT / f"{md.stem}.ipynb", 4)
    # Raises CellExecutionError, naming the cell, at the first error.
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(STUDENT)}}).execute()
    summary = next(c for c in nb.cells if c.cell_type == "code" and "A.summary()" in c.source)
    text = "".join(o.get("text", "") for o in summary.outputs)
    A = assignment(_number(md))
    assert f"auto-checked: 0/{A.score()['auto_points']} points" in text, text
    for task in A.tasks:
        status = "not answered yet" if task.auto else "graded by hand"
        earned = "0" if task.auto else "?"
        assert re.search(rf"^  {task.key.upper()} .* {earned}/{task.points}\s+{status}$", text,
                         flags=re.M), f"{task.key}: {text}"
