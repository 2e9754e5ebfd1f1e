"""Cold start: each scheme loads its libraries only when configured. The Lambda handler is
imported in a fresh interpreter with each configuration."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from a2akit.settings import ENV

pytestmark = pytest.mark.slow  # fresh interpreters

HEAVY = ("jwt", "cryptography", "boto3", "botocore", "httpx", "grpc")
PUSH = {ENV.ALLOW_ANONYMOUS: "true", ENV.PUSH_NOTIFICATIONS: "true"}
ISSUER = {ENV.JWT_ISSUER: "https://issuer.example", ENV.JWT_AUDIENCE: "agent"}


@pytest.mark.parametrize(("env", "loaded"), [
    ({ENV.ALLOW_ANONYMOUS: "true"}, set()),
    ({ENV.API_KEYS: "[]"}, set()),
    ({ENV.BEARER_TOKENS: "me=dev-token"}, set()),
    (ISSUER, {"jwt", "cryptography"}),
    ({ENV.API_KEYS_SECRET: "keys", "AWS_DEFAULT_REGION": "us-east-1"}, {"boto3", "botocore"}),
    # Push on Lambda: the stream dispatcher sends, so the front door never loads httpx.
    ({**PUSH, "AWS_LAMBDA_FUNCTION_NAME": "front-door"}, set()),
    # Push delivered in process (local): the sender's HTTP client.
    (PUSH, {"httpx"}),
])
def test_the_handler_imports_only_what_the_schemes_need(env: dict[str, str],
                                                        loaded: set[str]) -> None:
    code = ("import json, sys, handlers.jsonrpc; "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**env, "PATH": ""})
    assert set(json.loads(out.stdout)) == loaded
