"""Tests for markeval.datasets: locating/downloading data, BBC, WMT17 and TAC loaders.

Real-data tests skip when the shared data folder is absent. No test reaches the
network: an autouse fixture replaces the download function, and the download test
serves files from a temporary folder through a file:// URL. TAC text is never printed.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import urllib.error
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from markeval import _written
from markeval.datasets import (
    BBC_TOPICS,
    DataIntegrityError,
    DataNotFoundError,
    bbc_sentences,
    cache_dir,
    download,
    expand_systems,
    load_bbc,
    load_tac,
    load_wmt17,
    locate,
    match_system_names,
    search_roots,
    tac_scores,
    verify,
    wmt17_da_segments,
    wmt17_da_systems,
    wmt17_pairs,
    wmt17_system_match,
)
from conftest import REPO, needs_tac, needs_wmt17, pin_data
from markeval.datasets import _locate, _sources
from markeval.datasets._integrity import CHECKSUMS_FILE, sha256_file
from markeval.datasets.checksums import compute_checksums
from markeval.datasets.bbc import _decode

REAL_OPEN = _locate._open
_SHARED = REPO.parent / "shared" / "data"

REF_LINES = {"cs-en": 3005, "de-en": 3004, "fi-en": 3002, "lv-en": 2001, "ru-en": 3001,
             "tr-en": 3007, "zh-en": 2001}
N_SYSTEMS = {"cs-en": 4, "de-en": 11, "fi-en": 6, "lv-en": 9, "ru-en": 9, "tr-en": 10,
             "zh-en": 16}
BBC_COUNTS = {"business": 510, "entertainment": 386, "politics": 417, "sports": 511, "tech": 401}


def _files_in(folder):
    """The files in ``folder`` but markeval's manifest of what it wrote there."""
    return sorted(p.name for p in folder.iterdir() if p.name != _written.MANIFEST)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    def refuse(url):
        raise AssertionError(f"a test tried to download {url}")
    monkeypatch.setattr(_locate, "_open", refuse)


# --------------------------------------------------------------------------- locate

def _fake_tac_topic() -> dict:
    def summary(summ_id, pyr_mod=True):
        entry = {"text": ["s1 .", "s2 ."], "pyr_score": 0.5, "responsiveness": 3.0,
                 "topic_id": "D0801-A", "summ_id": summ_id}
        if pyr_mod:
            entry["pyr_mod_score"] = 0.4
        return entry
    return {"D0801": {
        "references": [{"text": ["r ."], "id": f"D0801-A.M.100.A.{c}"} for c in "ACEG"],
        "annotations": [summary("1"), summary("A", pyr_mod=False)],
    }}


FAKE_TAC = json.dumps(_fake_tac_topic()).encode()


def _write_tac(root: Path, remote: bool = False) -> Path:
    """Fake TAC files under ``root/tac`` (named as upstream when ``remote``)."""
    folder = root / "tac"
    folder.mkdir(parents=True, exist_ok=True)
    for name in _sources.TAC.files:
        (folder / (_sources.TAC.remote[name] if remote else name)).write_bytes(FAKE_TAC)
    return folder


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No real data root is visible: cwd, package dir and HOME all point into tmp_path.

    TAC is pinned to the fake files of :func:`_write_tac`; nothing is verified yet.
    """
    # (a mirror set for the whole session, as the README offers a course behind a firewall,
    # would otherwise replace the tests' own file:// source)
    for var in ("MARKEVAL_DATA", "MARKEVAL_OFFLINE", "MARKEVAL_CACHE", _locate.MIRROR_ENV):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "work" / "main" / "book").mkdir(parents=True)
    (tmp_path / "site" / "markeval" / "datasets").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path / "work" / "main" / "book")
    monkeypatch.setattr(_locate, "_PACKAGE_DIR", tmp_path / "site" / "markeval" / "datasets")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    pin_data(monkeypatch, _write_tac(tmp_path / "pinned"))
    return tmp_path


@pytest.fixture
def served(isolated, monkeypatch):
    """A file:// mirror of the fake TAC, laid out as upstream; returns (folder, fetched URLs)."""
    remote = _write_tac(isolated / "remote", remote=True)
    monkeypatch.setitem(_sources.SOURCES, "tac", dataclasses.replace(
        _sources.SOURCES["tac"], base_url=remote.as_uri() + "/"))
    fetched = []

    def local_only(url):
        assert url.startswith("file://"), url
        fetched.append(url)
        return REAL_OPEN(url)
    monkeypatch.setattr(_locate, "_open", local_only)
    return remote, fetched


