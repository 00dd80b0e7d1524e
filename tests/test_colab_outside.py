"""Chapters run where Colab runs them: outside the repository, from the released package.

``tests/test_colab_setup.py`` reads the setup cells; this test runs them. It

1. builds the wheel (``pip wheel --no-deps --no-build-isolation`` on a copy of the package's
   sources, so that the build leaves nothing in the working tree);
2. creates a fresh virtual environment holding what a fresh Colab runtime has that matters here
   (ipykernel, matplotlib) and the distributions markeval's wheel declares, with their own
   declared dependencies, and nothing else: not the repository, not its editable install, not
   the test-only packages of ``requirements.txt``;
3. copies two chapters (1, WMT17; 5, TAC) and the student notebook of assignment 1 into an
   empty temporary folder, far from ``../shared`` and the repository, and executes them there
   in that environment's kernel. Each setup cell takes its Colab branch and runs its own
   install line, parameterised only in where the package comes from: ``git+https://github.com/
   markeval/markeval@v<version>`` becomes ``file://<the wheel>``, and pip may not use an index
   (``PIP_NO_INDEX``), so a dependency the wheel declares but the environment lacks fails the
   install instead of being fetched;
4. serves the upstream file layout of WMT17 and TAC (``AIPHES/.../WMT17/…``, the TAC files under
   their upstream names) from a local HTTP server started by the test, given to the notebooks
   through ``$MARKEVAL_DATA_MIRROR``, the documented setting for a mirror of the sources, with
   an empty ``$MARKEVAL_CACHE``: the chapters' own ``locate()`` calls download, verify the
   pinned checksums and fill the cache exactly as online, and the server's log shows every file
   fetched once (the later notebooks read the cache).

How the environment is made, and why that is sound. Installing the declared dependencies from
an index would fetch torch with its CUDA libraries (several GB) on every run, and this machine
reaches no index but PyPI. Instead each required distribution is taken from the project's
environment, ``.venv``, where ``make install`` put exactly the pinned versions: its installed
files, as listed in its ``RECORD``, are linked into the new environment's site-packages (links,
so it takes a second). Which distributions: the transitive closure of the wheel's
``Requires-Dist`` (markers and extras evaluated as pip does) plus the Colab baseline — computed
from the metadata, so nothing the wheel does not declare is there. Then pip itself, inside the
notebook, installs the wheel with dependency resolution and no index: it succeeds only if the
linked distributions satisfy every declared requirement. What this does not check: that PyPI's
current releases of the dependencies still work (the pinned ones are used); and WordNet, which
Colab downloads with ``nltk.download`` from NLTK's servers, comes here from the machine's
``wordnet-base`` package (that download fails fast offline and markeval falls back, as the
setup cell expects).

Cost: about a minute and a half on two busy cores (95 s measured: wheel, environment and
server ~18 s; the three notebooks, each starting a kernel that imports torch and pip-installing
the wheel, 32 + 29 + 15 s). The wall time is printed.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from importlib import metadata
from pathlib import Path

import nbformat
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import markeval
from conftest import REPO, needs_tac, needs_wmt17
from markeval.datasets import locate
from markeval.datasets._sources import SOURCES

#: What a fresh Colab runtime provides that the pages use without installing it.
COLAB_BASELINE = ("ipykernel", "matplotlib")
#: The pages run outside the repository, in this order (the first downloads WMT17, the second
#: TAC, the third reads WMT17 from the cache).
PAGES = ("book/01_evaluating_generated_text.ipynb", "book/05_rouge.ipynb",
         "book/student/assignment_1_ngram_metrics.ipynb")
INSTALL = f"git+https://github.com/markeval/markeval@v{markeval.__version__}"


# --- the environment --------------------------------------------------------------------------

def build_wheel(out: Path) -> Path:
    """The markeval wheel, built from a copy of the sources (no build/ left in the tree)."""
    src = out / "src"
    shutil.copytree(REPO / "markeval", src / "markeval",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out / "dist"), str(src)],
                   check=True, env={**os.environ, "PIP_NO_INDEX": "1"}, capture_output=True)
    (wheel,) = (out / "dist").glob("markeval-*.whl")
    return wheel


def _installed() -> dict:
    """Canonical name -> distribution installed in this (the project's) environment."""
    return {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions()
            if d.metadata["Name"]}


def dependency_closure(requirements, installed: dict) -> dict:
    """The installed distributions that ``requirements`` need, transitively.

    Markers are evaluated for this interpreter, with the extras each requirement asks for.
    Raises AssertionError naming a requirement that is missing or not satisfied.
    """
    needed: dict = {}
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker and not req.marker.evaluate({**default_environment(), "extra": extra}):
            continue
        name = canonicalize_name(req.name)
        dist = installed.get(name)
        assert dist is not None, f"{req} is declared but not installed in {sys.prefix}"
        assert req.specifier.contains(dist.version, prereleases=True), (
            f"{req} is declared but {dist.version} is installed")
        key = (name, tuple(sorted(req.extras)))
        if key in needed:
            continue
        needed[key] = dist
        for sub in dist.requires or []:
            sub = Requirement(sub)
            for wanted in sorted(req.extras) or [""]:
                todo.append((sub, wanted))
    return {name: dist for (name, _), dist in needed.items()}


def _link_tree(source: Path, target: Path) -> None:
    """Link ``source`` at ``target``; where two distributions share a folder (a namespace
    package), make it a real folder and link their entries into it."""
    if not target.exists() and not target.is_symlink():
        target.symlink_to(source)
        return
    if source.is_dir() and target.is_dir():
        if target.is_symlink():
            previous = target.resolve()
            target.unlink()
            target.mkdir()
            for child in previous.iterdir():
                (target / child.name).symlink_to(child)
        for child in source.iterdir():
            _link_tree(child, target / child.name)


def link_distributions(dists: dict, site: Path) -> int:
    """Link every top-level entry of each distribution's RECORD into ``site``; returns how
    many distributions were linked."""
    for name, dist in dists.items():
        assert dist.files, f"{name}: no RECORD, cannot tell its files"
        base = Path(dist.locate_file(""))
        tops = {f.parts[0] for f in dist.files if f.parts[0] not in ("..", "__pycache__")}
        for top in sorted(tops):
            if (base / top).exists():
                _link_tree(base / top, site / top)
    return len(dists)


def make_environment(root: Path, wheel: Path) -> Path:
    """A fresh virtual environment with the Colab baseline and the wheel's dependencies."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], check=True, capture_output=True,
                               text=True).stdout.strip())
    with zipfile.ZipFile(wheel) as whl:
        meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        declared = [line.split(":", 1)[1].strip() for line in
                    whl.read(meta).decode().splitlines() if line.startswith("Requires-Dist:")]
    installed = _installed()
    dists = dependency_closure([*declared, *COLAB_BASELINE], installed)
    assert "markeval" not in dists
    link_distributions(dists, site)
    return python


# --- the data server --------------------------------------------------------------------------

def mirror_folder(root: Path) -> Path:
    """The upstream layout (host-relative paths of each source's URLs) linked to local files."""
    mirror = root / "mirror"
    for name, source in SOURCES.items():
        folder = locate(name, download_if_missing=False)
        for rel in source.files:
            path = mirror / re.sub(r"^https?://[^/]+/", "", source.url(rel))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(folder / rel)
    return mirror


class _Server:
    """A local HTTP server of ``folder`` that records the paths it served."""

    def __init__(self, folder: Path):
        self.served: list[str] = []
        served = self.served

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # quiet; record instead
                pass

            def send_head(self):
                served.append(self.path)
                return super().send_head()

        handler = functools.partial(Handler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


# --- the pages --------------------------------------------------------------------------------

_PROBE = """import json, sys, markeval
print("<<probe>>" + json.dumps({"markeval": markeval.__file__, "path": sys.path,
                                "version": markeval.__version__}))"""


def as_colab_runs_it(nb, wheel: Path):
    """The page with its install line pointing at ``wheel``, run as in Colab."""
    setup = next(c for c in nb.cells if c.cell_type == "code")
    assert INSTALL in setup.source, f"the setup cell does not install {INSTALL}"
    setup.source = setup.source.replace(INSTALL, wheel.as_uri())
    colab = nbformat.v4.new_code_cell(
        "# test harness: this kernel is Colab, so the setup cell takes its Colab branch\n"
        "import sys, types\n"
        "sys.modules.setdefault('google.colab', types.ModuleType('google.colab'))")
    nb.cells = [colab, *nb.cells, nbformat.v4.new_code_cell(_PROBE)]
    return nb


@needs_wmt17
@needs_tac
def test_chapters_run_outside_the_repository_from_the_wheel(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    start = time.monotonic()
    work = tmp_path / "work"
    work.mkdir()
    for folder in (work, *work.parents):
        assert not (folder / "shared" / "data").exists(), f"{folder}/shared/data is reachable"
        assert REPO not in (folder, *folder.parents) and folder != REPO.parent
    wheel = build_wheel(tmp_path / "wheel")
    python = make_environment(tmp_path, wheel)
    cache = tmp_path / "cache"
    kernels = tmp_path / "jupyter" / "kernels" / "colab"
    kernels.mkdir(parents=True)
    with _Server(mirror_folder(tmp_path)) as server:
        env = {"MARKEVAL_CACHE": str(cache), "MARKEVAL_DATA_MIRROR": server.url,
               "MARKEVAL_OFFLINE": "0", "MARKEVAL_DATA": "", "MARKEVAL_RESULTS": "",
               "PYTHONPATH": "", "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull,
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "MPLBACKEND": "agg"}
        (kernels / "kernel.json").write_text(json.dumps({
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Colab-like", "language": "python", "env": env}), encoding="utf-8")
        monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
        seconds = {}
        for page in PAGES:
            copy = work / Path(page).name
            shutil.copy2(REPO / page, copy)
            nb = as_colab_runs_it(nbformat.read(copy, 4), wheel)
            t0 = time.monotonic()
            # Raises CellExecutionError, naming the cell and the error, on the first failure.
            NotebookClient(nb, timeout=600, kernel_name="colab",
                           resources={"metadata": {"path": str(work)}}).execute()
            seconds[Path(page).stem] = round(time.monotonic() - t0, 1)
            probe = json.loads("".join(o.get("text", "") for o in nb.cells[-1].outputs)
                               .split("<<probe>>", 1)[1])
            installed = Path(probe["markeval"]).resolve()
            assert tmp_path / "venv" in installed.parents, probe["markeval"]
            assert probe["version"] == markeval.__version__
            assert not [p for p in probe["path"] if p and Path(p).resolve() == REPO]
        served = list(server.served)
    # every file of both data sets came over HTTP exactly once: the later pages used the cache
    expected = sorted("/" + re.sub(r"^https?://[^/]+/", "", s.url(f))
                      for s in SOURCES.values() for f in s.files)
    assert sorted(served) == expected, sorted(set(served) ^ set(expected))[:5]
    for name, source in SOURCES.items():
        assert all((cache / name / f).is_file() for f in source.files), name  # the cache
    print(f"outside the repository: {seconds}; total {time.monotonic() - start:.0f} s "
          f"(wheel, environment and server included)")
