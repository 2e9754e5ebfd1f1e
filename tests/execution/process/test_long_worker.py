"""The long-task lane's worker as a process (`python -m handlers.long_worker`) on DynamoDB
Local and moto's SQS, its ECS calls made to a recorded-call stand-in (tests/execution/
ecs_fake.py: moto's ECS has no task protection).

The Lambda worker's budget is scaled down here (`scripts.run_worker --timeout 2.5` with a
0.5 s margin: 2 s); the agent runs 5 s: on the Lambda worker its task ends FAILED naming the
limit, on the long lane it COMPLETES."""

from __future__ import annotations

import asyncio
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.auth import Identity
from a2akit.caller import Call
from a2akit.execution.lane import STOP_TEXT
from a2akit.execution.protection import PROTECTION_MINUTES
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.base import Scope
from a2akit.store.dynamodb import DynamoDBStore
from http_service.app import create_app
from tests.execution.ecs_fake import CLUSTER, TASK_ARN, EcsFake, ecs_fake
from tests.execution.long_agent import StepsAgent
from tests.execution.processes import (
    artifact_steps,
    kit_env,
    long_worker,
    read_stored,
    run_sync,
    wait_until,
    worker,
)
from tests.execution.sqs import make_queues
from tests.jsonrpc.client import LambdaClient, lambda_event_loop
from tests.store.conftest import TABLE
from tests.support.messages import send_request

pytestmark = pytest.mark.slow

AGENT = "tests.execution.long_agent:agent"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}
# The Lambda worker's budget, scaled down: the invocation's time less the margin.
LAMBDA_TIMEOUT = 2.5
MARGIN = 0.5


@pytest.fixture
def store(ddb_client: Any) -> DynamoDBStore:
    return DynamoDBStore(TABLE, ddb_client)


@pytest.fixture
def ecs() -> Iterator[EcsFake]:
    with ecs_fake() as fake:
        yield fake




def _send(settings: Settings, store: DynamoDBStore, scope: Scope, steps: int) -> str:
    async def send() -> str:
        ops = build_operations(settings, store=store, agent=StepsAgent())
        request = send_request(str(steps))
        request.tenant = scope.tenant
        request.configuration.return_immediately = True
        answer = await ops.send_message(request, Call(Identity(scope.owner, "test")))
        return answer.task.id

    return run_sync(send())






def _state(store: DynamoDBStore, scope: Scope, task_id: str) -> int:
    return read_stored(store, scope, task_id).task.status.state




