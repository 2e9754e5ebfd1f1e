"""THE conversion table between A2A 0.3 messages (`pb03`, package a2a.v1) and A2A 1.0 ones
(`pb`, package lf.a2a.v1), field by field as compat-facts section 5 lists them.

`to_core_*` turns what a 0.3 caller sent into what the 1.0 operations take; `from_core_*`
turns what they answer into its 0.3 form. Rows of the facts are cited where a choice is made
("5.3 #n" is a lossy point). The agent card is in `card03`.

What both 0.3 bindings agree on when they hold a pb03 message:
- `FilePart.file_with_bytes` holds base64 TEXT, as the Python, Go and Java 0.3 peers put it on
  the wire (facts 3.4); JSON-RPC puts its `file.bytes` string there as is.
- A push config get may name no config (`tasks/{id}`): the caller asks for the default one.
- Input that has no 1.0 form is refused with InvalidParamsError naming the 0.3 field (JSON
  names: `message.content[0].file`); what the 1.0 rules refuse, the core refuses.
"""

from __future__ import annotations

import base64
import binascii
import re

from google.protobuf import struct_pb2

from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.states import ends_stream

__all__ = [
    "config_name",
    "from_core_artifact",
    "from_core_message",
    "from_core_part",
    "from_core_push_config",
    "from_core_role",
    "from_core_send_response",
    "from_core_state",
    "from_core_status",
    "from_core_stream_response",
    "from_core_task",
    "parse_config_name",
    "parse_task_name",
    "task_name",
    "to_core_artifact",
    "to_core_cancel_task",
    "to_core_create_push_config",
    "to_core_delete_push_config",
    "to_core_get_push_config",
    "to_core_get_task",
    "to_core_list_push_configs",
    "to_core_message",
    "to_core_part",
    "to_core_push_config",
    "to_core_role",
    "to_core_send_request",
    "to_core_state",
    "to_core_status",
    "to_core_subscribe",
    "to_core_task",
]

# --- enums (5.1) ------------------------------------------------------------------------------

# Same numbers on both sides; the names differ for CANCELLED (0.3, double L) / CANCELED (1.0).
# 0.3 JSON "unknown" is UNSPECIFIED on both sides (5.3 #6).
_STATES = (
    (pb03.TASK_STATE_UNSPECIFIED, pb.TASK_STATE_UNSPECIFIED),
    (pb03.TASK_STATE_SUBMITTED, pb.TASK_STATE_SUBMITTED),
    (pb03.TASK_STATE_WORKING, pb.TASK_STATE_WORKING),
    (pb03.TASK_STATE_COMPLETED, pb.TASK_STATE_COMPLETED),
    (pb03.TASK_STATE_FAILED, pb.TASK_STATE_FAILED),
    (pb03.TASK_STATE_CANCELLED, pb.TASK_STATE_CANCELED),
    (pb03.TASK_STATE_INPUT_REQUIRED, pb.TASK_STATE_INPUT_REQUIRED),
    (pb03.TASK_STATE_REJECTED, pb.TASK_STATE_REJECTED),
    (pb03.TASK_STATE_AUTH_REQUIRED, pb.TASK_STATE_AUTH_REQUIRED),
)
_STATE_TO_CORE: dict[int, pb.TaskState] = dict(_STATES)
_STATE_FROM_CORE: dict[int, pb03.TaskState] = {core: old for old, core in _STATES}
_ROLES = (
    (pb03.ROLE_UNSPECIFIED, pb.ROLE_UNSPECIFIED),
    (pb03.ROLE_USER, pb.ROLE_USER),
    (pb03.ROLE_AGENT, pb.ROLE_AGENT),
)
_ROLE_TO_CORE: dict[int, pb.Role] = dict(_ROLES)


def to_core_state(state: int) -> pb.TaskState:
    """Any number 0.3 does not define is UNSPECIFIED ("unknown")."""
    return _STATE_TO_CORE.get(state, pb.TASK_STATE_UNSPECIFIED)


