"""The caller of one request, resolved once for every binding.

A binding hands over what it received in binding-neutral form: its headers (HTTP headers or
gRPC metadata, lower-case names) and the identity its platform verified, if any. The core
checks the version, authenticates, and reads the extensions the client activated, in that
order (the reference order of checks), and returns a `Call`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from a2akit.auth import Authenticator, Identity
from a2akit.headers import Headers, first_header
from a2akit.service_params import (
    LEGACY_VERSION,
    SUPPORTED_VERSION,
    check_legacy_version,
    check_version,
    parse_extensions,
)
from a2akit.store.base import Scope

__all__ = ["Call", "Headers", "resolve_call"]

@dataclasses.dataclass(frozen=True)
class Call:
    """Who calls and with which extensions; `active_extensions` are the ones this agent
    supports, which the binding echoes back (A2A-Extensions)."""

    identity: Identity
    extensions: tuple[str, ...] = ()
    active_extensions: tuple[str, ...] = ()
    # When the platform ends this request (`time.monotonic()`; a Lambda invocation's end,
    # a2akit.execution.budget), None elsewhere: blocking and streaming calls answer before it.
    deadline: float | None = None
    # The protocol generation the caller speaks: "1.0", or "0.3" for a request of the 0.3
    # family (a2akit.compat03), which is served by the same operations.
    protocol_version: str = SUPPORTED_VERSION
    # The scopes worked out so far, by tenant: a request's checks and its operation ask for
    # the same one, and it is worked out once.
    _scopes: dict[str, Scope] = dataclasses.field(default_factory=dict, init=False, repr=False,
                                                  compare=False)

    @property
    def owner(self) -> str:
        return self.identity.owner

    def scope(self, tenant: str) -> Scope:
        """Where a request naming `tenant` reads and writes: the tenant it may work in (see
        `Identity.tenant`) and the caller. Raises PermissionDeniedError for a tenant the
        caller does not belong to."""
        scope = self._scopes.get(tenant)
        if scope is None:
            scope = self._scopes[tenant] = Scope(tenant=self.identity.tenant(tenant),
                                                 owner=self.identity.owner)
        return scope


async def resolve_call(
    authenticator: Authenticator,
    supported_extensions: Collection[str],
    headers: Headers,
    *,
    verified_principal: str | None = None,
    version: str | None = None,
    deadline: float | None = None,
    protocol_version: str = SUPPORTED_VERSION,
) -> Call:
    """Version, then caller, then extensions. `version` is a binding's fallback when the
    header is absent (JSON-RPC accepts an `A2A-Version` query parameter); `deadline` is the
    platform's end of the request (`Call.deadline`). `protocol_version` is the family the
    binding routed the request to: "0.3" for 0.3 method names, whose callers send no header
    and name extensions in `X-A2A-Extensions` as well.

    Raises VersionNotSupportedError, then what `Authenticator.authenticate` raises."""
    requested = first_header(headers, "a2a-version") or version
    extension_values = headers.getlist("a2a-extensions")
    if protocol_version == LEGACY_VERSION:
        check_legacy_version(requested)
        extension_values = headers.getlist("x-a2a-extensions") + extension_values
    else:
        check_version(requested)
    identity = await authenticator.authenticate(headers, verified_principal)
    extensions = parse_extensions(extension_values)
    active = tuple(uri for uri in extensions if uri in supported_extensions)
    return Call(identity=identity, extensions=extensions, active_extensions=active,
                deadline=deadline, protocol_version=protocol_version)
