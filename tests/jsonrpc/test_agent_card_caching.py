"""The public agent card's HTTP caching: ETag, Cache-Control and Last-Modified, and 304 for
conditional requests (RFC 9110 section 13), through the ASGI app and the Mangum handler."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator

import pytest

from http_service.agent_cards import AGENT_CARD_PATH
from tests.jsonrpc.client import KINDS, Client, serve
from tests.support.harness import memory_operations


@pytest.fixture(params=KINDS)
def card(request: pytest.FixtureRequest) -> Iterator[tuple[Client, dict[str, str]]]:
    for client in serve(str(request.param), memory_operations()):
        first = client.get(AGENT_CARD_PATH)
        assert first.status == 200
        yield client, first.headers


def test_card_has_last_modified(card: tuple[Client, dict[str, str]]) -> None:
    _, headers = card
    modified = email.utils.parsedate_to_datetime(headers["last-modified"])
    assert abs(modified.timestamp() - time.time()) < 60
    assert headers["last-modified"].endswith(" GMT")
    assert "max-age" in headers["cache-control"] and headers["etag"].startswith('"')


def _card_status(client: Client, headers: dict[str, str]) -> int:
    reply = client.get(AGENT_CARD_PATH, headers)
    if reply.status == 304:
        assert reply.body == b"" and reply.headers["etag"] and reply.headers["last-modified"]
        assert reply.headers["cache-control"]
    return reply.status


@pytest.mark.spec(
    "8.6.1", "SHOULD", "The agent card carries an ETag and answers 304 to If-None-Match")
def test_card_if_none_match(card: tuple[Client, dict[str, str]]) -> None:
    client, headers = card
    etag = headers["etag"]
    assert _card_status(client, {"If-None-Match": etag}) == 304
    assert _card_status(client, {"If-None-Match": "W/" + etag}) == 304  # weak comparison
    assert _card_status(client, {"If-None-Match": f'"other", {etag}'}) == 304
    assert _card_status(client, {"If-None-Match": f'"a,b",W/{etag} '}) == 304
    assert _card_status(client, {"If-None-Match": "*"}) == 304
    assert _card_status(client, {"If-None-Match": '"other"'}) == 200
    assert _card_status(client, {"If-None-Match": etag.strip('"')}) == 200  # not an etag


def test_card_if_modified_since(card: tuple[Client, dict[str, str]]) -> None:
    client, headers = card
    modified = email.utils.parsedate_to_datetime(headers["last-modified"]).timestamp()
    assert _card_status(client, {"If-Modified-Since": headers["last-modified"]}) == 304
    as_rfc850 = time.strftime("%A, %d-%b-%y %H:%M:%S GMT", time.gmtime(modified))
    assert _card_status(client, {"If-Modified-Since": as_rfc850}) == 304  # obsolete format
    earlier = email.utils.formatdate(modified - 3600, usegmt=True)
    assert _card_status(client, {"If-Modified-Since": earlier}) == 200
    assert _card_status(client, {"If-Modified-Since": "yesterday"}) == 200
    future = email.utils.formatdate(time.time() + 86_400, usegmt=True)
    assert _card_status(client, {"If-Modified-Since": future}) == 200  # invalid: in the future


def test_card_if_none_match_wins_over_if_modified_since(
        card: tuple[Client, dict[str, str]]) -> None:
    client, headers = card
    assert _card_status(client, {"If-None-Match": '"other"',
                                 "If-Modified-Since": headers["last-modified"]}) == 200
    earlier = email.utils.formatdate(time.time() - 86_400, usegmt=True)
    assert _card_status(client, {"If-None-Match": headers["etag"],
                                 "If-Modified-Since": earlier}) == 304
