"""Request headers in binding-neutral form: HTTP headers or gRPC metadata, by lower-case
name. What the core reads from a request (version, credentials, extensions) it reads here."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Headers", "first_header"]


class Headers(Protocol):
    """Request headers by lower-case name (Starlette's `Headers` is one)."""

    def getlist(self, key: str) -> list[str]: ...


def first_header(headers: Headers, name: str) -> str | None:
    """The first value of header `name`, None when the request has none."""
    values = headers.getlist(name)
    return values[0] if values else None
