"""What the JSON of each field may be, by its proto type: the checks every parse starts
from, and the facts about fields that encoding and decoding share."""

from __future__ import annotations

import math
import re
from typing import Any

from google.api import field_behavior_pb2
from google.protobuf import timestamp_pb2
from google.protobuf.descriptor import FieldDescriptor

# Well-known types whose JSON form is not a plain object of their fields.
_OPAQUE = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
           "google.protobuf.Timestamp", "google.protobuf.Any", "google.protobuf.Empty"}

class _Fallback(Exception):
    """A value the encoders or decoders leave to the reference path (json_format, or the checks
    and json_format), which returns the result or raises its own error."""


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



def _is_map(field: Any) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


# --- the JSON shape of each field, as its proto type says ---------------------------------------
#
# json_format alone is lenient where it matters: it iterates a string or an array given for a
# message field as if it were an object (with unknown fields ignored, `"configuration": "x"`
# parses as an empty configuration), decodes base64 without validation, and turns an unknown
# enum name into 0. So every value is checked against its field first, and each problem is
# reported as a violation naming the field (proto names, as the core's checks use).

_Violations = list[tuple[str, str]]
_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
# ProtoJSON bytes: standard or URL-safe base64, padded or not (not both alphabets at once).
# What an integer written as a string may be: the number texts json_format reads ("007",
# "+1", "2.0", "1e3"), in ASCII digits only.
_ASCII_NUMBER = re.compile(r"[+-]?(?=\.?[0-9])[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?", re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
# RFC 3339 5.6 time-offset: Z, or +HH:MM / -HH:MM within a day. json_format reads any digits
# there ("+25:00", "+0:0", "-23:99") and shifts the time by them.
_TIME_OFFSET = re.compile(r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\Z")
_NOT_UNICODE = "is not valid Unicode text (lone UTF-16 surrogate)"


def _check_message(data: dict[str, Any], descriptor: Any, path: str,
                   violations: _Violations) -> None:
    seen: dict[str, str] = {}
    oneofs: dict[str, str] = {}
    for key, value in data.items():
        field = descriptor.fields_by_camelcase_name.get(key) or descriptor.fields_by_name.get(key)
        if field is None:
            continue  # unknown fields are ignored (spec 5.7)
        where = path + field.name
        if field.name in seen:
            violations.append((where, f"is given twice (as {seen[field.name]} and {key})"))
            continue
        seen[field.name] = key
        if value is None:
            continue  # null means "not set"
        oneof = field.containing_oneof
        if oneof is not None and not _synthetic(oneof, field):
            if oneof.name in oneofs:
                names = ", ".join(f.name for f in oneof.fields)
                violations.append((path + oneof.name, f"takes only one of {names}"))
                continue
            oneofs[oneof.name] = field.name
        _check_field(field, value, where, violations)


def _synthetic(oneof: Any, field: Any) -> bool:
    """The oneof protoc makes for a proto3 `optional` field: presence, not a choice."""
    return len(oneof.fields) == 1 and oneof.name == "_" + field.name


def _check_field(field: Any, value: object, where: str, violations: _Violations) -> None:
    if _is_map(field):
        if not isinstance(value, dict):
            violations.append((where, "must be a JSON object"))
            return
        value_field = field.message_type.fields_by_name["value"]
        for key, item in value.items():
            if _SURROGATE.search(key):
                violations.append((where, "has a key that " + _NOT_UNICODE))
            elif item is None:
                violations.append((f"{where}[{key}]", "must not be null"))
            else:
                _check_single(value_field, item, f"{where}[{key}]", violations)
    elif field.is_repeated:
        if not isinstance(value, list):
            violations.append((where, "must be a JSON array"))
            return
        for i, item in enumerate(value):
            if item is None:
                violations.append((f"{where}[{i}]", "must not be null"))
            else:
                _check_single(field, item, f"{where}[{i}]", violations)
    else:
        _check_single(field, value, where, violations)


def _check_single(field: Any, value: object, where: str, violations: _Violations) -> None:
    problem = _problem(field, value)
    if problem:
        violations.append((where, problem))
    elif field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name not in _OPAQUE:
        assert isinstance(value, dict)
        _check_message(value, field.message_type, where + ".", violations)


def _problem(field: Any, value: object) -> str:
    """What is wrong with `value` (not null) for one element of `field`, or ""."""
    kind = field.type
    if kind == FieldDescriptor.TYPE_MESSAGE:
        return _message_problem(field.message_type.full_name, value)
    if kind == FieldDescriptor.TYPE_ENUM:
        return "" if _valid_enum(field, value) else f"is not a {field.enum_type.name} value"
    if kind == FieldDescriptor.TYPE_STRING:
        if not isinstance(value, str):
            return "must be a string"
        return _NOT_UNICODE if _SURROGATE.search(value) else ""
    if kind == FieldDescriptor.TYPE_BYTES:
        return "" if isinstance(value, str) and _is_base64(value) else "must be base64 text"
    if kind == FieldDescriptor.TYPE_BOOL:
        return "" if isinstance(value, bool) else "must be true or false"
    if kind in _INT_RANGES:
        return _int_problem(value, *_INT_RANGES[kind])
    # float and double: numbers, or the ProtoJSON strings "NaN", "Infinity", "-Infinity"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return "must be a number"
    return ""


def _message_problem(full_name: str, value: object) -> str:
    if full_name == "google.protobuf.Value":
        return _json_value_problem(value)
    if full_name == "google.protobuf.ListValue":
        return "must be a JSON array" if not isinstance(value, list) else \
            _json_value_problem(value)
    if full_name == "google.protobuf.Timestamp":
        if not isinstance(value, str):
            return "must be an RFC 3339 timestamp string"
        try:
            _parse_timestamp(value, timestamp_pb2.Timestamp())
        except ValueError:
            return "is not an RFC 3339 timestamp"
        return ""
    if not isinstance(value, dict):
        return "must be a JSON object"
    if full_name == "google.protobuf.Struct":
        return _json_value_problem(value)
    return ""


def _parse_timestamp(text: str, message: Any) -> None:
    """Set the Timestamp `message` from RFC 3339 text; ValueError when the text is not one."""
    if _TIME_OFFSET.search(text) is None:
        raise ValueError("not an RFC 3339 time offset")
    message.FromJsonString(text)


def _json_value_problem(value: object) -> str:
    """Any JSON is fine in a Struct or Value, but its numbers must fit a double and its text
    must be Unicode. Walked without recursion: the binding bounds depth, a caller may not."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return "holds text that " + _NOT_UNICODE
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int | float):
            try:
                finite = math.isfinite(float(item))
            except OverflowError:
                finite = False
            if not finite:
                return "holds a number out of the range of a double"
        elif isinstance(item, dict):
            for key in item:
                if _SURROGATE.search(key):
                    return "has a key that " + _NOT_UNICODE
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return ""


def _int_problem(value: object, low: int, high: int) -> str:
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):  # ProtoJSON also allows integers as strings
        if not _ASCII_NUMBER.fullmatch(value):
            # int() and float() also take other scripts' digits, spaces and underscores:
            # ASCII digits only, as the version check reads them.
            return "must be an integer"
        try:
            number = int(value)
        except ValueError:
            try:
                parsed = float(value)
            except ValueError:
                parsed = math.nan
            number = int(parsed) if parsed.is_integer() else None
    if number is None:
        return "must be an integer"
    if not low <= number <= high:
        return f"must be between {low} and {high}"
    return ""


def _is_base64(text: str) -> bool:
    if not _BASE64.fullmatch(text):
        return False
    data = text.rstrip("=")
    if len(data) % 4 == 1:
        return False  # no base64 text ends with a single character
    padding = len(text) - len(data)
    return padding == 0 or len(text) % 4 == 0


def _valid_enum(field: Any, value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return value in field.enum_type.values_by_name
    if isinstance(value, int):
        return value in field.enum_type.values_by_number
    return False
