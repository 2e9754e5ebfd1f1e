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
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=0.5):
            return True
    except urllib.error.HTTPError:
        return True  # it answered (400 for a bare GET)
    except OSError:
        return False


@contextlib.contextmanager
def dynamodb_local() -> Iterator[str]:
    """Run DynamoDB Local on a free loopback port; yields its endpoint URL."""
    emulator = install()
    java = shutil.which("java") or "/usr/bin/java"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [java, "-Djava.library.path=DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar",
         "-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(port)],
        cwd=emulator, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not _answers(url):
            if process.poll() is not None:
                raise RuntimeError(f"DynamoDB Local exited with {process.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError("DynamoDB Local did not start in 30 s")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
