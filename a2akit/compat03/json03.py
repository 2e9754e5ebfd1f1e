"""0.3 JSON-RPC JSON <-> the 0.3 messages (`a2a_v0_3_pb2`), both directions.

0.3 JSON-RPC is not ProtoJSON of the 0.3 proto (facts 2.9): its shapes come from the 0.3 JSON
schema (facts 2.3-2.5): `kind` on Task, Message, parts and events; `parts` (the proto's
`content`); lowercase kebab states; roles `user` / `agent`; files nested as
`file: {bytes | uri, mimeType, name}`; push configs nested under `pushNotificationConfig`
with `schemes[]`; bare results. So the codec is written here, one function per schema object,
in the order of the facts tables.

Input is read as 0.3 peers send it: a missing `kind` is accepted (the 0.3 spec's own examples
omit it), unknown members are ignored, a wrong `kind` is refused. Anything that does not fit
a schema shape raises InvalidParamsError (-32602) naming the field by its JSON path
(`message.parts[0].file.bytes`), bad base64 included (facts 5.3 #4: not REF's -32600/-32603).

`file.bytes` travels inside the 0.3 message as its base64 text (UTF-8), the convention of the
0.3 gRPC peers (facts 3.4), which `convert` decodes once for both 0.3 bindings; the text is
checked here, so a malformed one is the caller's -32602.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from google.protobuf import struct_pb2

from a2akit.compat03 import convert
from a2akit.compat03.card_json import card_json
from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.protojson import dumps, to_json

__all__ = ["METHODS", "ROLES", "STATES", "decode_params", "encode", "task_payload"]

JsonObject = dict[str, Any]

# --- value sets (facts 5.1) ----------------------------------------------------------------

STATES: Mapping[int, str] = {
    pb03.TASK_STATE_SUBMITTED: "submitted",
    pb03.TASK_STATE_WORKING: "working",
    pb03.TASK_STATE_COMPLETED: "completed",
    pb03.TASK_STATE_FAILED: "failed",
    pb03.TASK_STATE_CANCELLED: "canceled",
    pb03.TASK_STATE_INPUT_REQUIRED: "input-required",
    pb03.TASK_STATE_REJECTED: "rejected",
    pb03.TASK_STATE_AUTH_REQUIRED: "auth-required",
}
_UNKNOWN_STATE = "unknown"  # TASK_STATE_UNSPECIFIED, and any value 0.3 does not name
ROLES: Mapping[str, pb03.Role] = {"user": pb03.ROLE_USER, "agent": pb03.ROLE_AGENT}
_ROLE_NAMES = {number: name for name, number in ROLES.items()}  # unspecified -> agent
_INT32 = range(-(2**31), 2**31)



def task_payload(task: pb.Task) -> bytes:
    """The 0.3 JSON of a task (`kind: "task"`, compact): what a push config created by a 0.3
    caller is delivered (0.3 spec 9.5)."""
    return dumps(encode(convert.from_core_task(task)))


# --- encoding: 0.3 messages -> 0.3 JSON (facts 2.4, 2.5) ------------------------------------
#
# Optional members are left out when unset (`""`, empty lists, empty metadata), as REF does;
# `kind` is always written; `final`, `append` and `lastChunk` are always written.


def _struct(value: struct_pb2.Struct) -> JsonObject:
    return to_json(value)  # the 1.0 encoder's Struct: a stored NaN reads as "NaN", not a 500


def _put(out: JsonObject, name: str, value: Any) -> None:
    if value:
        out[name] = value


def _meta(out: JsonObject, message: Any) -> None:
    if message.HasField("metadata") and message.metadata.fields:
        out["metadata"] = _struct(message.metadata)


def _part(part: pb03.Part) -> JsonObject:
    member = part.WhichOneof("part")
    out: JsonObject
    if member == "file":
        file: JsonObject = {}
        if part.file.WhichOneof("file") == "file_with_uri":
            file["uri"] = part.file.file_with_uri
        else:
            file["bytes"] = part.file.file_with_bytes.decode("ascii")
        _put(file, "mimeType", part.file.mime_type)
        _put(file, "name", part.file.name)
        out = {"kind": "file", "file": file}
    elif member == "data":
        out = {"kind": "data", "data": _struct(part.data.data)}
    else:
        out = {"kind": "text", "text": part.text}
    _meta(out, part)
    return out


def _message(message: pb03.Message) -> JsonObject:
    out: JsonObject = {"kind": "message", "messageId": message.message_id,
                       "role": _ROLE_NAMES.get(message.role, "agent"),
                       "parts": [_part(part) for part in message.content]}
    _put(out, "contextId", message.context_id)
    _put(out, "taskId", message.task_id)
    _put(out, "extensions", list(message.extensions))
    _meta(out, message)
    return out


def _status(status: pb03.TaskStatus) -> JsonObject:
    out: JsonObject = {"state": STATES.get(status.state, _UNKNOWN_STATE)}
    if status.HasField("update"):
        out["message"] = _message(status.update)
    if status.HasField("timestamp"):
        out["timestamp"] = status.timestamp.ToJsonString()
    return out


def _artifact(artifact: pb03.Artifact) -> JsonObject:
    out: JsonObject = {"artifactId": artifact.artifact_id}
    _put(out, "name", artifact.name)
    _put(out, "description", artifact.description)
    out["parts"] = [_part(part) for part in artifact.parts]
    _put(out, "extensions", list(artifact.extensions))
    _meta(out, artifact)
    return out


def _task(task: pb03.Task) -> JsonObject:
    out: JsonObject = {"kind": "task", "id": task.id, "contextId": task.context_id,
                       "status": _status(task.status)}
    _put(out, "artifacts", [_artifact(a) for a in task.artifacts])
    _put(out, "history", [_message(m) for m in task.history])
    _meta(out, task)
    return out


def _status_update(event: pb03.TaskStatusUpdateEvent) -> JsonObject:
    out: JsonObject = {"kind": "status-update", "taskId": event.task_id,
                       "contextId": event.context_id, "status": _status(event.status),
                       "final": event.final}
    _meta(out, event)
    return out


def _artifact_update(event: pb03.TaskArtifactUpdateEvent) -> JsonObject:
    out: JsonObject = {"kind": "artifact-update", "taskId": event.task_id,
                       "contextId": event.context_id, "artifact": _artifact(event.artifact),
                       "append": event.append, "lastChunk": event.last_chunk}
    _meta(out, event)
    return out


def _push_config(config: pb03.PushNotificationConfig) -> JsonObject:
    out: JsonObject = {"url": config.url}
    _put(out, "id", config.id)
    _put(out, "token", config.token)
    if config.HasField("authentication"):
        auth: JsonObject = {"schemes": list(config.authentication.schemes)}
        _put(auth, "credentials", config.authentication.credentials)
        out["authentication"] = auth
    return out


def _task_push_config(config: pb03.TaskPushNotificationConfig) -> JsonObject:
    # name: tasks/{task_id}/pushNotificationConfigs/{config_id} (facts 3.4)
    task_id = config.name.removeprefix("tasks/").partition("/")[0]
    return {"taskId": task_id, "pushNotificationConfig": _push_config(
        config.push_notification_config)}


def _one_of(payload: Any, field: str = "payload") -> JsonObject:
    """A SendMessageResponse / StreamResponse: the bare member, told apart by `kind`."""
    member = payload.WhichOneof(field)
    if member is None:
        raise ValueError(f"{payload.DESCRIPTOR.name} carries nothing")
    out: JsonObject = encode(getattr(payload, member))
    return out


def _push_list(response: pb03.ListTaskPushNotificationConfigResponse) -> list[JsonObject]:
    return [_task_push_config(config) for config in response.configs]


_ENCODERS: dict[str, Callable[[Any], Any]] = {
    "Task": _task,
    "Message": _message,
    "TaskStatusUpdateEvent": _status_update,
    "TaskArtifactUpdateEvent": _artifact_update,
    "SendMessageResponse": _one_of,
    "StreamResponse": _one_of,
    "TaskPushNotificationConfig": _task_push_config,
    "ListTaskPushNotificationConfigResponse": _push_list,  # a bare array (facts 2.5)
    "PushNotificationConfig": _push_config,
    "AgentCard": lambda card: card_json(card),
    "Empty": lambda _: None,  # written as "result": null (0.3 schema; REF omits it)
}


def encode(message: Any) -> Any:
    """The 0.3 JSON value of a 0.3 result message (an object; a list for the push config
    list). The agent card has its own encoder (`a2akit.compat03.card_json`)."""
    return _ENCODERS[message.DESCRIPTOR.name](message)


# --- decoding: 0.3 JSON params -> 0.3 messages (facts 2.3, 2.4) ------------------------------


def _invalid(path: str, problem: str) -> InvalidParamsError:
    return InvalidParamsError(f"Invalid parameters: {path} {problem}",
                              violations=[(path, problem)])


T = TypeVar("T")
_TYPES: dict[type, str] = {str: "a string", bool: "a boolean", int: "an integer",
                           dict: "a JSON object", list: "an array"}


def _get(obj: JsonObject, key: str, path: str, kind: type[T], *,
         required: bool = False) -> T | None:
    """obj[key] checked against `kind` (bool is no int here); None when absent or null,
    unless `required`."""
    value = obj.get(key)
    where = f"{path}.{key}" if path else key
    if value is None:
        if required:
            raise _invalid(where, "is required")
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _invalid(where, f"must be {_TYPES[kind]}")
    return value


def _text(obj: JsonObject, key: str, path: str, *, required: bool = False) -> str:
    value = _get(obj, key, path, str, required=required)
    if required and not value:
        raise _invalid(f"{path}.{key}" if path else key, "is required")
    return value or ""


def _strings(obj: JsonObject, key: str, path: str) -> list[str]:
    values = _get(obj, key, path, list) or []
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise _invalid(f"{path}.{key}[{i}]" if path else f"{key}[{i}]", "must be a string")
    return values


def _to_struct(value: JsonObject, path: str) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    try:
        out.update(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise _invalid(path, "holds a value a JSON object cannot carry here") from exc
    return out


def _set_meta(target: Any, obj: JsonObject, path: str) -> None:
    metadata = _get(obj, "metadata", path, dict)
    if metadata is not None:
        target.metadata.CopyFrom(_to_struct(metadata, f"{path}.metadata" if path else "metadata"))


def _kind(obj: JsonObject, path: str, allowed: Sequence[str]) -> str | None:
    """The `kind` discriminator: absent is accepted (None), another value is refused."""
    kind = _get(obj, "kind", path, str)
    if kind is not None and kind not in allowed:
        raise _invalid(f"{path}.kind", "must be " + " or ".join(f'"{k}"' for k in allowed))
    return kind


def _object(value: object, path: str) -> JsonObject:
    if not isinstance(value, dict):
        raise _invalid(path, "must be a JSON object")
    return value


def _decode_part(obj: JsonObject, path: str) -> pb03.Part:
    kind = _kind(obj, path, ("text", "file", "data"))
    if kind is None:  # read from the member present, as the schema's variants differ in it
        kind = next((k for k in ("text", "file", "data") if k in obj), None)
        if kind is None:
            raise _invalid(f"{path}.kind", 'is required ("text", "file" or "data")')
    part = pb03.Part()
    if kind == "text":
        part.text = _get(obj, "text", path, str, required=True) or ""
    elif kind == "file":
        file = _get(obj, "file", path, dict, required=True) or {}
        where = f"{path}.file"
        if ("bytes" in file) == ("uri" in file):
            raise _invalid(where, "must have exactly one of bytes and uri")
        if "uri" in file:
            part.file.file_with_uri = _text(file, "uri", where, required=True)
        else:
            part.file.file_with_bytes = _base64(_get(file, "bytes", where, str, required=True)
                                                or "", f"{where}.bytes")
        part.file.mime_type = _text(file, "mimeType", where)
        part.file.name = _text(file, "name", where)
    else:
        data = _get(obj, "data", path, dict, required=True) or {}
        part.data.data.CopyFrom(_to_struct(data, f"{path}.data"))
    _set_meta(part, obj, path)
    return part


def _base64(text: str, path: str) -> bytes:
    """Standard base64 (padding included), checked; carried on as its text (see above)."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _invalid(path, "is not valid base64") from exc
    return base64.b64encode(raw)


