"""The kit's hand-written modules by dotted name, as the tree checks read them (the layout's
imports, the import cycles)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tests.support.processes import ROOT

__all__ = ["kit_modules"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def kit_modules(packages: Iterable[str]) -> dict[str, Path]:
    """Dotted name -> file of every module of `packages`, generated code left out."""
    return {_module_name(path): path for package in packages
            for path in (ROOT / package).rglob("*.py") if "generated" not in path.parts}
