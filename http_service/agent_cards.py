"""The public agent card routes, one card for both generations (facts 4.3, 4.1):

    {path}/.well-known/agent-card.json   the 1.0 card, which lists the 0.3 interfaces after
                                         the 1.0 ones and carries the 0.3 card's members
                                         where the 1.0 card has none (`url`,
                                         `protocolVersion`, flat `securitySchemes` entries
                                         with `type`, `security`, ...): a 0.3 client reading
                                         this path (a2a-sdk 0.3, @a2a-js/sdk 0.3) finds what
                                         it needs; 1.0 parsers ignore the unknown members.
    {path}/.well-known/agent.json        the pure 0.3 card, where older 0.3 clients look.

Both come from the one card message the settings built (a2akit.card), so they declare the
same interfaces and security schemes. Each document is built on its first request, as the
0.3 view needs a2akit.compat03, which no 1.0 request loads, and then served with a strong
ETag and Last-Modified (304 on a match) like any static file.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from a2akit.generated import a2a_pb2 as pb
from a2akit.protojson import dumps, to_json
from http_service.conditional import not_modified

__all__ = ["AGENT_CARD_PATH", "JWKS_PATH", "LEGACY_CARD_PATH", "card_route", "jwks_route",
           "legacy_card", "merged_card"]

AGENT_CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"
JWKS_PATH = "/.well-known/jwks.json"  # the card signing key's public half, when signing is on
_JSON = "application/json"



def merged_card(card: pb.AgentCard) -> dict[str, Any]:
    """The 1.0 card with the 0.3 card's members added where absent (never replacing one)."""
    from a2akit.compat03.card03 import from_core_card
    from a2akit.compat03.card_json import card_json, merge_into

    return merge_into(to_json(card), card_json(from_core_card(card)))


def legacy_card(card: pb.AgentCard) -> dict[str, Any]:
    """The 0.3 card: the same card in the 0.3 schema's shape."""
    from a2akit.compat03.card03 import from_core_card
    from a2akit.compat03.card_json import card_json

    return card_json(from_core_card(card))


def card_route(card: Callable[[], pb.AgentCard], build: Callable[[pb.AgentCard], dict[str, Any]]
               ) -> Callable[[Request], Awaitable[Response]]:
    """The GET endpoint of one card document, built on its first request from `card()` (the
    signed card when signing is on: signed then, once, in a worker thread as KMS is a call)."""
    built = int(time.time())  # the card is built once per app: its Last-Modified
    cached: list[tuple[bytes, dict[str, str], str]] = []

    async def endpoint(request: Request) -> Response:
        if not cached:
            body = dumps(build(await asyncio.to_thread(card)))
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            headers = {"Cache-Control": "public, max-age=300", "ETag": etag,
                       "Last-Modified": email.utils.formatdate(built, usegmt=True)}
            cached.append((body, headers, etag))
        body, headers, etag = cached[0]
        if not_modified(request.headers.get("if-none-match"),
                        request.headers.get("if-modified-since"), etag, built):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=_JSON, headers=headers)

    return endpoint


def jwks_route(keys: Callable[[], dict[str, Any]]) -> Callable[[Request], Awaitable[Response]]:
    """The GET endpoint of the card signing key's JWK set, read once (a2akit.card_signing)."""
    cached: list[bytes] = []

    async def endpoint(request: Request) -> Response:
        if not cached:
            cached.append(dumps(await asyncio.to_thread(keys)))
        return Response(cached[0], media_type="application/jwk-set+json",
                        headers={"Cache-Control": "public, max-age=300"})

    return endpoint
