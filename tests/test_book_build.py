"""Build the whole book with ``-W`` and check the rendered pages in a real browser.

The build executes every chapter (``execute_notebooks: cache``), so a cell error, a broken
cross-reference, a missing citation or output on stderr fails it. Then headless Chromium opens
each chapter page from disk (no network) and checks that MathJax typeset the equations and
that every figure loaded.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, chapter_sources, toc_files

BUILD = REPO / "_build" / "html"
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def built_book():
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    proc = subprocess.run(
        [str(jupyter_book), "build", str(REPO), "-W", "-n", "--keep-going"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, "jupyter-book build failed:\n" + log[-8000:]
    return BUILD


def test_build_is_clean(built_book):
    for stem in toc_files():
        assert (built_book / f"{stem}.html").is_file(), f"{stem}.html was not built"


def test_mathjax_is_served_locally(built_book):
    """The HTML must not need the network to render equations."""
    page = (built_book / "book" / "index.html").read_text(encoding="utf-8")
    sources = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', page, flags=re.I)
    assert sources, "no MathJax script tag in the built index page"
    for src in sources:
        assert not src.startswith(("http:", "https:", "//")), f"MathJax loaded from {src}"
        assert (built_book / "book" / src.split("?")[0]).resolve().is_file(), src


def test_colab_buttons_open_the_paired_notebooks(built_book):
    """Launch buttons come from `repository.url` and must point at the executed .ipynb twin."""
    repository = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["repository"]
    repo = repository["url"].removeprefix("https://github.com/")
    branch = repository["branch"]
    for md in chapter_sources():
        stem = md.relative_to(REPO).with_suffix("").as_posix()
        page = (built_book / f"{stem}.html").read_text(encoding="utf-8")
        links = set(re.findall(r'https://colab\.research\.google\.com/github/[^"]+', page))
        assert links == {f"https://colab.research.google.com/github/{repo}/blob/{branch}/{stem}.ipynb"}, (
            f"{stem}: Colab button points at {links}"
        )


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.fail("headless Chromium is required: `make install` installs chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--allow-file-access-from-files",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(120)
    yield driver
    driver.quit()


# Waits for MathJax 3 to finish typesetting, then reports what a reader would see.
_INSPECT = """
const done = arguments[arguments.length - 1];
const report = () => {
  // Prose only: code cells and outputs may legitimately contain $$ or \\( (regexes, money).
  const main = (document.querySelector('main') || document.body).cloneNode(true);
  main.querySelectorAll('pre, code, .highlight, .cell_output').forEach(e => e.remove());
  const text = main.textContent;
  const imgs = Array.from(document.querySelectorAll('main img'));
  done({
    mathjax: typeof MathJax !== 'undefined' && !!MathJax.startup,
    typeset: document.querySelectorAll('mjx-container').length,
    rawDisplay: (text.match(/\\$\\$/g) || []).length,
    rawInline: (text.match(/\\\\\\(|\\\\\\[/g) || []).length,
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(-80)),
  });
};
if (typeof MathJax !== 'undefined' && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(report, report);
} else { setTimeout(report, 2000); }
"""


def _pages():
    return [stem for stem in toc_files() if not stem.endswith("bibliography")]


@pytest.mark.parametrize("stem", _pages())
def test_page_renders_math_and_figures(built_book, browser, stem):
    source = (REPO / f"{stem}.md").read_text(encoding="utf-8")
    has_math = bool(re.search(r"\$\$|(?<!\\)\$[^$\n]+\$", source))
    browser.set_script_timeout(120)
    browser.get((built_book / f"{stem}.html").as_uri())
    seen = browser.execute_async_script(_INSPECT)
    if has_math:  # Sphinx only adds MathJax to pages that contain math
        assert seen["mathjax"], f"{stem}: MathJax did not load"
        assert seen["typeset"] > 0, f"{stem}: no equation was typeset"
    assert seen["rawDisplay"] == 0, f"{stem}: {seen['rawDisplay']} raw $$ left in the text"
    assert seen["rawInline"] == 0, f"{stem}: raw \\( or \\[ left in the text"
    assert not seen["broken"], f"{stem}: figures failed to load: {seen['broken']}"
