"""DynamoDB clients for tests that need no emulator."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

__all__ = ["refusing_client"]


@contextlib.contextmanager
def refusing_client() -> Iterator[Any]:
    """A real DynamoDB client whose endpoint refuses connections, with one attempt per call:
    every store call fails at once as UnavailableError."""
    import boto3
    import botocore.config

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        client = boto3.client(
            "dynamodb", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
            aws_access_key_id="test", aws_secret_access_key="test",
            config=botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 1},
                                          connect_timeout=0.5, read_timeout=1))
        try:
            yield client
        finally:
            client.close()
