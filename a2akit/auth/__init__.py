"""Who is calling: both bindings resolve the caller through `Authenticator.authenticate`
(from `a2akit.caller.resolve_call`) before any lookup, and the agent card declares the very
schemes that check them (`Authenticator.declare`).

Schemes, each on when its settings are (docs/authentication.md):

    jwt.py          OAuth 2.0 / OpenID Connect bearer JWTs          A2A_JWT_ISSUER, ...
    api_keys.py     API keys in a header, stored as SHA-256 hashes  A2A_API_KEYS[_SECRET|_PARAMETER]
    dev_tokens.py   plain bearer tokens, local development only     A2A_BEARER_TOKENS
    platform.py     the caller API Gateway already verified         (Lambda front doors)
    anonymous       one shared owner                                A2A_ALLOW_ANONYMOUS=true

Which identity a request gets, first match wins:

1. Credentials for an in-process scheme (a bearer token, the API-key header): that scheme
   decides, and refuses invalid ones even when a platform identity or anonymous access
   would have let the request in. The in-process check is the one both bindings share, so
   one token or key names the same owner, tenants and scopes through the HTTP API, the
   Function URL and gRPC; a platform identity exists only on some front doors, so letting it
   win would split one caller's tasks by the door they came through.
2. The platform identity (an authorizer's or IAM's), when the front door verified one.
3. Any other credential (an Authorization header of another scheme, a bearer token with no
   bearer scheme configured) is refused: what the kit cannot check is never ignored, not
   even next to a valid API key. Only behind a front door that verified the caller is an
   Authorization header left unread: it was that platform's credential (SigV4 for IAM).
4. Anonymous when allowed; otherwise AuthenticationRequiredError.

Credentials for two schemes at once are refused. JWT and API-key modules (and with them
PyJWT, cryptography, boto3) are imported only when configured.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from a2akit import metrics
from a2akit.auth._scheme import AUTHORIZATION, Scheme
from a2akit.auth.identity import ANONYMOUS, Identity
from a2akit.auth.platform import platform_principal
from a2akit.errors import AuthenticationRequiredError, PermissionDeniedError
from a2akit.generated import a2a_pb2 as pb
from a2akit.headers import first_header
from a2akit.settings import ALL_OPERATIONS, ENV, Settings

if TYPE_CHECKING:
    from a2akit.headers import Headers

__all__ = ["ANONYMOUS", "Authenticator", "Identity", "Scheme", "platform_principal"]

log = logging.getLogger("a2akit.auth")

_DEFAULT_CHALLENGE = 'Bearer realm="a2a"'


class Authenticator:
    """The configured schemes and what they require; one per process."""

    def __init__(self, schemes: Sequence[Scheme], *, allow_anonymous: bool = False,
                 required_scopes: Mapping[str, Sequence[str]] | None = None) -> None:
        self.schemes = tuple(schemes)
        self.allow_anonymous = allow_anonymous
        self._required_scopes = {name: frozenset(scopes)
                                 for name, scopes in (required_scopes or {}).items()}

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Callable[[], float] = time.monotonic,
                      aws_client: Any = None) -> Authenticator:
        """The schemes `settings` turn on. `aws_client` replaces the boto3 client of an AWS
        API-key source (tests point one at a local server). Logs a warning for each
        setting that is for local development only.

        Raises SettingsError when an inline API-key list does not parse."""
        schemes: list[Scheme] = []
        if settings.jwt_enabled:
            from a2akit.auth.jwt import JwtScheme

            schemes.append(JwtScheme.from_settings(settings, clock))
        if settings.api_keys_enabled:
            from a2akit.auth.api_keys import ApiKeyScheme

            schemes.append(ApiKeyScheme.from_settings(settings, clock, aws_client))
        if settings.bearer_tokens:
            from a2akit.auth.dev_tokens import DevTokenScheme

            log.warning("%s is set: plain-text bearer tokens are for local development only;"
                        " use API keys or JWTs in any deployment", ENV.BEARER_TOKENS)
            schemes.append(DevTokenScheme(settings.bearer_tokens))
        if settings.allow_anonymous:
            log.warning("%s=true: requests without credentials are served, all as one "
                        "shared owner; for local development only", ENV.ALLOW_ANONYMOUS)
        return cls(schemes, allow_anonymous=settings.allow_anonymous,
                   required_scopes=settings.jwt_required_scopes)

    def warn_if_nobody_can_call(self) -> None:
        """Log one WARNING when no caller can be authenticated in process: no scheme and no
        anonymous access. Run by the entry points no platform identity reaches (gRPC,
        ./dev serve); behind API Gateway an authorizer or IAM may be the only scheme."""
        if self.schemes or self.allow_anonymous:
            return
        log.warning("no caller can be authenticated: every call will be refused "
                    "(UNAUTHENTICATED / HTTP 401); set %s and %s, or one of %s, %s, %s, or "
                    "%s=true for local development", ENV.JWT_ISSUER, ENV.JWT_AUDIENCE,
                    ENV.API_KEYS, ENV.API_KEYS_SECRET, ENV.API_KEYS_PARAMETER,
                    ENV.ALLOW_ANONYMOUS)

    @property
    def challenge(self) -> str:
        """The WWW-Authenticate value of a 401: one challenge per configured scheme."""
        return ", ".join(s.challenge for s in self.schemes) or _DEFAULT_CHALLENGE

    async def authenticate(self, headers: Headers,
                           verified_principal: str | None = None) -> Identity:
        """The caller of a request (the order is in the module docstring).

        Raises AuthenticationRequiredError for missing or invalid credentials,
        PermissionDeniedError for valid ones that allow nothing (a JWT without the configured
        tenant claim), UnavailableError when keys cannot be loaded now."""
        presented = [(scheme, credential) for scheme in self.schemes
                     if (credential := scheme.credential(headers)) is not None]
        if len(presented) > 1:
            _refused("SeveralSchemes")
            raise AuthenticationRequiredError("Send the credentials of one scheme only")
        unread_authorization = first_header(headers, AUTHORIZATION) is not None and not any(
            scheme.header == AUTHORIZATION for scheme, _ in presented)
        if presented:
            scheme, credential = presented[0]
            if unread_authorization and not verified_principal:
                raise _not_accepted()
            try:
                return await scheme.authenticate(credential)
            except AuthenticationRequiredError:
                _refused("InvalidCredentials")
                raise
            except PermissionDeniedError:
                _refused("Forbidden")
                raise
        if verified_principal:
            return Identity(owner=f"principal:{verified_principal}", scheme="platform")
        if unread_authorization:
            raise _not_accepted()
        if self.allow_anonymous:
            return Identity(owner=ANONYMOUS, scheme="anonymous")
        _refused("NoCredentials")
        raise AuthenticationRequiredError()

    def authorize(self, identity: Identity, operation: str) -> None:
        """Check the scopes `operation` requires (`A2A_JWT_REQUIRED_SCOPES`) against a token's.
        Identities without scopes (API keys, platform, anonymous) are not scoped.

        Raises PermissionDeniedError naming the missing scopes."""
        if identity.scopes is None:
            return
        required = (self._required_scopes.get(ALL_OPERATIONS, frozenset())
                    | self._required_scopes.get(operation, frozenset()))
        missing = required - identity.scopes
        if missing:
            log.info("%s refused: the token lacks scopes %s", operation, sorted(missing))
            _refused("MissingScope")
            raise PermissionDeniedError(
                f"The token lacks a scope {operation} requires",
                metadata={"requiredScopes": " ".join(sorted(required))})

    def declare(self, card: pb.AgentCard) -> None:
        """Write `securitySchemes` and `securityRequirements` into `card`: each configured
        scheme as an alternative (with the scopes every operation needs), and an empty
        requirement when anonymous callers are served too."""
        for scheme in self.schemes:
            card.security_schemes[scheme.name].CopyFrom(scheme.security_scheme())
            requirement = card.security_requirements.add()
            requirement.schemes[scheme.name].list.extend(scheme.card_scopes())
        if self.schemes and self.allow_anonymous:
            card.security_requirements.add()


def _refused(reason: str) -> None:
    """The AuthRefused metric, by reason (never by caller)."""
    metrics.count(metrics.AUTH_REFUSED, ("Reason", reason))


def _not_accepted() -> AuthenticationRequiredError:
    _refused("SchemeNotConfigured")
    log.info("credentials refused: an Authorization scheme that is not configured")
    return AuthenticationRequiredError("These credentials are not accepted here")
