"""No import cycle among the kit's modules, counting imports under `if TYPE_CHECKING:` too.

tests/tree/process/test_layout.py checks what runs at import time; this also counts the imports that
only type checkers follow: a helper that names its caller's type there still depends on it
(issue 36). Imports inside functions are left out (they run on first use), and so is the
implicit import of a parent package (`a2akit/__init__.py` runs before any `a2akit.x`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.tree.modules import kit_modules

PACKAGES = ("a2akit", "handlers", "http_service", "grpc_service")

# Cycles allowed for now, each as the set of modules it runs through (none since issue 36).
# A new cycle, or a known one that gains a module, fails; so does an entry here that no
# longer is a cycle (drop it).
KNOWN_CYCLES: list[frozenset[str]] = []


def _imports(source: str, module: str, package: str, known: set[str]) -> set[str]:
    """The kit's modules `source` (module `module` of `package`) imports outside functions,
    `if TYPE_CHECKING:` blocks included."""
    found: set[str] = set()

    def resolve(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        return ".".join([*anchor, node.module] if node.module else anchor)

    def visit(parent: ast.AST) -> None:
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue  # imported on first use
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in known)
            elif isinstance(node, ast.ImportFrom):
                base = resolve(node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in known:
                        found.add(f"{base}.{alias.name}")
                    elif base in known:
                        found.add(base)
            else:
                visit(node)  # if (TYPE_CHECKING or not), try, with, class bodies

    visit(ast.parse(source))
    found.discard(module)
    return found


def _graph() -> dict[str, set[str]]:
    modules = kit_modules(PACKAGES)
    known = set(modules)
    return {name: _imports(path.read_text(), name,
                           name if path.name == "__init__.py" else name.rpartition(".")[0],
                           known)
            for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> Iterator[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def connect(name: str) -> Iterator[frozenset[str]]:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for imported in sorted(graph[name]):
            if imported not in index:
                yield from connect(imported)
                low[name] = min(low[name], low[imported])
            elif imported in on_stack:
                low[name] = min(low[name], index[imported])
        if low[name] == index[name]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == name:
                    break
            if len(component) > 1:
                yield frozenset(component)

    for name in sorted(graph):
        if name not in index:
            yield from connect(name)


def _path(graph: dict[str, set[str]], component: frozenset[str]) -> str:
    """One cycle through `component`, for the failure message."""
    start = min(component)
    trail, seen = [start], {start}
    while True:
        step = min(graph[trail[-1]] & component, key=lambda name: (name in seen, name))
        trail.append(step)
        if step in seen:
            return " -> ".join(trail[trail.index(step):])
        seen.add(step)


def test_no_import_cycle_but_the_known_ones() -> None:
    graph = _graph()
    new = [component for component in _cycles(graph) if component not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(
        f"{_path(graph, c)} (all of: {', '.join(sorted(c))})" for c in new)


def test_the_known_cycles_are_still_cycles() -> None:
    found = set(_cycles(_graph()))
    gone = [sorted(component) for component in KNOWN_CYCLES if component not in found]
    assert not gone, f"no longer cycles (drop them from KNOWN_CYCLES): {gone}"


def test_the_store_is_in_no_known_cycle() -> None:
    assert not [c for c in KNOWN_CYCLES if any(m.startswith("a2akit.store") for m in c)]


def test_type_checking_imports_count() -> None:
    # The scan itself: a cycle made only under TYPE_CHECKING is found.
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert list(_cycles(graph)) == [frozenset({"a", "b"})]
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a2akit import b\n"
              "def f() -> None:\n    from a2akit import c\n")
    known = {"a2akit.a", "a2akit.b", "a2akit.c"}
    assert _imports(source, "a2akit.a", "a2akit", known) == {"a2akit.b"}
