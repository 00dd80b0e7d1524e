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

An assignment's exercises are numbered by their question: the exercise labelled ``a2-q3``
(Assignment 2, Q3) is "Exercise A2.3", in its caption and in every reference to it, instead
of a count running through the whole unnumbered Assignments part. The "A" keeps them apart
from the chapters' exercises ("Exercise 2.3" is chapter 2's third).

Numbers that the front matter quotes are computed where the book is built: the directive
``study-times`` and the role ``study-hours`` (a student's hours per chapter), and the role
``chapter-seconds`` (the chapters' median or longest execution time, from the execution
statistics page's measurements).
"""

from __future__ import annotations

import csv
import functools
import json
import math
import re
import statistics
from collections import Counter
from pathlib import Path

from docutils import nodes
from pybtex.database import parse_file
from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.template import field, href
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle
from pybtex_docutils import Backend
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

logger = logging.getLogger(__name__)

#: The fields that link an entry to the work, and the field that says why an entry has none.
LINK_FIELDS = ("doi", "eprint", "url")
NO_LINK_FIELD = "nolink"


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


# pybtex looks its text backend up among the installed packages' entry points on every
# render (tens of milliseconds in a full environment); a name is rendered once.
@functools.lru_cache(maxsize=None)
def _latex_free(text: str) -> str:
    return Text.from_latex(text).render_as("text")  # "C\\'\\ifka" -> "Cífka"


class AuthorYearStyle(PlainStyle):
    default_label_style = AuthorYearLabels
    default_sorting_style = SortingStyle

    def format_url(self, e):
        # An ACL Anthology page is named by its identifier, other addresses are shown as such.
        # Called for every entry: `optional[...]` drops it where the url field is missing.
        url = e.fields.get("url", "")
        acl = re.fullmatch(r"https://aclanthology\.org/([\w.-]+?)/?", url)
        return href(field("url", raw=True))[f"ACL Anthology {acl[1]}" if acl else
                                            field("url", raw=True)]


def unlinked_entries(bibfile: Path) -> list[str]:
    """The keys of the entries of ``bibfile`` with neither a link nor a reason for having none.

    Examples
    --------
    >>> import tempfile
    >>> bib = Path(tempfile.mkdtemp()) / "refs.bib"
    >>> _ = bib.write_text("@misc{a, title={A}, doi={10.1/x}}\\n@misc{b, title={B}}\\n"
    ...                    "@misc{c, title={C}, nolink={none known}}")
    >>> unlinked_entries(bib)
    ['b']
    """
    entries = parse_file(str(bibfile)).entries
    return [key for key, entry in entries.items()
            if not any(entry.fields.get(f, "").strip() for f in (*LINK_FIELDS, NO_LINK_FIELD))]


def _warn_unlinked(app):
    for name in app.config.bibtex_bibfiles:
        for key in unlinked_entries(Path(app.srcdir) / name):
            logger.warning(f"{name}: entry {key!r} has no doi, eprint or url, and no "
                           f"{NO_LINK_FIELD} field saying why", type="markeval", subtype="bib")


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
    paths = [Path(env.srcdir) / name for name in env.config.bibtex_bibfiles]
    for path in paths:
        env.note_dependency(str(path))
    return _formatted_files(tuple((str(path), path.stat().st_mtime_ns) for path in paths))


@functools.lru_cache(maxsize=4)
def _formatted_files(files: tuple[tuple[str, int], ...]) -> tuple:
    # Labels are assigned over the whole bibliography, so "2017a"/"2017b" agree with it. The
    # files are formatted once per build, not once per chapter (keyed by their modification
    # times, so an edited file is read again).
    entries = {}
    for path, _ in files:
        entries.update(parse_file(path).entries)
    return tuple(AuthorYearStyle().format_entries(entries.values()))


#: Study pace behind ``study-times``: words of prose read per minute (technical text with
#: equations), minutes per code cell (read it, run it, look at the output) and per exercise.
WORDS_PER_MINUTE = 100
MINUTES_PER_CELL = 1.5
MINUTES_PER_EXERCISE = 20


def study_hours(text: str) -> float:
    """A student's time for a chapter (MyST source), in hours rounded up to the half hour.

    Examples
    --------
    >>> study_hours("word " * 1500 + "```{code-cell}\\nx = 1\\n```\\n" * 20)
    1.0
    """
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    minutes = (len(prose.split()) / WORDS_PER_MINUTE + text.count("```{code-cell}")
               * MINUTES_PER_CELL + len(re.findall(r"[`:]{3,}\{exercise\}", text))
               * MINUTES_PER_EXERCISE)
    return math.ceil(minutes / 30) / 2


def _myst_text(path: Path) -> str:
    """A chapter's MyST text: the ``.md`` twin of a notebook where there is one, else the
    notebook's cells written as MyST (code cells as ``code-cell`` blocks)."""
    if path.with_suffix(".md").is_file():
        return path.with_suffix(".md").read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) if c["cell_type"] != "code"
                        else "```{code-cell} ipython3\n" + "".join(c["source"]) + "\n```"
                        for c in cells)