def from_core_state(state: int) -> pb03.TaskState:
    """Any other 1.0 number is UNSPECIFIED, the 0.3 "unknown" (5.1)."""
    return _STATE_FROM_CORE.get(state, pb03.TASK_STATE_UNSPECIFIED)


def to_core_role(role: int) -> pb.Role:
    # 5.3 #8: an unspecified role stays unspecified, so the core refuses the message for its
    # missing role (REF reads it as agent; the facts allow refusing it).
    return _ROLE_TO_CORE.get(role, pb.ROLE_UNSPECIFIED)


def from_core_role(role: int) -> pb03.Role:
    # 5.3 #8: 0.3 has two roles; an unspecified one goes out as agent, as in REF.
    return pb03.ROLE_USER if role == pb.ROLE_USER else pb03.ROLE_AGENT


# --- parts (5.2 Part) ------------------------------------------------------------------------

_COMPAT_FLAG = "data_part_compat"  # 5.3 #2: marks a non-object 1.0 data value wrapped for 0.3


def to_core_part(part: pb03.Part, path: str = "part") -> pb.Part:
    """One 0.3 part (text, file or data) as the 1.0 part with the same content."""
    out = pb.Part()
    if part.HasField("metadata"):
        out.metadata.CopyFrom(part.metadata)
    kind = part.WhichOneof("part")
    if kind == "text":
        out.text = part.text
    elif kind == "file":
        file = part.file
        which = file.WhichOneof("file")
        if which == "file_with_uri":
            out.url = file.file_with_uri
        elif which == "file_with_bytes":
            out.raw = _decoded(file.file_with_bytes)
        else:
            raise _unmappable(f"{path}.file", "needs fileWithUri or fileWithBytes")
        out.media_type, out.filename = file.mime_type, file.name
    elif kind == "data":
        data = part.data.data
        flag = out.metadata.fields.get(_COMPAT_FLAG)
        if flag is not None and flag.bool_value and set(data.fields) == {"value"}:
            # A value this table wrapped on the way out comes back as it was (5.3 #2).
            out.data.CopyFrom(data.fields["value"])
            del out.metadata.fields[_COMPAT_FLAG]
            if not out.metadata.fields:
                out.ClearField("metadata")
        else:
            out.data.struct_value.CopyFrom(data)
    else:
        raise _unmappable(path, "needs text, file or data")
    return out


def from_core_part(part: pb.Part) -> pb03.Part:
    """A 1.0 part in 0.3 form. 5.3 #1: mediaType and filename of text and data parts have no
    0.3 home and are dropped."""
    out = pb03.Part()
    if part.HasField("metadata"):
        out.metadata.CopyFrom(part.metadata)
    kind = part.WhichOneof("content")
    if kind == "text":
        out.text = part.text
    elif kind in ("raw", "url"):
        if kind == "raw":  # 5.3 #4: standard base64 with padding, as text (see module doc)
            out.file.file_with_bytes = base64.b64encode(part.raw)
        else:
            out.file.file_with_uri = part.url
        out.file.mime_type, out.file.name = part.media_type, part.filename
    elif kind == "data":
        if part.data.WhichOneof("kind") == "struct_value":
            out.data.data.CopyFrom(part.data.struct_value)
        else:
            # 5.3 #2: a 0.3 DataPart holds an object only: wrap, and flag it for the way back.
            out.data.data.fields["value"].CopyFrom(_value_or_null(part.data))
            out.metadata.fields[_COMPAT_FLAG].bool_value = True
    return out


def _decoded(data: bytes) -> bytes:
    # Facts 3.4: 0.3 Python, Go and Java peers send base64 text in this bytes field, a2a-js
    # sends the raw bytes; content that is not base64 text is taken as the raw bytes.
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data


def _value_or_null(value: struct_pb2.Value) -> struct_pb2.Value:
    if value.WhichOneof("kind") is None:
        return struct_pb2.Value(null_value=struct_pb2.NULL_VALUE)
    return value


# --- messages, tasks, artifacts (5.2) --------------------------------------------------------


