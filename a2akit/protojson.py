"""The one serializer between A2A protobuf messages and their ProtoJSON form.

Parsing ignores unknown fields (spec 5.7) but checks enum values strictly first, because
`ignore_unknown_fields` would otherwise turn an unknown enum name into 0 (bindings.md 11).
"""

from __future__ import annotations

from typing import Any, TypeVar

from google.api import field_behavior_pb2
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from a2akit.errors import InvalidParamsError

__all__ = ["from_json", "required_fields", "to_json"]

M = TypeVar("M", bound=Message)

# Well-known types whose JSON form is not a plain object of their fields.
_OPAQUE = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
           "google.protobuf.Timestamp", "google.protobuf.Any", "google.protobuf.Empty"}


def to_json(message: Message) -> dict[str, Any]:
    """ProtoJSON of a response message. REQUIRED top-level fields are always present, even at
    their default (ListTasksResponse's `nextPageToken: ""`, `totalSize: 0`); nested ones follow
    the ordinary presence rules, so a listed task without artifacts has no `artifacts` member."""
    out: dict[str, Any] = json_format.MessageToDict(message)
    for field in required_fields(message.DESCRIPTOR):
        if field.json_name not in out:
            out[field.json_name] = _json_default(field)
    return out


def from_json(data: object, cls: type[M]) -> M:
    """Parse a ProtoJSON object into `cls`. Raises InvalidParamsError naming the bad field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidParamsError("params must be a JSON object")
    _check_enums(data, cls.DESCRIPTOR, "")
    message = cls()
    try:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise InvalidParamsError(f"Invalid parameters: {exc}") from exc
    return message


def required_fields(descriptor: Any) -> tuple[Any, ...]:
    """Fields annotated `(google.api.field_behavior) = REQUIRED`, in declaration order."""
    # Looked up by `in`, not by truth: most messages have none, and an empty tuple is cached.
    name = descriptor.full_name
    if name not in _REQUIRED_CACHE:
        _REQUIRED_CACHE[name] = tuple(
            f for f in descriptor.fields
            if field_behavior_pb2.REQUIRED
            in f.GetOptions().Extensions[field_behavior_pb2.field_behavior])
    return _REQUIRED_CACHE[name]


_REQUIRED_CACHE: dict[str, tuple[Any, ...]] = {}


def _json_default(field: Any) -> Any:
    if field.is_repeated:
        return {} if _is_map(field) else []
    if field.type == FieldDescriptor.TYPE_STRING:
        return ""
    if field.type == FieldDescriptor.TYPE_BOOL:
        return False
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return {}
    return 0


def _is_map(field: Any) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _check_enums(data: dict[str, Any], descriptor: Any, path: str) -> None:
    for key, value in data.items():
        field = descriptor.fields_by_camelcase_name.get(key) or descriptor.fields_by_name.get(key)
        if field is None or value is None:
            continue
        where = f"{path}{field.json_name}"
        if field.type == FieldDescriptor.TYPE_ENUM:
            for item in value if isinstance(value, list) else [value]:
                if not _valid_enum(field, item):
                    raise InvalidParamsError(
                        f"Invalid value {item!r} for {where}",
                        violations=[(where, f"not a {field.enum_type.name} value")],
                    )
        elif (field.type == FieldDescriptor.TYPE_MESSAGE
              and field.message_type.full_name not in _OPAQUE):
            if _is_map(field):
                value_field = field.message_type.fields_by_name["value"]
                if value_field.type == FieldDescriptor.TYPE_MESSAGE and isinstance(value, dict):
                    for k, v in value.items():
                        if isinstance(v, dict):
                            _check_enums(v, value_field.message_type, f"{where}.{k}.")
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, dict):
                        _check_enums(item, field.message_type, f"{where}[{i}].")
            elif isinstance(value, dict):
                _check_enums(value, field.message_type, f"{where}.")


def _valid_enum(field: Any, value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return value in field.enum_type.values_by_name
    if isinstance(value, int):
        return value in field.enum_type.values_by_number
    return False