def test_cache_dir_is_under_home_unless_moved(isolated, monkeypatch):
    assert cache_dir() == isolated / "home" / ".cache" / "markeval"
    monkeypatch.setenv("MARKEVAL_CACHE", str(isolated / "elsewhere"))
    assert cache_dir() == isolated / "elsewhere"
    assert search_roots()[-1] == (isolated / "elsewhere", "download cache")


def test_search_order_env_then_cwd_then_package_then_cache(isolated, monkeypatch):
    monkeypatch.setenv("MARKEVAL_DATA", str(isolated / "env"))
    roots = [path for path, _ in search_roots()]
    assert roots[0] == isolated / "env"
    assert roots.index(isolated / "work" / "shared" / "data") < roots.index(
        isolated / "site" / "shared" / "data")
    assert roots[-1] == cache_dir()
    assert len(roots) == len(set(roots))


def test_locate_prefers_env_then_shared_then_cache(isolated, monkeypatch):
    cache = _write_tac(cache_dir())
    assert locate("tac", download_if_missing=False) == cache
    shared = _write_tac(isolated / "work" / "shared" / "data")  # <repo>/../shared/data
    assert locate("tac", download_if_missing=False) == shared
    env = _write_tac(isolated / "env")
    monkeypatch.setenv("MARKEVAL_DATA", str(isolated / "env"))
    assert locate("tac", download_if_missing=False) == env


def test_locate_finds_shared_data_above_the_package(isolated):
    folder = _write_tac(isolated / "site" / "shared" / "data")
    assert locate("tac", download_if_missing=False) == folder


def test_incomplete_folder_is_skipped(isolated, monkeypatch):
    env = _write_tac(isolated / "env")
    (env / _sources.TAC.files[1]).unlink()
    monkeypatch.setenv("MARKEVAL_DATA", str(isolated / "env"))
    cache = _write_tac(cache_dir())
    assert locate("tac", download_if_missing=False) == cache


def test_missing_data_error_lists_every_place(isolated, monkeypatch):
    monkeypatch.setenv("MARKEVAL_OFFLINE", "1")
    with pytest.raises(DataNotFoundError, match="MARKEVAL_OFFLINE") as info:
        locate("wmt17")
    message = str(info.value)
    for root, _ in search_roots():
        assert str(root / "wmt17") in message
    assert "$MARKEVAL_DATA: not set" in message
    # It names the folder that would satisfy the loader, and the other two ways.
    assert f"put the {len(_sources.WMT17.files)} files" in message
    assert f"in {cache_dir() / 'wmt17'}" in message
    assert "set MARKEVAL_DATA" in message and "internet access" in message


def test_missing_data_error_reports_incomplete_folder(isolated, monkeypatch):
    env = _write_tac(isolated / "env")
    (env / _sources.TAC.files[0]).unlink()
    monkeypatch.setenv("MARKEVAL_DATA", str(isolated / "env"))
    with pytest.raises(DataNotFoundError, match=r"incomplete, 1 of 2 files missing"):
        locate("tac", download_if_missing=False)


def test_offline_download_failure_is_reported(isolated, monkeypatch):
    def offline(url):
        raise urllib.error.URLError("no route to host")
    monkeypatch.setattr(_locate, "_open", offline)
    with pytest.raises(DataNotFoundError, match=r"failed: .*no route to host"):
        locate("tac")
    assert not list(cache_dir().rglob(".part-*"))


def test_unknown_dataset_name():
    with pytest.raises(ValueError, match="unknown data set 'bbc'"):
        locate("bbc")


