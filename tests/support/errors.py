"""Read an error as a client receives it: the google.rpc details from a JSON-RPC error body
(`error.data`) or from a gRPC trailer (`grpc-status-details-bin`), the same way for both."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import any_pb2, json_format
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

__all__ = ["Failure", "grpc_failure", "grpc_status", "jsonrpc_failure", "rest_failure"]


@dataclasses.dataclass(frozen=True)
class Failure:
    """A failed call: the binding's own code and message, and the Status details."""

    code: int  # the JSON-RPC error code, or the gRPC status code's number
    message: str
    info: error_details_pb2.ErrorInfo
    bad_request: error_details_pb2.BadRequest | None


def _details(packed: Sequence[any_pb2.Any]) -> tuple[error_details_pb2.ErrorInfo,
                                                     error_details_pb2.BadRequest | None]:
    info = error_details_pb2.ErrorInfo()
    assert packed and packed[0].Unpack(info), "ErrorInfo must come first"
    bad = None
    for detail in packed[1:]:
        candidate = error_details_pb2.BadRequest()
        if detail.Unpack(candidate):
            bad = candidate
    return info, bad


def jsonrpc_failure(error: Mapping[str, Any]) -> Failure:
    """The `error` member of a JSON-RPC response; its `data` is the list of Status details."""
    data = error.get("data")
    assert isinstance(data, list) and data, f"no details in {error!r}"
    info, bad = _details([json_format.ParseDict(item, any_pb2.Any()) for item in data])
    return Failure(error["code"], error["message"], info, bad)


def jsonrpc_info(error: Mapping[str, Any]) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo of a JSON-RPC error, which the spec's domain names."""
    info = jsonrpc_failure(error).info
    assert info.domain == "a2a-protocol.org"
    return info


def grpc_status(error: grpc.RpcError) -> status_pb2.Status:
    """The google.rpc.Status a failed call carried in its trailer."""
    status = rpc_status.from_call(error)
    assert status is not None, f"no status details in {error!r}"
    return status


def grpc_failure(error: grpc.RpcError) -> Failure:
    """A failed gRPC call (grpc or grpc.aio): status code, details string and Status details."""
    info, bad = _details(grpc_status(error).details)
    return Failure(error.code().value[0], error.details() or "", info, bad)


def rest_failure(body: Mapping[str, Any], status: int) -> Failure:
    """An HTTP+JSON error body (spec 11.6): `{"error": {code, status, message, details}}`,
    its `code` the HTTP status; the details are the Status details."""
    error = body["error"]
    assert error["code"] == status, (error, status)
    info, bad = _details([json_format.ParseDict(item, any_pb2.Any())
                          for item in error["details"]])
    return Failure(status, error["message"], info, bad)
