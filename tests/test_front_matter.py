"""The front and back matter: licence, citation, course page and bibliography.

Fast checks on the sources (no build): the licence files and what the landing page says about
them; ``CITATION.cff`` against the version and the BibTeX that the README and the landing page
print; the front-matter pages in the table of contents; the course page's dependency map and
study times current with the chapters; and every bibliography entry linked to its work or
marked as having no link.
"""

from __future__ import annotations

import importlib.util
import re

import pytest
import yaml

import markeval
from conftest import REPO, toc_files
from tools import chapter_map

FRONT_MATTER = ("book/preface", "book/notation", "book/course")


def _bibtex(text: str) -> dict[str, str]:
    block = re.search(r"```bibtex\n(@\w+\{markeval\d+,.*?\n\})\n```", text, flags=re.S)
    assert block, "no BibTeX entry for the book"
    return dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?$", block[1], flags=re.M))


def test_licences_for_code_and_text():
    code = (REPO / "LICENSE").read_text(encoding="utf-8")
    text = (REPO / "LICENSE-CC-BY-4.0").read_text(encoding="utf-8")
    assert code.startswith("MIT License") and "Permission is hereby granted" in code
    assert "Attribution 4.0 International Public License" in text
    assert "Section 8 -- Interpretation." in text, "the CC BY 4.0 legal code is incomplete"
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = "MIT"' in pyproject
    landing = (REPO / "book" / "index.md").read_text(encoding="utf-8")
    assert "(licence)=\n## Licence" in landing
    assert "CC BY 4.0" in landing and "MIT licence" in landing


def test_citation_file_matches_what_the_book_prints():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == markeval.__version__
    assert set(cff["license"]) == {"MIT", "CC-BY-4.0"}
    assert cff["repository-code"] == yaml.safe_load(
        (REPO / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    cited = cff["preferred-citation"]
    for source in ("README.md", "book/index.md"):
        bibtex = _bibtex((REPO / source).read_text(encoding="utf-8"))
        assert bibtex["title"] == cited["title"] == cff["title"], source
        assert bibtex["year"] == str(cited["year"]), source
        assert cff["repository-code"] in bibtex["howpublished"], source
        assert cited["authors"][0]["name"] in bibtex["author"], source


def test_front_matter_is_public_and_first():
    stems = toc_files()
    assert stems[1:4] == list(FRONT_MATTER), stems[:5]
    for stem in FRONT_MATTER:
        text = (REPO / f"{stem}.md").read_text(encoding="utf-8")
        assert "```{code-cell}" not in text, f"{stem}.md must need no execution"
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    assert config["html"]["use_edit_page_button"] and config["html"]["use_issues_button"]


def test_notation_covers_every_chapter_it_names():
    """Each row of the notation table links to a chapter that exists."""
    labels = set()
    for md in (REPO / "book").glob("[0-9][0-9]_*.md"):
        labels |= set(re.findall(r"^\((ch-[\w-]+)\)=", md.read_text(encoding="utf-8"), re.M))
    text = (REPO / "book" / "notation.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| $")]
    assert len(rows) > 40, "the notation table lost rows"
    for row in rows:
        refs = re.findall(r"<(ch-[\w-]+)>", row)
        assert refs and set(refs) <= labels, f"notation row names no existing chapter: {row}"


def test_chapter_map_and_study_times_are_current():
    assert chapter_map.undeclared_dependencies() == []
    assert set(chapter_map.DEPENDS_ON) == {c.number for c in chapter_map.chapters()}
    assert chapter_map.main(["--check"]) == 0, (
        "run `python -m tools.chapter_map --write`: the map or the table is stale")


def _book_extension():
    spec = importlib.util.spec_from_file_location(
        "markeval_book", REPO / "book" / "_ext" / "markeval_book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_bibliography_entry_links_to_its_work_or_says_why_not():
    ext = _book_extension()
    bib = REPO / "book" / "references.bib"
    assert ext.unlinked_entries(bib) == [], (
        "add a doi, eprint (arXiv) or url field, or a nolink field saying why there is none")
    from pybtex.database import parse_file

    entries = parse_file(str(bib)).entries
    for key, entry in entries.items():
        url = entry.fields.get("url", "")
        assert not url or url.startswith("https://"), f"{key}: url {url!r} is not https"
        eprint = entry.fields.get("eprint", "")
        assert not eprint or re.fullmatch(r"\d{4}\.\d{4,5}", eprint), f"{key}: eprint {eprint!r}"
        assert "arXiv:" not in entry.fields.get("journal", ""), (
            f"{key}: an arXiv identifier in the journal field belongs in eprint")


@pytest.mark.parametrize("bib, expected", [
    ("@misc{a, title={A}}", ["a"]),
    ("@misc{a, title={A}, url={https://x.org}}", []),
    ("@misc{a, title={A}, nolink={not known}}", []),
    ("@misc{a, title={A}, doi={ }}", ["a"]),
])
def test_the_link_check_finds_an_unlinked_entry(tmp_path, bib, expected):
    path = tmp_path / "refs.bib"
    path.write_text(bib, encoding="utf-8")
    assert _book_extension().unlinked_entries(path) == expected
