"""docs/conformance.md from the tests: one row per requirement of the A2A specification a test
shows, read from its `@pytest.mark.spec(section, level, requirement)` marker.

    .venv/bin/python -m scripts.conformance           # rewrite docs/conformance.md
    .venv/bin/python -m scripts.conformance --check   # exit 1 if it is not what the tests say

tests/tree/unit/test_conformance_doc.py runs the check, so the page cannot drift from the tests:
removing a marked test, or editing the page by hand, fails it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conformance.md"
# Where a test lives says which binding it exercises (the first prefix that matches).
BINDINGS = (
    ("tests/core/test_equivalence.py", "JSON-RPC, HTTP+JSON, gRPC"),
    ("tests/jsonrpc/test_agent_card_caching.py", "agent card (HTTP)"),
    ("tests/auth/process/test_card_signing.py", "agent card (HTTP), JSON-RPC"),
    ("tests/jsonrpc/", "JSON-RPC"),
    ("tests/rest/", "HTTP+JSON"),
    ("tests/grpc/", "gRPC"),
    ("tests/push/", "push delivery"),
    ("tests/", "JSON-RPC, HTTP+JSON, gRPC"),
)
# Where the kit deliberately differs from the letter of the specification, and why.
DEVIATIONS = (
    ("9 (JSON-RPC 2.0, 4.1)", "A request without an `id` (a JSON-RPC notification) is answered "
     "with -32600 and not executed: A2A defines no notification, every operation has a result "
     "the caller needs, and a silent one would create work nobody can find."),
    ("3.6.2", "A 1.0 method without `A2A-Version` is VersionNotSupportedError (the missing "
     "header means 0.3, and 0.3 has no such method); the draft conformance suite's "
     "VER-NEG-002 (SHOULD) expects it served."),
    ("8.4", "Only the 1.0 card is signed: a signature covers the 1.0 card's canonical form, "
     "so the 0.3 card (`/.well-known/agent.json`) carries none."),
)


@dataclass(frozen=True, order=True)
class Row:
    order: tuple[int | str, ...]
    section: str
    level: str
    requirement: str
    binding: str
    test: str
    generation: str


def _order(section: str) -> tuple[int | str, ...]:
    return tuple(int(p) if p.isdigit() else p for p in section.replace(" ", ".").split("."))


def _binding(path: str) -> str:
    return next(name for prefix, name in BINDINGS if path.startswith(prefix))


def _is_spec(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "spec" and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "mark")


def rows(root: Path = ROOT) -> list[Row]:
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                if not _is_spec(decorator):
                    continue
                assert isinstance(decorator, ast.Call)
                section, level, requirement = (ast.literal_eval(a) for a in decorator.args)
                keywords = {k.arg: ast.literal_eval(k.value) for k in decorator.keywords}
                found.append(Row(_order(section), section, level, requirement,
                                 _binding(relative), f"{relative}::{node.name}",
                                 keywords.get("generation", "1.0")))
    return sorted(found)


def render(found: list[Row]) -> str:
    lines = ["# Conformance", "",
             "What the kit's tests show of the A2A specification, one row per requirement a "
             "test covers: its",
             "section, its level (MUST, SHOULD, MAY), the binding the test goes through and the "
             "test.",
             "Generated from the tests' `@pytest.mark.spec` markers by "
             "`.venv/bin/python -m scripts.conformance`",
             "(once `./dev test` has made `.venv`); a test fails when this page and the markers "
             "differ.", ""]
    for generation, title in (("1.0", "A2A 1.0"), ("0.3", "A2A 0.3, served on the same "
                                                          "endpoints")):
        chosen = [row for row in found if row.generation == generation]
        levels = {level: sum(row.level == level for row in chosen)
                  for level in ("MUST", "SHOULD", "MAY")}
        lines += [f"## {title}", "",
                  f"{len(chosen)} rows: " + ", ".join(f"{n} {level}" for level, n in
                                                       levels.items()) + ".", "",
                  "| section | level | requirement | binding | test |", "|---|---|---|---|---|"]
        lines += [f"| {row.section} | {row.level} | {row.requirement} | {row.binding} | "
                  f"`{row.test}` |" for row in chosen]
        lines.append("")
    lines += ["## Where the kit differs on purpose", "", "| section | what and why |",
              "|---|---|"]
    lines += [f"| {section} | {why} |" for section, why in DEVIATIONS]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    text = render(rows())
    if args.check:
        if DOC.read_text() != text:
            print(f"{DOC.relative_to(ROOT)} differs from the tests' markers: run "
                  ".venv/bin/python -m scripts.conformance", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
