"""Two processes race to add a turn to the same task: each turn is stored or refused, none lost."""

from __future__ import annotations

import concurrent.futures
import uuid
from pathlib import Path

import grpc
import pytest

from a2akit.generated import a2a_pb2 as pb
from tests.execution.processes import container, kit_env
from tests.execution.test_turn_race import GREETER, TURNS, _check_turns
from tests.support.messages import V1, send_request


@pytest.mark.slow
def test_racing_turns_on_two_processes_are_stored_or_refused(
        ddb_endpoint: str, tmp_path: Path) -> None:
    env = kit_env(ddb_endpoint, GREETER)
    tenant = f"race-{uuid.uuid4().hex[:8]}"
    with container(env, tmp_path / "a.log") as (_, a), container(env, tmp_path / "b.log") as (_, b):
        first = send_request("hi")
        first.tenant = tenant
        task = a.SendMessage(first, metadata=V1).task
        assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED

        def turn(index: int) -> tuple[str, bool]:
            request = send_request(f"name {index}", task_id=task.id)
            request.tenant = tenant
            try:
                answer = (a, b)[index % 2].SendMessage(request, metadata=V1, timeout=30)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc
                return request.message.message_id, False
            assert answer.task.id == task.id
            # A 200 shows this turn's message in the task it answers with.
            assert request.message.message_id in [m.message_id for m in answer.task.history]
            return request.message.message_id, True

        with concurrent.futures.ThreadPoolExecutor(TURNS) as pool:
            answered = dict(pool.map(turn, range(TURNS)))
        stored = a.GetTask(pb.GetTaskRequest(tenant=tenant, id=task.id), metadata=V1)
        _check_turns(answered, [m.message_id for m in stored.history],
                     pb.TaskState.Name(stored.status.state).removeprefix("TASK_STATE_"))
