"""One task followed through the real processes: the streaming door (`python -m
handlers.stream`) records it and queues it on SQS (moto), the worker (`scripts.run_worker`,
which runs `handlers.worker.handler`) runs it and delivers its events to a real webhook. What
the two processes print is read back: JSON log lines and EMF metric documents.

Shown: the caller's trace id in every hop (door lines, worker lines, every webhook's
`traceparent`); the task id on every line of that trace; the metrics with their values; and
no secret of the request, the API-key record, the JWT or the push config in any output."""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2akit.auth.api_keys import hash_key, new_key
from a2akit.logs import owner_hash
from tests.auth.issuer import AUDIENCE, Issuer, make_keys
from tests.execution.processes import kit_env, worker
from tests.execution.sqs import make_queues
from tests.observability.lines import json_lines, metric_values, metrics_named
from tests.support.messages import send_params
from tests.support.moto import client as aws_client
from tests.support.processes import free_port, running
from tests.support.webhooks import Receiver

pytestmark = pytest.mark.slow

AGENT = "tests.observability.agent:agent"
TRACE_ID = uuid.uuid4().hex
CALLER_SPAN = "b7ad6b7169203331"


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, json=body, headers={"A2A-Version": "1.0", **headers}, timeout=10)


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def test_one_task_door_queue_worker_webhook(ddb_endpoint: str, moto_endpoint: str,
                                            tmp_path: Path) -> None:
    api_key = new_key()
    record_digest = hash_key(api_key)
    token_secret = "tok-" + uuid.uuid4().hex
    credential_secret = "cred-" + uuid.uuid4().hex
    content_secret = "content-" + uuid.uuid4().hex
    sqs = aws_client("sqs", moto_endpoint)
    queue_url, _ = make_queues(sqs)
    issuer = Issuer(make_keys())
    issuer.publish("k1")
    jwt = issuer.token()
    port = free_port()
    public_url = f"http://127.0.0.1:{port}/"
    env = kit_env(
        ddb_endpoint, AGENT, A2A_EXECUTION="queue",
        A2A_QUEUE_URL=queue_url, AWS_ENDPOINT_URL_SQS=moto_endpoint,
        A2A_PUSH_NOTIFICATIONS="true", A2A_PUSH_DELIVERY="inline",
        A2A_PUSH_ALLOW_HTTP="true", A2A_PUSH_ALLOW_CIDRS="127.0.0.1/32",
        A2A_API_KEYS=json.dumps([{"principal": "alice", "sha256": record_digest}]),
        A2A_JWT_ISSUER=issuer.url, A2A_JWT_AUDIENCE=AUDIENCE,
        A2A_PUBLIC_URL=public_url, PORT=str(port), LOG_LEVEL="DEBUG")
    env["A2A_ALLOW_ANONYMOUS"] = "false"
    door_log, worker_log = tmp_path / "door.log", tmp_path / "worker.log"
    try:
        with Receiver() as hook, \
                running([sys.executable, "-m", "handlers.stream"], ports=[port], env=env,
                        log=door_log), \
                worker(env, worker_log):
            push = {"url": hook.url("/hook"), "token": token_secret,
                    "authentication": {"scheme": "Bearer", "credentials": credential_secret}}
            answer = _post(public_url, {
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": send_params(content_secret, immediately=True, push_config=push)},
                {"x-api-key": api_key, "traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01"})
            task = answer.json()["result"]["task"]
            task_id, context_id = task["id"], task["contextId"]
            # COMPLETED reaches the webhook: the worker ran the agent and delivered.
            _wait(lambda: any(b'"TASK_STATE_COMPLETED"' in r.body for r in hook.requests),
                  30, "the webhook got the final status")
            # A JWT on another request (its caller does not see the task), and a refused key.
            jwt_answer = _post(public_url, {"jsonrpc": "2.0", "id": 2, "method": "GetTask",
                                            "params": {"id": task_id}},
                               {"Authorization": f"Bearer {jwt}"})
            assert jwt_answer.json()["error"]["code"] == -32001  # TaskNotFound for another
            refused = _post(public_url, {"jsonrpc": "2.0", "id": 3, "method": "GetTask",
                                         "params": {"id": task_id}},
                            {"x-api-key": "a2a_" + "x" * 40})
            assert refused.status_code == 401
            # The worker's metric lines are written as the run ends; give them a moment.
            _wait(lambda: "TasksEnded" in worker_log.read_text(), 10, "the worker's metric")
    finally:
        issuer.close()

    door, door_other = json_lines(door_log)
    work, work_other = json_lines(worker_log)

    # --- one trace across the hops ----------------------------------------------------------
    requests = hook.requests
    assert requests
    for request in requests:
        version, trace_id, span_id, flags = request.headers["traceparent"].split("-")
        assert (version, trace_id, flags) == ("00", TRACE_ID, "01")
        assert span_id != CALLER_SPAN  # each hop is its own span
    traced_door = [line for line in door if line.get("trace_id") == TRACE_ID]
    traced_work = [line for line in work if line.get("trace_id") == TRACE_ID]
    assert traced_door and traced_work
    # The worker's lines name its SQS message, and its span is not the door's.
    assert {line["span_id"] for line in traced_door if "_aws" not in line}.isdisjoint(
        {line["span_id"] for line in traced_work if "_aws" not in line})

    # --- the task id on every line about it -------------------------------------------------
    for line in traced_door + traced_work:
        assert line.get("task_id") == task_id, line
        if "_aws" not in line:  # a metric line carries request, trace and task ids only
            assert line.get("context_id") == context_id, line
            assert line.get("caller") == owner_hash("key:alice"), line
    for line in door + work:
        if task_id in json.dumps(line):
            assert line.get("task_id") == task_id, line
    # The agent's own line, through context.log, carries the ids.
    (agent_line,) = [line for line in traced_work if line.get("logger") == "a2akit.agent"]
    assert agent_line["message"] == "agent started" and agent_line["level"] == "INFO"
    assert agent_line["operation"] == "RunTask" and agent_line["sqs_message_id"]
    assert all(line["request_id"] for line in traced_door + traced_work)
    # Every line of a log is one JSON object; the only other line is run_worker's banner.
    assert door_other == []
    assert [line for line in work_other if not line.startswith("worker polling")] == []
    for line in door + work:
        if "_aws" not in line:
            assert {"timestamp", "level", "logger", "message", "service"} <= set(line), line

    # --- the metrics ------------------------------------------------------------------------
    (ended,) = metrics_named(work, "TasksEnded")
    assert (ended["TasksEnded"], ended["State"], ended["Service"]) == (1, "COMPLETED", "worker")
    assert ended["task_id"] == task_id and ended["trace_id"] == TRACE_ID
    (duration,) = metric_values(work, "TaskDuration")
    assert 50 <= duration < 30_000  # the agent sleeps 50 ms; the task began at the door
    (queued,) = metric_values(work, "TimeQueued")
    assert 0 <= queued < 30_000
    assert sum(metric_values(door + work, "PushDelivered")) == len(requests)
    refusals = metrics_named(door, "AuthRefused")
    assert [(doc["Reason"], doc["AuthRefused"]) for doc in refusals] == [
        ("InvalidCredentials", 1)]
    assert metrics_named(door, "TasksEnded") == []  # the door never ran the agent

    # --- no secret anywhere -----------------------------------------------------------------
    everything = door_log.read_text() + worker_log.read_text()
    for secret in (api_key, record_digest, jwt, jwt.split(".")[2], token_secret,
                   credential_secret, content_secret, "key:alice"):
        assert secret not in everything, secret
