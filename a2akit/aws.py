"""The AWS edge: the one place that makes boto3 clients and reads botocore's exceptions.

boto3 and botocore are imported on first use, so entry points that make no AWS client (the
Lambda front door in inline mode, on the kit's own DynamoDB client) never load them. Which
AWS failure an exception is comes from `failure()`; each caller decides what that means
for it (the store: UnavailableError or InternalError; an API-key source: a SourceError; the
start of a process: one line naming what to fix).

    AwsFailure.kind   raised for
    "service"         ClientError: AWS answered with an error (`code` is its error code)
    "connection"      ConnectionError, HTTPClientError: AWS could not be reached
    "region"          NoRegionError: no region configured for the client
    "credentials"     no credentials found, or incomplete, or not retrievable
    "client"          any other BotoCoreError (parameters, ...)
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["AwsFailure", "client", "failure"]

# The store's and the queues' client: standard retries (throttling, transient errors) with
# backoff, and timeouts short enough for a request path.
MAX_ATTEMPTS = 5


def client(service: str, *, endpoint_url: str | None = None, region_name: str | None = None,
           max_attempts: int = MAX_ATTEMPTS, timeout: float = 10,
           connect_timeout: float = 3) -> Any:
    """A boto3 client of `service` ("dynamodb", "sqs", "secretsmanager", "ssm"). Its own
    environment (AWS_REGION, AWS_ENDPOINT_URL_<SERVICE>, credentials) fills in the rest.

    Raises ValueError for an unusable endpoint URL and botocore's errors otherwise (read
    them with `failure`)."""
    import boto3
    import botocore.config

    config = botocore.config.Config(
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        connect_timeout=connect_timeout, read_timeout=timeout)
    return boto3.client(service, endpoint_url=endpoint_url,  # type: ignore[call-overload]
                        region_name=region_name, config=config)


@dataclasses.dataclass(frozen=True)
class AwsFailure:
    """What a botocore exception means (see the table in the module docstring)."""

    kind: Literal["service", "connection", "region", "credentials", "client"]
    code: str  # the service's error code, else the exception's class name
    response: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def failure(exc: BaseException) -> AwsFailure | None:
    """What `exc` means if botocore raised it, else None. botocore is never imported here:
    when it is not loaded, none of its exceptions can have been raised."""
    botocore = sys.modules.get("botocore.exceptions")
    if botocore is None:
        return None
    if isinstance(exc, botocore.ClientError):
        response: Mapping[str, Any] = exc.response
        return AwsFailure("service", str(response.get("Error", {}).get("Code", "")), response)
    name = type(exc).__name__
    if isinstance(exc, botocore.ConnectionError | botocore.HTTPClientError):
        return AwsFailure("connection", name)
    if isinstance(exc, botocore.NoRegionError):
        return AwsFailure("region", name)
    if isinstance(exc, botocore.NoCredentialsError | botocore.PartialCredentialsError
                  | botocore.CredentialRetrievalError):
        return AwsFailure("credentials", name)
    if isinstance(exc, botocore.BotoCoreError):
        return AwsFailure("client", name)
    return None
