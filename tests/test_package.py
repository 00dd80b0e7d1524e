"""The project's shape: installable package, pinned environment, CI running the README command."""

from __future__ import annotations

import re
import tomllib

import markeval
from conftest import REPO


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", markeval.__version__)


def test_top_level_layout():
    for name in ("book", "markeval", "_config.yml", "_toc.yml", "tests", "requirements.txt",
                 "README.md", "pyproject.toml", ".ci/run", "benchmarks", "tools"):
        assert (REPO / name).exists(), f"missing top-level {name}"


def test_runtime_dependencies_are_ranges():
    """Colab's own torch must satisfy them, so no exact pins in pyproject.toml."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for dep in project["dependencies"]:
        assert "==" not in dep, f"runtime dependency {dep!r} is pinned; use a range"


def test_requirements_are_pinned():
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-e"):
            assert "==" in line, f"requirements.txt line {line!r} is not pinned"
    assert "torch==2.13.0" in (REPO / "requirements.txt").read_text()


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    commands = re.findall(r"```(?:bash|sh)\n(.*?)```", readme, flags=re.S)
    assert any("make test" in block for block in commands), "README shows no `make test` command"
    assert re.search(r"^timeout \S+ make test$", ci, flags=re.M), ".ci/run must run `make test` under timeout"


def test_library_holds_no_book_tooling_and_no_pytest_files():
    """nbformat, PyYAML and jupyter-book belong to the book's environment (requirements.txt):
    the package does not declare them, so nothing in it may import them; its tooling lives in
    tools/ (``make student``). Pytest files live in tests/, not in the installed package."""
    for path in sorted((REPO / "markeval").rglob("*.py")):
        rel = path.relative_to(REPO)
        assert path.name != "conftest.py" and not path.name.startswith("test_"), f"{rel} is a pytest file"
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(nbformat|yaml|jupyter_book)\b", text, flags=re.M), \
            f"{rel} imports book tooling"
    assert "$(PY) -m tools.student_edition" in (REPO / "Makefile").read_text()