def _decode_message(obj: JsonObject, path: str) -> tuple[pb03.Message, list[str]]:
    """The message and its referenceTaskIds (no 0.3 proto field: carried aside, brief)."""
    _kind(obj, path, ("message",))
    role = _get(obj, "role", path, str, required=True) or ""
    if role not in ROLES:
        raise _invalid(f"{path}.role", 'must be "user" or "agent"')
    message = pb03.Message(message_id=_text(obj, "messageId", path, required=True),
                           context_id=_text(obj, "contextId", path),
                           task_id=_text(obj, "taskId", path), role=ROLES[role],
                           extensions=_strings(obj, "extensions", path))
    parts = _get(obj, "parts", path, list, required=True) or []
    for i, item in enumerate(parts):
        where = f"{path}.parts[{i}]"
        message.content.append(_decode_part(_object(item, where), where))
    _set_meta(message, obj, path)
    return message, _strings(obj, "referenceTaskIds", path)


def _decode_push(obj: JsonObject, path: str) -> pb03.PushNotificationConfig:
    config = pb03.PushNotificationConfig(url=_text(obj, "url", path, required=True),
                                         id=_text(obj, "id", path),
                                         token=_text(obj, "token", path))
    auth = _get(obj, "authentication", path, dict)
    if auth is not None:
        where = f"{path}.authentication"
        if _get(auth, "schemes", where, list, required=True) is not None:
            config.authentication.schemes.extend(_strings(auth, "schemes", where))
        config.authentication.credentials = _text(auth, "credentials", where)
    return config


