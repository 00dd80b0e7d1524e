"""markeval.semantic.idf: inverse document frequency of word pieces.

Hand-computed values on a three-document corpus; parity with bert-score's
``get_idf_dict`` (keyed by token id; ours by piece string) on WMT17 references, exactly
(both are ``math.log`` of the same integers).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from markeval.encoders import default_model, token_embeddings
from markeval.semantic.idf import IDFWeights, idf_weights, uniform_weights
from conftest import needs_wmt17

CORPUS = ["the cat sat", "the dog sat", "the cat ran"]


def test_hand_computed():
    w = idf_weights(CORPUS)
    assert w.n_documents == 3
    assert w.default == pytest.approx(math.log(4))
    # df: the 3, cat 2, sat 2, dog 1, ran 1 -> log(4/(df+1))
    expected = {"the": 0.0, "cat": math.log(4 / 3), "sat": math.log(4 / 3),
                "dog": math.log(2), "ran": math.log(2)}
    assert dict(w.weights) == pytest.approx(expected)
    assert w.model == default_model().name


def test_document_frequency_counts_a_piece_once_per_document():
    w = idf_weights(["cat cat cat", "dog"])
    assert w.weights["cat"] == pytest.approx(math.log(3 / 2))


def test_duplicate_documents_count_separately():
    w = idf_weights(["cat", "cat", "dog"])
    assert w.n_documents == 3
    assert w.weights["cat"] == pytest.approx(math.log(4 / 3))


def test_special_tokens_are_not_weighted():
    w = idf_weights(CORPUS)
    tok = default_model().tokenizer
    assert tok.cls_token not in w.weights and tok.sep_token not in w.weights


def test_word_pieces_are_keys():
    w = idf_weights(["Tokenization matters."])
    assert set(w.weights) == {"token", "##ization", "matters", "."}


def test_weigh_special_zero_unseen_default():
    w = idf_weights(CORPUS)
    [emb] = token_embeddings(["the cat flew"], layers=[-1], progress=False)
    assert emb.tokens == ("[CLS]", "the", "cat", "flew", "[SEP]")
    got = w.weigh(emb)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [0, 0, math.log(4 / 3), math.log(4), 0])


def test_uniform_weights():
    [emb] = token_embeddings(["the cat"], layers=[-1], progress=False)
    assert uniform_weights(emb).tolist() == [0.0, 1.0, 1.0, 0.0]
    [empty] = token_embeddings([""], layers=[-1], progress=False)
    assert uniform_weights(empty).tolist() == [0.0, 0.0]


def test_picklable():
    w = idf_weights(CORPUS)
    back = pickle.loads(pickle.dumps(w))
    assert isinstance(back, IDFWeights) and dict(back.weights) == dict(w.weights)


@pytest.mark.parametrize("bad, err, match", [
    ("the cat", TypeError, "not a single str"),
    ([], ValueError, "corpus is empty"),
    (["ok", 3], TypeError, r"corpus\[1\] must be a str"),
])
def test_bad_corpus(bad, err, match):
    with pytest.raises(err, match=match):
        idf_weights(bad)


@needs_wmt17
def test_parity_with_bert_score(wmt17):
    from bert_score.utils import get_idf_dict

    refs = wmt17["de-en"][0][:500]
    tok = default_model().tokenizer
    theirs = get_idf_dict(refs, tok, nthreads=0)
    ours = idf_weights(refs)
    special = {tok.cls_token_id, tok.sep_token_id}
    expected = {tok.convert_ids_to_tokens(i): v for i, v in theirs.items() if i not in special}
    assert dict(ours.weights) == expected
    assert ours.default == theirs[-1]  # a never-seen id gets the defaultdict's log(M + 1)
