"""Tests for markeval.cache: entries that heal, atomic writes under two real processes,
usage and clearing per kind, and the ``markeval cache`` command."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import shutil
import warnings

import numpy as np
import pytest

from conftest import pin_data
from markeval import _written, cache
from markeval.cache import (CacheWarning, NotOursError, atomic_write, cache_root, cache_usage,
                            clear_cache, read_entry, write_entry)
from markeval.cli import main

KEY = '{"kind": "sentence"} texts:2:abc'


@pytest.fixture
def entry(tmp_path):
    path = tmp_path / "sentence-1.npz"
    write_entry(path, KEY, {"vectors": np.arange(6, dtype=np.float32).reshape(2, 3)})
    return path


def _heals(path, key=KEY, check=None, reason=""):
    """An entry markeval wrote, unchanged, that cannot answer: deleted, said once."""
    with pytest.warns(CacheWarning, match=rf"deleted the cache entry {path}.*{reason}") as caught:
        assert read_entry(path, key, check) is None
    assert len(caught) == 1  # once, naming the file
    assert not path.exists()


def _left(path, key=KEY, reason=""):
    """A file that changed since markeval wrote it (or that it never wrote): not deleted and
    not overwritten, said once; the caller computes without caching there."""
    before = path.read_bytes()
    with pytest.warns(CacheWarning, match=rf"left {path} in place \({reason}.*; not written by "
                                          r"markeval, or changed since\)") as caught:
        assert read_entry(path, key) is None
        write_entry(path, key, {"vectors": np.zeros((2, 3), np.float32)})
    assert len(caught) == 1
    assert path.read_bytes() == before


def test_round_trip_and_missing_entry(entry, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arrays = read_entry(entry, KEY)
        assert read_entry(tmp_path / "absent.npz", KEY) is None
    assert list(arrays) == ["vectors"]
    np.testing.assert_array_equal(arrays["vectors"], np.arange(6).reshape(2, 3))
    # no temporary left; the manifest records the entry
    assert sorted(p.name for p in tmp_path.iterdir()) == [_written.MANIFEST, entry.name]
    assert _written.is_ours(entry)


@pytest.mark.parametrize("keep", [0, 10, 0.5, -1])
def test_a_truncated_entry_is_left_to_its_owner(entry, keep):
    """Truncated after markeval wrote it whole (atomic writes never leave one): something
    else changed it, so it counts as the user's."""
    data = entry.read_bytes()
    entry.write_bytes(data[: int(len(data) * keep) if isinstance(keep, float) else keep])
    _left(entry, reason="unreadable")


def test_a_foreign_file_under_an_entry_s_name_is_left(entry):
    entry.write_bytes(b"<html>not an array</html>")
    _left(entry, reason="unreadable")


def test_an_old_format_npy_is_left(entry):
    with open(entry, "wb") as fh:
        np.save(fh, np.zeros((2, 3), np.float32))
    _left(entry, reason="not an .npz entry")


def test_an_entry_without_key_is_left(entry):
    with open(entry, "wb") as fh:
        np.savez(fh, vectors=np.zeros((2, 3), np.float32))
    _left(entry, reason="no key stored")


def test_a_swapped_entry_is_left(entry, tmp_path):
    other = tmp_path / "sentence-2.npz"
    write_entry(other, KEY.replace("abc", "xyz"), {"vectors": np.zeros((2, 3), np.float32)})
    shutil.copyfile(other, entry)  # a synced folder or a hand copy put it under the wrong name
    _left(entry, reason="it was written for another key")


def test_an_entry_markeval_wrote_for_another_key_heals(entry):
    """Unchanged since markeval wrote it, so markeval may replace it."""
    _heals(entry, key=KEY.replace("abc", "xyz"), reason="written for another key")
    write_entry(entry, KEY, {"vectors": np.zeros((2, 3), np.float32)})
    assert _written.is_ours(entry)


def test_a_mismatched_entry_heals(entry):
    def check(arrays):
        if arrays["vectors"].shape != (5, 3):
            raise ValueError(f"shape {arrays['vectors'].shape}, expected (5, 3)")
    _heals(entry, check=check, reason=r"does not match the request: shape \(2, 3\)")


def test_key_is_reserved(tmp_path):
    with pytest.raises(ValueError, match="'key' is reserved"):
        write_entry(tmp_path / "e.npz", KEY, {"key": np.zeros(1)})


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "entry.npz"
    atomic_write(target, lambda fh: fh.write(b"old"))

    def fail(handle):
        handle.write(b"half")
        raise KeyboardInterrupt  # a killed kernel, Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, fail)
    assert sorted(p.name for p in tmp_path.iterdir()) == [_written.MANIFEST, "entry.npz"]
    assert target.read_bytes() == b"old" and _written.is_ours(target)


