"""What a reader sees in a built page, measured in headless Chromium.

Shared by ``tests/test_book_build.py`` and ``tools/check_pages.py`` (an author's quick look at
pages before committing them). :func:`inspect_page` loads a built HTML page, waits for MathJax,
and reports every problem a reader would meet: raw TeX, broken or blurry figures, code cells,
output blocks and tables wider than the text column, test-harness markers and solution code. Book tooling,
not library code.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: The browser window: a common laptop screen; its text column is 790 px wide, room for
#: 100 characters of output (book/_static/markeval.css sets the output font).
WINDOW = (1440, 900)

_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--allow-file-access-from-files", "--hide-scrollbars",
    f"--window-size={WINDOW[0]},{WINDOW[1]}", "--force-device-scale-factor=1",
)


def make_driver(timeout: float = 120):
    """A headless Chromium WebDriver (``make install`` installs chromium and its driver).

    ``timeout`` (seconds) bounds a page load, a script and each call to the browser.
    """
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        raise RuntimeError("headless Chromium is required: `make install` installs chromium "
                           "and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in _FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.command_executor._client_config.timeout = timeout  # urllib3's read timeout
    driver.set_page_load_timeout(timeout)
    driver.set_script_timeout(timeout)
    return driver


# Waits for MathJax 3 to finish typesetting, then reports what a reader would see.
_INSPECT = r"""
const done = arguments[arguments.length - 1];
const describe = e => {
  const cell = e.closest('.cell');
  const code = cell ? (cell.querySelector('.cell_input pre') || {}).textContent || '' : '';
  return e.tagName.toLowerCase() + ' ' + e.scrollWidth + '>' + e.clientWidth + 'px after: '
         + code.trim().split('\n').slice(-1)[0].slice(0, 60);
};
const report = () => {
  const root = document.querySelector('main') || document.body;
  // Prose only: code cells and outputs may legitimately contain $$ or \( (regexes, money).
  const prose = root.cloneNode(true);
  prose.querySelectorAll('pre, code, .highlight, .cell_output').forEach(e => e.remove());
  const text = prose.textContent;
  const imgs = Array.from(root.querySelectorAll('img'));
  // Code cells, outputs and tables must fit the column: no horizontal scrolling.
  const boxed = '.cell_input pre, .cell_output *, table';
  const boxes = Array.from(root.querySelectorAll(boxed))
    .filter(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 2)
    .filter(e => !e.parentElement.closest(boxed) ||
                 e.parentElement.closest(boxed).scrollWidth <=
                 e.parentElement.closest(boxed).clientWidth + 2);
  const blurry = imgs.filter(i => i.complete && i.naturalWidth > 0
                                  && !/\.svg(\?|$)/i.test(i.currentSrc || i.src)
                                  && i.naturalWidth < 1.95 * i.clientWidth);
  done({
    mathjax: typeof MathJax !== 'undefined' && !!MathJax.startup,
    typeset: document.querySelectorAll('mjx-container').length,
    rawDisplay: (text.match(/\$\$/g) || []).length,
    rawInline: (text.match(/\\\(|\\\[/g) || []).length,
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(-80)),
    blurry: blurry.map(i => i.src.slice(-60) + ' ' + i.naturalWidth + 'px shown at '
                            + i.clientWidth + 'px'),
    scrolling: boxes.map(describe),
    nbval: (root.textContent.match(/NBVAL_\w+/g) || []),
    solutionMarkers: (root.textContent.match(/(BEGIN|END) SOLUTION/g) || []),
    solutionBlocks: root.querySelectorAll('.solution').length,
  });
};
if (typeof MathJax !== 'undefined' && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(report, report);
} else { setTimeout(report, 1500); }
"""


def inspect_page(driver, page: Path) -> dict:
    """Open a built page and measure it: see the module docstring for the fields."""
    driver.get(Path(page).resolve().as_uri())
    return driver.execute_async_script(_INSPECT)


def screenshot(driver, page: Path, out: Path) -> Path:
    """A full-length PNG of ``page`` at the standard window width."""
    driver.get(Path(page).resolve().as_uri())
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(WINDOW[0], min(max(height, WINDOW[1]), 30000))
    out.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(out))
    driver.set_window_size(*WINDOW)
    return out