def to_core_message(message: pb03.Message, path: str = "message") -> pb.Message:
    """A 0.3 message; `content` becomes `parts`. 0.3 gRPC has no referenceTaskIds (5.3 #15):
    a binding that has them sets them on the result."""
    out = pb.Message(message_id=message.message_id, context_id=message.context_id,
                     task_id=message.task_id, role=to_core_role(message.role),
                     extensions=message.extensions)
    out.parts.extend(to_core_part(part, f"{path}.content[{i}]")
                     for i, part in enumerate(message.content))
    if message.HasField("metadata"):
        out.metadata.CopyFrom(message.metadata)
    return out


def from_core_message(message: pb.Message) -> pb03.Message:
    """5.3 #15: reference_task_ids are lost (no 0.3 proto field)."""
    out = pb03.Message(message_id=message.message_id, context_id=message.context_id,
                       task_id=message.task_id, role=from_core_role(message.role),
                       extensions=message.extensions)
    out.content.extend(from_core_part(part) for part in message.parts)
    if message.HasField("metadata"):
        out.metadata.CopyFrom(message.metadata)
    return out


def to_core_status(status: pb03.TaskStatus) -> pb.TaskStatus:
    out = pb.TaskStatus(state=to_core_state(status.state))
    if status.HasField("update"):  # 0.3 field `update`, JSON name `message`
        out.message.CopyFrom(to_core_message(status.update, "status.message"))
    if status.HasField("timestamp"):
        out.timestamp.CopyFrom(status.timestamp)
    return out


def from_core_status(status: pb.TaskStatus) -> pb03.TaskStatus:
    out = pb03.TaskStatus(state=from_core_state(status.state))
    if status.HasField("message"):
        out.update.CopyFrom(from_core_message(status.message))
    if status.HasField("timestamp"):
        out.timestamp.CopyFrom(status.timestamp)
    return out


def to_core_artifact(artifact: pb03.Artifact, path: str = "artifact") -> pb.Artifact:
    out = pb.Artifact(artifact_id=artifact.artifact_id, name=artifact.name,
                      description=artifact.description, extensions=artifact.extensions)
    out.parts.extend(to_core_part(part, f"{path}.parts[{i}]")
                     for i, part in enumerate(artifact.parts))
    if artifact.HasField("metadata"):
        out.metadata.CopyFrom(artifact.metadata)
    return out


def from_core_artifact(artifact: pb.Artifact) -> pb03.Artifact:
    out = pb03.Artifact(artifact_id=artifact.artifact_id, name=artifact.name,
                        description=artifact.description, extensions=artifact.extensions)
    out.parts.extend(from_core_part(part) for part in artifact.parts)
    if artifact.HasField("metadata"):
        out.metadata.CopyFrom(artifact.metadata)
    return out


def to_core_task(task: pb03.Task) -> pb.Task:
    out = pb.Task(id=task.id, context_id=task.context_id, status=to_core_status(task.status))
    out.artifacts.extend(to_core_artifact(a, f"artifacts[{i}]")
                         for i, a in enumerate(task.artifacts))
    out.history.extend(to_core_message(m, f"history[{i}]") for i, m in enumerate(task.history))
    if task.HasField("metadata"):
        out.metadata.CopyFrom(task.metadata)
    return out


def from_core_task(task: pb.Task) -> pb03.Task:
    """A task in 0.3 form (the same field numbers, 3.6; the content converted)."""
    out = pb03.Task(id=task.id, context_id=task.context_id,
                    status=from_core_status(task.status))
    out.artifacts.extend(from_core_artifact(a) for a in task.artifacts)
    out.history.extend(from_core_message(m) for m in task.history)
    if task.HasField("metadata"):
        out.metadata.CopyFrom(task.metadata)
    return out


# --- results and stream events ---------------------------------------------------------------


def from_core_send_response(response: pb.SendMessageResponse) -> pb03.SendMessageResponse:
    if response.HasField("message"):
        return pb03.SendMessageResponse(msg=from_core_message(response.message))
    return pb03.SendMessageResponse(task=from_core_task(response.task))


