"""The gRPC container as a process (`python -m grpc_service`), in queue mode with no worker:
its lines for a SendMessage carry the caller's trace from the gRPC metadata and the task id,
and its in-process sweeper ends the task FAILED when the queue's lease expires, writing
LeaseExpired and TasksEnded{State=FAILED} with the task id. Every line and metric names the
service the environment gives it (POWERTOOLS_SERVICE_NAME, as the stack sets it)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from a2akit.generated import a2a_pb2 as pb
from tests.execution.processes import container, kit_env
from tests.execution.sqs import make_queues
from tests.observability.lines import json_lines, metrics_named
from tests.support.messages import V1, send_request
from tests.support.moto import client as aws_client

pytestmark = pytest.mark.slow

# What the stack sets (infra/grpc_service.py): unique to the stack, unlike the default "grpc".
SERVICE = "A2AKit-test-grpc"


def test_the_container_logs_the_trace_and_its_sweeper_counts_the_expired_lease(
        ddb_endpoint: str, moto_endpoint: str, tmp_path: Path) -> None:
    queue_url, _ = make_queues(aws_client("sqs", moto_endpoint))
    env = kit_env(ddb_endpoint, "a2akit.examples.echo:agent", A2A_EXECUTION="queue",
                  A2A_QUEUE_URL=queue_url, AWS_ENDPOINT_URL_SQS=moto_endpoint,
                  A2A_QUEUE_GRACE_SECONDS="1", LOG_LEVEL="DEBUG",
                  POWERTOOLS_SERVICE_NAME=SERVICE)
    trace_id = uuid.uuid4().hex
    log = tmp_path / "grpc.log"
    with container(env, log) as (_, stub):
        request = send_request("hello")
        request.tenant = f"c-{uuid.uuid4().hex[:8]}"
        request.configuration.return_immediately = True
        task = stub.SendMessage(request, metadata=(
            *V1, ("traceparent", f"00-{trace_id}-{'2' * 16}-01"))).task
        # The sweeper serves the whole table, which other tests' tasks share: wait for ours.
        deadline = time.monotonic() + 20
        while not [doc for doc in metrics_named(json_lines(log)[0], "LeaseExpired")
                   if doc.get("task_id") == task.id]:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        got = stub.GetTask(pb.GetTaskRequest(tenant=request.tenant, id=task.id), metadata=V1)
        assert got.status.state == pb.TASK_STATE_FAILED
    lines, other = json_lines(log)
    assert other == []
    assert lines and all(line["service"] == SERVICE for line in lines if "_aws" not in line)
    assert all(doc["Service"] == SERVICE for doc in lines if "_aws" in doc)
    (expired,) = [doc for doc in metrics_named(lines, "LeaseExpired")
                  if doc["task_id"] == task.id]
    assert expired["LeaseExpired"] == 1 and expired["Service"] == SERVICE
    (ended,) = [doc for doc in metrics_named(lines, "TasksEnded") if doc["task_id"] == task.id]
    assert (ended["State"], ended["TasksEnded"]) == ("FAILED", 1)
    # The sweep's lines are about the task; the SendMessage's carry the caller's trace.
    warning = [line for line in lines if task.id in line.get("message", "")
               and "lease of" in line["message"]]
    assert warning and all(line["task_id"] == task.id for line in warning)
    traced = [line for line in lines if line.get("trace_id") == trace_id]
    assert [line["message"] for line in traced] == [f"queued task {task.id} for a worker"]
    assert all(line["task_id"] == task.id and line["operation"] == "SendMessage"
               for line in traced)
