"""One rule for "the best single K" in every reproduction stage."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from markeval.experiments.choosing_k import best_k

values = st.dictionaries(st.integers(1, 50),
                         st.one_of(st.just(math.nan), st.sampled_from([0.1, 0.5, 0.9]),
                                   st.floats(-1, 1)), min_size=1)


@given(values)
def test_the_best_k_is_the_smallest_k_of_the_highest_defined_value(grid):
    k = best_k(grid)
    defined = {key: v for key, v in grid.items() if not math.isnan(v)}
    if not defined:
        assert k == min(grid)
        return
    top = max(defined.values())
    assert grid[k] == top
    assert k == min(key for key, v in defined.items() if v == top)


def test_ties_nan_and_empty():
    assert best_k({10: 0.93, 3: 0.93, 1: 0.9}) == 3
    assert best_k({1: math.nan, 3: 0.2, 10: math.nan}) == 3
    assert best_k({5: math.nan, 2: math.nan}) == 2
    with pytest.raises(ValueError, match="values must hold at least one K, got an empty"):
        best_k({})
