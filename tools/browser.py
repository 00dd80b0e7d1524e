"""What a reader sees in a built page, measured in headless Chromium.

Shared by ``tests/test_book_build.py``, ``tools/check_pages.py`` (an author's quick look at
pages before committing them) and ``tools/pdf.py``. :func:`inspect_page` loads a built HTML page
at a given window width, waits for MathJax, opens every collapsed block (hidden cell sources,
exercise solutions) and reports every problem a reader would meet: raw TeX, broken or blurry
figures, anything that scrolls sideways or reaches past the text column (code, outputs, tables,
display equations), test-harness markers, solution code and the number of search boxes.
:func:`overflowing` is the same width check for any part of a page (the PDF's print layout),
and :func:`small_svg_text` measures the text of SVG figures at the size they are shown. Book
tooling, not library code.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

#: The widths a reader's browser window commonly has: a 1280-px laptop, 1440 and a 1920-px
#: desktop. Every page must read well at each (tests/test_book_build.py).
WIDTHS = (1280, 1440, 1920)
#: The default window: width and height.
WINDOW = (1440, 900)
#: The smallest text a figure may show, in CSS pixels at its displayed size (issue 39).
MIN_FIGURE_TEXT_PX = 9.0

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


def set_width(driver, width: int) -> None:
    """Resize the window to ``width`` CSS pixels (the default height), if it is not already."""
    if not isinstance(width, int) or width < 320:
        raise ValueError(f"width must be an int of at least 320 pixels, got {width!r}")
    if driver.execute_script("return window.innerWidth") != width:
        driver.set_window_size(width, WINDOW[1])


# Defines overflowing(root, right): the elements under `root` that a reader would have to scroll
# sideways, or that are cut off or reach past `right` (the column's or the page's right edge,
# in CSS pixels), each described in a line. An element inside a reported one is not reported
# again. Equations are measured by their typeset box (mjx-math): the inline-flex boxes the theme
# puts around math report a few pixels of glyph overhang as scroll width, although nothing shows.
_OVERFLOWING = r"""
const overflowing = (root, right) => {
  const found = [];
  const skip = 'mjx-assistive-mml, .visually-hidden, .sr-only, .headerlink, .copybtn, .math';
  const where = e => {
    const cell = e.closest('.cell');
    const code = cell ? (cell.querySelector('.cell_input pre') || {}).textContent || '' : '';
    if (code.trim()) return 'cell ending: ' + code.trim().split('\n').slice(-1)[0].slice(0, 60);
    const section = e.closest('section[id]');
    const text = e.textContent.trim().replace(/\s+/g, ' ').slice(0, 60);
    return (section ? '#' + section.id + ': ' : '') + text;
  };
  const name = e => {
    if (e.tagName === 'MJX-CONTAINER') return 'equation';
    if (e.closest('.cell_input, div.highlight')) return 'code';
    if (e.closest('.cell_output')) return e.tagName === 'TABLE' ? 'output table' : 'output';
    return e.tagName === 'TABLE' ? 'table' : e.tagName.toLowerCase();
  };
  for (const e of root.querySelectorAll('*')) {
    if (e.tagName.startsWith('MJX-') && e.tagName !== 'MJX-CONTAINER') continue;
    if (found.some(f => f.contains(e))) continue;
    const style = getComputedStyle(e);
    if (style.display === 'none' || style.visibility === 'hidden' || style.position === 'fixed') {
      continue;
    }
    const box = e.getBoundingClientRect();
    if (box.width === 0) continue;
    let wide = 0, room = 0;
    if (e.tagName === 'MJX-CONTAINER') {
      const math = e.querySelector('mjx-math');
      if (!math) continue;
      const clip = e.closest('.math') || e;
      // A display equation's own box is narrower than its .math block when an equation
      // number stands beside it; it scrolls inside its own box.
      const own = e.getAttribute('display') === 'true' ? e.clientWidth : Infinity;
      wide = math.getBoundingClientRect().width;
      room = Math.min(clip.getBoundingClientRect().width, own, right - box.left);
    } else if (!e.matches(skip) && !e.closest(skip)) {
      const spills = e.scrollWidth > e.clientWidth + 2;
      if (spills && style.overflowX !== 'visible') {  // scrolls, or is cut off
        wide = e.scrollWidth; room = e.clientWidth;
      } else if (spills && box.left + e.scrollWidth > right + 2) {  // runs out of its box
        wide = e.scrollWidth; room = right - box.left;
      } else if (box.right > right + 2) {
        wide = box.width; room = right - box.left;
      }
    }
    if (wide > room + 2) {
      found.push(e);
      found[found.length - 1].description =
        `${name(e)} ${Math.round(wide)} px in ${Math.round(room)} px (${where(e)})`;
    }
  }
  return found.map(e => e.description);
};
"""

# Opens what a reader can open: hidden cell sources (<details>) and sphinx-togglebutton blocks
# (exercise solutions), so that their contents are measured too.
_OPEN_COLLAPSED = r"""
document.querySelectorAll('details').forEach(d => { d.open = true; });
document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
"""

# Waits for MathJax 3 to finish typesetting, then reports what a reader would see.
_INSPECT = _OVERFLOWING + r"""
const done = arguments[arguments.length - 1];
const report = () => {
  const root = document.querySelector('main') || document.body;
  const article = document.querySelector('article.bd-article') || root;
  // Prose only: code cells and outputs may legitimately contain $$ or \( (regexes, money).
  const prose = root.cloneNode(true);
  prose.querySelectorAll('pre, code, .highlight, .cell_output').forEach(e => e.remove());
  const text = prose.textContent;
  const imgs = Array.from(root.querySelectorAll('img'));
  const blurry = imgs.filter(i => i.complete && i.naturalWidth > 0
                                  && !/\.svg(\?|$)/i.test(i.currentSrc || i.src)
                                  && i.naturalWidth < 1.95 * i.clientWidth);
  const svgs = imgs.filter(i => /\.svg(\?|$)/i.test(i.currentSrc || i.src) && i.clientWidth > 0);
  const solutions = root.querySelectorAll('.solution').length;
  const solutionMarkers = (root.textContent.match(/(BEGIN|END) SOLUTION/g) || []);
  """ + _OPEN_COLLAPSED + r"""
  const box = article.getBoundingClientRect(), pad = getComputedStyle(article);
  const column = box.right - parseFloat(pad.paddingRight);
  // Search fields and buttons a reader can see (in the page, not in a closed dialog).
  const searches = Array.from(document.querySelectorAll('.search-button-field, .search-button'))
    .filter(e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'
                 && !e.closest('dialog:not([open])'));
  done({
    width: window.innerWidth,
    column: Math.round(column - box.left - parseFloat(pad.paddingLeft)),
    mathjax: typeof MathJax !== 'undefined' && !!MathJax.startup,
    typeset: document.querySelectorAll('mjx-container').length,
    rawDisplay: (text.match(/\$\$/g) || []).length,
    rawInline: (text.match(/\\\(|\\\[/g) || []).length,
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(-80)),
    blurry: blurry.map(i => i.src.slice(-60) + ' ' + i.naturalWidth + 'px shown at '
                            + i.clientWidth + 'px'),
    svgFigures: svgs.map(i => [i.currentSrc || i.src, i.getBoundingClientRect().width]),
    scrolling: overflowing(article, column),
    nbval: (root.textContent.match(/NBVAL_\w+/g) || []),
    solutionMarkers: solutionMarkers,
    solutionBlocks: solutions,
    searchBoxes: searches.length,
  });
};
if (typeof MathJax !== 'undefined' && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(report, report);
} else { setTimeout(report, 1500); }
"""


def inspect_page(driver, page: Path, width: int | None = None) -> dict:
    """Open a built page in a window ``width`` pixels wide (default: as it is) and measure it.

    Returns a dict: ``width`` and ``column`` (window and text column width, px); ``mathjax``,
    ``typeset``, ``rawDisplay``, ``rawInline`` (MathJax loaded, equations typeset, TeX left
    raw); ``images``, ``broken``, ``blurry``, ``svgFigures`` ([url, shown width] of each SVG);
    ``scrolling`` (a line per element that scrolls sideways, is cut off or reaches past the
    column, collapsed blocks opened); ``nbval``, ``solutionMarkers``, ``solutionBlocks``
    (harness markers and solutions, counted before the blocks are opened) and ``searchBoxes``.
    """
    if width is not None:
        set_width(driver, width)
    driver.get(Path(page).resolve().as_uri())
    return driver.execute_async_script(_INSPECT)


def overflowing(driver, root: str, right: float) -> list[str]:
    """What in the current page, under the element ``root`` (a CSS selector), scrolls sideways,
    is cut off or reaches past ``right`` (CSS pixels from the left of the window)."""
    return driver.execute_script(
        _OVERFLOWING + "return overflowing(document.querySelector(arguments[0]), "
        "arguments[1]);", root, right)


# matplotlib writes SVG text as glyph outlines (svg.fonttype "path"): each string is a group
# holding its text in a comment, then the glyphs scaled by font size / 100. Text written as
# <text> elements (svg.fonttype "none") gives its size in a font-size attribute or style.
_PATH_TEXT = re.compile(
    r'<!-- (?P<label>.*?) -->\s*(?:<g[^>]*>\s*)*?'
    r'<g transform="[^"]*?scale\((?P<scale>[\d.e-]+)[ ,]-[\d.e-]+\)"', re.S)
_SVG_TEXT = re.compile(r'<text\b[^>]*?font-size[:=]\s*"?(?P<size>[\d.]+)[^>]*>(?P<label>[^<]*)')
_VIEWBOX = re.compile(r'<svg\b[^>]*?viewBox="[-\d.e]+ [-\d.e]+ (?P<w>[\d.e]+) [\d.e]+"', re.S)


def svg_text_sizes(svg: Path) -> tuple[float, list[tuple[str, float]]]:
    """The viewBox width of ``svg`` and each text's (label, font size), in the SVG's own units.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "f.svg"
    >>> _ = path.write_text('<svg viewBox="0 0 400 300"><text font-size="8">tick</text></svg>')
    >>> svg_text_sizes(path)
    (400.0, [('tick', 8.0)])
    """
    text = Path(svg).read_text(encoding="utf-8")
    box = _VIEWBOX.search(text)
    if box is None:
        raise ValueError(f"svg has no viewBox, so its displayed scale is unknown: {svg}")
    sizes = [(m["label"], 100 * float(m["scale"])) for m in _PATH_TEXT.finditer(text)]
    sizes += [(m["label"].strip(), float(m["size"])) for m in _SVG_TEXT.finditer(text)]
    return float(box["w"]), sizes


def small_svg_text(seen: dict, minimum: float = MIN_FIGURE_TEXT_PX) -> list[str]:
    """The texts of a page's SVG figures smaller than ``minimum`` CSS pixels as shown.

    ``seen`` is :func:`inspect_page`'s report: the size in pixels is the font size in the
    SVG's units times the figure's displayed width over its viewBox width. A line per figure,
    naming its smallest text (``tests/test_book_build.py`` requires none in a 1280-px window).
    """
    findings = []
    for url, shown in seen["svgFigures"]:
        path = Path(unquote(urlparse(url).path))
        width, sizes = svg_text_sizes(path)
        small = sorted((size * shown / width, label) for label, size in sizes
                       if size * shown / width < minimum)
        if small:
            px, label = small[0]
            findings.append(f"{path.name}: {len(small)} of {len(sizes)} texts under "
                            f"{minimum:g} px, the smallest {label!r} at {px:.1f} px")
    return findings


def screenshot(driver, page: Path, out: Path, width: int | None = None) -> Path:
    """A full-length PNG of ``page`` at ``width`` (default: the window's), collapsed blocks
    closed as a reader first sees them."""
    width = width or driver.execute_script("return window.innerWidth")
    set_width(driver, width)
    driver.get(Path(page).resolve().as_uri())
    driver.execute_async_script(
        "const done = arguments[0]; (typeof MathJax !== 'undefined' && MathJax.startup"
        " ? MathJax.startup.promise : Promise.resolve()).then(() => done(), () => done());")
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(max(height, WINDOW[1]), 30000))
    out.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(out))
    driver.set_window_size(width, WINDOW[1])
    return out
