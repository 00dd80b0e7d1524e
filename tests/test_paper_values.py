"""markeval.paper_values against the papers' text: every number, caption and quote.

The checks against the text read the plain-text extractions in ``../shared/papers`` beside the
repository and skip, with a reason, where they are absent (e.g. in Colab); the tests of the
accessors and of the data's own consistency always run.

How a table is found:

* Mark-Evaluate, markdown extraction: the tab-separated lines just above the caption line
  "Table N: ...". Rows are found by label (markup dropped, compared case-insensitively since
  small capitals come out upper-case), numbers by column position under the header.
* Mark-Evaluate, second extraction: the space-separated number lines just above the same
  caption; every row must print the same cells as in the markdown extraction.
* MoverScore: the extraction has no captions. Its nine tables are the blocks of ``|``-separated
  lines, in order, each opening with a title or header line ("Direct Assessment", "TAC-2008",
  "BAGEL", "Setting | Metric | M1", "Metrics | cs-en"); their identity is checked against the
  text that introduces them.
"""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from markeval import paper_values as pv
from markeval.paper_values import (
    CAPTIONS,
    MARK_EVALUATE,
    MOVERSCORE,
    OBSERVATIONS,
    TABLE_CONTEXT,
    VALUES,
    PaperObservation,
    PaperValue,
    paper_observation,
    paper_table,
    paper_value,
)

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
ME_MD = PAPERS / "mark-evaluate-2020.md"
ME_TXT = PAPERS / "mark-evaluate-2020-second-extraction.txt"
MS_TXT = PAPERS / "moverscore-2019.txt"
needs_papers = pytest.mark.skipif(
    not all(p.is_file() for p in (ME_MD, ME_TXT, MS_TXT)),
    reason=f"the papers' text is not at {PAPERS} (e.g. in Colab): checks against it skipped")

TABLES = list(dict.fromkeys((v.paper, v.table) for v in VALUES))
ME_TABLES = [t for p, t in TABLES if p == MARK_EVALUATE]
NUMBER = re.compile(r"^\d*\.\d+$")
# Values per table, counted in the text (the completeness test re-counts them there).
EXPECTED_COUNTS = {
    (MARK_EVALUATE, "Table 1"): 3 * 8, (MARK_EVALUATE, "Table 2"): 6 * 7,
    (MARK_EVALUATE, "Table 3"): 6 * 7 - 2, (MARK_EVALUATE, "Table 4"): 3 * 18,
    (MARK_EVALUATE, "Table 5"): 6 * 5, (MARK_EVALUATE, "Table 6"): 6 * 5,
    (MOVERSCORE, "Table 1"): 12 * 8, (MOVERSCORE, "Table 2"): 13 * 8,
    (MOVERSCORE, "Table 5"): 6 * 4, (MOVERSCORE, "Table 6"): 7 * 7,
    (MOVERSCORE, "Table 7"): 13 * 8,
}


def _ids(tables):
    return [f"{p}-{t.replace(' ', '')}" for p, t in tables]


# --- reading the text ----------------------------------------------------------------------------

@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _squash(text: str) -> str:
    """Whitespace normalised."""
    return re.sub(r"\s+", " ", text).strip()


