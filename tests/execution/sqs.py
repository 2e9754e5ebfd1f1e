"""SQS for the queue tests, on moto's server (the session's `moto_endpoint`; DynamoDB Local
has no SQS). The kit reaches it through boto3 with `endpoint_url` (`AWS_ENDPOINT_URL_SQS`), as
it reaches DynamoDB Local; nothing in the process is patched."""

from __future__ import annotations

import json
import uuid
from typing import Any

__all__ = ["make_queues"]


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
