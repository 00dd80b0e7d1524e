"""Build the whole book with ``-W`` and check the rendered pages in a real browser.

The build reads the executed notebooks (:func:`tools.jupyter_book.from_notebooks`): nbval
executes every chapter once in the same ``make test`` run, so a cell error fails there, and
a broken cross-reference, a missing citation or output on stderr fails here. (``make book``
executes the chapters from their sources for the published pages.) Then headless Chromium opens
each page from disk (no network) at each common window width (``tools.browser.WIDTHS``: 1280,
1440 and 1920 px) and checks what a reader sees (``tools.browser.inspect_page``): equations
typeset, figures loaded and sharp, nothing that scrolls sideways or reaches past the text
column (code, outputs, tables, equations, and the contents of collapsed blocks, opened first),
one search box, no test-harness markers, no solutions in the public assignments. And the whole
book prints to the PDF that the download button offers (``tools.pdf``): a title page and
contents, bookmarks for every part and chapter, page numbers and labels that agree, nothing
interactive, and nothing wider than the page in the print layout.
"""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
import yaml

from tools.browser import (MIN_FIGURE_TEXT_PX, WIDTHS, inspect_page, make_driver,
                           small_svg_text)
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


def test_repository_links_come_from_the_setting(built_book):
    """The launch, repository, "edit this page" and "open an issue" buttons of every page
    point where ``repository.url`` says, and no page links another code repository than the
    setting's and the pinned data sources' (tests/test_book.py checks the sources' URLs)."""
    from test_book import allowed_url

    url = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    hosts = r"https://(?:github\.com|raw\.githubusercontent\.com|colab\.research\.google\.com)/"
    for stem in toc_files():
        page = (built_book / f"{stem}.html").read_text(encoding="utf-8")
        links = set(re.findall(rf'href="({hosts}[^"]*)"', page))
        assert any(link.startswith(f"{url}/issues/new") for link in links), f"{stem}: no issue link"
        assert any(link.startswith(f"{url}/edit/") for link in links), f"{stem}: no edit button"
        stray = sorted(link for link in links if not allowed_url(link))
        assert not stray, f"{stem}: links outside the repository setting: {stray}"


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


@pytest.fixture(scope="module")
def inspected(built_book, browser):
    """:func:`inspect_page`'s report of a built page at a window width, measured once: the page
    check and the figure-text check read the same report (a page load and a typeset each)."""
    reports = {}

    def report(stem: str, width: int) -> dict:
        if (stem, width) not in reports:
            reports[stem, width] = inspect_page(browser, built_book / f"{stem}.html", width)
        return reports[stem, width]

    return report


#: Every page at the narrowest common window (1280 px) in `make test`; at the wider two (two
#: more minutes each) in `make test-full`.
TIERED_WIDTHS = [pytest.param(w, marks=() if w == min(WIDTHS) else pytest.mark.slow)
                 for w in WIDTHS]
#: The PDF (a single-page build, a typeset of the whole book in one page and two prints: about
#: five minutes on two cores) and its checks: `make test-full`.
PDF = pytest.mark.slow


@pytest.mark.parametrize("width", TIERED_WIDTHS)
@pytest.mark.parametrize("stem", _pages())
def test_page_reads_well(inspected, stem, width):
    """What a reader sees: typeset math, sharp figures, nothing wider than the column, at each
    common window width, with every collapsed block opened."""
    source = (REPO / f"{stem}.md")
    source = source if source.is_file() else REPO / f"{stem}.ipynb"
    has_math = bool(re.search(r"\$\$|(?<!\\)\$[^$\n]+\$", source.read_text(encoding="utf-8")))
    seen = inspected(stem, width)
    if has_math:  # Sphinx only adds MathJax to pages that contain math
        assert seen["mathjax"], f"{stem}: MathJax did not load"
        assert seen["typeset"] > 0, f"{stem}: no equation was typeset"
    assert seen["rawDisplay"] == 0, f"{stem}: {seen['rawDisplay']} raw $$ left in the text"
    assert seen["rawInline"] == 0, f"{stem}: raw \\( or \\[ left in the text"
    assert not seen["broken"], f"{stem}: figures failed to load: {seen['broken']}"
    assert not seen["blurry"], f"{stem}: figures blurry on a high-DPI screen: {seen['blurry']}"
    assert not seen["scrolling"], (
        f"{stem}: wider than the {seen['column']}-px text column at {width} px (scrolls "
        f"sideways, is cut off or runs past it): {seen['scrolling']}")
    assert not seen["nbval"], f"{stem}: test-harness markers shown: {seen['nbval']}"
    assert seen["searchBoxes"] == 1, f"{stem}: {seen['searchBoxes']} search boxes at {width} px"


