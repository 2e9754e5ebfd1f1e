"""The HTTP app: JSON-RPC (both generations) and HTTP+JSON over the shared core, and the public
agent cards, as one Starlette app. Entry points (handlers.jsonrpc, handlers.stream,
scripts/serve_local.py) build it with `create_app`."""

from __future__ import annotations

import functools
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route

from a2akit.operations import Operations
from http_service.agent_cards import (
    AGENT_CARD_PATH,
    JWKS_PATH,
    LEGACY_CARD_PATH,
    card_route,
    jwks_route,
    legacy_card,
    merged_card,
)
from http_service.jsonrpc import JsonRpc
from http_service.pipeline import answer
from http_service.rest_mount import RestRoutes

__all__ = ["create_app"]


def create_app(operations: Operations) -> Starlette:
    """POST at the interface URL's path (JSON-RPC, both generations), GET of the public agent
    cards (http_service.agent_cards), HTTP+JSON under the same path."""
    path = urlsplit(operations.settings.public_url).path or "/"
    base = path.rstrip("/")
    card_path, legacy_path = base + AGENT_CARD_PATH, base + LEGACY_CARD_PATH
    # The cards sit under the interface URL, where a client that knows that URL looks for them
    # (the root when the URL has no path; `/a2a/.well-known/...` behind an API Gateway stage).
    # HTTP+JSON comes last: every JSON-RPC request is matched before it is looked at.
    routes: list[BaseRoute] = [
        Route(card_path, card_route(operations.public_card, merged_card), methods=["GET"]),
        # The 0.3 card is not signed: a signature covers the 1.0 card's canonical form.
        Route(legacy_path, card_route(lambda: operations.card, legacy_card), methods=["GET"]),
        Route(path, functools.partial(answer, operations, JsonRpc(operations).exchange()),
              methods=["POST"]),
    ]
    if operations.card_signer is not None:
        routes.append(Route(base + JWKS_PATH, jwks_route(operations.card_signer.jwks),
                            methods=["GET"]))
    if operations.settings.playground:
        # Imported only when asked for: a door without it loads nothing of the page.
        from http_service.playground import playground_routes

        routes += playground_routes(base, path)
    own = frozenset({card_path, legacy_path, path, base + JWKS_PATH})
    routes.append(RestRoutes(operations, exclude=own))
    return Starlette(routes=routes)
