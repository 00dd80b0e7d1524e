"""The chapter dependency map of "Using this book in a course" (book/course.md).

``python -m tools.chapter_map --write`` draws ``book/images/chapter_map.svg``: every chapter in
its part, an arrow from each chapter to those that build on it, and the assignment that
practises it; ``--check`` only says whether the committed figure is current
(``tests/test_front_matter.py`` fails when it is not). Chapter titles and parts come from
``_toc.yml`` and the chapter sources; the dependencies and the assignments' chapters are
declared below, and a chapter's cross-references to an earlier chapter must be reached by them.
(The study times on the same page are computed while the book builds, by the ``study-times``
directive of ``book/_ext/markeval_book.py``, so they follow every edit of a chapter.) Book
tooling, not library code.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FIGURE = REPO / "book" / "images" / "chapter_map.svg"

#: Chapter -> the earlier chapters it builds on (the ideas or code it uses, not every mention).
DEPENDS_ON = {
    1: (), 2: (1,), 3: (1,), 4: (3,), 5: (3, 4), 6: (3,),
    7: (1,), 8: (7,), 9: (8,), 10: (7,),
    11: (), 12: (10, 11), 13: (12,),
    14: (1, 3), 15: (9, 12, 14), 16: (5, 14), 17: (12, 16), 18: (2, 12),
    19: (10, 13, 15, 18),
}
#: Assignment -> the chapters it practises (book/assignments.md, "Covers").
ASSIGNMENTS = {1: (3,), 2: (4, 5), 3: (7, 8, 9), 4: (11, 12, 13)}

@dataclass(frozen=True)
class Chapter:
    number: int
    title: str
    label: str
    part: str


def chapters(source: Path = REPO) -> list[Chapter]:
    """The numbered chapters in reading order, with their part (its caption in ``_toc.yml``)."""
    toc = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))
    found, part = [], None
    for entry in toc["parts"]:
        part = entry.get("caption", part)  # a numbered group without caption continues a part
        for item in entry["chapters"]:
            path = source / f"{item['file']}.md"
            match = re.match(r"\d\d_", path.name)
            if match is None:
                continue
            text = path.read_text(encoding="utf-8")
            found.append(Chapter(
                number=int(path.name[:2]),
                title=re.search(r"^# (.+)$", text, re.M)[1].strip(),
                label=re.search(r"^\((ch-[\w-]+)\)=", text, re.M)[1],
                part=part))
    return found


def undeclared_dependencies(source: Path = REPO) -> list[str]:
    """Cross-references from a chapter to an earlier one that :data:`DEPENDS_ON` does not
    reach (directly or through other chapters)."""
    book = chapters(source)
    number = {c.label: c.number for c in book}

    def reaches(n: int, target: int) -> bool:
        return any(d == target or reaches(d, target) for d in DEPENDS_ON[n])

    problems = []
    for chapter in book:
        path = next((source / "book").glob(f"{chapter.number:02d}_*.md"))
        labels = re.findall(r"<(ch-[\w-]+)>", path.read_text(encoding="utf-8"))
        refs = {number[label] for label in labels if label in number}
        problems += [f"chapter {chapter.number} refers to chapter {r}, which DEPENDS_ON does "
                     f"not lead to" for r in sorted(refs)
                     if r < chapter.number and not reaches(chapter.number, r)]
    return problems


#: Names short enough for a box of the map, for the chapters whose titles are not.
SHORT_TITLES = {
    6: "chrF, TER, significance", 10: "Distributions of texts", 12: "Mark-Evaluate",
    13: "Sensitivity", 14: "Translation: metrics vs people",
    15: "Translation: embedding metrics", 16: "Summaries: metrics vs people",
    17: "Summaries: embedding metrics", 18: "Ranking generators", 19: "MAUVE",
}


def _wrapped(text: str, width: int = 17) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])


def _essential(depends_on: dict) -> dict:
    """The dependencies that no longer chain of dependencies implies (transitive reduction)."""
    def reaches(n, target):
        return any(d == target or reaches(d, target) for d in depends_on[n])

    return {n: tuple(d for d in needs if not any(reaches(o, d) for o in needs if o != d))
            for n, needs in depends_on.items()}


def draw(book: list[Chapter]) -> str:
    """The dependency map as SVG text.

    A row per part (in reading order, a part with several chapters at one step gets several
    lanes) and a column per step: a chapter sits one step right of the furthest chapter it
    builds on, so every arrow points right. Only essential arrows are drawn (none that a
    chain of others implies). A box names the assignment that practises its chapter (A1-A4).
    """
    import matplotlib

    matplotlib.use("svg")
    matplotlib.rcParams["svg.hashsalt"] = "markeval"  # stable ids: the file is committed
    from matplotlib import pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    step: dict[int, int] = {}
    for c in book:  # reading order: a chapter builds only on earlier ones
        step[c.number] = 1 + max((step[d] for d in DEPENDS_ON[c.number]), default=-1)
    parts = list(dict.fromkeys(c.part for c in book))
    lanes, where, row = {}, {}, 0
    for part in parts:
        used: dict[int, int] = {}
        for c in (c for c in book if c.part == part):
            lane = used.get(step[c.number], 0)
            used[step[c.number]] = lane + 1
            where[c.number] = (step[c.number], row + lane)
        lanes[part] = (row, max(used.values()))
        row += max(used.values())
    columns = max(step.values()) + 1
    label_w, col_w, lane_h, box_w, box_h = 1.1, 1.65, 0.8, 1.42, 0.66
    width = label_w + columns * col_w
    fig = plt.figure(figsize=(width, row * lane_h))
    ax = fig.add_axes((0, 0, 1, 1))  # data units are inches: text and boxes agree
    ax.set_xlim(0, width)
    ax.set_ylim(row * lane_h, 0)
    ax.axis("off")
    centre = {n: (label_w + (x + 0.5) * col_w, (y + 0.5) * lane_h) for n, (x, y) in where.items()}
    for i, part in enumerate(parts):
        top, n = lanes[part]
        if i % 2 == 0:
            ax.add_patch(plt.Rectangle((0, top * lane_h), width, n * lane_h, fc="#f4f4f4",
                                       ec="none", zorder=0))
        ax.text(0.06, (top + n / 2) * lane_h, _wrapped(part, 12), ha="left", va="center",
                fontsize=10.5, fontweight="bold", zorder=3)
    assignment_of = {c: a for a, covers in ASSIGNMENTS.items() for c in covers}
    titles = {c.number: SHORT_TITLES.get(c.number, c.title) for c in book}
    for c in book:
        cx, cy = centre[c.number]
        ax.add_patch(FancyBboxPatch((cx - box_w / 2, cy - box_h / 2), box_w, box_h,
                                    boxstyle="round,pad=0.01", fc="#eef4fb", ec="#3b6ea8",
                                    zorder=2))
        tag = f"\nAssignment {assignment_of[c.number]}" if c.number in assignment_of else ""
        ax.text(cx, cy, _wrapped(f"{c.number}. {titles[c.number]}") + tag,
                ha="center", va="center", fontsize=10, zorder=3, linespacing=1.15)
    for chapter, needs in _essential(DEPENDS_ON).items():
        for need in needs:
            (x0, y0), (x1, y1) = centre[need], centre[chapter]
            bend = 0.0 if abs(y0 - y1) < 1e-9 else (-0.12 if y1 > y0 else 0.12)
            ax.add_patch(FancyArrowPatch((x0 + box_w / 2, y0), (x1 - box_w / 2, y1),
                                         arrowstyle="-|>", mutation_scale=9, color="#3b6ea8",
                                         lw=0.9, zorder=1, shrinkA=1, shrinkB=1,
                                         connectionstyle=f"arc3,rad={bend}"))
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return out.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.chapter_map", description=__doc__
                                     .split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="write the figure")
    group.add_argument("--check", action="store_true", help="exit 1 if it is stale")
    args = parser.parse_args(argv)
    problems = undeclared_dependencies()
    if problems:
        print("\n".join(problems))
        return 1
    svg = draw(chapters())
    if args.check:
        stale = not FIGURE.is_file() or FIGURE.read_text(encoding="utf-8") != svg
        if stale:
            print(f"stale: {FIGURE.relative_to(REPO)} (run `python -m tools.chapter_map --write`)")
        return 1 if stale else 0
    FIGURE.parent.mkdir(parents=True, exist_ok=True)
    FIGURE.write_text(svg, encoding="utf-8")
    print(f"wrote {FIGURE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