def test_page_check_catches_a_wide_equation(built_book, browser):
    """The overflow check on a built page with three planted display equations, 30 px short of
    the text column (N, numbered: its number stands beside it, so its own box is narrower than
    the column and it scrolls; F, the same unnumbered, fits) and wider than the column (W)."""
    source = built_book / "book" / "11_counting_fish.html"
    width = min(WIDTHS)
    column = inspect_page(browser, source, width)["column"]
    page = source.read_text(encoding="utf-8")

    def display(name, px, number=""):
        number = f'<span class="eqno">({number})</span>' if number else ""
        return (f'<div class="math notranslate nohighlight">{number}'
                f'\\[\\mathrm{{{name}}}\\rule{{{px}px}}{{2px}}\\]</div>')

    planted = (display("N", column - 45, "99.1") + display("F", column - 45)
               + display("W", column + 200))
    article = '<article class="bd-article">'
    assert page.count(article) == 1
    target = built_book / "book" / "_planted_wide_equations.html"
    target.write_text(page.replace(article, article + planted), encoding="utf-8")
    try:
        seen = inspect_page(browser, target, width)
    finally:
        target.unlink()
    flagged = {match[1] for line in seen["scrolling"]
               if (match := re.match(r"equation .*\((?:#[^:]*: )?([NFW])\)$", line))}
    assert flagged == {"N", "W"}, seen["scrolling"]


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


@pytest.fixture(scope="module")
def printed_book(built_book):
    """The single-page build printed to the PDF of ``make book``; the browser that printed it
    stays open on the page as printed (title page, contents, solutions open, fitted)."""
    page = build_pdf.build_single_page(REPO, from_notebooks=True)
    try:
        driver = make_driver(timeout=build_pdf.TYPESET_TIMEOUT_S)
    except RuntimeError as err:
        pytest.fail(str(err))
    try:
        pdf = build_pdf.print_pdf(page, built_book / build_pdf.PDF_NAME, driver=driver)
        yield pdf, driver
    finally:
        driver.quit()


def _outline(reader) -> list[tuple[int, str, int]]:
    """(depth, title, page index) of every bookmark, in order."""
    found = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                found.append((depth, item.title, reader.get_destination_page_number(item)))

    walk(reader.outline, 0)
    return found