def test_atomic_write_never_replaces_a_file_markeval_did_not_write(tmp_path):
    mine, edited = tmp_path / "notes.txt", tmp_path / "entry.bin"
    mine.write_text("the user's")
    atomic_write(edited, lambda fh: fh.write(b"markeval's"))
    edited.write_bytes(b"markeval's, edited by hand")
    link = tmp_path / "link.bin"
    link.symlink_to(mine)
    for path in (mine, edited, link):
        with pytest.raises(NotOursError, match=rf"{path}: not written by markeval, or changed "
                                               r"since; left as it is \(move it away\)"):
            atomic_write(path, lambda fh: fh.write(b"new"))
    assert mine.read_text() == "the user's"
    assert edited.read_bytes() == b"markeval's, edited by hand" and link.is_symlink()


def _hammer(path: str, key: str, worker: int, rounds: int, queue) -> None:
    """Write and read one entry ``rounds`` times; report every torn or foreign read."""
    bad = []
    for i in range(rounds):
        value = float(worker * 1000 + i)
        write_entry(path, key, {"vectors": np.full((512, 512), value, np.float32)})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            arrays = read_entry(path, key)
        if caught or arrays is None:
            bad.append(f"round {i}: {[str(w.message) for w in caught]}")
        elif np.unique(arrays["vectors"]).size != 1:
            bad.append(f"round {i}: a mix of two writes")
    queue.put(bad)


def test_two_processes_filling_one_entry_never_corrupt_it(tmp_path):
    # Two real processes (spawned, as two notebooks would be) write the same 1 MiB entry 30
    # times each and read it back between writes: every read sees one whole write.
    path = str(tmp_path / "shared.npz")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_hammer, args=(path, KEY, w, 30, queue)) for w in (1, 2)]
    for w in workers:
        w.start()
    reports = [queue.get(timeout=120) for _ in workers]
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    assert reports == [[], []]
    assert sorted(p.name for p in tmp_path.iterdir()) == [_written.MANIFEST, "shared.npz"]
    assert np.unique(read_entry(path, KEY)["vectors"]).size == 1


# --------------------------------------------------------------------------- usage and clearing

ENTRY = f"sentence-{40 * 'a'}.npz"  # an embedding entry's name: kind and 40 hex digits
TAC_FILE = "tac.08.mds.gen.resp-pyr.json"


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A cache root with one entry of every kind, and the user's own files beside each."""
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path / "cache"))
    base = cache_root()
    # markeval's, written as markeval writes them (atomic_write records each one)
    files = {f"tac/{TAC_FILE}": b"x" * 10, "wmt17/references/newstest2017-csen-ref.en": b"x" * 20,
             f"embeddings/{ENTRY}": b"x" * 300, "reproduce/ci/stage-0123/unit.csv":
             b"# seconds: 1.5\nx\n1\n", "nltk_data/corpora/wordnet/lexnames": b"x" * 3}
    for rel, data in files.items():
        atomic_write(base / rel, lambda fh: fh.write(data))
    pin_data(monkeypatch, base / "tac")  # the downloads are the pinned files
    pin_data(monkeypatch, base / "wmt17")
    partial = base / "embeddings" / f".part-{ENTRY}.abc"  # a killed process's temporary
    _written.record_partial(partial)
    partial.write_bytes(b"x" * 7)
    model = base / "models" / "all-mpnet-base-v2"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / ".complete").write_text(json.dumps({"files": {"config.json": [2, hashlib.sha256(
        b"{}").hexdigest()]}}))
    # The user's: a file beside every kind of entry, a folder and a file at the top.
    for rel in ["thesis.tex", "project/chapter.tex", "tac/my-notes.txt", "wmt17/mine.en",
                "embeddings/vectors-i-made.npz", "models/all-mpnet-base-v2/README.mine",
                "models/my-model/config.json", "reproduce/ci/stage-0123/notes.csv",
                "reproduce/draft.csv", "results/mine.csv", "nltk_data/corpora/other/x.txt"]:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text("the user's own file")
    return base


USER_FILES = ["embeddings/vectors-i-made.npz", "models/all-mpnet-base-v2/README.mine",
              "models/my-model/config.json", "nltk_data/corpora/other/x.txt",
              "project/chapter.tex", "reproduce/ci/stage-0123/notes.csv", "reproduce/draft.csv",
              "results/mine.csv", "tac/my-notes.txt", "thesis.tex", "wmt17/mine.en"]


def _files(base):
    """Every file under ``base`` but the manifests (markeval's bookkeeping)."""
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*")
                  if p.is_file() and p.name != _written.MANIFEST)


