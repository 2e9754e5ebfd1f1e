"""Who a request comes from, once a scheme has verified it, and the tenants it may work in."""

from __future__ import annotations

import dataclasses

from a2akit.errors import PermissionDeniedError

__all__ = ["ANONYMOUS", "Identity"]

ANONYMOUS = "anonymous"


@dataclasses.dataclass(frozen=True)
class Identity:
    """A verified caller.

    `owner` is the store partition: the scheme's prefix and the principal (`jwt:SUB`,
    `key:PRINCIPAL`, `principal:PLATFORM-ID`, `token:NAME`, or `anonymous`), so two schemes
    can never name the same owner. `tenants` are those the credentials bind the caller to,
    the first being the default; empty means the caller is bound to none. `scopes` are the
    OAuth scopes of a token; None for schemes that carry none.
    """

    owner: str
    scheme: str
    tenants: tuple[str, ...] = ()
    scopes: frozenset[str] | None = None

    @property
    def anonymous(self) -> bool:
        return self.owner == ANONYMOUS

    def tenant(self, requested: str) -> str:
        """The tenant a request naming `requested` ("" when none) works in (bindings.md 9).

        A caller bound to tenants works in its first one when it names none, and may name
        only its own; a caller bound to none uses the value as sent, an opaque partition.

        Raises PermissionDeniedError for a tenant the caller does not belong to, with the
        same answer whether that tenant exists or not (the kit keeps no list of tenants)."""
        if not self.tenants or requested in self.tenants:
            return requested
        if not requested:
            return self.tenants[0]
        raise PermissionDeniedError("These credentials do not allow the requested tenant")
