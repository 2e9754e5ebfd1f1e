"""A task's message on the rehearsal's task queue (moto), found by the task's id: the
rehearsals share the queue, and each takes only its own."""

from __future__ import annotations

from typing import Any

from tests.support.moto import client as moto_client

__all__ = ["as_lambda_record", "take_message"]


def _find(sqs: Any, queue: str, task_id: str) -> dict[str, Any]:
    got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=5,
                              AttributeNames=["All"])
    (message,) = [m for m in got.get("Messages", []) if task_id in m["Body"]]
    return dict(message)


def take_message(moto_endpoint: str, queue: str, task_id: str) -> str:
    """Receive and delete the task's message; its body."""
    sqs = moto_client("sqs", moto_endpoint)
    try:
        message = _find(sqs, queue, task_id)
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
        return str(message["Body"])
    finally:
        sqs.close()


def as_lambda_record(moto_endpoint: str, queue: str, task_id: str) -> dict[str, Any]:
    """The task's message as Lambda's SQS event source hands it to the worker."""
    sqs = moto_client("sqs", moto_endpoint)
    try:
        message = _find(sqs, queue, task_id)
    finally:
        sqs.close()
    return {"messageId": message["MessageId"], "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"], "attributes": message["Attributes"],
            "messageAttributes": {}, "md5OfBody": message["MD5OfBody"],
            "eventSource": "aws:sqs", "awsRegion": "us-east-1",
            "eventSourceARN": "arn:aws:sqs:us-east-1:111111111111:rehearsal"}
