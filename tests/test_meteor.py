"""METEOR: the slide's alignments, modules, parity with NLTK on WMT17, the min-chunks optimum.

Parity tolerance with ``nltk.translate.meteor_score`` is 1e-12 (the scores are in fact
identical: same alignment, same float operations). NLTK runs on the same WordNet files,
copied into a temporary NLTK data folder by ``setup_nltk_wordnet``.
"""

from __future__ import annotations

import itertools
import warnings
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markeval.datasets.wordnet import (
    WordNetNotFoundError,
    find_wordnet,
    load_wordnet,
    setup_nltk_wordnet,
)
from markeval.lexical.meteor import corpus_meteor, meteor
from markeval.lexical.stem import porter_stem

TOL = 1e-12
CAT = "the cat sat on the mat"
CAT_REORDERED = "on the mat sat the cat"


@pytest.fixture(scope="module")
def nltk_wordnet(tmp_path_factory):
    """NLTK's WordNet reader on the same files markeval reads."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    root = setup_nltk_wordnet(target=tmp_path_factory.mktemp("nltk_data"))
    nltk.data.path.insert(0, str(root))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        reader = WordNetCorpusReader(str(root / "corpora" / "wordnet"), None)
    yield reader
    nltk.data.path.remove(str(root))


@pytest.fixture(scope="module")
def wmt17_pairs():
    """1,400 WMT17 (hypothesis, reference) pairs: lines 0-199 of the first system
    (by name) of each of the 7 into-English language pairs."""
    from markeval.datasets import DataNotFoundError, load_wmt17, wmt17_pairs

    pairs = []
    try:
        for lp in wmt17_pairs():
            data = load_wmt17(lp)
            outputs = data.systems[sorted(data.systems)[0]]
            pairs += list(zip(outputs[:200], data.references[:200]))
    except DataNotFoundError as err:  # pragma: no cover - the data is there in CI
        pytest.skip(f"WMT17 not available: {err}")
    return pairs


# --- the slide's worked examples ------------------------------------------------------------------

def test_identical_sentence():
    r = meteor(CAT, CAT)
    assert (r.precision, r.recall, r.fmean) == (1.0, 1.0, 1.0)
    assert (r.matches, r.chunks) == (6, 1)
    assert r.fragmentation == pytest.approx(1 / 6)
    assert r.penalty == pytest.approx(0.5 / 216)  # 0.0023
    assert round(r.penalty, 4) == 0.0023 and round(r.score, 4) == 0.9977


def test_reordered_sentence_both_modes():
    fewest = meteor(CAT_REORDERED, CAT, mode="min_chunks")
    assert (fewest.matches, fewest.chunks) == (6, 3)
    assert fewest.penalty == 0.0625 and fewest.score == 0.9375
    # "on the mat" | "sat" | "the cat": the two "the" are aligned within their phrases
    assert {(i, j) for i, j, _ in fewest.alignment} == {(0, 3), (1, 4), (2, 5), (3, 2), (4, 0),
                                                        (5, 1)}
    greedy = meteor(CAT_REORDERED, CAT)  # NLTK pairs the two "the" crosswise
    assert (greedy.matches, greedy.chunks, greedy.penalty, greedy.score) == (6, 6, 0.5, 0.5)


def test_no_alignment_of_the_slide_sentences_gives_069():
    """Every (matches, chunks) a pair of 6-word sentences can have, scored by markeval: 0.69
    is not among the scores."""
    ref = "a b c d e f"
    scores = {}
    for m in range(1, 7):
        for c in range(1, m + 1):
            # m matched words in c runs, the runs in reverse order (so no two of them join
            # into one chunk), padded to six words with words the reference lacks
            cuts = [round(i * m / c) for i in range(c + 1)]
            runs = [ref.split()[a:b] for a, b in zip(cuts, cuts[1:])]
            hyp = " ".join([w for run in reversed(runs) for w in run]
                           + [f"x{i}" for i in range(6 - m)])
            result = meteor(hyp, ref, stem=False, synonyms=False)
            assert (result.matches, result.chunks) == (m, c), hyp
            scores[m, c] = round(result.score, 2)
    assert len(scores) == 21 and 0.69 not in scores.values()


def test_nltk_docstring_example_is_06944():
    hyp = ("It is a guide to action which ensures that the military always obeys the "
           "commands of the party")
    refs = ["It is a guide to action that ensures that the military will forever heed Party "
            "commands",
            "It is the guiding principle which guarantees the military forces always being "
            "under the command of the Party",
            "It is the practical guide for the army always to heed the directions of the party"]
    r = meteor(hyp, refs)
    assert round(r.score, 4) == 0.6944 and r.reference_index == 0
    assert meteor("non matching hypothesis", "this is a cat").score == 0.0


def test_modules_good_goods_well():
    r = meteor("Good Goods well", "good good good")
    assert r.alignment == ((0, 2, "exact"), (1, 1, "stem"), (2, 0, "synonym"))
    assert meteor("Goods", "good").alignment == ((0, 0, "stem"),)
    # without the stem module WordNet still matches them: its morphy maps goods -> good
    assert meteor("Goods", "good", stem=False).alignment == ((0, 0, "synonym"),)
    assert meteor("Goods", "good", stem=False, synonyms=False).matches == 0
    assert meteor("well", "good").alignment == ((0, 0, "synonym"),)
    assert meteor("well", "good", synonyms=False).matches == 0
    # NLTK's Porter stemmer lower-cases: without lowercase, case differences match as stems
    assert meteor("Good", "good", lowercase=False).alignment == ((0, 0, "stem"),)
    assert meteor("Good", "good", lowercase=False, stem=False, synonyms=False).matches == 0


@pytest.mark.parametrize("hyp, ref", [("big", "large"), ("movies", "film"), ("happy", "glad"),
                                      ("quickly", "rapidly")])
def test_synonym_match_rules(hyp, ref):
    # NLTK looks WordNet up with Porter stems ("larg", "movi", "happi", "quickli"): no match
    assert meteor(hyp, ref).matches == 0
    for mode in ("nltk", "min_chunks"):
        r = meteor(hyp, ref, mode=mode, synonym_match="synset")
        assert r.alignment == ((0, 0, "synonym"),)
    assert "synonym_match:synset" in r.signature


def test_f_mean_formula():
    # 2 matches, hypothesis 4 words, reference 2 words: P = 1/2, R = 1, alpha = 0.9
    r = meteor("a b c d", "a b", synonyms=False)
    assert r.fmean == pytest.approx(10 * 0.5 * 1 / (1 + 9 * 0.5))
    r = meteor("a b c d", "a b", alpha=0.5, beta=1.0, gamma=1.0, synonyms=False)
    assert r.fmean == pytest.approx(2 / 3) and r.penalty == 0.5 and r.score == pytest.approx(1 / 3)


# --- parity with NLTK ---------------------------------------------------------------------------

def test_parity_with_nltk_on_wmt17(nltk_wordnet, wmt17_pairs):
    from nltk.translate.meteor_score import meteor_score

    assert len(wmt17_pairs) == 1400
    theirs = [meteor_score([r.split()], h.split(), wordnet=nltk_wordnet) for h, r in wmt17_pairs]
    ours = corpus_meteor([h for h, _ in wmt17_pairs], [r for _, r in wmt17_pairs], progress=False)
    assert max(abs(a - b) for a, b in zip(ours.scores, theirs)) <= TOL
    assert ours.score == pytest.approx(sum(theirs) / len(theirs), abs=TOL)


def test_parity_with_nltk_multi_reference_and_parameters(nltk_wordnet, wmt17_pairs):
    """200 hypotheses with 3 references (the reference and the next two hypotheses as
    pseudo-references), with NLTK's defaults and with alpha=0.8, beta=2, gamma=0.3."""
    from nltk.translate.meteor_score import meteor_score

    hyps = [h for h, _ in wmt17_pairs[:202]]
    for params in ({}, dict(alpha=0.8, beta=2.0, gamma=0.3)):
        for i in range(200):
            refs = [wmt17_pairs[i][1], hyps[i + 1], hyps[i + 2]]
            theirs = meteor_score([r.split() for r in refs], hyps[i].split(),
                                  wordnet=nltk_wordnet, **params)
            assert abs(meteor(hyps[i], refs, **params).score - theirs) <= TOL


