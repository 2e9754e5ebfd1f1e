"""scripts/same_path_params.py reads a coverage file with test contexts, as coverage writes it."""

from __future__ import annotations

from pathlib import Path

import coverage

from scripts.same_path_params import dimension, same_path_groups, signatures


def _data(path: Path, runs: dict[str, set[tuple[int, int]]]) -> Path:
    data = coverage.CoverageData(basename=str(path))
    for context, arcs in runs.items():
        data.set_context(context)
        data.add_arcs({"/kit/a2akit/module.py": arcs})
    data.write()
    return path


def test_cases_with_the_same_arcs_are_grouped_and_a_dimension_is_compared(tmp_path: Path) -> None:
    same, other = {(1, 2), (2, 3)}, {(1, 2), (2, 4)}
    found = signatures(_data(tmp_path / ".coverage", {
        "t.py::test_a[asgi-x]|run": other,
        "t.py::test_a[apigw_http_v2-x]|run": same,
        "t.py::test_a[function_url-x]|run": same,
        "t.py::test_a[function_url-y]|run": other,
        "t.py::test_a[apigw_http_v2-y]|run": same,
        "t.py::test_a[asgi-x]|setup": same,  # not the call: left out
        "t.py::test_b|run": same,  # not parametrized
    }))
    assert same_path_groups(found) == [
        ("t.py::test_a", ["[apigw_http_v2-x]", "[apigw_http_v2-y]", "[function_url-x]"]),
        ("t.py::test_a", ["[asgi-x]", "[function_url-y]"])]
    assert dimension(found, "function_url", "apigw_http_v2") == {"t.py::test_a": (1, 1)}
