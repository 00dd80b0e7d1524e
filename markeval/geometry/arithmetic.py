"""The arithmetic settings of :mod:`markeval.geometry` as one checked object.

Seven settings say how the geometry functions compute (``backend``, ``device``, ``dtype``,
``block_size``, ``progress``, ``neighbours``, ``n_jobs``); none changes a result. The public
functions take them loosely, as keywords, or as one :class:`Arithmetic` (``arithmetic=``, see
:func:`takes_arithmetic`); either way they are checked once, when the object is built, and the
object is what goes down to the code that computes.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, fields

from markeval._checks import check_bool, check_int
from markeval.geometry._kernels import make_ops, tile_shape
from markeval.geometry.index import IndexSettings
from markeval.geometry.tasks import TASK_TILE

__all__ = ["NEIGHBOURS", "Arithmetic", "check_neighbours", "takes_arithmetic"]

#: The two ways to find neighbours: every distance, or an index's candidates.
NEIGHBOURS = ("exact", "index")


def check_neighbours(neighbours) -> IndexSettings | None:
    """A ``neighbours`` argument checked: None for the exact path, the index settings otherwise.

    Examples
    --------
    >>> check_neighbours("exact") is None, check_neighbours("index").probes_for(768)
    (True, 128)
    """
    if isinstance(neighbours, IndexSettings):
        return neighbours
    if isinstance(neighbours, str) and neighbours in NEIGHBOURS:
        return None if neighbours == "exact" else IndexSettings()
    raise ValueError(f"neighbours must be one of {NEIGHBOURS} or an IndexSettings, "
                     f"got {neighbours!r}")


@dataclass(frozen=True)
class Arithmetic:
    """How :mod:`markeval.geometry` computes: backend, dtype, tiles, neighbours and tasks.

    None of these settings changes a result (the ball decisions are exact either way, see
    :mod:`markeval.geometry`); they change speed, memory and where the work runs. Each is
    checked when the object is built, so a wrong value fails before any work, naming the
    argument. Frozen and hashable: one object can be kept, compared and passed around.

    Parameters
    ----------
    backend : {"numpy", "torch"}, default "numpy"
    device : str, optional
        Torch device (``"cuda"``, ...); only ``None``/``"cpu"`` for NumPy.
    dtype : {"float32", "float64"}, default "float32"
        Arithmetic of the distance tiles.
    block_size : int or (int, int), optional
        Rows, or ``(rows, columns)``, per tile.
    progress : bool, default False
        Show a tqdm bar over tiles (or the index path's steps).
    neighbours : {"exact", "index"} or IndexSettings, default "exact"
        Every distance, or a neighbour index's candidates (:mod:`markeval.geometry.index`).
    n_jobs : int or None, default 1
        1: in this process; otherwise the exact path's tiles run as joblib tasks (None: all
        cores or workers). The index path runs in this process: it needs ``n_jobs=1``.

    See :func:`markeval.geometry.knn_balls` for each setting at length. The defaults are those
    of the ball functions; a function with other defaults (``sq_distance_blocks``'s float64,
    ``mark_evaluate``'s progress bars) keeps them when its settings come loosely.

    Examples
    --------
    >>> import numpy as np
    >>> from markeval.geometry import knn_balls
    >>> exact64 = Arithmetic(dtype="float64")
    >>> exact64  # doctest: +NORMALIZE_WHITESPACE
    Arithmetic(backend='numpy', device=None, dtype='float64', block_size=None, progress=False,
               neighbours='exact', n_jobs=1)
    >>> balls = knn_balls(np.array([[0.0], [1.0], [3.0]]), 1, arithmetic=exact64)
    >>> balls.sq_radii.tolist()
    [1.0, 1.0, 4.0]
    >>> Arithmetic(neighbours="index", n_jobs=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: n_jobs=2 runs the exact path's tiles as tasks; neighbours='index' runs in ...
    """

    backend: str = "numpy"
    device: str | None = None
    dtype: str = "float32"
    block_size: int | tuple[int, int] | None = None
    progress: bool = False
    neighbours: str | IndexSettings = "exact"
    n_jobs: int | None = 1

    def __post_init__(self):
        if self.n_jobs is not None:
            check_int(self.n_jobs, "n_jobs", minimum=1)
        if self.index is not None and self.n_jobs != 1:
            raise ValueError(f"n_jobs={self.n_jobs} runs the exact path's tiles as tasks; "
                             "neighbours='index' runs in this process: leave n_jobs=1")
        self.ops()  # refuses a backend, device or dtype it cannot build
        tile_shape(self.block_size, 1, 1)
        check_bool(self.progress, "progress")

    @functools.cached_property
    def index(self) -> IndexSettings | None:
        """The index path's settings, or None for the exact path (read once, kept)."""
        return check_neighbours(self.neighbours)

    @property
    def task_tile(self) -> tuple[int, int]:
        """Rows × columns of one task's tile when ``n_jobs`` is not 1."""
        if self.block_size is None:
            return TASK_TILE
        if isinstance(self.block_size, tuple):
            return self.block_size
        return self.block_size, self.block_size

    def ops(self):
        """The tile arithmetic: ``backend`` on ``device`` in ``dtype``."""
        return make_ops(self.backend, self.device, self.dtype)


_FIELDS = tuple(f.name for f in fields(Arithmetic))


def takes_arithmetic(fn):
    """Decorate ``fn`` to take its arithmetic settings loosely or as one ``arithmetic=``.

    ``fn`` declares, as keyword-only parameters, those of :class:`Arithmetic`'s fields it
    offers, at its own defaults, and a parameter ``arithmetic``. Those parameters are its
    signature and defaults: ``fn`` is called with them at their defaults and reads only
    ``arithmetic``, built once from the loose values (the others at :class:`Arithmetic`'s
    defaults) or given. Both at once are refused: a loose value equal to its default could not
    be told from none.
    """
    params = inspect.signature(fn).parameters
    defaults = {name: params[name].default for name in _FIELDS if name in params}

    @functools.wraps(fn)
    def wrapper(*args, arithmetic=None, **kwargs):
        loose = {name: kwargs.pop(name) for name in defaults if name in kwargs}
        if arithmetic is None:
            arithmetic = Arithmetic(**{**defaults, **loose})
        elif not isinstance(arithmetic, Arithmetic):
            raise TypeError(f"arithmetic must be an Arithmetic, got {type(arithmetic).__name__}")
        elif loose:
            raise TypeError(f"{fn.__name__}() takes the arithmetic settings loosely or as "
                            f"arithmetic=, not both; got arithmetic and {', '.join(loose)}")
        return fn(*args, arithmetic=arithmetic, **kwargs)

    return wrapper
