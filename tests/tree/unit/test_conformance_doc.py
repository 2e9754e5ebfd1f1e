"""docs/conformance.md is what the tests' `@pytest.mark.spec` markers say (scripts/conformance.py):
a marked test removed, a marker changed or the page edited by hand fails here."""

from __future__ import annotations

from pathlib import Path

from scripts.conformance import DOC, render, rows


def test_the_page_is_generated_from_the_markers() -> None:
    assert DOC.read_text() == render(rows()), (
        "docs/conformance.md differs from the markers: run .venv/bin/python -m "
        "scripts.conformance")


def test_a_removed_marked_test_changes_the_page(tmp_path: Path) -> None:
    tests = tmp_path / "tests" / "jsonrpc"
    tests.mkdir(parents=True)
    (tests / "test_x.py").write_text(
        "import pytest\n\n@pytest.mark.spec('3.1.3', 'MUST', 'GetTask finds tasks')\n"
        "def test_get() -> None:\n    pass\n")
    (row,) = rows(tmp_path)
    assert (row.section, row.level, row.binding) == ("3.1.3", "MUST", "JSON-RPC")
    assert "GetTask finds tasks" in render([row])
    (tests / "test_x.py").write_text("def test_get() -> None:\n    pass\n")
    assert rows(tmp_path) == []


def test_every_row_names_a_level_the_spec_uses() -> None:
    assert {row.level for row in rows()} <= {"MUST", "SHOULD", "MAY"}
