"""Book structure: pairs in sync, notebooks executed, table of contents and files agree."""

from __future__ import annotations

import json
import re

import jupytext
import pytest
import yaml
from jupytext.compare import compare_notebooks

from conftest import REPO, chapter_sources, toc_files

CHAPTERS = chapter_sources()
IDS = [p.stem for p in CHAPTERS]


def test_there_are_chapters():
    assert CHAPTERS, "no paired chapter sources found under book/"


def test_toc_lists_existing_files_once():
    stems = toc_files()
    assert len(stems) == len(set(stems)), "a file appears twice in _toc.yml"
    for stem in stems:
        student = stem.startswith("book/student/") and (REPO / f"{stem}.ipynb").is_file()
        assert (REPO / f"{stem}.md").is_file() or student, (
            f"_toc.yml lists {stem} but {stem}.md is missing")


def test_every_chapter_is_in_the_toc():
    listed = set(toc_files())
    for md in CHAPTERS:
        stem = md.relative_to(REPO).with_suffix("").as_posix()
        # an assignment is listed as its student notebook (the instructor build swaps it back)
        assert stem in listed or f"book/student/{md.stem}" in listed, f"{stem}.md is not in _toc.yml"


def test_toc_has_the_books_parts():
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    captions = [part["caption"] for part in toc["parts"] if "caption" in part]
    for part in ("Foundations", "Lexical metrics", "Embedding metrics", "Distribution metrics",
                 "Mark-Evaluate", "Assignments"):
        assert part in captions, f"_toc.yml has no part {part!r}"


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_pair_in_sync(md):
    ipynb = md.with_suffix(".ipynb")
    assert ipynb.is_file(), f"{md.name} has no paired {ipynb.name}"
    text = jupytext.read(md)
    notebook = jupytext.read(ipynb)
    assert text.metadata["jupytext"]["formats"] == "ipynb,md:myst"
    compare_notebooks(notebook, text, fmt="md:myst", allow_expected_differences=False)


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_notebook_is_executed_cleanly(md):
    notebook = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    code = [c for c in notebook["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert code, f"{md.name} has no code"
    counts = [c["execution_count"] for c in code]
    assert all(counts), f"{md.stem}.ipynb has unexecuted code cells"
    assert counts == sorted(counts), f"{md.stem}.ipynb was not executed top to bottom"
    for cell in code:
        for out in cell["outputs"]:
            assert out["output_type"] != "error" or "raises-exception" in cell["metadata"].get("tags", []), (
                f"{md.stem}.ipynb has an error output"
            )
            assert not (out["output_type"] == "stream" and out["name"] == "stderr"), (
                f"{md.stem}.ipynb writes to stderr: {''.join(out['text'])[:200]!r}"
            )


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_setup_cell_is_hidden_and_takes_colabs_branch_only_there(md):
    """The setup cell (written by tools/setup_cells.py; tests/test_colab_setup.py checks what
    it installs) is folded away on the page and installs nothing outside Colab."""
    notebook = jupytext.read(md)
    first = next(c for c in notebook.cells if c.cell_type == "code")
    assert "hide-input" in first.metadata.get("tags", []), f"{md.name}: setup cell is not hide-input"
    assert 'if "google.colab" in sys.modules:' in first.source, md.name


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_chapter_has_exercises(md):
    text = md.read_text(encoding="utf-8")
    assert len(re.findall(r"^`{3,}\{exercise\}", text, flags=re.M)) >= 3, f"{md.name}: fewer than 3 exercises"


_PAPER_NUMBER = re.compile(r"(?<![\d.])0\.\d{3}(?!\d)")


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_no_chapter_types_a_paper_number_in_code(md):
    """The papers' numbers come from markeval.paper_values (checked against the papers' text).

    A code cell holding two or more three-decimal literals from the same table of a paper has
    typed that table in by hand: read it with paper_value / paper_table instead. (One literal
    alone is too often a coincidence — a cosine of 0.866, a 0.975 quantile — to flag.) Prose
    may quote a number, naming its table.
    """
    from markeval.paper_values import VALUES

    tables: dict[str, set] = {}
    for v in VALUES:
        tables.setdefault(f"{v.value:.3f}", set()).add((v.paper, v.table))
    nb = jupytext.read(md)
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        found = [m for m in set(_PAPER_NUMBER.findall(cell.source)) if m in tables]
        for paper_table in {t for m in found for t in tables[m]}:
            typed = sorted(m for m in found if paper_table in tables[m])
            assert len(typed) < 2, (
                f"{md.name}, code cell {i}, types {' '.join(paper_table)} numbers: {typed}")


def test_no_tracker_wording_in_the_book():
    for md in sorted((REPO / "book").glob("*.md")):
        text = md.read_text(encoding="utf-8")
        for phrase in ("issue #", "by issue", "from memory"):
            assert phrase not in text, f"{md.name} says {phrase!r}"


# --- what a reader sees: checks on the committed sources and executed notebooks -------------

#: Longest printed output line: 100 characters fit the text column (book/_static/markeval.css).
MAX_OUTPUT_CHARS = 100
NOTEBOOKS = [md.with_suffix(".ipynb") for md in CHAPTERS] + sorted(
    (REPO / "book" / "student").glob("*.ipynb"))


def _printed_lines(output: dict) -> list[str]:
    """The text lines an output shows as plain text (HTML tables and figures render as such)."""
    if output["output_type"] == "stream":
        text = output["text"]
    elif output["output_type"] == "error":
        text = output.get("evalue", "")
    else:
        data = output.get("data", {})
        if "text/html" in data or any(k.startswith("image/") for k in data):
            return []
        text = data.get("text/plain", "")
    return "".join(text).splitlines()


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_outputs_fit_the_page(ipynb):
    notebook = json.loads(ipynb.read_text(encoding="utf-8"))
    wide = [line for cell in notebook["cells"] if cell["cell_type"] == "code"
            for out in cell.get("outputs", []) for line in _printed_lines(out)
            if len(line) > MAX_OUTPUT_CHARS]
    assert not wide, (f"{ipynb.name}: {len(wide)} output lines over {MAX_OUTPUT_CHARS} "
                      f"characters, e.g. {wide[0][:120]!r}")


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_shown_code_fits_the_page(md):
    """Code a reader sees (not the hidden setup cell) wraps before 100 characters."""
    wide = [line for cell in jupytext.read(md).cells if cell.cell_type == "code"
            and "hide-input" not in cell.metadata.get("tags", [])
            for line in cell.source.splitlines() if len(line) > MAX_OUTPUT_CHARS]
    assert not wide, f"{md.name}: {len(wide)} code lines over {MAX_OUTPUT_CHARS} characters: {wide[0]!r}"


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_figures_are_vector_graphics(ipynb):
    """SVG stays sharp on any screen; a PNG at screen resolution is blurry on high-DPI ones."""
    notebook = json.loads(ipynb.read_text(encoding="utf-8"))
    raster = sum("image/png" in out.get("data", {}) and "image/svg+xml" not in out["data"]
                 for cell in notebook["cells"] if cell["cell_type"] == "code"
                 for out in cell.get("outputs", []))
    assert raster == 0, f"{ipynb.name}: {raster} figures are PNG; the setup cell sets SVG"


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_no_test_harness_in_what_readers_see(md):
    """nbval's markers are cell tags, not comments; solution markers stay out of chapters."""
    text = md.read_text(encoding="utf-8")
    assert "NBVAL_" not in text, f"{md.name}: use the nbval-check-output tag, not a comment"
    if md.stem[:2].isdigit():
        assert "BEGIN SOLUTION" not in text, f"{md.name}: solution markers in a chapter"


@pytest.mark.parametrize("md", CHAPTERS, ids=IDS)
def test_chapters_link_to_chapters(md):
    """'chapter 11' in plain text goes stale when chapters move: use {numref} or {doc}."""
    text = re.sub(r"\{(numref|doc|ref)\}`[^`]*`", "", md.read_text(encoding="utf-8"))
    plain = re.findall(r".{0,30}\b[Cc]hapters? \d+.{0,20}", text)
    assert not plain, f"{md.name}: plain-text chapter references: {plain}"


@pytest.mark.parametrize("md", [m for m in CHAPTERS if m.stem[:2].isdigit()],
                         ids=[m.stem for m in CHAPTERS if m.stem[:2].isdigit()])
def test_chapter_ends_with_summary_and_references(md):
    headings = re.findall(r"^## (.+)$", md.read_text(encoding="utf-8"), flags=re.M)
    assert "Summary" in headings, f"{md.name}: no ## Summary section"
    assert headings[-1] == "References", f"{md.name}: the last section must be ## References"
    assert "```{chapter-references}" in md.read_text(encoding="utf-8"), (
        f"{md.name}: the References section must hold the chapter-references directive")


def _title(stem: str) -> str:
    path = REPO / f"{stem}.md"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        cells = json.loads((REPO / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.search(r"^# (.+)$", text, flags=re.M)[1].strip()


def test_sidebar_names_are_distinct():
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    captions = {part["caption"] for part in toc["parts"] if "caption" in part}
    titles = [_title(stem) for stem in toc_files()]
    repeated = sorted({t for t in titles if titles.count(t) > 1})
    assert not repeated, f"pages share a sidebar name: {repeated}"
    assert not captions & set(titles), f"pages named like their part: {captions & set(titles)}"


def test_chapter_numbers_are_file_numbers():
    """The numbered groups of the toc list NN_*.md in order 1, 2, 3, ...: the number a reader
    sees in the sidebar is the number in the file name."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    numbered = [entry["file"] for part in toc["parts"] if part.get("numbered")
                for entry in part["chapters"]]
    numbers = [int(re.match(r"book/(\d+)_", stem)[1]) for stem in numbered]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    unnumbered = [entry["file"] for part in toc["parts"] if not part.get("numbered")
                  for entry in part["chapters"]]
    assert not [s for s in unnumbered if re.match(r"book/\d+_", s)], unnumbered


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_outputs_greet_readers_calmly(ipynb):
    """An untouched exercise prints a neutral "○ not answered yet", never a ✗ failure; and no
    output reports how long this machine took (it differs on the reader's)."""
    notebook = json.loads(ipynb.read_text(encoding="utf-8"))
    lines = [line for cell in notebook["cells"] if cell["cell_type"] == "code"
             for out in cell.get("outputs", []) for line in _printed_lines(out)]
    failures = [line for line in lines if line.startswith("✗")]
    assert not failures, f"{ipynb.name}: a starter greets readers with {failures[0]!r}"
    timings = [line for line in lines
               if re.search(r"\b(ran|took|in) \d+(\.\d+)? ?(s|seconds)\b", line)]
    assert not timings, f"{ipynb.name}: machine-dependent timing shown: {timings[0]!r}"


# --- numbered, captioned figures and tables -------------------------------------------------

NUMBERED = [md for md in CHAPTERS if md.stem[:2].isdigit()]
_MD_TABLE_ROW = re.compile(r"^\|.*\|\s*$")


def _shown_outputs(cell: dict) -> list[str]:
    """What a code cell shows as a figure or a table: ``"fig"`` per image, ``"tbl"`` per HTML
    table (a DataFrame), in order; glued values (shown elsewhere on the page) left out."""
    kinds = []
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if "scrapbook" in out.get("metadata", {}):
            continue
        if any(key.startswith("image/") for key in data):
            kinds.append("fig")
        elif "<table" in "".join(data.get("text/html", "")):
            kinds.append("tbl")
    return kinds


def _captioned(md) -> list[tuple[str, str]]:
    """(name, problem or "") of every figure and table the chapter shows: its code cells'
    outputs (captioned in the cell's ``mystnb.figure`` metadata) and its Markdown tables
    (captioned by a ``{table}`` directive)."""
    found = []
    notebook = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    for i, cell in enumerate(c for c in notebook["cells"] if c["cell_type"] == "code"):
        kinds = _shown_outputs(cell)
        if not kinds:
            continue
        figure = cell["metadata"].get("mystnb", {}).get("figure", {})
        name, caption = figure.get("name", ""), str(figure.get("caption", "")).strip()
        where = f"code cell {i} ({''.join(cell['source'])[:40]!r}...)"
        problem = ""
        if len(kinds) > 1:
            problem = f"{where} shows {len(kinds)} figures/tables: one per cell"
        elif not (name and caption):
            problem = f"{where} shows a {kinds[0]} without mystnb.figure caption and name"
        elif not name.startswith(f"{kinds[0]}-"):
            problem = f"{where}: a {kinds[0]} must be named {kinds[0]}-..., not {name!r}"
        found.append((name or where, problem))
    text = md.read_text(encoding="utf-8")
    for block in re.split(r"^```", text, flags=re.M)[1::2]:  # inside fences: skip code
        if block.startswith("{table}"):
            named = re.search(r"^:name: (\S+)", block, flags=re.M)
            caption = block.split("\n", 1)[0].removeprefix("{table}").strip()
            ok = named and named[1].startswith("tbl-") and caption
            found.append((named[1] if named else "a {table}", "" if ok else
                          "a {table} needs a caption and a :name: tbl-..."))
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    rows = [line for line in prose.splitlines() if _MD_TABLE_ROW.match(line)]
    if rows:
        found.append(("markdown table", f"a Markdown table outside a {{table}} directive: "
                                        f"{rows[0][:60]!r}"))
    return found


@pytest.mark.parametrize("md", NUMBERED, ids=[m.stem for m in NUMBERED])
def test_figures_and_tables_are_numbered_captioned_and_referenced(md):
    """Every figure and table a chapter shows has a caption and a name (so the book numbers
    it: "Fig. 13.2", "Table 13.4"), and the text refers to it with {numref}."""
    found = _captioned(md)
    problems = [problem for _, problem in found if problem]
    assert not problems, f"{md.name}: {problems}"
    text = md.read_text(encoding="utf-8")
    unreferenced = [name for name, _ in found
                    if not re.search(rf"\{{numref\}}`([^`<]*<)?{re.escape(name)}>?`", text)]
    assert not unreferenced, f"{md.name}: never referred to with {{numref}}: {unreferenced}"


def test_figure_and_table_names_are_unique_in_the_book():
    names = [name for md in NUMBERED for name, problem in _captioned(md) if not problem]
    repeated = sorted({n for n in names if names.count(n) > 1})
    assert not repeated, f"figure/table names used twice: {repeated}"


_PROVENANCE_LINE = re.compile(r"\bcommit [0-9a-f]{7,}|\b\d+ s on \d+ cores|\btook \d+ min\b")


@pytest.mark.parametrize("ipynb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_provenance_stays_in_its_box(ipynb):
    """Commits, machines and compute times are in the collapsed "How these numbers were made"
    box (markeval.reproduce.results.provenance_box, a removed cell glued into the box), never
    in an output in the body of the page."""
    notebook = json.loads(ipynb.read_text(encoding="utf-8"))
    lines = [line for cell in notebook["cells"] if cell["cell_type"] == "code"
             and "remove-cell" not in cell["metadata"].get("tags", [])
             for out in cell.get("outputs", []) for line in _printed_lines(out)
             if _PROVENANCE_LINE.search(line)]
    assert not lines, f"{ipynb.name}: provenance printed in the body: {lines[0]!r}"


# --- where links point ------------------------------------------------------------------------

_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#@!$&*+,;=%-]+")
#: The two licence texts the landing page links (the files LICENSE and LICENSE-CC-BY-4.0 hold them).
LICENCES = {"https://opensource.org/license/mit": "LICENSE",
            "https://creativecommons.org/licenses/by/4.0/": "LICENSE-CC-BY-4.0"}


def allowed_url(url: str) -> bool:
    """A URL comes from the one repository setting (``repository.url``, Colab's launch URL in
    ``_config.yml``), from the pinned data sources (their files and the repositories that hold
    them), or is a licence text."""
    from markeval.datasets._sources import SOURCES

    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    roots = [config["repository"]["url"].rstrip("/"), config["launch_buttons"]["colab_url"]]
    for source in SOURCES.values():
        roots.append(source.base_url.rstrip("/"))
        raw = re.match(r"https://raw\.githubusercontent\.com/([^/]+/[^/]+)/", source.base_url)
        if raw:
            roots.append(f"https://github.com/{raw[1]}")
    url = url.rstrip(".,;:")
    return url in LICENCES or any(url == root or url.startswith(root + "/") for root in roots)


def _reader_urls(notebook: dict) -> set[str]:
    """The URLs a reader meets in a notebook: its text, its code and what it prints (a
    figure's SVG names XML namespaces, which are no links)."""
    texts = []
    for cell in notebook["cells"]:
        texts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            texts.append("".join(out.get("text", "")))
            for mime, value in out.get("data", {}).items():
                if mime.startswith("text/") or mime.endswith("json"):
                    texts.append(value if isinstance(value, str) else "".join(value))
    return {url for text in texts for url in _URL.findall(text)}


def test_every_url_comes_from_the_setting_or_the_data_sources():
    notebooks = [*sorted((REPO / "book").glob("*.ipynb")),
                 *sorted((REPO / "book" / "student").glob("*.ipynb"))]
    pages = sorted((REPO / "book").glob("*.md"))
    found = {}
    for path in notebooks:
        for url in _reader_urls(json.loads(path.read_text(encoding="utf-8"))):
            found.setdefault(url, path.relative_to(REPO).as_posix())
    for path in pages:
        for url in _URL.findall(path.read_text(encoding="utf-8")):
            found.setdefault(url, path.relative_to(REPO).as_posix())
    stray = {url: where for url, where in found.items() if not allowed_url(url)}
    assert not stray, f"URLs from neither the repository setting nor the data sources: {stray}"
    assert any(url.startswith("https://github.com/AIPHES/") for url in found)  # a data source
    for file in LICENCES.values():
        assert (REPO / file).is_file()


def test_the_url_check_refuses_a_hard_coded_repository():
    assert allowed_url(yaml.safe_load((REPO / "_config.yml").read_text())["repository"]["url"]
                       + "/issues")
    assert not allowed_url("https://github.com/someone-else/markeval/issues")
    assert not allowed_url("https://raw.githubusercontent.com/markeval/markeval/main/x.csv")
    assert allowed_url("https://github.com/AIPHES/emnlp19-moverscore")
    notebook = {"cells": [{"source": ["see https://example.org/x"], "outputs": [
        {"data": {"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'/>"}}]}]}
    assert _reader_urls(notebook) == {"https://example.org/x"}
