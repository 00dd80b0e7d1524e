"""Numbered, captioned tables from notebook outputs: a DataFrame a code cell shows becomes
"Table 13.2" with its caption above it, and ``{numref}`` refers to it like to a figure.

MyST-NB numbers and captions a cell's output through the cell's metadata::

    ---
    mystnb:
      figure:
        caption: What the output shows, in a sentence or two (MyST markup works).
        name: fig-k-sweep
    ---

but always as a *figure* ("Fig. 13.1"), whether the output is a plot or a table. Here a
captioned output whose name starts with ``tbl-`` (the convention Quarto uses for the same
choice) is numbered in the sequence of tables instead, with its caption above it as tables
have: its figure node becomes a :class:`numbered_table`, registered with Sphinx as an
enumerable node of type ``table``. So ``{numref}`tbl-k-sweep``` reads "Table 13.2" in the
HTML pages and in the single-page build the PDF is printed from, and the tables of a chapter
are counted together with the Markdown tables of its text (``{table}`` directives). A
``tbl-`` name on an output that is not a table, or a table output named ``fig-``, is a
warning (so an error in the ``-W`` build): a table made of an image, or a DataFrame counted
among the figures, would read wrongly.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The name prefixes that say what a captioned output is.
TABLE_PREFIX, FIGURE_PREFIX = "tbl-", "fig-"


class numbered_table(nodes.General, nodes.Element):  # noqa: N801 (docutils node naming)
    """A notebook output shown as a numbered table: a caption, then the output."""


def _shows_a_table(figure: nodes.figure) -> bool:
    """Whether the output in ``figure`` is an HTML table (a DataFrame) and not an image."""
    mimes = {c.get("mime_type", "") for c in figure.findall(nodes.container)}
    html = [n for n in figure.findall(nodes.raw) if "html" in n.get("format", "")]
    return (not any(m.startswith("image/") for m in mimes)
            and any("<table" in n.astext() for n in html))


class TablesFromOutputs(SphinxTransform):
    """Turn MyST-NB's captioned output figures named ``tbl-...`` into numbered tables.

    Runs before Sphinx collects the labels of the page (priority 850), so that a reference
    to the name finds the table node.
    """

    default_priority = 840

    def apply(self, **kwargs) -> None:
        for figure in list(self.document.findall(nodes.figure)):
            if not any(c.get("nb_element") == "mime_bundle" for c in figure.children):
                continue  # a {figure} directive of the text, not a cell's output
            if not figure["names"]:
                continue
            names, table = figure["names"], _shows_a_table(figure)
            if names[0].startswith(TABLE_PREFIX) != table:
                kind, prefix = ("a table", TABLE_PREFIX) if table else ("a figure",
                                                                      FIGURE_PREFIX)
                logger.warning(f"the output named {names[0]!r} is {kind}: name it "
                               f"{prefix}...", location=figure)
            if table and names[0].startswith(TABLE_PREFIX):
                self._replace(figure)

    def _replace(self, figure: nodes.figure) -> None:
        captions = [c for c in figure.children if isinstance(c, nodes.caption)]
        rest = [c for c in figure.children if not isinstance(c, nodes.caption)]
        table = numbered_table("", *captions, *rest, ids=figure["ids"], names=figure["names"],
                               classes=figure["classes"])
        table.source, table.line = figure.source, figure.line
        figure.replace_self(table)
        for node_id in table["ids"]:
            self.document.ids[node_id] = table


def _visit_html(self, node: numbered_table) -> None:
    """``<figure>``, the caption in a ``<figcaption>`` as a figure's is (and so styled like
    one), then the output. Sphinx's caption visitor numbers the caption from its parent."""
    self.body.append(self.starttag(node, "figure", CLASS="numbered-table"))
    for child in node.children:
        if isinstance(child, nodes.caption):
            self.body.append("<figcaption>\n")
            child.walkabout(self)
            self.body.append("</figcaption>\n")
        else:
            child.walkabout(self)
    self.body.append("</figure>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_enumerable_node(numbered_table, "table", html=(_visit_html, None))
    app.add_transform(TablesFromOutputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
