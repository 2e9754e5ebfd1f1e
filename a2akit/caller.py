"""The caller of one request, resolved once for every binding.

A binding hands over what it received in binding-neutral form: its headers (HTTP headers or
gRPC metadata, lower-case names) and the identity its platform verified, if any. The core
checks the version, authenticates, and reads the extensions the client activated, in that
order (the reference order of checks), and returns a `Call`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Protocol

from a2akit.auth import Authenticator, Identity
from a2akit.service_params import check_version, parse_extensions
from a2akit.store.base import Scope

__all__ = ["Call", "Headers", "resolve_call"]


class Headers(Protocol):
    """Request headers by lower-case name (Starlette's `Headers` is one)."""

    def getlist(self, key: str) -> list[str]: ...


@dataclasses.dataclass(frozen=True)
class Call:
    """Who calls and with which extensions; `active_extensions` are the ones this agent
    supports, which the binding echoes back (A2A-Extensions)."""

    identity: Identity
    extensions: tuple[str, ...] = ()
    active_extensions: tuple[str, ...] = ()
    # When the platform ends this request (`time.monotonic()`; a Lambda invocation's end,
    # a2akit.budget), None elsewhere: blocking and streaming calls answer before it.
    deadline: float | None = None

    @property
    def owner(self) -> str:
        return self.identity.owner

    def scope(self, tenant: str) -> Scope:
        """Where a request naming `tenant` reads and writes: the tenant it may work in (see
        `Identity.tenant`) and the caller. Raises PermissionDeniedError for a tenant the
        caller does not belong to."""
        return Scope(tenant=self.identity.tenant(tenant), owner=self.identity.owner)


async def resolve_call(
    authenticator: Authenticator,
    supported_extensions: Collection[str],
    headers: Headers,
    *,
    verified_principal: str | None = None,
    version: str | None = None,
    deadline: float | None = None,
) -> Call:
    """Version, then caller, then extensions. `version` is a binding's fallback when the
    header is absent (JSON-RPC accepts an `A2A-Version` query parameter); `deadline` is the
    platform's end of the request (`Call.deadline`).

    Raises VersionNotSupportedError, then what `Authenticator.authenticate` raises."""
    check_version(_first(headers, "a2a-version") or version)
    identity = await authenticator.authenticate(headers, verified_principal)
    extensions = parse_extensions(headers.getlist("a2a-extensions"))
    active = tuple(uri for uri in extensions if uri in supported_extensions)
    return Call(identity=identity, extensions=extensions, active_extensions=active,
                deadline=deadline)


def _first(headers: Headers, key: str) -> str | None:
    values = headers.getlist(key)
    return values[0] if values else None
