"""The book's Sphinx extension: author–year bibliography labels, a reference list at the end of
each chapter, and the single-page build that the PDF is printed from.

sphinxcontrib-bibtex already cites as "Papineni et al. (2002)" (``bibtex_reference_style:
author_year``), but its ``plain`` formatting style labels the entries of a bibliography with
numbers, so a reader cannot find a citation in the list by its name. This extension registers
the pybtex style ``author_year``: entries sorted by author, then year, and labelled
"Papineni et al., 2002" (the book cites with ``bibtex_reference_style: label``, so a
citation reads exactly like its entry's label).

The directive ``chapter-references`` lists, formatted the same way, the works its page cites.
The entries are plain text, not citation targets: every citation links to the one
bibliography page, so a work cited in several chapters is never a duplicate target.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from docutils import nodes
from pybtex.database import parse_file
from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle
from pybtex_docutils import Backend
from sphinx.util.docutils import SphinxDirective


def _surnames(entry) -> list[str]:
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    return [" ".join(p.prelast_names + p.last_names) for p in persons]


class AuthorYearLabels(BaseLabelStyle):
    """"Zhao et al., 2019"; two authors: "Lin and Och, 2004"; no author: the key.

    Two works with the same label get "a", "b", … in sorted order ("Bojar et al., 2017a").
    """

    def format_labels(self, sorted_entries):
        labels = [_label(entry) for entry in sorted_entries]
        counts = Counter(labels)
        seen: Counter = Counter()
        for label in labels:
            if counts[label] > 1:
                seen[label] += 1
                label += "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
            yield label


def _label(entry) -> str:
    names = [_latex_free(n) for n in _surnames(entry)]
    year = entry.fields.get("year", "n.d.")
    if not names:
        who = entry.key
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {year}"


def _latex_free(text: str) -> str:
    return Text.from_latex(text).render_as("text")  # "C\\'\\ifka" -> "Cífka"


class AuthorYearStyle(PlainStyle):
    default_label_style = AuthorYearLabels
    default_sorting_style = SortingStyle


_CITE = re.compile(r"\{cite(?::\w+)?\}`([^`]+)`")


class ChapterReferences(SphinxDirective):
    """The works cited on this page, in the bibliography's order and format."""

    def run(self):
        source = Path(self.env.doc2path(self.env.docname)).read_text(encoding="utf-8")
        cited = {key.strip() for match in _CITE.findall(source) for key in match.split(",")}
        entries = [entry for entry in _formatted(self.env) if entry.key in cited]
        if not entries:
            return [nodes.paragraph(text="This page cites no works.")]
        backend = Backend()
        items = nodes.bullet_list(classes=["chapter-references"])
        for entry in entries:
            para = nodes.paragraph()
            para += nodes.strong(text=f"[{entry.label}] ")
            para += entry.text.render(backend)
            items += nodes.list_item("", para)
        return [items]


def _formatted(env):
    # Labels are assigned over the whole bibliography, so "2017a"/"2017b" agree with it.
    entries = {}
    for name in env.config.bibtex_bibfiles:
        path = Path(env.srcdir) / name
        env.note_dependency(str(path))
        entries.update(parse_file(str(path)).entries)
    return list(AuthorYearStyle().format_entries(entries.values()))


def _singlehtml_like_html(app):
    # myst-nb and sphinx-jupyterbook-latex give some of their nodes (hidden cells) visitors for
    # the html builder only; the singlehtml build that tools/pdf.py prints needs the same ones.
    handlers = app.registry.translation_handlers
    for node, visitors in dict(handlers.get("html", {})).items():
        handlers.setdefault("singlehtml", {}).setdefault(node, visitors)


def setup(app):
    register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)
    app.add_directive("chapter-references", ChapterReferences)
    app.connect("builder-inited", _singlehtml_like_html)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
