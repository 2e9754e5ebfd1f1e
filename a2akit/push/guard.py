"""The SSRF guard for webhooks: which URLs, addresses and header values a push may use.

A webhook URL comes from a client, and the kit POSTs to it from inside the cloud, so a URL
could aim at the metadata service (169.254.169.254), a VPC neighbour or loopback. The guard
is applied twice: when a config is created (`check_config`, an InvalidParamsError for the
client) and before every delivery attempt (`resolve_target`), because DNS can change in
between. The sender connects to the address checked here, never to a second lookup's
answer. Standard library only: the Lambda front door imports it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from a2akit.errors import InvalidParamsError

if TYPE_CHECKING:
    from a2akit.generated import a2a_pb2 as pb
    from a2akit.settings import Settings

__all__ = ["Blocked", "Policy", "Resolve", "Target", "Unresolved", "check_config",
           "request_headers", "resolve_target", "system_resolve"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolve = Callable[[str, int], Awaitable[list[str]]]


@dataclasses.dataclass(frozen=True)
class Policy:
    """What the deployment allows beyond public HTTPS targets (development and tests)."""

    allow_http: bool = False
    allowed_networks: tuple[Network, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(allow_http=settings.push_allow_http,
                   allowed_networks=tuple(ipaddress.ip_network(cidr, strict=False)
                                          for cidr in settings.push_allow_cidrs))


class Blocked(Exception):
    """A webhook target or header value the guard refuses; str(exc) says why (no secrets in
    it, not even the URL, whose query may hold one). `field` names the config field."""

    def __init__(self, why: str, field: str = "url") -> None:
        super().__init__(why)
        self.field = field


class Unresolved(Blocked):
    """The host name did not resolve (or resolved to nothing). Refused at config time
    (fail closed); at send time it may be a passing DNS failure, so the sender retries it."""


@dataclasses.dataclass(frozen=True)
class Target:
    """Where one attempt goes: the URL's host for Host, SNI and the certificate check, and
    the checked address for the connection."""

    scheme: str
    host: str
    port: int
    target: str
    address: str


# Checked besides `not is_global`, which Python versions draw differently: the ranges the
# spec and the SDK list, plus multicast (224/4 and ff00::/8 count as "global") and NAT64's
# local-use prefix.
_BLOCKED = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "::/128", "::1/128", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
    "fc00::/7", "fe80::/10", "ff00::/8",
))
# IPv6 forms that carry an IPv4 address a gateway may turn into an IPv4 connection: judged
# by that address (IPv4-mapped ::ffff:0:0/96 is handled by `ipv4_mapped`).
_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SCHEMES = ("https", "http")
# Host names as DNS has them (after IDNA); anything else (spaces, %, control characters)
# is refused before it reaches a resolver or a Host header.
_HOST_NAME = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$")
# A last label that is a number makes getaddrinfo (and browsers) read the whole host as an
# IPv4 address in an odd form: 2130706433, 0x7f.1, 127.1, 0177.0.0.1.
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
# RFC 3986 reserved characters and "%" (an escape the client already wrote) stay as they are.
_URL_SAFE = "/%:@!$&'()*+,;=-._~"
# RFC 9110 token: an auth scheme is one word.
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def _embedded_ipv4(ip: Address) -> ipaddress.IPv4Address | None:
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or ip in _COMPATIBLE:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _allowed(ip: Address, policy: Policy) -> bool:
    if any(ip in net for net in policy.allowed_networks):
        return True
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        return _allowed(embedded, policy)
    return ip.is_global and not ip.is_multicast and not any(ip in net for net in _BLOCKED)


def _address(text: str) -> Address:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise Blocked("the host resolved to something that is not an IP address") from None


async def system_resolve(host: str, port: int) -> list[str]:
    """The host's addresses from the system resolver, in its order, without duplicates.
    Raises OSError (socket.gaierror) when the name does not resolve."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def _resolve(host: str, port: int, resolve: Resolve) -> list[Address]:
    try:
        found = await resolve(host, port)
    except (OSError, UnicodeError, ValueError):
        found = []
    if not found:
        raise Unresolved(f"the host {host} does not resolve")
    return [_address(a) for a in found]


