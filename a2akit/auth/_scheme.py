"""What every in-process scheme provides, and how credentials are read from headers."""

from __future__ import annotations

from typing import Protocol

from a2akit.auth.identity import Identity
from a2akit.generated import a2a_pb2 as pb
from a2akit.headers import Headers, first_header

__all__ = ["AUTHORIZATION", "Scheme", "bearer_token"]

AUTHORIZATION = "authorization"


class Scheme(Protocol):
    """One way of presenting credentials. The agent card is written from the same object
    that checks them, so it declares exactly what is enforced."""

    # The key of this scheme in the card's `securitySchemes`.
    name: str
    # The WWW-Authenticate challenge a 401 names this scheme with (RFC 9110 11.6.1).
    challenge: str
    # The header (= gRPC metadata key, lower case) its credential comes in.
    header: str

    def credential(self, headers: Headers) -> str | None:
        """The credential this scheme reads, if the request carries one (even empty)."""
        ...

    async def authenticate(self, credential: str) -> Identity:
        """Raises AuthenticationRequiredError when the credential is not valid, and
        UnavailableError when what it is checked against cannot be loaded now."""
        ...

    def security_scheme(self) -> pb.SecurityScheme: ...

    def card_scopes(self) -> tuple[str, ...]:
        """Scopes the card's requirement lists for this scheme (every operation needs them)."""
        ...


def bearer_token(headers: Headers) -> str | None:
    """The token of `Authorization: Bearer TOKEN` (RFC 6750 2.1; the scheme name is
    case-insensitive); None when there is no Authorization header or it names another scheme."""
    authorization = first_header(headers, AUTHORIZATION)
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None
