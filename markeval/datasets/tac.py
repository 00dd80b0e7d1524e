"""TAC 2008 and 2009 multi-document summarization with human judgements.

The MoverScore authors' JSON files: per topic, 4 reference (model) summaries and
the scored peer summaries. NIST distributes TAC for research use: compute and
report aggregate numbers (counts, correlations), never print summary text.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from markeval._checks import check_choice
from markeval.datasets._locate import locate
from markeval.datasets._sources import TAC_FILES


@dataclass(frozen=True)
class TacSummary:
    """One judged summary.

    Attributes
    ----------
    summ_id : str
        Peer id: a number for systems, a letter ``'A'``-``'H'`` for the human
        summarizers (whose summaries are also this topic's references).
    sentences : tuple of str
        The summary, one sentence per item (a few items are empty strings, as in
        the source file).
    pyr_score : float
        Pyramid score.
    pyr_mod_score : float or None
        Modified pyramid score; ``None`` for human summaries, which have none.
    responsiveness : float
        Overall responsiveness (1-5 in 2008, 1-10 in 2009).
    """

    summ_id: str
    sentences: tuple[str, ...]
    pyr_score: float
    pyr_mod_score: float | None
    responsiveness: float

    @property
    def is_human(self) -> bool:
        """True for a human-written summary (letter id)."""
        return not self.summ_id.isdigit()


@dataclass(frozen=True)
class TacTopic:
    """One TAC topic (document set A) with its references and judged summaries.

    Attributes
    ----------
    topic_id : str
        E.g. ``'D0801'``.
    reference_ids : tuple of str
        Ids of the reference summaries, e.g. ``'D0801-A.M.100.A.C'`` (summarizer C).
    references : tuple of tuple of str
        The reference summaries, each a tuple of sentences.
    annotations : tuple of TacSummary
        The judged summaries in file order.
    """

    topic_id: str
    reference_ids: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]
    annotations: tuple[TacSummary, ...]


def _check_year(year) -> int:
    return int(check_choice(year, "year", TAC_FILES))


def _float(value) -> float | None:
    return None if value is None else float(value)


@functools.lru_cache(maxsize=None)
def _load(path: Path) -> tuple[TacTopic, ...]:
    with path.open(encoding="utf-8") as handle:
        raw = json.load(handle)
    topics = []
    for topic_id in sorted(raw):
        entry = raw[topic_id]
        topics.append(TacTopic(
            topic_id=topic_id,
            reference_ids=tuple(r["id"] for r in entry["references"]),
            references=tuple(tuple(r["text"]) for r in entry["references"]),
            annotations=tuple(
                TacSummary(
                    summ_id=str(a["summ_id"]),
                    sentences=tuple(a["text"]),
                    pyr_score=float(a["pyr_score"]),
                    pyr_mod_score=_float(a.get("pyr_mod_score")),
                    responsiveness=float(a["responsiveness"]),
                )
                for a in entry["annotations"]
            ),
        ))
    return tuple(topics)


def load_tac(year: int) -> tuple[TacTopic, ...]:
    """Load TAC 2008 (48 topics) or TAC 2009 (44 topics), ordered by topic id.

    Parameters
    ----------
    year : {2008, 2009}

    Returns
    -------
    tuple of TacTopic
        Each with 4 references; 2008 has 58 system and 4 human summaries per topic,
        2009 has 55 and 4. Parsed once per process.

    Examples
    --------
    Counts only: TAC text must not be printed.

    >>> topics = load_tac(2008)
    >>> len(topics), {len(t.references) for t in topics}
    (48, {4})
    >>> sum(not s.is_human for s in topics[0].annotations)
    58
    """
    name = TAC_FILES[_check_year(year)]  # before locating: a typo must not start a download
    return _load(locate("tac") / name)


def tac_scores(year: int) -> pd.DataFrame:
    """The human judgements of one TAC year as a table (no text).

    Parameters
    ----------
    year : {2008, 2009}

    Returns
    -------
    pandas.DataFrame
        One row per judged summary, columns ``topic``, ``summ_id``, ``is_human``,
        ``pyr_score``, ``pyr_mod_score`` (NaN for human summaries),
        ``responsiveness``, ``n_sentences``; a fresh copy per call.

    Examples
    --------
    >>> scores = tac_scores(2009)
    >>> len(scores), int(scores["is_human"].sum())
    (2596, 176)
    >>> bool(scores["responsiveness"].between(1, 10).all())
    True
    """
    rows = [
        (t.topic_id, s.summ_id, s.is_human, s.pyr_score, s.pyr_mod_score, s.responsiveness,
         len(s.sentences))
        for t in load_tac(year)
        for s in t.annotations
    ]
    return pd.DataFrame(rows, columns=["topic", "summ_id", "is_human", "pyr_score",
                                       "pyr_mod_score", "responsiveness", "n_sentences"]).astype(
        {"pyr_mod_score": float})