def test_download_through_file_url(served, capfd):
    remote, fetched = served
    folder = locate("tac")
    assert folder == cache_dir() / "tac"
    assert fetched == [_sources.SOURCES["tac"].url(f) for f in _sources.TAC.files]
    assert all(url.startswith(remote.as_uri() + "/tac.0") and not url.endswith(".json")
               for url in fetched)
    for name in _sources.TAC.files:
        assert (folder / name).read_bytes() == FAKE_TAC
    assert not list(folder.glob(".part-*"))
    assert "downloading tac" in capfd.readouterr().err  # a progress bar on stderr
    topics = load_tac(2008)  # the loader reads the downloaded copy
    assert [len(t.annotations) for t in topics] == [2]
    assert locate("tac") == folder and len(fetched) == 2  # found, not fetched again


def test_download_from_a_mirror_argument(isolated, monkeypatch):
    mirror = _write_tac(isolated / "mirror", remote=True)
    monkeypatch.setattr(_locate, "_open", REAL_OPEN)
    folder = download("tac", isolated / "root", base_url=mirror.as_uri() + "/", progress=False)
    assert _files_in(folder) == sorted(_sources.TAC.files)


@pytest.mark.parametrize("kwargs, message", [
    ({"base_url": "file:///mirror"}, "base_url must be an http://, https:// or file:// URL "
                                     "ending in '/', got 'file:///mirror'"),
    ({"base_url": 3}, "base_url must be an http://, https:// or file:// URL ending in '/', got 3"),
    ({"base_url": "mirror/"}, "base_url must be an http://, https:// or file:// URL ending in "
                              "'/', got 'mirror/'"),
    ({"base_url": "ftp://host/"}, "got 'ftp://host/'"),
    ({"base_url": "https:///"}, "got 'https:///'"),
    ({"progress": "no"}, "progress must be True or False"),
])
def test_download_refuses_bad_arguments_by_name(isolated, kwargs, message):
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        download("tac", isolated / "root", **kwargs)


@pytest.mark.parametrize("mirror", ["mirror/", "/srv/mirror/", "http://host"])
def test_a_malformed_mirror_is_named_before_anything_is_fetched(isolated, monkeypatch, mirror):
    fetched = []
    monkeypatch.setattr(_locate, "_open", lambda url: fetched.append(url))
    monkeypatch.setenv(_locate.MIRROR_ENV, mirror)
    with pytest.raises(ValueError, match=re.escape(f"$MARKEVAL_DATA_MIRROR must be an http://, "
                                                   f"https:// or file:// URL ending in '/', "
                                                   f"got {mirror!r}")):
        download("tac", isolated / "root", progress=False)
    assert fetched == []


def test_download_completes_a_partial_copy(served):
    _, fetched = served
    _write_tac(cache_dir())
    (cache_dir() / "tac" / _sources.TAC.files[1]).unlink()
    locate("tac")
    assert fetched == [_sources.SOURCES["tac"].url(_sources.TAC.files[1])]


def test_interrupted_download_leaves_no_partial_file(served, monkeypatch):
    _, fetched = served

    def flaky(url):
        fetched.append(url)
        if len(fetched) == 2:
            raise urllib.error.URLError("connection reset")
        return REAL_OPEN(url)
    monkeypatch.setattr(_locate, "_open", flaky)
    with pytest.raises(DataNotFoundError, match="connection reset"):
        locate("tac")
    files = _files_in(cache_dir() / "tac")
    assert files == [_sources.TAC.files[0]]


def test_an_endless_download_stops_at_the_pinned_size(served, monkeypatch):
    """A hostile or broken server that keeps sending is cut off, not written to the end."""
    _, fetched = served
    sent = []

    class Endless:
        def read(self, n):
            sent.append(n)
            return b"x" * n

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False
    monkeypatch.setattr(_locate, "_open", lambda url: (fetched.append(url), Endless())[1])
    size = _sources.SOURCES["tac"].checksums[_sources.TAC.files[0]][0]
    with pytest.raises(DataIntegrityError, match=rf"larger than the pinned file \({size} "
                                                 r"bytes\): stopped after \d+ bytes"):
        locate("tac")
    assert sum(sent) <= size + _locate._BLOCK
    assert _files_in(cache_dir() / "tac") == []


