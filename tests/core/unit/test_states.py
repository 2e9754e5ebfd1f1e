"""The state machine: which transitions are allowed, terminal finality, and how events fold."""

from __future__ import annotations

import pytest

from a2akit.errors import InvalidAgentResponseError
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import INTERRUPTED, TERMINAL, apply_event, check_transition, ends_stream

ALL_STATES = [v.number for v in pb.TaskState.DESCRIPTOR.values
              if v.number != pb.TASK_STATE_UNSPECIFIED]
ACTIVE = [pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING]


def _task(state: int = pb.TASK_STATE_WORKING) -> pb.Task:
    task = pb.Task(id="t1", context_id="c1", status=pb.TaskStatus(state=state))  # type: ignore[arg-type]
    task.history.add(message_id="u1", role=pb.ROLE_USER).parts.add(text="hi")
    return task


def _message(message_id: str, role: int = pb.ROLE_AGENT, text: str = "") -> pb.Message:
    return pb.Message(message_id=message_id, role=role,  # type: ignore[arg-type]
                      parts=[pb.Part(text=text or message_id)])


def _status(state: int, message: pb.Message | None = None) -> pb.StreamResponse:
    status = pb.TaskStatus(state=state)  # type: ignore[arg-type]
    if message is not None:
        status.message.CopyFrom(message)
    return pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=status))


def _artifact(artifact_id: str, *texts: str, append: bool = False,
              metadata: dict[str, str] | None = None) -> pb.StreamResponse:
    artifact = pb.Artifact(artifact_id=artifact_id, parts=[pb.Part(text=t) for t in texts])
    if metadata:
        artifact.metadata.update(metadata)
    return pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
        task_id="t1", context_id="c1", artifact=artifact, append=append))


def _texts(artifact: pb.Artifact) -> list[str]:
    return [part.text for part in artifact.parts]


# --- state classes and transitions -------------------------------------------------------------


