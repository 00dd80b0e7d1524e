"""The Execution statistics page: written from the committed timings and provenance, and
up to date with them; every chapter timed."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import REPO
from tools import execution_stats as stats


def test_the_committed_page_is_the_one_the_committed_files_give():
    assert stats.PAGE.read_text(encoding="utf-8") == stats.current_page(), (
        "book/execution_stats.md is stale: run `python -m tools.execution_stats --page`")


def test_every_chapter_has_been_timed():
    timed = set(stats.read_timings()["chapter"])
    missing = [md.stem for md in stats.chapters() if md.stem not in timed]
    assert not missing, f"not timed yet: {missing}; run `python -m tools.execution_stats NAME`"


def test_the_page_lists_every_chapter_and_every_committed_stage():
    provenance = {"ladder": {"full": {
        "units": 11, "cold_compute_s": 1028.1, "finished": "2026-11-26T03:31:54+00:00",
        "commit": "2493e4c9cc0c5658e8050fd21c01282d3730442b", "machine": "2 cores (X)"}}}
    timings = pd.DataFrame([{
        "chapter": "01_evaluating_generated_text", "ci_seconds": 20.4,
        "started": "2026-11-26T19:06:28+00:00", "load_average": 7.6,
        "commit": "4a2e97143c3f9dcc6eb77b333c2dc985240e7686+uncommitted changes",
        "machine": "2 cores (X)"}])
    page = stats.page(timings, provenance)
    assert "| {doc}`01_evaluating_generated_text` | 20 s |" in page
    assert "| {doc}`02_perplexity` | not timed yet |" in page
    assert "| `ladder` | `full` | 11 | 17 min | 2026-11-26 03:31 | `2493e4c9cc` |" in page
    assert "| `ladder` | `ci` | not run yet |" in page
    assert "`4a2e97143c`, with uncommitted changes" in page
    assert all(len(line) <= 100 for line in page.splitlines()
               if not line.startswith(("|", "```{table}"))), "prose lines over 100 characters"


def test_stages_read_are_the_quoted_stage_names(tmp_path):
    md = tmp_path / "99_x.md"
    md.write_text('rows = load_rows("ladder", P)\nthe ladder_mpnet stage\n', encoding="utf-8")
    assert stats.stages_read(md, ["ladder", "ladder_mpnet"]) == ["ladder"]


def test_unknown_chapter_names_are_refused():
    with pytest.raises(ValueError, match="names: no chapter .*'99_nothing'"):
        stats.measure(["99_nothing"], REPO)
