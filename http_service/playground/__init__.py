"""The playground: one page to talk to the agent in a browser (docs/playground.md), served at
the interface path's `/playground` when A2A_PLAYGROUND=true, and imported only then.

Plain HTML, CSS and JavaScript shipped in this package: no build step, no CDN, works offline.
The page holds no data and no secret: it calls the public JSON-RPC binding like any client,
with the credentials typed into it, so every call it makes is authenticated and authorized
as any other. Its Content-Security-Policy keeps the page's requests on the kit's origin.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["playground_routes"]

_FOLDER = Path(__file__).parent
_ASSETS = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _fixed(body: bytes, media_type: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return Response(body, media_type=media_type, headers=_HEADERS)

    return endpoint


def playground_routes(base: str, endpoint: str) -> list[Route]:
    """The page at `{base}/playground` and its two files; `endpoint` is the JSON-RPC path."""
    page = ((_FOLDER / "index.html").read_text()
            .replace("{{ENDPOINT}}", html.escape(endpoint)).replace("{{BASE}}", html.escape(base)))
    routes = [Route(base + "/playground", _fixed(page.encode(), "text/html; charset=utf-8"),
                    methods=["GET"])]
    for name, media_type in _ASSETS.items():
        routes.append(Route(f"{base}/playground/{name}",
                            _fixed((_FOLDER / name).read_bytes(), media_type), methods=["GET"]))
    return routes