@pytest.mark.parametrize("damage", ["truncated", "html error page", "changed upstream"])
def test_a_wrong_download_is_refused_and_not_kept(served, damage):
    remote, fetched = served
    bad = remote / _sources.TAC.remote[_sources.TAC.files[1]]
    bad.write_bytes({"truncated": FAKE_TAC[:-7],
                     "html error page": b"<html><body>404: Not Found</body></html>",
                     "changed upstream": FAKE_TAC.replace(b"0.5", b"0.6")}[damage])
    with pytest.raises(DataIntegrityError) as info:
        locate("tac")
    message = str(info.value)
    assert _sources.TAC.files[1] in message and bad.as_uri() in message
    assert sha256_file(bad) in message  # the actual hash ...
    assert _sources.SOURCES["tac"].checksums[_sources.TAC.files[1]][1] in message  # ... expected
    # The good file is kept, the wrong one never appears under its name, no temporary is left.
    assert _files_in(cache_dir() / "tac") == [_sources.TAC.files[0]]


def test_a_corrupt_local_copy_is_refused_by_name(isolated, monkeypatch):
    env = _write_tac(isolated / "env")
    monkeypatch.setenv("MARKEVAL_DATA", str(isolated / "env"))
    assert locate("tac") == env  # hashed once here
    target = env / _sources.TAC.files[0]
    target.write_bytes(FAKE_TAC[:-1])  # truncated: the size check catches it on every call
    with pytest.raises(DataIntegrityError, match=r"\$MARKEVAL_DATA.*not the pinned file") as info:
        locate("tac")
    assert str(target) in str(info.value) and sha256_file(target) in str(info.value)
    assert "https://raw.githubusercontent.com/AIPHES/emnlp19-moverscore" in str(info.value)
    assert target.exists()  # a user's copy is never deleted
    # Same size, other bytes: only a hash sees it, on first use in a process or by verify().
    target.write_bytes(FAKE_TAC)
    assert locate("tac") == env  # a folder that failed is hashed again, and passes
    target.write_bytes(FAKE_TAC.replace(b"0.5", b"0.6"))
    assert locate("tac") == env  # hashed already in this process: sizes only
    with pytest.raises(DataIntegrityError, match="sha256"):
        verify("tac")
    monkeypatch.setattr(_locate, "_hashed", set())  # a new process
    with pytest.raises(DataIntegrityError):
        locate("tac")


@pytest.mark.parametrize("damage", [b"<html>rate limited</html>",
                                    FAKE_TAC.replace(b"0.5", b"0.6")])  # same size: an edit
def test_a_changed_file_in_the_download_cache_is_left_to_its_owner(served, damage):
    """markeval keeps a download only once it matches its pin: a file there that differs
    changed since (an edit, a damaged disk) and may be someone's work. Before, it was deleted
    and downloaded again; now it is named, kept, and downloads again once moved away."""
    _, fetched = served
    cache = _write_tac(cache_dir())
    changed = cache / _sources.TAC.files[0]
    changed.write_bytes(damage)
    (cache / _sources.TAC.files[1]).unlink()  # a partial download's leftovers are checked too
    with pytest.raises(DataIntegrityError, match=r"tac\.08.*\(download cache\) is not the "
                                                 r"pinned file: .*move it away \(or delete "
                                                 r"it\) and markeval downloads the pinned file "
                                                 r"again") as info:
        locate("tac")
    assert sha256_file(changed) in str(info.value)
    assert fetched == [] and changed.read_bytes() == damage
    checks = _locate.verify_cached(cache)
    assert checks[0][0] == changed and "left in place" in checks[0][1] and not checks[0][2]
    assert changed.read_bytes() == damage  # verify reports it and leaves it
    changed.unlink()
    assert locate("tac") == cache and len(fetched) == 2
    assert all((cache / f).read_bytes() == FAKE_TAC for f in _sources.TAC.files)


