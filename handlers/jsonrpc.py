"""Lambda entry point for JSON-RPC: `handlers.jsonrpc.handler`; ASGI app `handlers.jsonrpc:app`.

Everything every first request needs is built here, at import: settings, store client, agent,
card, app. On Lambda with SnapStart that is the part captured in the snapshot, so a restored
environment starts with all of it; `a2akit.runtime.after_restore` then refreshes what
restored copies of one snapshot must not share.
"""

from __future__ import annotations

from a2akit import logs
from a2akit.runtime import after_restore, build_operations, explain_startup_errors
from a2akit.settings import Settings
from handlers.lambda_adapter import lambda_handler
from http_service.app import create_app

__all__ = ["app", "handler"]

# A bad setting or an unreachable store: one ERROR line in the log, then StartupError with that
# line, so Lambda reports an init error whose message is that line.
with explain_startup_errors(reraise=True):
    settings = Settings.from_env()
    logs.configure(settings.log_level, settings.service("jsonrpc"))
    operations = build_operations(settings)
    app = create_app(operations)
handler = lambda_handler(app)


try:
    # Lambda's Python runtime (3.12+) provides the runtime hooks; nothing else restores.
    from snapshot_restore_py import register_after_restore
except ImportError:
    pass
else:
    register_after_restore(lambda: after_restore(operations))
