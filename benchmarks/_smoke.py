"""What the benchmark scripts share for ``--smoke`` (not a script: ``tests/test_benchmarks.py``
runs every script here with ``--smoke``, its smallest workload, so that none can rot unseen).

A smoke run must leave the committed results alone, yet its writing code should run too: it
writes into :func:`scratch_copy` of the file a real run would write.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch_copy(path: Path) -> Path:
    """Where a smoke run writes instead of ``path``: a copy of it (when it exists) in a
    temporary folder removed when the script exits, so that appending to or merging with the
    committed rows runs as in a real run."""
    folder = Path(tempfile.mkdtemp(prefix="markeval-smoke-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    if path.exists():
        shutil.copy2(path, folder / path.name)
    return folder / path.name
