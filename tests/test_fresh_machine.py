"""A fresh machine: ``make install`` gets its data and its torch with nothing to know.

**Data.** The repository's files are copied into a folder with no ``shared/data`` beside it or
above it, and the step of ``make install`` that provides WMT17 and TAC (``make data``) runs
there with an empty cache, against a local HTTP server laid out as the public sources' host
(``MARKEVAL_DATA_MIRROR``, the documented setting for a mirror; without it the step downloads
from the sources themselves). The copy's own ``markeval`` package is the one imported, so that
no ``shared/data`` near this checkout is found either. The project's environment is reused
(``-o``: the install step itself is not run again).

**torch.** The install step runs with a stand-in environment that records pip's commands:
torch comes from PyTorch's CPU index where it answers, and from pip's own configuration where it
does not (the project's machine reaches only the package registries) or ``TORCH_INDEX=`` asks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, needs_tac, needs_wmt17
from markeval.datasets import locate
from markeval.datasets._sources import SOURCES
from tools.colab_index import Server, data_mirror


def _copy_of_the_repository(target: Path) -> Path:
    """The working tree's files (tracked, and new ones not ignored), as a clone would have them."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (REPO / rel).is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, target / rel)
    return target


@needs_wmt17
@needs_tac
def test_make_data_downloads_what_a_clone_without_shared_lacks(tmp_path):
    clone = _copy_of_the_repository(tmp_path / "work" / "markeval")
    for folder in (clone, *clone.parents):
        assert not (folder / "shared" / "data").exists(), folder
    venv = Path(sys.prefix)
    cache = tmp_path / "cache"
    expected = data_mirror(tmp_path / "mirror")
    with Server(tmp_path / "mirror") as server:
        env = {key: value for key, value in os.environ.items()
               if key not in ("MARKEVAL_DATA", "MAKEFLAGS", "MFLAGS")}
        env.update(MARKEVAL_CACHE=str(cache), MARKEVAL_DATA_MIRROR=server.url,
                   PYTHONPATH=str(clone))

        def make_data():
            return subprocess.run(["make", "-C", str(clone), f"VENV={venv}",
                                   "-o", f"{venv}/.installed", "data"],
                                  env=env, capture_output=True, text=True, timeout=600)

        first = make_data()
        assert first.returncode == 0, first.stdout + first.stderr
        assert sorted(server.served) == expected  # every file, once
        again = make_data()  # nothing left to fetch
        assert again.returncode == 0 and sorted(server.served) == expected
    for name, source in SOURCES.items():
        assert f"{name}: {cache / name} (download cache)" in first.stdout
        assert all((cache / name / rel).is_file() for rel in source.files)


@needs_wmt17
@needs_tac
def test_make_data_uses_the_data_it_is_pointed_at(tmp_path):
    """With MARKEVAL_DATA (or ../shared/data) present, nothing is downloaded or copied."""
    data = locate("wmt17", download_if_missing=False).parent
    env = {**os.environ, "MARKEVAL_DATA": str(data), "MARKEVAL_CACHE": str(tmp_path / "cache"),
           "MARKEVAL_DATA_MIRROR": "http://127.0.0.1:9/"}  # a download would fail
    env.pop("MAKEFLAGS", None)
    done = subprocess.run(["make", "-C", str(REPO), f"VENV={sys.prefix}",
                           "-o", f"{sys.prefix}/.installed", "data"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wmt17: {data / 'wmt17'} ($MARKEVAL_DATA)" in done.stdout
    assert not (tmp_path / "cache").exists()


def _fake_environment(folder: Path, log: Path) -> Path:
    """A stand-in for .venv whose python runs real Python for ``-c`` (the index probe) and
    only records ``-m pip`` commands."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then shift 2; echo "pip $*" >> {log}; exit 0; fi
exec {sys.executable} "$@"
""")
    python.chmod(0o755)
    return folder


@pytest.mark.parametrize("index, expected", [
    ("answers", "pip install -q torch==2.13.0 --extra-index-url {url}"),
    ("silent", "pip install -q torch==2.13.0"),
    ("", "pip install -q torch==2.13.0"),
])
def test_make_install_takes_torch_from_the_cpu_index_where_it_answers(tmp_path, index, expected):
    """The documented route (PyTorch's CPU index) where the index answers; where it does not
    (a machine that reaches only the package registries) or `TORCH_INDEX=` is given, plain pip,
    so `make install` keeps working there."""
    (tmp_path / "index" / "torch").mkdir(parents=True)
    (tmp_path / "index" / "torch" / "index.html").write_text("<html></html>")
    log = tmp_path / "pip.log"
    venv = _fake_environment(tmp_path / "venv", log)
    with Server(tmp_path / "index") as server:
        url = {"answers": server.url.rstrip("/"), "silent": "http://127.0.0.1:9", "": ""}[index]
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
        done = subprocess.run(["make", "-C", str(REPO), f"VENV={venv}", f"TORCH_INDEX={url}",
                               f"{venv}/.installed"], env=env, capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    commands = log.read_text().splitlines()
    torch = [c for c in commands if "torch==" in c]
    assert torch == [expected.format(url=url)], commands
    # torch before the pinned environment, whose torch==2.13.0 it then satisfies
    assert commands.index(torch[0]) < commands.index("pip install -q -r requirements.txt")
    assert (venv / ".installed").exists()
