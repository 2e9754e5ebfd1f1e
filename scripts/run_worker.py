"""Run the queue worker outside Lambda: long-poll the queue and hand each message to
`handlers.worker.handler` as the Lambda SQS event source does (batch size 1, the real
record shape, partial batch responses). A message that succeeded is deleted; a failed one
reappears after the queue's visibility timeout, and SQS counts its receives.

    A2A_QUEUE_URL=... A2A_TABLE=... python -m scripts.run_worker [--timeout SECONDS]

`--timeout` plays the Lambda function's timeout: each invocation's remaining time starts
there (default 900 s, Lambda's ceiling).
"""

from __future__ import annotations

import argparse
import time

from a2akit import aws, logs
from a2akit.execution.lane import sqs_record
from a2akit.settings import ENV, Settings


class _Context:
    """What the worker reads of a Lambda context: the time left in this invocation."""

    def __init__(self, timeout: float) -> None:
        self._end = time.monotonic() + timeout

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._end - time.monotonic()) * 1000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    settings = Settings.from_env()
    if not settings.queue_url:
        raise SystemExit(f"{ENV.QUEUE_URL} is not set")
    logs.configure(settings.log_level, settings.service("worker"))
    from handlers.worker import handler  # after logging: it builds the store and agent

    sqs = aws.client("sqs", endpoint_url=settings.sqs_endpoint)
    arn = sqs.get_queue_attributes(QueueUrl=settings.queue_url,
                                   AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    region = sqs.meta.region_name
    print("worker polling", settings.queue_url, flush=True)
    while True:
        received = sqs.receive_message(QueueUrl=settings.queue_url, MaxNumberOfMessages=1,
                                       WaitTimeSeconds=1, AttributeNames=["All"],
                                       MessageAttributeNames=["All"])
        for message in received.get("Messages", []):
            event = {"Records": [sqs_record(message, arn, region)]}
            result = handler(event, _Context(args.timeout))
            failed = {item["itemIdentifier"] for item in result["batchItemFailures"]}
            if message["MessageId"] not in failed:
                sqs.delete_message(QueueUrl=settings.queue_url,
                                   ReceiptHandle=message["ReceiptHandle"])


if __name__ == "__main__":
    main()
