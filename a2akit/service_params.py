"""Service parameters (spec 3.2.6): A2A-Version and A2A-Extensions, the same on every binding.

JSON-RPC reads them from HTTP headers, gRPC from metadata; both call these functions."""

from __future__ import annotations

import re

from a2akit.errors import VersionNotSupportedError

__all__ = ["LEGACY_VERSION", "SUPPORTED_VERSION", "check_legacy_version", "check_version",
           "parse_extensions"]

SUPPORTED_VERSION = "1.0"
LEGACY_VERSION = "0.3"  # served on the same endpoints by a2akit.compat03 (0.3 method names)
_SUPPORTED = tuple(int(part) for part in SUPPORTED_VERSION.split("."))  # (major, minor)
# ASCII digits only (\d would match other scripts' digits, which int() then accepts).
_VERSION = re.compile(r"^([0-9]{1,9})\.([0-9]{1,9})(?:\.[0-9]{1,9})?$")


def check_version(value: str | None) -> None:
    """Accept 1.0 with or without a patch part (ignored, spec 3.6); raise
    VersionNotSupportedError for anything else. Another minor (1.1) is refused too: its
    client may rely on semantics a 1.0 server would silently drop (bindings.md 7). A missing
    or empty value means 0.3 (spec 3.6.2), which this interface does not serve."""
    if value == SUPPORTED_VERSION:
        return  # what every 1.0 client sends, accepted without the pattern (a hot path)
    requested = (value or "").strip() or "0.3"
    match = _VERSION.match(requested)
    if match is None or (int(match.group(1)), int(match.group(2))) != _SUPPORTED:
        raise VersionNotSupportedError(
            f"A2A version {requested} is not supported; this interface serves "
            f"{SUPPORTED_VERSION}",
            metadata={"requestedVersion": requested, "supportedVersions": SUPPORTED_VERSION},
        )


def check_legacy_version(value: str | None) -> None:
    """For a request of the 0.3 family (a 0.3 method name or service): accept no value, an
    empty one or 0.3 (any patch); raise VersionNotSupportedError for anything else, such as
    a 1.0 client calling a 0.3 method. -32009 lies in the range 0.3 leaves to servers."""
    requested = (value or "").strip()
    match = _VERSION.match(requested or LEGACY_VERSION)
    if match is None or (match.group(1), match.group(2)) != ("0", "3"):
        raise VersionNotSupportedError(
            f"A2A version {requested} is not supported by the A2A 0.3 methods; send no "
            f"A2A-Version (or {LEGACY_VERSION}) with them, or use the {SUPPORTED_VERSION} "
            "methods",
            metadata={"requestedVersion": requested,
                      "supportedVersions": f"{LEGACY_VERSION},{SUPPORTED_VERSION}"},
        )


def parse_extensions(values: list[str]) -> tuple[str, ...]:
    """URIs from one or more comma-separated A2A-Extensions values, in order, deduplicated."""
    seen: dict[str, None] = {}
    for value in values:
        for uri in value.split(","):
            if uri.strip():
                seen.setdefault(uri.strip(), None)
    return tuple(seen)
