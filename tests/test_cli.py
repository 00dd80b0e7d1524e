"""The command line, driven through ``python -m markeval`` on small files written here.

Numbers must equal the library's exactly (JSON and TSV print full floats); every user error
must end in one line on stderr, exit status 2 and no traceback.
"""

import importlib.util
import json
import re
import subprocess
import sys

import numpy as np
import pytest

import markeval
from markeval._cli_registry import CLIError, get_metric, parse_options

HYP = ["the cat sat on the mat", "a dog barked loudly at night", "it is raining today"]
REF1 = ["the cat sat on a mat", "the dog barked at night", "it rains today"]
REF2 = ["a cat was on the mat", "a dog was barking loudly", "today it is raining"]
REFS = [list(pair) for pair in zip(REF1, REF2)]


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "markeval", *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, lines in {"hyp": HYP, "ref1": REF1, "ref2": REF2, "short": REF1[:2]}.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    paths["latin"] = tmp_path / "latin.txt"
    paths["latin"].write_bytes("café\nnaïve\nrésumé\n".encode("latin-1"))
    paths["blank"] = tmp_path / "blank.txt"
    paths["blank"].write_text(f"{REF1[0]}\n\n{REF1[2]}\n", encoding="utf-8")
    rng = np.random.default_rng(0)
    for name, shape in {"a": (30, 4), "b": (25, 4), "c": (25, 3), "flat": (25,)}.items():
        paths[name] = tmp_path / f"{name}.npy"
        np.save(paths[name], rng.normal(size=shape))
    paths["text_npy"] = tmp_path / "text.npy"
    paths["text_npy"].write_text("0.1 0.2\n0.3 0.4\n", encoding="utf-8")
    paths["npz"] = tmp_path / "both.npz"
    np.savez(paths["npz"], ref=rng.normal(size=(5, 2)))
    return paths


