"""moto in server mode on a free loopback port (SQS for the queue, Secrets Manager and SSM
for the API-key sources): the kit's real boto3 calls go over HTTP to it; nothing is patched."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import boto3

from tests.support.processes import free_port, running

__all__ = ["REGION", "client", "moto_server"]

REGION = "us-east-1"


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """Start `python -m moto.server`, yield its endpoint URL, stop it."""
    port = free_port()
    with running([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                 ports=[port], timeout=60):
        yield f"http://127.0.0.1:{port}"


def client(service: str, endpoint: str) -> Any:
    """A real boto3 client aimed at the moto server (dummy credentials)."""
    return boto3.client(service, endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id="test", aws_secret_access_key="test")
