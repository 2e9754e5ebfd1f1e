"""A 0.3 JSON-RPC caller over the test clients of tests/jsonrpc/client.py: no A2A-Version
header (0.3 clients send none), messages in the 0.3 schema's shapes, written out here rather
than produced by the kit's codec, so the tests do not rely on the code they test."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from typing import Any

from a2akit.agent import Agent
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from a2akit.store.memory import MemoryStore
from tests.jsonrpc.client import Client, Reply, serve
from tests.store.conftest import TABLE

__all__ = ["Caller03", "message03", "open_store", "serve03"]


def message03(text: str = "hello", message_id: str | None = None, **fields: Any
              ) -> dict[str, Any]:
    """A 0.3 user message with one text part; `fields` (taskId, contextId...) are added."""
    return {"kind": "message", "messageId": message_id or str(uuid.uuid4()), "role": "user",
            "parts": [{"kind": "text", "text": text}], **fields}


class Caller03:
    """Calls the app as a 0.3 client; `headers` go with every call."""

    def __init__(self, client: Client, headers: dict[str, str] | None = None) -> None:
        self.client = client
        self.headers = headers or {}

    def call(self, method: str, params: Any = None, headers: dict[str, str] | None = None,
             **extra: Any) -> Reply:
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.client.ids),
                                   "method": method}
        if params is not None:
            payload["params"] = params
        payload.update(extra)
        return self.client.post(json.dumps(payload).encode(), {**self.headers,
                                                               **(headers or {})})

    def result(self, method: str, params: Any = None, **kw: Any) -> Any:
        reply = self.call(method, params, **kw)
        assert reply.status == 200, reply.body
        answer = reply.json()
        assert "error" not in answer and "result" in answer, answer
        return answer["result"]

    def error(self, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
        answer = self.call(method, params, **kw).json()
        assert "error" in answer and "result" not in answer, answer
        error: dict[str, Any] = answer["error"]
        assert isinstance(error.get("data"), dict), error  # 0.3: an object, never 1.0's list
        return error

    def send(self, text: str = "hello", **config: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"message": message03(text)}
        if config:
            params["configuration"] = config
        result: dict[str, Any] = self.result("message/send", params)
        return result

    def stream(self, method: str, params: Any) -> tuple[Reply, list[dict[str, Any]]]:
        """The reply and its events; checks the 0.3 framing: HTTP 200, one compact `data:`
        line per event, no `event:` or `id:` fields."""
        reply = self.call(method, params)
        assert reply.status == 200, reply.body
        assert reply.headers["content-type"].startswith("text/event-stream")
        frames = [f for f in reply.body.decode().split("\n\n") if f.strip()]
        events = []
        for frame in frames:
            lines = [line for line in frame.split("\n") if not line.startswith(":")]
            if not lines:
                continue  # a keep-alive comment
            assert len(lines) == 1 and lines[0].startswith("data: "), frame
            events.append(json.loads(lines[0][6:]))
        return reply, events


@contextlib.contextmanager
def open_store(kind: str, ddb_client: Any = None) -> Iterator[TaskStore]:
    yield MemoryStore() if kind == "memory" else DynamoDBStore(TABLE, ddb_client)


def serve03(kind: str, store: TaskStore, agent: Agent, settings: Settings
            ) -> Iterator[Client]:
    """A client of `kind` (ASGI or a Lambda event shape) in front of the app over `store`."""
    yield from serve(kind, build_operations(settings, store=store, agent=agent))