def _page_title(stem: str) -> str:
    path = REPO / f"{stem}.md"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        cells = json.loads((REPO / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.search(r"^# (.+)$", text, flags=re.M)[1].strip()


@PDF
def test_pdf_has_bookmarks_for_every_part_chapter_and_section(printed_book):
    from pypdf import PdfReader

    reader = PdfReader(printed_book[0])
    outline = _outline(reader)
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    parts = {title for depth, title, _ in outline if depth == 0}
    for part in toc["parts"]:
        if "caption" in part:
            assert part["caption"] in parts, f"no bookmark for the part {part['caption']!r}"
    pages = [title for depth, title, _ in outline if depth == 1]
    for stem in toc_files()[1:]:
        title = _page_title(stem)
        assert any(t == title or re.fullmatch(rf"\d+\. {re.escape(title)}", t) for t in pages), (
            f"no bookmark for {stem} ({title!r}); chapter bookmarks: {pages}")
    assert sum(depth == 2 for depth, _, _ in outline) > 5 * len(pages), "section bookmarks missing"
    where = [page for _, _, page in outline]
    assert where == sorted(where), "bookmarks out of reading order"


def _foot(page) -> str:
    """The text a PDF page draws in its bottom margin (below 15 mm; the margin is 20 mm)."""
    parts = []

    def visit(text, cm, tm, font, size):
        y = tm[5] * cm[3] + cm[5]  # the text position in page space (no rotation here)
        if text.strip() and y < 15 / 25.4 * 72:
            parts.append(text.strip())

    page.extract_text(visitor_text=visit)
    return " ".join(parts)


@PDF
def test_pdf_page_numbers_and_labels_agree(printed_book):
    """The title page and the contents are labelled i, ii, ... and print no number; the book
    proper is labelled 1, 2, ..., and each page prints its label at its foot."""
    from pypdf import PdfReader

    reader = PdfReader(printed_book[0])
    labels = reader.page_labels
    assert len(reader.pages) > 100, f"the book's PDF has only {len(reader.pages)} pages"
    front = labels.index("1")
    assert front >= 2, "no title page and contents before page 1"
    assert labels[:front] == ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x",
                              "xi", "xii"][:front]
    assert labels[front:] == [str(n) for n in range(1, len(labels) - front + 1)]
    for index in range(front):
        assert _foot(reader.pages[index]) == "", f"front page {index + 1} prints a number"
    for index in sorted({front, front + 1, len(labels) // 2, len(labels) - 1}):
        assert _foot(reader.pages[index]) == labels[index], (
            f"page {index + 1} (label {labels[index]}) prints {_foot(reader.pages[index])!r}")
    width, height = (float(v) for v in reader.pages[front].mediabox[2:])
    assert abs(width - 595.3) < 1 and abs(height - 841.9) < 1, "pages are not A4"


@PDF
def test_pdf_contents_give_the_pages_of_the_chapters(printed_book):
    """The page numbers in the contents are those where the bookmarks point (and those are
    the pages of the headings: the next test)."""
    from pypdf import PdfReader

    reader = PdfReader(printed_book[0])
    labels = reader.page_labels
    contents = unicodedata.normalize(  # NFKC undoes the ligatures of the PDF's text ("ﬁ")
        "NFKC", "\n".join(reader.pages[i].extract_text() for i in range(labels.index("1"))))
    chapters = [(title, labels[page]) for depth, title, page in _outline(reader)
                if depth == 1 and re.match(r"\d+\. ", title)]
    assert len(chapters) >= 18, chapters
    for title, label in chapters:
        words = r"\s+".join(re.escape(word) for word in title.split())
        match = re.search(words + r"[\s.]*?(\d+)\s*$", contents, flags=re.M)
        assert match, f"{title!r} is not in the contents"
        assert match[1] == label, f"contents say {title!r} is on page {match[1]}, it is on {label}"


def _heading_at(title: str, text: str) -> int | None:
    """Where ``title`` starts in a page's ``text`` (whitespace normalised), or None. Math in a
    heading ("Model $M_0$") prints as glyphs that extract to nothing, so one word of the title
    may be missing; the others must follow in order within the title's length."""
    words = re.findall(r"\w+", title)
    for match in re.finditer(re.escape(words[0]), text):
        window, at, hits = text[match.start():match.start() + len(title) + 20], 0, 0
        for word in words:
            found = window.find(word, at)
            if found >= 0:
                hits, at = hits + 1, found + len(word)
        if hits >= len(words) - 1:
            return match.start()
    return None


@PDF
def test_pdf_bookmarks_land_on_their_headings(printed_book):
    """Every bookmark's target page shows its heading; a part's or a document's page (each
    starts a new page) shows it at the top, below at most the page's number. The contents give
    the same pages as the bookmarks (the test above), so they land there too."""
    from pypdf import PdfReader

    reader = PdfReader(printed_book[0])
    page_titles = {_page_title(stem) for stem in toc_files()}
    texts: dict[int, str] = {}
    wrong = []
    for depth, title, page in _outline(reader):
        if page not in texts:
            texts[page] = re.sub(r"\s+", " ", unicodedata.normalize(
                "NFKC", reader.pages[page].extract_text())).strip()
        at = _heading_at(title, texts[page])
        starts_page = depth == 0 or re.sub(r"^\d+\. ", "", title) in page_titles
        if at is None or (starts_page and at > 400):
            wrong.append(f"{title!r} -> page {reader.page_labels[page]} "
                         f"({texts[page][:50]!r}...)")
    assert not wrong, f"{len(wrong)} bookmarks miss their heading: {wrong[:5]}"


@PDF
def test_print_layout_fits_the_page(printed_book):
    """Chromium's print layout (print media, a page's text width): nothing reaches past the
    page, scrolls or is cut off, and nothing for clicking is left."""
    driver = printed_book[1]
    wide = build_pdf.wider_than_the_page(driver)
    assert not wide, f"{len(wide)} elements wider than the page: {wide[:10]}"
    with build_pdf.print_layout(driver):
        widgets = driver.execute_script(
            "return Array.from(document.querySelectorAll('button, summary, input, select, "
            "nav, .toggle-button, .bd-sidebar-primary, .bd-sidebar-secondary'))"
            ".filter(e => e.getClientRects().length > 0)"
            ".map(e => e.tagName.toLowerCase() + ' ' + e.textContent.trim().slice(0, 40));")
    assert not widgets, f"interactive widgets printed: {widgets[:10]}"


@PDF
def test_pdf_is_offered_for_download(printed_book, built_book, browser):
    """`make book` prints the single-page build to a PDF that the download button links to."""
    assert printed_book[0].read_bytes().startswith(b"%PDF"), "not a PDF"
    browser.get((built_book / "book" / "index.html").as_uri())
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('.dropdown-download-buttons a'))"
        ".map(a => a.href)")
    assert any(link.endswith("/" + build_pdf.PDF_NAME) for link in links), links


@pytest.mark.parametrize("stem", _pages())
def test_figure_text_is_legible(built_book, inspected, stem):
    """Legends, tick labels and axis labels of every SVG figure are at least
    MIN_FIGURE_TEXT_PX high as shown in the narrowest common window: each text's size inside
    the SVG, times the figure's displayed width over its own (viewBox) width."""
    page = built_book / f"{stem}.html"
    if ".svg" not in page.read_text(encoding="utf-8"):
        pytest.skip("no SVG figure on this page")
    width = min(WIDTHS)
    seen = inspected(stem, width)
    assert seen["svgFigures"], f"{stem}: the page names an SVG but shows no SVG figure"
    small = small_svg_text(seen)
    assert not small, (f"{stem}: figure text under {MIN_FIGURE_TEXT_PX:g} px in a {width}-px "
                       f"window: {small}")
