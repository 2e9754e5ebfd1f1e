"""SQS for tests: moto in server mode on a free loopback port (DynamoDB Local has no SQS).

The kit reaches it through boto3 with `endpoint_url` (`AWS_ENDPOINT_URL_SQS`), as it reaches
DynamoDB Local; nothing in the process is patched.
"""

from __future__ import annotations

import contextlib
import json
import sys
import uuid
from collections.abc import Iterator
from typing import Any

from tests.support.processes import free_port, running

__all__ = ["make_queues", "moto_sqs"]


@contextlib.contextmanager
def moto_sqs() -> Iterator[str]:
    """Run moto's server; yields its endpoint URL."""
    port = free_port()
    with running([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                 ports=[port]):
        yield f"http://127.0.0.1:{port}"


def make_queues(sqs: Any, *, visibility_seconds: int = 30, max_receives: int = 3
                ) -> tuple[str, str]:
    """A fresh queue and its dead-letter queue (after `max_receives` receives), as the CDK
    stack makes them; returns (queue URL, dead-letter queue URL)."""
    name = f"a2a-{uuid.uuid4().hex[:10]}"
    dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])
    redrive = {"deadLetterTargetArn": arn["Attributes"]["QueueArn"],
               "maxReceiveCount": str(max_receives)}
    queue = sqs.create_queue(QueueName=name, Attributes={
        "VisibilityTimeout": str(visibility_seconds), "RedrivePolicy": json.dumps(redrive)})
    return queue["QueueUrl"], dlq
