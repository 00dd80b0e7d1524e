"""Every public metric refuses the common bad inputs with an error that names the argument.

A registry in the style of scikit-learn's ``metrics/tests/test_common.py``: each entry says how
to call one public function with valid arguments and which of them are text lists, embedding
sets, number sequences, equal-length pairs, flags, a seed or a neighbour count. The tests below
derive the bad inputs from that description (None, a bare string, an empty list, mismatched
lengths, NaN and inf, the wrong number of dimensions, a bad k, a bad seed, a flag that is not a
bool) and require a ``TypeError`` or ``ValueError`` whose message names the argument.

A new metric joins every test with one ``Case`` line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import markeval
from markeval._checks import check_choice
from markeval.experiments.human_correlation import grouped_correlation, williams_test
from markeval.experiments.translation import sentence_subset

HYPS = ["the cat sat on the mat", "a dog barked"]
REFS = [["the cat sat on a mat"], ["the dog barked loudly"]]
_RNG = np.random.default_rng(0)
SET_A, SET_B = _RNG.normal(size=(12, 3)), _RNG.normal(size=(12, 3))


def _lm():
    return markeval.NGramLM(2, "add-k", min_count=1).fit([["a", "b"], ["b", "a", "b"]])


@dataclass(frozen=True)
class Case:
    """How to call one public function, and what kind each argument is.

    ``valid`` returns fresh keyword arguments for a call that succeeds. The argument names in
    the other fields are keys of that dict:

    required : refuse None;
    lists : refuse None and a bare string (a string would be read character by character);
    nonempty : also refuse an empty list;
    pairs : two arguments that must have the same length;
    arrays : 2-D embedding sets (refuse NaN, inf and 1-D input);
    numbers : flat sequences of numbers (refuse NaN/inf where ``finite``, and 2-D input);
    flags, seed, k : options that must be a bool, a seed (non-negative int), a neighbour count.
    """

    fn: Callable
    valid: Callable[[], dict]
    required: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    nonempty: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    arrays: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    finite: bool = True
    flags: tuple[str, ...] = ()
    seed: str | None = None
    k: str | None = None
    name: str = field(default="")

    @property
    def id(self) -> str:
        return self.name or self.fn.__name__


def _texts(**extra) -> Callable[[], dict]:
    return lambda: {"hypotheses": list(HYPS), "references": [list(r) for r in REFS], **extra}


def _sets(**extra) -> Callable[[], dict]:
    return lambda: {"reference": SET_A.copy(), "candidate": SET_B.copy(), **extra}


def _me_sets(**extra) -> Callable[[], dict]:
    return lambda: {"S": SET_A.copy(), "S_prime": SET_B.copy(), "k": 2, **extra}


TEXT_PAIRS = (("hypotheses", "references"),)
CORRELATION = dict(numbers=("x", "y"), pairs=(("x", "y"),), seed="seed")

CASES = [
    Case(markeval.bleu, _texts(), lists=("hypotheses", "references"),
         nonempty=("hypotheses",), pairs=TEXT_PAIRS, flags=("lowercase", "effective_order")),
    Case(markeval.sentence_bleu, lambda: {"hypothesis": HYPS[0], "references": REFS[0]},
         required=("references",), flags=("lowercase", "effective_order")),
    Case(markeval.gleu, _texts(), lists=("hypotheses", "references"), nonempty=("hypotheses",),
         pairs=TEXT_PAIRS, flags=("lowercase",)),
    Case(markeval.sentence_gleu, lambda: {"hypothesis": HYPS[0], "references": REFS[0]},
         required=("references",), flags=("lowercase",)),
    Case(markeval.corpus_meteor, _texts(synonyms=False, progress=False),
         lists=("hypotheses", "references"),
         nonempty=("hypotheses",), pairs=TEXT_PAIRS,
         flags=("stem", "synonyms", "lowercase", "progress")),
    Case(markeval.rouge, _texts(n_resamples=5), lists=("hypotheses", "references"),
         nonempty=("hypotheses",), pairs=TEXT_PAIRS, flags=("use_stemmer", "progress"),
         seed="seed"),
    Case(markeval.bertscore, _texts(progress=False), lists=("hypotheses", "references"),
         nonempty=("hypotheses",), pairs=TEXT_PAIRS, flags=("rescale", "progress")),
    Case(markeval.moverscore, _texts(progress=False), lists=("hypotheses", "references"),
         nonempty=("hypotheses",), pairs=TEXT_PAIRS,
         flags=("remove_subwords", "remove_punctuation", "progress")),
    Case(markeval.bootstrap,
         lambda: {"stats": markeval.bleu_statistics(HYPS, REFS), "n_resamples": 5}, seed="seed"),
    Case(markeval.fid, _sets(), arrays=("reference", "candidate"), flags=("allow_singular",)),
    Case(markeval.prd, _sets(num_clusters=2, num_runs=2), arrays=("reference", "candidate"),
         flags=("enforce_balance",), seed="seed"),
    Case(markeval.improved_precision_recall, _sets(k=2), arrays=("reference", "candidate"),
         flags=("realism", "progress"), k="k"),
    Case(markeval.me_petersen, _me_sets(), arrays=("S", "S_prime"), k="k"),
    Case(markeval.me_schnabel, _me_sets(), arrays=("S", "S_prime"), k="k"),
    Case(markeval.me_capture, _me_sets(), arrays=("S", "S_prime"), k="k"),
    Case(markeval.mark_evaluate, _sets(k=2), arrays=("reference", "candidate"), k="k"),
    Case(markeval.perplexity, lambda: {"probabilities": [0.5, 0.25, 0.125]},
         lists=("probabilities",), nonempty=("probabilities",)),
    Case(markeval.correlation, lambda: {"x": [0.1, 0.5, 0.3, 0.9], "y": [1, 2, 3, 4]},
         **CORRELATION),
    Case(markeval.kendall, lambda: {"x": [0.1, 0.5, 0.3, 0.9], "y": [1, 2, 3, 4]},
         **CORRELATION),
    Case(grouped_correlation,
         lambda: {"metric": [1, 2, 3, 3, 1, 2], "human": [1, 2, 3, 1, 2, 3],
                  "groups": list("aaabbb"), "n_resamples": 10},
         lists=("groups",), numbers=("metric", "human"),
         pairs=(("metric", "human"), ("metric", "groups")), seed="seed"),
    Case(williams_test, lambda: {"r12": 0.6, "r13": 0.5, "r23": 0.8, "n": 30},
         flags=("absolute",)),
    Case(sentence_subset, lambda: {"n_sentences": 10, "size": 3}, seed="seed"),
    Case(markeval.schnabel, lambda: {"captured": [10, 10], "recaptured": [0, 2],
                                      "marked": [0, 10]},
         lists=("captured", "recaptured", "marked"), nonempty=("captured",),
         pairs=(("captured", "recaptured"), ("captured", "marked"))),
    Case(markeval.ngram_counts, lambda: {"tokens": ["a", "b", "a"], "max_order": 2},
         lists=("tokens",)),
    Case(markeval.tokenize, lambda: {"text": "The cat."}, flags=("lowercase",)),
    Case(lambda sentences: markeval.NGramLM(2).fit(sentences),
         lambda: {"sentences": [["a", "b"], ["b"]]}, lists=("sentences",),
         nonempty=("sentences",), name="NGramLM.fit"),
    Case(lambda **kw: _lm().generate(**kw), lambda: {"n": 2}, flags=("allow_unk",),
         seed="seed", name="NGramLM.generate"),
]


def _cases(attribute: str):
    """(case, argument) for every argument of the given kind, with readable test ids."""
    out = []
    for case in CASES:
        values = getattr(case, attribute)
        for arg in ([values] if isinstance(values, str) else values or ()):
            label = "-".join(arg) if isinstance(arg, tuple) else arg
            out.append(pytest.param(case, arg, id=f"{case.id}-{label}"))
    return out


def _refused(case: Case, names, **bad) -> None:
    """Call ``case`` with ``bad`` replacing valid arguments; the error must name ``names``."""
    kwargs = {**case.valid(), **bad}
    with pytest.raises((TypeError, ValueError)) as info:
        case.fn(**kwargs)
    message = str(info.value)
    for name in [names] if isinstance(names, str) else names:
        assert re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", message), (
            f"{case.id}: the error for {bad} does not name {name!r}: {message}")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_the_valid_call_succeeds(case):
    # Otherwise a "refused" input below might only be refused for another reason.
    case.fn(**case.valid())


@pytest.mark.parametrize("case, arg", _cases("required") + _cases("lists") + _cases("arrays")
                         + _cases("numbers"))
def test_none_is_refused(case, arg):
    _refused(case, arg, **{arg: None})


@pytest.mark.parametrize("case, arg", _cases("lists") + _cases("arrays") + _cases("numbers"))
def test_a_bare_string_is_refused(case, arg):
    _refused(case, arg, **{arg: "the cat sat on the mat"})


@pytest.mark.parametrize("case, arg", _cases("nonempty") + _cases("arrays") + _cases("numbers"))
def test_an_empty_list_is_refused(case, arg):
    _refused(case, arg, **{arg: []})


@pytest.mark.parametrize("case, pair", _cases("pairs"))
def test_mismatched_lengths_name_both_arguments(case, pair):
    first, second = pair
    _refused(case, [first, second], **{second: case.valid()[second][:-1]})


@pytest.mark.parametrize("case, arg", _cases("arrays") + _cases("numbers"))
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused(case, arg, value):
    data = np.array(case.valid()[arg], dtype=np.float64)
    data.flat[1] = value
    _refused(case, arg, **{arg: data})


@pytest.mark.parametrize("case, arg", _cases("arrays") + _cases("numbers"))
def test_the_wrong_number_of_dimensions_is_refused(case, arg):
    data = np.asarray(case.valid()[arg], dtype=np.float64)
    wrong = data[0] if data.ndim == 2 else data[None, :]
    _refused(case, arg, **{arg: wrong})


@pytest.mark.parametrize("case, arg", _cases("numbers"))
def test_numbers_given_as_strings_are_refused(case, arg):
    as_text = [str(v) for v in case.valid()[arg]]
    _refused(case, arg, **{arg: as_text})


@pytest.mark.parametrize("case, arg", _cases("k"))
@pytest.mark.parametrize("k", [0, -1, 12, 1.5, True, "2", None])
def test_a_bad_neighbour_count_is_refused(case, arg, k):
    # 12 is the size of both sets: a point is never its own neighbour, so k <= 11.
    _refused(case, arg, **{arg: k})


@pytest.mark.parametrize("case, arg", _cases("seed"))
@pytest.mark.parametrize("seed", [-1, None, 1.5, True, "0"])
def test_one_seed_rule_everywhere(case, arg, seed):
    # A seed is a non-negative int: None would make the result irreproducible.
    _refused(case, arg, **{arg: seed})


@pytest.mark.parametrize("case, arg", _cases("flags"))
@pytest.mark.parametrize("flag", ["no", "yes", 1, 0])
def test_flags_must_be_real_bools(case, arg, flag):
    # "no" is a non-empty string, hence true: it would silently switch the option on.
    _refused(case, arg, **{arg: flag})


@pytest.mark.parametrize("case, arg", _cases("arrays") + _cases("numbers"))
def test_complex_values_are_refused(case, arg):
    # numpy would drop the imaginary part with a mere warning.
    data = np.array(case.valid()[arg], dtype=np.complex128)
    data.flat[1] += 1j
    _refused(case, arg, **{arg: data})


# --- Refusals found by trying the public API by hand ------------------------------------------

@pytest.mark.parametrize("captured, recaptured, marked, match", [
    ([10, 10], [0, 2], [5, 10], r"marked\[0\]=5 is impossible: it must be 0"),
    ([10, 10, 10], [0, 2, 5], [0, 10, 9],
     r"marked\[2\]=9 is impossible: it must be 18 \(marked\[1\] \+ captured\[1\] - "
     r"recaptured\[1\] = 10 \+ 10 - 2"),
    ([10, 10], [0, 2], [0, 12], r"marked\[1\]=12 is impossible: it must be 10"),
    ([10, 4], [0, 6], [0, 10], r"recaptured\[1\]=6 exceeds min\(captured\[1\]=4"),
])
def test_schnabel_refuses_impossible_mark_histories(captured, recaptured, marked, match):
    with pytest.raises(ValueError, match=match):
        markeval.schnabel(marked=marked, captured=captured, recaptured=recaptured)


def test_prd_refuses_a_single_cluster():
    # One cluster holds every point: sets 100 apart would get F = 1.
    with pytest.raises(ValueError, match="num_clusters must be >= 2: one cluster holds every"):
        markeval.prd(SET_A, SET_A + 100, num_clusters=1)
    assert markeval.prd(SET_A, SET_A + 100, num_clusters=2, num_runs=2).f_beta == 0.0


@pytest.mark.parametrize("call, match", [
    (lambda: markeval.perplexity([0.5, 0.5], n_units="3"), "n_units must be an int, got str: '3'"),
    (lambda: markeval.perplexity([0.5, 0.5], n_units=[1.5]), "n_units must be an int, got float"),
    (lambda: markeval.perplexity(["0.5", "0.5"]),
     r"probabilities\[0\] must be a sequence of numbers, got str: '0.5'"),
    (lambda: markeval.ngram_counts("a b", 2), "tokens must be a sequence of tokens, not a single "
                                              "str: 'a b'; split the text first"),
    (lambda: markeval.bootstrap(markeval.bleu_statistics(HYPS, REFS), seed=None),
     "seed must be a non-negative int, got None"),
    (lambda: markeval.NGramLM(2).fit(None), "sentences must be a list of tokenised sentences"),
    (lambda: markeval.NGramLM(2).fit([["a"], None]), r"sentences\[1\] must be a list of tokens"),
    (lambda: markeval.meteor("a b", "a b", beta="3"), "beta must be a number, got str: '3'"),
    (lambda: markeval.rouge(["a"], ["a"], confidence="0.9", n_resamples=5),
     "confidence must be a number in"),
    (lambda: markeval.rouge(["a"], ["a"], empty_reference="skip"),
     "empty_reference must be one of"),
])
def test_hand_found_inputs_are_refused_by_name(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def test_fid_of_huge_embeddings_is_computed_or_refused_by_name():
    x = np.random.default_rng(0).normal(size=(40, 3))
    y = x[::-1] * 1.5 + 0.5
    base = markeval.fid(x, y).value
    # FID(s x, s y) = s**2 FID(x, y): near 1e150 the covariance products overflow float64
    # unless the inputs are scaled first (by a power of two, which changes no bit).
    assert markeval.fid(x * 1e150, y * 1e150).value == pytest.approx(base * 1e300, rel=1e-12)
    assert markeval.fid(x, y).value == base  # the usual range is untouched
    with pytest.raises(ValueError, match="FID overflows float64: the embeddings reach 3.5e\\+200"):
        markeval.fid(x * 1e200, y * 1e200)


@pytest.mark.parametrize("cache_dir, match", [
    (123, "cache_dir must be a folder path \\(str or os.PathLike\\), got int: 123"),
    ("{file}", "cache_dir='{file}' is a file, not a folder"),
    ("{file}/sub", "cache_dir='{file}/sub' lies under {file}, which is a file, not a folder"),
])
def test_a_cache_dir_that_cannot_be_a_folder_is_refused_by_name(tmp_path, cache_dir, match):
    from markeval.encoders import default_model, memoize

    (tmp_path / "notes.txt").write_text("mine")
    file = str(tmp_path / "notes.txt")
    cache_dir = cache_dir.format(file=file) if isinstance(cache_dir, str) else cache_dir
    match = match.format(file=re.escape(file))
    with pytest.raises((TypeError, ValueError), match=match):
        default_model().configure(cache_dir=cache_dir)
    with pytest.raises((TypeError, ValueError), match=match):
        memoize(cache_dir=cache_dir)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_lowercase_no_no_longer_means_yes():
    hyps, refs = ["THE CAT SAT ON THE MAT"], [["the cat sat on the mat"]]
    with pytest.raises(TypeError, match="lowercase must be True or False, got str: 'no'"):
        markeval.bleu(hyps, refs, lowercase="no")
    # exp(mean of log 1) * 100 rounds to 100.00000000000004: compare to 1e-9.
    assert markeval.bleu(hyps, refs, lowercase=True).score == pytest.approx(100.0, abs=1e-9)
    assert markeval.bleu(hyps, refs, lowercase=False).score == 0.0
    assert markeval.bleu(hyps, refs, lowercase=np.bool_(True)).score == pytest.approx(100.0)


def test_rouge_scores_an_empty_reference_zero_on_request_as_rouge_score_does():
    from rouge_score import rouge_scorer

    hyps, refs = ["the cat sat", "a dog barked"], [["the cat sat"], ["", "a dog"]]
    with pytest.raises(ValueError, match=r"references\[1\]\[0\] has no tokens: ''; "
                                         "empty_reference='zero'"):
        markeval.rouge(hyps, refs)
    with pytest.warns(UserWarning, match=r"1 reference\(s\) have no tokens \(first: "
                                         r"references\[1\]\[0\]\)"):
        ours = markeval.rouge(hyps, refs, empty_reference="zero")
    assert "empty_ref:zero" in ours.signature
    scorer = rouge_scorer.RougeScorer(list(ours.types))
    for i, (hyp, group) in enumerate(zip(hyps, refs)):
        theirs = scorer.score_multi(group, hyp)
        for t in ours.types:
            # Same arithmetic on the same integer counts: bit-exact, as on TAC.
            assert ours[t].pair(i) == markeval.RougeScore(*theirs[t])
    with pytest.warns(UserWarning):  # an empty reference alone scores 0, as in rouge-score
        alone = markeval.rouge(["a b"], [""], empty_reference="zero")
    assert alone["rouge1"].fmeasure == 0.0


def test_the_transposed_layout_is_read_as_given_when_it_cannot_be_detected():
    # Two reference streams for two hypotheses: both layouts are valid, so markeval reads
    # references[i] as the references of hypothesis i, and says so where users look.
    hyps = ["the cat sat", "a dog barked"]
    streams = [["the cat sat", "a dog barked"], ["a cat sat", "the dog barked"]]
    as_given = markeval.bleu(hyps, streams)
    transposed = markeval.bleu(hyps, [list(r) for r in zip(*streams)])
    assert as_given.counts != transposed.counts
    from markeval._checks import check_references
    from markeval.cli import build_parser

    score_help = build_parser()._subparsers._group_actions[0].choices["score"].format_help()
    for text in (markeval.bleu.__doc__, check_references.__doc__, " ".join(score_help.split())):
        assert "as many" in text or "2 streams for 2 hypotheses" in text, text


def test_check_choice():
    assert check_choice("b", "mode", ("a", "b")) == "b"
    with pytest.raises(ValueError, match="mode must be one of 'a', 'b', got 'c'"):
        check_choice("c", "mode", ("a", "b"))
    with pytest.raises(TypeError, match=r"mode must be a str \(one of 'a', 'b'\), got int: 3"):
        check_choice(3, "mode", ("a", "b"))
    with pytest.raises(TypeError, match="got bool"):
        check_choice(True, "order", (0, 1))
    with pytest.raises(ValueError, match="order must be one of 0, 1, got"):
        check_choice([1], "order", (0, 1))  # unhashable: refused, not a crash
