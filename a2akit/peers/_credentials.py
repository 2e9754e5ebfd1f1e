"""What a call to a peer presents, in the header the kit's own schemes read (a2akit/auth):

- a peer listed in A2A_PEER_API_KEYS: its API key, the secret named there
  (a2akit.agent_secrets), in the header A2A_API_KEY_HEADER names (`x-api-key`);
- any other peer, when A2A_PEER_TOKEN_URL is set: `Authorization: Bearer` with an OAuth 2.0
  access token of the client-credentials grant (Cognito's token endpoint, the app client
  A2A_PEER_CLIENT_ID, its secret the secret PEER_CLIENT_SECRET), kept until shortly before
  it expires and shared by every peer;
- otherwise nothing (a peer that serves anonymous callers).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from a2akit.agent_secrets import SecretsError
from a2akit.peers._errors import PeerError
from a2akit.settings import ENV, Settings

if TYPE_CHECKING:
    import httpx

__all__ = ["CLIENT_SECRET", "Credentials"]

# The secret holding the app client's secret (A2A_SECRET_PEER_CLIENT_SECRET locally).
CLIENT_SECRET = "PEER_CLIENT_SECRET"
# A token is renewed this long before it expires (or at 90 % of a shorter life): a call
# never leaves with one that dies on the way.
_RENEW_BEFORE_SECONDS = 60.0
_TOKEN_TIMEOUT_SECONDS = 10.0

SecretReader = Callable[[str], str]


class Credentials:
    """The headers for each peer of `settings`. `secret` reads a secret by name (it may
    block: it runs in a thread)."""

    def __init__(self, settings: Settings, secret: SecretReader, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._api_keys = dict(settings.peer_api_keys)
        self._header = settings.api_key_header
        self._secret = secret
        self._token = (_ClientCredentials(settings, secret, clock)
                       if settings.peer_token_url else None)

    def scheme(self, peer: str) -> str:
        """How calls to `peer` authenticate: "api-key", "oauth2" or "none"."""
        if peer in self._api_keys:
            return "api-key"
        return "oauth2" if self._token is not None else "none"

    async def headers(self, peer: str) -> dict[str, str]:
        """The credential headers for a call to `peer`. Raises PeerError naming the peer when
        the secret or the token cannot be had."""
        name = self._api_keys.get(peer)
        if name is not None:
            return {self._header: await _read(self._secret, name, peer)}
        if self._token is not None:
            return {"authorization": f"Bearer {await self._token.get(peer)}"}
        return {}


async def _read(secret: SecretReader, name: str, peer: str) -> str:
    try:
        return await asyncio.to_thread(secret, name)
    except SecretsError as exc:
        raise PeerError(peer, f"has no credentials here: {exc}") from exc


class _ClientCredentials:
    """One access token of the client-credentials grant, fetched when missing or about to
    expire; concurrent callers in one event loop wait for one fetch."""

    def __init__(self, settings: Settings, secret: SecretReader,
                 clock: Callable[[], float]) -> None:
        assert settings.peer_token_url and settings.peer_client_id  # Settings checks both
        self._url = settings.peer_token_url
        self._client_id = settings.peer_client_id
        self._scopes = " ".join(settings.peer_scopes)
        self._secret = secret
        self._clock = clock
        self._value: str | None = None
        self._renew_at = 0.0
        # asyncio locks belong to one loop; a Lambda worker may run a loop per invocation.
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary())

    async def get(self, peer: str) -> str:
        if self._value is not None and self._clock() < self._renew_at:
            return self._value
        lock = self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with lock:
            if self._value is None or self._clock() >= self._renew_at:
                await self._fetch(peer)
            assert self._value is not None
            return self._value

    async def _fetch(self, peer: str) -> None:
        import httpx  # the SDK's dependency: here only once a token is needed

        client_secret = await _read(self._secret, CLIENT_SECRET, peer)
        form = {"grant_type": "client_credentials"}
        if self._scopes:
            form["scope"] = self._scopes
        started = self._clock()
        try:
            async with httpx.AsyncClient(timeout=_TOKEN_TIMEOUT_SECONDS) as http:
                response = await http.post(self._url, data=form,
                                           auth=(self._client_id, client_secret))
        except httpx.HTTPError as exc:
            raise PeerError(peer, f"cannot be called: no token from {ENV.PEER_TOKEN_URL} "
                                  f"({type(exc).__name__})") from exc
        body = _json(response)
        token, lifetime = body.get("access_token"), body.get("expires_in")
        if response.status_code != 200 or not isinstance(token, str) or not token:
            # OAuth's error code (invalid_client, invalid_scope...), never the body itself.
            error = body.get("error")
            reason = error if isinstance(error, str) and error.isascii() else "no access_token"
            raise PeerError(peer, f"cannot be called: {ENV.PEER_TOKEN_URL} answered HTTP "
                                  f"{response.status_code} ({reason[:64]})")
        seconds = float(lifetime) if isinstance(lifetime, int | float) and lifetime > 0 else 300.0
        self._value = token
        self._renew_at = started + max(seconds - _RENEW_BEFORE_SECONDS, seconds * 0.9)


def _json(response: httpx.Response) -> dict[str, object]:
    try:
        value = response.json()
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
