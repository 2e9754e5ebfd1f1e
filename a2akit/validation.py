"""Checks every incoming request passes before the core acts on it (spec 3.3.2, 5.7).

Both bindings reach them through the core (`check_request`), on the decoded protobuf
request, so a rule and its error are the same on JSON-RPC and gRPC. What only JSON can get
wrong (a string where an object belongs) is checked by a2akit.protojson while parsing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from a2akit.errors import InvalidParamsError
from a2akit.limits import (
    MAX_HISTORY_LENGTH,
    MAX_ID_BYTES,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_PARTS_PER_MESSAGE,
)
from a2akit.protojson import required_fields
from a2akit.store.cursor import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MIN_PAGE_SIZE

__all__ = ["check_enum_values", "check_history_length", "check_list_request", "check_request"]

_OPAQUE_PREFIX = "google.protobuf."
# Request fields holding an id (of a task, context, message, push config or tenant): the
# store keys on them, so they share one length limit.
_ID_FIELDS = frozenset({"id", "task_id", "context_id", "message_id", "tenant",
                        "reference_task_ids"})
_PART = "lf.a2a.v1.Part"
_PUSH_CONFIG = "lf.a2a.v1.TaskPushNotificationConfig"
_STRUCT = struct_pb2.Struct.DESCRIPTOR.full_name
_VALUE = struct_pb2.Value.DESCRIPTOR.full_name
_NOT_FINITE = "holds a number that is not finite (NaN or an infinity)"
_Violations = list[tuple[str, str]]


def check_request(request: Message) -> None:
    """Raise InvalidParamsError unless `request` has its REQUIRED fields, every part holds
    exactly one content, and it keeps within the limits of a2akit.limits. Every violation is
    listed in the error's BadRequest, named by its field path; missing fields are reported
    first, on their own. One walk over the request finds both."""
    missing: _Violations = []
    violations: _Violations = []
    for message, path in _messages(request, ""):
        missing += _missing(message, path)
        violations += _content(message, path)
    if missing:
        # Applied to requests only: some REQUIRED response fields legitimately hold defaults.
        fields = ", ".join(f for f, _ in missing)
        raise InvalidParamsError(f"Missing required fields: {fields}", violations=missing)
    if violations:
        field, problem = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise InvalidParamsError(f"Invalid parameters: {field} {problem}{more}",
                                 violations=violations)


def _missing(message: Any, path: str) -> _Violations:
    """The REQUIRED fields of this one message that are missing or at their default."""
    return [(path + field.name, "required field is missing")
            for field in required_fields(message.DESCRIPTOR) if not _is_set(message, field)]


def _messages(message: Any, path: str, enums_only: bool = False
              ) -> Iterator[tuple[Any, str]]:
    """The message and every A2A message set inside it, each with its field path; with
    `enums_only`, only messages whose type can hold an enum field somewhere below (a Part
    holds none: a message's parts are not walked)."""
    if enums_only and not _holds_enums(message.DESCRIPTOR):
        return
    inner = _inner(message.DESCRIPTOR)
    yield message, path
    for field, value in message.ListFields():
        kind = inner.get(field.number)
        if kind is None:
            continue
        if kind == _MAP:
            for key, item in value.items():
                yield from _messages(item, f"{path}{field.name}[{key}].", enums_only)
        elif enums_only and not _holds_enums(field.message_type):
            continue
        elif kind == _LIST:
            for i, item in enumerate(value):
                yield from _messages(item, f"{path}{field.name}[{i}].", enums_only)
        else:
            yield from _messages(value, f"{path}{field.name}.", enums_only)


_ONE, _LIST, _MAP = 1, 2, 3


def _inner(descriptor: Any) -> dict[int, int]:
    """The fields of a message type that a walk enters, by number: one message, a list or
    a map of them; worked out once per type (descriptor options are not free to read, and
    every request is walked)."""
    inner = _INNER.get(descriptor.full_name)
    if inner is None:
        inner = {}
        for field in descriptor.fields:
            if _a2a_message(field) is None:
                continue
            if field.message_type.GetOptions().map_entry:
                inner[field.number] = _MAP
            else:
                inner[field.number] = _LIST if field.is_repeated else _ONE
        _INNER[descriptor.full_name] = inner
    return inner


def _a2a_message(field: Any) -> Any:
    """The message type a field holds that a walk enters (a map's value type for a map of
    messages), or None for scalars and well-known types."""
    if (field.type != FieldDescriptor.TYPE_MESSAGE
            or field.message_type.full_name.startswith(_OPAQUE_PREFIX)):
        return None
    target = field.message_type
    if target.GetOptions().map_entry:
        value = target.fields_by_name["value"]
        if value.type != FieldDescriptor.TYPE_MESSAGE:
            return None
        target = value.message_type
    return target


def _holds_enums(descriptor: Any) -> bool:
    """Whether a message type, or any A2A message type below it, has enum fields; computed
    once per type."""
    name = descriptor.full_name
    holds = _HOLDS.get(name)
    if holds is None:
        # While this type is being worked out, a type below that contains it again is told
        # "may hold some": a cycle can only make the walk look further, never skip a check.
        _HOLDS[name] = True
        holds = any(f.type == FieldDescriptor.TYPE_ENUM for f in descriptor.fields) or any(
            _holds_enums(target) for target in map(_a2a_message, descriptor.fields)
            if target is not None)
        _HOLDS[name] = holds
    return holds


_INNER: dict[str, dict[int, int]] = {}
_HOLDS: dict[str, bool] = {}


def _is_set(message: Message, field: Any) -> bool:
    if field.is_repeated:
        return len(getattr(message, field.name)) > 0
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message.HasField(field.name)
    return bool(getattr(message, field.name))


def check_list_request(request: Any) -> int:
    """A ListTasksRequest's page size (the default when unset), checked, and its state
    filter checked; InvalidParamsError naming the field otherwise."""
    page_size: int = request.page_size if request.HasField("page_size") else DEFAULT_PAGE_SIZE
    if not MIN_PAGE_SIZE <= page_size <= MAX_PAGE_SIZE:
        bounds = f"between {MIN_PAGE_SIZE} and {MAX_PAGE_SIZE}"
        raise InvalidParamsError(f"pageSize must be {bounds}",
                                 violations=[("page_size", f"must be {bounds}")])
    if request.status not in request.DESCRIPTOR.fields_by_name["status"].enum_type.values_by_number:
        raise InvalidParamsError("status is not a TaskState",
                                 violations=[("status", "unknown task state")])
    return page_size


def check_history_length(message: Message, field: str = "history_length") -> int | None:
    """The requested history cap, or None when unset. Raises InvalidParamsError when it is
    negative; above MAX_HISTORY_LENGTH it is read as MAX_HISTORY_LENGTH (the spec's
    `historyLength` is "at most this many": a larger ask is served, capped)."""
    if not message.HasField(field):
        return None
    value: int = getattr(message, field)
    problem = _history_problem(value)
    if problem:
        raise InvalidParamsError(f"historyLength {problem}", violations=[(field, problem)])
    return min(value, MAX_HISTORY_LENGTH)


def _history_problem(value: int) -> str:
    return "must be >= 0" if value < 0 else ""


def check_enum_values(message: Message) -> None:
    """Raise InvalidParamsError for an enum number the proto does not define.

    Binary protobuf keeps unknown enum numbers (proto3 enums are open); ProtoJSON input is
    checked before parsing instead (`protojson.from_json`), in the same words, so both
    report an unknown value alike."""
    violations = [
        (path + field.name, f"is not a {field.enum_type.name} value")
        for inner, path in _messages(message, "", enums_only=True)
        for field, value in inner.ListFields()
        if (numbers := _enum_numbers(field)) is not None
        for item in (value if field.is_repeated else (value,))
        if item not in numbers
    ]
    if violations:
        field, problem = violations[0]
        raise InvalidParamsError(f"Invalid parameters: {field} {problem}", violations=violations)


def _enum_numbers(field: Any) -> frozenset[int] | None:
    """The numbers an enum field's type defines (None for other fields), once per field:
    every binary request is checked, and the descriptor builds `values_by_number` anew."""
    if field not in _ENUM_NUMBERS:
        _ENUM_NUMBERS[field] = (frozenset(field.enum_type.values_by_number)
                                if field.type == FieldDescriptor.TYPE_ENUM else None)
    return _ENUM_NUMBERS[field]


_ENUM_NUMBERS: dict[Any, frozenset[int] | None] = {}


# --- content and limits ----------------------------------------------------------------------


def _content(message: Any, path: str) -> Iterator[tuple[str, str]]:
    """What breaks the content rule or a limit in this one message (not in those it holds:
    `_messages` visits them)."""
    name = message.DESCRIPTOR.full_name
    if name == _PART and message.WhichOneof("content") is None:
        yield path.rstrip(".") or "part", "needs exactly one content: text, raw, url or data"
    elif name == _PUSH_CONFIG and "/" in message.id:
        # HTTP+JSON decodes a path before routing it: such a config could never be read or
        # deleted there, so it is never created.
        yield path + "id", 'must not contain "/"'
    for field, value in message.ListFields():
        where = path + field.name
        if field.name in _ID_FIELDS and field.type == FieldDescriptor.TYPE_STRING:
            items = enumerate(value) if field.is_repeated else [(None, value)]
            for i, item in items:
                size = len(item.encode("utf-8"))
                if size > MAX_ID_BYTES:
                    yield (where if i is None else f"{where}[{i}]",
                           f"is {size} bytes long; ids are at most {MAX_ID_BYTES} bytes (UTF-8)")
        elif field.name == "history_length":
            problem = _history_problem(value)
            if problem:
                yield where, problem
        elif field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        elif field.message_type.full_name == _STRUCT:
            size = value.ByteSize()
            if size > MAX_METADATA_BYTES:
                yield where, f"is {size} bytes; metadata is at most {MAX_METADATA_BYTES} bytes"
                continue
            depth, finite = _walk(value, MAX_METADATA_DEPTH)
            if depth > MAX_METADATA_DEPTH:
                yield where, (f"nests deeper than {MAX_METADATA_DEPTH} levels, the metadata "
                              "depth limit")
            elif not finite:
                yield where, _NOT_FINITE
        elif field.message_type.full_name == _VALUE:
            if not _walk(value, None)[1]:  # a data part: no depth limit of its own
                yield where, _NOT_FINITE
        elif field.message_type.full_name == _PART and len(value) > MAX_PARTS_PER_MESSAGE:
            yield where, (f"has {len(value)} parts; at most {MAX_PARTS_PER_MESSAGE} parts per "
                          "message")


def _walk(node: struct_pb2.Struct | struct_pb2.Value, depth_limit: int | None
          ) -> tuple[int, bool]:
    """The nesting depth of a Struct (itself 1) or Value, and whether every number in it is
    finite; without recursion (gRPC admits deep ones), stopping once either is known to fail
    (past `depth_limit`, or at a number that is not finite).

    Binary protobuf and JSON's `1e400` carry NaN and infinities, which ProtoJSON cannot write
    in a Struct: a request holding one is refused before anything is stored."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(node, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if depth_limit is not None and deepest > depth_limit:
            return deepest, True  # far enough to refuse it
        if isinstance(item, struct_pb2.Struct):
            values: Any = item.fields.values()
        elif isinstance(item, struct_pb2.ListValue):
            values = item.values
        else:
            values = (item,)
            level -= 1  # a Value is no level of its own
        for value in values:
            kind = value.WhichOneof("kind")
            if kind == "struct_value":
                stack.append((value.struct_value, level + 1))
            elif kind == "list_value":
                stack.append((value.list_value, level + 1))
            elif kind == "number_value" and not math.isfinite(value.number_value):
                return deepest, False
    return deepest, True
