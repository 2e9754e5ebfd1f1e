"""Checks every incoming request passes before the core acts on it (spec 3.3.2, 5.7)."""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from a2akit.errors import InvalidParamsError
from a2akit.protojson import required_fields

__all__ = ["check_history_length", "check_required"]

_OPAQUE_PREFIX = "google.protobuf."


def check_required(request: Message) -> None:
    """Raise InvalidParamsError listing every REQUIRED field that is missing or default.

    Applied to requests only: some REQUIRED response fields legitimately hold defaults."""
    violations: list[tuple[str, str]] = []
    _walk(request, "", violations)
    if violations:
        fields = ", ".join(f for f, _ in violations)
        raise InvalidParamsError(f"Missing required fields: {fields}", violations=violations)


def _walk(message: Any, path: str, violations: list[tuple[str, str]]) -> None:
    for field in required_fields(message.DESCRIPTOR):
        if not _is_set(message, field):
            violations.append((path + field.name, "required field is missing"))
    for field, value in message.ListFields():
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if field.message_type.full_name.startswith(_OPAQUE_PREFIX):
            continue
        if field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            if value_field.type == FieldDescriptor.TYPE_MESSAGE:
                for key, item in value.items():
                    _walk(item, f"{path}{field.name}[{key}].", violations)
        elif field.is_repeated:
            for i, item in enumerate(value):
                _walk(item, f"{path}{field.name}[{i}].", violations)
        else:
            _walk(value, f"{path}{field.name}.", violations)


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
