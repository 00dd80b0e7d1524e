"""Properties every metric of :mod:`markeval.registry` shares, checked over the registry.

In the style of scikit-learn's ``metrics/tests/test_common.py``: a metric added to the registry
is checked here without a line of test code. The properties:

* identical inputs (or, for perplexity, probabilities of 1) give the metric's ``best`` score;
* the corpus score ignores the order of the items (hypothesis/reference pairs move together;
  the rows of an embedding set, the sentences of a text set, the sequences of a corpus);
* a bare string where a list is expected is refused, naming the argument;
* the same call twice gives the same score and signature;
* a metric declared symmetric is, and one declared asymmetric is not on some input;
* the result follows :class:`markeval._result.MetricResult`, with the registry's direction,
  headline and per-item scores.

The two metrics that load a text encoder run on a few fixed short sentences; the others on
random inputs (hypothesis), small enough to keep the whole file fast.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import markeval
from markeval import registry
from markeval._result import MetricResult

METRICS = registry.metrics()
ENCODED = {"bertscore", "moverscore"}  # load a text encoder: fixed examples only
# Settings that only make a metric faster here (the properties hold for any).
FAST = {"prd_precision": {"num_clusters": 5, "num_runs": 2},
        "prd_recall": {"num_clusters": 5, "num_runs": 2}}
# How far from `best` identical inputs may land, and why.
NEAR_BEST = {
    # The fragmentation penalty of one chunk of n words is 0.5 / n**3 (n >= 8 here).
    "meteor": 0.5 / 8**3,
}
# Metrics whose score depends on the order of the rows, and why.
ORDER_DEPENDENT = {
    # k-means++ draws its first centres by row position: permuted rows, other clusters.
    "prd_precision": "k-means seeds by row position",
    "prd_recall": "k-means seeds by row position",
    "mauve": "k-means seeds by row position",
    "mauve_star": "k-means seeds by row position",
    "frontier_integral": "k-means seeds by row position",
}
# Metrics with no best score (registry best=None), and why.
NO_BEST = {
    "forward_ce": "a smoothed LM never gives probability 1",
    "reverse_ce": "a smoothed LM never gives probability 1",
    "density": "equal sets score about 1, a number of the set, not a bound",
    "vendi": "the diversity of the candidates alone: equal sets score what the set does",
}
# Metrics whose headline is another number of the result than its `score`.
OTHER_HEADLINE = {
    "forward_ce": "bits per token; score is the perplexity",
    "reverse_ce": "bits per token; score is the perplexity",
}


def _ids(metrics):
    return [pytest.param(m, id=m.name) for m in metrics]


def _quiet(info) -> dict:
    options = dict(FAST.get(info.name, {}))
    if "progress" in inspect.signature(info.function).parameters:
        options["progress"] = False
    return options


def _score(info, *inputs) -> float:
    return info.score(*inputs, **_quiet(info))


# --- inputs -------------------------------------------------------------------------------------

_word = st.sampled_from("the a cat dog sat on mat rug is was big red".split())


def _texts(min_words: int, max_words: int = 10):
    """One or two lines (ROUGE-Lsum reads lines as sentences) of words."""
    line = st.lists(_word, min_size=min_words, max_size=max_words).map(" ".join)
    return st.lists(line, min_size=1, max_size=2).map("\n".join)


_embeddings = st.integers(0, 2**32 - 1).map(
    lambda seed: tuple(np.random.default_rng(seed).normal(size=(20, 3)) + shift
                       for shift in (0.0, 0.5)))
_probabilities = st.lists(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=6),
                          min_size=1, max_size=5)

# Fixed inputs for the encoder metrics and for the checks that need one example.
HYPOTHESES = ["the cat sat on the mat", "a dog barked loudly at night",
              "it is raining in the city today"]
REFERENCES = ["the cat was sitting on a mat", "the dog barked at night",
              "today it rains in town"]
_rng = np.random.default_rng(0)
SETS = (_rng.normal(size=(20, 3)), _rng.normal(size=(20, 3)) + 0.5)
TOKENS = ([s.split() for s in HYPOTHESES], [s.split() for s in REFERENCES * 3])
PROBABILITIES = ([[0.5, 0.25, 0.9], [0.1, 0.6]],)
EXAMPLE = {"texts": (HYPOTHESES, REFERENCES), "embeddings": SETS, "text sets": TOKENS,
           "probabilities": PROBABILITIES}


def _pairs(info, min_words: int = 1):
    """Inputs of ``info``'s kind: a strategy (fixed ones for the encoder metrics)."""
    if info.inputs == "texts":
        if info.name in ENCODED:
            return st.just(EXAMPLE["texts"])
        rows = st.lists(st.tuples(_texts(min_words), _texts(max(min_words, 1))),
                        min_size=1, max_size=6)
        return rows.map(lambda r: ([h for h, _ in r], [ref for _, ref in r]))
    if info.inputs == "embeddings":
        return _embeddings
    if info.inputs == "text sets":
        tokens = st.lists(st.lists(_word, min_size=1, max_size=8), min_size=2, max_size=8)
        return st.tuples(tokens, tokens)
    return _probabilities.map(lambda p: (p,))


