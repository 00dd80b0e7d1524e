"""The GitHub Pages workflow publishes what the README's command builds.

It cannot run here (no GitHub runner, no network); this checks that it parses, builds with the
README's own ``make`` target for the book, and publishes ``_build/html`` with the PDF in it.
"""

from __future__ import annotations

import re

import yaml

from conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"


def _readme_book_command() -> str:
    """The command the README gives for building the book (its "Two commands" section)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()
                if "build the book" in line]
    assert commands, "the README no longer says which command builds the book"
    return commands[0]


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_workflow_parses_and_publishes_pages():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "main" in triggers["push"]["branches"] and "workflow_dispatch" in triggers
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    uses = [step.get("uses", "") for step in _steps(workflow)]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    upload = next(s for s in _steps(workflow)
                  if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"


def test_workflow_builds_with_the_readmes_command_and_ships_the_pdf():
    command = _readme_book_command()
    assert command == "make book"
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    runs = [step.get("run", "").strip() for step in _steps(workflow)]
    assert command in runs, f"no step runs {command!r}: {runs}"
    # the PDF the README promises inside the site, checked before it is uploaded
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "_build/html/markeval.pdf" in readme
    assert "test -s _build/html/markeval.pdf" in runs
    assert runs.index("test -s _build/html/markeval.pdf") > runs.index(command)
    # the Makefile's book target is what builds the HTML and the PDF
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^book:.*\n((?:\t.*\n)+)", makefile, flags=re.M)
    assert recipe and "jupyter-book" in recipe[1].replace("$(JB)", "jupyter-book")
    assert "tools.pdf" in recipe[1]


RELEASE = REPO / ".github" / "workflows" / "release.yml"


def test_release_publishes_a_version_tag_with_trusted_publishing():
    workflow = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))
    assert triggers == {"push": {"tags": ["v*"]}}
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    runs = [step.get("run", "") for step in build["steps"]]
    assert "python -m build" in runs and "python -m twine check --strict dist/*" in runs
    # the tag must name the version of the package's one source
    assert any("markeval/_version.py" in run and "GITHUB_REF_NAME" in run for run in runs)
    # the build tools are the ones requirements.txt pins (and the test suite runs)
    pins = dict(line.split("==") for line in (REPO / "requirements.txt").read_text().splitlines()
                if line.startswith(("build==", "twine==")))
    assert any(f'"build=={pins["build"]}"' in run and f'"twine=={pins["twine"]}"' in run
               for run in runs)
    # trusted publishing: an OIDC token for the publishing job only, no stored password
    assert workflow["permissions"] == {"contents": "read"}
    assert publish["permissions"] == {"id-token": "write"} and publish["needs"] == "build"
    assert publish["environment"]["name"] == "pypi"
    (upload,) = [s for s in publish["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert "with" not in upload or "password" not in upload["with"]


def test_releasing_is_documented_in_one_short_file():
    text = (REPO / "RELEASING.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 60
    for needed in ("markeval/_version.py", "python -m tools.setup_cells", "CITATION.cff",
                   "git tag", "trusted publisher"):
        assert needed in text, needed
