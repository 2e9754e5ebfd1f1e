"""docs/architecture.md's code layout matches the tree: every path it names exists, and it
names every package, and every module at the top of the kit's own packages (a reader finds
each there)."""

from __future__ import annotations

import re

from tests.support.processes import ROOT

DOC = ROOT / "docs" / "architecture.md"
# Packages whose every module the layout names; deeper packages are named as a whole.
LISTED_IN_FULL = ("a2akit", "http_service", "handlers")


def _layout() -> list[str]:
    """The paths of the layout block: an entry's names (before two spaces), nested by indent."""
    text = DOC.read_text()
    block = re.search(r"## Code layout\n\n```text\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no code layout block"
    paths: list[str] = []
    parents: list[tuple[int, str]] = []
    for line in block.group(1).splitlines():
        indent = len(line) - len(line.lstrip())
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        parents = [(i, p) for i, p in parents if i < indent]
        base = parents[-1][1] if parents else ""
        for name in (n.strip() for n in names.split(",")):
            paths.append(base + name)
            if name.endswith("/"):
                parents.append((indent, base + name))
    return paths


def test_every_path_the_layout_names_exists() -> None:
    missing = [path for path in _layout() if not (ROOT / path).exists()]
    assert missing == [], f"docs/architecture.md names what is not in the tree: {missing}"


def test_the_layout_names_every_package_and_every_top_module() -> None:
    named = set(_layout())
    packages = {str(init.parent.relative_to(ROOT)) + "/"
                for top in ("a2akit", "http_service", "handlers", "grpc_service")
                for init in (ROOT / top).rglob("__init__.py")
                if "generated" not in init.parts or init.parent.name == "generated"}
    modules = {str(path.relative_to(ROOT)) for top in LISTED_IN_FULL
               for path in (ROOT / top).glob("*.py") if path.name != "__init__.py"}
    missing = sorted((packages | modules) - named)
    assert missing == [], f"docs/architecture.md's code layout misses {missing}"