def _history_length(obj: JsonObject, path: str) -> int:
    value = _get(obj, "historyLength", path, int) or 0  # 0 or absent: no limit (facts 2.3)
    if value not in _INT32:
        raise _invalid(f"{path}.historyLength" if path else "historyLength",
                       "is out of range")
    return value


def _send(params: JsonObject) -> tuple[pb03.SendMessageRequest, list[str]]:
    message, references = _decode_message(
        _get(params, "message", "", dict, required=True) or {}, "message")
    request = pb03.SendMessageRequest(request=message)
    config = _get(params, "configuration", "", dict)
    if config is not None:
        where = "configuration"
        blocking = _get(config, "blocking", where, bool)
        # JSON: absent `blocking` blocks; in the 0.3 message an unset one does not (gRPC
        # semantics, facts 3.4), so it is written out.
        request.configuration.blocking = True if blocking is None else blocking
        request.configuration.accepted_output_modes.extend(
            _strings(config, "acceptedOutputModes", where))
        request.configuration.history_length = _history_length(config, where)
        push = _get(config, "pushNotificationConfig", where, dict)
        if push is not None:
            request.configuration.push_notification.CopyFrom(
                _decode_push(push, f"{where}.pushNotificationConfig"))
    _set_meta(request, params, "")
    return request, references


