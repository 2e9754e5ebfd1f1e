"""The error catalogue: every error the kit returns, with its code on each binding.

    A2AError                          base; never raised itself
    ├── the A2A errors (spec 3.3.2)  TaskNotFoundError ... VersionNotSupportedError
    ├── the JSON-RPC standard errors  JSONParseError ... InternalError
    └── AuthenticationRequiredError   missing or invalid credentials (not an A2A error)

Each class is one row of the table: its JSON-RPC code, its gRPC status code (numbers from
google.rpc.Code, so the core needs no grpc import), the HTTP status the JSON-RPC binding
answers with (200 for every error a JSON-RPC error object describes; 401 where HTTP
authentication needs it; one occurrence may name its own, as the 415 of a request that is not
JSON) and its default message.
The HTTP+JSON binding answers with `rest_status`: the HTTP status of the gRPC code (spec 5.4,
11.6; google.rpc.Code's own mapping) unless a row names its own (`rest=`), and an occurrence's
HTTP status where it names one (the 415) on both HTTP bindings.
The ErrorInfo reason is the class name minus ``Error`` in UPPER_SNAKE_CASE unless a row names
one. Bindings render errors only through `to_status()`; reverse maps derive from `CATALOGUE`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from a2akit.limits import ERROR_DETAIL_CHARS, ERROR_MESSAGE_CHARS

__all__ = [
    "CATALOGUE",
    "DOMAIN",
    "A2AError",
    "AuthenticationRequiredError",
    "ContentTypeNotSupportedError",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "MethodNotFoundError",
    "PermissionDeniedError",
    "PushNotificationNotSupportedError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "TooManyActiveTasksError",
    "UnavailableError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
]

DOMAIN = "a2a-protocol.org"


class A2AError(Exception):
    """An error with a defined meaning on every binding."""

    jsonrpc_code: ClassVar[int]
    grpc_code: ClassVar[int]
    http_status: int  # the class's, unless one occurrence names its own (see __init__)
    rest_status: int  # HTTP+JSON: the same, from the gRPC code by default
    reason: ClassVar[str]
    default_message: ClassVar[str]
    # Seconds a client should wait before trying again: RetryInfo on every binding and
    # Retry-After over HTTP; None: no advice.
    retry_after_seconds: ClassVar[int | None] = None

    def __init_subclass__(
        cls,
        *,
        jsonrpc: int,
        grpc: int,
        message: str,
        http: int = 200,
        reason: str | None = None,
        rest: int | None = None,
        **kwargs: object,
    ) -> None:
        super().__init_subclass__(**kwargs)
        cls.jsonrpc_code = jsonrpc
        cls.grpc_code = grpc
        cls.http_status = http
        cls.rest_status = rest or HTTP_OF_GRPC_CODE.get(grpc, 500)
        cls.default_message = message
        cls.reason = reason or re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__[:-5]).upper()

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: Mapping[str, str] | None = None,
        violations: Sequence[tuple[str, str]] = (),
        http_status: int | None = None,
    ) -> None:
        """`http_status` replaces the class's HTTP status for this occurrence, where HTTP
        itself must say more than the JSON-RPC error (415 for a body that is not JSON)."""
        if http_status is not None:
            self.http_status = self.rest_status = http_status
        # Errors echo what the client sent (an id, a method name): bounded here, once, so
        # no reply carries a huge value or text that cannot be encoded.
        self.message = _bounded(message or self.default_message, ERROR_MESSAGE_CHARS)
        self.metadata = {k: _bounded(v, ERROR_DETAIL_CHARS) for k, v in (metadata or {}).items()}
        self.violations = [(_bounded(f, ERROR_DETAIL_CHARS), _bounded(d, ERROR_DETAIL_CHARS))
                           for f, d in violations]
        super().__init__(self.message)

    def to_status(self) -> status_pb2.Status:
        """The google.rpc.Status both bindings send: ErrorInfo first, BadRequest if any."""
        info = error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN,
                                           metadata=self.metadata)
        details = [_pack(info)]
        if self.violations:
            bad = error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(field=f, description=d)
                    for f, d in self.violations
                ]
            )
            details.append(_pack(bad))
        if self.retry_after_seconds is not None:
            retry = error_details_pb2.RetryInfo()
            retry.retry_delay.seconds = self.retry_after_seconds
            details.append(_pack(retry))
        return status_pb2.Status(code=self.grpc_code, message=self.message, details=details)


def _bounded(text: str, limit: int) -> str:
    """At most `limit` characters (an ellipsis marks a cut), lone surrogates replaced."""
    if len(text) > limit:
        text = text[:limit - 1] + "\u2026"
    return text.encode("utf-8", "replace").decode("utf-8")


def _pack(message: error_details_pb2.ErrorInfo | error_details_pb2.BadRequest
          | error_details_pb2.RetryInfo) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


_FP = code_pb2.FAILED_PRECONDITION

# The HTTP status of each gRPC status code, as google.rpc.Code documents it; the spec's table
# (bindings.md 2.3) agrees for every A2A error (FAILED_PRECONDITION is 400).
HTTP_OF_GRPC_CODE = {
    code_pb2.OK: 200, code_pb2.CANCELLED: 499, code_pb2.UNKNOWN: 500,
    code_pb2.INVALID_ARGUMENT: 400, code_pb2.DEADLINE_EXCEEDED: 504, code_pb2.NOT_FOUND: 404,
    code_pb2.ALREADY_EXISTS: 409, code_pb2.PERMISSION_DENIED: 403,
    code_pb2.RESOURCE_EXHAUSTED: 429, code_pb2.FAILED_PRECONDITION: 400, code_pb2.ABORTED: 409,
    code_pb2.OUT_OF_RANGE: 400, code_pb2.UNIMPLEMENTED: 501, code_pb2.INTERNAL: 500,
    code_pb2.UNAVAILABLE: 503, code_pb2.DATA_LOSS: 500, code_pb2.UNAUTHENTICATED: 401,
}

# --- A2A errors (bindings.md 2.3) ---------------------------------------------------------


class TaskNotFoundError(A2AError, jsonrpc=-32001, grpc=code_pb2.NOT_FOUND,
                        message="Task not found"):
    """The task (or push config) is missing, expired, or not visible to the caller."""


class TaskNotCancelableError(A2AError, jsonrpc=-32002, grpc=_FP,
                             message="Task cannot be canceled"):
    """CancelTask on a terminal task."""


class PushNotificationNotSupportedError(A2AError, jsonrpc=-32003, grpc=_FP,
                                        message="Push Notification is not supported"):
    """A push-config operation while the capability is off."""


class UnsupportedOperationError(A2AError, jsonrpc=-32004, grpc=_FP,
                                message="This operation is not supported"):
    """Streaming or extended card off, a message to or subscription on a terminal task."""


class ContentTypeNotSupportedError(A2AError, jsonrpc=-32005, grpc=code_pb2.INVALID_ARGUMENT,
                                   message="Incompatible content types"):
    """A part's media type is not one the agent accepts."""