def test_download_urls_point_at_the_public_sources():
    assert _sources.TAC.base_url.startswith(
        "https://raw.githubusercontent.com/AIPHES/emnlp19-moverscore/")
    # Upstream names the TAC files without the .json our copies carry.
    assert _sources.TAC.url(_sources.TAC.files[0]).endswith("/examples/data/tac.08.mds.gen.resp-pyr")
    assert _sources.WMT17.base_url.startswith("https://raw.githubusercontent.com/AIPHES/")
    assert _sources.WMT17.url("DA-seglevel.csv") == _sources.WMT17.base_url + "DA-seglevel.csv"
    assert len(_sources.WMT17.files) == 2 + 7 + 7 + sum(N_SYSTEMS.values())


def test_every_file_is_pinned():
    for source in _sources.SOURCES.values():
        assert set(source.checksums) == set(source.files)
        for size, sha in source.checksums.values():
            assert size > 0 and len(sha) == 64 and int(sha, 16) >= 0


@pytest.mark.skipif(not (_SHARED / "wmt17").is_dir(), reason="needs ../shared/data")
def test_pinned_checksums_are_those_of_the_shared_copies():
    # checksums.json was written by `python -m markeval.datasets.checksums ../shared/data`.
    from markeval.datasets.bbc import bbc_dir

    assert compute_checksums(_SHARED, bbc_dir()) == json.loads(
        CHECKSUMS_FILE.read_text(encoding="utf-8"))


def test_a_changed_bbc_corpus_is_refused(tmp_path):
    from markeval.datasets import bbc

    copy = tmp_path / "data"
    for topic in BBC_TOPICS:
        shutil.copytree(bbc.bbc_dir() / topic, copy / topic)
    bbc._verify(copy)  # an exact copy passes
    (copy / "sports" / "199.txt").write_bytes(b"An edited article\n\nOne sentence.\n")
    with pytest.raises(DataIntegrityError, match=r"not the pinned corpus.*force-reinstall"):
        bbc._verify(copy)


# --------------------------------------------------------------------------- WMT17: fake data

def _write_fake_wmt17(monkeypatch, root: Path, lines: list[str], edit=None) -> Path:
    folder = root / "wmt17"
    for rel in _sources.WMT17.files:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if edit is not None:
        edit(folder)
    return pin_data(monkeypatch, folder)


def test_line_count_mismatch_raises(isolated, monkeypatch):
    def shorten(folder):
        (folder / _sources.wmt17_system_file("de-en", "KIT.4951")).write_text("a .\nb .\n")
    _write_fake_wmt17(monkeypatch, isolated / "env", ["a .", "b .", "c ."], shorten)
    monkeypatch.setenv("MARKEVAL_DATA", str(isolated / "env"))
    with pytest.raises(ValueError, match=r"KIT\.4951\.de-en has 2 lines but the reference has 3"):
        load_wmt17("de-en")


def test_lines_split_only_at_newlines(isolated, monkeypatch):
    # U+2028 and form feed inside a segment must not start a new line (str.splitlines would).
    _write_fake_wmt17(monkeypatch, isolated / "env", ["a\u2028b", "c\x0cd", "e\r"])
    monkeypatch.setenv("MARKEVAL_DATA", str(isolated / "env"))
    data = load_wmt17("cs-en")
    assert data.references == ("a\u2028b", "c\x0cd", "e")
    assert set(data.systems) == set(_sources.WMT17_SYSTEMS["cs-en"])


def test_bad_pair():
    with pytest.raises(ValueError, match="pair must be one of cs-en.*got 'en-de'"):
        load_wmt17("en-de")


def test_pairs():
    assert wmt17_pairs() == tuple(REF_LINES)


# --------------------------------------------------------------------------- WMT17: real data

@needs_wmt17
@pytest.mark.parametrize("pair", list(REF_LINES))
def test_wmt17_counts(pair):
    data = load_wmt17(pair)
    assert data.pair == pair
    assert len(data.references) == len(data.sources) == REF_LINES[pair]
    assert len(data.systems) == N_SYSTEMS[pair]
    assert all(len(out) == REF_LINES[pair] for out in data.systems.values())


@needs_wmt17
def test_wmt17_is_cached_and_immutable():
    data = load_wmt17("de-en")
    assert load_wmt17("de-en") is data
    assert "uedin-nmt.4723" in data.systems
    assert list(data.systems) == sorted(data.systems)
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.pair = "x"
    with pytest.raises(TypeError):
        data.systems["new"] = ()
    assert isinstance(data.references, tuple)


