"""Doctest support: skip the examples that read WMT17/TAC when that data is absent.

The examples print real counts; on a machine with neither the shared data folder
nor the download cache they cannot run (and must not download during tests).
"""

import pytest

from markeval.datasets._locate import DataNotFoundError, locate

_NEEDS = {
    "wmt17": ("load_wmt17(", "wmt17_da_segments(", "wmt17_da_systems(", "wmt17_system_match("),
    "tac": ("load_tac(", "tac_scores("),
}


def _available(name: str) -> bool:
    try:
        locate(name, download_if_missing=False)
    except DataNotFoundError:
        return False
    return True


@pytest.fixture(autouse=True)
def _skip_without_data(request):
    dtest = getattr(request.node, "dtest", None)
    if dtest is None:
        return
    source = "".join(example.source for example in dtest.examples)
    for name, calls in _NEEDS.items():
        if any(call in source for call in calls) and not _available(name):
            pytest.skip(f"{name} data not found (set MARKEVAL_DATA; see markeval.datasets.locate)")
