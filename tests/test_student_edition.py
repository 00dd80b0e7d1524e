"""The student edition: built from the committed notebooks, no solution survives in its HTML.

The secrets are read from the instructor sources: every line of code between the nbgrader
markers and every line of a ``{solution}`` block, in the assignments and in the chapters. A line
that also appears outside those regions (a blank line, ``return best`` …) is not a secret. The
edition is built once, without executing anything, and every page's text is searched for every
secret line.
"""

from __future__ import annotations

import html
import re

import nbformat
import pytest

from conftest import REPO, toc_files
from tools import student_edition as se

ASSIGNMENTS = sorted((REPO / "book").glob("assignment_*.md"))


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _regions(text: str) -> tuple[list[str], str]:
    """Lines inside solution regions/blocks of one MyST source, and the text outside them."""
    secret, public, inside = [], [], None
    for line in text.split("\n"):
        stripped = line.strip()
        if inside is None and stripped == se.BEGIN:
            inside = "code"
        elif inside == "code" and stripped == se.END:
            inside = None
        elif inside is None and se._FENCE_START.match(line):
            inside = re.compile(rf"^[ \t]*{re.escape(se._FENCE_START.match(line)['fence'])}[ \t]*$")
        elif isinstance(inside, re.Pattern) and inside.match(line):
            inside = None
        elif inside is not None:
            if not stripped.startswith(":class:"):
                secret.append(stripped)
        else:
            public.append(line)
    return secret, "\n".join(public)


def _secret_lines() -> list[str]:
    sources = [p.read_text(encoding="utf-8") for p in sorted((REPO / "book").glob("*.md"))
               if p.stem not in {s.split("/")[-1] for s in se.INSTRUCTOR_ONLY}]
    secrets, public = [], []
    for text in sources:
        s, p = _regions(text)
        secrets += s
        public.append(_normalise(p))
    public_text = "\n".join(public)
    # Distinctive lines only: long enough to be specific, and not also written in the open.
    return sorted({_normalise(s) for s in secrets
                   if len(_normalise(s)) >= 24 and _normalise(s) not in public_text})


def _page_text(path) -> str:
    raw = path.read_text(encoding="utf-8")
    raw = re.sub(r"<script.*?</script>", " ", raw, flags=re.S)
    return _normalise(html.unescape(re.sub(r"<[^>]+>", "", raw)))


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    counts = se.prepare(REPO, out)
    # -W is the main build's business (tests/test_book_build.py); here we look for leaks.
    html_dir = se.build(out, strict=False)
    return out, html_dir, counts


def test_there_are_secrets_to_hide():
    secrets = _secret_lines()
    assert len(secrets) >= 60, f"only {len(secrets)} solution lines found: is the scan broken?"
    assert any("def " not in s and "return" in s for s in secrets)


def test_every_assignment_has_solution_regions_and_checks():
    for md in ASSIGNMENTS:
        text = md.read_text(encoding="utf-8")
        assert text.count(se.BEGIN) == text.count(se.END) >= 5, md.name
        assert "A.check(" in text and "A.summary()" in text, md.name


def test_prepare_counts(edition):
    _, _, counts = edition
    assert counts["solution_regions"] == sum(md.read_text(encoding="utf-8").count(se.BEGIN)
                                             for md in ASSIGNMENTS)
    assert counts["solution_blocks"] >= 40  # chapters' and assignments' {solution} blocks
    assert counts["notebooks"] >= 19


def test_pages_are_built_and_instructor_notes_left_out(edition):
    _, html_dir, _ = edition
    for stem in toc_files():
        path = html_dir / f"{stem}.html"
        if stem in se.INSTRUCTOR_ONLY:
            assert not path.exists(), f"{stem} is in the student edition"
        else:
            assert path.is_file(), f"{stem}.html missing from the student edition"


def test_no_solution_survives_in_the_html(edition):
    _, html_dir, _ = edition
    assert se.scan_html(html_dir) == []
    secrets = _secret_lines()
    pages = {p.relative_to(html_dir).as_posix(): _page_text(p) for p in html_dir.rglob("*.html")}
    leaks = [(name, s) for name, text in pages.items() for s in secrets if s in text]
    assert not leaks, f"{len(leaks)} solution lines in the HTML, e.g. {leaks[:3]}"
    # Positive control: the same text extraction does find code that belongs on the page.
    page = pages["book/assignment_1_ngram_metrics.html"]
    assert 'A.check("q5", my_corpus_bleu)' in page
    assert "def my_corpus_bleu(hypotheses, references): raise NotImplementedError()" in page


def test_student_notebooks(edition):
    out, _, _ = edition
    for md in ASSIGNMENTS:
        nb = nbformat.read(out / "book" / f"{md.stem}.ipynb", 4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            if "raise NotImplementedError()" in cell.source:
                assert cell.outputs == [], f"{md.stem}: a stripped cell kept its outputs"
                top = any(line == "raise NotImplementedError()" for line in cell.source.split("\n"))
                tags = cell.metadata.get("tags", [])
                assert ("raises-exception" in tags) == top, f"{md.stem}: {cell.source[:80]!r}"
            if ".check(" in cell.source:
                assert cell.outputs == [], f"{md.stem}: a check cell kept its verdict"


def test_strip_solution_code_keeps_indentation_and_flags_top_level():
    code = "x = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION\nprint(x)"
    assert se.strip_solution_code(code) == ("x = 1\nraise NotImplementedError()\nprint(x)", 1, True)
    nested = "def f():\n        ### BEGIN SOLUTION\n        return 1\n        ### END SOLUTION"
    assert se.strip_solution_code(nested) == ("def f():\n        raise NotImplementedError()", 1,
                                              False)
    for bad, message in (("### BEGIN SOLUTION\nx = 1", "has no"),
                         ("x = 1\n### END SOLUTION", "without"),
                         ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "nested")):
        with pytest.raises(ValueError, match=message):
            se.strip_solution_code(bad)


def test_strip_solution_blocks():
    text = "a\n:::{solution} x\nhidden\n:::\nb\n````{solution} y\n```python\ncode\n```\n````\nc"
    out, n = se.strip_solution_blocks(text)
    assert n == 2 and "hidden" not in out and "code" not in out
    assert out.split("\n") == ["a", se.HIDDEN_NOTE, "b", se.HIDDEN_NOTE, "c"]
    with pytest.raises(ValueError, match="unclosed"):
        se.strip_solution_blocks("````{solution} x\nnever closed\n```")


def test_outdir_inside_book_is_refused(tmp_path):
    with pytest.raises(ValueError, match="must not"):
        se.prepare(REPO, REPO / "book" / "student")
