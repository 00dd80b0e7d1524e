"""The released package: markeval's sdist and wheel, built and checked as the release workflow
does (``.github/workflows/release.yml``; RELEASING.md has the steps).

``python -m tools.distributions OUTDIR`` builds both from a copy of what the package is made
of (so that the build leaves no ``build/`` or ``*.egg-info`` in the working tree), with the
pinned build tools of this environment (``--no-isolation``: no download of setuptools), and
runs ``twine check --strict`` on them. ``tests/test_package.py`` runs it, and
``tests/test_colab_path.py`` installs the wheel it builds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: What the sdist is made of: pyproject.toml's package and its data, and what it names.
SOURCES = ("markeval", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in")


def build(outdir: Path) -> tuple[Path, Path]:
    """Build the sdist and the wheel into ``outdir``; returns ``(sdist, wheel)``."""
    outdir = Path(outdir)
    source = outdir / "source"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                    str(outdir / "dist"), str(source)], check=True, capture_output=True)
    (sdist,) = (outdir / "dist").glob("markeval-*.tar.gz")
    (wheel,) = (outdir / "dist").glob("markeval-*.whl")
    return sdist, wheel


def check(*paths: Path) -> str:
    """``twine check --strict``: the metadata and the README render as PyPI will show them.
    Raises :class:`subprocess.CalledProcessError` (with twine's report) when they do not."""
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, paths)],
                          check=True, capture_output=True, text=True)
    return done.stdout


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.distributions",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    args = parser.parse_args(argv)
    paths = build(args.outdir)
    print(check(*paths), end="")
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
