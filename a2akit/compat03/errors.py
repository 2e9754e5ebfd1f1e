"""How an error of the catalogue (a2akit.errors) reads to a 0.3 caller; no second catalogue.

Codes are the catalogue's on both bindings. What differs for 0.3:
- the type name: the 0.3 one where 0.3 names the error (facts 2.6, 3.5; -32007 is
  AuthenticatedExtendedCardNotConfiguredError there), else the catalogue's class name
  (-32008, -32009 and the kit's own errors, which 0.3 does not define);
- JSON-RPC `data` is free-form in 0.3: a JSON object `{"reason": <ErrorInfo reason>,
  ...metadata}`, never the 1.0 list of details. -32008 and -32009 keep their codes: 0.3
  leaves -32000..-32099 to servers (0.3 spec 8.2);
- gRPC: the catalogue's status code and details trailer (0.3 clients ignore it), with the
  message `"<0.3 type name>: <message>"`, the form 0.3 clients parse (facts 3.5).
"""

from __future__ import annotations

import re
from typing import Any

from google.rpc import status_pb2

from a2akit.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

__all__ = ["TYPE_NAMES", "grpc_status", "jsonrpc_data", "jsonrpc_error", "type_name"]

# The errors 0.3 defines, by their 0.3 names (facts 2.6: code, 0.3 name).
TYPE_NAMES: dict[type[A2AError], str] = {
    JSONParseError: "JSONParseError",                      # -32700
    InvalidRequestError: "InvalidRequestError",            # -32600
    MethodNotFoundError: "MethodNotFoundError",            # -32601
    InvalidParamsError: "InvalidParamsError",              # -32602
    InternalError: "InternalError",                        # -32603
    TaskNotFoundError: "TaskNotFoundError",                # -32001
    TaskNotCancelableError: "TaskNotCancelableError",      # -32002
    PushNotificationNotSupportedError: "PushNotificationNotSupportedError",  # -32003
    UnsupportedOperationError: "UnsupportedOperationError",  # -32004
    ContentTypeNotSupportedError: "ContentTypeNotSupportedError",  # -32005
    InvalidAgentResponseError: "InvalidAgentResponseError",  # -32006
    ExtendedAgentCardNotConfiguredError: "AuthenticatedExtendedCardNotConfiguredError",  # -32007
}


def type_name(error: A2AError) -> str:
    """The name a 0.3 client reads the error by."""
    return TYPE_NAMES.get(type(error), type(error).__name__)


def jsonrpc_data(error: A2AError) -> dict[str, str]:
    """The 0.3 JSON-RPC `data`: the ErrorInfo reason, then its metadata."""
    return {"reason": error.reason,
            **{key: value for key, value in error.metadata.items() if key != "reason"}}


# A state named in a message ("The task is already TASK_STATE_COMPLETED"), as the 1.0 enum
# spells it; a 0.3 JSON-RPC caller knows the state as `completed`.
_STATE_NAME = re.compile(r"\bTASK_STATE_([A-Z]+(?:_[A-Z]+)*)\b")


def _json_states(text: str) -> str:
    return _STATE_NAME.sub(lambda match: match.group(1).lower().replace("_", "-"), text)


def jsonrpc_error(error: A2AError) -> dict[str, Any]:
    """The `error` member of a 0.3 JSON-RPC response; states in its message are named as
    0.3 JSON names them."""
    return {"code": error.jsonrpc_code, "message": _json_states(error.message),
            "data": jsonrpc_data(error)}


def grpc_status(error: A2AError) -> status_pb2.Status:
    """The google.rpc.Status a 0.3 gRPC call ends with: the 1.0 one, its message prefixed
    with the 0.3 type name (the trailer's Status carries the same message, as gRPC checks)."""
    status = error.to_status()
    status.message = f"{type_name(error)}: {error.message}"
    return status
