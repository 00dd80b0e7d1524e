"""CUDA against the CPU: the exact geometry, Mark-Evaluate, the encoders and the metrics on them.

Every test here needs a CUDA device; on a machine without one the whole module is collected
and skipped. Run it where torch sees a GPU (Colab's GPU runtime, a lent machine):
``pytest -p no:cacheprovider tests/test_cuda.py -rs``.

Tolerances, argued where each is used:

* **0 (bit-identical)** for k-NN indices, squared radii, ball counts and the Mark-Evaluate
  estimators built on them. The GPU only screens pairs with the matmul identity; every pair
  whose side of a radius the screen cannot prove is recomputed on the CPU as a float64 direct
  sum, and radii are always that direct sum (``markeval.geometry``, "Exactness"). So both
  backends make the same decisions from the same float64 numbers.
* **1e-5 per coordinate** for embeddings, the tolerance tests/test_encoders.py uses wherever
  two float32 computations of the same vectors meet (batch sizes, sentence-transformers).
* **1e-4** for BERTScore and MoverScore: see :data:`SCORE_ATOL`.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from markeval import geometry
from markeval.population.mark_evaluate import (mark_evaluate, me_capture, me_petersen,
                                               me_schnabel)

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="needs a CUDA device (torch.cuda.is_available() is False)")

#: Per coordinate, CUDA against CPU embeddings (float32 forward passes of the same weights).
EMBEDDING_ATOL = 1e-5
#: BERTScore and MoverScore are cosines and transport costs of those vectors, Lipschitz in
#: them; between two CPU float32 runs that differ only in kernels and summation order they
#: agree within 1e-5 (tests/test_bertscore.py against bert-score, tests/test_moverscore.py
#: against the moverscore package: 9e-7 to 1.3e-6 observed). CUDA kernels reorder sums the
#: same way, so ten times that is room enough, and still far below the third decimal in
#: which the book reports scores.
SCORE_ATOL = 1e-4


def clouds(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two sets of unit vectors like sentence embeddings (float32, 384-d), slightly apart."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(300, 384)).astype(np.float32)
    b = (rng.normal(size=(260, 384)) + 0.3 * rng.normal(size=384)).astype(np.float32)
    return (a / np.linalg.norm(a, axis=1, keepdims=True),
            b / np.linalg.norm(b, axis=1, keepdims=True))


def lattice(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Small-integer points: duplicates and exact distance ties everywhere, where a screen's
    rounding would flip ``distance <= radius`` if the recheck did not catch it."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 3, size=(200, 6)).astype(np.float64),
            rng.integers(0, 3, size=(180, 6)).astype(np.float64))


@pytest.fixture(params=["highest", "high", "medium"])
def matmul_precision(request):
    """float32 matmuls as IEEE float32, TF32 or bfloat16: the screen's margin must cover each."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(request.param)
    yield request.param
    torch.set_float32_matmul_precision(before)


# --------------------------------------------------------------------------- geometry


@pytest.mark.parametrize("data", [clouds, lattice])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", [1, 4])
def test_exact_balls_and_counts_on_cuda_equal_numpy(data, dtype, k, matmul_precision):
    a, b = data()
    # block_size 64: several tiles per set, so the merges across tiles are compared too.
    cpu = geometry.mutual_balls(a, b, k, dtype=dtype, block_size=64)
    gpu = geometry.mutual_balls(a, b, k, backend="torch", device="cuda", dtype=dtype,
                                block_size=64)
    for side in ("balls_a", "balls_b"):
        want, got = getattr(cpu, side), getattr(gpu, side)
        np.testing.assert_array_equal(got.indices, want.indices)
        # Tolerance 0: radii are the float64 direct sum of the same neighbour on both paths.
        np.testing.assert_array_equal(got.sq_radii, want.sq_radii)
    for side in ("a_in_b", "b_in_a"):
        want, got = getattr(cpu, side), getattr(gpu, side)
        np.testing.assert_array_equal(got.balls_per_point, want.balls_per_point)
        np.testing.assert_array_equal(got.points_per_ball, want.points_per_ball)


