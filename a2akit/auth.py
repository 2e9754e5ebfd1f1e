"""Who is calling: the owner every binding resolves the same way, before any lookup.

Sources, strongest first: a principal the platform already verified (an API Gateway
authorizer: JWT `sub`, a Lambda authorizer's principalId, or an IAM caller ARN), then a
bearer token from settings, then - only when `A2A_ALLOW_ANONYMOUS=true` - one shared
anonymous owner. Everything else is refused with AuthenticationRequiredError.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

from a2akit.errors import AuthenticationRequiredError
from a2akit.settings import Settings

__all__ = ["ANONYMOUS", "authenticate", "platform_principal"]

ANONYMOUS = "anonymous"


def authenticate(
    settings: Settings,
    authorization: str | None,
    verified_principal: str | None = None,
) -> str:
    """The owner for these credentials. Raises AuthenticationRequiredError when they are
    missing (and anonymous callers are not allowed) or not valid."""
    if verified_principal:
        return f"principal:{verified_principal}"
    if authorization:
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() == "bearer" and credentials:
            owner = _match_token(settings.bearer_tokens, credentials.strip())
            if owner is not None:
                return f"token:{owner}"
        raise AuthenticationRequiredError("The credentials are not valid")
    if settings.allow_anonymous:
        return ANONYMOUS
    raise AuthenticationRequiredError()


def platform_principal(event: Mapping[str, Any] | None) -> str | None:
    """The caller API Gateway already verified (its authorizer context), if any.

    `event` is the Lambda event (API Gateway HTTP API v2 or Function URL shape)."""
    request_context = (event or {}).get("requestContext") or {}
    authorizer = request_context.get("authorizer") or {}
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    principal = (claims.get("sub") or (authorizer.get("lambda") or {}).get("principalId")
                 or (authorizer.get("iam") or {}).get("userArn"))
    return str(principal) if principal else None


def _match_token(tokens: Mapping[str, str], presented: str) -> str | None:
    # Compare every token in constant time, so timing does not reveal a prefix match.
    found = None
    for token, owner in tokens.items():
        if hmac.compare_digest(token.encode(), presented.encode()):
            found = owner
    return found
