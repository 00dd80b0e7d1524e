"""Build the whole book with ``-W`` and check the rendered pages in a real browser.

The build reads the executed notebooks (:func:`tools.jupyter_book.from_notebooks`): nbval
executes every chapter once in the same ``make test`` run, so a cell error fails there, and
a broken cross-reference, a missing citation or output on stderr fails here. (``make book``
executes the chapters from their sources for the published pages.) Then headless Chromium opens
each page from disk (no network) and checks what a reader sees (``tools.browser.inspect_page``):
equations typeset, figures loaded and sharp, no output or table wider than the text column, no
test-harness markers, no solutions in the public assignments; and the whole book prints to
the PDF that the download button offers.
"""

from __future__ import annotations

import re

import pytest
import yaml

from tools.browser import WINDOW, inspect_page, make_driver
from conftest import REPO, chapter_sources, toc_files
from tools import jupyter_book
from tools import pdf as build_pdf

BUILD = REPO / "_build" / "html"


@pytest.fixture(scope="module")
def built_book():
    try:
        jupyter_book.build(REPO, "--config", str(jupyter_book.from_notebooks(REPO)))
    except RuntimeError as err:
        pytest.fail(str(err))
    return BUILD


def test_build_is_clean(built_book):
    for stem in toc_files():
        assert (built_book / f"{stem}.html").is_file(), f"{stem}.html was not built"


def test_mathjax_is_served_locally(built_book):
    """The HTML must not need the network to render equations."""
    page = (built_book / "book" / "02_perplexity.html").read_text(encoding="utf-8")
    sources = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', page, flags=re.I)
    assert sources, "no MathJax script tag in a built chapter"
    for src in sources:
        assert not src.startswith(("http:", "https:", "//")), f"MathJax loaded from {src}"
        assert (built_book / "book" / src.split("?")[0]).resolve().is_file(), src


def test_colab_buttons_open_the_committed_notebooks(built_book):
    """Launch buttons come from `repository.url` and open the page's committed .ipynb: a
    chapter's executed twin, or the student notebook of an assignment."""
    repository = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["repository"]
    repo = repository["url"].removeprefix("https://github.com/")
    branch = repository["branch"]
    notebooks = [stem for stem in toc_files() if (REPO / f"{stem}.ipynb").is_file()]
    assert len(notebooks) >= len(chapter_sources()) - 4, notebooks
    for stem in notebooks:
        page = (built_book / f"{stem}.html").read_text(encoding="utf-8")
        links = set(re.findall(r'https://colab\.research\.google\.com/github/[^"]+', page))
        assert links == {f"https://colab.research.google.com/github/{repo}/blob/{branch}/{stem}.ipynb"}, (
            f"{stem}: Colab button points at {links}"
        )


@pytest.fixture(scope="module")
def browser():
    try:
        driver = make_driver()
    except RuntimeError as err:
        pytest.fail(str(err))
    yield driver
    driver.quit()


def _pages():
    return [stem for stem in toc_files() if not stem.endswith("bibliography")]


@pytest.mark.parametrize("stem", _pages())
def test_page_reads_well(built_book, browser, stem):
    """What a reader sees: typeset math, sharp figures, nothing wider than the column."""
    source = (REPO / f"{stem}.md")
    source = source if source.is_file() else REPO / f"{stem}.ipynb"
    has_math = bool(re.search(r"\$\$|(?<!\\)\$[^$\n]+\$", source.read_text(encoding="utf-8")))
    seen = inspect_page(browser, built_book / f"{stem}.html")
    if has_math:  # Sphinx only adds MathJax to pages that contain math
        assert seen["mathjax"], f"{stem}: MathJax did not load"
        assert seen["typeset"] > 0, f"{stem}: no equation was typeset"
    assert seen["rawDisplay"] == 0, f"{stem}: {seen['rawDisplay']} raw $$ left in the text"
    assert seen["rawInline"] == 0, f"{stem}: raw \\( or \\[ left in the text"
    assert not seen["broken"], f"{stem}: figures failed to load: {seen['broken']}"
    assert not seen["blurry"], f"{stem}: figures blurry on a high-DPI screen: {seen['blurry']}"
    assert not seen["scrolling"], (
        f"{stem}: code, output blocks or tables wider than the text column at "
        f"{WINDOW[0]} px: {seen['scrolling']}")
    assert not seen["nbval"], f"{stem}: test-harness markers shown: {seen['nbval']}"


@pytest.mark.parametrize("stem", [s for s in _pages() if "/student/" in s])
def test_public_assignments_hold_no_solutions(built_book, browser, stem):
    seen = inspect_page(browser, built_book / f"{stem}.html")
    assert not seen["solutionMarkers"], f"{stem}: solution markers shown"
    assert not seen["solutionBlocks"], f"{stem}: {seen['solutionBlocks']} solution blocks shown"
    page = (built_book / f"{stem}.html").read_text(encoding="utf-8")
    assert not re.search(r"auto-checked: \d+/\d+ points", page), (
        f"{stem}: an instructor's score is printed")


def test_public_book_has_no_instructor_pages():
    stems = toc_files()
    assert not any(s.endswith("instructor_notes") for s in stems), "instructor notes are public"
    assignments = [s for s in stems if "assignment_" in s]
    assert assignments and all(s.startswith("book/student/") for s in assignments), (
        f"the public Assignments part must list the student notebooks: {assignments}")


def test_pdf_of_the_whole_book(built_book, browser):
    """`make book` prints the single-page build to a PDF that the download button links to."""
    page = build_pdf.build_single_page(REPO, from_notebooks=True)
    pdf = build_pdf.print_pdf(page, built_book / build_pdf.PDF_NAME)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF"), "not a PDF"
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", data))
    assert pages > 100, f"the book's PDF has only {pages} pages"
    browser.get((built_book / "book" / "index.html").as_uri())
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('.dropdown-download-buttons a'))"
        ".map(a => a.href)")
    assert any(link.endswith("/" + build_pdf.PDF_NAME) for link in links), links
