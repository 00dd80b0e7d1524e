"""When a computed float counts as zero or a computed vector as constant.

Sums, means and matrix products are rounded in an order that depends on the machine (SIMD
width, BLAS build, thread count), so a value that is 0 in exact arithmetic can come out as
1e-17 on one machine and 0.0 on another. A branch on ``== 0`` would then take a different
path per machine. These helpers decide such branches relative to the size of the numbers
involved, at ``RTOL = 1e-12``: about 10⁴ times the rounding of a float64 sum of a few
thousand terms, and far below any difference that means something.
"""

from __future__ import annotations

import numpy as np

RTOL = 1e-12


def negligible(value: float, scale: float) -> bool:
    """True if ``|value|`` is rounding noise next to numbers of size ``|scale|``."""
    return abs(float(value)) <= RTOL * abs(float(scale))


def constant(values) -> bool:
    """True if ``values`` differ only by rounding noise (their spread is negligible).

    Relative to the values themselves, with no absolute floor: data that is small but not
    constant (say 1e-300 apart from 0) still has an order.
    """
    values = np.asarray(values, dtype=np.float64)
    return negligible(np.ptp(values), np.abs(values).max())
