"""Colab's path, run as Colab runs it: the committed setup cells against a package index.

``tests/test_colab_setup.py`` reads the setup cells; this test runs them, unchanged. For each
resolution of markeval's dependencies that ``make install`` put in the wheelhouse
(:mod:`tools.colab_index`: ``newest``, what pip resolves today without ``requirements.txt``'s
pins, as Colab would; ``lowest``, every direct dependency at the lowest release its declared
lower bound admits), it

1. builds markeval's wheel from the working tree (:mod:`tools.distributions`) and lays it out,
   with the resolution's wheels, as a PEP 503 simple index served over HTTP on localhost;
2. creates a fresh virtual environment holding what a fresh Colab runtime has preinstalled that
   the pages rely on (torch and the Jupyter kernel, :data:`tools.colab_index.BASELINE`) and
   nothing else: not the repository, not its editable install, not the test-only packages;
3. copies chapters 1 (WMT17), 5 (TAC), 12 (the neighbour index) and 18 (the causal LM, the
   committed results) and the student notebook of assignment 1 into an empty folder far from
   ``../shared`` and the repository, and executes them there in that environment's kernel.
   A harness cell first makes the kernel look like Colab (a ``google.colab`` module), so each
   setup cell takes its Colab branch and runs its own ``pip install`` lines exactly as
   committed; the only thing changed is where pip looks, through the environment:
   ``PIP_INDEX_URL`` names the local index (and the machine's own pip configuration is
   switched off, as Colab has none). A dependency the package does not declare, a bound that
   is wrong, a release of a dependency that breaks a chapter: each fails here;
4. serves the upstream file layout of WMT17 and TAC from the same server, given to the notebooks
   through ``$MARKEVAL_DATA_MIRROR`` with an empty ``$MARKEVAL_CACHE``: the chapters' own
   ``locate()`` calls download, verify the pinned checksums and fill the cache as online, and
   the server's log shows every data file fetched exactly once.

What this does not check: Colab's own Python (3.12 there; the environment here is this
machine's Python) and torch below the base's release; and WordNet, which Colab downloads with
``nltk.download`` from NLTK's servers, comes here from the machine's ``wordnet-base`` package
(the download fails fast offline and markeval falls back, as the setup cell expects).

Cost: the wall time of each run is printed (about 4 minutes each on two busy cores: the
index and the environment take seconds, pip's install about a minute, the pages the rest).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import nbformat
import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

import markeval
from conftest import REPO, needs_tac, needs_wmt17
from markeval.datasets._sources import SOURCES
from tools import colab_index, distributions

#: The pages run outside the repository, in this order (the first downloads WMT17, the second
#: TAC; the later ones read the cache).
PAGES = ("book/01_evaluating_generated_text.ipynb", "book/05_rouge.ipynb",
         "book/12_mark_evaluate.ipynb", "book/18_unconditional_generation.ipynb",
         "book/student/assignment_1_ngram_metrics.ipynb")
#: Where ``make install`` put the wheelhouse: beside the environment running the tests.
WHEELHOUSE = Path(sys.prefix) / "colab-index"

_PROBE = """import json, sys, markeval
from importlib import metadata
print("<<probe>>" + json.dumps({
    "markeval": markeval.__file__, "path": sys.path, "version": markeval.__version__,
    "installed": {d.metadata["Name"]: d.version for d in metadata.distributions()}}))"""


def as_colab_runs_it(nb):
    """The page as Colab runs it: a harness cell that makes the kernel Colab, the page as
    committed, and a cell that reports what was installed."""
    colab = nbformat.v4.new_code_cell(
        "# test harness: this kernel is Colab, so the setup cell takes its Colab branch\n"
        "import importlib.machinery, sys, types\n"
        "colab = types.ModuleType('google.colab')  # found as a module, as libraries look\n"
        "colab.__spec__ = importlib.machinery.ModuleSpec('google.colab', None)\n"
        "sys.modules.setdefault('google.colab', colab)")
    nb.cells = [colab, *nb.cells, nbformat.v4.new_code_cell(_PROBE)]
    return nb


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    _, built = distributions.build(tmp_path_factory.mktemp("release"))
    return built


# Six minutes each on two cores, from an empty cache: `make test-full`. `make test` reads the
# same setup cells (tests/test_colab_setup.py) and executes every chapter in the repository.
pytestmark = pytest.mark.slow


@needs_wmt17
@needs_tac
@pytest.mark.parametrize("resolution", colab_index.RESOLUTIONS)
def test_pages_run_as_in_colab_from_a_package_index(resolution, wheel, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    start = time.monotonic()
    assert (WHEELHOUSE / f"{resolution}.json").is_file(), (
        f"no {resolution} wheelhouse in {WHEELHOUSE}: `make install` fills it")
    resolved = colab_index.resolved_versions(WHEELHOUSE, resolution)
    if resolution == "lowest":  # the declared bounds are the versions run here
        for requirement in colab_index.declared_requirements():
            name = canonicalize_name(requirement.name)
            if name not in colab_index.baseline_names():
                bound = next(s.version for s in requirement.specifier if s.operator == ">=")
                assert Version(resolved[name]) == Version(bound), (
                    f"{requirement}: the lowest release installable here is {resolved[name]}; "
                    "declare that bound, the one this test runs")
    work = tmp_path / "work"
    work.mkdir()
    for folder in (work, *work.parents):
        assert not (folder / "shared" / "data").exists(), f"{folder}/shared/data is reachable"
        assert REPO not in (folder, *folder.parents) and folder != REPO.parent
    served_root = tmp_path / "served"
    colab_index.write_index(served_root, WHEELHOUSE, resolution, [wheel])
    expected = colab_index.data_mirror(served_root)
    python = colab_index.make_environment(tmp_path / "venv")
    cache = tmp_path / "cache"
    kernels = tmp_path / "jupyter" / "kernels" / "colab"
    kernels.mkdir(parents=True)
    with colab_index.Server(served_root) as server:
        env = {"PIP_INDEX_URL": server.url + "simple/",
               # Colab's pip has no configuration of this machine's (find-links, extra indexes)
               "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": "", "PIP_EXTRA_INDEX_URL": "",
               "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               "MARKEVAL_CACHE": str(cache), "MARKEVAL_DATA_MIRROR": server.url,
               "MARKEVAL_OFFLINE": "0", "MARKEVAL_DATA": "", "MARKEVAL_RESULTS": "",
               "PYTHONPATH": "", "MPLBACKEND": "agg", "HF_HOME": str(tmp_path / "hf")}
        (kernels / "kernel.json").write_text(json.dumps({
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Colab-like", "language": "python", "env": env}), encoding="utf-8")
        monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
        seconds = {}
        for page in PAGES:
            copy = work / Path(page).name
            shutil.copy2(REPO / page, copy)
            committed = nbformat.read(REPO / page, 4)
            nb = as_colab_runs_it(nbformat.read(copy, 4))
            assert nb.cells[1].source == committed.cells[0].source  # the setup cell, unchanged
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
    # pip took markeval and every dependency from the index, at the resolution's versions
    versions = {canonicalize_name(name): v for name, v in probe["installed"].items()}
    assert {name: versions.get(name) for name in resolved} == resolved
    assert any(path.startswith("/files/markeval-") for path in served)
    # every file of both data sets came over HTTP exactly once: the later pages used the cache
    data = sorted(path for path in served if not path.startswith(("/simple/", "/files/")))
    assert data == expected, sorted(set(data) ^ set(expected))[:5]
    for name, source in SOURCES.items():
        assert all((cache / name / f).is_file() for f in source.files), name  # the cache
    print(f"{resolution}: {seconds}; total {time.monotonic() - start:.0f} s (index, "
          f"environment and install included); resolved {resolved}")
