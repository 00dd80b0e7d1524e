"""The whole book as one PDF, built offline: Jupyter Book's single-page HTML, printed by
headless Chromium.

``python -m tools.pdf`` (part of ``make book``, from the repository root) builds
``_build/singlehtml`` (reusing the executed notebooks cached by the HTML build) and writes
``_build/html/markeval.pdf``, the file the download menu of every page links to
(``book/_static/pdf_link.js``). The PDF works as a book:

- a title page and a table of contents with page numbers, then a title page for each part and
  every chapter on a new page (``tools/print_book.js`` adds them to the page before printing);
- page numbers at the foot of every page of the book proper, from 1 (``@page`` in
  ``book/_static/markeval.css``), and page labels to match: the title page and the contents are
  i, ii, ..., the first page of the book 1;
- bookmarks (the PDF outline) for the parts, the chapters and their sections;
- nothing for clicking (sidebars, buttons, the "Show code cell source" toggles), exercise
  solutions open, and every code block, table and equation inside the page: the print styles
  size code so that 100 characters fit, and ``fit`` shrinks what is still wider, wrapping a code
  line under its own indentation when even the smallest size does not fit.

Chromium prints through the DevTools command ``Page.printToPDF``, twice: the first print tells
on which page each heading landed (its named destination), the second writes those numbers
into the contents, which are laid out with room for them, so nothing moves. pypdf then adds the
outline and the page labels. Book tooling, not library code.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tools import jupyter_book
from tools.browser import make_driver, overflowing

REPO = Path(__file__).resolve().parents[1]
PDF_NAME = "markeval.pdf"
PREPARE_SCRIPT = Path(__file__).with_name("print_book.js")
#: The width of the printed text in CSS pixels: A4 (210 mm) less the left and right margins of
#: ``@page`` in book/_static/markeval.css (16 mm each), at 96 px to the inch.
PAGE_TEXT_WIDTH_PX = int((210 - 2 * 16) / 25.4 * 96)
#: Seconds to wait for MathJax to typeset the whole book (about 20 s on two cores).
TYPESET_TIMEOUT_S = 600
#: Untagged: a tagged PDF (a structure tree for screen readers) was twice the size (23 MB).
_PRINT_OPTIONS = {"printBackground": True, "preferCSSPageSize": True,
                  "generateTaggedPDF": False, "transferMode": "ReturnAsBase64"}


def build_single_page(source: Path = REPO, *, strict: bool = True,
                      from_notebooks: bool = False) -> Path:
    """``jupyter-book build --builder singlehtml``; returns the page.

    ``from_notebooks`` reads the executed notebooks instead of executing the chapters
    (:func:`tools.jupyter_book.from_notebooks`; the test suite's build).
    """
    options = (["--config", str(jupyter_book.from_notebooks(source))] if from_notebooks
               else [])
    jupyter_book.build(source, "--builder", "singlehtml", *options, strict=strict,
                       what="the single-page book")
    # The root document is book/index, so Sphinx writes the page to book/index.html but links
    # its styles and figures as if it sat at the top (_static/, _images/): put it there.
    built = source / "_build" / "singlehtml"
    page = built / "book.html"
    shutil.copyfile(built / "book" / "index.html", page)
    return page


def book_structure(source: Path = REPO) -> dict:
    """What ``print_book.js`` needs to know about the book: its title, the lines of its title
    page, the root document and the parts of ``_toc.yml`` with their documents (a numbered
    group without a caption continues the part before it)."""
    config = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8"))
    toc = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))
    parts: list[dict] = []
    for group in toc["parts"]:
        docs = [entry["file"] for entry in group["chapters"]]
        if "caption" in group or not parts:
            parts.append({"caption": group.get("caption", ""), "docs": docs})
        else:
            parts[-1]["docs"] += docs
    from markeval import __version__

    commit = _git(source, "log", "-1", "--format=%h, %cs")
    return {
        "title": config["title"],
        "subtitle": "A literate textbook, with the markeval library",
        "meta": [config["author"], f"Version {__version__}" + (f" (commit {commit})"
                                                               if commit else ""),
                 config["repository"]["url"],
                 "Text: CC BY 4.0. Code: MIT licence."],
        "root": toc["root"], "parts": parts,
    }


def _git(source: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=source, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def open_book(driver, page: Path, book: dict) -> list[dict]:
    """Load the single page, wait for MathJax, and lay it out for print (title page, contents,
    parts, solutions open, fitted to the page); returns the outline of :func:`print_book.js`."""
    driver.get(Path(page).resolve().as_uri())
    driver.set_script_timeout(TYPESET_TIMEOUT_S)
    driver.execute_async_script(
        "const done = arguments[0]; (typeof MathJax !== 'undefined' && MathJax.startup"
        " ? MathJax.startup.promise : Promise.resolve()).then(() => done(), () => done());")
    driver.execute_script(PREPARE_SCRIPT.read_text(encoding="utf-8"))
    outline = driver.execute_script("return window.markevalPrint.prepare(arguments[0]);", book)
    with print_layout(driver):
        driver.execute_script("return window.markevalPrint.fit();")
    return outline


@contextlib.contextmanager
def print_layout(driver):
    """Within the block, the page is laid out as it prints: print media, as wide as the text
    of a page."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": PAGE_TEXT_WIDTH_PX, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    try:
        yield driver
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


def wider_than_the_page(driver) -> list[str]:
    """What in the prepared page reaches past the text of a printed page, scrolls or is cut
    off, measured in the print layout (a line per element, see
    :func:`tools.browser.overflowing`)."""
    with print_layout(driver):
        return overflowing(driver, "body", PAGE_TEXT_WIDTH_PX)


def _print(driver) -> bytes:
    data = driver.execute_cdp_cmd("Page.printToPDF", _PRINT_OPTIONS)["data"]
    return base64.b64decode(data)


def _pages_of(pdf: bytes, ids) -> dict[str, int]:
    """The page index (from 0) of each named destination in ``ids``."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    dests = reader.named_destinations
    missing = [i for i in ids if f"/{i}" not in dests]
    if missing:
        raise RuntimeError(f"Chromium wrote no destination for {len(missing)} headings of the "
                           f"contents, e.g. {missing[:3]}")
    return {i: reader.get_destination_page_number(dests[f"/{i}"]) for i in ids}


def _finish(pdf: bytes, outline: list[dict], front_pages: int, book: dict) -> bytes:
    """Add the bookmarks, the page labels and the document information to ``pdf``."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import Fit

    reader = PdfReader(io.BytesIO(pdf))
    # An incremental update appends the additions to Chromium's file instead of rewriting its
    # 100,000 objects (seconds instead of half a minute).
    writer = PdfWriter(io.BytesIO(pdf), incremental=True)
    dests = reader.named_destinations
    parents: list = []
    for item in outline:
        dest = dests[f"/{item['id']}"]
        del parents[item["level"]:]
        parent = parents[-1] if parents else None
        top = dest.get("/Top")
        bookmark = writer.add_outline_item(
            title=item["title"], page_number=reader.get_destination_page_number(dest),
            parent=parent, fit=Fit.xyz(top=float(top)) if top is not None else Fit.fit())
        parents.append(bookmark)
    writer.set_page_label(0, front_pages - 1, style="/r")
    writer.set_page_label(front_pages, len(writer.pages) - 1, style="/D", start=1)
    writer.add_metadata({"/Title": book["title"], "/Author": book["meta"][0]})
    writer.page_mode = "/UseOutlines"
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def print_pdf(page: Path, out: Path, source: Path = REPO, driver=None) -> Path:
    """Print the single page ``page`` of the book in ``source`` to ``out`` as a book (see the
    module docstring). With a ``driver`` (:func:`tools.browser.make_driver`), the page stays
    open in it as printed, for :func:`wider_than_the_page`; otherwise a browser of its own is
    started and closed."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    book = book_structure(source)
    own = driver is None
    driver = make_driver(timeout=TYPESET_TIMEOUT_S) if own else driver
    try:
        outline = open_book(driver, page, book)
        ids = [item["id"] for item in outline]
        first = _print(driver)
        pages = _pages_of(first, ids)
        front_pages = pages[ids[0]]  # the book proper starts with the root document
        driver.execute_script("window.markevalPrint.fillPages(arguments[0]);",
                              {i: str(p - front_pages + 1) for i, p in pages.items()})
        pdf = _print(driver)
    finally:
        if own:
            driver.quit()
    if _pages_of(pdf, ids) != pages:
        raise RuntimeError("filling in the page numbers of the contents moved the pages")
    out.write_bytes(_finish(pdf, outline, front_pages, book))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.pdf",
                                     description="Build the PDF of the whole book.")
    parser.add_argument("--out", type=Path, default=REPO / "_build" / "html" / PDF_NAME)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    out = print_pdf(build_single_page(), args.out)
    print(f"PDF of the book: {out} ({out.stat().st_size / 1e6:.1f} MB, "
          f"{time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
