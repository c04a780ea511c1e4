"""The layout is the architecture: each layer imports only the layers below it, and no module imports itself
back through others (no cycle). Read from the source with ``ast`` (imports inside functions count too: a lazy
import is still a dependency), so a new module is checked the moment it exists.

    model  <  parsers  <  sources  <  probe  <  diagnosis  <  output, session  <  service  <  cli, tui
    (tui never imports cli; nothing below tui imports textual: test_import_hygiene.py)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "troubleshooter"

# rank of each top-level part of the package; a module may import equal or lower ranks only
RANK = {
    "__init__": 0, "locations": 0, "yamlio": 0, "settings": 1, "model": 1,
    "parsers": 2, "sources": 3, "probe": 4, "diagnosis": 5,
    "output": 6, "session": 6, "service": 7, "cli": 8, "tui": 8, "__main__": 9,
}


def _module_name(path: Path) -> str:
    parts = ["troubleshooter", *path.relative_to(PKG).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    is_pkg = path.name == "__init__.py"
    typing_only = {id(n) for guard in ast.walk(tree) if isinstance(guard, ast.If)
                   and isinstance(guard.test, ast.Name) and guard.test.id == "TYPE_CHECKING"
                   for stmt in guard.body for n in ast.walk(stmt)}  # annotations only: no dependency at run time
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("troubleshooter"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("troubleshooter"):
                continue
            out.add(mod)
            for a in node.names:  # `from troubleshooter.probe import bundle` names a module
                out.add(f"{mod}.{a.name}")
    return out


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PKG.rglob("*.py") if "decision_trees" not in p.parts}
    graph = {}
    for name, path in files.items():
        graph[name] = {m for m in _imports(path, name) if m in files and m != name}
    return graph


def _top(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_part_has_a_rank() -> None:
    tops = {_top(m) for m in _graph()}
    assert tops <= set(RANK), f"new top-level modules need a place in RANK: {sorted(tops - set(RANK))}"


def test_layers_import_downward_only() -> None:
    bad = []
    for mod, deps in _graph().items():
        for d in deps:
            if RANK[_top(d)] > RANK[_top(mod)]:
                bad.append(f"{mod} -> {d}")
            if _top(mod) == "tui" and _top(d) == "cli":
                bad.append(f"{mod} -> {d} (the app stands on the service layer, not on the CLI)")
    assert not bad, "imports against the layering:\n" + "\n".join(sorted(bad))


def test_no_import_cycle() -> None:
    graph = _graph()
    # package __init__ modules import their children by design; a child importing its own package's
    # __init__ is not a cycle of logic, so edges child -> ancestor package are left out
    def edges(m: str) -> set[str]:
        return {d for d in graph[m] if not m.startswith(d + ".")}

    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges(m)):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles[:10])


@pytest.mark.parametrize("limit", [600])
def test_no_module_over_the_size_limit(limit: int) -> None:
    big = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > limit}
    assert not big, f"modules over {limit} lines (split them by responsibility): {big}"
