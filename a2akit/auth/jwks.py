"""The issuer's signing keys: found through its discovery document (or a configured JWKS
URL), fetched over HTTPS with a timeout and a size bound, and kept in a `Reloading` cache.

The fetch is the standard library's urllib, run in a worker thread by the scheme (see
`a2akit.auth._cache`): two small GETs every few minutes do not justify an HTTP client
dependency, and a thread keeps the event loop free while they run.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from a2akit.auth._cache import Reloading, SourceError
from a2akit.settings import ENV, Settings, SettingsError, check_fetch_url

__all__ = ["KeySet", "discovery_url", "key_set_cache", "load_key_set"]

_MAX_DOCUMENT_BYTES = 512 * 1024
_DISCOVERY_PATH = "/.well-known/openid-configuration"


@dataclasses.dataclass(frozen=True)
class KeySet:
    """Signing keys by key id, as the issuer published them (JWK objects), and the keys a
    scheme parsed from them, by (key id, algorithm): parsed once per key set."""

    keys: Mapping[str, Mapping[str, Any]]
    parsed: dict[tuple[str, str], Any] = dataclasses.field(default_factory=dict, compare=False)


def discovery_url(issuer: str) -> str:
    """OpenID Connect Discovery 1.0, section 4: the issuer plus the well-known path."""
    return issuer.rstrip("/") + _DISCOVERY_PATH


def _fetch_json(url: str, timeout: float) -> dict[str, Any]:
    request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                   "User-Agent": "a2akit"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(_MAX_DOCUMENT_BYTES + 1)
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise SourceError(f"GET {url} failed: {type(exc).__name__}: {exc}") from exc
    if len(body) > _MAX_DOCUMENT_BYTES:
        raise SourceError(f"GET {url}: the document exceeds {_MAX_DOCUMENT_BYTES} bytes")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise SourceError(f"GET {url}: not JSON") from exc
    if not isinstance(document, dict):
        raise SourceError(f"GET {url}: not a JSON object")
    return document


def _jwks_url(settings: Settings) -> str:
    if settings.jwt_jwks_url:
        return settings.jwt_jwks_url
    assert settings.jwt_issuer is not None
    document = _fetch_json(discovery_url(settings.jwt_issuer), settings.auth_timeout_seconds)
    # Discovery 4.3: the document must name the very issuer it was fetched for.
    if document.get("issuer") != settings.jwt_issuer:
        raise SourceError(f"the discovery document of {settings.jwt_issuer} names another "
                          "issuer")
    url = document.get("jwks_uri")
    if not isinstance(url, str):
        raise SourceError(f"the discovery document of {settings.jwt_issuer} has no jwks_uri")
    try:
        check_fetch_url(url, "jwks_uri")
    except SettingsError as exc:
        raise SourceError(str(exc)) from exc
    return url


def load_key_set(settings: Settings) -> KeySet:
    """Discover (unless configured) and fetch the key set. Blocking.

    Keys without a `kid`, or marked for another use than signatures, are left out."""
    url = _jwks_url(settings)
    document = _fetch_json(url, settings.auth_timeout_seconds)
    keys = document.get("keys")
    if not isinstance(keys, list):
        raise SourceError(f"GET {url}: no keys array")
    usable = {
        key["kid"]: key for key in keys
        if isinstance(key, dict) and isinstance(key.get("kid"), str)
        and key.get("use", "sig") == "sig"
    }
    return KeySet(usable)


def key_set_cache(settings: Settings, clock: Callable[[], float]) -> Reloading[KeySet]:
    name = f"the signing keys of {settings.jwt_issuer} ({ENV.JWT_ISSUER})"
    return Reloading(lambda: load_key_set(settings), name=name,
                     max_age=settings.jwks_max_age_seconds,
                     min_interval=settings.auth_refresh_seconds, clock=clock)