@needs_wmt17
def test_wmt17_detokenize():
    raw = load_wmt17("de-en")
    detok = load_wmt17("de-en", detokenize=True)
    assert any("&apos;" in r for r in raw.references)
    assert not any("&apos;" in r or "&quot;" in r for r in detok.references)
    assert detok.sources == raw.sources
    assert len(detok.systems["KIT.4951"]) == 3004


@needs_wmt17
def test_da_segments_560_per_pair():
    seg = wmt17_da_segments()
    assert list(seg.columns) == ["pair", "system", "sid", "score"]
    counts = seg.groupby("pair").size().to_dict()
    assert counts == {p: 560 for p in [*REF_LINES, "en-ru", "en-zh"]}
    for pair in REF_LINES:
        one = wmt17_da_segments(pair)
        assert len(one) == 560
        assert one["sid"].between(1, REF_LINES[pair]).all()
        assert not one.duplicated(["system", "sid"]).any()


@needs_wmt17
def test_da_tables_are_fresh_copies():
    first = wmt17_da_segments("cs-en")
    first.loc[0, "score"] = 99.0
    assert wmt17_da_segments("cs-en").loc[0, "score"] != 99.0


@needs_wmt17
def test_joined_da_systems_have_identical_outputs():
    joined = 0
    for pair in REF_LINES:
        data = load_wmt17(pair)
        for system, sid in zip(*wmt17_da_segments(pair)[["system", "sid"]].T.values):
            names = expand_systems(system)
            if len(names) > 1:
                joined += 1
                assert len({data.systems[n][sid - 1] for n in names}) == 1, (pair, system, sid)
    assert joined == 127


@needs_wmt17
def test_da_segments_with_text():
    seg = wmt17_da_segments("de-en", with_text=True)
    data = load_wmt17("de-en")
    row = seg.iloc[0]
    first = expand_systems(row["system"])[0]
    assert row["hypothesis"] == data.systems[first][row["sid"] - 1]
    assert row["reference"] == data.references[row["sid"] - 1]
    detok = wmt17_da_segments("de-en", with_text=True, detokenize=True)
    assert not detok["reference"].str.contains("&apos;").any()
    assert (detok[["system", "sid", "score"]] == seg[["system", "sid", "score"]]).all().all()


@needs_wmt17
def test_da_sid_is_one_based():
    # Sentence chrF agrees with DA only when SID - 1 indexes the files (0-based lines).
    sacrebleu = pytest.importorskip("sacrebleu")
    import numpy as np

    seg = wmt17_da_segments("de-en")
    data = load_wmt17("de-en")

    def corr(offset):
        chrf = [sacrebleu.sentence_chrf(data.systems[expand_systems(s)[0]][i + offset],
                                        [data.references[i + offset]]).score
                for s, i in zip(seg["system"], seg["sid"] - 2)]
        return np.corrcoef(chrf, seg["score"])[0, 1]
    assert corr(1) > 0.45 > 0.25 > max(corr(0), corr(2))


@needs_wmt17
def test_da_segments_errors():
    with pytest.raises(ValueError, match="pair must be one of .* got 'xx-en'"):
        wmt17_da_segments("xx-en")
    with pytest.raises(ValueError, match=r"with_text=True needs system outputs, which \['en-ru'\]"):
        wmt17_da_segments("en-ru", with_text=True)


@needs_wmt17
def test_da_systems():
    sys_da = wmt17_da_systems()
    assert list(sys_da.columns) == ["pair", "system", "score"]
    assert len(sys_da) == 152 and sys_da["pair"].nunique() == 14
    for pair in REF_LINES:
        assert len(wmt17_da_systems(pair)) == N_SYSTEMS[pair]
    cs = wmt17_da_systems("cs-en")
    assert cs["system"].tolist() == ["uedin-nmt.4955", "online-B.0", "online-A.0", "PJATK.4760"]
    assert cs["score"].tolist() == [0.181, 0.068, -0.068, -0.268]


