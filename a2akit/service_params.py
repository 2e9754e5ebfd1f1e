"""Service parameters (spec 3.2.6): A2A-Version and A2A-Extensions, the same on every binding.

JSON-RPC reads them from HTTP headers, gRPC from metadata; both call these functions."""

from __future__ import annotations

import re

from a2akit.errors import VersionNotSupportedError

__all__ = ["SUPPORTED_VERSION", "check_version", "parse_extensions"]

SUPPORTED_VERSION = "1.0"
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


def parse_extensions(values: list[str]) -> tuple[str, ...]:
    """URIs from one or more comma-separated A2A-Extensions values, in order, deduplicated."""
    seen: dict[str, None] = {}
    for value in values:
        for uri in value.split(","):
            if uri.strip():
                seen.setdefault(uri.strip(), None)
    return tuple(seen)
