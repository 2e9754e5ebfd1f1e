"""Lambda entry point for JSON-RPC: `handlers.jsonrpc.handler`; ASGI app `handlers.jsonrpc:app`.

Everything here runs once per container, at import: settings, store client, agent, card.
"""

from __future__ import annotations

from mangum import Mangum

from a2akit.runtime import build_operations, explain_startup_errors
from a2akit.settings import Settings
from handlers.jsonrpc_app import create_app

__all__ = ["app", "handler"]

# A bad setting or an unreachable store: one ERROR line in the log, then StartupError with that
# line, so Lambda reports an init error whose message is that line.
with explain_startup_errors(reraise=True):
    settings = Settings.from_env()
    app = create_app(build_operations(settings))
# lifespan off: Mangum would otherwise run startup/shutdown around every invocation.
# text_mime_types replaces Mangum's list, so the JSON types are all named here.
handler = Mangum(app, lifespan="off", text_mime_types=[
    "application/json", "application/a2a+json", "text/event-stream", "text/plain",
])
