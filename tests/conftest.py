"""Shared paths and helpers for the test suite."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def toc_files() -> list[str]:
    """Every file stem listed in ``_toc.yml`` (root first), e.g. ``book/index``."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    stems = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                stems.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return stems


def chapter_sources() -> list[Path]:
    """The paired chapter sources: MyST ``.md`` files under ``book/`` with a jupytext header."""
    return sorted(
        p for p in (REPO / "book").rglob("*.md")
        if "_build" not in p.parts and p.read_text(encoding="utf-8")[:600].count("jupytext")
    )


def _data_found(name: str) -> bool:
    from markeval.datasets import DataNotFoundError, locate

    try:
        locate(name, download_if_missing=False)
    except DataNotFoundError:
        return False
    return True


# Tests on the shared human-judgement data skip, with a reason, where it is absent.
needs_wmt17 = pytest.mark.skipif(
    not _data_found("wmt17"), reason="WMT17 data not found (../shared/data or $MARKEVAL_DATA)")
needs_tac = pytest.mark.skipif(
    not _data_found("tac"), reason="TAC data not found (../shared/data or $MARKEVAL_DATA)")


@pytest.fixture(scope="session")
def wmt17():
    """{pair: (references, {system: outputs})} for the seven into-English WMT17 pairs."""
    from markeval.datasets import load_wmt17, wmt17_pairs

    out = {}
    for pair in wmt17_pairs():
        data = load_wmt17(pair)
        out[pair] = (list(data.references), {k: list(v) for k, v in data.systems.items()})
    return out