def _messages(sqs: Any, queue: str) -> int:
    """Messages on `queue`, visible or in flight."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=[
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    return sum(int(value) for value in attributes.values())


def _lane(ddb_endpoint: str, moto_endpoint: str, sqs: Any, **values: str
          ) -> tuple[Settings, dict[str, str], str, str]:
    """The door's settings (both queues), the workers' environment, and the two queues."""
    lambda_queue, _ = make_queues(sqs)
    long_queue, _ = make_queues(sqs, visibility_seconds=30)
    settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                        execution="queue", queue_url=lambda_queue, long_queue_url=long_queue,
                        sqs_endpoint=moto_endpoint)
    env = kit_env(ddb_endpoint, AGENT, AWS_ENDPOINT_URL_SQS=moto_endpoint,
                  A2A_QUEUE_URL=lambda_queue, A2A_LONG_QUEUE_URL=long_queue,
                  A2A_BUDGET_MARGIN_SECONDS=str(MARGIN), **CREDENTIALS, **values)
    return settings, env, lambda_queue, long_queue


def test_a_run_longer_than_the_lambda_budget_fails_there_and_completes_on_the_long_lane(
    ddb_endpoint: str, moto_endpoint: str, sqs: Any, store: DynamoDBStore, ecs: EcsFake,
    tmp_path: Path,
) -> None:
    settings, env, _, long_queue = _lane(ddb_endpoint, moto_endpoint, sqs)
    scope = Scope(f"l-{uuid.uuid4().hex[:8]}", "anonymous")
    steps = 10  # 5 s: more than twice the Lambda worker's 2 s
    # The same agent on the Lambda worker (no long queue at the door): the budget ends it.
    on_lambda = _send(Settings(**{**settings.__dict__, "long_queue_url": None}), store, scope,
                      steps)
    with worker(env, tmp_path / "worker.log", timeout=LAMBDA_TIMEOUT):
        wait_until(lambda: _state(store, scope, on_lambda) == pb.TASK_STATE_FAILED, 20,
              "FAILED on the Lambda worker")
    message = read_stored(store, scope, on_lambda).task.status.message.parts[0].text
    assert "time limit" in message and "2 s" in message, message

    # On the long lane: it completes, every step done.
    task_id = _send(settings, store, scope, steps)
    assert _messages(sqs, long_queue) == 1
    log = tmp_path / "long.log"
    with long_worker({**env, **ecs.env()}, log) as process:
        took = wait_until(lambda: _state(store, scope, task_id) == pb.TASK_STATE_COMPLETED, 30,
                     "COMPLETED on the long lane")
        print(f"\nlong lane: a {steps * 0.5:.0f} s run COMPLETED after {took:.1f} s")
        assert artifact_steps(store, scope, task_id) == steps
        assert read_stored(store, scope, task_id).lease is None
        # The message went once the run held the lease: nothing waits on the queue.
        assert _messages(sqs, long_queue) == 0
        wait_until(lambda: len(ecs.calls) == 2, 5, "protection off after the run")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, log.read_text()
    # Protected while the agent ran, for its own task only, then released.
    assert ecs.calls == [
        {"cluster": CLUSTER, "tasks": [TASK_ARN], "protectionEnabled": True,
         "expiresInMinutes": PROTECTION_MINUTES},
        {"cluster": CLUSTER, "tasks": [TASK_ARN], "protectionEnabled": False},
    ]
    assert ecs.others == []
    assert "Traceback" not in log.read_text()


def test_sigterm_mid_run_fails_the_running_task_and_an_unstarted_job_goes_to_another_worker(
    ddb_endpoint: str, moto_endpoint: str, sqs: Any, store: DynamoDBStore, ecs: EcsFake,
    tmp_path: Path,
) -> None:
    # Two slots: while the first agent runs, the worker long-polls for a second job.
    settings, env, _, long_queue = _lane(ddb_endpoint, moto_endpoint, sqs,
                                         A2A_LONG_CONCURRENCY="2",
                                         A2A_LONG_SHUTDOWN_GRACE_SECONDS="1")
    env = {**env, **ecs.env()}
    scope = Scope(f"s-{uuid.uuid4().hex[:8]}", "anonymous")
    running = _send(settings, store, scope, 120)  # a minute: still running at the SIGTERM
    first_log = tmp_path / "first.log"
    with long_worker(env, first_log) as first:
        wait_until(lambda: artifact_steps(store, scope, running) >= 2, 20, "the agent runs")
        first.send_signal(signal.SIGTERM)
        # Sent while the stopping worker's receive is under way: it gets the job, and gives
        # it back unstarted.
        unstarted = _send(settings, store, scope, 2)
        assert first.wait(timeout=30) == 0, first_log.read_text()
    output = first_log.read_text()
    assert "Traceback" not in output
    assert "went back to the queue unstarted" in output, output
    # The running agent had the grace, then its task ended FAILED, saying why.
    stored = read_stored(store, scope, running)
    assert stored.task.status.state == pb.TASK_STATE_FAILED and stored.lease is None
    assert stored.task.status.message.parts[0].text == STOP_TEXT
    assert ecs.states() == [True, False]
    # The unstarted job: received again by another worker, which runs it to the end.
    assert _state(store, scope, unstarted) == pb.TASK_STATE_SUBMITTED
    with long_worker(env, tmp_path / "second.log"):
        wait_until(lambda: _state(store, scope, unstarted) == pb.TASK_STATE_COMPLETED, 20,
              "the unstarted job COMPLETED on another worker")
    assert artifact_steps(store, scope, unstarted) == 2
    assert _messages(sqs, long_queue) == 0


@pytest.fixture
def lambda_jsonrpc(ddb_endpoint: str) -> Iterator[LambdaClient]:
    """The public door's JSON-RPC Lambda in this process, reading the shared table; each
    stream's budget is its invocation's remaining time less a 0.5 s margin."""
    settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                        lease_seconds=1.0, budget_margin_seconds=0.5)
    with lambda_event_loop():
        ops = build_operations(settings, agent=StepsAgent())
        yield LambdaClient(create_app(ops), "apigw_http_v2.json")
    asyncio.run(ops.close())


def test_a_client_following_a_long_task_across_ten_stream_budgets_sees_every_event_once(
    ddb_endpoint: str, moto_endpoint: str, sqs: Any, store: DynamoDBStore, ecs: EcsFake,
    lambda_jsonrpc: LambdaClient, tmp_path: Path,
) -> None:
    """The long lane runs a task for longer than ten stream budgets (1 s each: 1.5 s left
    less the margin); the client resubscribes each time its stream ends: every stream starts
    with the snapshot, its events continue it step by step, none lost or repeated."""
    settings, env, _, _ = _lane(ddb_endpoint, moto_endpoint, sqs)
    scope = Scope(f"f-{uuid.uuid4().hex[:8]}", "anonymous")
    lambda_jsonrpc.remaining_ms = 1500
    steps = 30  # 15 s
    task_id = _send(settings, store, scope, steps)
    with long_worker({**env, **ecs.env()}, tmp_path / "long.log"):
        streams, final, chunks = 0, None, []
        while final is None:
            reply = lambda_jsonrpc.call("SubscribeToTask", {"tenant": scope.tenant,
                                                            "id": task_id})
            if not reply.headers["content-type"].startswith("text/event-stream"):
                # The task ended between two streams (the last one closed at its budget just
                # before the final events): a client then reads the task, as the spec says.
                assert reply.json()["error"]["code"] == -32004, reply.body
                task = lambda_jsonrpc.call("GetTask", {"tenant": scope.tenant,
                                                       "id": task_id}).json()["result"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED"
                parts = [part["text"] for part in task["artifacts"][0]["parts"]]
                assert parts[:len(chunks)] == chunks  # what the streams showed, unchanged
                final = parts
                break
            events = [frame["result"] for frame in reply.events()]
            streams += 1
            task = events[0]["task"]
            chunks = [part["text"] for part in task["artifacts"][0]["parts"]] if task.get(
                "artifacts") else []
            for event in events[1:]:
                if "artifactUpdate" in event:
                    (part,) = event["artifactUpdate"]["artifact"]["parts"]
                    assert part["text"] == f"{len(chunks)} "  # the next step, exactly
                    chunks.append(part["text"])
                elif event["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED":
                    assert event is events[-1]
                    final = chunks
            assert streams < 40
    assert final == [f"{i} " for i in range(steps)]
    assert streams >= 10, streams
    print(f"\n{streams} streams followed one long task")
