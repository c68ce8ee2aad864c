"""The package's layering, kept true by walking its import graph (AST, lazy imports count).

Each sub-package and each top-level module is a part; an import anywhere in a part's files
(at module level, inside a function, or under ``TYPE_CHECKING``) of another part is an edge.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_agentclinic"
#: The only part that may import pytest (the plugin: collection, session, options, hooks).
PYTEST_LAYER = "plugin"
#: Bottom to top: a part may import only parts listed before it (``core`` imports nothing).
LAYERS = (
    ("core",),
    ("llm", "cases", "grading", "metrics", "runs"),
    ("agents", "report"),
    ("protocols",),
    ("importers", "testing"),
    ("plugin",),
    ("api", "commands", "cli"),
)

#: Grading's wings, bottom to top: the terminology store (the modules at grading's root:
#: terminology, its index and table, wording), then terms, reading, judging. Inside grading,
#: imports go only down these (docs/grading.md).
GRADING_WINGS = ("", "terms", "reading", "judging")
#: The most floors grading may have (issue 36).
GRADING_FLOORS = 6


def _part(parts: tuple[str, ...]) -> str:
    return parts[0] if parts else "__init__"


def import_graph(root: Path) -> tuple[dict[str, set[str]], set[str]]:
    """The part -> parts edges of the package at ``root``, and the parts importing pytest."""
    edges: dict[str, set[str]] = defaultdict(set)
    pytest_users: set[str] = set()
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).with_suffix("").parts
        source = _part(rel)
        package = list(rel[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[list[str]] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    module = base + (node.module.split(".") if node.module else [])
                    targets += ([[*module, a.name] for a in node.names] if not node.module
                                else [module])
                elif node.module:
                    top, *rest = node.module.split(".")
                    if top == root.name:
                        targets += [rest] if rest else [[a.name] for a in node.names]
                    elif top in ("pytest", "_pytest"):
                        pytest_users.add(source)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    top, *rest = alias.name.split(".")
                    if top == root.name:
                        targets.append(rest)
                    elif top in ("pytest", "_pytest"):
                        pytest_users.add(source)
            # A name imported from the package itself (``__version__``) is its __init__.
            parts = {t[0] if (root / t[0]).is_dir() or (root / f"{t[0]}.py").is_file()
                     else "__init__" for t in targets if t}
            edges[source].update(parts - {source})
    return edges, pytest_users


def module_graph(root: Path) -> dict[str, set[str]]:
    """The module -> modules edges of the package at ``root`` (a package is its
    ``__init__``), lazy imports included: cycles inside one part show here."""

    def name_of(parts: list[str]) -> str | None:
        if (root.joinpath(*parts).with_suffix(".py")).is_file():
            return ".".join(parts)
        if parts and root.joinpath(*parts).is_dir():
            return ".".join(parts)  # the package, i.e. its __init__
        return None

    edges: dict[str, set[str]] = defaultdict(set)
    for path in root.rglob("*.py"):
        rel = list(path.relative_to(root).with_suffix("").parts)
        source = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        package = rel[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == root.name:
                module = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                target = name_of([*module, alias.name]) or name_of(module)
                if target is not None and target != source:
                    edges[source].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one part (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def two_way_pairs(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Parts that import each other."""
    return sorted({(a, b) if a < b else (b, a) for a in edges for b in edges[a]
                   if a in edges.get(b, ())})


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, set[str]], set[str]]:
    return import_graph(PACKAGE)


def test_no_import_cycles(graph: tuple[dict[str, set[str]], set[str]]) -> None:
    assert cycles(graph[0]) == []


def test_no_two_way_imports(graph: tuple[dict[str, set[str]], set[str]]) -> None:
    assert two_way_pairs(graph[0]) == []


