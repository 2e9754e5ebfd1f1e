"""A test's folder is its tier (tests/conftest.py), so the folder must be true: a test outside
a `process/` folder starts no process, and a test in a `unit/` folder asks for no emulator."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.processes import ROOT

TESTS = ROOT / "tests"
# Calls that start a process: subprocess's, asyncio's, and tests.support.processes' helpers.
_STARTS = {"subprocess.run", "subprocess.Popen", "subprocess.check_output",
           "asyncio.create_subprocess_exec", "fresh_python", "running"}
_EMULATORS = {"ddb_endpoint", "ddb_client", "moto_endpoint", "own_client"}


def _calls(path: Path) -> set[str]:
    """The called names, dotted once (`subprocess.run`, `fresh_python`)."""
    return {ast.unparse(node.func) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call)}


def _parameters(path: Path) -> set[str]:
    return {arg.arg for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for arg in node.args.args}


def test_no_test_outside_a_process_folder_starts_a_process() -> None:
    outside = [path for path in TESTS.rglob("test_*.py")
               if "process" not in path.relative_to(TESTS).parts]
    starting = sorted(f"{path.relative_to(ROOT)}: {sorted(_calls(path) & _STARTS)}"
                      for path in outside if _calls(path) & _STARTS)
    assert starting == []


def test_no_unit_test_asks_for_an_emulator() -> None:
    units = [path for path in TESTS.rglob("test_*.py")
             if "unit" in path.relative_to(TESTS).parts]
    assert units, "no unit/ folder found"
    asking = sorted(f"{path.relative_to(ROOT)}: {sorted(_parameters(path) & _EMULATORS)}"
                    for path in units if _parameters(path) & _EMULATORS)
    assert asking == []