# --- the registry -------------------------------------------------------------------------------


def test_names_are_unique_and_functions_import():
    assert len({m.name for m in METRICS}) == len(METRICS)
    for m in METRICS:
        assert callable(m.function), m.name
        assert m.sentence is None or callable(m.sentence_function), m.name
        assert m.inputs in registry.INPUTS and m.measures in registry.MEASURES
        assert (m.symmetric is None) == (m.inputs == "probabilities"), m.name


def test_every_public_metric_function_is_registered():
    named = {spec.split(":")[1] for m in METRICS for spec in (m.corpus, m.sentence) if spec}
    public = {"bleu", "sentence_bleu", "gleu", "sentence_gleu", "chrf", "sentence_chrf", "ter",
              "sentence_ter", "meteor", "corpus_meteor",
              "rouge", "bertscore", "moverscore", "perplexity", "forward_cross_entropy",
              "reverse_cross_entropy", "fid", "prd", "improved_precision_recall",
              "mark_evaluate", "mauve"}
    assert public <= named, public - named
    assert all(name in markeval.__all__ for name in named)


def test_get_suggests_a_close_name():
    assert registry.get("rougeL").family == "rouge"
    with pytest.raises(ValueError, match=r"unknown metric 'rougel'; did you mean 'rougeL'\?"):
        registry.get("rougel")
    with pytest.raises(ValueError, match="inputs must be one of"):
        registry.metrics(inputs="images")


def test_reading_the_registry_does_not_import_torch():
    code = "import sys, markeval.registry; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# --- properties ---------------------------------------------------------------------------------


@pytest.mark.parametrize("info", _ids(METRICS))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_identical_inputs_score_best(info, data):
    if info.best is None:  # nothing attains a best (see NO_BEST)
        assert info.name in NO_BEST, f"{info.name} has no best score: say why in NO_BEST"
        return
    if info.inputs == "probabilities":
        p = data.draw(_probabilities)
        got = _score(info, [[1.0] * len(seq) for seq in p])
    elif info.inputs == "texts" and info.name in ENCODED:
        got = _score(info, HYPOTHESES, HYPOTHESES)
    else:
        # 8+ words: BLEU needs 4-grams, METEOR's penalty shrinks with the length.
        x = data.draw(_pairs(info, min_words=8))[0]
        got = _score(info, x, x.copy() if isinstance(x, np.ndarray) else list(x))
    assert got == pytest.approx(info.best, abs=NEAR_BEST.get(info.name, 1e-6))


def _shuffled(info, inputs, rnd):
    if info.inputs == "texts":  # the pairs move together
        order = list(range(len(inputs[0])))
        rnd.shuffle(order)
        return tuple([x[i] for i in order] for x in inputs)
    out = []
    for x in inputs:  # each set (or corpus) on its own
        order = list(range(len(x)))
        rnd.shuffle(order)
        out.append(x[order] if isinstance(x, np.ndarray) else [x[i] for i in order])
    return tuple(out)


