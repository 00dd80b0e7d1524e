"""The result rows' one vocabulary: labels, orientation, and the committed files that use it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, strategies as st

from markeval import registry
from markeval.experiments.vocabulary import (LONG_COLUMNS, PROTOCOLS, encoder_name, label,
                                             oriented_scores)
from markeval.reproduce.run import read_rows
from markeval.reproduce.stages import all_stages

RESULTS = Path(__file__).resolve().parents[1] / "markeval" / "results"


@given(name=st.sampled_from(registry.names()),
       k=st.one_of(st.none(), st.just(math.nan), st.integers(1, 50)),
       options=st.sampled_from(["", math.nan, "SMD", "layer 3"]))
def test_a_label_is_the_registry_label_with_k_and_options(name, k, options):
    text = label(name, k, options)
    assert text.startswith(registry.get(name).label)
    assert (" K=" in text) == (k is not None and not math.isnan(k))
    assert text.endswith(f"({options})") == (isinstance(options, str) and options != "")
    flipped = label(name, k, options, oriented=True)
    assert flipped == ("" if registry.get(name).higher_is_better else "-") + text


@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=8),
       names=st.lists(st.sampled_from(registry.names()), min_size=1, max_size=8))
def test_oriented_scores_negate_exactly_the_lower_is_better_metrics(values, names):
    n = min(len(values), len(names))
    rows = pd.DataFrame({"pair": "xx-en", "system": "s", "human": 0.0, "metric": names[:n],
                         "k": np.nan, "options": "", "value": values[:n]})
    table = oriented_scores(rows)
    sign = np.array([1.0 if registry.get(m).higher_is_better else -1.0 for m in names[:n]])
    np.testing.assert_array_equal(table["score"], sign * np.array(values[:n]))
    assert list(table.columns) == ["pair", "system", "human", "metric", "score", "name", "k",
                                   "options"]
    assert list(table["name"]) == names[:n]  # the registry keys ride along with the labels


def test_bad_names_are_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown metric 'PRD precision'"):
        label("PRD precision")
    assert encoder_name("sentence-transformers/all-mpnet-base-v2") == "all-mpnet-base-v2"


@pytest.mark.parametrize("stage", sorted(all_stages()))
def test_every_stage_file_ends_in_the_vocabulary_with_registry_metrics(stage):
    rows = read_rows(RESULTS, stage)
    assert list(rows.columns[-len(LONG_COLUMNS):]) == list(LONG_COLUMNS)
    assert set(rows["metric"]) <= set(registry.names())
    assert set(rows["protocol"]) <= set(PROTOCOLS)
    encoders = {e for e in rows["encoder"] if isinstance(e, str)}  # empty: no encoder
    assert encoders == {encoder_name(e) for e in encoders}
    k = rows["k"].dropna()
    assert (k == k.round()).all() and (k >= 1).all()
