"""The adapters' shared half (a2akit/adapters/_stream.py), on a task handle that records what
it reports: deltas become chunks of one artifact with `last_chunk` on the last, steps become
WORKING status lines, a framework's exception a FAILED status naming its type only."""

from __future__ import annotations

import asyncio
import logging

import pytest

from a2akit.adapters._stream import TurnStream, framework_errors, question_text
from a2akit.agent import TaskHandle
from a2akit.errors import ContentTypeNotSupportedError
from a2akit.generated import a2a_pb2 as pb

pytestmark = pytest.mark.anyio
LOG = logging.getLogger("tests.adapters")


class Recorder:
    canceled = False

    def __init__(self) -> None:
        self.events: list[pb.StreamResponse] = []

    def emit(self, event: pb.StreamResponse) -> None:
        self.events.append(event)

    def reply(self, message: pb.Message) -> None:  # pragma: no cover - not used here
        raise AssertionError("no replies")

    def seen(self) -> list[tuple[str, ...]]:
        """("chunk", text, append, last) and ("status", state name, text), in order."""
        out: list[tuple[str, ...]] = []
        for event in self.events:
            if event.HasField("artifact_update"):
                update = event.artifact_update
                out.append(("chunk", update.artifact.parts[0].text,
                            "append" if update.append else "", "last" if update.last_chunk else ""))
            else:
                status = event.status_update.status
                out.append(("status", pb.TaskState.Name(status.state),
                            "".join(p.text for p in status.message.parts)))
        return out


def _turn() -> tuple[TurnStream, Recorder]:
    recorder = Recorder()
    return TurnStream(TaskHandle(recorder, "task", "context")), recorder


async def test_deltas_become_one_artifact_the_last_chunk_marked() -> None:
    turn, recorder = _turn()
    for delta in ("Hello", " there", "", " friend"):
        await turn.text(delta, message="m1")
    assert len(recorder.events) == 2  # the latest delta waits for the next one
    await turn.finish()
    assert recorder.seen() == [("chunk", "Hello", "", ""), ("chunk", " there", "append", ""),
                               ("chunk", " friend", "append", "last")]
    ids = {event.artifact_update.artifact.artifact_id for event in recorder.events}
    assert len(ids) == 1


async def test_a_step_sends_the_text_first_and_a_new_message_starts_after_a_blank_line(
) -> None:
    turn, recorder = _turn()
    await turn.text("Let me look", message="m1")
    await turn.step("Calling lookup")
    await turn.step("Calling   lookup")  # the same line again: reported once
    await turn.text("Found", message="m2")
    await turn.text(" it", message="m2")
    await turn.finish()
    assert recorder.seen() == [
        ("chunk", "Let me look", "", ""), ("status", "TASK_STATE_WORKING", "Calling lookup"),
        ("chunk", "\n\nFound", "append", ""), ("chunk", " it", "append", "last")]


async def test_a_run_that_ends_after_a_step_closes_with_an_empty_chunk() -> None:
    turn, recorder = _turn()
    await turn.text("Done thinking")
    await turn.step("Step save done")
    await turn.finish()
    assert recorder.seen()[-1] == ("chunk", "", "append", "last")


async def test_no_text_no_artifact_and_long_steps_are_shortened() -> None:
    turn, recorder = _turn()
    await turn.step("x" * 1000)
    await turn.finish()
    (status,) = recorder.seen()
    assert status[:2] == ("status", "TASK_STATE_WORKING") and len(status[2]) == 200


async def test_a_framework_exception_fails_the_task_by_its_type(
        caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder()
    task = TaskHandle(recorder, "task", "context")
    async with framework_errors(task, "Framework", LOG):
        raise KeyError("api key sk-123 rejected by 10.0.0.1")
    assert recorder.seen() == [("status", "TASK_STATE_FAILED", "Framework failed: KeyError")]
    assert "sk-123" in caplog.text  # the log has it all, with the traceback


async def test_refusals_and_cancellation_pass_through() -> None:
    recorder = Recorder()
    task = TaskHandle(recorder, "task", "context")
    with pytest.raises(ContentTypeNotSupportedError):
        async with framework_errors(task, "Framework", LOG):
            raise ContentTypeNotSupportedError("image/png")
    with pytest.raises(asyncio.CancelledError):
        async with framework_errors(task, "Framework", LOG):
            raise asyncio.CancelledError
    assert recorder.events == []


def test_a_question_is_text_as_is_and_anything_else_json() -> None:
    assert question_text("What is your name?") == "What is your name?"
    assert question_text({"ask": "name", "choices": ["Ann", "Bo"]}) == (
        '{"ask": "name", "choices": ["Ann", "Bo"]}')
