"""Queue mode's front door with the kit's own AWS client (DynamoDB and SQS) against boto3's
for both, in one run (issue 36, item 5): one client family, and which.

    .venv/bin/python bench/queue_client.py [--calls 200]

Each figure is instructions counted by `valgrind --tool=callgrind` (not seconds: a busy
machine does not move them). The child imports `handlers.jsonrpc` as Lambda does (static
credentials and a region in the environment, A2A_EXECUTION=queue, a table on DynamoDB Local,
the queue on a moto server) and sends SendMessage with returnImmediately (the task recorded,
the job put on SQS), once for the cold start (the whole process: interpreter, imports, the
first answer) and `--calls` more for the warm cost (the difference of two runs, per call).
`boto3` forces boto3's clients (`env_client` and `env_sqs_client` return None); `kit` is the
default, which loads no botocore.
Needs valgrind, Java 17 and npm (DynamoDB Local).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EVENT = ROOT / "tests" / "events" / "apigw_http_v2.json"


def _invoke(mode: str, calls: int) -> None:
    """In the process callgrind counts."""
    if mode == "boto3":
        import a2akit.store._client as kit_client
        import a2akit.store.dynamodb as store

        store.env_client = lambda endpoint=None: None  # type: ignore[assignment]
        kit_client.env_sqs_client = lambda endpoint=None, environ=None: None  # type: ignore[assignment]
    from handlers.jsonrpc import handler

    class Context:
        aws_request_id = "r-1"

        def get_remaining_time_in_millis(self) -> int:
            return 60_000

    event = json.loads(EVENT.read_text())
    event["headers"]["a2a-version"] = "1.0"
    for _ in range(1 + calls):
        event["body"] = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "configuration": {"returnImmediately": True}, "message": {
                "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
        reply = handler(event, Context())
        assert reply["statusCode"] == 200 and '"result"' in reply["body"], reply


def _count(mode: str, calls: int, environment: dict[str, str]) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--invoke", mode, str(calls)],
        env={**environment, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed:\n{out.stderr[-3000:]}")
    return int(found.group(1))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--invoke":
        _invoke(sys.argv[2], int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("queue_client: needs valgrind (apt install valgrind)")
    from scripts.dynamodb_local import dynamodb_local
    from tests.support.moto import client, moto_server

    with dynamodb_local() as dynamodb, moto_server() as sqs:
        queue = client("sqs", sqs).create_queue(QueueName="bench-jobs")["QueueUrl"]
        environment = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("A2A_", "AWS_"))},
            "PYTHONPATH": str(ROOT), "A2A_ALLOW_ANONYMOUS": "true", "A2A_EXECUTION": "queue",
            "A2A_TABLE": f"bench-{uuid.uuid4().hex[:8]}", "A2A_QUEUE_URL": queue,
            "AWS_ENDPOINT_URL_DYNAMODB": dynamodb, "AWS_ENDPOINT_URL_SQS": sqs,
            "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_LAMBDA_FUNCTION_NAME": "bench-door"}
        _count("kit", 0, environment)  # creates the table, outside the figures
        results = {}
        for mode in ("kit", "boto3"):
            cold = _count(mode, 0, environment)
            warm = (_count(mode, args.calls, environment) - cold) / args.calls
            results[mode] = (cold, warm)
    kit, boto = results["kit"], results["boto3"]
    print(f"{'client':8} {'cold start (M instr.)':>22} {'warm SendMessage (k instr.)':>28}")
    for mode, (cold, warm) in results.items():
        print(f"{mode:8} {cold / 1e6:22.1f} {warm / 1e3:28.1f}")
    print(f"boto3 / kit: cold {boto[0] / kit[0]:.3f}x, warm {boto[1] / kit[1]:.3f}x")


if __name__ == "__main__":
    main()