def test_no_module_cycles_inside_a_part() -> None:
    # A package's __init__ re-exporting its modules is no cycle worth the name: left out.
    edges = {a: {b for b in bs if b != a.rsplit(".", 1)[0]} for a, bs in
             module_graph(PACKAGE).items()}
    assert two_way_pairs(edges) == []
    assert cycles(edges) == []


def test_only_the_pytest_layer_imports_pytest(
        graph: tuple[dict[str, set[str]], set[str]]) -> None:
    assert graph[1] <= {PYTEST_LAYER}


def test_imports_only_go_down_the_layers(graph: tuple[dict[str, set[str]], set[str]]) -> None:
    level = {part: i for i, parts in enumerate(LAYERS) for part in parts}
    upward = sorted((a, b) for a, targets in graph[0].items() for b in targets
                    if b != "__init__" and level.get(b, -1) >= level.get(a, -1) and a != b
                    and level.get(b) != level.get(a))
    unknown = sorted((set(graph[0]) | {b for t in graph[0].values() for b in t})
                     - set(level) - {"__init__"})
    assert unknown == [], f"parts missing from LAYERS: {unknown}"
    assert upward == [], f"imports going up a layer: {upward}"


def _wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in GRADING_WINGS else ""


def test_grading_imports_only_go_down_its_wings() -> None:
    edges = module_graph(PACKAGE)
    grading = {a: {b for b in bs if b.startswith("grading.")} for a, bs in edges.items()
               if a.startswith("grading.")}
    placed = {m for m in grading} | {b for bs in grading.values() for b in bs}
    unknown = sorted(m for m in placed if m.count(".") > 1 and _wing(m) == "")
    upward = sorted((a, b) for a, bs in grading.items() for b in bs
                    if GRADING_WINGS.index(_wing(b)) > GRADING_WINGS.index(_wing(a)))
    assert unknown == [], f"grading modules outside its wings: {unknown}"
    assert upward == [], f"grading imports going up a wing: {upward}"
    assert len(GRADING_WINGS) <= GRADING_FLOORS


def test_the_checks_catch_what_they_must(tmp_path: Path) -> None:
    """A cycle, a two-way pair and a lazy pytest import in a throwaway package are found."""
    pkg = tmp_path / "pytest_agentclinic"
    for name, text in {
        "a/__init__.py": "", "a/x.py": "from ..b import y\n",
        "b/__init__.py": "", "b/y.py": "def f():\n    from ..c import z\n",
        "c/__init__.py": "", "c/z.py": "def g():\n    import pytest\n    from ..a import x\n",
        "d.py": "from . import e\n", "e.py": "from pytest_agentclinic import d\n",
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    edges, users = import_graph(pkg)
    modules = module_graph(pkg)
    assert ("a.x", "b.y") in {(a, b) for a in modules for b in modules[a]}
    assert cycles(modules) == [["a.x", "b.y", "c.z"], ["d", "e"]]
    assert cycles(edges) == [["a", "b", "c"], ["d", "e"]]
    assert two_way_pairs(edges) == [("d", "e")]
    assert users == {"c"}


def upward_to_own_init(modules: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Modules importing the ``__init__`` of their own folder (or of a folder above)."""
    return sorted((a, b) for a, targets in modules.items() for b in targets
                  if a.startswith(b + "."))


def test_no_module_imports_the_init_of_its_own_folder() -> None:
    # A folder's __init__ wires its modules (the plugin's hooks register the session): a
    # module importing it is an arrow back up, which the cycle check leaves out
    # (plugin.collect once took session_of from plugin/__init__).
    assert upward_to_own_init(module_graph(PACKAGE)) == []


def test_an_import_of_the_own_folders_init_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pytest_agentclinic"
    for name, text in {"a/__init__.py": "from .x import f\n", "a/x.py": "def f(): ...\n",
                       "a/y.py": "from . import f\n", "a/b/__init__.py": "",
                       "a/b/z.py": "from .. import f\n"}.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    assert upward_to_own_init(module_graph(pkg)) == [("a.b.z", "a"), ("a.y", "a")]
