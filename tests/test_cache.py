"""Tests for markeval.cache: entries that heal, atomic writes under two real processes,
usage and clearing per kind, and the ``markeval cache`` command."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import warnings

import numpy as np
import pytest

from markeval import cache
from markeval.cache import (CacheWarning, atomic_write, cache_root, cache_usage, clear_cache,
                            read_entry, write_entry)
from markeval.cli import main

KEY = '{"kind": "sentence"} texts:2:abc'


@pytest.fixture
def entry(tmp_path):
    path = tmp_path / "sentence-1.npz"
    write_entry(path, KEY, {"vectors": np.arange(6, dtype=np.float32).reshape(2, 3)})
    return path


def _heals(path, key=KEY, check=None, reason=""):
    with pytest.warns(CacheWarning, match=rf"deleted the cache entry {path}.*{reason}") as caught:
        assert read_entry(path, key, check) is None
    assert len(caught) == 1  # once, naming the file
    assert not path.exists()


def test_round_trip_and_missing_entry(entry, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arrays = read_entry(entry, KEY)
        assert read_entry(tmp_path / "absent.npz", KEY) is None
    assert list(arrays) == ["vectors"]
    np.testing.assert_array_equal(arrays["vectors"], np.arange(6).reshape(2, 3))
    assert [p.name for p in tmp_path.iterdir()] == [entry.name]  # no temporary left


@pytest.mark.parametrize("keep", [0, 10, 0.5, -1])
def test_a_truncated_entry_heals(entry, keep):
    data = entry.read_bytes()
    entry.write_bytes(data[: int(len(data) * keep) if isinstance(keep, float) else keep])
    _heals(entry, reason="unreadable")


def test_a_foreign_file_heals(entry):
    entry.write_bytes(b"<html>not an array</html>")
    _heals(entry, reason="unreadable")


def test_an_old_format_npy_heals(entry):
    with open(entry, "wb") as fh:
        np.save(fh, np.zeros((2, 3), np.float32))
    _heals(entry, reason="not an .npz entry")


def test_an_entry_without_key_heals(entry):
    with open(entry, "wb") as fh:
        np.savez(fh, vectors=np.zeros((2, 3), np.float32))
    _heals(entry, reason="no key stored")


def test_a_swapped_entry_heals(entry, tmp_path):
    other = tmp_path / "sentence-2.npz"
    write_entry(other, KEY.replace("abc", "xyz"), {"vectors": np.zeros((2, 3), np.float32)})
    shutil.copyfile(other, entry)  # a synced folder or a hand copy put it under the wrong name
    _heals(entry, reason="written for another key")


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
    target.write_bytes(b"old")

    def fail(handle):
        handle.write(b"half")
        raise KeyboardInterrupt  # a killed kernel, Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, fail)
    assert [p.name for p in tmp_path.iterdir()] == ["entry.npz"]
    assert target.read_bytes() == b"old"


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
    assert [p.name for p in tmp_path.iterdir()] == ["shared.npz"]
    assert np.unique(read_entry(path, KEY)["vectors"]).size == 1


# --------------------------------------------------------------------------- usage and clearing

@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path / "cache"))
    base = cache_root()
    for rel, size in {"tac/a.json": 10, "wmt17/x/b.csv": 20, "embeddings/s.npz": 300,
                      "embeddings/.part-s.npz.abc": 7, "models/m/config.json": 4,
                      "notes.txt": 1}.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(b"x" * size)
    return base


def test_cache_root_follows_the_setting(tmp_path, monkeypatch):
    monkeypatch.delenv("MARKEVAL_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_root() == tmp_path / ".cache" / "markeval"
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path / "big-disk"))
    assert cache_root() == tmp_path / "big-disk"


def test_usage_per_kind(root):
    assert cache_usage() == {"data": {"files": 2, "bytes": 30},
                             "embeddings": {"files": 1, "bytes": 300},
                             "models": {"files": 1, "bytes": 4},
                             "other": {"files": 1, "bytes": 1},
                             "partial": {"files": 1, "bytes": 7}}


def test_clear_by_kind(root):
    assert clear_cache("partial") == 1
    assert clear_cache("embeddings") == 1
    assert cache_usage()["embeddings"] == {"files": 0, "bytes": 0}
    assert cache_usage()["data"]["files"] == 2
    assert clear_cache("models") == 1
    assert clear_cache("all") == 3
    assert not any(root.iterdir())
    with pytest.raises(ValueError, match="kind must be one of .* got 'weights'"):
        clear_cache("weights")
    assert clear_cache("all", root / "absent") == 0


def test_cli_cache_info_and_clear(root, capsys):
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"cache root: {root} (set by MARKEVAL_CACHE)" in out
    assert "embeddings         1       300 B" in out
    assert main(["cache", "info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["usage"]["data"] == {"files": 2, "bytes": 30}
    assert main(["cache", "clear", "data", "partial"]) == 0
    assert capsys.readouterr().out.strip() == f"removed 3 files from {root}"
    assert cache_usage()["data"]["files"] == 0 and (root / "embeddings" / "s.npz").exists()


@pytest.mark.parametrize("argv, message", [
    (["cache", "clear"], "cache clear needs kinds from all, data, embeddings, models, partial"),
    (["cache", "clear", "data", "weights"], "got weights"),
    (["cache", "info", "data"], "cache info takes no kind"),
])
def test_cli_cache_errors_clear_nothing(root, capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert cache_usage()["data"]["files"] == 2


def test_module_names_its_kinds():
    assert set(cache.CACHE_KINDS) == {"data", "embeddings", "models"}
    from markeval.datasets._sources import SOURCES

    assert set(cache.CACHE_KINDS["data"]) == set(SOURCES)
