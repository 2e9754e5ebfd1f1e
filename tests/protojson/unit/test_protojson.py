"""ProtoJSON: round trips, strict enum names, unknown fields ignored, REQUIRED fields emitted."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.message_factory import GetMessageClass

from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.protojson import from_json, required_fields, to_json

_SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
_RESPONSES = sorted({m.output_type.full_name: m.output_type for m in _SERVICE.methods}.items())


def _full_task() -> pb.Task:
    task = pb.Task(id="t1", context_id="c1")
    task.status.state = pb.TASK_STATE_INPUT_REQUIRED
    task.status.timestamp.FromMilliseconds(1_767_225_600_123)
    task.status.message.CopyFrom(pb.Message(message_id="q", role=pb.ROLE_AGENT,
                                            parts=[pb.Part(text="Name?")]))
    task.history.add(message_id="m1", role=pb.ROLE_USER, task_id="t1").parts.add(text="hi")
    artifact = task.artifacts.add(artifact_id="a1", name="out")
    artifact.parts.add(raw=b"\x00\x01", media_type="application/octet-stream")
    artifact.parts.add().data.struct_value.update({"n": 1, "list": [True, None]})
    artifact.metadata.update({"k": "v"})
    return task


@pytest.mark.parametrize("message", [
    _full_task(),
    pb.SendMessageRequest(message=pb.Message(message_id="m", role=pb.ROLE_USER,
                                             parts=[pb.Part(text="x")]),
                          configuration=pb.SendMessageConfiguration(return_immediately=True,
                                                                   history_length=3)),
    pb.ListTasksRequest(status=pb.TASK_STATE_WORKING, page_size=10, include_artifacts=True),
    pb.ListTasksResponse(tasks=[_full_task()], next_page_token="n", page_size=1, total_size=2),
    pb.StreamResponse(artifact_update=pb.TaskArtifactUpdateEvent(
        task_id="t1", artifact=pb.Artifact(artifact_id="a"), append=True, last_chunk=True)),
], ids=lambda m: type(m).__name__)
def test_round_trip(message: Any) -> None:
    assert from_json(to_json(message), type(message)) == message


def test_json_names_and_enum_names_are_written() -> None:
    data = to_json(_full_task())
    assert data["contextId"] == "c1"
    assert data["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert data["status"]["timestamp"] == "2026-01-01T00:00:00.123Z"
    assert data["history"][0]["role"] == "ROLE_USER"


@pytest.mark.parametrize(("cls", "data", "field"), [
    (pb.ListTasksRequest, {"status": "completed"}, "status"),
    (pb.ListTasksRequest, {"status": "TASK_STATE_FINISHED"}, "status"),
    (pb.ListTasksRequest, {"status": 99}, "status"),
    (pb.ListTasksRequest, {"status": True}, "status"),
    (pb.ListTasksRequest, {"status": 1.0}, "status"),
    (pb.SendMessageRequest, {"message": {"role": "user"}}, "message.role"),
    (pb.Task, {"history": [{"role": "ROLE_USER"}, {"role": "ROLE_ROBOT"}]}, "history[1].role"),
    (pb.Task, {"status": {"message": {"role": "agent"}}}, "status.message.role"),
])
def test_unknown_enum_values_are_refused_naming_the_field(cls: Any, data: dict[str, Any],
                                                          field: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        from_json(data, cls)
    assert [f for f, _ in caught.value.violations] == [field]


def test_enum_numbers_that_exist_are_accepted() -> None:
    assert from_json({"status": 3}, pb.ListTasksRequest).status == pb.TASK_STATE_COMPLETED


def test_unknown_fields_are_ignored_at_every_level() -> None:
    data = {"futureField": 1, "message": {"messageId": "m", "role": "ROLE_USER", "extra": {},
                                          "parts": [{"text": "x", "newKind": [1]}]}}
    request = from_json(data, pb.SendMessageRequest)
    assert request == pb.SendMessageRequest(message=pb.Message(
        message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="x")]))


@pytest.mark.parametrize("data", [[], "text", 1, True])
def test_params_must_be_an_object(data: object) -> None:
    with pytest.raises(InvalidParamsError, match="JSON object"):
        from_json(data, pb.GetTaskRequest)


def test_missing_params_are_an_empty_request() -> None:
    assert from_json(None, pb.GetTaskRequest) == pb.GetTaskRequest()


@pytest.mark.parametrize("data", [{"id": 5}, {"historyLength": "x"}, {"id": ["a"]},
                                  {"tenant": {"a": 1}}])
def test_wrong_types_are_invalid_params(data: dict[str, Any]) -> None:
    with pytest.raises(InvalidParamsError):
        from_json(data, pb.GetTaskRequest)


def test_required_fields_are_emitted_at_their_default() -> None:
    assert to_json(pb.ListTasksResponse()) == {
        "tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0}


@pytest.mark.parametrize("descriptor", [d for _, d in _RESPONSES], ids=[n for n, _ in _RESPONSES])
def test_every_response_emits_its_required_fields(descriptor: Any) -> None:
    data = to_json(GetMessageClass(descriptor)())
    assert {f.json_name for f in required_fields(descriptor)} <= set(data)


def test_nested_messages_follow_ordinary_presence() -> None:
    # A listed task without artifacts or history has no members for them.
    data = to_json(pb.ListTasksResponse(tasks=[pb.Task(id="t1")], page_size=1, total_size=1))
    assert data["tasks"] == [{"id": "t1"}]


def test_required_fields_are_the_annotated_ones() -> None:
    names = [f.json_name for f in required_fields(pb.Message.DESCRIPTOR)]
    assert names == ["messageId", "role", "parts"]
    assert [f.json_name for f in required_fields(pb.GetTaskRequest.DESCRIPTOR)] == ["id"]
    assert required_fields(pb.ListTasksRequest.DESCRIPTOR) == ()


# --- every field as its proto type says ------------------------------------------------------

_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}


@pytest.mark.parametrize(("data", "field"), [
    ({"message": _MESSAGE, "configuration": "fast"}, "configuration"),
    ({"message": _MESSAGE, "configuration": []}, "configuration"),
    ({"message": {**_MESSAGE, "parts": [[]]}}, "message.parts[0]"),
    ({"message": {**_MESSAGE, "parts": "x"}}, "message.parts"),
    ({"message": {**_MESSAGE, "parts": [None]}}, "message.parts[0]"),
    ({"message": {**_MESSAGE, "parts": [{"text": "a", "raw": "aGk="}]}},
     "message.parts[0].content"),
    ({"message": {**_MESSAGE, "parts": [{"raw": "a b"}]}}, "message.parts[0].raw"),
    ({"message": {**_MESSAGE, "messageId": "m", "message_id": "n"}}, "message.message_id"),
    ({"message": {**_MESSAGE, "metadata": {"n": float("inf")}}}, "message.metadata"),
    ({"message": {**_MESSAGE, "metadata": {"n": 10**400}}}, "message.metadata"),
    ({"message": _MESSAGE, "configuration": {"historyLength": 2**31}},
     "configuration.history_length"),
    ({"message": _MESSAGE, "configuration": {"historyLength": "1.5"}},
     "configuration.history_length"),
    ({"message": _MESSAGE, "configuration": {"returnImmediately": 1}},
     "configuration.return_immediately"),
    ({"message": {**_MESSAGE, "contextId": "\ud800"}}, "message.context_id"),
])
def test_each_field_has_its_proto_type(data: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        from_json(data, pb.SendMessageRequest)
    assert field in [f for f, _ in caught.value.violations]


@pytest.mark.parametrize(("raw", "decoded"), [
    ("aGk=", b"hi"), ("aGk", b"hi"), ("-_8", b"\xfb\xff"), ("+/8=", b"\xfb\xff"), ("", b""),
])
def test_bytes_accept_both_base64_alphabets_padded_or_not(raw: str, decoded: bytes) -> None:
    request = from_json({"message": {**_MESSAGE, "parts": [{"raw": raw}]}},
                        pb.SendMessageRequest)
    assert request.message.parts[0].raw == decoded


def test_integers_may_be_numeric_strings_or_integral_numbers() -> None:
    for value in (3, "3", 3.0, "3e0"):
        assert from_json({"historyLength": value}, pb.GetTaskRequest).history_length == 3


def test_required_fields_are_computed_once_even_when_none() -> None:
    class Descriptor:
        full_name = "test.NothingRequired"
        reads = 0

        @property
        def fields(self) -> list[Any]:
            Descriptor.reads += 1
            return []

    for _ in range(3):
        assert required_fields(Descriptor()) == ()
    assert Descriptor.reads == 1