def test_cache_root_follows_the_setting(tmp_path, monkeypatch):
    monkeypatch.delenv("MARKEVAL_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_root() == tmp_path / ".cache" / "markeval"
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path / "big-disk"))
    assert cache_root() == tmp_path / "big-disk"


def test_usage_per_kind(root):
    usage = cache_usage()
    assert {k: u["files"] for k, u in usage.items()} == {
        "data": 2, "embeddings": 1, "models": 2, "reproduce": 1, "wordnet": 1,
        "partial": 1, "other": 11}  # a user folder (project/, my-model/) counts once
    assert usage["data"]["bytes"] == 30 and usage["embeddings"]["bytes"] == 300


@pytest.mark.parametrize("kind, gone", [
    ("data", [f"tac/{TAC_FILE}", "wmt17/references/newstest2017-csen-ref.en"]),
    ("embeddings", [f"embeddings/{ENTRY}"]),
    ("models", ["models/all-mpnet-base-v2/.complete", "models/all-mpnet-base-v2/config.json"]),
    ("reproduce", ["reproduce/ci/stage-0123/unit.csv"]),
    ("wordnet", ["nltk_data/corpora/wordnet/lexnames"]),
    ("partial", [f"embeddings/.part-{ENTRY}.abc"]),
])
def test_clear_removes_only_what_markeval_wrote(root, kind, gone):
    before = _files(root)
    done = clear_cache(kind)
    assert sorted(p.relative_to(root).as_posix() for p in done.removed) == gone
    assert _files(root) == [f for f in before if f not in gone]
    # what it left is named: the user's files in this kind's folders
    folders = cache.CACHE_KINDS[kind].folders if kind != "partial" else ()
    assert {p.relative_to(root).parts[0] for p in done.kept} == set(folders)


def test_clear_all_keeps_every_user_file_and_says_so(root):
    done = clear_cache("all")
    assert _files(root) == USER_FILES
    assert sorted(p.relative_to(root).as_posix() for p in done.kept) == [
        "embeddings/vectors-i-made.npz", "models/all-mpnet-base-v2/README.mine",
        "models/my-model", "nltk_data/corpora/other", "project",
        "reproduce/ci/stage-0123/notes.csv", "reproduce/draft.csv", "results",
        "tac/my-notes.txt", "thesis.tex", "wmt17/mine.en"]
    assert not (root / "nltk_data" / "corpora" / "wordnet").exists()  # emptied folders go
    assert clear_cache("all").removed == ()
    with pytest.raises(ValueError, match="kind must be one of .* got 'weights'"):
        clear_cache("weights")
    assert clear_cache("all", root / "absent").removed == ()


def test_a_dry_run_removes_nothing(root):
    before = _files(root)
    done = clear_cache("all", dry_run=True)
    assert done.dry_run and len(done.removed) == 8 and _files(root) == before


def test_a_linked_data_folder_is_left_alone(root, tmp_path):
    corpus = tmp_path / "my-corpora" / "wmt17"
    corpus.mkdir(parents=True)
    (corpus / "newstest2017-csen-ref.en").write_text("the user's only copy")
    shutil.rmtree(root / "wmt17")
    (root / "wmt17").symlink_to(corpus, target_is_directory=True)
    done = clear_cache("data")
    assert (root / "wmt17").is_symlink() and (corpus / "newstest2017-csen-ref.en").exists()
    assert root / "wmt17" in done.kept
    # verify does not follow it either
    assert [(c.kind, c.sound) for c in cache.verify_cache()] == [("models", True)]


# The files a user may have under markeval's own names: each must survive every clear.
IMPOSTORS = {
    "tac/tac.09.mds.gen.resp-pyr.json": "a data file's name, not the pinned content",
    "nltk_data/corpora/wordnet/data.noun": "WordNet's name, never written by markeval",
    f"embeddings/sentence-{40 * 'b'}.npz": "an entry's name",
    "reproduce/ci/stage-0123/other.csv": "# seconds: 2\nnot a unit markeval wrote\n",
    "embeddings/.part-x": "a temporary file's prefix",
}