@needs_wmt17
@pytest.mark.parametrize("pair", list(REF_LINES))
def test_da_names_match_output_files_exactly(pair):
    match = wmt17_system_match(pair)
    assert match.unmatched_da == () and match.unmatched_outputs == ()
    assert set(match.rule.values()) == {"exact"}
    assert len(match.mapping) == N_SYSTEMS[pair]


# --------------------------------------------------------------------------- name matching

def test_match_rules():
    m = match_system_names(
        ["CASICT-DCU-NMT.5144", "online-A.0", "Uedin_NMT.1", "KIT.7", "online-G.0"],
        ["CASICT-cons.5144", "online-A.0", "uedin-nmt.4723", "online-B.0"],
    )
    assert dict(m.mapping) == {"CASICT-DCU-NMT.5144": "CASICT-cons.5144",
                               "online-A.0": "online-A.0", "Uedin_NMT.1": "uedin-nmt.4723"}
    assert dict(m.rule) == {"CASICT-DCU-NMT.5144": "submission id", "online-A.0": "exact",
                            "Uedin_NMT.1": "name"}
    # online systems share the id 0: never matched by id.
    assert m.unmatched_da == ("KIT.7", "online-G.0")
    assert m.unmatched_outputs == ("online-B.0",)


def test_match_refuses_ambiguous_names():
    m = match_system_names(["jhu-pbmt.1"], ["jhu-pbmt.4972", "JHU_pbmt.4980"])
    assert m.mapping == {} and m.unmatched_da == ("jhu-pbmt.1",)


def test_match_bad_names():
    with pytest.raises(ValueError, match="non-empty str, got ''"):
        match_system_names([""], ["a.1"])
    with pytest.raises(ValueError, match="non-empty str, got None"):
        match_system_names(["a.1"], [None])


_names = st.lists(st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,8}\.[0-9]{1,4}", fullmatch=True),
                  unique=True, max_size=8)


@given(_names)
def test_match_to_itself_is_identity(names):
    m = match_system_names(names, names)
    assert dict(m.mapping) == {n: n for n in names}
    assert set(m.rule.values()) <= {"exact"}


def test_expand_systems():
    assert expand_systems("a.1+b.2+online-A.0") == ("a.1", "b.2", "online-A.0")
    with pytest.raises(ValueError, match="non-empty str"):
        expand_systems("")


# --------------------------------------------------------------------------- TAC

@needs_tac
@pytest.mark.parametrize("year, n_topics, n_systems", [(2008, 48, 58), (2009, 44, 55)])
def test_tac_counts(year, n_topics, n_systems):
    topics = load_tac(year)
    assert len(topics) == n_topics
    assert [t.topic_id for t in topics] == sorted(t.topic_id for t in topics)
    for topic in topics:
        assert len(topic.references) == len(topic.reference_ids) == 4
        assert all(ref and all(isinstance(s, str) for s in ref) for ref in topic.references)
        humans = [s for s in topic.annotations if s.is_human]
        assert len(humans) == 4 and len(topic.annotations) == n_systems + 4
        # pyr_mod_score is missing exactly for the human summaries
        assert all((s.pyr_mod_score is None) == s.is_human for s in topic.annotations)
        # the human summaries are the references (summarizer letter = last id field)
        letters = {rid.removesuffix(".txt")[-1]: ref
                   for rid, ref in zip(topic.reference_ids, topic.references)}
        assert all(letters[s.summ_id] == s.sentences for s in humans)
    assert load_tac(year) is topics


@needs_tac
def test_tac_scores_table():
    scores = tac_scores(2008)
    assert len(scores) == 48 * 62
    assert list(scores.columns) == ["topic", "summ_id", "is_human", "pyr_score",
                                    "pyr_mod_score", "responsiveness", "n_sentences"]
    assert scores.loc[scores["is_human"], "pyr_mod_score"].isna().all()
    assert scores["responsiveness"].between(1, 5).all()
    assert tac_scores(2009)["responsiveness"].max() == 10.0
    assert all(isinstance(v, float) for v in (load_tac(2008)[0].annotations[0].pyr_score,))


@needs_tac
def test_tac_is_immutable():
    topic = load_tac(2009)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        topic.annotations[0].pyr_score = 1.0
    assert isinstance(topic.annotations, tuple)


