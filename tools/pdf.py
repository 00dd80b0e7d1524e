"""The whole book as one PDF, built offline: Jupyter Book's single-page HTML, printed by
headless Chromium.

``python -m tools.pdf`` (part of ``make book``, from the repository root) builds
``_build/singlehtml`` (reusing the executed notebooks cached by the HTML build) and writes
``_build/html/markeval.pdf``, the file the download menu of every page links to
(``book/_static/pdf_link.js``). Chromium runs the page's scripts on a virtual clock before it
prints, so MathJax has typeset every equation. Book tooling, not library code.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tools import jupyter_book

REPO = Path(__file__).resolve().parents[1]
PDF_NAME = "markeval.pdf"
#: Virtual milliseconds Chromium lets scripts run before printing (MathJax needs ~20 s of real
#: time for the whole book on two cores; virtual time does not wait for the clock).
SCRIPT_BUDGET_MS = 300_000


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


def print_pdf(page: Path, out: Path) -> Path:
    """Print ``page`` to ``out`` with headless Chromium (no page headers or footers)."""
    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("headless Chromium is required: `make install` installs chromium")
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    command = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
               "--disable-dev-shm-usage", "--no-first-run", "--no-pdf-header-footer",
               "--run-all-compositor-stages-before-draw",
               f"--virtual-time-budget={SCRIPT_BUDGET_MS}", f"--print-to-pdf={out}",
               Path(page).resolve().as_uri()]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if not out.is_file() or not out.read_bytes()[:5] == b"%PDF-":
        raise RuntimeError(f"Chromium wrote no PDF (exit {proc.returncode}):\n"
                           + proc.stderr[-3000:])
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
