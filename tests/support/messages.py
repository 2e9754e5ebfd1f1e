"""What clients send: a user message as JSON-RPC params carry it (ProtoJSON), and a
SendMessageRequest as gRPC and the core take it (protobuf).

The JSON form is written out rather than produced by the kit's serializer, so JSON-RPC tests
do not rely on the code they test.
"""

from __future__ import annotations

import uuid
from typing import Any

from a2akit.generated import a2a_pb2 as pb

__all__ = ["V1", "send_request", "user_message"]

# gRPC metadata asking for A2A 1.0; JSON-RPC sends the A2A-Version header (jsonrpc/client.py).
V1 = (("a2a-version", "1.0"),)


def user_message(text: str = "hello", message_id: str | None = None,
                 **fields: Any) -> dict[str, Any]:
    """A user message in ProtoJSON with one text part and a fresh id; `fields` are JSON names
    (taskId, contextId)."""
    return {"messageId": message_id or str(uuid.uuid4()), "role": "ROLE_USER",
            "parts": [{"text": text}], **fields}


def send_request(text: str = "hello", **fields: Any) -> pb.SendMessageRequest:
    """The same user message as a protobuf SendMessageRequest; `fields` are Message fields
    (task_id, context_id)."""
    return pb.SendMessageRequest(message=pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)], **fields))