def _plain(text: str) -> str:
    """Markdown/LaTeX/HTML markup dropped, whitespace normalised, no space inside brackets or
    before punctuation: "Pearson ( $r$ ) ," becomes "Pearson (r),"."""
    text = re.sub(r"ME\s*<sub>\s*(\w+)\s*</sub>", r"ME_\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = _squash(text.replace("$", "").replace("*", "").replace("`", ""))
    text = re.sub(r"\s+([,.;:)])", r"\1", text)
    return re.sub(r"\(\s+", "(", text)


@dataclasses.dataclass
class Parsed:
    """A table as printed: column labels, and each row's printed cells under them."""

    columns: list[str]
    rows: dict[str, tuple[str, list[str]]]  # casefolded label -> (label, cells)

    def cell(self, row: str, column: str) -> str:
        index = [c.casefold() for c in self.columns].index(column.casefold())
        return self.rows[row.casefold()][1][index]


def _caption_line(lines: list[str], n: int) -> int:
    found = [k for k, line in enumerate(lines) if line.startswith(f"Table {n}:")]
    assert len(found) == 1, f"caption 'Table {n}:' found {len(found)} times"
    return found[0]


def _forward_fill(cells: list[str]) -> list[str]:
    out, last = [], ""
    for c in cells:
        last = c or last
        out.append(last)
    return out


@cache
def _me_markdown(table: str) -> Parsed:
    lines = _read(ME_MD).splitlines()
    j = _caption_line(lines, int(table.split()[1])) - 1
    while not lines[j].strip():
        j -= 1
    block = []
    while "\t" in lines[j]:
        block.insert(0, [_plain(c) for c in lines[j].split("\t")])
        j -= 1
    header = [cells for cells in block if not any(NUMBER.match(c) for c in cells[1:])]
    data = [cells for cells in block if any(NUMBER.match(c) for c in cells[1:])]
    if len(header) == 1:
        columns = header[0][1:]
    else:
        assert len(header) == 2, f"{table}: {len(header)} header lines"
        columns = [f"{top} / {sub}" for top, sub in
                   zip(_forward_fill(header[0][1:]), header[1][1:], strict=True)]
    rows = {}
    for cells in data:
        assert len(cells) - 1 == len(columns), f"{table}, row {cells[0]!r}: ragged"
        rows[cells[0].casefold()] = (cells[0], cells[1:])
    return Parsed(columns, rows)


_TXT_ROW = re.compile(r"^(?P<label>.+?)(?P<cells>(?:\s+(?:-|\d*\.\d+))+)$")


@cache
def _me_second(table: str) -> dict[str, list[str]]:
    """Rows of the second extraction: casefolded label -> printed cells."""
    lines = _read(ME_TXT).splitlines()
    j = _caption_line(lines, int(table.split()[1])) - 1
    rows: dict[str, list[str]] = {}
    while j >= 0:
        line = lines[j].strip()
        j -= 1
        if not line:
            continue
        m = _TXT_ROW.match(line)
        if not m:
            break  # the header
        rows[m["label"].casefold()] = m["cells"].split()
    return dict(reversed(rows.items()))


_MS_TITLE = re.compile(r"^(?:(?:Direct Assessment|TAC-2008|BAGEL) \||Setting \| Metric \| M1 \||"
                       r"Metrics \| cs-en \|)")
_MS_TITLES = {1: "Direct Assessment", 2: "TAC-2008", 3: "BAGEL", 4: "Setting | Metric | M1",
              5: "Metrics | cs-en", 6: "Direct Assessment", 7: "Direct Assessment",
              8: "TAC-2008", 9: "BAGEL"}
_MS_SETTINGS = {"Baselines", "Sent-Mover", "Word-Mover"}


@cache
def _ms_blocks() -> tuple[tuple[int, tuple[str, ...]], ...]:
    """(first line number, lines) of each table block of the MoverScore extraction, in order."""
    lines = _read(MS_TXT).splitlines()
    starts = [k for k, line in enumerate(lines) if _MS_TITLE.match(line)
              and not (line.startswith("Metrics |") and lines[k - 1].startswith("Direct Assessment"))]
    blocks = []
    for a, start in enumerate(starts):
        end = starts[a + 1] if a + 1 < len(starts) else len(lines)
        block = []
        for line in lines[start:end]:
            if "|" not in line:
                break
            block.append(line)
        blocks.append((start, tuple(block)))
    return tuple(blocks)


def _ms_cells(line: str) -> list[str]:
    cells = [c.strip() for c in line.split("|")]
    while cells and not cells[-1]:
        cells.pop()
    return cells


@cache
def _moverscore(table: str) -> Parsed:
    _, block = _ms_blocks()[int(table.split()[1]) - 1]
    header = [_ms_cells(line) for line in block
              if not any(NUMBER.match(c) for c in _ms_cells(line))]
    data = [_ms_cells(line) for line in block if any(NUMBER.match(c) for c in _ms_cells(line))]
    named = [h for h in header if "Metrics" in h and len(h) > h.index("Metrics") + 1]
    if named:
        columns = named[0][named[0].index("Metrics") + 1:]
    else:  # the TAC table: two printed levels; the third (r, rho) is lost, see paper_values
        datasets = [c for c in header[0] if c]
        scores = [c for c in header[1] if c]
        assert datasets == ["TAC-2008", "TAC-2009"], datasets
        assert scores == ["Responsiveness", "Pyramid"] * 2, scores
        columns = [f"{datasets[i // 4]} / {scores[i // 2]} / {('r', 'rho')[i % 2]}"
                   for i in range(8)]
    rows = {}
    for cells in data:
        if cells[0] in _MS_SETTINGS:
            cells = cells[1:]
        assert len(cells) - 1 == len(columns), f"{table}, row {cells[0]!r}: ragged"
        rows[cells[0].casefold()] = (cells[0], cells[1:])
    return Parsed(columns, rows)


def _parsed(paper: str, table: str) -> Parsed:
    return _me_markdown(table) if paper == MARK_EVALUATE else _moverscore(table)


def _stored(paper: str, table: str) -> list[PaperValue]:
    return [v for v in VALUES if (v.paper, v.table) == (paper, table)]


# --- every value against the text --------------------------------------------------------------

@needs_papers
@pytest.mark.parametrize(("paper", "table"), TABLES, ids=_ids(TABLES))
def test_rows_and_columns_are_the_printed_ones_in_order(paper, table):
    parsed = _parsed(paper, table)
    t = paper_table(paper, table)
    assert [c.casefold() for c in t.columns] == [c.casefold() for c in parsed.columns], (
        f"{paper} {table}: stored columns {list(t.columns)} vs printed {parsed.columns}")
    assert [r.casefold() for r in t.index] == list(parsed.rows), (
        f"{paper} {table}: stored rows {list(t.index)} vs printed "
        f"{[label for label, _ in parsed.rows.values()]}")


@needs_papers
@pytest.mark.parametrize(("paper", "table"), TABLES, ids=_ids(TABLES))
def test_every_value_is_printed_in_its_cell(paper, table):
    parsed = _parsed(paper, table)
    values = _stored(paper, table)
    wrong: list[str] = []
    missing: set[str] = set()
    for v in values:
        if v.row.casefold() not in parsed.rows:
            if v.row in missing:
                continue
            missing.add(v.row)
            wrong.append(f"{paper} {table}, row {v.row!r}: no such row in the text "
                         f"(rows: {[label for label, _ in parsed.rows.values()]})")
            continue
        if v.column.casefold() not in [c.casefold() for c in parsed.columns]:
            wrong.append(f"{paper} {table}, column {v.column!r}: no such column in the text "
                         f"(columns: {parsed.columns})")
            continue
        printed = parsed.cell(v.row, v.column)
        if not NUMBER.match(printed) or float(printed) != v.value:
            wrong.append(f"{paper} {table}, row {v.row!r}, column {v.column!r}: "
                         f"the text prints {printed!r}, stored {v.value!r}")
    assert not wrong, "\n".join(wrong)


@needs_papers
@pytest.mark.parametrize(("paper", "table"), TABLES, ids=_ids(TABLES))
def test_every_table_is_complete(paper, table):
    parsed = _parsed(paper, table)
    stored = Counter(v.row.casefold() for v in _stored(paper, table))
    printed = {key: sum(bool(NUMBER.match(c)) for c in cells)
               for key, (_, cells) in parsed.rows.items()}
    assert set(printed) == set(stored), (
        f"{paper} {table}: rows only in the text {sorted(set(printed) - set(stored))}, "
        f"only stored {sorted(set(stored) - set(printed))}")
    short = {row: (printed[row], stored[row]) for row in printed if printed[row] != stored[row]}
    assert not short, f"{paper} {table}: (printed, stored) numbers per row differ: {short}"
    others = {c for _, cells in parsed.rows.values() for c in cells if not NUMBER.match(c)}
    assert others <= {"-", ""}, f"{paper} {table}: unexpected cells {others}"
    assert sum(stored.values()) == EXPECTED_COUNTS[(paper, table)]


@needs_papers
@pytest.mark.parametrize("table", ME_TABLES)
def test_both_mark_evaluate_extractions_agree(table):
    markdown = {key: cells for key, (_, cells) in _me_markdown(table).rows.items()}
    second = _me_second(table)
    assert second == markdown, f"Mark-Evaluate {table}: the two extractions differ"


@needs_papers
def test_moverscore_tables_are_identified():
    """No captions: the tables are the nine blocks in order, checked against the text."""
    text = _read(MS_TXT)
    lines = text.splitlines()
    blocks = _ms_blocks()
    assert len(blocks) == 9
    for n, (_, block) in enumerate(blocks, 1):
        assert block[0].startswith(_MS_TITLES[n]), f"MoverScore Table {n}: opens with {block[0]!r}"
    appendix = next(k for k, line in enumerate(lines) if line.startswith("Appendix A"))
    assert [start < appendix for start, _ in blocks] == [True] * 5 + [False] * 4
    # "... show results on the machine translation task in Table 5": the HMD rows of §4.5.
    assert "show results on the machine translation task in Table 5" in text
    assert {"hmd-f1 + bert", "hmd-prec + bert", "hmd-recall + bert"} <= set(_moverscore("Table 5").rows)
    # "Table 6 compares ... BERT representations on different layers".
    assert "Table 6 compares our word mover based metric combining BERT representations on different layers" in text
    assert all("layer" in key or key.endswith(("routing", "pmeans"))
               for key in _moverscore("Table 6").rows)
    # "Table 7, 8 and 9 show correlations ... on machine translation, text summarization and
    # dialogue response generation": Table 7 has the WMT17 language pairs.
    assert "Table 7, 8 and 9 show correlations" in text
    assert _moverscore("Table 7").columns[0] == "cs-en"


# --- captions, context sentences, observations -------------------------------------------------

@needs_papers
@pytest.mark.parametrize("table", ME_TABLES)
def test_mark_evaluate_captions_are_as_printed(table):
    lines = _read(ME_MD).splitlines()
    printed = _plain(lines[_caption_line(lines, int(table.split()[1]))])
    assert printed == f"{table}: {CAPTIONS[(MARK_EVALUATE, table)]}"


@needs_papers
@pytest.mark.parametrize(("paper", "table"), list(TABLE_CONTEXT), ids=_ids(TABLE_CONTEXT))
def test_table_context_is_quoted_from_the_text(paper, table):
    text = _plain(_read(ME_MD)) if paper == MARK_EVALUATE else _squash(_read(MS_TXT))
    for sentence in TABLE_CONTEXT[(paper, table)]:
        assert _squash(sentence) in text, f"{paper} {table}: not in the text: {sentence!r}"


@needs_papers
@pytest.mark.parametrize("obs", OBSERVATIONS, ids=[f"{o.experiment}-{o.metric}" for o in OBSERVATIONS])
def test_observation_quotes_are_in_the_paper(obs):
    assert _squash(obs.quote) in _squash(_read(ME_MD)), (
        f"{obs.experiment}/{obs.metric}: quote not in mark-evaluate-2020.md: {obs.quote!r}")


@needs_papers
def test_the_sentbleu_row_is_in_table_7_not_table_1():
    """The book's claim: SentBLEU (0.435 ... 0.512) is in the appendix table, not Table 1."""
    assert "sentbleu" in _moverscore("Table 7").rows
    assert "sentbleu" not in _moverscore("Table 1").rows
    assert next(iter(_moverscore("Table 1").rows.values()))[0] == "METEOR++"


# --- the data's own consistency (no text needed) -----------------------------------------------

def test_values_are_well_formed():
    keys = Counter((v.paper, v.table, v.row, v.column) for v in VALUES)
    assert not [k for k, n in keys.items() if n > 1], "a cell is stored twice"
    for v in VALUES:
        assert isinstance(v, PaperValue) and v.paper in pv.PAPERS
        assert isinstance(v.value, float) and 0 <= v.value <= 1, v
        assert v.row == v.row.strip() and v.column == v.column.strip()
    assert {t: len(_stored(*t)) for t in TABLES} == EXPECTED_COUNTS
    assert dataclasses.is_dataclass(PaperValue) and PaperValue.__dataclass_params__.frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        VALUES[0].value = 1.0


def test_every_table_says_what_it_reports():
    for paper, table in TABLES:
        assert (paper, table) in TABLE_CONTEXT, f"{paper} {table} has no TABLE_CONTEXT"
        if paper == MARK_EVALUATE:
            assert (paper, table) in CAPTIONS
    assert not [k for k in CAPTIONS if k[0] == MOVERSCORE], "MoverScore prints no captions here"


def test_mark_evaluate_table_3_reprints_moverscore_table_2():
    """ME Table 3's BERTScore/MoverScore (r)/(p) rows = MoverScore Table 2, TAC-2009 r/rho."""
    for me_column, ms_row in (("BERTScore", "BERTScore-F1"),
                              ("MoverScore", "Wmd-1 + BERT + MNLI + PMeans")):
        for score in ("Responsiveness", "Pyramid"):
            for me_corr, ms_corr in (("r", "r"), ("p", "rho")):
                assert paper_value(MARK_EVALUATE, "Table 3", f"{score} ({me_corr})", me_column) == \
                    paper_value(MOVERSCORE, "Table 2", ms_row, f"TAC-2009 / {score} / {ms_corr}")


def test_notes_mark_the_ambiguous_readings():
    assert all(v.note for v in VALUES if v.paper == MOVERSCORE)
    assert all("Spearman rho" in v.note for v in _stored(MOVERSCORE, "Table 2"))
    assert "Peyrard" in next(v for v in VALUES if v.row == "(*)").note
    assert all(v.note for v in VALUES if v.column.endswith("/ sSBERT"))


def test_observations_are_well_formed():
    keys = Counter((o.experiment, o.metric) for o in OBSERVATIONS)
    assert not [k for k, n in keys.items() if n > 1], "an observation is recorded twice"
    for o in OBSERVATIONS:
        assert isinstance(o, PaperObservation) and o.paper == MARK_EVALUATE
        assert o.experiment in pv.EXPERIMENTS and o.metric in pv.OBSERVED_METRICS
        assert o.observed in pv.BEHAVIOURS and o.observed != "not stated" and o.quote
        assert o.where == paper_observation(o.experiment, o.metric).where


@pytest.mark.parametrize(("experiment", "metric", "observed"), [
    ("k_sweep", "me_petersen", "increasing"), ("k_sweep", "me_capture", "increasing"),
    ("k_sweep", "me_schnabel_quality", "increasing"),
    ("k_sweep", "me_schnabel_diversity", "not stated"), ("k_sweep", "fid", "not stated"),
    ("mode_collapse", "me_schnabel_diversity", "as expected"),
    ("mode_collapse", "fid", "as expected"), ("mode_collapse", "ipr_recall", "as expected"),
    ("mode_collapse", "prd_precision", "decreasing"),
    ("mode_collapse", "prd_recall", "not stated"),
    ("word_swap", "me_schnabel_quality", "as expected"), ("word_swap", "fid", "as expected"),
    ("word_swap", "prd_recall", "decreasing"), ("word_swap", "ipr_recall", "decreasing"),
    ("word_swap", "ipr_precision", "decreasing"), ("word_swap", "prd_precision", "not stated"),
])
def test_paper_observation(experiment, metric, observed):
    o = paper_observation(experiment, metric)
    assert (o.experiment, o.metric, o.observed) == (experiment, metric, observed)
    assert (o.quote == "") == (observed == "not stated")


def test_paper_observation_rejects_unknown_names():
    with pytest.raises(KeyError, match="experiments are 'k_sweep', 'mode_collapse', 'word_swap'"):
        paper_observation("swap", "fid")
    with pytest.raises(KeyError, match="metrics are 'fid', 'prd_precision'"):
        paper_observation("word_swap", "impar_recall")


# --- accessors -----------------------------------------------------------------------------------

def test_paper_value():
    assert paper_value(MOVERSCORE, "Table 7", "SentBLEU", "cs-en") == 0.435
    assert paper_value(MOVERSCORE, "Table 7", "SentBLEU", "zh-en") == 0.512
    assert paper_value(MOVERSCORE, "Table 6", "Wmd-1 + BERT + Layer 8", "cs-en") == 0.6361
    assert paper_value(MARK_EVALUATE, "Table 4", "r", "FID / ISENT") == 0.838


def test_paper_value_key_errors_list_what_is_known():
    with pytest.raises(KeyError, match=r"no row 'SentBLEU'; rows are 'METEOR\+\+', 'RUSE\(\*\)'"):
        paper_value(MOVERSCORE, "Table 1", "SentBLEU", "cs-en")
    with pytest.raises(KeyError, match="no column 'Avg'; columns are 'cs-en', .*'Average'"):
        paper_value(MOVERSCORE, "Table 1", "METEOR++", "Avg")
    with pytest.raises(KeyError, match="no stored table 'Table 3'; tables are 'Table 1', "
                                       "'Table 2', 'Table 5', 'Table 6', 'Table 7'"):
        paper_value(MOVERSCORE, "Table 3", "BLEU-1", "Inf")
    with pytest.raises(KeyError, match="papers are 'Mark-Evaluate', 'MoverScore'"):
        paper_value("BERTScore", "Table 1", "x", "y")
    with pytest.raises(KeyError, match="prints no number"):
        paper_value(MARK_EVALUATE, "Table 3", "Pyramid (k)", "BERTScore")


@pytest.mark.parametrize(("paper", "table"), TABLES, ids=_ids(TABLES))
def test_paper_table_shape_and_order(paper, table):
    values = _stored(paper, table)
    t = paper_table(paper, table)
    assert list(t.index) == list(dict.fromkeys(v.row for v in values))
    assert set(t.columns) == {v.column for v in values} and t.columns.is_unique
    assert int(t.notna().sum().sum()) == len(values)
    for v in values:
        assert t.loc[v.row, v.column] == v.value


def test_paper_table_examples():
    assert paper_table(MOVERSCORE, "Table 1").index[0] == "METEOR++"
    assert paper_table(MOVERSCORE, "Table 2").shape == (13, 8)
    assert paper_table(MARK_EVALUATE, "Table 4").shape == (3, 18)
    t = paper_table(MARK_EVALUATE, "Table 3")
    assert list(t.columns[:2]) == ["BERTScore", "MoverScore"]  # its first row starts with "-"
    assert math.isnan(t.loc["Pyramid (k)", "BERTScore"])
    with pytest.raises(KeyError, match="tables are 'Table 1', 'Table 2', 'Table 3'"):
        paper_table(MARK_EVALUATE, "Table 7")


def test_importing_is_light():
    code = ("import sys, markeval.paper_values; "
            "print('torch' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