def _task_name(params: JsonObject, key: str = "id") -> str:
    task_id = _text(params, key, "", required=True)
    if "/" in task_id:  # it would change the resource name; no task id has one
        raise _invalid(key, "is not a task id")
    return convert.task_name(task_id)


def _config_name(params: JsonObject, *, required: bool) -> str:
    task_id = _task_name(params).removeprefix("tasks/")
    config_id = _text(params, "pushNotificationConfigId", "", required=required)
    if "/" in config_id:
        raise _invalid("pushNotificationConfigId", "is not a config id")
    # Without a config id (the deprecated TaskIdParams form) the name is the task's:
    # Calls03 then answers the default config (id = task id), else the first (brief).
    return (convert.config_name(task_id, config_id) if config_id
            else convert.task_name(task_id))


def _set_push(params: JsonObject) -> pb03.CreateTaskPushNotificationConfigRequest:
    parent = _task_name(params, "taskId")
    push = _decode_push(_get(params, "pushNotificationConfig", "", dict, required=True) or {},
                        "pushNotificationConfig")
    return pb03.CreateTaskPushNotificationConfigRequest(
        parent=parent, config_id=push.id,
        config=pb03.TaskPushNotificationConfig(push_notification_config=push))


# The params of each 0.3 method (facts 2.2, 2.3) -> its 0.3 request message. `metadata` of
# the id-only params has no field in the 0.3 messages (it is checked, then dropped: facts 5.2).
_DECODERS: dict[str, Callable[[JsonObject], Any]] = {
    "message/send": _send,
    "message/stream": _send,
    "tasks/get": lambda p: pb03.GetTaskRequest(name=_task_name(p),
                                               history_length=_history_length(p, "")),
    "tasks/cancel": lambda p: pb03.CancelTaskRequest(name=_task_name(p)),
    "tasks/resubscribe": lambda p: pb03.TaskSubscriptionRequest(name=_task_name(p)),
    "tasks/pushNotificationConfig/set": _set_push,
    "tasks/pushNotificationConfig/get": lambda p: pb03.GetTaskPushNotificationConfigRequest(
        name=_config_name(p, required=False)),
    "tasks/pushNotificationConfig/list": lambda p: pb03.ListTaskPushNotificationConfigRequest(
        parent=_task_name(p)),
    "tasks/pushNotificationConfig/delete": lambda p: (
        pb03.DeleteTaskPushNotificationConfigRequest(name=_config_name(p, required=True))),
    "agent/getAuthenticatedExtendedCard": lambda p: pb03.GetAgentCardRequest(),
}
METHODS = frozenset(_DECODERS)


def decode_params(method: str, params: object) -> tuple[Any, dict[str, Any]]:
    """The 0.3 request message of `method` (one of METHODS) from its JSON-RPC params, and the
    `Calls03` options the JSON carries beyond the message (`reference_task_ids`: the 0.3
    message has no field for them). Raises InvalidParamsError naming the first field that
    does not fit."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _invalid("params", "must be a JSON object")
    if "metadata" in params:
        _get(params, "metadata", "", dict)
    decoded = _DECODERS[method](params)
    if isinstance(decoded, tuple):
        request, references = decoded
        return request, {"reference_task_ids": references}
    return decoded, {}
