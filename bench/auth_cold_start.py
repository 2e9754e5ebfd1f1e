"""Cold-start cost of each authentication scheme on the Lambda handler, against no auth.

Run: `.venv/bin/python bench/auth_cold_start.py [RUNS]` (default 7). Each run of each scheme
is a fresh interpreter that imports `handlers.jsonrpc` (settings, card, the scheme's
libraries) and answers one verified GetTask through the Mangum handler with a Lambda event:
"import" is the first, "first request" the second (for JWT it includes discovery and the JWKS
fetch, for Secrets Manager the boto3 client and GetSecretValue). The issuer is a local HTTP
server and the secret lives on a moto server, both on loopback, started here. Reported:
medians, and import + first request as a ratio of the same for no auth, measured in this run.
The last rows use a DynamoDB task store (on the moto server too), as a deployment does, and
the ratio is against no auth with the same store (the kit's own DynamoDB client loads no
boto3; an AWS key source does).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2akit.auth.api_keys import hash_key, new_key  # noqa: E402
from tests.auth.issuer import AUDIENCE, Issuer, make_keys  # noqa: E402
from tests.support import moto as aws  # noqa: E402

_CHILD = textwrap.dedent("""
    import json, os, sys, time
    start = time.perf_counter()
    from handlers.jsonrpc import handler
    imported = time.perf_counter()
    event = json.loads(os.environ["BENCH_EVENT"])
    class Context:
        function_name = "bench"; aws_request_id = "r-1"; memory_limit_in_mb = 512
        invoked_function_arn = "arn:aws:lambda:us-east-1:111111111111:function:bench"
        def get_remaining_time_in_millis(self): return 30000
    reply = handler(event, Context())
    answered = time.perf_counter()
    body = json.loads(reply["body"])
    # A verified caller asking for a task it does not have: TaskNotFound, not 401.
    assert body["error"]["data"][0]["reason"] == "TASK_NOT_FOUND", reply
    loaded = [m for m in ("jwt", "cryptography", "boto3") if m in sys.modules]
    print(json.dumps({"import_ms": (imported - start) * 1000,
                      "first_ms": (answered - imported) * 1000, "modules": loaded}))
""")


def _event(headers: dict[str, str]) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nothing"}}
    return json.dumps({
        "version": "2.0", "routeKey": "$default", "rawPath": "/", "rawQueryString": "",
        "headers": {"content-type": "application/json", "a2a-version": "1.0",
                    "host": "abcdefgh.lambda-url.us-east-1.on.aws",
                    **{k.lower(): v for k, v in headers.items()}},
        "requestContext": {"accountId": "anonymous", "apiId": "abcdefgh",
                           "domainName": "abcdefgh.lambda-url.us-east-1.on.aws",
                           "http": {"method": "POST", "path": "/", "protocol": "HTTP/1.1",
                                    "sourceIp": "198.51.100.7", "userAgent": "bench"},
                           "requestId": "r-1", "routeKey": "$default", "stage": "$default",
                           "time": "03/Dec/2026:09:00:00 +0000", "timeEpoch": 1796288400000},
        "body": json.dumps(body), "isBase64Encoded": False})


def _schemes(issuer: Issuer, moto: str) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """name -> (environment, request headers)."""
    key = new_key()
    records = json.dumps([{"principal": "bench", "sha256": hash_key(key)}])
    secrets = aws.client("secretsmanager", moto)
    secret = f"bench/keys/{time.time_ns()}"
    secrets.create_secret(Name=secret, SecretString=records)
    parameters = aws.client("ssm", moto)
    parameter = f"/bench/keys/{time.time_ns()}"
    parameters.put_parameter(Name=parameter, Value=records, Type="SecureString")
    aws_env = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
               "AWS_DEFAULT_REGION": aws.REGION, "AWS_ENDPOINT_URL_SECRETS_MANAGER": moto,
               "AWS_ENDPOINT_URL_SSM": moto}
    api_key = {"x-api-key": key}
    # As deployed: the task store is DynamoDB, so boto3 is loaded whatever the scheme.
    table = {"A2A_TABLE": f"bench-{time.time_ns()}", "AWS_ENDPOINT_URL_DYNAMODB": moto, **aws_env}
    return {
        "none (anonymous)": ({"A2A_ALLOW_ANONYMOUS": "true"}, {}),
        "API key, inline hashes": ({"A2A_API_KEYS": records}, api_key),
        "API key, Secrets Manager": ({"A2A_API_KEYS_SECRET": secret, **aws_env}, api_key),
        "API key, SSM parameter": ({"A2A_API_KEYS_PARAMETER": parameter, **aws_env}, api_key),
        "JWT (OIDC discovery + JWKS)": (
            {"A2A_JWT_ISSUER": issuer.url, "A2A_JWT_AUDIENCE": AUDIENCE},
            {"Authorization": f"Bearer {issuer.token(exp=2**31 - 1)}"}),
        "with DynamoDB: none": ({"A2A_ALLOW_ANONYMOUS": "true", **table}, {}),
        "with DynamoDB: Secrets Manager": ({"A2A_API_KEYS_SECRET": secret, **table}, api_key),
    }


def _run(environment: dict[str, str], headers: dict[str, str]) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1",
           "BENCH_EVENT": _event(headers), **environment}
    out = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(runs: int = 7) -> None:
    issuer = Issuer(make_keys())
    issuer.publish("k1")
    try:
        with aws.moto_server() as moto:
            schemes = _schemes(issuer, moto)
            samples: dict[str, list[dict[str, Any]]] = {name: [] for name in schemes}
            # Interleaved, so drift on the machine affects every scheme alike.
            for _ in range(runs):
                for name, (environment, headers) in schemes.items():
                    samples[name].append(_run(environment, headers))
    finally:
        issuer.close()
    medians = {name: {key: statistics.median(s[key] for s in runs_)
                      for key in ("import_ms", "first_ms")}
               for name, runs_ in samples.items()}
    bases = {name: medians["with DynamoDB: none" if name.startswith("with DynamoDB")
                           else "none (anonymous)"] for name in medians}
    print(f"\nLambda handler cold start by scheme: medians of {runs} fresh interpreters\n")
    print(f"{'scheme':30} {'import ms':>10} {'1st req ms':>11} {'total ms':>9} {'ratio':>6}"
          "  libraries loaded")
    for name, m in medians.items():
        total = m["import_ms"] + m["first_ms"]
        base_total = bases[name]["import_ms"] + bases[name]["first_ms"]
        loaded = ", ".join(samples[name][0]["modules"]) or "-"
        print(f"{name:30} {m['import_ms']:10.1f} {m['first_ms']:11.1f} {total:9.1f} "
              f"{total / base_total:6.2f}  {loaded}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
