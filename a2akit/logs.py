"""Structured logs: one JSON object per line, with the ids of what the line is about.

`configure(level, service)` runs once per process (each entry point calls it): it puts one
handler on the root logger that writes each record to stderr as one JSON line, replacing
whatever was there (Lambda's own handler, basicConfig). The standard library only: its
import costs nothing on the Lambda front door (docs/observability.md has the measurement
against Powertools' Logger).

What a line is about comes from a context (contextvars), not from each call site: the
binding starts it per request (`begin`: request id, operation, trace), the core adds the
caller (`bind_caller`: tenant and a stable hash of the owner, never the owner's credential)
and the task (`bind_task`), the worker and the runner set their task. asyncio tasks copy the
context when they are created, so a run started by a request logs with the request's ids.
Agents log through `AGENT_LOGGER` (`logging.getLogger("a2akit.agent")`), or any logger: every
record gets the ids.

Never put a credential, a token, a webhook secret or message content into a log call's
arguments: the formatter writes `message` as given.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import os
import sys
import time
import types
from collections.abc import Mapping
from random import getrandbits
from typing import Any

__all__ = [
    "AGENT_LOGGER",
    "begin",
    "begin_with",
    "bind",
    "bind_caller",
    "bind_task",
    "configure",
    "fields",
    "owner_hash",
    "request_id",
    "service",
]

AGENT_LOGGER = "a2akit.agent"
# The fields of the current request or run; replaced (never mutated), so a task that copied
# the context keeps what it saw.
_CONTEXT: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "a2akit_log_fields", default=types.MappingProxyType({}))
_service = "local"


def fields() -> Mapping[str, str]:
    """The ids of the current context (request, task, trace)."""
    return _CONTEXT.get()


def request_id(aws_context: object) -> str:
    """Lambda's `aws_request_id` of an invocation's context, else a new id."""
    value = getattr(aws_context, "aws_request_id", None)
    return value if isinstance(value, str) and value else f"{getrandbits(64):016x}"


def begin(**values: str) -> None:
    """Start a new context for one request or job: only these fields (empty ones dropped)."""
    _CONTEXT.set({key: value for key, value in values.items() if value})


def begin_with(values: dict[str, str]) -> None:
    """`begin` with a dict the caller made and no longer touches, every value non-empty."""
    _CONTEXT.set(values)


def bind(**values: str) -> None:
    """Add fields to the current context (empty ones dropped)."""
    current = _CONTEXT.get()
    _CONTEXT.set({**current, **{key: value for key, value in values.items() if value}})


def bind_task(task_id: str, context_id: str = "") -> None:
    """The task the next lines are about (a context id from another task is dropped)."""
    current = _CONTEXT.get()
    same_task = current.get("task_id") == task_id
    if same_task and (not context_id or current.get("context_id") == context_id):
        return
    updated = {**current, "task_id": task_id}
    if context_id:
        updated["context_id"] = context_id
    elif not same_task:
        updated.pop("context_id", None)
    _CONTEXT.set(updated)


def owner_hash(owner: str) -> str:
    """A stable, short digest of a task owner: the same caller has the same value in every
    process, and the value tells nothing about the credential behind it."""
    digest = _OWNER_HASHES.get(owner)
    if digest is None:
        if len(_OWNER_HASHES) >= 1024:  # bounded: a process sees few callers, mostly
            _OWNER_HASHES.clear()
        digest = _OWNER_HASHES[owner] = hashlib.blake2b(
            owner.encode(), digest_size=8, person=b"a2akit-owner").hexdigest()
    return digest


_OWNER_HASHES: dict[str, str] = {}


def bind_caller(tenant: str, owner: str) -> None:
    current = _CONTEXT.get()
    if current.get("_owner") == owner and current.get("tenant", "") == tenant:
        return
    # `_owner` is the key for the check above, never written out. One dict, no helper: this
    # runs on every request.
    updated = {**current, "caller": owner_hash(owner), "_owner": owner}
    if tenant:
        updated["tenant"] = tenant
    else:
        updated.pop("tenant", None)
    _CONTEXT.set(updated)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: timestamp, level, logger, message, the context's ids, and
    the exception's traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "service": _service,
        }
        for key, value in _CONTEXT.get().items():
            if not key.startswith("_"):
                line[key] = value
        xray = os.environ.get("_X_AMZN_TRACE_ID")
        if xray:
            line["xray_trace_id"] = xray.partition(";")[0].removeprefix("Root=")
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        text = json.dumps(line, separators=(",", ":"), ensure_ascii=False, default=str)
        # Non-ASCII stays readable, but these three break lines for `splitlines` and some log
        # shippers; JSON writes every other line break escaped. (Only found inside strings.)
        return text.translate(_LINE_BREAKS)


_LINE_BREAKS = {ord(ch): f"\\u{ord(ch):04x}" for ch in "\u0085\u2028\u2029"}


def configure(level: str, service: str) -> None:
    """Once per process: JSON lines on stderr at `level` (LOG_LEVEL) for the kit's loggers
    and the agent's, WARNING for libraries'. `service`: the name on every line and metric
    (`Settings.service`: the Lambda function's name when there is one)."""
    global _service
    _service = service
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("a2akit").setLevel(level)


def service() -> str:
    """The name `configure` gave this process ("local" before it ran)."""
    return _service
