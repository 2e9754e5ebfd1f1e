"""The 0.3 <-> 1.0 conversion table (a2akit.compat03.convert), checked against compat-facts
section 5: every enum value both ways, round trips of what both sides can express (with
hypothesis), each lossy point of 5.3 as decided, requests, resource names and stream `final`."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from a2akit.compat03 import convert
from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03

# --- enums (5.1) ------------------------------------------------------------------------------

STATE_PAIRS = [
    ("TASK_STATE_UNSPECIFIED", "TASK_STATE_UNSPECIFIED"),
    ("TASK_STATE_SUBMITTED", "TASK_STATE_SUBMITTED"),
    ("TASK_STATE_WORKING", "TASK_STATE_WORKING"),
    ("TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"),
    ("TASK_STATE_FAILED", "TASK_STATE_FAILED"),
    ("TASK_STATE_CANCELLED", "TASK_STATE_CANCELED"),
    ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_INPUT_REQUIRED"),
    ("TASK_STATE_REJECTED", "TASK_STATE_REJECTED"),
    ("TASK_STATE_AUTH_REQUIRED", "TASK_STATE_AUTH_REQUIRED"),
]


def test_the_state_table_covers_both_enums() -> None:
    assert sorted(old for old, _ in STATE_PAIRS) == sorted(pb03.TaskState.keys())
    assert sorted(new for _, new in STATE_PAIRS) == sorted(pb.TaskState.keys())


@pytest.mark.parametrize(("old", "new"), STATE_PAIRS)
def test_every_state_both_ways(old: str, new: str) -> None:
    assert convert.to_core_state(pb03.TaskState.Value(old)) == pb.TaskState.Value(new)
    assert convert.from_core_state(pb.TaskState.Value(new)) == pb03.TaskState.Value(old)


def test_undefined_state_numbers_are_unknown() -> None:
    assert convert.to_core_state(42) == pb.TASK_STATE_UNSPECIFIED
    assert convert.from_core_state(42) == pb03.TASK_STATE_UNSPECIFIED


def test_roles_both_ways() -> None:
    assert convert.to_core_role(pb03.ROLE_USER) == pb.ROLE_USER
    assert convert.to_core_role(pb03.ROLE_AGENT) == pb.ROLE_AGENT
    assert convert.from_core_role(pb.ROLE_USER) == pb03.ROLE_USER
    assert convert.from_core_role(pb.ROLE_AGENT) == pb03.ROLE_AGENT
    # 5.3 #8: unspecified leaves as agent, and stays unspecified on the way in (the core
    # then refuses the message for its missing role).
    assert convert.from_core_role(pb.ROLE_UNSPECIFIED) == pb03.ROLE_AGENT
    assert convert.to_core_role(pb03.ROLE_UNSPECIFIED) == pb.ROLE_UNSPECIFIED
    assert convert.to_core_role(9) == pb.ROLE_UNSPECIFIED


# --- round trips ------------------------------------------------------------------------------

_text = st.text(max_size=12)
_ids = st.text(alphabet="abcdef0123456789-", max_size=10)
_scalars = st.one_of(st.none(), st.booleans(), _text,
                     st.floats(allow_nan=False, allow_infinity=False, width=32))
_json = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)), max_leaves=8)
# Metadata with something in it: an empty Struct reads as absent (facts 3.4, "Empty strings").
_objects = st.dictionaries(_text, _json, min_size=1, max_size=3)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def _value(value: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    if isinstance(value, dict):
        out.struct_value.SetInParent()  # {} too
        out.struct_value.update(value)
    elif isinstance(value, list):
        out.list_value.SetInParent()
        out.list_value.extend(value)
    elif value is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, str):
        out.string_value = value
    else:
        out.number_value = value
    return out


@st.composite
def core_parts(draw: st.DrawFn) -> pb.Part:
    """1.0 parts that 0.3 can express: no mediaType or filename on text and data parts."""
    part = pb.Part()
    kind = draw(st.sampled_from(["text", "raw", "url", "data"]))
    if kind == "text":
        part.text = draw(_text)
    elif kind in ("raw", "url"):
        if kind == "raw":
            part.raw = draw(st.binary(max_size=16))
        else:
            part.url = "https://example.com/" + draw(_ids)
        part.media_type, part.filename = draw(_text), draw(_text)
    else:
        part.data.CopyFrom(_value(draw(_json)))
    if draw(st.booleans()):
        part.metadata.CopyFrom(_struct(draw(_objects)))
    return part


@st.composite
def core_messages(draw: st.DrawFn) -> pb.Message:
    message = pb.Message(message_id=draw(_ids), context_id=draw(_ids), task_id=draw(_ids),
                         role=draw(st.sampled_from([pb.ROLE_USER, pb.ROLE_AGENT])),
                         parts=draw(st.lists(core_parts(), max_size=3)),
                         extensions=draw(st.lists(_ids, max_size=2)))
    if draw(st.booleans()):
        message.metadata.CopyFrom(_struct(draw(_objects)))
    return message


@st.composite
def core_tasks(draw: st.DrawFn) -> pb.Task:
    state = draw(st.sampled_from([v for v in pb.TaskState.values() if v]))
    task = pb.Task(id=draw(_ids), context_id=draw(_ids), status=pb.TaskStatus(state=state),
                   history=draw(st.lists(core_messages(), max_size=2)))
    if draw(st.booleans()):
        task.status.message.CopyFrom(draw(core_messages()))
    if draw(st.booleans()):
        task.status.timestamp.FromMilliseconds(draw(st.integers(0, 2**42)))
    for i in range(draw(st.integers(0, 2))):
        task.artifacts.add(artifact_id=f"a{i}", name=draw(_text), description=draw(_text),
                           parts=draw(st.lists(core_parts(), max_size=2)),
                           extensions=draw(st.lists(_ids, max_size=1)))
    if draw(st.booleans()):
        task.metadata.CopyFrom(_struct(draw(_objects)))
    return task


@given(core_parts())
def test_part_round_trip(part: pb.Part) -> None:
    assert convert.to_core_part(convert.from_core_part(part)) == part


@given(core_messages())
def test_message_round_trip(message: pb.Message) -> None:
    assert convert.to_core_message(convert.from_core_message(message)) == message


@given(core_tasks())
def test_task_round_trip(task: pb.Task) -> None:
    old = convert.from_core_task(task)
    assert pb03.Task.FromString(old.SerializeToString()) == old
    assert convert.to_core_task(old) == task


@given(core_tasks())
def test_a_03_task_round_trips_through_10(task: pb.Task) -> None:
    old = convert.from_core_task(task)
    assert convert.from_core_task(convert.to_core_task(old)) == old


# --- parts and their lossy points (5.2 Part, 5.3) ---------------------------------------------


def test_file_bytes_travel_as_base64_text() -> None:
    part = pb.Part(raw=b"\x00\x01hi", media_type="application/octet-stream", filename="x.bin")
    old = convert.from_core_part(part)
    assert old.file.file_with_bytes == b"AAFoaQ=="  # REF on the wire, facts 3.4
    assert (old.file.mime_type, old.file.name) == ("application/octet-stream", "x.bin")
    assert convert.to_core_part(old) == part


def test_raw_file_bytes_that_are_not_base64_are_kept_as_sent() -> None:
    # a2a-js 0.3 sends the raw content in the bytes field (facts 3.4).
    old = pb03.Part(file=pb03.FilePart(file_with_bytes=b"\xff\x00 raw!", mime_type="x/y"))
    assert convert.to_core_part(old).raw == b"\xff\x00 raw!"


def test_file_uri() -> None:
    old = pb03.Part(file=pb03.FilePart(file_with_uri="https://e.com/f", name="f"))
    assert convert.to_core_part(old) == pb.Part(url="https://e.com/f", filename="f")


def test_text_and_data_parts_lose_media_type_and_filename() -> None:  # 5.3 #1
    text = convert.from_core_part(pb.Part(text="hi", media_type="text/plain", filename="a"))
    assert text == pb03.Part(text="hi")
    data = pb.Part(media_type="application/json")
    data.data.struct_value.update({"k": 1})
    assert convert.from_core_part(data) == pb03.Part(data=pb03.DataPart(data=_struct({"k": 1})))


@pytest.mark.parametrize("value", [[1, "a"], "text", 2.5, True, None])
def test_non_object_data_is_wrapped_and_unwrapped(value: Any) -> None:  # 5.3 #2
    part = pb.Part(data=_value(value))
    part.metadata.update({"mine": "kept"})
    old = convert.from_core_part(part)
    assert old.data.data == _struct({"value": value})
    assert old.metadata == _struct({"mine": "kept", "data_part_compat": True})
    assert convert.to_core_part(old) == part


def test_an_object_that_looks_wrapped_without_the_flag_stays_an_object() -> None:
    old = pb03.Part(data=pb03.DataPart(data=_struct({"value": 3})))
    assert convert.to_core_part(old).data.struct_value == _struct({"value": 3})


def test_integers_in_data_become_doubles() -> None:  # 5.3 #3
    old = pb03.Part(data=pb03.DataPart(data=_struct({"n": 2**53 + 1})))
    assert convert.to_core_part(old).data.struct_value["n"] == float(2**53)


@pytest.mark.parametrize(("part", "field"), [
    (pb03.Part(), "message.content[0]"),
    (pb03.Part(file=pb03.FilePart(mime_type="text/plain")), "message.content[0].file"),
])
def test_a_part_with_no_content_names_the_field(part: pb03.Part, field: str) -> None:
    message = pb03.Message(message_id="m", role=pb03.ROLE_USER, content=[part])
    with pytest.raises(InvalidParamsError) as caught:
        convert.to_core_message(message)
    assert caught.value.violations[0][0] == field


def test_reference_task_ids_are_lost_on_03_grpc() -> None:  # 5.3 #15
    message = pb.Message(message_id="m", role=pb.ROLE_USER, reference_task_ids=["t0"])
    assert convert.to_core_message(convert.from_core_message(message)).reference_task_ids == []


# --- events: `final` (5.3 #5) ----------------------------------------------------------------

CLOSING = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED",
           "TASK_STATE_REJECTED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}


@pytest.mark.parametrize("state", pb.TaskState.keys())
def test_final_marks_the_update_that_closes_the_stream(state: str) -> None:
    event = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=pb.TaskStatus(state=pb.TaskState.Value(state))))
    event.status_update.metadata.update({"k": "v"})
    old = convert.from_core_stream_response(event).status_update
    assert old.final is (state in CLOSING)
    assert (old.task_id, old.context_id, old.metadata) == ("t", "c", _struct({"k": "v"}))


def test_other_events() -> None:
    chunk = pb.TaskArtifactUpdateEvent(task_id="t", context_id="c", append=True,
                                       last_chunk=True,
                                       artifact=pb.Artifact(artifact_id="a",
                                                            parts=[pb.Part(text="x")]))
    old = convert.from_core_stream_response(pb.StreamResponse(artifact_update=chunk))
    assert old.artifact_update == pb03.TaskArtifactUpdateEvent(
        task_id="t", context_id="c", append=True, last_chunk=True,
        artifact=pb03.Artifact(artifact_id="a", parts=[pb03.Part(text="x")]))
    message = pb.Message(message_id="m", role=pb.ROLE_AGENT)
    assert convert.from_core_stream_response(pb.StreamResponse(message=message)).HasField("msg")
    assert convert.from_core_send_response(pb.SendMessageResponse(message=message)).msg \
        == pb03.Message(message_id="m", role=pb03.ROLE_AGENT)
    assert convert.from_core_send_response(
        pb.SendMessageResponse(task=pb.Task(id="t"))).task.id == "t"


# --- requests (5.2 requests) ------------------------------------------------------------------


def _send(configuration: pb03.SendMessageConfiguration | None = None) -> pb03.SendMessageRequest:
    request = pb03.SendMessageRequest(request=pb03.Message(
        message_id="m", role=pb03.ROLE_USER, content=[pb03.Part(text="hi")]))
    if configuration is not None:
        request.configuration.CopyFrom(configuration)
    return request


def test_send_without_configuration_blocks() -> None:
    core = convert.to_core_send_request(_send())
    assert not core.HasField("configuration") and not core.configuration.return_immediately
    assert core.message == pb.Message(message_id="m", role=pb.ROLE_USER,
                                      parts=[pb.Part(text="hi")])
    assert core.tenant == ""


@pytest.mark.parametrize(("blocking", "immediately"), [(True, False), (False, True)])
def test_send_blocking_is_inverted(blocking: bool, immediately: bool) -> None:  # 5.3 #14
    core = convert.to_core_send_request(_send(pb03.SendMessageConfiguration(blocking=blocking)))
    assert core.configuration.return_immediately is immediately


def test_send_configuration_fields() -> None:
    push = pb03.PushNotificationConfig(
        id="c", url="https://h/x", token="tok",
        authentication=pb03.AuthenticationInfo(schemes=["Bearer", "Basic"], credentials="s"))
    request = _send(pb03.SendMessageConfiguration(
        accepted_output_modes=["text/plain"], history_length=3, blocking=True,
        push_notification=push))
    request.metadata.update({"k": "v"})
    core = convert.to_core_send_request(request)
    assert core.configuration == pb.SendMessageConfiguration(
        accepted_output_modes=["text/plain"], history_length=3, return_immediately=False,
        task_push_notification_config=pb.TaskPushNotificationConfig(
            id="c", url="https://h/x", token="tok",
            authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="s")))
    assert core.metadata == _struct({"k": "v"})


@pytest.mark.parametrize("length", [0, None])
def test_history_length_zero_or_absent_is_no_limit(length: int | None) -> None:  # 5.3 #13
    config = pb03.SendMessageConfiguration(blocking=True)
    if length is not None:
        config.history_length = length
    assert not convert.to_core_send_request(_send(config)).configuration.HasField(
        "history_length")
    get = convert.to_core_get_task(pb03.GetTaskRequest(name="tasks/t1", history_length=0))
    assert get.id == "t1" and not get.HasField("history_length")
    get = convert.to_core_get_task(pb03.GetTaskRequest(name="tasks/t1", history_length=2))
    assert get.history_length == 2


def test_task_names() -> None:
    assert convert.to_core_cancel_task(pb03.CancelTaskRequest(name="tasks/a")).id == "a"
    assert convert.to_core_subscribe(pb03.TaskSubscriptionRequest(name="tasks/b")).id == "b"
    assert convert.task_name("x") == "tasks/x"
    assert convert.parse_config_name(convert.config_name("t", "c/d")) == ("t", "c/d")


@pytest.mark.parametrize("name", ["", "t1", "tasks/", "tasks/a/b", "task/a", " tasks/a",
                                  "tasks/a/pushNotificationConfigs/c"])
def test_a_malformed_task_name_names_the_field(name: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        convert.to_core_get_task(pb03.GetTaskRequest(name=name))
    assert caught.value.violations == [("name", "must be tasks/{task_id}")]
    assert caught.value.message.startswith("name is not a resource name")
    with pytest.raises(InvalidParamsError) as caught:
        convert.to_core_list_push_configs(pb03.ListTaskPushNotificationConfigRequest(parent=name))
    assert caught.value.violations[0][0] == "parent"


@pytest.mark.parametrize(("body_id", "config_id", "expected"), [
    ("body", "param", "body"), ("", "param", "param"), ("", "", "t1")])
def test_create_push_config_id_precedence(body_id: str, config_id: str, expected: str) -> None:
    request = pb03.CreateTaskPushNotificationConfigRequest(
        parent="tasks/t1", config_id=config_id, config=pb03.TaskPushNotificationConfig(
            name="tasks/other/pushNotificationConfigs/x",
            push_notification_config=pb03.PushNotificationConfig(id=body_id, url="https://h")))
    core = convert.to_core_create_push_config(request)
    assert (core.task_id, core.id, core.url, core.tenant) == ("t1", expected, "https://h", "")


def test_create_push_config_without_a_config_names_the_field() -> None:
    with pytest.raises(InvalidParamsError) as caught:
        convert.to_core_create_push_config(
            pb03.CreateTaskPushNotificationConfigRequest(parent="tasks/t1"))
    assert caught.value.violations[0][0] == "config.push_notification_config"


def test_push_config_names() -> None:
    get = convert.to_core_get_push_config(pb03.GetTaskPushNotificationConfigRequest(
        name="tasks/t/pushNotificationConfigs/c"))
    assert (get.task_id, get.id) == ("t", "c")
    for default in ("tasks/t", "tasks/t/pushNotificationConfigs/"):
        get = convert.to_core_get_push_config(
            pb03.GetTaskPushNotificationConfigRequest(name=default))
        assert (get.task_id, get.id) == ("t", "")
    delete = convert.to_core_delete_push_config(pb03.DeleteTaskPushNotificationConfigRequest(
        name="tasks/t/pushNotificationConfigs/c"))
    assert (delete.task_id, delete.id) == ("t", "c")
    for bad in ("tasks/t", "tasks/t/pushNotificationConfigs/", "t/c"):
        with pytest.raises(InvalidParamsError):
            convert.to_core_delete_push_config(
                pb03.DeleteTaskPushNotificationConfigRequest(name=bad))
    list_request = convert.to_core_list_push_configs(pb03.ListTaskPushNotificationConfigRequest(
        parent="tasks/t", page_size=1, page_token="x"))
    assert list_request == pb.ListTaskPushNotificationConfigsRequest(task_id="t")


def test_push_config_from_core() -> None:
    config = pb.TaskPushNotificationConfig(
        tenant="acme", id="c", task_id="t", url="https://h", token="tok",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="s"))
    old = convert.from_core_push_config(config)
    assert old == pb03.TaskPushNotificationConfig(
        name="tasks/t/pushNotificationConfigs/c",
        push_notification_config=pb03.PushNotificationConfig(
            id="c", url="https://h", token="tok",
            authentication=pb03.AuthenticationInfo(schemes=["Bearer"], credentials="s")))
    back = convert.to_core_push_config(old.push_notification_config, "t")
    config.tenant = ""  # 5.3 #18: 0.3 has no tenant
    assert back == config


def test_several_push_schemes_keep_the_first() -> None:  # 5.3 #9
    old = pb03.PushNotificationConfig(url="https://h", authentication=pb03.AuthenticationInfo(
        schemes=["Basic", "Bearer"]))
    assert convert.to_core_push_config(old, "t").authentication.scheme == "Basic"


def test_file_bytes_base64_of_the_03_sdk_example() -> None:
    # The 0.3 JSON-RPC example's file (facts 2.8) as a 0.3 binding holds it.
    old = pb03.Part(file=pb03.FilePart(file_with_bytes=b"aGk=", mime_type="text/plain",
                                       name="x.txt"))
    assert convert.to_core_part(old) == pb.Part(raw=base64.b64decode("aGk="),
                                                media_type="text/plain", filename="x.txt")
