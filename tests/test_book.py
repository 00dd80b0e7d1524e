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
        assert (REPO / f"{stem}.md").is_file(), f"_toc.yml lists {stem} but {stem}.md is missing"


def test_every_chapter_is_in_the_toc():
    listed = set(toc_files())
    for md in CHAPTERS:
        stem = md.relative_to(REPO).with_suffix("").as_posix()
        assert stem in listed, f"{stem}.md is not in _toc.yml"


def test_toc_has_the_books_parts():
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    captions = [part["caption"] for part in toc["parts"]]
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
def test_setup_cell_installs_from_the_configured_repository(md):
    """Colab installs markeval from the same repository the launch buttons point at."""
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"]
    notebook = jupytext.read(md)
    first = next(c for c in notebook.cells if c.cell_type == "code")
    assert "hide-input" in first.metadata.get("tags", []), f"{md.name}: setup cell is not hide-input"
    assert "google.colab" in first.source and f"git+{url}\"" in first.source, (
        f"{md.name}: the setup cell must install git+{url} in Colab"
    )


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