@pytest.mark.parametrize("year, error", [(2010, ValueError), ("2008", ValueError),
                                         (8, ValueError), (True, TypeError)])
def test_tac_bad_year(year, error):
    with pytest.raises(error, match="year must be one of 2008, 2009"):
        load_tac(year)


# --------------------------------------------------------------------------- BBC

def test_bbc_counts_and_order():
    articles = load_bbc()
    assert len(articles) == 2225
    counts = {t: sum(a.topic == t for a in articles) for t in BBC_TOPICS}
    assert counts == BBC_COUNTS
    keys = [(a.topic, a.article_id) for a in articles]
    assert keys == sorted(keys) and len(set(keys)) == 2225
    assert articles[0].title == "Ad sales boost Time Warner profit"
    assert articles[0].sentences[0].startswith("Quarterly profits at US media giant TimeWarner")
    assert all(a.title and a.sentences for a in articles)
    assert load_bbc() is articles  # parsed once per process


def test_bbc_topic_selection_and_errors():
    assert len(load_bbc("tech")) == 401
    assert len(load_bbc(["tech", "sports"])) == 912
    with pytest.raises(ValueError, match="unknown BBC topic 'sport'"):
        load_bbc("sport")


def test_bbc_encoding():
    article = next(a for a in load_bbc("sports") if a.article_id == 199)
    assert any("£15.8m" in s for s in article.sentences)  # a Latin-1 byte in a UTF-8 corpus
    assert not any("\ufffd" in s or "\udca3" in s for a in load_bbc() for s in a.sentences)


def test_decode_mixed_bytes():
    assert _decode("£1 ".encode() + b"\xa32 \x93q\x94") == "£1 £2 \u201cq\u201d"
    assert _decode(b"\x81") == "\ufffd"  # undefined in Windows-1252


@given(st.text())
def test_decode_roundtrips_utf8(text):
    assert _decode(text.encode("utf-8")) == text


@given(st.binary(max_size=64))
def test_decode_never_fails(data):
    text = _decode(data)
    text.encode("utf-8")  # raises on a lone surrogate left behind
    assert len(text) <= len(data)


def test_bbc_article_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        load_bbc()[0].title = "x"


def test_bbc_sentences_table():
    all_rows = bbc_sentences(min_words=0)
    assert list(all_rows.columns) == ["topic", "article_id", "position", "sentence"]
    assert len(all_rows) == sum(len(a.sentences) for a in load_bbc())
    filtered = bbc_sentences(min_words=5)
    assert (filtered["sentence"].str.split().str.len() >= 5).all()
    assert 0.95 * len(all_rows) < len(filtered) < len(all_rows)
    tech = bbc_sentences("tech")
    assert set(tech["topic"]) == {"tech"}
    unique = bbc_sentences(unique=True)
    assert unique["sentence"].is_unique and len(unique) < len(filtered)


def test_bbc_split_halves():
    a, b = bbc_sentences(split="a", min_words=0), bbc_sentences(split="b", min_words=0)
    assert len(a) + len(b) == len(bbc_sentences(min_words=0))
    articles_a = set(zip(a["topic"], a["article_id"]))
    articles_b = set(zip(b["topic"], b["article_id"]))
    assert not articles_a & articles_b and len(articles_a | articles_b) == 2225
    assert (len(articles_a), len(articles_b)) == (1129, 1096)
    assert set(a["sentence"]).isdisjoint(b["sentence"])
    for topic, n in BBC_COUNTS.items():  # each topic splits roughly in half
        in_a = sum(t == topic for t, _ in articles_a)
        assert 0.45 * n < in_a < 0.55 * n
    # ungrouped articles follow id parity
    assert ("business", 1) in articles_a and ("business", 2) in articles_b


def test_bbc_sentences_bad_arguments():
    with pytest.raises(ValueError, match="split must be None, 'a' or 'b', got 'c'"):
        bbc_sentences(split="c")
    with pytest.raises(ValueError, match="min_words must be an int >= 0, got -1"):
        bbc_sentences(min_words=-1)
    with pytest.raises(ValueError, match="min_words must be an int >= 0, got 2.5"):
        bbc_sentences(min_words=2.5)
