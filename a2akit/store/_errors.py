"""DynamoDB's failures as the kit's errors: the one place client exceptions are translated.

Both clients the store runs on fail the same way: botocore's, and the kit's own (`_client`,
used on Lambda), whose two exceptions are defined here; its `DynamoDBError` carries
botocore's response shape.

    botocore ClientError, DynamoDBError
    ├── TransactionCanceledException   what the writer makes of the `Cancellation`
    │                                  (VersionConflictError, DuplicateMessageError), else
    │                                  UnavailableError when throttled or conflicting,
    │                                  else InternalError
    ├── ConditionalCheckFailed         (one-item write) the same, as a one-item Cancellation
    ├── throttling, service errors     UnavailableError (the client already retried them)
    └── anything else                  InternalError (logged, not sent)
    ConnectionError, HTTPClientError,
    ConnectionFailure                  UnavailableError
    any other BotoCoreError            InternalError (logged)

Every error raised here is chained `from` the client's exception. Which botocore exception
is which comes from `a2akit.aws.failure`, the one place that knows them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from a2akit import aws, metrics
from a2akit.errors import InternalError, UnavailableError

__all__ = [
    "Cancellation",
    "ConnectionFailure",
    "DynamoDBError",
    "Interpret",
    "error_code",
    "translated",
]

log = logging.getLogger("a2akit.store.dynamodb")

class DynamoDBError(Exception):
    """DynamoDB answered with an error. `response` is shaped like botocore's ClientError's."""

    def __init__(self, code: str, message: str, response: dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.response = response


class ConnectionFailure(Exception):
    """DynamoDB could not be reached (connect, send or read failed, every attempt)."""


# Error codes that outlived the client's retries but say nothing about the request: the
# caller may retry later (HTTP 503 / gRPC UNAVAILABLE).
_UNAVAILABLE = frozenset({
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "LimitExceededException",
})
# The same, as cancellation reasons of one transaction item.
_UNAVAILABLE_REASONS = frozenset({
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
    "TransactionConflict",
})

# Throttling, as an error code or a cancellation reason: the DynamoDBThrottles metric.
_THROTTLED = frozenset({
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
})


class Cancellation:
    """Why DynamoDB cancelled a transaction: one reason per item, in the items' order."""

    def __init__(self, reasons: Sequence[Mapping[str, Any]]) -> None:
        self._reasons = [dict(reason) for reason in reasons]

    def code(self, index: int) -> str:
        """The reason code of item `index` ("None" for an item that did not fail)."""
        if index < len(self._reasons):
            return str(self._reasons[index].get("Code", ""))
        return ""

    def failed(self, index: int) -> bool:
        """Whether item `index`'s condition failed."""
        return self.code(index) == "ConditionalCheckFailed"

    def old_item(self, index: int) -> dict[str, Any] | None:
        """Item `index` as it was, when its put asked for ALL_OLD on a failed condition."""
        if index < len(self._reasons):
            item: dict[str, Any] | None = self._reasons[index].get("Item")
            return item
        return None

    def codes(self) -> set[str]:
        return {str(reason.get("Code", "")) for reason in self._reasons}


# What a writer makes of its cancelled transaction: its own error, or None to leave it to
# the generic translation.
Interpret = Callable[[Cancellation], Exception | None]


@contextlib.contextmanager
def translated(call: str, interpret: Interpret | None = None) -> Iterator[None]:
    """Run DynamoDB call `call` (its name, for the log), raising the kit's errors for botocore's.

    Raises what `interpret` returns for a cancelled transaction, UnavailableError for
    throttling, connection failures and missing credentials, InternalError for anything
    else."""
    try:
        yield
    except DynamoDBError as exc:
        raise _client_error(exc, exc.response, call, interpret) from exc
    except ConnectionFailure as exc:
        raise UnavailableError() from exc
    except Exception as exc:
        failure = aws.failure(exc)
        if failure is None:
            raise
        if failure.kind == "service":
            raise _client_error(exc, failure.response, call, interpret) from exc
        if failure.kind == "connection":
            raise UnavailableError() from exc
        if failure.kind == "credentials":  # none found, or expired and not renewed: retryable
            log.error("DynamoDB %s failed: no usable AWS credentials (%s)", call, exc)
            raise UnavailableError() from exc
        log.error("DynamoDB %s failed: %s", call, exc)
        raise InternalError() from exc


def error_code(exc: BaseException) -> str:
    """The service's error code of a client exception ("" for anything else)."""
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def _client_error(exc: Exception, response: Mapping[str, Any], call: str,
                  interpret: Interpret | None) -> Exception:
    code = response.get("Error", {}).get("Code", "")
    if code == "ConditionalCheckFailedException" and interpret is not None:
        # A single conditional write: its failed condition, and the old item if it was asked
        # for (ReturnValuesOnConditionCheckFailure), read like one transaction item's.
        reason: dict[str, Any] = {"Code": "ConditionalCheckFailed"}
        item: Any = response.get("Item")
        if item is not None:
            reason["Item"] = item
        error = interpret(Cancellation([reason]))
        if error is not None:
            return error
    if code == "TransactionCanceledException":
        reasons: Any = response.get("CancellationReasons", [])
        cancellation = Cancellation(reasons)
        error = None if interpret is None else interpret(cancellation)
        if error is not None:
            return error
        if cancellation.codes() & _UNAVAILABLE_REASONS:
            if cancellation.codes() & _THROTTLED:
                metrics.count(metrics.THROTTLES, ("Operation", call))
            return UnavailableError()
        log.error("DynamoDB transaction cancelled: %s %s", exc, cancellation.codes())
        return InternalError()
    if code in _UNAVAILABLE:
        if code in _THROTTLED:
            metrics.count(metrics.THROTTLES, ("Operation", call))
        return UnavailableError()
    log.error("DynamoDB %s failed: %s", call, exc)
    return InternalError()
