"""The public names promised in DESIGN.md ("API contract") that this release implements."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import markeval
from markeval import encoders

CONTRACT = [
    "perplexity", "NGramLM", "cross_entropy", "bleu", "sentence_bleu", "gleu", "sentence_gleu",
    "meteor", "corpus_meteor", "rouge", "fid", "prd", "improved_precision_recall",
    "me_petersen", "me_schnabel", "me_capture", "mark_evaluate",
]


@pytest.mark.parametrize("name", CONTRACT)
def test_contract_name_is_public(name):
    assert name in markeval.__all__, f"markeval.{name} is not exported"
    assert callable(getattr(markeval, name))


def test_default_model_is_in_the_encoders_namespace():
    assert callable(encoders.default_model)


def test_everything_exported_exists():
    for name in markeval.__all__:
        assert hasattr(markeval, name), name


# Parts of a larger result that carries the signature for them; the protocol itself.
COMPONENTS = {"RougeScore", "RougeTypeResult", "MetricResult"}
RESULTS = [n for n in markeval.__all__
           if n.endswith(("Score", "Scores", "Result", "Estimate")) and n not in COMPONENTS]


@pytest.mark.parametrize("name", RESULTS)
def test_result_objects_are_frozen_with_a_signature(name):
    cls = getattr(markeval, name)
    assert inspect.isclass(cls) and dataclasses.is_dataclass(cls), f"{name} is not a dataclass"
    assert cls.__dataclass_params__.frozen, f"{name} is not frozen"
    fields = {f.name for f in dataclasses.fields(cls)}
    assert "signature" in fields, f"{name} has no signature field"


def test_importing_markeval_does_not_import_torch():
    """The lexical metrics must stay light: torch loads only when a model is used."""
    import subprocess
    import sys

    code = "import sys, markeval; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", RESULTS)
def test_result_classes_have_the_shared_attributes(name):
    """markeval._result.MetricResult: score, higher_is_better, signature, item_scores."""
    cls = getattr(markeval, name)
    fields = {f.name for f in dataclasses.fields(cls)}
    assert isinstance(cls.higher_is_better, bool), f"{name}.higher_is_better is not a bool"
    for attribute in ("score", "signature", "item_scores"):
        assert attribute in fields or hasattr(cls, attribute), f"{name} has no {attribute}"
