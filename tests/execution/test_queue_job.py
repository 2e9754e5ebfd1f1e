"""The queue job codec and the budget rule, without a store or a queue."""

from __future__ import annotations

import time

import pytest
from google.protobuf import struct_pb2

from a2akit.execution.budget import call_budget
from a2akit.execution.queue import Job, JobError
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import Settings
from a2akit.store.base import Scope, StoredTask
from handlers.lambda_adapter import invocation_of

JOB = Job(scope=Scope("", "alice"), task_id="t1", message_id="m2", lease_owner="queue#x",
          new_task=False, extensions=("urn:ext",), accepted_output_modes=("text/plain",),
          metadata={"k": "v", "n": 1.0})


def test_a_job_survives_the_queue() -> None:
    assert Job.decode(JOB.encode()) == JOB


@pytest.mark.parametrize("body", ["", "[]", "{}", '{"v": 2}', JOB.encode().replace('"t1"', "1"),
                                  JOB.encode().replace('"alice"', '""')])
def test_anything_else_is_not_a_job(body: str) -> None:
    with pytest.raises(JobError):
        Job.decode(body)


def test_the_context_comes_from_the_stored_task() -> None:
    task = pb.Task(id="t1", context_id="c1")
    for message_id in ("m1", "m2"):
        task.history.add(message_id=message_id, role=pb.ROLE_USER).parts.add(text=message_id)
    context = JOB.context(StoredTask(task, 3, 5))
    assert context.message.message_id == "m2" and context.text == "m2"
    assert context.task == task and context.caller == Scope("", "alice")
    assert context.extensions == ("urn:ext",)
    expected = struct_pb2.Struct()
    expected.update({"k": "v", "n": 1.0})
    assert context.metadata == expected
    with pytest.raises(JobError):
        Job.decode(JOB.encode().replace('"m2"', '"m9"')).context(StoredTask(task, 3, 5))


class _Lambda:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def get_remaining_time_in_millis(self) -> int:
        return self.ms


def test_the_call_budget_is_the_platform_time_less_the_margin_within_the_stream_budget(
) -> None:
    settings = Settings(stream_budget_seconds=20.0, budget_margin_seconds=5.0)
    assert invocation_of(None, None).deadline is None
    assert invocation_of(object(), {}).deadline is None
    assert call_budget(settings, None) == 20.0
    assert call_budget(Settings(), None) is None
    long = call_budget(settings, invocation_of(_Lambda(60_000), None).deadline)
    assert long == 20.0
    short = call_budget(settings, invocation_of(_Lambda(9_000), None).deadline)
    assert short is not None and 3.9 < short <= 4.0
    assert call_budget(settings, time.monotonic() + 1) == 0.0