def test_parity_with_nltk_without_stem_or_synonyms(nltk_wordnet, wmt17_pairs):
    """NLTK with an identity stemmer / a WordNet without synsets = our stem / synonyms off."""
    from nltk.translate.meteor_score import meteor_score

    class Identity:
        def stem(self, word):
            return word

    class NoSynonyms:
        def synsets(self, word):
            return []

    for h, r in wmt17_pairs[::7]:
        assert abs(meteor(h, r, stem=False).score - meteor_score(
            [r.split()], h.split(), stemmer=Identity(), wordnet=nltk_wordnet)) <= TOL
        assert abs(meteor(h, r, synonyms=False).score - meteor_score(
            [r.split()], h.split(), wordnet=NoSynonyms())) <= TOL


def test_wordnet_synonyms_match_nltk(nltk_wordnet, wmt17_pairs):
    """Lemma names of ``synsets(word)``: every word and stem of 300 WMT17 references."""
    words = {w for _, r in wmt17_pairs[:300] for w in r.split()}
    words |= {porter_stem(w) for w in words}
    wn = load_wordnet()
    for word in sorted(words):
        expected = {lemma.name() for s in nltk_wordnet.synsets(word) for lemma in s.lemmas()}
        assert wn.synonyms(word) == expected, word


def test_porter_stem_matches_nltk(wmt17_pairs):
    from nltk.stem.porter import PorterStemmer

    stemmer = PorterStemmer()
    for word in {w for h, r in wmt17_pairs for w in (h + " " + r).split()}:
        assert porter_stem(word) == stemmer.stem(word)