def test_files_under_markeval_s_names_that_it_did_not_write_survive(root, monkeypatch):
    """By name alone, clear all deleted 6 of 6 such files (issue 59); by the manifest, none."""
    import dataclasses
    from types import MappingProxyType

    from markeval.datasets import _sources

    tac = _sources.SOURCES["tac"]  # the second TAC file pinned to content it does not have
    monkeypatch.setitem(_sources.SOURCES, "tac", dataclasses.replace(tac, checksums=MappingProxyType(
        {**tac.checksums, "tac.09.mds.gen.resp-pyr.json": (10, 64 * "0")})))
    for rel, text in IMPOSTORS.items():
        (root / rel).write_text(text)
    edited = {f"tac/{TAC_FILE}": "an edited TAC file", "nltk_data/corpora/wordnet/lexnames":
              "an edited lexnames", "reproduce/ci/stage-0123/unit.csv": "# seconds: 1.5\nmine"}
    for rel, text in edited.items():  # markeval wrote them; the user changed them since
        (root / rel).write_text(text)
    done = clear_cache("all")
    for rel, text in {**IMPOSTORS, **edited}.items():
        assert (root / rel).read_text() == text, rel
        # listed as kept (inside a folder listed once, where the folder holds nothing of ours)
        assert {root / rel, *(root / rel).parents} & set(done.kept), rel
    assert not (root / "embeddings" / ENTRY).exists()  # markeval's own went
    assert not (root / "wmt17/references/newstest2017-csen-ref.en").exists()


def test_clearing_a_kind_compacts_its_manifest_and_keeps_the_temporaries_proof(root):
    assert clear_cache("embeddings").removed == (root / "embeddings" / ENTRY,)
    lines = (root / "embeddings" / _written.MANIFEST).read_text().splitlines()
    assert [json.loads(line)["name"] for line in lines] == [f".part-{ENTRY}.abc"]
    assert clear_cache("partial").removed == (root / "embeddings" / f".part-{ENTRY}.abc",)
    assert not (root / "embeddings" / _written.MANIFEST).exists()
    assert (root / "embeddings" / "vectors-i-made.npz").exists()


def test_cache_verify_leaves_a_user_s_link_and_an_edited_data_file(root, tmp_path):
    """Before, `cache verify` removed a user's link in tac/ (issue 59)."""
    theirs = tmp_path / "my-tac.json"
    theirs.write_text("the user's own TAC file")
    (root / "tac" / TAC_FILE).unlink()
    (root / "tac" / TAC_FILE).symlink_to(theirs)
    (root / "wmt17/references/newstest2017-csen-ref.en").write_bytes(b"y" * 20)  # edited
    checks = cache.verify_cache()
    assert (root / "tac" / TAC_FILE).is_symlink() and theirs.read_text() == "the user's own TAC file"
    assert (root / "wmt17/references/newstest2017-csen-ref.en").read_bytes() == b"y" * 20
    assert {(c.path.name, c.sound) for c in checks if c.kind == "data"} >= {
        (TAC_FILE, False), ("newstest2017-csen-ref.en", False)}
    assert main(["cache", "clear", "data"]) == 0
    assert (root / "tac" / TAC_FILE).is_symlink()


def test_an_assembled_model_without_manifest_from_an_earlier_version_is_ours(root):
    (root / "models/all-mpnet-base-v2/.complete").write_text("assembled from part-001==abc\n")
    done = clear_cache("models")
    assert not (root / "models" / "all-mpnet-base-v2").exists()
    assert root / "models" / "my-model" in done.kept


def test_cli_cache_info_and_clear(root, capsys):
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"cache root: {root} (set by MARKEVAL_CACHE)" in out
    assert "embeddings         1       300 B" in out
    assert main(["cache", "info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["usage"]["data"] == {"files": 2, "bytes": 30}
    assert main(["cache", "clear", "data", "partial", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [f"would remove 3 files (37 B) from {root}:", f"  tac/{TAC_FILE}",
                       "  wmt17/references/newstest2017-csen-ref.en", f"  embeddings/.part-{ENTRY}.abc"]
    assert (root / "tac" / TAC_FILE).exists()
    assert main(["cache", "clear", "data", "partial"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"removed 3 files (37 B) from {root}",
                   "left 2 entries markeval did not write (or a link it does not follow):",
                   "  tac/my-notes.txt", "  wmt17/mine.en"]
    assert cache_usage()["data"]["files"] == 0 and (root / "embeddings" / ENTRY).exists()
    assert main(["cache", "clear", "all"]) == 0
    assert _files(root) == USER_FILES


@pytest.mark.parametrize("argv, message", [
    (["cache", "clear"], "cache clear needs kinds from all, data, embeddings, models, "
                         "reproduce, wordnet, partial"),
    (["cache", "clear", "data", "weights"], "got weights"),
    (["cache", "info", "data"], "cache info takes no kind"),
    (["cache", "info", "--dry-run"], "--dry-run goes with cache clear"),
])
def test_cli_cache_errors_clear_nothing(root, capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert cache_usage()["data"]["files"] == 2


def test_module_names_its_kinds():
    assert set(cache.CACHE_KINDS) == {"data", "embeddings", "models", "reproduce", "wordnet"}
    from markeval.datasets._sources import SOURCES

    assert set(cache.CACHE_KINDS["data"].folders) == set(SOURCES)
