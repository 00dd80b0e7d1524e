"""The project's shape: installable package, pinned environment, CI running the README command."""

from __future__ import annotations

import re
import tomllib

import markeval
from conftest import REPO


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", markeval.__version__)


def test_version_has_one_source():
    """markeval/_version.py: pyproject.toml reads it, the setup cells are written from it
    (tests/test_colab_setup.py) and CITATION.cff repeats it (tests/test_front_matter.py)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "markeval._version.__version__"}
    pattern = re.escape(markeval.__version__)
    hits = [p for p in (REPO / "markeval").rglob("*.py")
            if re.search(rf"^__version__ = .{pattern}.", p.read_text(encoding="utf-8"), re.M)]
    assert hits == [REPO / "markeval" / "_version.py"]


def test_sdist_and_wheel_build_and_pass_twine_check(tmp_path):
    """What the release workflow builds and uploads: both pass `twine check --strict` (the
    metadata and the README as PyPI renders them); the wheel holds the package with the
    committed results the chapters read, and neither holds the test suite or the book."""
    import zipfile
    import tarfile

    from tools import distributions

    sdist, wheel = distributions.build(tmp_path)
    assert "PASSED" in distributions.check(sdist, wheel)
    assert wheel.name == f"markeval-{markeval.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        metadata = whl.read(f"markeval-{markeval.__version__}.dist-info/METADATA").decode()
    results = REPO / "markeval" / "results"
    shipped = {f"markeval/results/{p.relative_to(results).as_posix()}"
               for p in results.rglob("*") if p.is_file()}
    assert shipped and shipped <= names
    assert not [n for n in names if n.startswith(("tests/", "book/", "tools/"))]
    for extra in ("book", "lm", "index", "course", "cluster"):
        assert f"Provides-Extra: {extra}" in metadata
    assert "License-Expression: MIT" in metadata
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    top = f"markeval-{markeval.__version__}"
    assert f"{top}/markeval/results/paper_comparison.csv" in members
    assert not [m for m in members if m.startswith((f"{top}/tests", f"{top}/book"))]


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
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    # The batch grader runs notebooks: nbformat is declared in its extra, imported on use only.
    optional = {"markeval/exercises/grade.py": "course"}
    for path in sorted((REPO / "markeval").rglob("*.py")):
        rel = path.relative_to(REPO)
        assert path.name != "conftest.py" and not path.name.startswith("test_"), f"{rel} is a pytest file"
        text = path.read_text(encoding="utf-8")
        if rel.as_posix() in optional:
            assert any(d.startswith("nbformat") for d in extras[optional[rel.as_posix()]])
            assert not re.search(r"^(import|from)\s+(nbformat|yaml|jupyter_book)\b", text,
                                 flags=re.M), f"{rel} imports book tooling at import time"
            continue
        assert not re.search(r"^\s*(import|from)\s+(nbformat|yaml|jupyter_book)\b", text, flags=re.M), \
            f"{rel} imports book tooling"
    assert "$(PY) -m tools.student_edition" in (REPO / "Makefile").read_text()


def _markeval_imports(tree) -> tuple[list[tuple[int, str, str]], dict[str, str]]:
    """``(line, module, name)`` of every ``from markeval... import name``, and the local names
    bound to markeval modules (``import markeval.x as y``, ``from markeval import x``)."""
    import ast

    found, modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("markeval"):
            for alias in node.names:
                found.append((node.lineno, node.module, alias.name))
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("markeval"):
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
    return found, modules


def _is_module(dotted: str) -> bool:
    path = REPO / dotted.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_no_module_uses_another_modules_private_names():
    """A ``_name`` is private to its module: others share through public names (possibly in a
    private module such as ``lexical/_ngram.py``). Importing a private *module* is fine."""
    import ast

    offences = []
    for path in sorted((REPO / "markeval").rglob("*.py")):
        rel = path.relative_to(REPO)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found, modules = _markeval_imports(tree)
        for line, module, name in found:
            if name.startswith("_") and not name.startswith("__") and not _is_module(
                    f"{module}.{name}"):
                offences.append(f"{rel}:{line}: from {module} import {name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and isinstance(node.value, ast.Name)
                    and _is_module(modules.get(node.value.id, "-"))):
                offences.append(f"{rel}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not offences, "\n".join(offences)


def test_the_check_finds_a_private_import(tmp_path):
    import ast

    tree = ast.parse("from markeval.lexical import bleu as B\nB._stack(1)\n"
                     "from markeval.lexical.bleu import _signature\n")
    found, modules = _markeval_imports(tree)
    assert ("markeval.lexical.bleu", "_signature") in [(m, n) for _, m, n in found]
    assert _is_module(modules["B"]) and not _is_module("markeval.lexical.bleu._signature")


def test_the_lexical_metrics_do_no_file_or_model_io():
    """Finding and loading resources lives at the edges (datasets/, encoders/): the lexical
    package computes on strings and counts. (METEOR's default WordNet is loaded through
    markeval.datasets.wordnet, on demand.)"""
    io_modules = r"(os\.path|shutil|zipfile|tarfile|tempfile|urllib|pathlib|torch|transformers)"
    for path in sorted((REPO / "markeval" / "lexical").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(REPO)
        assert not re.search(rf"^\s*(import|from)\s+{io_modules}\b", text, flags=re.M), rel
        assert not re.search(r"\b(open|read_bytes|read_text|write_bytes|write_text)\(", text), rel


def test_make_test_shares_out_the_consistency_checks_and_keeps_other_files_whole(pytestconfig,
                                                                                monkeypatch):
    """``make test``'s two workers (``-n 2 --dist loadfile``) and tests/conftest.py's scheduler:
    a test of tests/test_reproduce.py is its own unit of work; any other file is one unit."""
    import conftest

    assert "-n 2 --dist loadfile" in (REPO / "Makefile").read_text()
    monkeypatch.setattr(pytestconfig.option, "dist", "loadfile", raising=False)
    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"], raising=False)
    scheduler = conftest.pytest_xdist_make_scheduler(pytestconfig, None)
    checks = ["tests/test_reproduce.py::test_x[ci-a]", "tests/test_reproduce.py::test_x[ci-b]"]
    assert [scheduler._split_scope(c) for c in checks] == checks
    assert {scheduler._split_scope(f"tests/test_book_build.py::test_{n}") for n in "ab"} == {
        "tests/test_book_build.py"}
    assert scheduler._split_scope("book/02_perplexity.ipynb::Cell 3") == "book/02_perplexity.ipynb"
    monkeypatch.setattr(pytestconfig.option, "dist", "load")
    assert conftest.pytest_xdist_make_scheduler(pytestconfig, None) is None


def test_readme_cost_table_is_the_measured_one():
    """The README's cost table is what benchmarks/fresh_machine.py measured on a fresh clone
    (benchmarks/fresh_machine.json), written by that script, never typed; every command of it
    succeeded, at a commit of this history."""
    import importlib.util
    import json
    import subprocess

    spec = importlib.util.spec_from_file_location(
        "fresh_machine", REPO / "benchmarks" / "fresh_machine.py")
    fresh_machine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh_machine)
    result = json.loads(fresh_machine.RESULT.read_text(encoding="utf-8"))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split(fresh_machine.BEGIN, 1)[1].split(fresh_machine.END, 1)[0]
    assert block.strip() == fresh_machine.table(result), (
        "the README's cost table is not the measured one: "
        "`python benchmarks/fresh_machine.py --table-only` writes it")
    assert [step["command"] for step in result["steps"]] == [s for s, _ in fresh_machine.STEPS]
    assert all(step["status"] == 0 for step in result["steps"])
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO,
                             capture_output=True, text=True).stdout.strip() == "true"
    ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", result["commit"], "HEAD"],
                              cwd=REPO, capture_output=True)
    assert ancestor.returncode == 0 or shallow, (
        f"measured at {result['commit']}, which is not in this history")


def test_the_cost_table_is_written_into_an_empty_block_and_over_a_filled_one(tmp_path,
                                                                            monkeypatch):
    """The first measurement finds the block empty (its two markers on adjacent lines)."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location(
        "fresh_machine", REPO / "benchmarks" / "fresh_machine.py")
    fresh_machine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh_machine)
    result = json.loads(fresh_machine.RESULT.read_text(encoding="utf-8"))
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{fresh_machine.BEGIN}\n{fresh_machine.END}\nafter\n",
                      encoding="utf-8")
    monkeypatch.setattr(fresh_machine, "README", readme)
    for _ in range(2):  # empty, then filled
        fresh_machine.write_table(result)
        assert readme.read_text(encoding="utf-8") == (
            f"before\n{fresh_machine.BEGIN}\n{fresh_machine.table(result)}\n"
            f"{fresh_machine.END}\nafter\n")
