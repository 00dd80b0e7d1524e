"""Look at built pages the way a reader will, in seconds, before committing a chapter.

``python -m tools.check_pages 12_mark_evaluate [13_sensitivity ...]`` copies the book into
``_build/check_pages`` with every chapter taken from its committed, executed ``.ipynb``, builds
it without executing anything (about 20 s, against many minutes for ``make book``), then opens
the named pages in headless Chromium at each common window width (1280, 1440 and 1920 px;
``--width`` picks one) and prints what :func:`tools.browser.inspect_page` finds: anything that
scrolls sideways or runs past the text column (collapsed blocks opened), blurry or broken
figures, raw TeX, test-harness markers, more or fewer than one search box; and, as notes, text
in SVG figures smaller than 9 px as shown. ``--shots`` also saves a full-length screenshot of
each page at each width.
The full check of every page is ``tests/test_book_build.py``. Book tooling, not library code.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import yaml

from tools import jupyter_book
from tools.browser import WIDTHS, inspect_page, make_driver, screenshot, small_svg_text

REPO = Path(__file__).resolve().parents[1]
PROBLEMS = ("broken", "blurry", "scrolling", "nbval", "solutionMarkers")


def prepare(outdir: Path, source: Path = REPO) -> Path:
    """Copy the book into ``outdir``, each paired chapter as its executed ``.ipynb``."""
    if outdir.exists():
        shutil.rmtree(outdir)
    for path in (source / "book").rglob("*"):
        rel = path.relative_to(source)
        if "_build" in rel.parts or path.is_dir():
            continue
        if path.suffix == ".md" and path.with_suffix(".ipynb").is_file():
            continue  # the executed twin is the page
        (outdir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, outdir / rel)
    shutil.copy2(source / "_toc.yml", outdir / "_toc.yml")
    config = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8"))
    config["execute"]["execute_notebooks"] = "off"
    config["exclude_patterns"] = ["_build"]
    (outdir / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return outdir


def build(outdir: Path) -> list[str]:
    """Build the copy (no execution); returns the warnings."""
    log = jupyter_book.build(outdir, strict=False, quiet=True, what="the check copy")
    return [line for line in log.splitlines() if "WARNING" in line]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.check_pages",
                                     description="Build the book without executing it and "
                                                 "inspect pages in headless Chromium.")
    parser.add_argument("stems", nargs="+", help="pages under book/, e.g. 12_mark_evaluate")
    parser.add_argument("--out", type=Path, default=REPO / "_build" / "check_pages")
    parser.add_argument("--shots", action="store_true", help="save full-page screenshots")
    parser.add_argument("--width", type=int, choices=WIDTHS, action="append",
                        help="a window width to check (default: all of them)")
    args = parser.parse_args(argv)
    out = prepare(args.out.resolve())
    warnings = build(out)
    print(f"built {out} without executing; {len(warnings)} warnings")
    for warning in warnings[:20]:
        print("  ", warning[:200])
    driver, failed = make_driver(), 0
    try:
        for stem in args.stems:
            page = out / "_build" / "html" / "book" / f"{stem}.html"
            if not page.is_file():
                print(f"{stem}: no such page")
                failed += 1
                continue
            for width in args.width or WIDTHS:
                failed += _report(driver, stem, page, width)
                if args.shots:
                    shot = out / "shots" / f"{stem}-{width}.png"
                    print("   screenshot:", screenshot(driver, page, shot, width))
    finally:
        driver.quit()
    return 1 if failed else 0


def _report(driver, stem: str, page: Path, width: int) -> bool:
    """Print what a reader meets on ``page`` at ``width``; True if anything is wrong."""
    seen = inspect_page(driver, page, width)
    problems = [(k, item) for k in PROBLEMS for item in seen[k]]
    if seen["rawDisplay"] or seen["rawInline"]:
        problems.append(("raw TeX", f"{seen['rawDisplay']} $$, {seen['rawInline']} \\("))
    if seen["searchBoxes"] != 1:
        problems.append(("search boxes", seen["searchBoxes"]))
    print(f"{stem} at {width} px ({seen['column']}-px column): {seen['images']} figures, "
          + ("OK" if not problems else f"{len(problems)} problems"))
    for kind, item in problems:
        print(f"   {kind}: {item}")
    for note in small_svg_text(seen):
        print(f"   note, small figure text: {note}")
    return bool(problems)


if __name__ == "__main__":
    sys.exit(main())
