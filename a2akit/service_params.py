"""Service parameters (spec 3.2.6): A2A-Version and A2A-Extensions, the same on every binding.

JSON-RPC reads them from HTTP headers, gRPC from metadata; both call these functions."""

from __future__ import annotations

import re

from a2akit.errors import VersionNotSupportedError

__all__ = ["SUPPORTED_VERSION", "check_version", "parse_extensions"]

SUPPORTED_VERSION = "1.0"
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?$")


def check_version(value: str | None) -> None:
    """Accept any 1.x (a patch part is ignored, spec 3.6). A missing or empty value means 0.3
    (spec 3.6.2), which this interface does not serve: VersionNotSupportedError."""
    requested = (value or "").strip() or "0.3"
    match = _VERSION.match(requested)
    if match is None or match.group(1) != "1":
        raise VersionNotSupportedError(
            f"A2A version {requested} is not supported; this interface serves "
            f"{SUPPORTED_VERSION}",
            metadata={"requestedVersion": requested, "supportedVersions": SUPPORTED_VERSION},
        )


def parse_extensions(values: list[str]) -> tuple[str, ...]:
    """URIs from one or more comma-separated A2A-Extensions values, in order, deduplicated."""
    seen: dict[str, None] = {}
    for value in values:
        for uri in value.split(","):
            if uri.strip():
                seen.setdefault(uri.strip(), None)
    return tuple(seen)
