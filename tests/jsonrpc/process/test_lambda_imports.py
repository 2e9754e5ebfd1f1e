"""What the JSON-RPC Lambda handler imports, in a fresh interpreter as Lambda's runtime loads it:
no grpc, and with a table no botocore."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_lambda_handler_does_not_import_grpc() -> None:
    # Nor, with authentication off, the JWT library or boto3 (tests/auth/process/test_imports.py).
    heavy = ("grpc", "boto3", "jwt", "cryptography")
    code = f"import sys, handlers.jsonrpc; print(*(m in sys.modules for m in {heavy!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"A2A_ALLOW_ANONYMOUS": "true", "PATH": ""})
    assert out.stdout.split() == ["False"] * len(heavy)


@pytest.mark.slow
def test_lambda_handler_with_a_table_does_not_import_botocore() -> None:
    # Lambda's environment: a table, credentials, a region and the function's name (so no
    # read of the table at start, a2akit.runtime.make_store). The store then runs on the
    # kit's own client, and botocore (about 0.25 s of cold start) is never loaded.
    code = ("import sys, handlers.jsonrpc; print(type(handlers.jsonrpc.operations.store"
            "._client).__name__, 'botocore' in sys.modules)")
    env = {"A2A_ALLOW_ANONYMOUS": "true", "PATH": "", "A2A_TABLE": "tasks",
           "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_SESSION_TOKEN": "c",
           "AWS_REGION": "us-east-1", "AWS_LAMBDA_FUNCTION_NAME": "door"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.split() == ["Client", "False"]
