"""The fuzz tests' strategies (hypothesis): any JSON, hostile values, valid requests with one field
made wrong, envelope variants, bytes that are not UTF-8 (tests/jsonrpc/test_fuzz.py,
tests/compat03/test_fuzz03.py)."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

from hypothesis import strategies as st

from a2akit.limits import MAX_ID_BYTES, MAX_JSON_DEPTH
from a2akit.operations import OPERATIONS
from tests.support.messages import user_message

TENANT = "fuzz-tenant"
HOOK = "https://93.184.216.34/hook"

json_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
request_ids = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=20))


# One valid params object per method; the fuzz varies one field at a time.
BASES: dict[str, dict[str, Any]] = {
    "SendMessage": {"message": user_message("hi", "fuzz-message"), "metadata": {"k": "v"},
                    "configuration": {"acceptedOutputModes": ["text/plain"],
                                      "historyLength": 3, "returnImmediately": False,
                                      "taskPushNotificationConfig": {"url": HOOK}}},
    "SendStreamingMessage": {"message": user_message("hi", "fuzz-message")},
    "GetTask": {"id": "t-1", "historyLength": 2, "tenant": TENANT},
    "ListTasks": {"contextId": "c-1", "status": "TASK_STATE_COMPLETED", "pageSize": 10,
                  "historyLength": 1, "includeArtifacts": True,
                  "statusTimestampAfter": "2026-01-01T00:00:00Z"},
    "CancelTask": {"id": "t-1", "metadata": {"why": "fuzz"}},
    "SubscribeToTask": {"id": "t-1"},
    "CreateTaskPushNotificationConfig": {"taskId": "t-1", "url": HOOK, "token": "tok",
                                         "authentication": {"scheme": "Bearer"}},
    "GetTaskPushNotificationConfig": {"taskId": "t-1", "id": "c-1"},
    "ListTaskPushNotificationConfigs": {"taskId": "t-1", "pageSize": 5},
    "DeleteTaskPushNotificationConfig": {"taskId": "t-1", "id": "c-1"},
    "GetExtendedAgentCard": {},
}
assert set(BASES) == set(OPERATIONS)


@dataclasses.dataclass(frozen=True)
class Slot:
    """A field of a params object: the JSON keys leading to its object, and its path as the
    server's violations name it (proto names)."""

    keys: tuple[str | int, ...]
    where: str
    field: Any

    @property
    def path(self) -> str:
        return self.where + self.field.name


def _slots(data: dict[str, Any], descriptor: Any, keys: tuple[str | int, ...] = (),
           where: str = "") -> list[Slot]:
    """Every field of every message object present in `data` (set there or not)."""
    found = []
    for field in descriptor.fields:
        found.append(Slot(keys, where, field))
        value = data.get(field.json_name)
        if field.type != field.TYPE_MESSAGE or field.message_type.full_name.startswith(
                "google.protobuf.") or _is_map(field):
            continue
        if isinstance(value, dict):
            found += _slots(value, field.message_type, (*keys, field.json_name),
                            f"{where}{field.name}.")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    found += _slots(item, field.message_type, (*keys, field.json_name, i),
                                    f"{where}{field.name}[{i}].")
    return found


def _set(params: dict[str, Any], slot: Slot, value: Any) -> None:
    node: Any = params
    for key in slot.keys:
        node = node[key]
    oneof = slot.field.containing_oneof
    if oneof is not None and len(oneof.fields) > 1:
        for other in oneof.fields:  # one member at a time: replace, not add
            node.pop(other.json_name, None)
    node[slot.field.json_name] = value


def _fresh(draw: st.DrawFn, method: str) -> dict[str, Any]:
    """The method's valid params, with a new message id (a repeated one answers from the
    store, and the fuzz should reach the agent)."""
    params = copy.deepcopy(BASES[method])
    if "message" in params:
        params["message"]["messageId"] = draw(st.uuids()).hex
    return params


def _wrong_values(field: Any) -> st.SearchStrategy[Any]:
    """JSON values whose type can never be right for `field`."""
    objects = st.dictionaries(st.text(max_size=5), json_scalars, max_size=3)
    arrays = st.lists(json_scalars, max_size=3)
    numbers = st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    if field.is_repeated:
        return st.text(max_size=10) | numbers | st.booleans() | (
            arrays if _is_map(field) else objects)
    kind = field.type
    if kind == field.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name == "google.protobuf.Value":
            return st.nothing()
        if name == "google.protobuf.Timestamp":
            return numbers | st.booleans() | arrays | objects | st.just("yesterday")
        return st.text(max_size=10) | numbers | st.booleans() | arrays
    if kind == field.TYPE_STRING:
        return numbers | st.booleans() | arrays | objects
    if kind == field.TYPE_BYTES:
        return numbers | st.booleans() | arrays | objects | st.sampled_from(
            ["not base64!", "a", "aGk=aGk=", "aG+k_w==", "é"])
    if kind == field.TYPE_BOOL:
        return st.text(max_size=5) | numbers | arrays | objects
    if kind == field.TYPE_ENUM:
        return st.booleans() | arrays | objects | st.sampled_from(
            ["completed", "TASK_STATE_DONE", "ROLE_ROBOT", "", "1.5"]) | st.integers(99, 2**31)
    return (st.booleans() | arrays | objects | st.sampled_from(["ten", "1.5", "", "0x10"])
            | st.floats(0.1, 0.9) | st.integers(2**31, 2**80) | st.integers(-(2**80), -(2**31) - 1))


def _is_map(field: Any) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def envelope(method: str, params: Any, request_id: Any = 1, **extra: Any) -> bytes:
    payload = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params, **extra}
    return json.dumps(payload).encode()


@st.composite
def wrong_type_requests(draw: st.DrawFn) -> tuple[bytes, Any, str]:
    method = draw(st.sampled_from(sorted(BASES)))
    params = _fresh(draw, method)
    slots = [s for s in _slots(params, OPERATIONS[method].request.DESCRIPTOR)
             if not (s.field.type == s.field.TYPE_MESSAGE
                     and s.field.message_type.full_name == "google.protobuf.Value")]
    slot = draw(st.sampled_from(slots))
    _set(params, slot, draw(_wrong_values(slot.field)))
    request_id = draw(request_ids)
    return envelope(method, params, request_id), request_id, slot.path


@st.composite
def hostile_value_requests(draw: st.DrawFn) -> tuple[bytes, Any]:
    """A valid request with one field holding a value of the right JSON type but hostile:
    huge, deep, out of range, or Unicode that is unusual but valid."""
    method = draw(st.sampled_from(sorted(BASES)))
    params = _fresh(draw, method)
    slot = draw(st.sampled_from(_slots(params, OPERATIONS[method].request.DESCRIPTOR)))
    sizes = st.sampled_from([0, 1, MAX_ID_BYTES, MAX_ID_BYTES + 1, 5_000, 200_000])
    depth = draw(st.integers(1, MAX_JSON_DEPTH + 20))
    deep = json.loads("[" * depth + "]" * depth)
    value = draw(st.one_of(
        sizes.map(lambda n: "x" * n),
        sizes.map(lambda n: "\U0001f600" * (n // 4)),
        st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=30),
        sizes.map(lambda n: [{"text": "p"}] * min(n, 2_000)),
        st.just(deep), st.just({"deep": deep}),
        st.sampled_from([2**31 - 1, 2**31, -(2**31) - 1, 10**30, 1e308, -1, 0, 1.0]),
        st.sampled_from(["http://a:99999/", "http://[::1", "https://10.0.0.1/", HOOK]),
    ))
    _set(params, slot, value)
    return envelope(method, params, 7), 7