def _host(raw: str | None) -> str:
    """The URL's host, normalized; raises Blocked for one that is no DNS name or address."""
    if not raw:
        raise Blocked("the URL has no host")
    if _is_literal(raw):
        return raw
    try:
        host = raw.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise Blocked("the host is not a valid name") from None
    if not _HOST_NAME.match(host):
        raise Blocked("the host is not a valid name")
    if _NUMERIC_LABEL.match(host.rstrip(".").rsplit(".", 1)[-1]):
        raise Blocked("the host is an IP address in a non-standard form")
    return host


async def resolve_target(url: str, policy: Policy, resolve: Resolve = system_resolve) -> Target:
    """Parse `url`, resolve its host once, and check every address it resolves to.

    Raises Blocked for a scheme other than https (or http with `policy.allow_http`), user
    info, a bad port or host, or any address outside the public internet and outside
    `policy.allowed_networks`; Unresolved when the name does not resolve. An address literal
    is checked without calling `resolve`. Returns the first address, to connect to."""
    try:
        parts = urlsplit(url)
        port = parts.port  # parsed lazily: raises for "host:99999" or a non-number
    except ValueError:
        raise Blocked("the URL is not valid") from None
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES or (scheme == "http" and not policy.allow_http):
        raise Blocked("only https URLs are allowed" if not policy.allow_http
                      else "only http and https URLs are allowed")
    if "@" in parts.netloc:
        raise Blocked("the URL must not carry user information (credentials go in "
                      "authentication)")
    if port == 0:
        raise Blocked("the URL's port must be between 1 and 65535")
    host = _host(parts.hostname)
    port = port or (443 if scheme == "https" else 80)
    if _is_literal(host):
        addresses = [ipaddress.ip_address(host)]
    else:
        addresses = await _resolve(host, port, resolve)
    # Every address: a client could pick any of them, and a name with one public and one
    # private address is a classic way around a check of the first.
    if not all(_allowed(ip, policy) for ip in addresses):
        raise Blocked(f"the host {host} is or resolves to a private, loopback, link-local or "
                      "otherwise non-public address")
    # Percent-encoded here, so the request line can carry nothing but URL characters.
    target = quote(parts.path or "/", safe=_URL_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=_URL_SAFE + "?")
    return Target(scheme=scheme, host=host, port=port, target=target,
                  address=str(addresses[0]))


def _header_value(value: str, field: str) -> str:
    # CR/LF would split the header (request smuggling); other controls and characters
    # beyond Latin-1 are not valid in a header value at all.
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or ord(c) > 0xFF for c in value):
        raise Blocked(f"{field} must not contain control or non-Latin-1 characters", field)
    return value


def request_headers(config: pb.TaskPushNotificationConfig) -> dict[str, str]:
    """The credential headers of a webhook POST (bindings.md 6).

    Authorization: `<scheme> <credentials>` when `config.authentication` has both (a scheme
    alone sends nothing, as the SDK does); X-A2A-Notification-Token when `config.token` is
    set. Raises Blocked, naming the field, for a value that cannot be a header value."""
    auth = config.authentication
    scheme = _header_value(auth.scheme, "authentication.scheme")
    credentials = _header_value(auth.credentials, "authentication.credentials")
    token = _header_value(config.token, "token")
    if scheme and not _TOKEN.match(scheme):
        raise Blocked("authentication.scheme must be one word, like Bearer",
                      "authentication.scheme")
    headers = {}
    if scheme and credentials:
        headers["Authorization"] = f"{scheme} {credentials}"
    if token:
        headers["X-A2A-Notification-Token"] = token
    return headers


async def check_config(config: pb.TaskPushNotificationConfig, policy: Policy,
                       resolve: Resolve = system_resolve) -> None:
    """Config time: raise InvalidParamsError, with a violation per refused field (`url`,
    `authentication.scheme`, `authentication.credentials`, `token`), for a URL
    `resolve_target` refuses (a host that does not resolve included: fail closed) and for
    header values `request_headers` refuses."""
    violations = []
    try:
        request_headers(config)
    except Blocked as exc:
        violations.append((exc.field, str(exc)))
    try:
        await resolve_target(config.url, policy, resolve)
    except Blocked as exc:
        violations.append((exc.field, str(exc)))
    if violations:
        fields = ", ".join(field for field, _ in violations)
        raise InvalidParamsError(f"Push notification config not allowed: {fields}: "
                                 f"{violations[0][1]}", violations=violations)
