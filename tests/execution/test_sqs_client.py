"""The kit's SQS client (a2akit/store/_client.py, SqsClient): the store client's family on SQS's
JSON protocol. Its signature is botocore's; against moto's server a message sent is received,
and a missing queue is an error the queue turns into UnavailableError; a queue-mode front door
with credentials in its environment (as on Lambda) loads no botocore."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import botocore.auth
import botocore.awsrequest
import botocore.credentials
import pytest

from a2akit.errors import UnavailableError
from a2akit.execution.queue import Job, SqsQueue, make_queue
from a2akit.settings import Settings
from a2akit.store._client import SqsClient, env_sqs_client
from a2akit.store._credentials import Credentials
from a2akit.store.base import Scope
from tests.support.moto import client as aws_client

pytestmark = pytest.mark.slow

NOW = datetime.datetime(2026, 12, 3, 9, 30, 15, tzinfo=datetime.UTC)
ENV = {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_REGION": "us-east-1"}


def test_signature_matches_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    client = SqsClient("https://sqs.eu-west-1.amazonaws.com", "eu-west-1",
                       Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"))
    body = b'{"QueueUrl":"https://sqs.eu-west-1.amazonaws.com/1/q","MessageBody":"m"}'
    mine = client._signed_headers("SendMessage", body, NOW)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: NOW)
    request = botocore.awsrequest.AWSRequest(
        method="POST", url="https://sqs.eu-west-1.amazonaws.com/", data=body,
        headers={"Content-Type": "application/x-amz-json-1.0",
                 "X-Amz-Target": "AmazonSQS.SendMessage"})
    credentials = botocore.credentials.Credentials(
        "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    botocore.auth.SigV4Auth(credentials, "sqs", "eu-west-1").add_auth(request)
    assert mine["authorization"] == request.headers["Authorization"]
    assert mine["x-amz-target"] == "AmazonSQS.SendMessage"


def test_the_region_and_the_endpoint_variables_choose_the_endpoint() -> None:
    assert env_sqs_client(environ={}) is None  # no credentials: boto3's then
    made = env_sqs_client(environ={**ENV, "AWS_REGION": "eu-west-1"})
    assert made is not None and made.meta.endpoint_url == "https://sqs.eu-west-1.amazonaws.com"
    aimed = env_sqs_client(environ={**ENV, "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:9"})
    assert aimed is not None and aimed.meta.endpoint_url == "http://127.0.0.1:9"


@pytest.fixture
def queue(moto_endpoint: str) -> Iterator[tuple[Any, str]]:
    sqs = aws_client("sqs", moto_endpoint)
    yield sqs, sqs.create_queue(QueueName="kit-client")["QueueUrl"]
    sqs.close()


@pytest.mark.anyio
async def test_a_job_sent_is_received_and_a_missing_queue_is_unavailable(
        queue: tuple[Any, str], moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sqs, url = queue
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    settings = Settings(execution="queue", queue_url=url, table="t", sqs_endpoint=moto_endpoint)
    sent = make_queue(settings)
    assert isinstance(sent.client, SqsClient)
    job = Job(scope=Scope("", "alice"), task_id="t-1", message_id="m-1", lease_owner="queue",
              new_task=True)
    await sent.send(job)
    (message,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    assert Job.decode(message["Body"]).task_id == "t-1"
    with pytest.raises(UnavailableError):
        await SqsQueue(url + "-gone", sent.client).send(job)
