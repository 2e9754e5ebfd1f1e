"""The documentation cannot drift from the code it describes.

- docs/settings.md lists exactly the environment variables `a2akit/settings.py` reads (a
  family such as `A2A_SECRET_<NAME>` by one row), and no page names an `A2A_*`-style variable
  the code does not read;
- docs/errors.md's table is the error catalogue, row for row;
- every relative link in README.md, docs/*.md and infra/README.md reaches a file (and
  heading) that exists;
- every `./dev COMMAND` shown names a command `./dev` knows (and `./dev bench NAME` a bench).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from google.rpc import code_pb2

from a2akit.errors import CATALOGUE
from a2akit.settings import ENV, Settings
from tests.support.processes import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "infra" / "README.md"]
SETTINGS_DOC = ROOT / "docs" / "settings.md"
ERRORS_DOC = ROOT / "docs" / "errors.md"

# Names that look like the kit's variables: A2A_*, the AWS SDK's per-service endpoints, and
# the two without a prefix. A name followed by `_*` or `[` is a family, not a variable.
_VARIABLE = re.compile(r"\b(A2A_[A-Z0-9_]*[A-Z0-9]|AWS_ENDPOINT_URL_[A-Z0-9_]*[A-Z0-9]"
                       r"|GRPC_PORT|LOG_LEVEL)\b(?![_*\[])")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_DEV_COMMAND = re.compile(r"(?<![\w/.-])\./dev +([a-z][\w-]*)(?: +([a-z][\w-]*))?")


class _Recording(Mapping[str, str]):
    """An empty environment that remembers every name looked up in it."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.names.add(name)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _variables_settings_reads() -> set[str]:
    # The ENV namespace, and whatever else from_env looks up (e.g. AWS_LAMBDA_FUNCTION_NAME).
    environ = _Recording()
    Settings.from_env(environ)
    declared = {value for name, value in vars(ENV).items() if not name.startswith("_")}
    return declared | environ.names


def _table_rows(text: str) -> list[list[str]]:
    """The cells of every table row in `text`, header and separator rows included."""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]


def _code(cell: str) -> str | None:
    """`NAME` -> NAME; None for a cell that is not one code span."""
    match = re.fullmatch(r"`([^`]+)`", cell)
    return match.group(1) if match else None


def _documented_variables() -> list[str]:
    """The first cell of every table row that is one upper-case name in a code span; a
    family's row (`A2A_SECRET_<NAME>`) stands for its prefix (`A2A_SECRET_`)."""
    names = (_code(row[0]) for row in _table_rows(SETTINGS_DOC.read_text()))
    return [name.removesuffix("<NAME>") for name in names
            if name and re.fullmatch(r"[A-Z][A-Z0-9_]*(_<NAME>)?", name)]


def _families() -> tuple[str, ...]:
    """The prefixes of the variable families settings declare (`A2A_SECRET_`): any name
    that starts with one is a member (`A2A_SECRET_MODEL_KEY`)."""
    return tuple(name for name in _variables_settings_reads() if name.endswith("_"))


def test_settings_doc_lists_every_variable_settings_reads() -> None:
    documented = _documented_variables()
    read = _variables_settings_reads()
    missing = sorted(read - set(documented))
    assert not missing, (f"{SETTINGS_DOC.relative_to(ROOT)} has no table row for "
                         f"{', '.join(missing)}, which a2akit/settings.py reads: add one")
    unknown = sorted(set(documented) - read)
    assert not unknown, (f"{SETTINGS_DOC.relative_to(ROOT)} documents {', '.join(unknown)}, "
                         "which a2akit/settings.py does not read")
    twice = sorted({name for name in documented if documented.count(name) > 1})
    assert not twice, f"{SETTINGS_DOC.relative_to(ROOT)} has two rows for {', '.join(twice)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_pages_name_only_variables_the_code_reads(page: Path) -> None:
    read = _variables_settings_reads()
    named = {match.group(1) for match in _VARIABLE.finditer(page.read_text())
             if not match.group(1).startswith(_families())}
    assert not named - read, (f"{page.relative_to(ROOT)} names {', '.join(sorted(named - read))}"
                              ", which a2akit/settings.py does not read")


def _catalogue_rows() -> dict[str, tuple[str, ...]]:
    return {error.__name__: (str(error.jsonrpc_code), code_pb2.Code.Name(error.grpc_code),
                             str(error.http_status), str(error.rest_status), error.reason)
            for error in CATALOGUE}


def _errors_doc_rows() -> dict[str, tuple[str, ...]]:
    rows = _table_rows(ERRORS_DOC.read_text())
    header = ["error", "JSON-RPC code", "gRPC status", "HTTP status", "HTTP+JSON status",
              "reason"]
    start = next(i for i, row in enumerate(rows) if row[:6] == header)
    table: dict[str, tuple[str, ...]] = {}
    for row in rows[start + 2:]:
        name = _code(row[0])
        if name is None or not name.endswith("Error"):
            break  # the next table
        assert name not in table, f"{ERRORS_DOC.relative_to(ROOT)} has two rows for {name}"
        table[name] = tuple(_code(cell) or cell for cell in row[1:6])
    return table


def test_errors_doc_is_the_catalogue() -> None:
    expected, documented = _catalogue_rows(), _errors_doc_rows()
    where = ERRORS_DOC.relative_to(ROOT)
    missing = [name for name in expected if name not in documented]
    assert not missing, f"{where} has no row for {', '.join(missing)} (a2akit/errors.py)"
    unknown = [name for name in documented if name not in expected]
    assert not unknown, f"{where} lists {', '.join(unknown)}, not in a2akit/errors.py"
    for name, row in expected.items():
        assert documented[name] == row, (
            f"{where}: {name} is {' | '.join(documented[name])}, but a2akit/errors.py says "
            f"{' | '.join(row)} (JSON-RPC code | gRPC status | HTTP status | HTTP+JSON status "
            "| reason)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors: set[str] = set()
    for line in _FENCE.sub("", page.read_text()).splitlines():
        if line.startswith("#"):
            slug = base = _slug(line.lstrip("#"))
            count = 0
            while slug in anchors:
                count += 1
                slug = f"{base}-{count}"
            anchors.add(slug)
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_reach_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_FENCE.sub("", page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no such heading in {resolved.relative_to(ROOT)})")
    assert not broken, f"{page.relative_to(ROOT)} links to {'; '.join(broken)}"


def _dev_commands() -> set[str]:
    """The subcommands of ./dev: the labels of its `case` (the `*)` usage branch aside)."""
    script = (ROOT / "dev").read_text()
    body = script[script.index('case "${1:-}" in'):script.index("esac")]
    labels = re.findall(r"^\s+([a-z][\w|-]*)\)\s*$", body, re.MULTILINE)
    return {name for label in labels for name in label.split("|")}


def test_dev_case_is_parsed() -> None:
    assert {"serve", "test", "bench", "grpc-call"} <= _dev_commands()


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_dev_commands_shown_exist(page: Path) -> None:
    known = _dev_commands()
    wrong = []
    for command, argument in _DEV_COMMAND.findall(page.read_text()):
        if command not in known:
            wrong.append(f"./dev {command} (./dev knows {', '.join(sorted(known))})")
        elif command == "bench" and argument and not (ROOT / "bench" / f"{argument}.py").is_file():
            wrong.append(f"./dev bench {argument} (no bench/{argument}.py)")
    assert not wrong, f"{page.relative_to(ROOT)} shows {'; '.join(wrong)}"
