"""Checks every incoming request passes before the core acts on it (spec 3.3.2, 5.7)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from a2akit.errors import InvalidParamsError
from a2akit.protojson import required_fields

__all__ = ["check_enum_values", "check_history_length", "check_required"]

_OPAQUE_PREFIX = "google.protobuf."


def check_required(request: Message) -> None:
    """Raise InvalidParamsError listing every REQUIRED field that is missing or default.

    Applied to requests only: some REQUIRED response fields legitimately hold defaults."""
    violations = [
        (path + field.name, "required field is missing")
        for message, path in _messages(request, "", _REQUIRED)
        for field in required_fields(message.DESCRIPTOR)
        if not _is_set(message, field)
    ]
    if violations:
        fields = ", ".join(f for f, _ in violations)
        raise InvalidParamsError(f"Missing required fields: {fields}", violations=violations)


# What a walk looks for: index into `_holds`.
_REQUIRED, _ENUMS = 0, 1


def _messages(message: Any, path: str, kind: int) -> Iterator[tuple[Any, str]]:
    """The message and every A2A message set inside it, each with its field path; only
    messages whose type can hold a field of `kind` somewhere below (a Part holds none:
    a message's parts are not walked)."""
    if not _holds(message.DESCRIPTOR)[kind]:
        return
    yield message, path
    for field, value in message.ListFields():
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if field.message_type.full_name.startswith(_OPAQUE_PREFIX):
            continue
        if field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                for key, item in value.items():
                    yield from _messages(item, f"{path}{field.name}[{key}].", kind)
        elif not _holds(field.message_type)[kind]:
            continue
        elif field.is_repeated:
            for i, item in enumerate(value):
                yield from _messages(item, f"{path}{field.name}[{i}].", kind)
        else:
            yield from _messages(value, f"{path}{field.name}.", kind)


def _holds(descriptor: Any) -> tuple[bool, bool]:
    """Whether a message type, or any A2A message type below it, has REQUIRED fields and
    enum fields; computed once per type."""
    name = descriptor.full_name
    holds = _HOLDS.get(name)
    if holds is None:
        # While this type is being worked out, a type below that contains it again is told
        # "may hold both": a cycle can only make the walk look further, never skip a check.
        _HOLDS[name] = (True, True)
        required = bool(required_fields(descriptor))
        enums = any(f.type == FieldDescriptor.TYPE_ENUM for f in descriptor.fields)
        for field in descriptor.fields:
            if (field.type == FieldDescriptor.TYPE_MESSAGE
                    and not field.message_type.full_name.startswith(_OPAQUE_PREFIX)):
                target = field.message_type
                if target.GetOptions().map_entry:
                    value = target.fields_by_name["value"]
                    if value.type != FieldDescriptor.TYPE_MESSAGE:
                        continue
                    target = value.message_type
                below = _holds(target)
                required, enums = required or below[0], enums or below[1]
        holds = _HOLDS[name] = (required, enums)
    return holds


_HOLDS: dict[str, tuple[bool, bool]] = {}


def _is_set(message: Message, field: Any) -> bool:
    if field.is_repeated:
        return len(getattr(message, field.name)) > 0
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message.HasField(field.name)
    return bool(getattr(message, field.name))


def check_history_length(message: Message, field: str = "history_length") -> int | None:
    """The requested history cap, or None when unset. Negative values are invalid."""
    if not message.HasField(field):
        return None
    value: int = getattr(message, field)
    if value < 0:
        raise InvalidParamsError(
            "historyLength must not be negative", violations=[("history_length", "must be >= 0")]
        )
    return value


def check_enum_values(message: Message) -> None:
    """Raise InvalidParamsError for an enum number the proto does not define.

    Binary protobuf keeps unknown enum numbers (proto3 enums are open); ProtoJSON input is
    checked before parsing instead (`protojson.from_json`)."""
    violations = [
        (path + field.name, f"not a {field.enum_type.name} value")
        for inner, path in _messages(message, "", _ENUMS)
        for field, value in inner.ListFields()
        if field.type == FieldDescriptor.TYPE_ENUM
        for item in (value if field.is_repeated else (value,))
        if item not in field.enum_type.values_by_number
    ]
    if violations:
        raise InvalidParamsError(f"Invalid value for {violations[0][0]}", violations=violations)
