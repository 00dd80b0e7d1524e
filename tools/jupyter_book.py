"""The one way the book tooling runs ``jupyter-book build``.

Every build is nit-picky (``-n``), keeps going past a warning so that the log lists them all
(``--keep-going``) and, when strict, fails on any warning (``-W``), with the jupyter-book of
the running interpreter's environment.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def build(source: Path, *options: str, strict: bool = True, what: str = "the book",
          quiet: bool = False, capture: bool = True) -> str:
    """``jupyter-book build SOURCE OPTIONS -n --keep-going [-W]``, run in ``source``.

    Returns the log (empty when ``capture`` is False: the build then prints as it goes, for
    long executed builds). Raises ``RuntimeError`` naming ``what`` when the build fails.
    """
    source = Path(source).resolve()
    local = Path(sys.executable).parent / "jupyter-book"
    command = [str(local if local.exists() else "jupyter-book"), "build", str(source),
               *options, "-n", "--keep-going"] + (["-W"] if strict else []) + (["-q"] if quiet else [])
    proc = subprocess.run(command, cwd=source, capture_output=capture, text=True)
    log = (proc.stdout + proc.stderr) if capture else ""
    if proc.returncode != 0:
        raise RuntimeError(f"jupyter-book build of {what} failed (exit status "
                           f"{proc.returncode})" + (":\n" + log[-6000:] if log else ""))
    return log
