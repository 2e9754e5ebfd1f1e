"""The error catalogue's own guarantees, independent of a binding."""

from __future__ import annotations

from google.rpc import error_details_pb2

from a2akit.errors import MethodNotFoundError, TaskNotFoundError, UnavailableError
from a2akit.limits import ERROR_DETAIL_CHARS, ERROR_MESSAGE_CHARS


def _info(error: Exception) -> error_details_pb2.ErrorInfo:
    info = error_details_pb2.ErrorInfo()
    assert error.to_status().details[0].Unpack(info)  # type: ignore[attr-defined]
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
