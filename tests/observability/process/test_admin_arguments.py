"""`python -m a2akit.admin` changes only what it is asked to change, and answers a bad argument
with one line (issue 33, items 5 and 7): a redrive or drop naming an id that is not on the
queue leaves every other message where it was (received once per pass and released at once,
never pushed towards its dead-letter queue) and says the id was not found; a bad number, an
overlong id or a queue that does not exist is one line and exit 2, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.execution.processes import kit_env
from tests.execution.sqs import make_queues
from tests.support.moto import client as aws_client
from tests.support.processes import ROOT

pytestmark = pytest.mark.slow


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "a2akit.admin", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def _count(sqs: Any, url: str) -> int:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    return sum(int(value) for value in attributes.values())


@pytest.mark.parametrize("command", ["drop", "redrive"])
def test_an_unknown_id_changes_nothing_and_is_named(ddb_endpoint: str, moto_endpoint: str,
                                                    command: str) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    queue, dlq = make_queues(sqs, max_receives=3)
    for i in range(12):
        sqs.send_message(QueueUrl=queue, MessageBody=json.dumps({"n": i}))
    env = kit_env(ddb_endpoint, "a2akit.examples.echo:agent",
                  AWS_ENDPOINT_URL_SQS=moto_endpoint, A2A_QUEUE_URL=queue)
    target = ["--to", dlq] if command == "redrive" else []
    for _ in range(2):  # each pass receives a message at most once: 2 of 3 receives
        done = _run(env, command, "tasks", *target, "--id", "no-such-message")
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["notFound"] == ["no-such-message"]
        assert "not found" in done.stderr and "Traceback" not in done.stderr
    assert _count(sqs, dlq) == 0
    assert _count(sqs, queue) == 12
    # Released at once: a worker could receive every message right away.
    received = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10,
                                   WaitTimeSeconds=0).get("Messages", [])
    assert len(received) == 10


@pytest.mark.parametrize(("args", "named"), [
    (["expired", "--limit", "0"], "--limit"),
    (["expired", "--limit", "-1"], "--limit"),
    (["expired", "--limit", str(10**30)], "--limit"),
    (["expired", "--limit", "many"], "--limit"),
    (["messages", "tasks", "--max", "-1"], "--max"),
    (["messages", "tasks", "--max", "0"], "--max"),
    (["task", "t", "anonymous", "x" * 3000], "task_id"),
    (["tasks", "t" * 3000, "anonymous"], "tenant"),
    (["messages", "QUEUE-MISSING"], "queue"),
    (["drop", "QUEUE-MISSING", "--all"], "queue"),
    (["frobnicate"], "command"),
])
def test_bad_arguments_are_one_line_and_exit_2(ddb_endpoint: str, moto_endpoint: str,
                                               args: list[str], named: str) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    queue, _ = make_queues(sqs)
    missing = queue.rsplit("/", 1)[0] + "/no-such-queue"
    env = kit_env(ddb_endpoint, "a2akit.examples.echo:agent",
                  AWS_ENDPOINT_URL_SQS=moto_endpoint, A2A_QUEUE_URL=queue)
    done = _run(env, *[missing if arg == "QUEUE-MISSING" else arg for arg in args])
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert named in lines[0], lines[0]
    assert done.stdout == ""