def test_knn_balls_on_cuda_equal_the_brute_force_matrix():
    a, _ = lattice()
    balls = geometry.knn_balls(a, 3, backend="torch", device="cuda")
    full = geometry.pairwise_sq_distances(a)
    np.fill_diagonal(full, np.inf)  # self is excluded by index
    # A stable sort breaks ties by lower index, the convention knn_balls documents.
    order = np.argsort(full, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(balls.indices, order)
    np.testing.assert_array_equal(balls.sq_distances, np.take_along_axis(full, order, axis=1))


# --------------------------------------------------------------------------- Mark-Evaluate


@pytest.mark.parametrize("data", [clouds, lattice])
def test_mark_evaluate_estimators_on_cuda_equal_numpy(data):
    a, b = data()
    on_gpu = {"backend": "torch", "device": "cuda", "progress": False}
    # Tolerance 0: the estimators are functions of the ball counts alone, which are exact.
    assert me_petersen(a, b, 3, **on_gpu) == me_petersen(a, b, 3, progress=False)
    for estimator in ("printed", "census"):
        assert (me_schnabel(a, b, 3, estimator=estimator, **on_gpu)
                == me_schnabel(a, b, 3, estimator=estimator, progress=False))
        assert (me_schnabel(b, a, 3, estimator=estimator, **on_gpu)
                == me_schnabel(b, a, 3, estimator=estimator, progress=False))
    assert me_capture(a, b, 3, **on_gpu) == me_capture(a, b, 3, progress=False)
    assert mark_evaluate(a, b, 3, **on_gpu) == mark_evaluate(a, b, 3, progress=False)


# --------------------------------------------------------------------------- encoders


@pytest.fixture(scope="module")
def texts() -> list[str]:
    from markeval.datasets import bbc_sentences

    return list(bbc_sentences(unique=True)["sentence"][:32]) + [""]


@pytest.fixture(scope="module")
def encoders():
    from markeval.encoders import default_model

    return default_model("cpu"), default_model("cuda")


def test_auto_is_cuda_here(encoders):
    from markeval.encoders import default_model, memoize, resolve_encoder

    _, gpu = encoders
    assert default_model() is gpu and default_model("auto") is gpu
    assert resolve_encoder(None).device == "cuda" and memoize().device == "cuda"
    assert "device='cuda'" in repr(resolve_encoder(None))
    # An encoder object keeps its own device unless a call names another.
    cpu = default_model("cpu")
    assert resolve_encoder(cpu) is cpu and cpu.device == "cpu"


def test_embeddings_on_cuda_match_cpu(encoders, texts):
    from markeval.encoders import sentence_embeddings, token_embeddings

    cpu, gpu = encoders
    np.testing.assert_allclose(sentence_embeddings(texts, gpu, progress=False),
                               sentence_embeddings(texts, cpu, progress=False),
                               atol=EMBEDDING_ATOL, rtol=0)
    # The call's device overrides the encoder's: the CPU encoder, run on the GPU.
    np.testing.assert_allclose(sentence_embeddings(texts, cpu, device="cuda", progress=False),
                               sentence_embeddings(texts, cpu, progress=False),
                               atol=EMBEDDING_ATOL, rtol=0)
    layers = [1, -1]
    for a, b in zip(token_embeddings(texts, cpu, layers=layers, progress=False),
                    token_embeddings(texts, gpu, layers=layers, progress=False)):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(b.vectors, a.vectors, atol=EMBEDDING_ATOL, rtol=0)


def test_bertscore_and_moverscore_on_cuda_match_cpu(encoders, texts):
    from markeval import bertscore, moverscore

    cpu, gpu = encoders
    hyps, refs = texts[0:16], texts[16:32]
    a, b = (bertscore(hyps, refs, model=m, progress=False) for m in (cpu, gpu))
    for field in ("sentence_precision", "sentence_recall", "sentence_f1"):
        np.testing.assert_allclose(getattr(b, field), getattr(a, field), atol=SCORE_ATOL, rtol=0)
    assert a.signature == b.signature  # the device is not a setting of the score
    a, b = (moverscore(hyps, refs, model=m, progress=False) for m in (cpu, gpu))
    np.testing.assert_allclose(b.sentence_scores, a.sentence_scores, atol=SCORE_ATOL, rtol=0)
