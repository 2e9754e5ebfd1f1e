"""The SSRF guard: blocked ranges, odd address forms, resolution, URL shape, header values.

No test resolves a public name (no internet here): names go through an injected resolver,
except `localhost` and numeric forms, which the system resolver answers locally."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.push.guard import (
    Blocked,
    Policy,
    Target,
    Unresolved,
    check_config,
    request_headers,
    resolve_target,
    system_resolve,
)
from a2akit.settings import Settings

pytestmark = pytest.mark.anyio

PUBLIC = "93.184.216.34"
STRICT = Policy()

BLOCKED_ADDRESSES = [
    # IPv4: loopback, private, link-local (cloud metadata), CGNAT, unspecified, IETF and
    # benchmark ranges, documentation, multicast, reserved, broadcast
    "127.0.0.1", "127.255.255.254", "10.0.0.1", "10.255.255.255", "172.16.0.1",
    "172.31.255.255", "192.168.0.1", "192.168.255.255", "169.254.169.254", "169.254.0.1",
    "100.64.0.1", "100.127.255.254", "0.0.0.0", "0.1.2.3", "192.0.0.8", "198.18.0.1",
    "198.19.255.255", "192.0.2.1", "198.51.100.7", "203.0.113.10", "224.0.0.1",
    "239.255.255.250", "240.0.0.1", "255.255.255.255",
    # IPv6: loopback, unspecified, unique local, link-local, multicast, documentation,
    # discard, IETF protocol assignments (Teredo), NAT64 local use
    "[::1]", "[::]", "[fc00::1]", "[fd12:3456::1]", "[fe80::1]", "[febf::1]", "[ff02::1]",
    "[ff0e::1]", "[2001:db8::1]", "[100::1]", "[2001::1]", "[64:ff9b:1::a]",
    # IPv6 forms carrying a blocked IPv4 address: mapped, compatible, NAT64, 6to4
    "[::ffff:127.0.0.1]", "[::ffff:169.254.169.254]", "[::ffff:10.0.0.1]", "[::ffff:7f00:1]",
    "[::127.0.0.1]", "[::169.254.169.254]", "[::a9fe:a9fe]",
    "[64:ff9b::127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[64:ff9b::10.0.0.1]",
    "[2002:7f00:1::]", "[2002:a9fe:a9fe::1]", "[2002:a00:1::]", "[2002:c0a8:101::1]",
]
# Forms getaddrinfo (like browsers) reads as 127.0.0.1 or 169.254.169.254.
ODD_FORMS = ["2130706433", "0x7f000001", "0x7f.1", "127.1", "0177.0.0.1", "0x7f.0.0.1",
             "017700000001", "127.0.0.1.", "2852039166", "0xa9.0xfe.0xa9.0xfe"]
ALLOWED_ADDRESSES = [PUBLIC, "8.8.8.8", "[2606:4700:4700::1111]", f"[::ffff:{PUBLIC}]",
                     "[64:ff9b::5db8:d822]", "[2002:5db8:d822::1]"]


def resolver(table: dict[str, list[str]], calls: list[str] | None = None):  # type: ignore[no-untyped-def]
    """A resolver answering from `table`; unknown names fail as DNS does."""

    async def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    return resolve


@pytest.mark.parametrize("host", BLOCKED_ADDRESSES)
async def test_blocked_address_literals(host: str) -> None:
    with pytest.raises(Blocked, match="non-public"):
        await resolve_target(f"https://{host}/hook", STRICT, resolver({}))


@pytest.mark.parametrize("host", ODD_FORMS)
async def test_odd_ipv4_forms_are_blocked(host: str) -> None:
    with pytest.raises(Blocked):
        await resolve_target(f"https://{host}/hook", STRICT)
    # Even where the guard took such a form for a name, its resolved address is checked:
    with pytest.raises(Blocked, match="non-public"):
        await resolve_target("https://odd.test/", STRICT,
                             resolver({"odd.test": await system_resolve(host.rstrip("."), 443)}))


@pytest.mark.parametrize("host", ALLOWED_ADDRESSES)
async def test_public_address_literals_pass_without_resolving(host: str) -> None:
    calls: list[str] = []
    target = await resolve_target(f"https://{host}:8443/a/b?c=d#frag", STRICT,
                                  resolver({}, calls))
    literal = host.strip("[]")
    assert target == Target("https", literal, 8443, "/a/b?c=d",
                            str(ipaddress.ip_address(literal)))
    assert calls == []


@pytest.mark.parametrize("address", ["169.254.169.254", "127.0.0.1", "10.1.2.3", "100.64.1.1",
                                     "::1", "fd00::1", "::ffff:192.168.1.1"])
async def test_a_name_resolving_to_a_blocked_address_is_blocked(address: str) -> None:
    with pytest.raises(Blocked, match=r"evil\.test"):
        await resolve_target("https://evil.test/", STRICT, resolver({"evil.test": [address]}))


@pytest.mark.parametrize("addresses", [[PUBLIC, "10.0.0.1"], ["10.0.0.1", PUBLIC],
                                       [PUBLIC, "8.8.8.8", "::1"]])
async def test_every_resolved_address_is_checked(addresses: list[str]) -> None:
    with pytest.raises(Blocked):
        await resolve_target("https://mixed.test/", STRICT, resolver({"mixed.test": addresses}))


async def test_a_public_name_resolves_once_to_its_first_address() -> None:
    calls: list[str] = []
    target = await resolve_target("https://Hook.Test/h?q=1", STRICT,
                                  resolver({"hook.test": [PUBLIC, "8.8.8.8"]}, calls))
    assert target == Target("https", "hook.test", 443, "/h?q=1", PUBLIC)
    assert calls == ["hook.test"]


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "localhost:8080"])
async def test_localhost_is_blocked_through_the_real_resolver(host: str) -> None:
    with pytest.raises(Blocked):
        await resolve_target(f"https://{host}/", STRICT)


@pytest.mark.parametrize(("answer", "unresolved"), [(None, True), ([], True),
                                                     (["not-an-address"], False)])
async def test_a_name_without_usable_addresses_is_refused(answer: list[str] | None,
                                                          unresolved: bool) -> None:
    table = {} if answer is None else {"gone.test": answer}
    with pytest.raises(Blocked) as caught:
        await resolve_target("https://gone.test/", STRICT, resolver(table))
    assert isinstance(caught.value, Unresolved) is unresolved


async def test_an_unresolvable_name_is_refused_at_config_time() -> None:
    config = pb.TaskPushNotificationConfig(task_id="t", url="https://gone.test/")
    with pytest.raises(InvalidParamsError) as caught:
        await check_config(config, STRICT, resolver({}))
    assert [field for field, _ in caught.value.violations] == ["url"]
    assert "does not resolve" in caught.value.violations[0][1]


async def test_http_needs_allow_http() -> None:
    with pytest.raises(Blocked, match="https"):
        await resolve_target(f"http://{PUBLIC}/", STRICT)
    target = await resolve_target(f"http://{PUBLIC}/", Policy(allow_http=True))
    assert (target.scheme, target.port) == ("http", 80)


@pytest.mark.parametrize("url", [f"ftp://{PUBLIC}/", "file:///etc/passwd", f"gopher://{PUBLIC}/",
                                 "javascript:alert(1)", f"ws://{PUBLIC}/", f"//{PUBLIC}/", "",
                                 "https://", "https:///path", "hook.test/path"])
async def test_only_http_and_https_urls_with_a_host(url: str) -> None:
    with pytest.raises(Blocked):
        await resolve_target(url, Policy(allow_http=True), resolver({}))


@pytest.mark.parametrize("url", [f"https://user:s3cret@{PUBLIC}/", f"https://user@{PUBLIC}/",
                                 f"https://{PUBLIC}@127.0.0.1/", f"https://:s3cret@{PUBLIC}/"])
async def test_user_info_is_refused(url: str) -> None:
    with pytest.raises(Blocked, match="user information") as caught:
        await resolve_target(url, STRICT)
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize("port", ["0", "65536", "99999", "-1", "abc", "1.5"])
async def test_bad_ports_are_refused(port: str) -> None:
    with pytest.raises(Blocked):
        await resolve_target(f"https://{PUBLIC}:{port}/", STRICT)


@pytest.mark.parametrize("host", ["bad host.test", "a..b", "hook.test%00", "x_y$.test"])
async def test_malformed_host_names_are_refused(host: str) -> None:
    with pytest.raises(Blocked):
        await resolve_target(f"https://{host}/", STRICT, resolver({host: [PUBLIC]}))


async def test_the_request_target_is_percent_encoded() -> None:
    target = await resolve_target(f"https://{PUBLIC}/a b/\u00e9?x=1 2&y=%41", STRICT)
    assert target.target == "/a%20b/%C3%A9?x=1%202&y=%41"


async def test_allowed_networks_let_private_targets_through() -> None:
    loopback = Policy(allowed_networks=(ipaddress.ip_network("127.0.0.1/32"),))
    assert (await resolve_target("https://127.0.0.1:9/", loopback)).address == "127.0.0.1"
    assert (await resolve_target("https://[::ffff:127.0.0.1]/", loopback)).port == 443
    hook = await resolve_target("https://hook.test/", loopback,
                                resolver({"hook.test": ["127.0.0.1"]}))
    assert hook.address == "127.0.0.1"
    for outside in ("https://127.0.0.2/", "https://169.254.169.254/", "https://[::1]/"):
        with pytest.raises(Blocked):
            await resolve_target(outside, loopback)
    settings = Settings(push_allow_cidrs=("127.0.0.0/8", "::1/128"), push_allow_http=True)
    everywhere = Policy.from_settings(settings)
    assert everywhere.allow_http
    assert (await resolve_target("http://localhost:9/x", everywhere)).host == "localhost"


# --- header values ----------------------------------------------------------------------------


def test_request_headers() -> None:
    both = pb.TaskPushNotificationConfig(
        url="https://x.test/", token="tok",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="abc"))
    assert request_headers(both) == {"Authorization": "Bearer abc",
                                     "X-A2A-Notification-Token": "tok"}
    scheme_only = pb.TaskPushNotificationConfig(
        authentication=pb.AuthenticationInfo(scheme="Bearer"))
    assert request_headers(scheme_only) == {}
    assert request_headers(pb.TaskPushNotificationConfig()) == {}
    latin1 = pb.TaskPushNotificationConfig(token="caf\u00e9")
    assert request_headers(latin1) == {"X-A2A-Notification-Token": "caf\u00e9"}


BAD_VALUES = ["a\r\nX-Evil: 1", "a\nb", "a\rb", "a\x00b", "a\tb", "a\x1bb", "a\x7fb", "a\x85b",
              "\u20ac", "\U0001f600"]


@pytest.mark.parametrize("value", BAD_VALUES)
@pytest.mark.parametrize("field", ["authentication.scheme", "authentication.credentials",
                                   "token"])
async def test_header_values_with_control_characters_are_refused(field: str,
                                                                  value: str) -> None:
    config = pb.TaskPushNotificationConfig(
        task_id="t", url=f"https://{PUBLIC}/", token="tok",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="abc"))
    if field == "token":
        config.token = value
    else:
        setattr(config.authentication, field.split(".")[1], value)
    with pytest.raises(Blocked) as blocked:
        request_headers(config)
    assert blocked.value.field == field
    with pytest.raises(InvalidParamsError) as caught:
        await check_config(config, STRICT)
    assert [f for f, _ in caught.value.violations] == [field]
    assert value not in caught.value.message and value not in str(caught.value.violations)


async def test_a_scheme_must_be_one_word() -> None:
    config = pb.TaskPushNotificationConfig(
        url=f"https://{PUBLIC}/",
        authentication=pb.AuthenticationInfo(scheme="Bearer x", credentials="abc"))
    with pytest.raises(InvalidParamsError) as caught:
        await check_config(config, STRICT)
    assert [f for f, _ in caught.value.violations] == ["authentication.scheme"]


async def test_check_config_names_every_refused_field() -> None:
    good = pb.TaskPushNotificationConfig(
        task_id="t", url=f"https://{PUBLIC}/hook", token="tok",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="abc"))
    await check_config(good, STRICT)
    bad = pb.TaskPushNotificationConfig(task_id="t", url="https://169.254.169.254/",
                                        token="a\nb")
    with pytest.raises(InvalidParamsError) as caught:
        await check_config(bad, STRICT)
    assert [f for f, _ in caught.value.violations] == ["token", "url"]
