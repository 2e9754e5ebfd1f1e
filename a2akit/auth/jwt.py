"""OAuth 2.0 / OpenID Connect bearer JWTs (RFC 6750, RFC 7519, RFC 9068; Cognito access
tokens), verified against the issuer's published keys.

Imported only when `A2A_JWT_ISSUER` is set: PyJWT and `cryptography` are loaded here and
nowhere else, so deployments without the scheme pay nothing for them at cold start.

What a token must pass, in order (each failure is AuthenticationRequiredError, and the
message says which check failed, never the token):
- at most 8 KiB, three base64url parts, a header whose `alg` is one of the configured
  asymmetric algorithms (so never `none`, never HMAC keyed with a public key) and a `kid`;
- a key with that `kid` in the issuer's JWKS (refetched once per interval for an unknown
  `kid`), whose own algorithm, when it declares one, is the token's;
- the signature; `iss` equal to the issuer; `exp` present and not past, `nbf` (if any) not
  ahead, both with `A2A_JWT_LEEWAY_SECONDS` of clock skew; `exp`, `nbf` and `iat` JSON
  numbers (RFC 7519 NumericDate: PyJWT would read "1900000000" or true as one);
- `aud` naming a configured audience, or, for tokens without `aud` (Cognito access
  tokens), `client_id` naming one;
- a principal: `sub`, or `client_id` for machine clients without one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import jwt

from a2akit.auth._cache import Reloading, SourceError
from a2akit.auth._scheme import AUTHORIZATION, bearer_token
from a2akit.auth.identity import Identity
from a2akit.auth.jwks import KeySet, discovery_url, key_set_cache
from a2akit.errors import AuthenticationRequiredError, PermissionDeniedError, UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ALL_OPERATIONS, Settings

if TYPE_CHECKING:
    from a2akit.headers import Headers

__all__ = ["JwtScheme"]

log = logging.getLogger("a2akit.auth")

_MAX_TOKEN_CHARS = 8192
_TIMES = ("exp", "nbf", "iat")  # the NumericDate claims


def _refused(why: str) -> AuthenticationRequiredError:
    log.info("bearer token refused: %s", why)
    return AuthenticationRequiredError(f"The bearer token is not valid: {why}")


class JwtScheme:
    """Bearer JWTs from one issuer; the card calls it `oidc` (OpenID Connect discovery)."""

    name = "oidc"
    challenge = 'Bearer realm="a2a"'
    header = AUTHORIZATION

    def __init__(self, settings: Settings, keys: Reloading[KeySet]) -> None:
        assert settings.jwt_issuer is not None
        self.issuer = settings.jwt_issuer
        self.audiences = frozenset(settings.jwt_audiences)
        self.algorithms = tuple(settings.jwt_algorithms)
        self.leeway = settings.jwt_leeway_seconds
        self.tenant_claim = settings.jwt_tenant_claim
        self._scopes = tuple(settings.jwt_required_scopes.get(ALL_OPERATIONS, ()))
        self._keys = keys

    @classmethod
    def from_settings(cls, settings: Settings, clock: Callable[[], float]) -> JwtScheme:
        return cls(settings, key_set_cache(settings, clock))

    def credential(self, headers: Headers) -> str | None:
        return bearer_token(headers)

    async def authenticate(self, credential: str) -> Identity:
        key, algorithm = await self._key_for(credential)
        try:
            claims: dict[str, Any] = jwt.decode(
                credential, key, algorithms=[algorithm], issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss"], "verify_aud": False,
                         "enforce_minimum_key_length": True})
        except jwt.ExpiredSignatureError:
            raise _refused("it has expired") from None
        except jwt.ImmatureSignatureError:
            raise _refused("it is not valid yet") from None
        except (jwt.InvalidIssuerError, jwt.MissingRequiredClaimError):
            raise _refused("wrong or missing issuer or expiry") from None
        except jwt.InvalidSignatureError:
            raise _refused("bad signature") from None
        except jwt.PyJWTError:
            raise _refused("malformed") from None
        if any(name in claims and not _is_numeric_date(claims[name]) for name in _TIMES):
            raise _refused("a time claim is not a number")
        if not self._audience_ok(claims):
            raise _refused("it is not meant for this agent")
        principal = claims.get("sub") or claims.get("client_id")
        if not isinstance(principal, str) or not principal:
            raise _refused("no subject")
        return Identity(owner=f"jwt:{principal}", scheme=self.name,
                        tenants=self._tenants(claims), scopes=_scopes(claims))

    async def _key_for(self, token: str) -> tuple[jwt.PyJWK, str]:
        """The issuer's key the token names, for the token's (allowed) algorithm."""
        if len(token) > _MAX_TOKEN_CHARS:
            raise _refused("too long")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refused("malformed") from None
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in self.algorithms:
            raise _refused("algorithm not allowed")
        if not isinstance(kid, str) or not kid:
            raise _refused("no key id")
        keys = self._keys.current()
        try:
            if keys is None:
                keys = await asyncio.to_thread(self._keys.get)
        except SourceError as exc:
            raise UnavailableError("The token issuer's keys cannot be loaded; retry later") \
                from exc
        if kid not in keys.keys:
            keys = await asyncio.to_thread(self._keys.refresh, keys)
        jwk = keys.keys.get(kid)
        if jwk is None:
            raise _refused("unknown key id")
        return self._parse(keys, kid, jwk, str(algorithm)), str(algorithm)

    @staticmethod
    def _parse(keys: KeySet, kid: str, jwk: Mapping[str, Any], algorithm: str) -> jwt.PyJWK:
        # A key that names its algorithm is used for that one only (RFC 7517 4.4).
        if jwk.get("alg", algorithm) != algorithm:
            raise _refused("the key is for another algorithm")
        parsed = keys.parsed.get((kid, algorithm))
        if not isinstance(parsed, jwt.PyJWK):
            try:
                parsed = jwt.PyJWK(dict(jwk), algorithm=algorithm)
            except jwt.PyJWTError:
                raise _refused("the key does not fit the algorithm") from None
            keys.parsed[(kid, algorithm)] = parsed
        return parsed

    def _audience_ok(self, claims: Mapping[str, Any]) -> bool:
        audience = claims.get("aud")
        if audience is None:
            # Cognito access tokens carry the app client in client_id instead of aud.
            audience = claims.get("client_id")
        values = [audience] if isinstance(audience, str) else audience
        return isinstance(values, list) and any(
            isinstance(value, str) and value in self.audiences for value in values)

    def _tenants(self, claims: Mapping[str, Any]) -> tuple[str, ...]:
        if self.tenant_claim is None:
            return ()
        value = claims.get(self.tenant_claim)
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not values or not all(
                isinstance(v, str) and v for v in values):
            # Tenants come from tokens here: a valid token without one may work in none.
            log.info("bearer token without the %s claim", self.tenant_claim)
            raise PermissionDeniedError(f"The token names no tenant ({self.tenant_claim})")
        return tuple(values)

    def security_scheme(self) -> pb.SecurityScheme:
        scheme = pb.SecurityScheme()
        oidc = scheme.open_id_connect_security_scheme
        oidc.open_id_connect_url = discovery_url(self.issuer)
        oidc.description = ("An access token (JWT) from this issuer, as Authorization: Bearer "
                            "TOKEN (gRPC: metadata authorization)")
        return scheme

    def card_scopes(self) -> tuple[str, ...]:
        return self._scopes


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """`scope` is a space-separated string (RFC 8693 4.2, Cognito); some issuers send `scp`
    as a list instead."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(s for s in scp if isinstance(s, str))
    if isinstance(scp, str):
        return frozenset(scp.split())
    return frozenset()


def _is_numeric_date(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
