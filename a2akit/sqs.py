"""The SQS client of the task queue and the push dead-letter queue (boto3, imported here on
first use, so entry points that need no queue never load it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2akit.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["make_client"]


def make_client(settings: Settings) -> SQSClient:
    import boto3

    from a2akit.store.dynamodb import client_config

    return boto3.client("sqs", endpoint_url=settings.sqs_endpoint, config=client_config())
