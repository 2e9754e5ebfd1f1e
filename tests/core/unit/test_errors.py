"""The error catalogue: one row per error, codes that tell errors apart, and the Status both
bindings send."""

from __future__ import annotations

import re

import pytest
from google.rpc import code_pb2, error_details_pb2

from a2akit import errors
from a2akit.errors import (
    CATALOGUE,
    DOMAIN,
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    TaskNotFoundError,
    UnavailableError,
)
from a2akit.limits import ERROR_DETAIL_CHARS, ERROR_MESSAGE_CHARS

# JSON-RPC 2.0: the predefined errors, and the range reserved for implementation errors.
_JSONRPC_PREDEFINED = {-32700, -32600, -32601, -32602, -32603}


def _name(error: type[A2AError]) -> str:
    return error.__name__


def test_the_catalogue_is_every_error_class() -> None:
    exported = {getattr(errors, name) for name in errors.__all__}
    classes = {c for c in exported if isinstance(c, type) and issubclass(c, A2AError)}
    assert set(CATALOGUE) == classes - {A2AError}
    assert len(CATALOGUE) == len(set(CATALOGUE))


def test_jsonrpc_code_and_reason_identify_each_error() -> None:
    # InternalError and UnavailableError share -32603 and differ by reason: allowed.
    pairs = [(e.jsonrpc_code, e.reason) for e in CATALOGUE]
    assert len(set(pairs)) == len(pairs), pairs


def test_grpc_code_and_reason_identify_each_error() -> None:
    pairs = [(e.grpc_code, e.reason) for e in CATALOGUE]
    assert len(set(pairs)) == len(pairs), pairs


@pytest.mark.parametrize("error", CATALOGUE, ids=_name)
def test_codes_are_valid_on_each_binding(error: type[A2AError]) -> None:
    assert error.jsonrpc_code in _JSONRPC_PREDEFINED or -32099 <= error.jsonrpc_code <= -32000
    assert error.grpc_code in code_pb2.Code.values()
    assert error.grpc_code != code_pb2.OK
    # The JSON-RPC binding's HTTP status: 200 for a JSON-RPC error object, 4xx only where
    # HTTP itself must say it (authentication).
    assert error.http_status == 200 or 400 <= error.http_status <= 499


@pytest.mark.parametrize("error", CATALOGUE, ids=_name)
def test_reasons_are_upper_snake_case(error: type[A2AError]) -> None:
    assert re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*", error.reason), error.reason


def test_reason_defaults_to_the_class_name() -> None:
    assert TaskNotFoundError.reason == "TASK_NOT_FOUND"
    assert errors.ExtendedAgentCardNotConfiguredError.reason == (
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED")


@pytest.mark.parametrize("error", CATALOGUE, ids=_name)
def test_status_carries_error_info_first_and_no_bad_request_without_violations(
        error: type[A2AError]) -> None:
    status = error(metadata={"taskId": "t1"}).to_status()
    assert status.code == error.grpc_code
    assert status.message == error.default_message
    # An error that advises when to retry says so in a RetryInfo after the ErrorInfo.
    assert len(status.details) == (1 if error.retry_after_seconds is None else 2)
    if error.retry_after_seconds is not None:
        retry = error_details_pb2.RetryInfo()
        assert status.details[1].Unpack(retry)
        assert retry.retry_delay.seconds == error.retry_after_seconds
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    # UnavailableError always adds that it may be retried.
    retryable = {"retryable": "true"} if error is UnavailableError else {}
    assert (info.reason, info.domain, dict(info.metadata)) == (
        error.reason, DOMAIN, {"taskId": "t1", **retryable})


def test_status_adds_bad_request_for_violations() -> None:
    error = InvalidParamsError("Missing fields", violations=[
        ("message.role", "required"), ("message.parts", "required")])
    status = error.to_status()
    assert status.message == "Missing fields"
    assert len(status.details) == 2
    info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    assert status.details[0].Unpack(info) and status.details[1].Unpack(bad)
    assert info.reason == "INVALID_PARAMS"
    assert [(v.field, v.description) for v in bad.field_violations] == [
        ("message.role", "required"), ("message.parts", "required")]


def test_message_defaults_and_is_the_exception_text() -> None:
    assert str(TaskNotFoundError()) == "Task not found"
    assert str(TaskNotFoundError("gone")) == "gone"


# --- bounded details, retryable unavailability -------------------------------------------------


def _info(error: A2AError) -> error_details_pb2.ErrorInfo:
    info = error_details_pb2.ErrorInfo()
    assert error.to_status().details[0].Unpack(info)
    return info


def test_metadata_values_are_bounded() -> None:
    error = MethodNotFoundError("Method not found: " + "m" * 100_000,
                                metadata={"method": "m" * 100_000, "short": "s"})
    metadata = dict(_info(error).metadata)
    assert len(metadata["method"]) == ERROR_DETAIL_CHARS and metadata["method"].endswith("…")
    assert metadata["short"] == "s"
    assert len(error.message) == ERROR_MESSAGE_CHARS


def test_violations_are_bounded() -> None:
    error = TaskNotFoundError(violations=[("f" * 10_000, "d" * 10_000)])
    (field, description), = error.violations
    assert len(field) == len(description) == ERROR_DETAIL_CHARS


def test_text_that_is_not_unicode_cannot_break_an_error() -> None:
    error = TaskNotFoundError("bad \ud800", metadata={"taskId": "\udfff"})
    assert error.to_status().SerializeToString()
    assert "\ud800" not in error.message


def test_unavailable_says_it_may_be_retried() -> None:
    info = _info(UnavailableError())
    assert info.reason == "UNAVAILABLE" and dict(info.metadata) == {"retryable": "true"}
    assert dict(_info(UnavailableError(metadata={"store": "dynamodb"})).metadata) == {
        "retryable": "true", "store": "dynamodb"}


# The HTTP column of the spec's error table (bindings.md 2.3, spec 5.4 v1.0.1), and the
# reference SDK's statuses for its non-A2A reasons.
_SPEC_HTTP = {
    "TASK_NOT_FOUND": 404, "TASK_NOT_CANCELABLE": 400, "PUSH_NOTIFICATION_NOT_SUPPORTED": 400,
    "UNSUPPORTED_OPERATION": 400, "CONTENT_TYPE_NOT_SUPPORTED": 400,
    "INVALID_AGENT_RESPONSE": 500, "EXTENDED_AGENT_CARD_NOT_CONFIGURED": 400,
    "EXTENSION_SUPPORT_REQUIRED": 400, "VERSION_NOT_SUPPORTED": 400,
    "INVALID_PARAMS": 400, "INVALID_REQUEST": 400, "METHOD_NOT_FOUND": 404,
    "INTERNAL_ERROR": 500, "UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403,
    "UNAVAILABLE": 503, "PARSE_ERROR": 400, "TOO_MANY_ACTIVE_TASKS": 429,
}


def test_http_json_status_is_the_spec_table() -> None:
    assert {e.reason: e.rest_status for e in CATALOGUE} == _SPEC_HTTP


def test_an_occurrence_names_its_http_status_on_both_http_bindings() -> None:
    error = InvalidRequestError("not JSON", http_status=415)
    assert (error.http_status, error.rest_status) == (415, 415)
    plain = InvalidRequestError("again")
    assert (plain.http_status, plain.rest_status) == (200, 400)
