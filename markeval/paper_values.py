"""Every number the book quotes from the two papers, typed from their text and checked against it.

The book reproduces two papers: Mordido & Meinel (2020), "Mark-Evaluate: Assessing Language
Generation using Population Estimation Methods" (COLING), and Zhao et al. (2019),
"MoverScore: Text Generation Evaluating with Contextualized Embeddings and Earth Mover
Distance" (EMNLP). Chapters take the papers' numbers from here, never retype them. This module
holds:

* :data:`VALUES` — every cell with a number of Mark-Evaluate Tables 1–6 and MoverScore
  Tables 1, 2, 5, 6 and 7, one :class:`PaperValue` each, read with :func:`paper_value` and
  :func:`paper_table`;
* :data:`CAPTIONS` — the Mark-Evaluate captions as printed, and :data:`TABLE_CONTEXT` — the
  sentences of each paper's running text that present a table (the MoverScore extraction lost
  its captions, see below);
* :data:`OBSERVATIONS` — what the Mark-Evaluate paper says it observed in its synthetic
  experiments (K sweep, mode collapse, word swap), with a quote, read with
  :func:`paper_observation`.

``tests/test_paper_values.py`` finds each table in the plain-text extractions of the papers
(``../shared/papers`` beside the repository) and checks every stored number, every caption and
every quote against them; it skips those checks where the text is absent (e.g. in Colab).

Importing this module is cheap: plain data, no torch; pandas is imported only by
:func:`paper_table`.

Conventions
-----------
Values
    Exactly as printed, as floats: no rounding, no rescaling. Both papers print correlations
    as decimals (no percentages, no signs). MoverScore Table 6 prints four decimals without a
    leading zero (``.6361``); it is stored as ``0.6361``. A trailing zero is kept in the
    source (``0.440``) but a float cannot remember it. Mark-Evaluate Tables 1 and 4 report
    absolute correlations (their captions say so; FID, a distance, correlates negatively with
    quality, and the sign is not printed). A cell printed as ``-`` or left empty is not stored.
Rows
    The row label as printed, as plain text: markup dropped, ``( r )`` written ``(r)``, e.g.
    ``"Pearson r"``, ``"cs-en (r)"``, ``"Responsiveness (k)"`` (Mark-Evaluate's tables print
    the correlation beside each row; ``k`` is Kendall and ``p`` Spearman, as the paper writes
    them), ``"SentBLEU"``, ``"Wmd-1 + BERT + MNLI + PMeans"``. The MoverScore "Setting" column
    (Baselines, Sent-Mover, Word-Mover) groups rows and is not part of the label. Labels keep
    each table's own spelling: MoverScore Table 1 prints ``Smd + W2V``, Table 2 ``SMD + W2V``.
Columns
    The column label as printed. Mark-Evaluate's metrics with a subscript are written
    ``ME_Schnabel``, ``ME_Petersen``, ``ME_CAPTURE``; ``ME_Schnabel`` is its quality score
    (the paper reports only that one in these tables). Headers set in small capitals, which the
    extraction prints in upper case (``BERTSCORE``, ``FORWARD CE``), take the spelling of the
    paper's running text (``BERTScore``, ``Forward CE``). Where a table has two header levels
    they are joined with ``" / "``: ``"FID / sSBERT"``, ``"TAC-2008 / Responsiveness / r"``.
    A title spanning every column (``Direct Assessment`` above MoverScore Tables 1, 6 and 7)
    is not a level. The Spearman coefficient of MoverScore Table 2 is written ``rho``.

Readings of the extraction
--------------------------
Where the text is ambiguous the value's ``note`` says which reading we took, and why:

* MoverScore's extraction (``moverscore-2019.txt``) has no table captions at all. Its tables
  are identified by their order and headers, and by the running text that introduces them
  ("Table 1: In all language pairs ...", "show results on the machine translation task in
  Table 5", "Table 7, 8 and 9 show correlations ..."); :data:`TABLE_CONTEXT` quotes those
  sentences. :data:`CAPTIONS` therefore holds Mark-Evaluate's captions only.
* MoverScore Table 2 prints two header levels (TAC-2008/TAC-2009, Responsiveness/Pyramid)
  over eight numbers per row; the third level (which correlation) is lost. We read the pairs
  as Pearson r then Spearman rho: §4 says "We use Pearson’s and Spearman’s to measure the
  correlation", and Mark-Evaluate Table 3 reprints the TAC-2009 pairs of the rows
  ``BERTScore-F1`` and ``Wmd-1 + BERT + MNLI + PMeans`` as its ``(r)`` and ``(p)`` rows.
* MoverScore Table 2's first row prints only ``(*)``: the metric's name (a symbol) is lost.
  §4 names it "a supervised metric Peyrard et al. (2017)". Its label is ``"(*)"``.
* Mark-Evaluate Table 1 labels its rows "Pearson r", "Kendall k", "Spearman p" in both
  extractions, while §5 says "Table 1 shows the Pearson p, Kendall k, and Spearman p
  correlations"; we keep the table's labels.
* Mark-Evaluate Table 4's second header level is ``ISENT sSBERT SBERT`` in the markdown
  extraction and ``ISENT SSBERT SBERT`` in the second one; the caption says "sSBERT refers to
  sentence embeddings from BERT-base", so ``sSBERT``.

Provenance worth knowing: Mark-Evaluate Table 3's ``BERTScore`` and ``MoverScore`` columns
repeat MoverScore Table 2's TAC-2009 Pearson and Spearman numbers (rows ``BERTScore-F1`` and
``Wmd-1 + BERT + MNLI + PMeans``), though the caption credits only "BERTScore results" to
Zhao et al. (2019); their Kendall cells (``-`` for BERTScore; 0.482 and 0.550 for MoverScore)
have no counterpart in MoverScore's tables, which report no Kendall correlation.

Examples
--------
>>> from markeval.paper_values import paper_value, paper_observation
>>> paper_value("MoverScore", "Table 7", "SentBLEU", "cs-en")
0.435
>>> paper_value("Mark-Evaluate", "Table 3", "Pyramid (p)", "ME_CAPTURE")
0.718
>>> paper_observation("word_swap", "ipr_recall").observed
'decreasing'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

MARK_EVALUATE = "Mark-Evaluate"
MOVERSCORE = "MoverScore"
PAPERS = (MARK_EVALUATE, MOVERSCORE)


@dataclass(frozen=True)
class PaperValue:
    """One number printed in a table of one of the two papers.

    Parameters
    ----------
    paper : {"Mark-Evaluate", "MoverScore"}
        The paper.
    table : str
        The table, as the paper numbers it: ``"Table 1"``, ``"Table 2"``, ...
    row : str
        The row label as printed, as plain text (see the module's conventions).
    column : str
        The column label as printed; two header levels joined with ``" / "``.
    value : float
        The number exactly as printed.
    note : str, default ""
        Where the extraction is ambiguous: which reading we took, and why.

    Examples
    --------
    >>> v = PaperValue("MoverScore", "Table 1", "BERTScore-F1", "Average", 0.719)
    >>> v.value, v.note
    (0.719, '')
    """

    paper: str
    table: str
    row: str
    column: str
    value: float
    note: str = ""


#: ``{(paper, table): (rows, columns)}`` in printed order, filled by :func:`_table`.
_LAYOUTS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _table(paper: str, table: str, columns: tuple[str, ...],
           rows: tuple[tuple[str, tuple[float | None, ...]], ...], *,
           note: str = "", row_notes: dict[str, str] | None = None,
           column_notes: dict[str, str] | None = None) -> tuple[PaperValue, ...]:
    """One table's values, row by row; ``None`` marks a cell printed ``-`` or empty.

    Also records the table's printed row and column order for :func:`paper_table`.
    """
    _LAYOUTS[(paper, table)] = (tuple(label for label, _ in rows), tuple(columns))
    row_notes = row_notes or {}
    column_notes = column_notes or {}
    out = []
    for label, cells in rows:
        if len(cells) != len(columns):
            raise ValueError(f"{paper} {table}, row {label!r}: {len(cells)} cells for "
                             f"{len(columns)} columns")
        for column, value in zip(columns, cells):
            if value is None:
                continue
            parts = (note, row_notes.get(label, ""), column_notes.get(column, ""))
            out.append(PaperValue(paper, table, label, column, value,
                                  " ".join(p for p in parts if p)))
    return tuple(out)


# --- Mark-Evaluate (Mordido & Meinel, 2020) ----------------------------------------------------


def _small_caps(printed: str) -> str:
    return (f"Header set in small capitals, printed '{printed}' by the extraction; we use the "
            "running text's spelling.")


_ME = ("ME_Schnabel", "ME_Petersen", "ME_CAPTURE")

_ME_TABLE_1 = _table(
    MARK_EVALUATE, "Table 1",
    ("Forward CE", "Reverse CE", "FID", "PRD", "IMPAR", *_ME),
    (("Pearson r", (0.606, 0.440, 0.902, 0.830, 0.745, 0.917, 0.872, 0.902)),
     ("Kendall k", (0.556, 0.333, 0.867, 0.822, 0.778, 0.911, 0.911, 0.867)),
     ("Spearman p", (0.697, 0.491, 0.964, 0.939, 0.903, 0.976, 0.976, 0.964))),
    column_notes={"Forward CE": _small_caps("FORWARD CE"),
                  "Reverse CE": _small_caps("REVERSE CE")},
    row_notes={
        "Pearson r": "Row printed 'Pearson r' in both extractions; §5 says 'Table 1 shows the "
                     "Pearson p, Kendall k, and Spearman p correlations'. We keep the table's "
                     "label.",
        "Spearman p": "Printed 'Spearman p' (the Spearman coefficient) in both extractions; we "
                      "keep the printed letter."})

_ME_TABLE_2 = _table(
    MARK_EVALUATE, "Table 2",
    ("BERTScore", "MoverScore", "PRD", "IMPAR", *_ME),
    (("cs-en (r)", (0.966, 0.983, 0.992, 0.987, 0.989, 0.988, 0.987)),
     ("de-en (r)", (0.859, 0.920, 0.769, 0.934, 0.944, 0.953, 0.953)),
     ("ru-en (r)", (0.868, 0.921, 0.933, 0.896, 0.902, 0.908, 0.908)),
     ("tr-en (r)", (0.938, 0.931, 0.935, 0.959, 0.970, 0.960, 0.959)),
     ("zh-en (r)", (0.894, 0.943, 0.889, 0.933, 0.957, 0.936, 0.936)),
     ("Average (r)", (0.905, 0.940, 0.904, 0.942, 0.952, 0.949, 0.949))))

_ME_TABLE_3 = _table(
    MARK_EVALUATE, "Table 3",
    ("BERTScore", "MoverScore", "PRD", "IMPAR", *_ME),
    (("Responsiveness (k)", (None, 0.482, 0.398, 0.481, 0.483, 0.487, 0.484)),
     ("Responsiveness (r)", (0.739, 0.754, 0.564, 0.743, 0.739, 0.683, 0.747)),
     ("Responsiveness (p)", (0.580, 0.594, 0.501, 0.594, 0.595, 0.598, 0.596)),
     ("Pyramid (k)", (None, 0.550, 0.444, 0.541, 0.548, 0.555, 0.565)),
     ("Pyramid (r)", (0.823, 0.831, 0.658, 0.804, 0.813, 0.770, 0.808)),
     ("Pyramid (p)", (0.703, 0.701, 0.588, 0.693, 0.698, 0.704, 0.718))),
    column_notes={"BERTScore": _small_caps("BERTSCORE"),
                  "MoverScore": _small_caps("MOVERSCORE")})

_EMBEDDINGS = ("ISENT", "sSBERT", "SBERT")
_SSBERT = ("Second header level printed 'sSBERT' in the markdown extraction and 'SSBERT' in the "
           "second; the caption says 'sSBERT refers to sentence embeddings from BERT-base', so "
           "'sSBERT'.")
_ME_TABLE_4_COLUMNS = tuple(f"{m} / {e}" for m in ("FID", "PRD", "IMPAR", *_ME) for e in _EMBEDDINGS)
_ME_TABLE_4 = _table(
    MARK_EVALUATE, "Table 4", _ME_TABLE_4_COLUMNS,
    (("r", (0.838, 0.860, 0.902, 0.669, 0.661, 0.684, 0.708, 0.629, 0.633,
            0.905, 0.883, 0.917, 0.824, 0.828, 0.872, 0.903, 0.882, 0.902)),
     ("k", (0.511, 0.867, 0.867, 0.689, 0.778, 0.822, 0.689, 0.467, 0.600,
            0.778, 0.911, 0.911, 0.867, 0.911, 0.911, 0.867, 0.911, 0.867)),
     ("p", (0.733, 0.964, 0.964, 0.830, 0.903, 0.939, 0.879, 0.552, 0.903,
            0.903, 0.976, 0.976, 0.964, 0.976, 0.976, 0.964, 0.976, 0.964))),
    column_notes={c: _SSBERT for c in _ME_TABLE_4_COLUMNS if c.endswith("/ sSBERT")})

_ME_TABLE_5 = _table(
    MARK_EVALUATE, "Table 5",
    ("PRD", "IMPAR", *_ME),
    (("cs-en (r)", (0.979, 0.912, 0.993, 0.989, 0.971)),
     ("de-en (r)", (0.885, 0.794, 0.869, 0.857, 0.845)),
     ("ru-en (r)", (0.931, 0.897, 0.949, 0.904, 0.842)),
     ("tr-en (r)", (0.833, 0.866, 0.857, 0.874, 0.922)),
     ("zh-en (r)", (0.582, 0.727, 0.745, 0.735, 0.839)),
     ("Average (r)", (0.842, 0.839, 0.883, 0.872, 0.850))))

_ME_TABLE_6 = _table(
    MARK_EVALUATE, "Table 6",
    ("PRD", "IMPAR", *_ME),
    (("cs-en (r)", (0.992, 0.981, 0.975, 0.970, 0.971)),
     ("de-en (r)", (0.769, 0.934, 0.940, 0.953, 0.953)),
     ("ru-en (r)", (0.933, 0.888, 0.887, 0.895, 0.897)),
     ("tr-en (r)", (0.935, 0.941, 0.917, 0.917, 0.929)),
     ("zh-en (r)", (0.889, 0.895, 0.957, 0.936, 0.936)),
     ("Average (r)", (0.904, 0.928, 0.935, 0.934, 0.937))))

# --- MoverScore (Zhao et al., 2019) -------------------------------------------------------------

_NO_CAPTION = ("The extraction prints no captions; this table is identified by its place and "
               "header, and by the text that introduces it (see TABLE_CONTEXT).")
_WMT17_PAIRS = ("cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en")

_MS_TABLE_1 = _table(
    MOVERSCORE, "Table 1", (*_WMT17_PAIRS, "Average"),
    (("METEOR++", (0.552, 0.538, 0.720, 0.563, 0.627, 0.626, 0.646, 0.610)),
     ("RUSE(*)", (0.624, 0.644, 0.750, 0.697, 0.673, 0.716, 0.691, 0.685)),
     ("BERTScore-F1", (0.670, 0.686, 0.820, 0.710, 0.729, 0.714, 0.704, 0.719)),
     ("Smd + W2V", (0.438, 0.505, 0.540, 0.442, 0.514, 0.456, 0.494, 0.484)),
     ("Smd + ELMO + PMeans", (0.569, 0.558, 0.732, 0.525, 0.581, 0.620, 0.584, 0.595)),
     ("Smd + BERT + PMeans", (0.607, 0.623, 0.770, 0.639, 0.667, 0.641, 0.619, 0.652)),
     ("Smd + BERT + MNLI + PMeans", (0.616, 0.643, 0.785, 0.660, 0.664, 0.668, 0.633, 0.667)),
     ("Wmd-1 + W2V", (0.392, 0.463, 0.558, 0.463, 0.456, 0.485, 0.481, 0.471)),
     ("Wmd-1 + ELMO + PMeans", (0.579, 0.588, 0.753, 0.559, 0.617, 0.679, 0.645, 0.631)),
     ("Wmd-1 + BERT + PMeans", (0.662, 0.687, 0.823, 0.714, 0.735, 0.734, 0.719, 0.725)),
     ("Wmd-1 + BERT + MNLI + PMeans", (0.670, 0.708, 0.835, 0.746, 0.738, 0.762, 0.744, 0.743)),
     ("Wmd-2 + BERT + MNLI + PMeans", (0.679, 0.710, 0.832, 0.745, 0.736, 0.763, 0.740, 0.743))),
    note=_NO_CAPTION)

_TAC_COLUMNS = tuple(f"{d} / {s} / {c}" for d in ("TAC-2008", "TAC-2009")
                     for s in ("Responsiveness", "Pyramid") for c in ("r", "rho"))
_MS_TABLE_2 = _table(
    MOVERSCORE, "Table 2", _TAC_COLUMNS,
    (("(*)", (0.715, 0.595, 0.754, 0.652, 0.738, 0.595, 0.842, 0.731)),
     ("ROUGE-1", (0.703, 0.578, 0.747, 0.632, 0.704, 0.565, 0.808, 0.692)),
     ("ROUGE-2", (0.695, 0.572, 0.718, 0.635, 0.727, 0.583, 0.803, 0.694)),
     ("BERTScore-F1", (0.724, 0.594, 0.750, 0.649, 0.739, 0.580, 0.823, 0.703)),
     ("SMD + W2V", (0.583, 0.469, 0.603, 0.488, 0.577, 0.465, 0.670, 0.560)),
     ("SMD + ELMO + PMeans", (0.631, 0.472, 0.631, 0.499, 0.663, 0.498, 0.726, 0.568)),
     ("SMD + BERT + PMeans", (0.658, 0.530, 0.664, 0.550, 0.670, 0.518, 0.731, 0.580)),
     ("SMD + BERT + MNLI + PMeans", (0.662, 0.525, 0.666, 0.552, 0.667, 0.506, 0.723, 0.563)),
     ("Wmd-1 + W2V", (0.669, 0.549, 0.665, 0.588, 0.698, 0.520, 0.740, 0.647)),
     ("Wmd-1 + ELMO + PMeans", (0.707, 0.554, 0.726, 0.601, 0.736, 0.553, 0.813, 0.672)),
     ("Wmd-1 + BERT + PMeans", (0.729, 0.595, 0.755, 0.660, 0.742, 0.581, 0.825, 0.690)),
     ("Wmd-1 + BERT + MNLI + PMeans", (0.736, 0.604, 0.760, 0.672, 0.754, 0.594, 0.831, 0.701)),
     ("Wmd-2 + BERT + MNLI + PMeans", (0.734, 0.601, 0.752, 0.663, 0.753, 0.586, 0.825, 0.694))),
    note=_NO_CAPTION + " The third header level (which correlation) is lost: each "
         "Responsiveness/Pyramid pair is read as Pearson r then Spearman rho, because §4 says "
         "'We use Pearson’s and Spearman’s to measure the correlation' and Mark-Evaluate "
         "Table 3 reprints the TAC-2009 pairs of BERTScore-F1 and Wmd-1 + BERT + MNLI + PMeans "
         "as its (r) and (p) rows.",
    row_notes={"(*)": "The metric's name (a symbol) is lost in the extraction; §4 names the "
                      "summarization baseline 'a supervised metric Peyrard et al. (2017)'."})

_MS_TABLE_5 = _table(
    MOVERSCORE, "Table 5", _WMT17_PAIRS[:4],
    (("RUSE", (0.624, 0.644, 0.750, 0.697)),
     ("Hmd-F1 + BERT", (0.655, 0.681, 0.821, 0.712)),
     ("Hmd-Recall + BERT", (0.651, 0.658, 0.788, 0.681)),
     ("Hmd-Prec + BERT", (0.624, 0.669, 0.817, 0.707)),
     ("Wmd-unigram + BERT", (0.651, 0.686, 0.823, 0.710)),
     ("Wmd-bigram + BERT", (0.665, 0.688, 0.821, 0.712))),
    note=_NO_CAPTION)

_MS_TABLE_6 = _table(
    MOVERSCORE, "Table 6", _WMT17_PAIRS,
    (("Wmd-1 + BERT + Layer 8", (0.6361, 0.6755, 0.8134, 0.7033, 0.7273, 0.7233, 0.7175)),
     ("Wmd-1 + BERT + Layer 9", (0.6510, 0.6865, 0.8240, 0.7107, 0.7291, 0.7357, 0.7195)),
     ("Wmd-1 + BERT + Layer 10", (0.6605, 0.6948, 0.8231, 0.7158, 0.7363, 0.7317, 0.7168)),
     ("Wmd-1 + BERT + Layer 11", (0.6695, 0.6845, 0.8192, 0.7048, 0.7315, 0.7276, 0.7058)),
     ("Wmd-1 + BERT + Layer 12", (0.6677, 0.6825, 0.8194, 0.7188, 0.7326, 0.7291, 0.7064)),
     ("Wmd-1 + BERT + Routing", (0.6618, 0.6897, 0.8225, 0.7122, 0.7334, 0.7301, 0.7182)),
     ("Wmd-1 + BERT + PMeans", (0.6623, 0.6873, 0.8234, 0.7139, 0.7350, 0.7339, 0.7192))),
    note=_NO_CAPTION)

_MS_TABLE_7 = _table(
    MOVERSCORE, "Table 7", (*_WMT17_PAIRS, "Average"),
    (("BLEND", (0.594, 0.571, 0.733, 0.594, 0.622, 0.671, 0.661, 0.635)),
     ("RUSE", (0.624, 0.644, 0.750, 0.697, 0.673, 0.716, 0.691, 0.685)),
     ("SentBLEU", (0.435, 0.432, 0.571, 0.393, 0.484, 0.538, 0.512, 0.481)),
     ("chrF++", (0.523, 0.534, 0.678, 0.520, 0.588, 0.614, 0.593, 0.579)),
     ("METEOR++", (0.552, 0.538, 0.720, 0.563, 0.627, 0.626, 0.646, 0.610)),
     ("BERTScore-F1", (0.670, 0.686, 0.820, 0.710, 0.729, 0.714, 0.704, 0.719)),
     ("Wmd-1 + W2V", (0.392, 0.463, 0.558, 0.463, 0.456, 0.485, 0.481, 0.471)),
     ("Wmd-1 + BERT + Routing", (0.658, 0.689, 0.823, 0.712, 0.733, 0.730, 0.718, 0.723)),
     ("Wmd-1 + BERT + MNLI + Routing", (0.665, 0.705, 0.834, 0.744, 0.735, 0.752, 0.736, 0.739)),
     ("Wmd-2 + BERT + MNLI + Routing", (0.676, 0.706, 0.831, 0.743, 0.734, 0.755, 0.732, 0.740)),
     ("Wmd-1 + BERT + PMeans", (0.662, 0.687, 0.823, 0.714, 0.735, 0.734, 0.719, 0.725)),
     ("Wmd-1 + BERT + MNLI + PMeans", (0.670, 0.708, 0.835, 0.746, 0.738, 0.762, 0.744, 0.743)),
     ("Wmd-2 + BERT + MNLI + PMeans", (0.679, 0.710, 0.832, 0.745, 0.736, 0.763, 0.740, 0.743))),
    note=_NO_CAPTION)

#: Every number of Mark-Evaluate Tables 1–6 and MoverScore Tables 1, 2, 5, 6, 7, one
#: :class:`PaperValue` per printed cell, in printed order (table by table, row by row).
VALUES: tuple[PaperValue, ...] = (
    _ME_TABLE_1 + _ME_TABLE_2 + _ME_TABLE_3 + _ME_TABLE_4 + _ME_TABLE_5 + _ME_TABLE_6
    + _MS_TABLE_1 + _MS_TABLE_2 + _MS_TABLE_5 + _MS_TABLE_6 + _MS_TABLE_7)

#: Captions as printed (plain text, whitespace normalised, without the "Table N:" label), keyed
#: by ``(paper, table)``. Mark-Evaluate only: the MoverScore extraction has no captions; see
#: :data:`TABLE_CONTEXT`.
CAPTIONS: dict[tuple[str, str], str] = {
    (MARK_EVALUATE, "Table 1"):
        "Absolute correlations to human evaluation regarding the fluency of 10 different models "
        "with the best K. Best scores for each correlation are underlined. Bold values represent "
        "the correlations where our methods outperform or match all of the other methods’ "
        "performance.",
    (MARK_EVALUATE, "Table 2"):
        "Pearson correlations on the WMT17 metrics task. The best correlation of each language "
        "pair is underlined, while correlations of our methods that outperform or match any "
        "other method are in bold.",
    (MARK_EVALUATE, "Table 3"):
        "Summary-level correlations to human evaluation on TAC 2009. Bold values represent "
        "correlations from our proposed metrics that outperform or match all the other methods. "
        "The best correlations of each score are underlined. BERTScore results were taken from "
        "Zhao et al. (2019).",
    (MARK_EVALUATE, "Table 4"):
        "Correlations to human evaluation regarding the fluency of 10 different models with "
        "default K. ISENT refers to InferSent embeddings, sSBERT refers to sentence embeddings "
        "from BERT-base (‘bert-base-nli-mean-tokens’), and SBERT refers to sentence embeddings "
        "from BERT-large (‘bert-large-nli-mean-tokens’). For each embedding type, best scores "
        "of each correlation are underlined, while bold values represent the correlations where "
        "our methods outperform or match all of the other methods’ performance. Absolute "
        "correlation values are presented for FID.",
    (MARK_EVALUATE, "Table 5"):
        "Pearson correlations for the WMT17 metrics task using contextualized sentence SBERT "
        "embeddings ('bert-base-nli-max-tokens') with default K. The best correlation of each "
        "language pair is underlined. Correlations where our methods outperform or match all of "
        "the other methods are highlighted in bold.",
    (MARK_EVALUATE, "Table 6"):
        "Pearson correlations for the WMT17 metrics task using contextualized word embeddings "
        "with default K. The best correlation of each language pair is underlined. Correlations "
        "where our methods outperform or match all of the other methods are highlighted in "
        "bold.",
}

#: Sentences of each paper's running text that present a table (verbatim, plain text,
#: whitespace normalised; symbols the extraction dropped stay dropped, as in "Pearson’s and
#: Spearman’s"), keyed by ``(paper, table)``. For MoverScore these stand in for the captions
#: that its extraction lost.
TABLE_CONTEXT: dict[tuple[str, str], tuple[str, ...]] = {
    (MARK_EVALUATE, "Table 1"): (
        "For our family of methods, as well as PRD and IMPAR, we iterate through K values until "
        "correlation drops and present the results with the best K of each method.",
        "Table 1 shows the Pearson p, Kendall k, and Spearman p correlations to human "
        "evaluation."),
    (MARK_EVALUATE, "Table 2"): (
        "We start by assessing system-level machine translations from the WMT17 metrics task "
        "(Bojar et al., 2017).",
        "Pearson (r) correlations with human evaluation are presented in Table 2."),
    (MARK_EVALUATE, "Table 3"): (
        "We evaluate each evaluation summary independently, performing a summary-level "
        "evaluation.",
        "Table 3 shows the Kendall (k), Pearson (r), and Spearman (p) correlation to human "
        "evaluation for each score."),
    (MARK_EVALUATE, "Table 4"): (
        "Human evaluation correlation on assessing language generation with default K, as well "
        "as a comparison with InferSent and SBERT embeddings from BERT-base and BERT-large, are "
        "provided in Table 4.",),
    (MARK_EVALUATE, "Table 5"): (
        "We further experimented with assessing machine translation systems using "
        "contextualized sentence embeddings.",
        "Pearson (r) correlations are presented in Table 5."),
    (MARK_EVALUATE, "Table 6"): (
        "Note that, as expected, using contextualized sentence embeddings shows lower "
        "performance than contextualized word embeddings (Table 6) due to the finer-granularity "
        "of the assessment in the latter case.",),
    (MOVERSCORE, "Table 1"): (
        "We use Pearson’s and Spearman’s to measure the correlation.",
        "We obtain the source language sentences, their system and reference translations from "
        "the WMT 2017 news translation shared task Bojar et al. (2017).",
        "Table 1: In all language pairs, the best correlation is achieved by our word mover "
        "metrics that use a BERT pretrained on MNLI as the embedding generator and PMeans to "
        "aggregate the embeddings from different BERT layers, i.e., WMD-1/2+BERT+MNLI+PMeans."),
    (MOVERSCORE, "Table 2"): (
        "We use Pearson’s and Spearman’s to measure the correlation.",
        "Each summary (either reference or system) has fewer than 100 words, and receives two "
        "human judgment scores: the Pyramid score Nenkova and Passonneau (2004) and the "
        "Responsiveness score.",
        "Tables 2: We observe that lexical metrics like ROUGE correlate above-moderate on TAC "
        "2008 and 2009 datasets."),
    (MOVERSCORE, "Table 5"): (
        "We use the representations in the 9-th BERT layer for fair comparison of BERTScore and "
        "MoverScore and show results on the machine translation task in Table 5.",
        "MoverScore outperforms both asymmetric HMD factors, while if they are combined via "
        "harmonic mean, BERTScore is on par with MoverScore."),
    (MOVERSCORE, "Table 6"): (
        "Table 6 compares our word mover based metric combining BERT representations on "
        "different layers with stronger BERT representations consolidated from these layers "
        "(using -means and routing).",),
    (MOVERSCORE, "Table 7"): (
        "Table 7, 8 and 9 show correlations between metrics (all baseline metrics and word mover "
        "based metrics) and human judgments on machine translation, text summarization and "
        "dialogue response generation, respectively.",),
}


def _index() -> dict[tuple[str, str], dict]:
    """``{(paper, table): {"rows": (...), "columns": (...), "cells": {(row, column): value}}}``,
    rows and columns in printed order."""
    tables: dict[tuple[str, str], dict] = {}
    for v in VALUES:
        if (v.paper, v.table) not in tables:
            rows, columns = _LAYOUTS[(v.paper, v.table)]
            tables[(v.paper, v.table)] = {"rows": rows, "columns": columns, "cells": {}}
        t = tables[(v.paper, v.table)]
        if (v.row, v.column) in t["cells"]:
            raise ValueError(f"{v.paper} {v.table}: two values for ({v.row!r}, {v.column!r})")
        t["cells"][(v.row, v.column)] = v.value
    return tables


_TABLES = _index()


def _known(names) -> str:
    return ", ".join(repr(n) for n in names)


def _lookup(paper: str, table: str) -> dict:
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; papers are {_known(PAPERS)}")
    if (paper, table) not in _TABLES:
        tables = [t for p, t in _TABLES if p == paper]
        raise KeyError(f"{paper} has no stored table {table!r}; tables are {_known(tables)}")
    return _TABLES[(paper, table)]


def paper_value(paper: str, table: str, row: str, column: str) -> float:
    """The number printed in one cell of one of the papers' tables.

    Parameters
    ----------
    paper : {"Mark-Evaluate", "MoverScore"}
        The paper.
    table : str
        ``"Table 1"``, ...: Mark-Evaluate Tables 1–6, MoverScore Tables 1, 2, 5, 6, 7.
    row, column : str
        Labels as stored in :data:`VALUES` (see the module's conventions).

    Returns
    -------
    float
        The value exactly as printed.

    Raises
    ------
    KeyError
        For an unknown paper, table, row or column (the message lists the known ones), or for
        a cell the paper leaves empty or prints as ``-``.

    Examples
    --------
    >>> paper_value("MoverScore", "Table 2", "BERTScore-F1", "TAC-2009 / Responsiveness / r")
    0.739
    >>> paper_value("Mark-Evaluate", "Table 4", "k", "ME_Petersen / sSBERT")
    0.911
    >>> paper_value("Mark-Evaluate", "Table 2", "cs-en", "PRD")
    Traceback (most recent call last):
    ...
    KeyError: "Mark-Evaluate Table 2 has no row 'cs-en'; rows are 'cs-en (r)', 'de-en (r)', 'ru-en (r)', 'tr-en (r)', 'zh-en (r)', 'Average (r)'"
    """
    t = _lookup(paper, table)
    if row not in t["rows"]:
        raise KeyError(f"{paper} {table} has no row {row!r}; rows are {_known(t['rows'])}")
    if column not in t["columns"]:
        raise KeyError(f"{paper} {table} has no column {column!r}; columns are "
                       f"{_known(t['columns'])}")
    if (row, column) not in t["cells"]:
        raise KeyError(f"{paper} {table} prints no number at ({row!r}, {column!r}) (the cell "
                       "is empty or '-')")
    return t["cells"][(row, column)]


def paper_table(paper: str, table: str) -> pd.DataFrame:
    """One of the papers' tables as a DataFrame, rows and columns in printed order.

    Parameters
    ----------
    paper : {"Mark-Evaluate", "MoverScore"}
        The paper.
    table : str
        ``"Table 1"``, ...: Mark-Evaluate Tables 1–6, MoverScore Tables 1, 2, 5, 6, 7.

    Returns
    -------
    pandas.DataFrame
        Index: row labels; columns: column labels, both in printed order (the order in which
        they first appear in :data:`VALUES`, except where a table's first row has an empty
        cell, as in Mark-Evaluate Table 3); ``NaN`` where the paper prints no number.

    Raises
    ------
    KeyError
        For an unknown paper or table (the message lists the known ones).

    Examples
    --------
    >>> t = paper_table("Mark-Evaluate", "Table 3")
    >>> t.shape
    (6, 7)
    >>> t.columns[:3].tolist()
    ['BERTScore', 'MoverScore', 'PRD']
    >>> t.loc["Responsiveness (k)", ["BERTScore", "MoverScore"]].tolist()
    [nan, 0.482]
    >>> paper_table("MoverScore", "Table 5")["cs-en"].head(2)
    RUSE             0.624
    Hmd-F1 + BERT    0.655
    Name: cs-en, dtype: float64
    """
    import pandas as pd

    t = _lookup(paper, table)
    data = [[t["cells"].get((r, c), float("nan")) for c in t["columns"]] for r in t["rows"]]
    return pd.DataFrame(data, index=list(t["rows"]), columns=list(t["columns"]), dtype=float)


#: Our metric (registry name) -> the column of Mark-Evaluate Tables 2, 3, 5 and 6 beside it
#: (the WMT17 and TAC studies both read it).
ME_COLUMNS = {"bertscore": "BERTScore", "moverscore": "MoverScore", "prd_precision": "PRD",
              "ipr_precision": "IMPAR", "me_petersen": "ME_Petersen",
              "me_schnabel_quality": "ME_Schnabel", "me_capture": "ME_CAPTURE"}


def comparison_row(paper: str, table: str, row: str, column: str, our_value: float,
                   setting: str) -> dict:
    """One line of ``paper_comparison.csv``: our number beside the paper's printed one.

    The paper's value is read with :func:`paper_value`, so a misspelt table, row or column
    raises, naming the known ones. Every study's table builder makes its lines with this.

    Examples
    --------
    >>> r = comparison_row("MoverScore", "Table 2", "ROUGE-2", "TAC-2009 / Pyramid / r", 0.8,
    ...                    "recall, pooled references")
    >>> r["paper_value"], r["our_value"]
    (0.803, 0.8)
    """
    return {"paper": paper, "table": table, "row": row, "column": column,
            "paper_value": paper_value(paper, table, row, column),
            "our_value": float(our_value), "setting": setting}


# --- What Mark-Evaluate says it observed in its synthetic experiments --------------------------

#: The synthetic experiments: the K sweep of §3 (Figure 2), mode collapse (§4.1, Figure 3),
#: word swap (§4.2, Figure 4).
EXPERIMENTS = ("k_sweep", "mode_collapse", "word_swap")
#: The metrics of the synthetic experiments (IPR is the paper's "IMPAR").
OBSERVED_METRICS = ("fid", "prd_precision", "prd_recall", "ipr_precision", "ipr_recall",
                    "me_schnabel_quality", "me_schnabel_diversity", "me_petersen", "me_capture")
#: What the paper can say: a direction, "as expected" (behaves as the paper expected, without a
#: direction), or "not stated".
BEHAVIOURS = ("decreasing", "increasing", "flat", "as expected", "not stated")

_WHERE = {"k_sweep": "§3, K sweep (Figure 2)",
          "mode_collapse": "§4.1 Mode collapse (Figure 3)",
          "word_swap": "§4.2 Word swap (Figure 4)"}


@dataclass(frozen=True)
class PaperObservation:
    """What the Mark-Evaluate paper says one metric did in one synthetic experiment.

    Parameters
    ----------
    paper : str
        ``"Mark-Evaluate"``.
    where : str
        Section and figure, e.g. ``"§4.2 Word swap (Figure 4)"``.
    experiment : {"k_sweep", "mode_collapse", "word_swap"}
        The experiment.
    metric : str
        One of :data:`OBSERVED_METRICS`.
    observed : {"decreasing", "increasing", "flat", "as expected", "not stated"}
        What the text says, as the perturbation (or K) grows.
    quote : str
        The sentence that says it, an exact substring of the paper's markdown extraction
        (whitespace aside, markup such as ``ME<sub>Schnabel</sub>`` kept); ``""`` when not
        stated.
    note : str, default ""
        Our reading, where the quote needs one.

    Examples
    --------
    >>> o = paper_observation("mode_collapse", "prd_precision")
    >>> o.observed
    'decreasing'
    >>> o.quote[:64]
    'On the other hand, PRD’s quality assessment or precision drops s'
    """

    paper: str
    where: str
    experiment: str
    metric: str
    observed: str
    quote: str
    note: str = ""


def _obs(experiment: str, metrics: tuple[str, ...], observed: str, quote: str,
         note: str = "") -> tuple[PaperObservation, ...]:
    return tuple(PaperObservation(MARK_EVALUATE, _WHERE[experiment], experiment, m, observed,
                                  quote, note) for m in metrics)


_K_SWEEP = ("We observe that as  $K$  increases, the population size estimated by all estimators "
            "converges to the true population size. In turn, the scores of our family of methods "
            "also converge to their maximum value of 1.")
_MC_OURS = ("Results are presented in Figure 3, where we observe that our family of methods "
            "displays the expected behavior.")
_MC_IMPAR_FID = ("IMPAR and FID also show expected performance (note that higher FID is worse "
                 "since it represents a distance from the reference and evaluation "
                 "distributions).")
_MC_PRD = ("On the other hand, PRD’s quality assessment or precision drops significantly as mode "
           "collapse aggravates, which is not expected since the quality of the evaluation set "
           "is not affected in this experiment.")
_WS_OURS = ("Both the quality and diversity assessments of ME<sub>Schnabel</sub> show the "
            "expected behavior, similarly to our single-metrics and FID.")
_WS_RECALL = ("On the other hand, the recall or diversity assessment of both PRD and IMPAR drops "
              "unexpectedly.")
_WS_IMPAR = ("Moreover, IMPAR’s quality or precision does not drop as significantly at higher "
             "swap probabilities, which is not desirable.")

#: What the paper's text says each metric did in each synthetic experiment; a pair
#: (experiment, metric) not listed here is "not stated" (see :func:`paper_observation`).
OBSERVATIONS: tuple[PaperObservation, ...] = (
    _obs("k_sweep", ("me_petersen", "me_capture"), "increasing", _K_SWEEP,
         "Figure 2 (right) plots ME_Petersen, ME_Schnabel and ME_CAPTURE for K in {1, ..., 40} "
         "on 10k MNLI training (reference) and 10k validation (evaluation) sentences; the "
         "scores converge up to 1.")
    + _obs("k_sweep", ("me_schnabel_quality",), "increasing", _K_SWEEP,
           "Figure 2 plots a single ME_Schnabel curve without saying which direction; we attach "
           "the sentence to the quality score ME_Schnabel(S_r, S_e), the order §3 uses for "
           "quality. The text says nothing of the diversity score, recorded as 'not stated'.")
    + _obs("mode_collapse", ("me_schnabel_quality", "me_schnabel_diversity", "me_petersen",
                             "me_capture"), "as expected", _MC_OURS,
           "Expected here (§4.1): quality constant, diversity dropping, single-valued scores "
           "deteriorating. The text adds that when 4 topics are dropped IMPAR's quality shifts "
           "by about 0.4 while 'ME<sub>Schnabel</sub> and ME<sub>Schnabel</sub>' (one name "
           "printed twice) shift by about 0.5, without saying in which direction.")
    + _obs("mode_collapse", ("ipr_precision",), "as expected", _MC_IMPAR_FID,
           "The text also says that when 4 topics are dropped IMPAR's quality assessment "
           "shifts by about 0.4 (no direction given): not constant at the last step.")
    + _obs("mode_collapse", ("ipr_recall", "fid"), "as expected", _MC_IMPAR_FID,
           "Expected here (§4.1): diversity drops; for FID (a distance) the single score "
           "deteriorates, i.e. FID grows.")
    + _obs("mode_collapse", ("prd_precision",), "decreasing", _MC_PRD)
    + _obs("word_swap", ("me_schnabel_quality", "me_schnabel_diversity", "me_petersen",
                         "me_capture", "fid"), "as expected", _WS_OURS,
           "Expected here (§4.2): 'precision is expected to drop, while recall should remain "
           "constant. The overall score of single-valued metrics should deteriorate as the swap "
           "probability increases.'")
    + _obs("word_swap", ("prd_recall", "ipr_recall"), "decreasing", _WS_RECALL)
    + _obs("word_swap", ("ipr_precision",), "decreasing", _WS_IMPAR,
           "It drops, but the paper says not as significantly as it should at higher swap "
           "probabilities.")
)

_OBSERVED = {(o.experiment, o.metric): o for o in OBSERVATIONS}


def paper_observation(experiment: str, metric: str) -> PaperObservation:
    """What the Mark-Evaluate paper says a metric did in one of its synthetic experiments.

    Parameters
    ----------
    experiment : {"k_sweep", "mode_collapse", "word_swap"}
        The experiment.
    metric : str
        One of :data:`OBSERVED_METRICS`, e.g. ``"ipr_recall"`` (IPR is the paper's "IMPAR").

    Returns
    -------
    PaperObservation
        The recorded observation, or one with ``observed="not stated"`` and ``quote=""`` where
        the text says nothing specific about that metric in that experiment.

    Raises
    ------
    KeyError
        For an unknown experiment or metric (the message lists the known ones).

    Examples
    --------
    >>> paper_observation("k_sweep", "me_petersen").observed
    'increasing'
    >>> paper_observation("mode_collapse", "me_schnabel_diversity").observed
    'as expected'
    >>> o = paper_observation("word_swap", "prd_precision")
    >>> o.observed, o.quote
    ('not stated', '')
    """
    if experiment not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {experiment!r}; experiments are "
                       f"{_known(EXPERIMENTS)}")
    if metric not in OBSERVED_METRICS:
        raise KeyError(f"unknown metric {metric!r}; metrics are {_known(OBSERVED_METRICS)}")
    found = _OBSERVED.get((experiment, metric))
    if found is not None:
        return found
    return PaperObservation(MARK_EVALUATE, _WHERE[experiment], experiment, metric,
                            "not stated", "")


__all__ = ["BEHAVIOURS", "CAPTIONS", "EXPERIMENTS", "MARK_EVALUATE", "ME_COLUMNS", "MOVERSCORE",
           "OBSERVATIONS", "OBSERVED_METRICS", "PAPERS", "PaperObservation", "PaperValue",
           "TABLE_CONTEXT", "VALUES", "comparison_row", "paper_observation", "paper_table",
           "paper_value"]
