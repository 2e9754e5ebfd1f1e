"""Where the HTTP+JSON binding joins the JSON-RPC app: one Starlette route for every path under
the HTTP+JSON base path, placed after the app's own routes. The binding itself
(http_service.rest, with its route table) is imported on the first request it gets, so the
JSON-RPC front door's cold start does not pay for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

from a2akit.card import rest_url
from a2akit.operations import Operations

if TYPE_CHECKING:
    from http_service.rest import RestBinding

__all__ = ["RestRoutes"]


class RestRoutes(BaseRoute):
    """Claims every path under the base path but the app's other paths (`exclude`), whose wrong
    methods keep Starlette's 405; a path nobody serves gets the HTTP+JSON error body."""

    def __init__(self, operations: Operations, exclude: frozenset[str] = frozenset()) -> None:
        self.ops = operations
        self.prefix = urlsplit(rest_url(operations.settings)).path.rstrip("/")
        self.exclude = exclude
        self._binding: RestBinding | None = None

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http":
            path: str = scope["path"]
            if path not in self.exclude and path.startswith(self.prefix + "/"):
                return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._binding is None:
            from http_service.rest import RestBinding

            self._binding = RestBinding(self.ops, self.prefix)
        response = await self._binding.answer(Request(scope, receive))
        await response(scope, receive, send)