@pytest.mark.parametrize("info", _ids([m for m in METRICS if m.name not in ORDER_DEPENDENT]))
@settings(max_examples=15, deadline=None)
@given(data=st.data(), rnd=st.randoms(use_true_random=False))
def test_corpus_score_ignores_item_order(info, data, rnd):
    inputs = data.draw(_pairs(info))
    assert _score(info, *_shuffled(info, inputs, rnd)) == pytest.approx(
        _score(info, *inputs), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("info", _ids(METRICS))
def test_a_bare_string_is_refused_naming_the_argument(info):
    names = list(inspect.signature(info.function).parameters)
    for i, good in enumerate(EXAMPLE[info.inputs]):
        inputs = list(EXAMPLE[info.inputs])
        inputs[i] = "the cat sat on the mat"
        with pytest.raises((TypeError, ValueError)) as caught:
            _score(info, *inputs)
        assert re.search(rf"\b{names[i]}\b", str(caught.value)), (
            f"{info.name}: a bare string as {names[i]} is refused without naming it: "
            f"{caught.value}")


@pytest.mark.parametrize("info", _ids(METRICS))
def test_the_same_call_gives_the_same_score_and_signature(info):
    inputs = EXAMPLE[info.inputs]
    first, second = (info.compute(*inputs, **_quiet(info)) for _ in range(2))
    assert info.value(first) == info.value(second)
    assert _protocol(info, inputs, first).signature == _protocol(info, inputs, second).signature


# Inputs on which a metric declared asymmetric must show it (one of them is enough).
WITNESSES = {
    "texts": [(["the cat sat"], ["the cat sat on the mat today"]),
              # ROUGE-Lsum: the union LCS per reference line is not symmetric.
              (["d e d a\ne d a b\na c b d"], ["e e a a\nc c d a\nb e a b"])],
    "embeddings": [SETS, (SETS[0], SETS[1] * 3)],
    "text sets": [TOKENS],
}


@pytest.mark.parametrize("info", _ids([m for m in METRICS if m.symmetric]))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_a_symmetric_metric_is_symmetric(info, data):
    x, y = data.draw(_pairs(info))
    assert _score(info, y, x) == pytest.approx(_score(info, x, y), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("info", _ids([m for m in METRICS if m.symmetric is False]))
def test_an_asymmetric_metric_is_not_symmetric(info):
    gaps = [abs(_score(info, x, y) - _score(info, y, x)) for x, y in WITNESSES[info.inputs]]
    assert max(gaps) > 1e-6, f"{info.name} is declared asymmetric but is symmetric here"


def _protocol(info, inputs, part):
    """The object that carries the shared attributes: the part, or the whole result (ROUGE)."""
    if hasattr(part, "signature"):
        return part
    return info.function(*inputs, **{**info.options, **_quiet(info)})


@lru_cache(maxsize=None)
def _example(name: str):
    info = registry.get(name)
    inputs = EXAMPLE[info.inputs]
    part = info.compute(*inputs, **_quiet(info))
    return info, part, _protocol(info, inputs, part)


@pytest.mark.parametrize("info", _ids(METRICS))
def test_the_result_follows_the_protocol(info):
    _, part, result = _example(info.name)
    assert isinstance(result, MetricResult), f"{type(result).__name__} lacks the protocol"
    assert type(result).higher_is_better is info.higher_is_better
    assert isinstance(result.score, float) and isinstance(result.signature, str)
    if info.name not in OTHER_HEADLINE and (info.headline == "score" or info.part is not None
                                            or len(registry.metrics(family=info.family)) == 1):
        assert result.score == info.value(part)
    if info.items is not None:
        assert result.item_scores == pytest.approx(tuple(getattr(part, info.items)))
    if info.inputs == "embeddings":  # set-level: no per-item scores
        assert result.item_scores is None


@pytest.mark.parametrize("info", _ids([m for m in METRICS if m.sentence is not None]))
def test_the_sentence_function_agrees_with_the_corpus_result(info):
    _, part, _ = _example(info.name)
    for i, (h, r) in enumerate(zip(*EXAMPLE["texts"])):
        one = info.sentence_function(h, [r])
        assert isinstance(one, MetricResult) and type(one).higher_is_better is info.higher_is_better
        if info.items is not None:
            assert info.value(one) == pytest.approx(getattr(part, info.items)[i])
