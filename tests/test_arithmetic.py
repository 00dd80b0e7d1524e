"""markeval.geometry.Arithmetic: the arithmetic settings checked once, in one object."""

import dataclasses

import numpy as np
import pytest

from markeval.distribution.ipr import realism_scores
from markeval.geometry import (Arithmetic, IndexSettings, knn_balls, mutual_balls,
                               sq_distance_blocks)
from markeval.population.mark_evaluate import mark_evaluate


def test_frozen_and_hashable():
    a = Arithmetic(dtype="float64", block_size=(8, 16), neighbours=IndexSettings(probes=4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.dtype = "float32"
    assert a == Arithmetic(dtype="float64", block_size=(8, 16),
                           neighbours=IndexSettings(probes=4))
    assert len({a, Arithmetic(dtype="float64", block_size=(8, 16),
                              neighbours=IndexSettings(probes=4)), Arithmetic()}) == 2


@pytest.mark.parametrize("field, value, error, message", [
    ("backend", "faiss", ValueError, "backend must be one of"),
    ("dtype", "float16", ValueError, "dtype must be one of"),
    ("device", "cuda", ValueError, "backend='numpy' runs on the CPU only, got device='cuda'"),
    ("block_size", 0, ValueError, "block_size must be a positive int, got 0"),
    ("block_size", (1, 2, 3), ValueError, "block_size must be an int or a pair"),
    ("progress", "yes", TypeError, "progress must be True or False, got str: 'yes'"),
    ("neighbours", "fast", ValueError, "neighbours must be one of .* got 'fast'"),
    ("n_jobs", 0, ValueError, "n_jobs must be a positive int, got 0"),
])
def test_a_bad_value_is_refused_by_name(field, value, error, message):
    with pytest.raises(error, match=message):
        Arithmetic(**{field: value})
    # A public function refuses it the same way, before any work.
    with pytest.raises(error, match=message):
        knn_balls(np.zeros((3, 2)), 1, **{field: value})


def test_the_index_path_runs_in_this_process():
    for neighbours in ("index", IndexSettings()):
        with pytest.raises(ValueError, match="n_jobs=2 runs the exact path's tiles as tasks"):
            Arithmetic(neighbours=neighbours, n_jobs=2)
        with pytest.raises(ValueError, match="n_jobs=None runs the exact path's tiles"):
            Arithmetic(neighbours=neighbours, n_jobs=None)
    assert Arithmetic(neighbours="index").index == IndexSettings()
    assert Arithmetic(n_jobs=None).index is None


def test_loose_settings_and_the_object_give_the_same_results():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(60, 4)), rng.normal(size=(50, 4)) + 0.2
    settings = dict(dtype="float64", block_size=(7, 11))
    loose, held = (mutual_balls(a, b, 3, **settings),
                   mutual_balls(a, b, 3, arithmetic=Arithmetic(**settings)))
    for got, want in ((held.balls_a, loose.balls_a), (held.balls_b, loose.balls_b)):
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.sq_distances, want.sq_distances)
    np.testing.assert_array_equal(held.a_in_b.balls_per_point, loose.a_in_b.balls_per_point)
    np.testing.assert_array_equal(held.b_in_a.points_per_ball, loose.b_in_a.points_per_ball)
    # mark_evaluate's own default progress=True is the loose default, not Arithmetic's False.
    assert (mark_evaluate(a, b, 2, progress=False, n_jobs=2)
            == mark_evaluate(a, b, 2, arithmetic=Arithmetic(n_jobs=2)))
    np.testing.assert_array_equal(
        realism_scores(a, b, 2, progress=False, block_size=5),
        realism_scores(a, b, 2, arithmetic=Arithmetic(dtype="float64", block_size=5)))


def test_the_object_and_loose_settings_together_are_refused():
    x = np.zeros((3, 2))
    with pytest.raises(TypeError, match=r"knn_balls\(\) takes the arithmetic settings loosely "
                                        r"or as arithmetic=, not both; got arithmetic and "
                                        r"dtype"):
        knn_balls(x, 1, dtype="float32", arithmetic=Arithmetic())
    with pytest.raises(TypeError, match="arithmetic must be an Arithmetic, got dict"):
        knn_balls(x, 1, arithmetic={"dtype": "float64"})
    # Validated at the call, though the blocks come later.
    with pytest.raises(ValueError, match="dtype must be one of"):
        sq_distance_blocks(x, x, dtype="float16")