def test_state_classes() -> None:
    assert {pb.TaskState.Name(s) for s in TERMINAL} == {
        "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
    assert {pb.TaskState.Name(s) for s in INTERRUPTED} == {
        "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}
    # Every state is active, interrupted or terminal, and only one of them.
    assert sorted([*ACTIVE, *INTERRUPTED, *TERMINAL]) == sorted(ALL_STATES)


@pytest.mark.parametrize("state", ALL_STATES, ids=pb.TaskState.Name)
def test_streams_end_on_terminal_and_interrupted_states(state: int) -> None:
    assert ends_stream(state) is (state in TERMINAL or state in INTERRUPTED)


@pytest.mark.parametrize("new", ALL_STATES, ids=pb.TaskState.Name)
@pytest.mark.parametrize("current", [*ACTIVE, *INTERRUPTED], ids=pb.TaskState.Name)
def test_a_non_terminal_task_may_move_to_any_state(current: int, new: int) -> None:
    check_transition(current, new)


@pytest.mark.parametrize("new", ALL_STATES, ids=pb.TaskState.Name)
@pytest.mark.parametrize("current", sorted(TERMINAL), ids=pb.TaskState.Name)
def test_a_terminal_task_is_final(current: int, new: int) -> None:
    with pytest.raises(InvalidAgentResponseError, match=pb.TaskState.Name(current)):
        check_transition(current, new)


@pytest.mark.parametrize("current", ALL_STATES, ids=pb.TaskState.Name)
def test_a_status_needs_a_state(current: int) -> None:
    with pytest.raises(InvalidAgentResponseError):
        check_transition(current, pb.TASK_STATE_UNSPECIFIED)


# --- folding events ----------------------------------------------------------------------------


def test_task_event_replaces_the_snapshot() -> None:
    task = _task()
    apply_event(task, _artifact("a1", "x"))
    fresh = pb.Task(id="t2", context_id="c2", status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED))
    apply_event(task, pb.StreamResponse(task=fresh))
    assert task == fresh


def test_status_update_replaces_the_status_and_keeps_the_old_message() -> None:
    task = _task()
    question = _message("q1", text="What is your name?")
    apply_event(task, _status(pb.TASK_STATE_INPUT_REQUIRED, question))
    assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert task.status.message == question
    apply_event(task, _status(pb.TASK_STATE_WORKING))
    assert task.status.state == pb.TASK_STATE_WORKING and not task.status.HasField("message")
    assert [m.message_id for m in task.history] == ["u1", "q1"]


def test_status_without_a_state_is_refused() -> None:
    with pytest.raises(InvalidAgentResponseError):
        apply_event(_task(), _status(pb.TASK_STATE_UNSPECIFIED))


def test_new_artifact_is_added() -> None:
    task = _task()
    apply_event(task, _artifact("a1", "one"))
    apply_event(task, _artifact("a2", "two"))
    assert [(a.artifact_id, _texts(a)) for a in task.artifacts] == [("a1", ["one"]),
                                                                     ("a2", ["two"])]


def test_append_extends_the_artifact_and_merges_metadata() -> None:
    task = _task()
    apply_event(task, _artifact("a1", "one", metadata={"lang": "en"}))
    apply_event(task, _artifact("a1", " two", append=True, metadata={"chunk": "2"}))
    apply_event(task, _artifact("a1", " three", append=True))
    (artifact,) = task.artifacts
    assert _texts(artifact) == ["one", " two", " three"]
    assert dict(artifact.metadata) == {"lang": "en", "chunk": "2"}


def test_without_append_the_artifact_is_replaced() -> None:
    task = _task()
    apply_event(task, _artifact("a1", "draft", metadata={"v": "1"}))
    apply_event(task, _artifact("a2", "other"))
    apply_event(task, _artifact("a1", "final"))
    assert [(a.artifact_id, _texts(a)) for a in task.artifacts] == [("a1", ["final"]),
                                                                     ("a2", ["other"])]
    assert not task.artifacts[0].HasField("metadata")


def test_append_to_an_unknown_artifact_starts_it() -> None:
    task = _task()
    apply_event(task, _artifact("a1", "a chunk", append=True))
    assert [(a.artifact_id, _texts(a)) for a in task.artifacts] == [
        ("a1", ["a chunk"])]


def test_message_event_is_appended_to_history() -> None:
    task = _task()
    apply_event(task, pb.StreamResponse(message=_message("m1")))
    apply_event(task, pb.StreamResponse(message=_message("m2")))
    assert [m.message_id for m in task.history] == ["u1", "m1", "m2"]


def test_history_stays_in_time_order_across_a_question() -> None:
    # The agent asks (status message), the user answers (message event), the agent finishes.
    task = _task()
    apply_event(task, _status(pb.TASK_STATE_INPUT_REQUIRED, _message("q1")))
    apply_event(task, pb.StreamResponse(message=_message("u2", role=pb.ROLE_USER)))
    assert not task.status.HasField("message")
    apply_event(task, _status(pb.TASK_STATE_COMPLETED, _message("done")))
    assert [m.message_id for m in task.history] == ["u1", "q1", "u2"]
    assert task.status.message.message_id == "done"


@pytest.mark.parametrize("state", sorted(TERMINAL), ids=pb.TaskState.Name)
@pytest.mark.parametrize("event", [
    _status(pb.TASK_STATE_WORKING),
    _status(pb.TASK_STATE_COMPLETED),
    _artifact("a1", "late"),
    pb.StreamResponse(message=_message("late")),
], ids=["status", "same-status", "artifact", "message"])
def test_nothing_changes_a_terminal_task(state: int, event: pb.StreamResponse) -> None:
    task = _task(state)
    before = pb.Task()
    before.CopyFrom(task)
    with pytest.raises(InvalidAgentResponseError):
        apply_event(task, event)
    assert task == before


def test_event_without_payload_is_refused() -> None:
    with pytest.raises(InvalidAgentResponseError):
        apply_event(_task(), pb.StreamResponse())
