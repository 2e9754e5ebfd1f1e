"""Receivers for the push tests (plain HTTP, and HTTPS for hook.test from a throwaway CA) and
the dead-letter queue."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.store import table
from a2akit.store.dynamodb import make_client
from scripts.dynamodb_local import CREDENTIALS
from tests.support import moto
from tests.support.webhooks import Authority, Receiver


@pytest.fixture(scope="session")
def authority() -> Authority:
    return Authority()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as hook:
        yield hook


@pytest.fixture
def tls_receiver(authority: Authority) -> Iterator[Receiver]:
    """HTTPS with a certificate valid for hook.test and 127.0.0.1 only."""
    with Receiver(tls=authority.server_context("hook.test")) as hook:
        yield hook


@pytest.fixture
def table_name(ddb_endpoint: str) -> Iterator[str]:
    """A fresh table with its stream, as the stack makes it: its stream holds only this
    test's records."""
    name = f"push-{uuid.uuid4().hex[:10]}"
    client = make_client(ddb_endpoint, "us-east-1")
    client.create_table(**table.create_table_kwargs(name))
    client.get_waiter("table_exists").wait(TableName=name)
    yield name
    client.delete_table(TableName=name)
    client.close()


@pytest.fixture
def dead_letters(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[DeadLetterQueue]:
    """A fresh SQS queue on moto's server for the dispatcher's dead letters; the kit reaches
    it through boto3 with the dummy credentials in the environment, as on AWS."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    sqs = moto.client("sqs", moto_endpoint)
    url = sqs.create_queue(QueueName=f"push-dlq-{uuid.uuid4().hex[:10]}")["QueueUrl"]
    yield DeadLetterQueue(url, moto_endpoint, sqs)
    sqs.close()


@dataclasses.dataclass(frozen=True)
class DeadLetterQueue:
    url: str
    endpoint: str
    sqs: Any

    def records(self) -> list[dict[str, Any]]:
        """What the queue holds now (received, so a second call sees none of these)."""
        messages = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10,
                                            WaitTimeSeconds=1).get("Messages", [])
        return [json.loads(message["Body"]) for message in messages]
