"""`A2A_BEARER_TOKENS`: plain bearer tokens from an environment variable, for local
development only. The kit logs a warning at start whenever they are set; deployments use
API keys (stored as hashes) or JWTs instead, and the CDK app never sets this variable."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from a2akit.auth._scheme import AUTHORIZATION, bearer_token
from a2akit.auth.identity import Identity
from a2akit.errors import AuthenticationRequiredError
from a2akit.generated import a2a_pb2 as pb

if TYPE_CHECKING:
    from a2akit.headers import Headers

__all__ = ["DevTokenScheme"]

log = logging.getLogger("a2akit.auth")


class DevTokenScheme:
    """Bearer tokens compared with a fixed list; the card calls it `bearer`."""

    name = "bearer"
    challenge = 'Bearer realm="a2a"'
    header = AUTHORIZATION

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._tokens = [(token.encode(), owner) for token, owner in tokens.items()]

    def credential(self, headers: Headers) -> str | None:
        return bearer_token(headers)

    async def authenticate(self, credential: str) -> Identity:
        presented = credential.encode()
        # Every token is compared, so timing reveals neither a match nor a prefix.
        found = None
        for token, owner in self._tokens:
            if hmac.compare_digest(token, presented):
                found = owner
        if found is None:
            log.info("bearer token refused: not a configured development token")
            raise AuthenticationRequiredError("The bearer token is not valid")
        return Identity(owner=f"token:{found}", scheme=self.name)

    def security_scheme(self) -> pb.SecurityScheme:
        scheme = pb.SecurityScheme()
        scheme.http_auth_security_scheme.scheme = "Bearer"
        return scheme

    def card_scopes(self) -> tuple[str, ...]:
        return ()
