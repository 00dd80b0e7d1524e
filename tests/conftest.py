"""Shared paths and helpers for the test suite."""

from __future__ import annotations

import dataclasses
import functools
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


def pin_data(monkeypatch, folder: Path) -> Path:
    """Pin data set ``folder.name`` to the sizes and hashes of the files now in ``folder``.

    For tests of the loaders' own logic on fabricated files; the pinned-checksum check itself
    is tested in ``test_datasets.py``.
    """
    import dataclasses
    from types import MappingProxyType

    from markeval.datasets import _locate, _sources
    from markeval.datasets._integrity import sha256_file

    source = _sources.SOURCES[folder.name]
    sums = {f: ((folder / f).stat().st_size, sha256_file(folder / f))
            for f in source.files if (folder / f).is_file()}
    monkeypatch.setitem(_sources.SOURCES, folder.name,
                        dataclasses.replace(source, checksums=MappingProxyType(sums)))
    monkeypatch.setattr(_locate, "_hashed", set())
    return folder


def use_fake_data(monkeypatch, root: Path) -> None:
    """Point the loaders at fabricated data sets under ``root`` (pinned to their files)."""
    from markeval.datasets._sources import SOURCES

    for name in SOURCES:
        if (root / name).is_dir():
            pin_data(monkeypatch, root / name)
    monkeypatch.setenv("MARKEVAL_DATA", str(root))


def _data_found(name: str) -> bool:
    from markeval.datasets import DataNotFoundError, locate

    try:
        locate(name, download_if_missing=False)
    except DataNotFoundError:
        return False
    return True


_FOUND = {"wmt17": _data_found("wmt17"), "tac": _data_found("tac")}

# Tests on the shared human-judgement data skip, with a reason, where it is absent.
needs_wmt17 = pytest.mark.skipif(
    not _FOUND["wmt17"], reason="WMT17 data not found (../shared/data or $MARKEVAL_DATA)")
needs_tac = pytest.mark.skipif(
    not _FOUND["tac"], reason="TAC data not found (../shared/data or $MARKEVAL_DATA)")


def assert_frozen_options(options) -> None:
    """A metric's options object (``ChrFOptions``, ...) cannot change and can be a dict key."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(options, dataclasses.fields(options)[0].name, None)
    copy = dataclasses.replace(options)
    assert copy == options and hash(copy) == hash(options) and {options: 1}[copy] == 1


def assert_checked_by_options(options_class, bad: dict, corpus, statistics, sentence,
                              *more) -> None:
    """``options_class(**bad)`` raises naming the bad arguments, and each entry point given
    ``**bad`` raises that very error (the one check): ``corpus`` and ``statistics`` of one
    line, ``sentence`` of one sentence, and ``more``, callables of the options alone."""
    with pytest.raises((TypeError, ValueError)) as made:
        options_class(**bad)
    assert all(name in str(made.value) for name in bad), made.value
    calls = [functools.partial(corpus, ["a"], ["a"]), functools.partial(statistics, ["a"], ["a"]),
             functools.partial(sentence, "a", "a"), *more]
    for call in calls:
        with pytest.raises(type(made.value)) as raised:
            call(**bad)
        assert str(raised.value) == str(made.value)


def assert_options_reach_every_entry_point(options, hypotheses, references, corpus,
                                           statistics, from_statistics, sentence):
    """Given ``options`` as keywords, ``corpus`` scores as ``from_statistics`` of
    ``statistics``, and ``sentence`` line by line as the item scores of those; returns them."""
    keywords = dataclasses.asdict(options)
    stats = statistics(hypotheses, references, **keywords)
    assert corpus(hypotheses, references, **keywords) == from_statistics(stats)
    assert [sentence(h, r, **keywords).score for h, r in zip(hypotheses, references)] == list(
        stats.item_scores())
    return stats

# The library's doctests that read WMT17 or TAC print real counts: where the data is absent they
# skip (they must not download during tests). Which calls read which data set:
_DOCTEST_NEEDS = {
    "wmt17": ("load_wmt17(", "wmt17_da_segments(", "wmt17_da_systems(", "wmt17_system_match("),
    "tac": ("load_tac(", "tac_scores("),
}


def pytest_collection_modifyitems(config, items):
    """Skip the doctests (anywhere in the run, ``markeval/`` included) whose data is absent.

    A collection hook, unlike a fixture, reaches items outside ``tests/``, so no pytest file has
    to live inside the package. It is loaded whenever ``tests/`` is collected (``make test``,
    a bare ``pytest``); a module's doctests run on their own need the data.
    """
    for item in items:
        dtest = getattr(item, "dtest", None)
        if dtest is None:
            continue
        source = "".join(example.source for example in dtest.examples)
        for name, calls in _DOCTEST_NEEDS.items():
            if not _FOUND[name] and any(call in source for call in calls):
                item.add_marker(pytest.mark.skip(
                    reason=f"{name} data not found (set MARKEVAL_DATA; see markeval.datasets.locate)"))
                break


#: Test files whose tests the two xdist workers of ``make test`` share out one by one: the
#: consistency checks of the committed results, the two Colab-path runs and the benchmark
#: scripts' smoke runs, up to minutes of independent work each (one worker would take them all
#: under ``--dist loadfile``, which keeps every other file whole on one worker so that its
#: module fixtures, a book build or a graded course, are built once and a notebook's cells run
#: in order in one kernel).
SHARED_OUT = ("tests/test_reproduce.py::", "tests/test_colab_path.py::",
              "tests/test_benchmarks.py::")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, except that the files of :data:`SHARED_OUT` are shared out by test.

    (``--dist loadgroup`` with ``xdist_group`` marks would say this, but pytest-xdist 3.8 cannot
    rename the items of pytest 9, so its groups are ignored.)
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesExceptSharedOut(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(SHARED_OUT) else super()._split_scope(nodeid)

    return FilesExceptSharedOut(config, log)


@pytest.fixture(scope="session")
def wmt17():
    """{pair: (references, {system: outputs})} for the seven into-English WMT17 pairs."""
    from markeval.datasets import load_wmt17, wmt17_pairs

    out = {}
    for pair in wmt17_pairs():
        data = load_wmt17(pair)
        out[pair] = (list(data.references), {k: list(v) for k, v in data.systems.items()})
    return out
