"""One webhook delivery: POST a notification, retrying with backoff, through the SSRF guard.

Each attempt resolves the URL's host again and checks every address (`guard.resolve_target`),
then connects to the checked address itself, so a DNS answer that changed since the config
was made (or between two lookups: DNS rebinding) cannot aim the POST elsewhere. TLS is still
verified for the URL's host name: the request carries it as Host and as SNI, and httpcore
checks the certificate against the SNI name.

Needs httpx (the `push` extra); only the dispatcher imports this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import email.utils
import http.cookiejar
import random as _random
import ssl
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("a2akit.push.sender needs httpx: pip install 'a2a-aws-kit[push]'") from exc

from a2akit.generated import a2a_pb2 as pb
from a2akit.push.guard import (
    Blocked,
    Policy,
    Resolve,
    Target,
    Unresolved,
    request_headers,
    resolve_target,
    system_resolve,
)
from a2akit.settings import Settings
from a2akit.trace import HEADER as TRACE_HEADER
from a2akit.trace import current_traceparent

__all__ = ["CONTENT_TYPE", "Delivered", "Dropped", "Failed", "Outcome", "RetryPolicy", "Sender"]

CONTENT_TYPE = "application/a2a+json"  # bindings.md 6: the HTTP+JSON payload's type
_MAX_CLIENTS = 64  # pooled clients, one per (scheme, host, port, address)
_DRAIN_BYTES = 64 * 1024  # a short answer is read, so its connection can be reused


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    backoff_seconds: float = 1.0  # full jitter: random() * min(cap, backoff * 2**(n-1))
    backoff_cap_seconds: float = 30.0  # also the longest Retry-After honoured
    timeout_seconds: float = 10.0  # one request, start to end

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(attempts=settings.push_attempts, backoff_seconds=settings.push_backoff_seconds,
                   backoff_cap_seconds=settings.push_backoff_cap_seconds,
                   timeout_seconds=settings.push_timeout_seconds)


@dataclasses.dataclass(frozen=True)
class Delivered:
    attempts: int
    status: int


@dataclasses.dataclass(frozen=True)
class Dropped:
    """The config was deleted (`still_wanted()` said False) before a retry."""

    attempts: int


@dataclasses.dataclass(frozen=True)
class Failed:
    """`error` is the last attempt's, human readable, without URL or credentials; `status`
    the last HTTP status if a response came. `attempts` counts tries made (0: the config's
    header values were refused, nothing was sent)."""

    attempts: int
    error: str
    status: int | None


Outcome = Delivered | Dropped | Failed


@dataclasses.dataclass
class _Try:
    """One attempt that did not deliver: why, and whether and when to try again."""

    error: str
    status: int | None = None
    retry: bool = True
    retry_after: float | None = None


@dataclasses.dataclass
class _Pooled:
    client: httpx.AsyncClient
    users: int = 0
    retired: bool = False


class Sender:
    """Delivers notifications; one per process, shared by concurrent deliveries."""

    def __init__(self, policy: Policy, retry: RetryPolicy, *, resolve: Resolve = system_resolve,
                 ssl_context: ssl.SSLContext | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 random: Callable[[], float] = _random.random) -> None:
        """`ssl_context` None: the default verification (certifi's roots); tests pass one
        that trusts their CA. `sleep` and `random` are injectable to make backoff testable."""
        self.policy = policy
        self.retry = retry
        self._resolve = resolve
        self._verify: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True
        self._sleep = sleep
        self._random = random
        # Pooled clients keyed by (scheme, host name, port, address), most recently used
        # last. httpx pools connections by origin, which is the address here: keyed by the
        # address alone, a TLS connection verified for one host name could carry another
        # name's request. Bounded; an evicted client closes when its last user is done.
        self._clients: OrderedDict[tuple[str, str, int, str], _Pooled] = OrderedDict()

    async def deliver(self, config: pb.TaskPushNotificationConfig, body: bytes, *,
                      still_wanted: Callable[[], Awaitable[bool]] | None = None,
                      deadline: float | None = None,
                      content_type: str = CONTENT_TYPE) -> Outcome:
        """POST `body` (of `content_type`) to `config.url` with the config's credential
        headers.

        Success is any 2xx. Retried, up to `retry.attempts` tries: connection errors,
        timeouts, a name that does not resolve, 5xx and 429 (Retry-After honoured, up to the
        backoff cap). Not retried: other 4xx, 3xx (redirects are never followed), a target
        the guard blocks, refused TLS certificates. Before each retry `still_wanted()` is
        awaited (its errors propagate); False gives Dropped. `deadline` (event loop time):
        no wait or request runs past it. Returns an Outcome; never raises for a delivery
        failure."""
        try:
            headers = request_headers(config)
        except Blocked as exc:
            return Failed(0, f"{exc.field} refused: {exc}", None)
        headers["Content-Type"] = content_type
        # The task's trace goes on at the webhook (W3C Trace Context), when this hop has one.
        traceparent = current_traceparent()
        if traceparent is not None:
            headers[TRACE_HEADER] = traceparent
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            timeout = self.retry.timeout_seconds
            if deadline is not None:
                timeout = min(timeout, deadline - loop.time())
            if timeout <= 0:
                return Failed(attempt, "out of time before the next attempt", None)
            attempt += 1
            outcome = await self._attempt(config.url, headers, body, timeout)
            if isinstance(outcome, int):
                return Delivered(attempt, outcome)
            if not outcome.retry or attempt >= self.retry.attempts:
                return Failed(attempt, outcome.error, outcome.status)
            wait = self._wait(attempt, outcome.retry_after)
            if deadline is not None and loop.time() + wait >= deadline:
                return Failed(attempt, f"out of time for another attempt (last: {outcome.error})",
                              outcome.status)
            await self._sleep(wait)
            if still_wanted is not None and not await still_wanted():
                return Dropped(attempt)

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        cap = self.retry.backoff_cap_seconds
        if retry_after is not None:
            return min(cap, retry_after)
        # Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): retries of
        # many deliveries failing together spread out instead of arriving in waves.
        return self._random() * min(cap, self.retry.backoff_seconds * 2.0 ** (attempt - 1))

    async def _attempt(self, url: str, headers: dict[str, str], body: bytes,
                       timeout: float) -> int | _Try:
        """One try: the 2xx status, or why not."""
        try:
            target = await resolve_target(url, self.policy, self._resolve)
        except Unresolved as exc:
            return _Try(str(exc))  # possibly a passing DNS failure
        except Blocked as exc:
            return _Try(f"blocked: {exc}", retry=False)
        try:
            # A total bound besides httpx's per-phase ones: a receiver trickling bytes
            # would otherwise hold a delivery for ever.
            async with asyncio.timeout(timeout), self._client(target) as client:
                return await self._post(client, target, headers, body)
        except (TimeoutError, httpx.TimeoutException):
            return _Try(f"timed out after {timeout:g} s")
        except httpx.TransportError as exc:
            if _certificate_refused(exc):
                return _Try(f"TLS certificate refused: {_reason(exc)}", retry=False)
            return _Try(f"connection failed: {_reason(exc)}")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            # Not a passing condition (a request httpx refuses to build): trying again
            # cannot help.
            return _Try(f"request refused by the HTTP client: {_reason(exc)}", retry=False)

    async def _post(self, client: httpx.AsyncClient, target: Target, headers: dict[str, str],
                    body: bytes) -> int | _Try:
        address = f"[{target.address}]" if ":" in target.address else target.address
        host = f"[{target.host}]" if ":" in target.host else target.host
        default_port = 443 if target.scheme == "https" else 80
        request = client.build_request(
            "POST", f"{target.scheme}://{address}:{target.port}{target.target}", content=body,
            headers={**headers, "Host": host if target.port == default_port
                     else f"{host}:{target.port}"},
            extensions={"sni_hostname": target.host})
        response = await client.send(request, stream=True)
        try:
            drained = 0
            async for chunk in response.aiter_raw():
                drained += len(chunk)
                if drained > _DRAIN_BYTES:
                    break
        finally:
            await response.aclose()
        status = response.status_code
        if 200 <= status < 300:
            return status
        if status == 429 or status >= 500:
            return _Try(f"HTTP {status}", status,
                        retry_after=_retry_after(response.headers.get("Retry-After")))
        if 300 <= status < 400:
            return _Try(f"HTTP {status}: redirects are not followed", status, retry=False)
        return _Try(f"HTTP {status}", status, retry=False)

    @contextlib.asynccontextmanager
    async def _client(self, target: Target) -> AsyncIterator[httpx.AsyncClient]:
        key = (target.scheme, target.host, target.port, target.address)
        pooled = self._clients.pop(key, None) or _Pooled(self._new_client())
        self._clients[key] = pooled
        pooled.users += 1
        while len(self._clients) > _MAX_CLIENTS:
            _, old = self._clients.popitem(last=False)
            old.retired = True
            if not old.users:
                await old.client.aclose()
        try:
            yield pooled.client
        finally:
            pooled.users -= 1
            if pooled.retired and not pooled.users:
                await pooled.client.aclose()

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            verify=self._verify,
            # Never a proxy or netrc from the environment: the guard checked the address
            # this connects to, not a proxy's.
            trust_env=False,
            follow_redirects=False,  # a Location could point anywhere the guard never saw
            timeout=self.retry.timeout_seconds,
            # Cookies a receiver sets must not ride along with another task's notification.
            cookies=http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(
                allowed_domains=[])),
            headers={"User-Agent": "a2a-aws-kit push"},
            limits=httpx.Limits(max_connections=10, max_keepalive_connections=4))

    async def aclose(self) -> None:
        """Close every pooled connection; the Sender can still be used afterwards."""
        clients, self._clients = list(self._clients.values()), OrderedDict()
        for pooled in clients:
            pooled.retired = True
            if not pooled.users:
                await pooled.client.aclose()


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds or an HTTP date (RFC 9110 10.2.3); None when absent or bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _certificate_refused(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _reason(exc: BaseException) -> str:
    """The innermost cause's message: httpx's own wraps it without adding to it."""
    while (exc.__cause__ or exc.__context__) is not None and not str(exc):
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return str(exc) or type(exc).__name__
