"""What clients send: a user message and SendMessage params as JSON-RPC carries them
(ProtoJSON), and the same message and a SendMessageRequest as gRPC and the core take them
(protobuf).

The JSON forms are written out rather than produced by the kit's serializer, so JSON-RPC tests
do not rely on the code they test.
"""

from __future__ import annotations

import uuid
from typing import Any

from a2akit.generated import a2a_pb2 as pb

__all__ = ["V1", "proto_message", "send_params", "send_request", "user_message"]

# gRPC metadata asking for A2A 1.0; JSON-RPC sends the A2A-Version header (jsonrpc/client.py).
V1 = (("a2a-version", "1.0"),)


def user_message(text: str = "hello", message_id: str | None = None,
                 **fields: Any) -> dict[str, Any]:
    """A user message in ProtoJSON with one text part and a fresh id; `fields` are JSON names
    (taskId, contextId) and replace the defaults (parts)."""
    return {"messageId": message_id or str(uuid.uuid4()), "role": "ROLE_USER",
            "parts": [{"text": text}], **fields}


def send_params(text: str = "hello", *, immediately: bool | None = None,
                push_config: dict[str, Any] | None = None, message_id: str | None = None,
                **fields: Any) -> dict[str, Any]:
    """SendMessage params in ProtoJSON: user_message(text, message_id, **fields) and, when
    either is given, a configuration with returnImmediately and the task's push config."""
    params: dict[str, Any] = {"message": user_message(text, message_id, **fields)}
    configuration: dict[str, Any] = {}
    if immediately is not None:
        configuration["returnImmediately"] = immediately
    if push_config is not None:
        configuration["taskPushNotificationConfig"] = push_config
    if configuration:
        params["configuration"] = configuration
    return params


def proto_message(text: str = "hello", message_id: str | None = None,
                  **fields: Any) -> pb.Message:
    """The same user message in protobuf; `fields` are Message fields (task_id, context_id)
    and replace the defaults (parts)."""
    values: dict[str, Any] = {"message_id": message_id or str(uuid.uuid4()),
                              "role": pb.ROLE_USER, "parts": [pb.Part(text=text)], **fields}
    return pb.Message(**values)


def send_request(text: str = "hello", *, immediately: bool = False,
                 **fields: Any) -> pb.SendMessageRequest:
    """A SendMessageRequest carrying proto_message(text, **fields); `immediately` asks for the
    answer before the run ends (configuration.return_immediately)."""
    request = pb.SendMessageRequest(message=proto_message(text, **fields))
    if immediately:
        request.configuration.return_immediately = True
    return request