def _chapters(env) -> list[tuple[str, str, float]]:
    """The numbered chapters (``book/NN_*``) in order: label, title and :func:`study_hours`."""
    chapters = []
    for doc in sorted(d for d in env.found_docs if re.fullmatch(r"book/\d\d_\w+", d)):
        path = Path(env.doc2path(doc))
        env.note_dependency(str(path))
        text = _myst_text(path)
        label = re.search(r"^\((ch-[\w-]+)\)=", text, flags=re.M)[1]
        title = re.search(r"^# (.+)$", text, flags=re.M)[1].strip()
        chapters.append((label, title, study_hours(text)))
    return chapters


class StudyTimes(SphinxDirective):
    """The numbered chapters and their :func:`study_hours`, as a table."""

    def run(self):
        chapters = _chapters(self.env)
        rows = [f"| {{numref}}`%s <{label}>` | {title} | {hours:g} h |"
                for label, title, hours in chapters]
        total = sum(hours for _, _, hours in chapters)
        table = "\n".join(["| Chapter | | Study time |", "|---|---|---|", *rows,
                           f"| | **All {len(rows)} chapters** | **{total:g} h** |"])
        return self.parse_text_to_nodes(table)


class StudyHours(SphinxRole):
    """``{study-hours}`ch-a ch-b``: the chapters' study times added up, e.g. "6 h", so that a
    course plan's week states what the study-time table gives for its chapters."""

    def run(self):
        hours = {label: h for label, _, h in _chapters(self.env)}
        unknown = [label for label in self.text.split() if label not in hours]
        if unknown:
            msg = self.inliner.reporter.error(f"study-hours: no chapter labelled {unknown}",
                                              line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        return [nodes.Text(f"{sum(hours[label] for label in self.text.split()):g} h")], []


def _singlehtml_like_html(app):
    # myst-nb and sphinx-jupyterbook-latex give some of their nodes (hidden cells) visitors for
    # the html builder only; the singlehtml build that tools/pdf.py prints needs the same ones.
    handlers = app.registry.translation_handlers
    for node, visitors in dict(handlers.get("html", {})).items():
        handlers.setdefault("singlehtml", {}).setdefault(node, visitors)


#: The chapters' execution times that ``python -m tools.execution_stats`` measured.
EXECUTION_TIMES = "book/execution_stats.csv"


def execution_time(seconds: float) -> str:
    """A chapter's execution time as the text quotes it.

    Examples
    --------
    >>> execution_time(41.6), execution_time(222.0)
    ('42 s', '3.7 min')
    """
    return f"{seconds:.0f} s" if seconds < 100 else f"{seconds / 60:.1f} min"


class ChapterSeconds(SphinxRole):
    """``{chapter-seconds}`median``` or ``{chapter-seconds}`max```: the numbered chapters'
    execution time in the ``ci`` profile as the execution statistics page measured it, so that
    a sentence quoting it follows each new measurement."""

    def run(self):
        path = Path(self.env.srcdir) / EXECUTION_TIMES
        self.env.note_dependency(str(path))
        with path.open(encoding="utf-8") as handle:
            seconds = [float(row["ci_seconds"]) for row in csv.DictReader(handle)]
        chosen = {"median": statistics.median, "max": max}.get(self.text)
        if chosen is None:
            msg = self.inliner.reporter.error(
                f"chapter-seconds: expected 'median' or 'max', got {self.text!r}",
                line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        return [nodes.Text(execution_time(chosen(seconds)))], []


#: The label of an assignment's exercise: ``a<assignment>-q<question>``.
ASSIGNMENT_EXERCISE = re.compile(r"^a(\d+)-q(\d+)$")


def _number_assignment_exercises(app, env):
    # Runs after Sphinx has counted the figures (same event, later priority) and renumbers
    # the assignments' exercises; returns the pages to write again.
    changed = set()
    for docname, kinds in env.toc_fignumbers.items():
        numbers = kinds.get("exercise", {})
        for node_id in numbers:
            match = ASSIGNMENT_EXERCISE.match(node_id)
            if match:
                numbers[node_id] = (f"A{match[1]}", int(match[2]))
                changed.add(docname)
    return sorted(changed)


def setup(app):
    register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)
    app.add_directive("chapter-references", ChapterReferences)
    app.add_directive("study-times", StudyTimes)
    app.add_role("study-hours", StudyHours())
    app.add_role("chapter-seconds", ChapterSeconds())
    app.connect("builder-inited", _singlehtml_like_html)
    app.connect("builder-inited", _warn_unlinked)
    app.connect("env-get-updated", _number_assignment_exercises, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