class InvalidAgentResponseError(A2AError, jsonrpc=-32006, grpc=code_pb2.INTERNAL,
                                message="Invalid agent response"):
    """The agent broke the contract of the method (e.g. an event after a terminal state)."""


class ExtendedAgentCardNotConfiguredError(A2AError, jsonrpc=-32007, grpc=_FP,
                                          message="Authenticated Extended Card is not configured"):
    """The card declares an extended card but the agent has none."""


class ExtensionSupportRequiredError(A2AError, jsonrpc=-32008, grpc=_FP,
                                    message="Extension support required"):
    """The agent requires an extension the client did not activate."""


class VersionNotSupportedError(A2AError, jsonrpc=-32009, grpc=_FP,
                               message="Version not supported"):
    """The requested A2A version (missing means 0.3) is not served here."""


# --- JSON-RPC standard errors (bindings.md 2.4); reasons as the reference SDK names them ---


class JSONParseError(A2AError, jsonrpc=-32700, grpc=code_pb2.INVALID_ARGUMENT,
                     message="Invalid JSON payload", reason="PARSE_ERROR"):
    """The body is not valid JSON."""


class InvalidRequestError(A2AError, jsonrpc=-32600, grpc=code_pb2.INVALID_ARGUMENT,
                          message="Request payload validation error", reason="INVALID_REQUEST"):
    """Not a JSON-RPC 2.0 request object (or a batch, or over the size limit)."""


class MethodNotFoundError(A2AError, jsonrpc=-32601, grpc=code_pb2.UNIMPLEMENTED,
                          rest=404, message="Method not found", reason="METHOD_NOT_FOUND"):
    """Not one of the eleven A2A 1.0 operations (HTTP+JSON: no route; 404 as in the reference
    SDK, 405 for a path that takes other methods)."""


class InvalidParamsError(A2AError, jsonrpc=-32602, grpc=code_pb2.INVALID_ARGUMENT,
                         message="Invalid parameters", reason="INVALID_PARAMS"):
    """The request does not parse, misses REQUIRED fields, or has out-of-range values."""


class InternalError(A2AError, jsonrpc=-32603, grpc=code_pb2.INTERNAL,
                    message="Internal error", reason="INTERNAL_ERROR"):
    """An unexpected failure; details are logged, never sent."""


class AuthenticationRequiredError(A2AError, jsonrpc=-32000, grpc=code_pb2.UNAUTHENTICATED,
                                  http=401, message="Authentication required",
                                  reason="UNAUTHENTICATED"):
    """Missing or invalid credentials (HTTP 401 on JSON-RPC, UNAUTHENTICATED on gRPC)."""


class UnavailableError(A2AError, jsonrpc=-32603, grpc=code_pb2.UNAVAILABLE,
                       message="Service temporarily unavailable, retry later",
                       reason="UNAVAILABLE"):
    """A dependency (the task store) is throttled or down after retries; safe to retry.

    JSON-RPC has no code of its own for it (-32603, as InternalError), so the ErrorInfo says
    it: reason UNAVAILABLE and metadata `retryable: "true"`, on both bindings."""

    def __init__(self, message: str | None = None, *,
                 metadata: Mapping[str, str] | None = None,
                 violations: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message, metadata={"retryable": "true", **(metadata or {})},
                         violations=violations)


class PermissionDeniedError(A2AError, jsonrpc=-32000, grpc=code_pb2.PERMISSION_DENIED,
                            http=403, message="Permission denied", reason="PERMISSION_DENIED"):
    """Valid credentials that do not allow this request: a required scope is missing, or the
    request names a tenant the caller does not belong to (HTTP 403 on JSON-RPC,
    PERMISSION_DENIED on gRPC). Never used for another caller's task: that does not exist."""


class TooManyActiveTasksError(A2AError, jsonrpc=-32000, grpc=code_pb2.RESOURCE_EXHAUSTED,
                              http=429, message="Too many tasks in progress for this caller",
                              reason="TOO_MANY_ACTIVE_TASKS"):
    """The caller has `A2A_MAX_ACTIVE_TASKS_PER_CALLER` tasks that are not finished; a new
    one is refused before anything is written (HTTP 429 with Retry-After on JSON-RPC,
    RESOURCE_EXHAUSTED with a RetryInfo detail on gRPC)."""

    retry_after_seconds = 5


CATALOGUE: tuple[type[A2AError], ...] = tuple(A2AError.__subclasses__())