# --- the min-chunks alignment -------------------------------------------------------------------

def brute_force_min_chunks(hyp: list[str], ref: list[str]) -> tuple[int, int]:
    """Exact matches only: try every maximum alignment (permutations within a word)."""
    pairs_by_word = []
    for word in set(hyp) & set(ref):
        hi = [i for i, w in enumerate(hyp) if w == word]
        rj = [j for j, w in enumerate(ref) if w == word]
        k = min(len(hi), len(rj))
        pairs_by_word.append([list(zip(hs, rs)) for hs in itertools.permutations(hi, k)
                              for rs in itertools.combinations(rj, k)])
    best = None
    for choice in itertools.product(*pairs_by_word):
        alignment = sorted(p for part in choice for p in part)
        chunks = 1 + sum(1 for (i, j), (i2, j2) in zip(alignment, alignment[1:])
                         if not (i2 == i + 1 and j2 == j + 1))
        best = chunks if best is None else min(best, chunks)
    matches = sum(min(c, Counter(ref)[w]) for w, c in Counter(hyp).items())
    return matches, best


small_sentence = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=6)


@settings(max_examples=120, deadline=None)
@given(small_sentence, small_sentence)
def test_min_chunks_is_optimal(hyp, ref):
    matches, chunks = brute_force_min_chunks(hyp, ref)
    r = meteor(" ".join(hyp), " ".join(ref), mode="min_chunks", stem=False, synonyms=False)
    assert r.matches == matches
    if matches:
        assert r.chunks == chunks
        greedy = meteor(" ".join(hyp), " ".join(ref), stem=False, synonyms=False)
        assert greedy.matches == matches and greedy.chunks >= chunks
        assert r.score >= greedy.score


def test_min_chunks_never_worse_on_wmt17(wmt17_pairs):
    sample = wmt17_pairs[:1400:35]  # 40 pairs
    for h, r in sample:
        fewest, greedy = meteor(h, r, mode="min_chunks"), meteor(h, r)
        assert fewest.matches >= greedy.matches
        if fewest.matches == greedy.matches:
            assert fewest.chunks <= greedy.chunks
        stages = Counter(s for *_, s in fewest.alignment)
        greedy_stages = Counter(s for *_, s in greedy.alignment)
        assert stages["exact"] == greedy_stages["exact"]  # staged maximum: exact stage first
        assert stages["stem"] == greedy_stages["stem"]


# --- properties ---------------------------------------------------------------------------------

sentence = st.lists(st.sampled_from(["the", "cat", "cats", "sat", "on", "mat", "good", "well"]),
                    min_size=1, max_size=8).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(sentence, sentence, st.sampled_from(["nltk", "min_chunks"]))
def test_bounds(h, r, mode):
    result = meteor(h, r, mode=mode)
    assert 0.0 <= result.score <= result.fmean <= 1.0
    assert 0 <= result.chunks <= result.matches <= min(result.hypothesis_length,
                                                       result.reference_length)


@settings(max_examples=50, deadline=None)
@given(sentence)
def test_identical_texts(s):
    r = meteor(s, s)
    n = len(s.split())
    assert r.fmean == 1.0 and r.chunks == 1
    assert r.score == pytest.approx(1 - 0.5 / n**3)


def test_corpus_meteor_is_the_mean():
    hyps = [CAT, CAT_REORDERED, "a dog"]
    refs = [CAT, CAT, ["the dog barked", "a dog"]]
    result = corpus_meteor(hyps, refs, progress=False)
    assert result.scores == tuple(meteor(h, r).score for h, r in zip(hyps, refs))
    assert result.score == pytest.approx(sum(result.scores) / 3)
    assert "meteor|mode:nltk" in result.signature


