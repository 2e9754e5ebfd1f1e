"""The SQS client of the task queue and the push dead-letter queue (boto3, imported here on
first use, so entry points that need no queue never load it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2akit.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["make_client"]


def make_client(settings: Settings) -> SQSClient:
    """Raises StartupError when boto3 finds no region (the kit's DynamoDB client reads
    AWS_REGION too; boto3 reads AWS_DEFAULT_REGION or a profile)."""
    import boto3
    import botocore.exceptions

    from a2akit.store.dynamodb import client_config

    try:
        return boto3.client("sqs", endpoint_url=settings.sqs_endpoint, config=client_config())
    except botocore.exceptions.NoRegionError as exc:
        from a2akit.runtime import StartupError  # the runtime imports this module lazily too

        raise StartupError("no AWS region for the SQS client (A2A_EXECUTION=queue, "
                           "A2A_PUSH_DLQ_URL); set AWS_DEFAULT_REGION") from exc