def from_core_stream_response(event: pb.StreamResponse) -> pb03.StreamResponse:
    """One stream event. `final` (0.3 only) is true on the status update after which the
    stream closes: terminal AND interrupted states (5.3 #5; REF marks terminal ones only)."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        return pb03.StreamResponse(task=from_core_task(event.task))
    if kind == "message":
        return pb03.StreamResponse(msg=from_core_message(event.message))
    if kind == "status_update":
        status = event.status_update
        update = pb03.TaskStatusUpdateEvent(
            task_id=status.task_id, context_id=status.context_id,
            status=from_core_status(status.status), final=ends_stream(status.status.state))
        if status.HasField("metadata"):
            update.metadata.CopyFrom(status.metadata)
        return pb03.StreamResponse(status_update=update)
    artifact = event.artifact_update
    chunk = pb03.TaskArtifactUpdateEvent(
        task_id=artifact.task_id, context_id=artifact.context_id,
        artifact=from_core_artifact(artifact.artifact), append=artifact.append,
        last_chunk=artifact.last_chunk)
    if artifact.HasField("metadata"):
        chunk.metadata.CopyFrom(artifact.metadata)
    return pb03.StreamResponse(artifact_update=chunk)


# --- resource names (3.4) --------------------------------------------------------------------

_TASK_NAME = re.compile(r"tasks/([^/]+)")
# A config id may hold "/" (1.0 callers choose it freely); the task id may not.
_CONFIG_NAME = re.compile(r"tasks/([^/]+)(?:/pushNotificationConfigs/(.*))?")
_TASK_FORM = "tasks/{task_id}"
_CONFIG_FORM = "tasks/{task_id}/pushNotificationConfigs/{config_id}"


def task_name(task_id: str) -> str:
    return f"tasks/{task_id}"


def config_name(task_id: str, config_id: str) -> str:
    return f"tasks/{task_id}/pushNotificationConfigs/{config_id}"


def parse_task_name(name: str, field: str = "name") -> str:
    """The task id of `tasks/{task_id}`. Raises InvalidParamsError naming `field`."""
    match = _TASK_NAME.fullmatch(name)
    if match is None:
        raise _bad_name(name, field, _TASK_FORM)
    return match.group(1)


def parse_config_name(name: str, field: str = "name", *,
                      config_optional: bool = False) -> tuple[str, str]:
    """(task id, config id) of `tasks/{task_id}/pushNotificationConfigs/{config_id}`; with
    `config_optional`, `tasks/{task_id}` too (config id ""). Raises InvalidParamsError."""
    match = _CONFIG_NAME.fullmatch(name)
    if match is None or (not match.group(2) and not config_optional):
        raise _bad_name(name, field, _CONFIG_FORM)
    return match.group(1), match.group(2) or ""


def _bad_name(name: str, field: str, form: str) -> InvalidParamsError:
    return InvalidParamsError(f"{field} is not a resource name of the form {form}: {name!r}",
                              violations=[(field, f"must be {form}")])


def _unmappable(field: str, problem: str) -> InvalidParamsError:
    return InvalidParamsError(f"Invalid parameters: {field} {problem}",
                              violations=[(field, problem)])


# --- push configs (5.2 push configs) ---------------------------------------------------------


def to_core_push_config(config: pb03.PushNotificationConfig,
                        task_id: str) -> pb.TaskPushNotificationConfig:
    """The nested 0.3 config as the flat 1.0 one for `task_id` (an id left empty gets the
    core's default)."""
    out = pb.TaskPushNotificationConfig(id=config.id, task_id=task_id, url=config.url,
                                        token=config.token)
    if config.HasField("authentication"):
        # 5.3 #9: 1.0 holds one scheme; the first is kept.
        schemes = config.authentication.schemes
        out.authentication.scheme = schemes[0] if schemes else ""
        out.authentication.credentials = config.authentication.credentials
    return out


def from_core_push_config(config: pb.TaskPushNotificationConfig
                          ) -> pb03.TaskPushNotificationConfig:
    """The flat 1.0 config nested again under its resource name (the tenant has no 0.3
    home: 0.3 callers always work in the empty one, 5.3 #18)."""
    inner = pb03.PushNotificationConfig(id=config.id, url=config.url, token=config.token)
    if config.HasField("authentication"):
        auth = config.authentication
        inner.authentication.schemes.extend([auth.scheme] if auth.scheme else [])
        inner.authentication.credentials = auth.credentials
    return pb03.TaskPushNotificationConfig(name=config_name(config.task_id, config.id),
                                           push_notification_config=inner)


# --- requests (5.2 requests) -----------------------------------------------------------------


def to_core_send_request(request: pb03.SendMessageRequest) -> pb.SendMessageRequest:
    """`request` (JSON name `message`) becomes `message`; the tenant stays empty (5.3 #18).

    Configuration (5.2 SendMessageConfiguration): without one the call blocks (the 1.0
    default); with one, `return_immediately = not blocking`, so an unset `blocking` returns
    at once (5.3 #14, 3.4; a JSON-RPC caller that omits `blocking` gets it set to true by
    its binding). `history_length` 0 means no limit, as unset (5.3 #13)."""
    out = pb.SendMessageRequest(message=to_core_message(request.request))
    if request.HasField("configuration"):
        config = request.configuration
        target = out.configuration
        target.accepted_output_modes.extend(config.accepted_output_modes)
        target.return_immediately = not config.blocking
        if config.history_length:
            target.history_length = config.history_length
        if config.HasField("push_notification"):
            target.task_push_notification_config.CopyFrom(
                to_core_push_config(config.push_notification, task_id=""))
    if request.HasField("metadata"):
        out.metadata.CopyFrom(request.metadata)
    return out


def to_core_get_task(request: pb03.GetTaskRequest) -> pb.GetTaskRequest:
    out = pb.GetTaskRequest(id=parse_task_name(request.name))
    if request.history_length:  # 5.3 #13: 0 = no limit = unset
        out.history_length = request.history_length
    return out


def to_core_cancel_task(request: pb03.CancelTaskRequest) -> pb.CancelTaskRequest:
    return pb.CancelTaskRequest(id=parse_task_name(request.name))


def to_core_subscribe(request: pb03.TaskSubscriptionRequest) -> pb.SubscribeToTaskRequest:
    return pb.SubscribeToTaskRequest(id=parse_task_name(request.name))


def to_core_create_push_config(request: pb03.CreateTaskPushNotificationConfigRequest
                               ) -> pb.TaskPushNotificationConfig:
    """The config for the task `parent` names. Its id: the body's, else `config_id`, else
    the task id (the 0.3 default id, facts 2.3; REF ignores `config_id`, 3.4). The body's
    `name` is not read: `parent` names the task."""
    task_id = parse_task_name(request.parent, "parent")
    if not request.config.HasField("push_notification_config"):
        raise _unmappable("config.push_notification_config", "required field is missing")
    config = to_core_push_config(request.config.push_notification_config, task_id)
    config.id = config.id or request.config_id or task_id
    return config


def to_core_get_push_config(request: pb03.GetTaskPushNotificationConfigRequest
                            ) -> pb.GetTaskPushNotificationConfigRequest:
    """An empty id (the name `tasks/{task_id}`) asks for the task's default config
    (5.3 #10), which `Calls03` looks up."""
    task_id, config_id = parse_config_name(request.name, config_optional=True)
    return pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)


def to_core_list_push_configs(request: pb03.ListTaskPushNotificationConfigRequest
                              ) -> pb.ListTaskPushNotificationConfigsRequest:
    """`page_size` and `page_token` are not passed on: a 0.3 caller gets every config
    (5.3 #11)."""
    return pb.ListTaskPushNotificationConfigsRequest(
        task_id=parse_task_name(request.parent, "parent"))


def to_core_delete_push_config(request: pb03.DeleteTaskPushNotificationConfigRequest
                               ) -> pb.DeleteTaskPushNotificationConfigRequest:
    task_id, config_id = parse_config_name(request.name)
    return pb.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
