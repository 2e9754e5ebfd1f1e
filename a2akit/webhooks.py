"""Webhook URL checks for push configs (spec 13.2): no callbacks into private networks."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from a2akit.errors import InvalidParamsError

__all__ = ["check_webhook_url"]

_BLOCKED = [ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "240.0.0.0/4",
    "::1/128", "fc00::/7", "fe80::/10", "::/128",
)]


def _refuse(url: str, why: str) -> InvalidParamsError:
    return InvalidParamsError(f"Push notification URL {url!r} is not allowed: {why}",
                              violations=[("url", why)])


def _blocked(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return any(ip in net for net in _BLOCKED) or ip.is_multicast


async def check_webhook_url(url: str) -> None:
    """Raise InvalidParamsError unless `url` is http(s) to a public host.

    A host name is resolved and every address checked. A name that does not resolve now
    is accepted: delivery must check again at send time, since DNS can change anyway."""
    try:
        parts = urlsplit(url)
        port = parts.port  # parsed lazily: raises for "host:99999" or a non-number
    except ValueError as exc:
        raise _refuse(url, f"not a valid URL ({exc})") from exc
    if parts.scheme not in ("http", "https"):
        raise _refuse(url, "only http and https URLs are allowed")
    host = parts.hostname
    if not host:
        raise _refuse(url, "the URL has no host")
    if host == "localhost" or host.endswith(".localhost"):
        raise _refuse(url, "localhost is not allowed")
    try:
        if _blocked(host):
            raise _refuse(url, "the address is private, loopback or link-local")
        return
    except ValueError:
        pass  # a name, not an address literal
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port or 443,
                                                             type=socket.SOCK_STREAM)
    except OSError:
        return
    if any(_blocked(str(info[4][0])) for info in infos):
        raise _refuse(url, "the host resolves to a private, loopback or link-local address")
