"""The kit's own DynamoDB client (used on Lambda): signing, the wire format, retries, errors.

Its calls against DynamoDB Local are the store contract suite (`tests/store`, store
`dynamodb-kit-client`); here is what needs no emulator."""

from __future__ import annotations

import datetime
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import botocore.auth
import botocore.awsrequest
import botocore.credentials
import pytest

from a2akit.errors import InternalError, UnavailableError
from a2akit.store._client import Client
from a2akit.store._credentials import Credentials
from a2akit.store._errors import ConnectionFailure, DynamoDBError, translated
from a2akit.store.dynamodb import env_client
from tests.support.processes import free_port

NOW = datetime.datetime(2026, 12, 3, 9, 30, 15, tzinfo=datetime.UTC)


@pytest.mark.parametrize("token", [None, "session-token"])
def test_signature_matches_botocore(monkeypatch: pytest.MonkeyPatch, token: str | None) -> None:
    client = Client("https://dynamodb.eu-west-1.amazonaws.com", "eu-west-1",
                    Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token))
    body = b'{"TableName":"t","Key":{"pk":{"S":"a"}}}'
    mine = client._signed_headers("GetItem", body, NOW)

    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: NOW)
    request = botocore.awsrequest.AWSRequest(
        method="POST", url="https://dynamodb.eu-west-1.amazonaws.com/", data=body,
        headers={"Content-Type": "application/x-amz-json-1.0",
                 "X-Amz-Target": "DynamoDB_20120810.GetItem"})
    credentials = botocore.credentials.Credentials(
        "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    botocore.auth.SigV4Auth(credentials, "dynamodb", "eu-west-1").add_auth(request)
    assert mine["authorization"] == request.headers["Authorization"]
    assert mine["x-amz-date"] == request.headers["X-Amz-Date"] == "20261203T093015Z"


class _Fake(http.server.BaseHTTPRequestHandler):
    """A DynamoDB endpoint that answers from a script: a list of (status, body)."""

    script: ClassVar[list[tuple[int, dict[str, Any]]]] = []
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_GET(self) -> None:
        # The container credentials endpoint.
        _Fake.seen.append({"path": self.path, "authorization": self.headers["authorization"]})
        self._answer(*_Fake.script.pop(0))

    def do_POST(self) -> None:
        length = int(self.headers["content-length"])
        _Fake.seen.append({"target": self.headers["x-amz-target"],
                           "authorization": self.headers["authorization"],
                           "body": json.loads(self.rfile.read(length))})
        self._answer(*_Fake.script.pop(0))

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/x-amz-json-1.0")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def fake_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Fake.script, _Fake.seen = [], []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def fake(fake_url: str) -> Iterator[Client]:
    client = Client(fake_url, "us-east-1", Credentials("a", "b"), max_attempts=3)
    yield client
    client.close()


def test_container_credentials_are_fetched_used_and_refetched_after_close(
        fake_url: str) -> None:
    # Lambda with SnapStart (and ECS) give credentials through this endpoint, not as keys.
    env = {"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_DYNAMODB": fake_url,
           "AWS_CONTAINER_CREDENTIALS_FULL_URI": f"{fake_url}/credentials",
           "AWS_CONTAINER_AUTHORIZATION_TOKEN": "secret-token"}
    client = env_client(environ=env)
    assert client is not None

    def issued(key: str) -> tuple[int, dict[str, Any]]:
        return 200, {"AccessKeyId": key, "SecretAccessKey": "s", "Token": "t",
                     "Expiration": "2099-01-01T00:00:00Z"}

    _Fake.script = [issued("KEY1"), (200, {}), (200, {}), issued("KEY2"), (200, {})]
    client.get_item(TableName="t", Key={})
    client.get_item(TableName="t", Key={})  # cached: no second fetch
    client.close()  # what a restored snapshot runs: fetch anew
    client.get_item(TableName="t", Key={})
    client.close()
    fetches = [seen for seen in _Fake.seen if "path" in seen]
    assert [seen["authorization"] for seen in fetches] == ["secret-token"] * 2
    assert all(seen["path"] == "/credentials" for seen in fetches)
    keys = [seen["authorization"].split("Credential=")[1].split("/")[0]
            for seen in _Fake.seen if "target" in seen]
    assert keys == ["KEY1", "KEY1", "KEY2"]


def test_binary_values_go_as_base64_and_come_back_as_bytes(fake: Client) -> None:
    _Fake.script = [(200, {"Item": {"pk": {"S": "a"}, "task": {"B": "AAEC/w=="},
                                    "set": {"BS": ["AQ=="]}}})]
    got = fake.put_item(TableName="t", Item={"pk": {"S": "a"}, "task": {"B": b"\x00\x01"}})
    assert _Fake.seen[0]["target"] == "DynamoDB_20120810.PutItem"
    assert _Fake.seen[0]["body"]["Item"]["task"] == {"B": "AAE="}
    assert got["Item"]["task"] == {"B": b"\x00\x01\x02\xff"}
    assert got["Item"]["set"] == {"BS": [b"\x01"]}


def test_throttling_is_retried_then_unavailable(fake: Client) -> None:
    throttled = {"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException",
                 "message": "slow down"}
    _Fake.script = [(400, throttled)] * 3
    with pytest.raises(UnavailableError) as caught, translated("GetItem"):
        fake.get_item(TableName="t", Key={})
    assert isinstance(caught.value.__cause__, DynamoDBError)
    assert len(_Fake.seen) == 3  # max_attempts calls in all


def test_a_retry_can_succeed(fake: Client) -> None:
    _Fake.script = [(500, {"__type": "InternalServerError"}), (200, {"Items": []})]
    assert fake.query(TableName="t") == {"Items": []}
    assert len(_Fake.seen) == 2


def test_a_transaction_carries_one_token_across_retries(fake: Client) -> None:
    _Fake.script = [(500, {}), (200, {})]
    fake.transact_write_items(TransactItems=[])
    tokens = {seen["body"]["ClientRequestToken"] for seen in _Fake.seen}
    assert len(_Fake.seen) == 2 and len(tokens) == 1


def test_cancellation_reasons_reach_the_interpreter(fake: Client) -> None:
    _Fake.script = [(400, {"__type": "com.amazonaws.dynamodb.v20120810#"
                                     "TransactionCanceledException",
                           "Message": "cancelled",
                           "CancellationReasons": [
                               {"Code": "ConditionalCheckFailed",
                                "Item": {"task_id": {"S": "t1"}, "blob": {"B": "AA=="}}},
                               {"Code": "None"}]})]
    seen = []

    def interpret(cancellation: Any) -> Exception | None:
        seen.append((cancellation.failed(0), cancellation.old_item(0)))
        return KeyError("mine")

    with pytest.raises(KeyError), translated("TransactWriteItems", interpret):
        fake.transact_write_items(TransactItems=[])
    assert seen == [(True, {"task_id": {"S": "t1"}, "blob": {"B": b"\x00"}})]
    assert len(_Fake.seen) == 1  # a cancelled transaction is not retried


def test_a_failed_update_condition_returns_the_old_item(fake: Client) -> None:
    # swap_lease: one conditional UpdateItem with ReturnValuesOnConditionCheckFailure; the
    # old item comes back in the error, read like a one-item cancellation.
    _Fake.script = [(400, {"__type": "com.amazonaws.dynamodb.v20120810#"
                                     "ConditionalCheckFailedException",
                           "message": "The conditional request failed",
                           "Item": {"lease_owner": {"S": "w2"}, "task": {"B": "AA=="}}})]
    seen = []

    def interpret(cancellation: Any) -> Exception | None:
        seen.append((cancellation.failed(0), cancellation.old_item(0)))
        return KeyError("lost")

    with pytest.raises(KeyError), translated("UpdateItem", interpret):
        fake.update_item(TableName="t", Key={}, UpdateExpression="SET a = :a",
                         ConditionExpression="lease_owner = :o", ReturnValues="ALL_NEW",
                         ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert _Fake.seen[0]["target"] == "DynamoDB_20120810.UpdateItem"
    assert _Fake.seen[0]["body"]["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    assert seen == [(True, {"lease_owner": {"S": "w2"}, "task": {"B": b"\x00"}})]
    assert len(_Fake.seen) == 1  # a failed condition is not retried


def test_other_errors_are_internal(fake: Client) -> None:
    _Fake.script = [(400, {"__type": "com.amazonaws.dynamodb.v20120810#ValidationException",
                           "message": "bad"})]
    with pytest.raises(InternalError) as caught, translated("Query"):
        fake.query(TableName="t")
    assert isinstance(caught.value.__cause__, DynamoDBError)
    assert caught.value.__cause__.code == "ValidationException"


def test_unreachable_is_unavailable() -> None:
    client = Client(f"http://127.0.0.1:{free_port()}", "us-east-1", Credentials("a", "b"),
                    max_attempts=2, connect_timeout=0.5)
    with pytest.raises(UnavailableError) as caught, translated("GetItem"):
        client.get_item(TableName="t", Key={})
    assert isinstance(caught.value.__cause__, ConnectionFailure)


def test_env_client_needs_credentials_and_a_region() -> None:
    full = {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_REGION": "eu-west-1"}
    client = env_client(environ=full)
    assert client is not None
    assert client.meta.endpoint_url == "https://dynamodb.eu-west-1.amazonaws.com"
    for missing in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"):
        assert env_client(environ={k: v for k, v in full.items() if k != missing}) is None
    # Endpoint variants it does not build: boto3 then.
    assert env_client(environ={**full, "AWS_USE_FIPS_ENDPOINT": "true"}) is None
    # boto3's endpoint variables, the service's first; an explicit endpoint wins.
    local = {**full, "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
             "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:2"}
    assert env_client(environ=local).meta.endpoint_url == "http://127.0.0.1:2"  # type: ignore[union-attr]
    assert env_client("http://127.0.0.1:3", local).meta.endpoint_url == (  # type: ignore[union-attr]
        "http://127.0.0.1:3")
    assert env_client(environ={**full, "AWS_REGION": "cn-north-1"}).meta.endpoint_url == (  # type: ignore[union-attr]
        "https://dynamodb.cn-north-1.amazonaws.com.cn")
    # ECS and Fargate task roles: the relative container URI.
    task_role = {"AWS_REGION": "eu-west-1", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/x"}
    assert env_client(environ=task_role) is not None
