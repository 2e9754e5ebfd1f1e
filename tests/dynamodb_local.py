"""Amazon DynamoDB Local for tests and the bench: install it if missing, start it, stop it.

The emulator ships in the npm package `amplify-dynamodb-simulator` (folder `emulator/`) and
runs on Java 17. It is installed under `.cache/ddb` of the repository (gitignored).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT, free_port, running

CACHE = Path(os.environ.get("A2AKIT_DDB_CACHE", ROOT / ".cache" / "ddb"))
EMULATOR = CACHE / "node_modules" / "amplify-dynamodb-simulator" / "emulator"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_SESSION_TOKEN": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


def set_dummy_credentials() -> None:
    os.environ.update(CREDENTIALS)
    os.environ.pop("AWS_PROFILE", None)


def install() -> Path:
    """The emulator folder, installing the npm package first if it is missing."""
    if not (EMULATOR / "DynamoDBLocal.jar").exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed to install DynamoDB Local")
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE),
             "amplify-dynamodb-simulator"],
            check=True, stdout=subprocess.DEVNULL,
        )
    return EMULATOR


@contextlib.contextmanager
def dynamodb_local() -> Iterator[str]:
    """Run DynamoDB Local on a free loopback port; yields its endpoint URL."""
    emulator = install()
    java = shutil.which("java") or "/usr/bin/java"
    port = free_port()
    command = [java, "-Djava.library.path=DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar",
               "-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(port)]
    with running(command, ports=[port], cwd=emulator):
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def refusing_client() -> Iterator[Any]:
    """A real DynamoDB client whose endpoint refuses connections, with one attempt per call:
    every store call fails at once as UnavailableError. Needs no emulator."""
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