def test_empty_hypothesis_scores_zero():
    assert meteor("", "a b").score == 0.0
    assert corpus_meteor(["", "a"], ["a", "a"], progress=False).scores[0] == 0.0


def test_tokenizers():
    assert meteor("the cat.", "the cat .").matches == 1  # white space: "cat." != "cat"
    assert meteor("the cat.", "the cat .", tokenize="13a").matches == 3
    assert meteor("the-cat", "the cat", tokenize=lambda t: t.replace("-", " ").split()).matches == 2


# --- WordNet ------------------------------------------------------------------------------------

def test_missing_wordnet_error(tmp_path):
    with pytest.raises(WordNetNotFoundError, match="apt-get install wordnet-base"):
        find_wordnet(tmp_path)
    with pytest.raises(WordNetNotFoundError, match="nltk.download"):
        meteor("a", "a", wordnet=tmp_path)
    assert meteor("cats", "cat", synonyms=False, wordnet=tmp_path).matches == 1  # no WordNet needed


def test_wordnet_from_nltk_zip(tmp_path):
    import zipfile

    source = find_wordnet()
    archive = tmp_path / "wordnet.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        for name in ("data", "index"):
            for pos in ("noun", "verb", "adj", "adv"):
                z.write(source / f"{name}.{pos}", f"wordnet/{name}.{pos}")
        for pos in ("noun", "verb", "adj", "adv"):
            z.write(source / f"{pos}.exc", f"wordnet/{pos}.exc")
    wn = load_wordnet(archive)
    assert wn.version == "3.0" and wn.synonyms("good") == load_wordnet().synonyms("good")


def test_wordnet_bad_arguments():
    wn = load_wordnet()
    with pytest.raises(ValueError, match="pos must be one of"):
        wn.morphy("dogs", "x")
    with pytest.raises(ValueError, match="no synset at offset 3"):
        wn.lemma_names("n", 3)


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, message", [
    (dict(alpha=1.5), ValueError, r"alpha must be in \[0, 1\]"),
    (dict(gamma=-0.1), ValueError, r"gamma must be in \[0, 1\]"),
    (dict(beta=-1), ValueError, "beta must be >= 0.0, got -1.0"),
    (dict(beta="x"), TypeError, "beta must be a number"),
    (dict(mode="greedy"), ValueError, "mode must be one of"),
    (dict(synonym_match="lemma"), ValueError, "synonym_match must be one of"),
    (dict(stem=1), TypeError, "stem must be True or False"),
    (dict(wordnet=42), TypeError, "wordnet must be a WordNet"),
    (dict(tokenize=3), TypeError, "tokenize must be"),
    (dict(tokenize="moses"), ValueError, "tokenize must be one of 'whitespace', '13a'"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        meteor("a b", "a b", **kwargs)


def test_bad_texts():
    with pytest.raises(TypeError, match="hypothesis must be a str"):
        meteor(["a", "b"], "a b")
    with pytest.raises(ValueError, match="empty list"):
        meteor("a", [])
    with pytest.raises(ValueError, match=r"references\[0\] has no tokens"):
        meteor("a", ["  "])
    with pytest.raises(TypeError, match=r"references\[0\]\[1\] must be a str"):
        meteor("a", ["a", 2])
    with pytest.raises(ValueError, match="2 entries but there are 1 hypotheses"):
        corpus_meteor(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="not a single str"):
        corpus_meteor("a b", ["a b"])
    with pytest.raises(ValueError, match=r"references\[1\]\[0\] has no tokens"):
        corpus_meteor(["a", "b"], ["a", ""], progress=False)


# --- Result protocol and renamed keywords ------------------------------------------------------------


def test_results_follow_the_protocol():
    from markeval._result import MetricResult

    one = meteor("the cat sat", "the cat sat", synonyms=False)
    assert isinstance(one, MetricResult) and one.item_scores == (one.score,)
    corpus = corpus_meteor(["the cat", "a dog"], ["the cat", "a cat"], synonyms=False,
                           progress=False)
    assert isinstance(corpus, MetricResult) and corpus.item_scores == corpus.scores


def test_corpus_meteor_shows_progress_by_default(capsys):
    corpus_meteor(["the cat"], ["the cat"], synonyms=False)
    assert "METEOR" in capsys.readouterr().err
