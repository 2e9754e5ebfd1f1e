"""Parametrized tests whose cases take the very same path through the kit: the evidence for
removing a parametrisation that only multiplies identical checks (docs/architecture.md,
"Tests").

    ./dev test --cov --cov-context=test          # a .coverage with each test's arcs
    .venv/bin/python -m scripts.same_path_params [--dimension function_url=apigw_http_v2]

Groups the cases of each parametrized test by the arcs they ran (the kit's code only, as
`[tool.coverage.run]` in pyproject.toml measures it) and prints the groups of two or more.
With `--dimension A=B`, prints instead, per test, how many of its cases with A in their id ran
exactly the arcs of the same case with B: a dimension whose every case matches changes
nothing in the kit's path. Identical arcs do not make cases duplicates by themselves (two
hostile inputs can take one Python path through different C parsers): read the groups.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import re
import sqlite3
from pathlib import Path

_RUN = "|run"


def signatures(database: Path) -> dict[str, str]:
    """Test node id -> a digest of the arcs its call phase ran."""
    connection = sqlite3.connect(database)
    contexts = dict(connection.execute("select id, context from context"))
    arcs: dict[int, list[tuple[int, int, int]]] = collections.defaultdict(list)
    for file_id, context_id, start, end in connection.execute(
            "select file_id, context_id, fromno, tono from arc"):
        arcs[context_id].append((file_id, start, end))
    connection.close()
    return {contexts[context][:-len(_RUN)]: hashlib.sha1(repr(sorted(found)).encode()).hexdigest()
            for context, found in arcs.items() if contexts[context].endswith(_RUN)}


def same_path_groups(found: dict[str, str]) -> list[tuple[str, list[str]]]:
    by_test: dict[str, dict[str, list[str]]] = collections.defaultdict(
        lambda: collections.defaultdict(list))
    for node, digest in found.items():
        match = re.fullmatch(r"(.*?)(\[.*\])?", node)
        assert match is not None
        if match.group(2):
            by_test[match.group(1)][digest].append(match.group(2))
    return sorted((test, sorted(cases)) for test, digests in by_test.items()
                  for cases in digests.values() if len(cases) > 1)


def dimension(found: dict[str, str], this: str, that: str) -> dict[str, tuple[int, int]]:
    """Test -> (cases with `this` matching their `that` twin, cases that do not)."""
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for node, digest in found.items():
        if f"[{this}" in node or f"-{this}" in node:
            twin = found.get(node.replace(this, that))
            counts[node.split("[")[0]][0 if twin == digest else 1] += 1
    return {test: (same, other) for test, (same, other) in sorted(counts.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(".coverage"))
    parser.add_argument("--dimension", help="A=B: A's cases against their B twins")
    args = parser.parse_args()
    found = signatures(args.data)
    if args.dimension:
        this, that = args.dimension.split("=", 1)
        for test, (same, other) in dimension(found, this, that).items():
            print(f"{same:4} same {other:4} other  {test}")
        return
    for test, cases in same_path_groups(found):
        print(f"{test}: {' '.join(cases)}")


if __name__ == "__main__":
    main()