def test_corpus_json_equals_library(files):
    out = run("score", "-m", "bleu", "-m", "gleu", "-m", "meteor", "-m", "rouge",
              "--hyp", files["hyp"], "--ref", files["ref1"], "--ref", files["ref2"],
              "--opt", "bleu.smooth=floor", "--opt", "lowercase=true", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    doc = json.loads(out.stdout)
    got = {r["metric"]: r for r in doc["results"]}
    assert doc["lines"] == 3 and doc["level"] == "corpus"
    expected = [markeval.bleu(HYP, REFS, smooth="floor", lowercase=True),
                markeval.gleu(HYP, REFS, lowercase=True),
                markeval.corpus_meteor(HYP, REFS, lowercase=True)]
    for name, want in zip(["bleu", "gleu", "meteor"], expected):
        assert got[name]["score"] == want.score
        assert got[name]["signature"] == want.signature
    assert got["bleu"]["details"]["counts"] == list(expected[0].counts)
    assert "lowercase:yes" in got["bleu"]["signature"]
    rouge = markeval.rouge(HYP, REFS)
    for t in rouge.scores:
        assert got[t.rouge_type]["score"] == t.fmeasure
        assert got[t.rouge_type]["details"]["recall"] == t.recall
        assert got[t.rouge_type]["signature"] == rouge.signature


def test_sentence_tsv_equals_library(files):
    out = run("score", "-m", "bleu", "-m", "gleu", "-m", "meteor", "-m", "rouge", "--sentence",
              "--hyp", files["hyp"], "--ref", files["ref1"], "--ref", files["ref2"], "--tsv")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    comments = [line for line in lines if line.startswith("#")]
    table = [line.split("\t") for line in lines if not line.startswith("#")]
    columns = ["line", "bleu", "gleu", "meteor", "rouge1", "rouge2", "rougeL", "rougeLsum"]
    assert table[0] == columns
    assert len(table) == 1 + len(HYP) and all(len(row) == len(columns) for row in table)
    assert [c.split(":")[0] for c in comments] == ["# " + c for c in columns[1:]]
    rouge = markeval.rouge(HYP, REFS)
    for i, row in enumerate(table[1:]):
        values = dict(zip(columns, row))
        assert values["line"] == str(i + 1)
        assert float(values["bleu"]) == markeval.sentence_bleu(HYP[i], REFS[i]).score
        assert float(values["gleu"]) == markeval.sentence_gleu(HYP[i], REFS[i]).score
        assert float(values["meteor"]) == markeval.meteor(HYP[i], REFS[i]).score
        assert float(values["rougeL"]) == rouge.scores[2].fmeasures[i]
    assert comments[0] == "# bleu: " + markeval.sentence_bleu(HYP[0], REFS[0]).signature


def test_stdin_and_table(files):
    out = run("score", "--metric", "bleu", "--hyp", "-", "--ref", files["ref1"],
              stdin="\n".join(HYP) + "\n")
    assert out.returncode == 0, out.stderr
    want = markeval.bleu(HYP, REF1)
    header, row = out.stdout.splitlines()
    assert header.split() == ["metric", "score", "signature"]
    assert row.split() == ["bleu", f"{want.score:.4f}", want.signature]


def test_me_schnabel_estimator_option(files):
    out = run("me", "--embeddings", files["a"], files["b"], "--k", "2", "--json",
              "--estimator", "census")
    assert out.returncode == 0, out.stderr
    got = {r["metric"]: r for r in json.loads(out.stdout)["results"]}
    want = markeval.mark_evaluate(np.load(files["a"]), np.load(files["b"]), k=2,
                                  schnabel_estimator="census")
    assert got["schnabel_quality"]["score"] == want.schnabel_quality.score
    assert "estimator:census" in got["schnabel_diversity"]["signature"]


def test_me_embeddings_equal_library(files):
    out = run("me", "--embeddings", files["a"], files["b"], "--k", "2", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    want = markeval.mark_evaluate(np.load(files["a"]), np.load(files["b"]), k=2)
    got = {r["metric"]: r for r in doc["results"]}
    assert doc["k"] == 2 and doc["samples"] == [30, 25]
    for name in ("petersen", "schnabel_quality", "schnabel_diversity", "capture"):
        part = getattr(want, name)
        assert got[name]["score"] == part.score
        assert got[name]["signature"] == part.signature


def test_me_text_uses_default_encoder(files):
    from markeval.encoders import sentence_embeddings

    out = run("me", "--reference", files["ref1"], "--candidate", files["hyp"], "--tsv", "-q")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert rows[0] == ["metric", "score", "signature"] and len(rows) == 5
    want = markeval.mark_evaluate(sentence_embeddings(REF1, progress=False),
                                  sentence_embeddings(HYP, progress=False), k=1)
    assert float(rows[1][1]) == pytest.approx(want.petersen.score, abs=1e-12)
    assert float(rows[4][1]) == pytest.approx(want.capture.score, abs=1e-12)


@pytest.mark.parametrize("case, args, message", [
    ("missing", ["score", "-m", "bleu", "--hyp", "{tmp}/nope.txt", "--ref", "{ref1}"],
     r"nope\.txt: no such file"),
    ("counts", ["score", "-m", "bleu", "--hyp", "{hyp}", "--ref", "{short}"],
     r"hyp\.txt has 3 lines but .*short\.txt has 2"),
    ("metric", ["score", "-m", "bleuu", "--hyp", "{hyp}", "--ref", "{ref1}"],
     r"unknown metric 'bleuu'; did you mean 'bleu'\?"),
    ("option", ["score", "-m", "bleu", "--hyp", "{hyp}", "--ref", "{ref1}", "--opt", "smoth=exp"],
     r"unknown option 'smoth' for bleu; did you mean 'smooth'\?"),
    ("value", ["score", "-m", "bleu", "--hyp", "{hyp}", "--ref", "{ref1}", "--opt", "max_order=x"],
     r"option max_order of bleu expects int, got 'x'"),
    ("library", ["score", "-m", "bleu", "--hyp", "{hyp}", "--ref", "{ref1}", "--opt", "smooth=no"],
     r"smooth.*'no'"),
    ("encoding", ["score", "-m", "bleu", "--hyp", "{latin}", "--ref", "{ref1}"],
     r"latin\.txt: not UTF-8 text \(byte 0xe9 on line 1\)"),
    ("usage", ["score", "--hyp", "{hyp}"], r"required: --metric/-m, --ref"),
    ("dims", ["me", "--embeddings", "{a}", "{c}"], r"dimension 4 but candidate has dimension 3"),
    ("text as npy", ["me", "--embeddings", "{text_npy}", "{a}"],
     r"text\.npy: not a \.npy file \(no numpy header: text or another format\?\)"),
    ("npz", ["me", "--embeddings", "{a}", "{npz}"], r"both\.npz: a \.npz archive of several arrays"),
    ("1-D npy", ["me", "--embeddings", "{flat}", "{a}"],
     r"flat\.npy: holds a float64 array of shape \(25,\); a numeric 2-D array"),
    ("blank reference", ["score", "-m", "rouge", "--hyp", "{hyp}", "--ref", "{ref1}", "--ref",
                         "{blank}"], r"rouge: \S*blank\.txt line 2 has no tokens: ''"),
])
def test_errors_are_one_line(files, tmp_path, case, args, message):
    out = run(*[a.format(tmp=tmp_path, **files) for a in args])
    assert out.returncode == 2
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("markeval: error: ")
    assert re.search(message, out.stderr), out.stderr


def test_blank_reference_lines_score_zero_on_request(files):
    out = run("score", "-m", "rouge", "--hyp", files["hyp"], "--ref", files["blank"], "--tsv",
              "--opt", "empty_reference=zero", "--opt", "types=rouge1", "--sentence")
    assert out.returncode == 0, out.stderr
    assert re.search(r"warning: rouge: 1 reference\(s\) have no tokens \(first: \S*blank\.txt "
                     r"line 2\)", out.stderr), out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines() if not line.startswith("#")]
    assert rows[2] == ["2", "0.0"]


def test_list_and_version():
    out = run("list")
    assert out.returncode == 0
    for name in ("bleu:", "gleu:", "meteor:", "rouge:", "smooth='exp'", "types=("):
        assert name in out.stdout
    assert "not here: perplexity" in out.stdout
    version = run("--version")
    assert version.stdout.strip() == f"markeval {markeval.__version__}"


def test_lexical_scoring_does_not_import_torch(files):
    argv = ["score", "-m", "bleu", "--hyp", str(files["hyp"]), "--ref", str(files["ref1"])]
    code = (f"import sys; from markeval.cli import main; main({argv!r}); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines()[-1] == "False"


def test_parse_options_types_and_scopes():
    bleu, meteor, rouge = get_metric("bleu"), get_metric("METEOR"), get_metric("rouge")
    opts = parse_options(["lowercase=no", "bleu.smooth_value=none", "types=rouge1, rougeL",
                          "max_order=2", "bleu.tokenize=none"], [bleu, meteor, rouge])
    assert opts == {
        "bleu": {"lowercase": False, "smooth_value": None, "max_order": 2, "tokenize": "none"},
        "meteor": {"lowercase": False},
        "rouge": {"types": ("rouge1", "rougeL")},
    }
    with pytest.raises(CLIError, match=r"expects bool, got 'maybe'"):
        parse_options(["lowercase=maybe"], [meteor])
    with pytest.raises(CLIError, match=r"expects key=value"):
        parse_options(["smooth"], [bleu])
    with pytest.raises(CLIError, match=r"perplexity scores text against a language model"):
        get_metric("perplexity")


def test_the_metrics_come_from_the_registry():
    from markeval import registry
    from markeval._cli_registry import REGISTRY

    families = dict.fromkeys(m.family for m in registry.metrics(inputs="texts"))
    assert list(REGISTRY) == list(families)
    assert get_metric("meteor").info is registry.get("meteor")
    with pytest.raises(CLIError, match=r"fid compares two sets of embeddings .* markeval\.fid"):
        get_metric("FID")


# --- markeval compare ---------------------------------------------------------------------------

# The paired tests need six sentences at least (markeval.significance.MIN_SENTENCES).
C_HYP = HYP + ["we went to the beach", "she reads a book", "the train was late"]
C_REF1 = REF1 + ["we went to a beach", "she read a book", "the train is late again"]
C_REF2 = REF2 + ["they went to the beach", "she reads books", "a train was late"]
C_REFS = [list(pair) for pair in zip(C_REF1, C_REF2)]
SYS_A = ["the cat sat on a mat", "a dog barked at night", "it is raining", "we went to sea",
         "she reads a book", "the train was late"]
SYS_B = ["the cat is on the mat", "the dog barked loudly at night", "today it rains",
         "we went to the beach", "she is reading", "a late train"]


@pytest.fixture
def systems(files, tmp_path):
    for name, lines in {"hyp": C_HYP, "ref1": C_REF1, "ref2": C_REF2, "sys_a": SYS_A,
                        "sys_b": SYS_B, "short": C_REF1[:5], "one_a": SYS_A[:1],
                        "one_b": SYS_B[:1], "one_ref": C_REF1[:1]}.items():
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files


def test_compare_json_equals_library(systems):
    from markeval.significance import paired_significance

    out = run("compare", "--baseline", systems["hyp"], "--system", systems["sys_a"],
              "--system", systems["sys_b"], "--ref", systems["ref1"], "--ref", systems["ref2"],
              "-m", "bleu", "-m", "meteor", "--test", "ar", "--n-resamples", "300",
              "--seed", "3", "--opt", "bleu.smooth=floor", "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert (doc["test"], doc["n_resamples"], doc["seed"], doc["lines"]) == ("ar", 300, 3, 6)
    names = [str(systems["hyp"]), str(systems["sys_a"]), str(systems["sys_b"])]
    assert doc["baseline"] == names[0] and doc["systems"] == names[1:]
    for got, metric, options in zip(doc["results"], ("bleu", "meteor"),
                                    ({"smooth": "floor"}, {})):
        want = paired_significance((names[0], C_HYP), {names[1]: SYS_A, names[2]: SYS_B}, C_REFS,
                                   metric=metric, test="ar", n_resamples=300, seed=3,
                                   options=options, progress=False)
        assert got["signature"] == want.signature
        for row, expected in zip(got["systems"], want.rows):
            assert row["system"] == expected.name
            assert (row["score"], row["mean"], row["ci"], row["p_value"]) == (
                expected.score, expected.mean, expected.ci, expected.p_value)


def test_compare_table_is_sacrebleus(systems):
    out = run("compare", "--baseline", systems["hyp"], "--system", systems["sys_a"],
              "--ref", systems["ref1"], "--quiet")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert re.match(r"\s*System\s+BLEU \(μ ± 95% CI\)$", lines[0])
    assert lines[1].strip().startswith("Baseline: ") and "(p = " not in lines[1]
    assert re.search(r"sys_a\.txt\s+\d+\.\d\d \(\d+\.\d\d ± \d+\.\d\d\) \(p = \d\.\d{4}\)\*?$",
                     lines[2])
    assert "Paired bootstrap resampling test with 1000 resampling trials" in out.stdout
    assert re.search(r"bleu\|nrefs:1\|tok:13a.*\|test:bs\|n:1000\|seed:12345\|version:",
                     out.stdout)


def test_compare_tsv_and_self_comparison(systems):
    out = run("compare", "--baseline", systems["hyp"], "--system", systems["ref1"],
              "--ref", systems["ref1"], "-m", "rouge1", "--test", "ar", "--n-resamples", "50",
              "--tsv", "--quiet")
    assert out.returncode == 0, out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines() if not line.startswith("#")]
    assert rows[0] == ["system", "metric", "score", "mean", "ci", "p_value"]
    assert rows[1][5] == "" and float(rows[2][2]) == 1.0
    same = run("compare", "--baseline", systems["hyp"], "--system", systems["sys_a"],
               "--ref", systems["hyp"], "--ref", systems["ref1"], "--test", "ar", "-q",
               "--n-resamples", "50", "--json")
    assert same.returncode == 0, same.stderr


@pytest.mark.skipif(importlib.util.find_spec("markeval.lexical.chrf") is None
                    or importlib.util.find_spec("markeval.lexical.ter") is None,
                    reason="chrF/TER not written yet")
def test_compare_and_score_chrf_ter(systems):
    from markeval.significance import paired_significance

    out = run("compare", "--baseline", systems["hyp"], "--system", systems["sys_a"],
              "--ref", systems["ref1"], "-m", "chrf", "-m", "ter", "--opt", "chrf.word_order=2",
              "--opt", "ter.normalized=yes", "--n-resamples", "100", "--json", "-q")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    want = paired_significance((str(systems["hyp"]), C_HYP), {str(systems["sys_a"]): SYS_A},
                               [[r] for r in C_REF1], metric="chrf", n_resamples=100,
                               options={"word_order": 2}, progress=False)
    assert doc["results"][0]["signature"] == want.signature
    assert doc["results"][0]["systems"][1]["p_value"] == want.rows[1].p_value
    assert "norm:yes" in doc["results"][1]["signature"]
    assert doc["results"][1]["higher_is_better"] is False
    from markeval import registry

    if "chrf" in registry.names() and "ter" in registry.names():
        scored = run("score", "-m", "chrf", "-m", "ter", "--hyp", systems["hyp"], "--ref",
                     systems["ref1"], "--opt", "word_order=2", "--json", "-q")
        assert scored.returncode == 0, scored.stderr
        got = {r["metric"]: r["score"] for r in json.loads(scored.stdout)["results"]}
        assert got["chrf"] == markeval.lexical.chrf.chrf(C_HYP, C_REF1, word_order=2).score
        assert got["ter"] == markeval.lexical.ter.ter(C_HYP, C_REF1).score


def test_compare_refuses_a_one_sentence_test_set(systems):
    out = run("compare", "--baseline", systems["one_a"], "--system", systems["one_b"],
              "--ref", systems["one_ref"], "--test", "ar")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == ("markeval: error: bleu: the paired tests need at least 6 "
                                  "sentences to say anything at p <= 0.05 (below that, no "
                                  "outcome could); the test set has 1")


@pytest.mark.parametrize("args, message", [
    (["--system", "{sys_a}", "--ref", "{short}"], r"hyp\.txt has 6 lines but .*short\.txt has 5"),
    (["--system", "{short}", "--ref", "{ref1}"], r"hyp\.txt has 6 lines but .*short\.txt has 5"),
    (["--system", "{hyp}", "--ref", "{ref1}"], r"hyp\.txt is given twice"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "-m", "perplexity"],
     r"perplexity: perplexity scores text against a language model"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "-m", "blue"], r"unknown metric 'blue'"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "--test", "t"], r"argument --test: invalid"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "--n-resamples", "0"],
     r"bleu: n_resamples must be a positive int, got 0"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "--seed", "-2"], r"seed"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "--opt", "smoth=exp"],
     r"unknown option 'smoth' for bleu; did you mean 'smooth'\?"),
    (["--ref", "{ref1}"], r"required: --system"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "-m", "rouge1", "--opt", "rouge.types=rougeX"],
     r"rouge1: metric='rouge1' fixes types=\('rouge1',\), so options cannot set "
     r"types=\('rougeX',\)"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "-m", "chrf", "--opt", "beta=1e200"],
     r"chrf: beta must have a finite square"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "--n-resamples", str(10**12)],
     r"bleu: n_resamples=1000000000000 resamples of 6 items are 6e\+12 index draws"),
    (["--system", "{sys_a}", "--ref", "{ref1}", "--n-resamples", str(10**12), "--test", "ar"],
     r"bleu: n_resamples=1000000000000 trials of 6 items"),
])
def test_compare_errors_are_one_line(systems, tmp_path, args, message):
    out = run("compare", "--baseline", str(systems["hyp"]),
              *[a.format(tmp=tmp_path, **systems) for a in args])
    assert out.returncode == 2, out.stdout
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1, out.stderr
    assert re.search(message, out.stderr), out.stderr


def test_data_says_where_each_data_set_is_and_refuses_an_unknown_one(tmp_path, monkeypatch, capsys):
    from markeval.cli import main

    from conftest import use_fake_data

    (tmp_path / "tac").mkdir()
    for name in ("tac.08.mds.gen.resp-pyr.json", "tac.09.mds.gen.resp-pyr.json"):
        (tmp_path / "tac" / name).write_text("{}")
    use_fake_data(monkeypatch, tmp_path)
    assert main(["data", "tac"]) == 0
    assert capsys.readouterr().out == f"tac: {tmp_path / 'tac'} ($MARKEVAL_DATA)\n"
    assert main(["data", "tac", "wmt18"]) == 2
    assert capsys.readouterr().err == ("markeval: error: data takes data sets from tac, wmt17; "
                                       "got wmt18\n")
