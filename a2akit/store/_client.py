"""A DynamoDB client without botocore, for Lambda's cold start: JSON over HTTPS, SigV4, retries.

`import boto3` and `boto3.client("dynamodb")` cost about 250 ms of a Lambda cold start here
(botocore's imports and its service model), far more than the rest of the kit. DynamoDB's
API is small JSON over one POST, so this client speaks it directly with the standard library:

- the methods the store calls (`get_item`, `query`, `transact_write_items`, ...) take and
  return exactly what boto3's low-level client does (attribute values as dicts, `B` as
  bytes), so `DynamoDBStore` works with either;
- requests are signed with SigV4 (`_sigv4`: the signing key is derived once per day and
  region);
- retries follow botocore's standard mode: throttling, transient errors, 5xx and connection
  failures, up to `max_attempts` calls in all, with jittered exponential backoff;
- each thread keeps one keep-alive connection (the store calls from worker threads);
  `close()` drops them all, and the next call opens a new one (SnapStart restores);
- errors are `_errors.DynamoDBError` (the service answered with an error; `response` has
  botocore's shape: `Error.Code`, `CancellationReasons`) or `_errors.ConnectionFailure`;
  `_errors.translated` turns both into the kit's errors, like botocore's.

Credentials come from the environment (`_credentials`). `env_client` builds this
client when the environment names credentials and a region; anywhere else (profiles, SSO,
instance roles) the store uses boto3.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import http.client
import json
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any, TypeVar

from a2akit.aws import MAX_ATTEMPTS
from a2akit.ids import new_id
from a2akit.store._credentials import CredentialSource, credential_source
from a2akit.store._errors import ConnectionFailure, DynamoDBError
from a2akit.store._sigv4 import Signer

__all__ = ["Client", "SqsClient", "default_endpoint", "env_client", "env_sqs_client"]

# botocore's standard retry mode: what is retried.
_RETRY_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "ProvisionedThroughputExceededException",
    "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
    "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete",
    "RequestTimeout", "RequestTimeoutException", "InternalServerError", "ServiceUnavailable",
})
_RETRY_STATUS = frozenset({500, 502, 503, 504})
_BASE_DELAY = 0.05  # DynamoDB's retry base (botocore's legacy mode uses it too)
_MAX_DELAY = 20.0


def default_endpoint(region: str, service: str = "dynamodb") -> str:
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://{service}.{region}.{suffix}"


class _Meta:
    def __init__(self, endpoint_url: str, region_name: str) -> None:
        self.endpoint_url = endpoint_url
        self.region_name = region_name


class Client:
    """The subset of boto3's DynamoDB client the store uses. Thread-safe. A subclass speaks
    another AWS JSON service with the same transport, signing and retries (`SqsClient`)."""

    SERVICE, TARGET, NAME = "dynamodb", "DynamoDB_20120810.", "DynamoDB"

    def __init__(self, endpoint_url: str, region: str, credentials: CredentialSource, *,
                 max_attempts: int = 5, connect_timeout: float = 3,
                 read_timeout: float = 10) -> None:
        url = urllib.parse.urlsplit(endpoint_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an endpoint URL: {endpoint_url!r}")
        self.meta = _Meta(endpoint_url, region)
        self._https = url.scheme == "https"
        self._host = url.hostname
        self._port = url.port
        self._credentials = credentials
        self._signer = Signer(url.netloc, region, credentials, service=self.SERVICE,
                              target=self.TARGET)
        self._max_attempts = max_attempts
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._local = threading.local()
        self._generation = 0  # bumped by close(): every thread reconnects
        self._open: set[http.client.HTTPConnection] = set()  # every thread's, for close()
        self._open_lock = threading.Lock()

    # --- the operations the store uses ------------------------------------------------------

    def get_item(self, **params: Any) -> dict[str, Any]:
        return self.call("GetItem", params)

    def put_item(self, **params: Any) -> dict[str, Any]:
        return self.call("PutItem", params)

    def update_item(self, **params: Any) -> dict[str, Any]:
        return self.call("UpdateItem", params)

    def delete_item(self, **params: Any) -> dict[str, Any]:
        return self.call("DeleteItem", params)

    def query(self, **params: Any) -> dict[str, Any]:
        return self.call("Query", params)

    def transact_write_items(self, **params: Any) -> dict[str, Any]:
        return self.call("TransactWriteItems", params)

    def batch_write_item(self, **params: Any) -> dict[str, Any]:
        return self.call("BatchWriteItem", params)

    def batch_get_item(self, **params: Any) -> dict[str, Any]:
        return self.call("BatchGetItem", params)

    def describe_table(self, **params: Any) -> dict[str, Any]:
        return self.call("DescribeTable", params)

    def create_table(self, **params: Any) -> dict[str, Any]:
        return self.call("CreateTable", params)

    def __del__(self) -> None:
        # A call still in flight when its owner closed the client (a background task of a
        # finished request, say) may have opened one more connection: close it with us.
        with contextlib.suppress(Exception):
            self.close()

    def close(self) -> None:
        """Close every thread's connection and forget fetched credentials; later calls open
        new connections and fetch again."""
        self._credentials.reset()
        with self._open_lock:
            self._generation += 1
            connections, self._open = self._open, set()
        for connection in connections:
            connection.close()

    # --- one call -----------------------------------------------------------------------------

    def call(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Raises DynamoDBError or ConnectionFailure once the retries are spent."""
        if operation == "TransactWriteItems" and "ClientRequestToken" not in params:
            # As botocore does: a retried transaction (say, after a lost response) is then
            # applied once, not twice.
            params = {**params, "ClientRequestToken": new_id()}
        body = json.dumps(params, separators=(",", ":"), default=_blob).encode()
        for attempt in range(self._max_attempts):
            last = attempt == self._max_attempts - 1
            try:
                status, data = self._send(operation, body)
            except (OSError, http.client.HTTPException) as exc:
                self._drop()
                if last:
                    raise ConnectionFailure(f"{self.NAME} {operation}: {exc}") from exc
            else:
                if status == 200:
                    result: dict[str, Any] = json.loads(data, object_hook=_blobs)
                    return result
                error = _error(status, data)
                if last or not (error.code in _RETRY_CODES or status in _RETRY_STATUS):
                    raise error
            time.sleep(random.random() * min(_MAX_DELAY, _BASE_DELAY * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, operation: str, body: bytes) -> tuple[int, bytes]:
        headers = self._signed_headers(operation, body)
        connection = self._connection()
        connection.request("POST", "/", body, headers)
        response = connection.getresponse()
        data = response.read()
        if response.will_close:
            self._drop()
        return response.status, data

    def _connection(self) -> http.client.HTTPConnection:
        local = self._local
        connection: http.client.HTTPConnection | None = getattr(local, "connection", None)
        if connection is None or local.generation != self._generation:
            if connection is not None:
                self._forget(connection)
            connection = self._connect()
            with self._open_lock:
                self._open.add(connection)
                local.connection, local.generation = connection, self._generation
        return connection

    def _connect(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection
        if self._https:
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self._connect_timeout, context=_tls_context())
        else:
            connection = http.client.HTTPConnection(self._host, self._port,
                                                    timeout=self._connect_timeout)
        connection.connect()
        if connection.sock is not None:
            connection.sock.settimeout(self._read_timeout)
        return connection

    def _drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            self._forget(connection)
            self._local.connection = None

    def _forget(self, connection: http.client.HTTPConnection) -> None:
        connection.close()
        with self._open_lock:
            self._open.discard(connection)

    def _signed_headers(self, operation: str, body: bytes,
                        now: datetime.datetime | None = None) -> dict[str, str]:
        return self._signer.headers(operation, body, now)


class SqsClient(Client):
    """The SQS call the front door makes in queue mode, over SQS's JSON protocol: the same
    client family as the store's (the numbers: docs/performance.md, "One AWS client"), so a
    queue-mode door loads no botocore at all."""

    SERVICE, TARGET, NAME = "sqs", "AmazonSQS.", "SQS"

    def send_message(self, **params: Any) -> dict[str, Any]:
        return self.call("SendMessage", params)


def env_sqs_client(endpoint_url: str | None = None,
                   environ: Mapping[str, str] | None = None) -> SqsClient | None:
    """`env_client`'s rule for SQS: the kit's client when the environment names credentials
    and a region (Lambda, ECS), None otherwise (use boto3's)."""
    return _from_env(SqsClient, "sqs", endpoint_url, environ)


def _blob(value: object) -> str:
    """JSON for binary attribute values (`B`, `BS`): base64, as the wire format has it."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode()
    raise TypeError(f"cannot send {type(value).__name__} to DynamoDB")


def _blobs(obj: dict[str, Any]) -> dict[str, Any]:
    """Decode binary attribute values in a response back to bytes, as boto3 returns them."""
    if len(obj) == 1:
        if isinstance(obj.get("B"), str):
            return {"B": base64.b64decode(obj["B"])}
        if isinstance(obj.get("BS"), list):
            return {"BS": [base64.b64decode(v) for v in obj["BS"]]}
    return obj


def _error(status: int, data: bytes) -> DynamoDBError:
    try:
        body = json.loads(data, object_hook=_blobs) if data else {}
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    code = str(body.get("__type", "")).rsplit("#", 1)[-1] or f"HTTP{status}"
    message = str(body.get("message") or body.get("Message") or "")
    response: dict[str, Any] = {"Error": {"Code": code, "Message": message},
                                "ResponseMetadata": {"HTTPStatusCode": status}}
    if "CancellationReasons" in body:
        response["CancellationReasons"] = body["CancellationReasons"]
    if isinstance(body.get("Item"), dict):
        # ReturnValuesOnConditionCheckFailure: the item as it was, as botocore returns it.
        response["Item"] = body["Item"]
    return DynamoDBError(code, message, response)


_TLS: Any = None


def _tls_context() -> Any:
    """One verifying TLS context per process (loading the CA store takes a few ms)."""
    global _TLS
    if _TLS is None:
        import ssl

        _TLS = ssl.create_default_context()
    return _TLS


def env_client(endpoint_url: str | None = None,
               environ: Mapping[str, str] | None = None) -> Client | None:
    """The kit's own client when the environment names credentials (static keys or a
    container credentials endpoint, as Lambda and ECS do) and a region; None otherwise
    (profiles, SSO, instance roles: use `make_client`). The endpoint is `endpoint_url`, else
    boto3's own variables (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL), else the region's."""
    return _from_env(Client, "dynamodb", endpoint_url, environ)


C = TypeVar("C", bound=Client)


def _from_env(kind: type[C], service: str, endpoint_url: str | None,
              environ: Mapping[str, str] | None) -> C | None:
    env = os.environ if environ is None else environ
    credentials = credential_source(env)
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    variants = ("AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT")
    if credentials is None or not region or any(
            env.get(name, "").lower() == "true" for name in variants):
        return None
    if not endpoint_url and env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() != "true":
        endpoint_url = env.get(f"AWS_ENDPOINT_URL_{service.upper()}") or env.get(
            "AWS_ENDPOINT_URL")
    return kind(endpoint_url or default_endpoint(region, service), region, credentials,
                max_attempts=MAX_ATTEMPTS, connect_timeout=3, read_timeout=10)
