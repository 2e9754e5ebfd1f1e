"""The one serializer between A2A protobuf messages and their ProtoJSON form.

Parsing ignores unknown fields (spec 5.7) but first checks every known field's JSON value
against its proto type, enums strictly: `ignore_unknown_fields` would otherwise turn an
unknown enum name into 0 (bindings.md 11), and json_format accepts some wrong shapes.
"""

from __future__ import annotations

import binascii
import datetime
import functools
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

from google.api import field_behavior_pb2
from google.protobuf import descriptor_pool, json_format, timestamp_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.internal import type_checkers
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
    the ordinary presence rules, so a listed task without artifacts has no `artifacts` member.

    The output is json_format.MessageToDict's, key order included, but built by the encoders
    below (json_format walks the descriptors on every call and costs several times as much).
    Whatever they do not take on (a NaN in a Struct, an invalid Timestamp, anything
    unexpected) is handed to json_format, which then returns its value or raises its error."""
    descriptor = message.DESCRIPTOR
    try:
        out: dict[str, Any] = _encoder(descriptor)(message)
    except Exception:
        out = json_format.MessageToDict(message)
    required = _REQUIRED_JSON.get(descriptor)
    if required is None:
        required = _REQUIRED_JSON[descriptor] = tuple(
            (field.json_name, field) for field in required_fields(descriptor))
    for name, field in required:
        if name not in out:
            out[name] = _json_default(field)
    return out


def from_json(data: object, cls: type[M]) -> M:
    """Parse a ProtoJSON object into `cls`. Raises InvalidParamsError with a BadRequest
    violation for each field whose JSON value is not of its proto type."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidParamsError("params must be a JSON object",
                                 violations=[("params", "must be a JSON object")])
    violations: list[tuple[str, str]] = []
    _check_message(data, cls.DESCRIPTOR, "", violations)
    if violations:
        field, problem = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise InvalidParamsError(f"Invalid parameters: {field} {problem}{more}",
                                 violations=violations)
    message = cls()
    try:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError, OverflowError) as exc:
        # Not expected after the checks above; still a client error, never an internal one.
        raise InvalidParamsError(f"Invalid parameters: {exc}",
                                 violations=[("params", str(exc))]) from exc
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
_REQUIRED_JSON: dict[Any, tuple[tuple[str, Any], ...]] = {}  # descriptor -> (json name, field)


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


# --- the encoder: one function per message type, built once from its descriptor ---------------
#
# A regular message's encoder loops over ListFields(), as json_format does: it yields the set
# fields only (so presence needs no rule of its own: implicit scalars at their default, unset
# `optional` and message fields, the oneof members not chosen are all absent) in field-number
# order, which is json_format's key order too. Each field maps to its JSON name and a converter
# chosen from its type once, or None where the value already is its JSON form (strings, bools,
# 32-bit integers). Anything the encoders do not mirror exactly raises, and to_json then falls
# back to json_format for the whole message.

_Encode = Callable[[Any], Any]
_Step = tuple[str, _Encode | None, _Encode | None]
_ENCODERS: dict[Any, _Encode] = {}  # message descriptor -> encoder
# int64, uint64 and their fixed and zigzag forms are strings in ProtoJSON (beyond 2**53).
_INT64 = {FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64}
# json_format's range for Timestamp, years 1 to 9999 (well_known_types).
_EPOCH = datetime.date(1970, 1, 1)
_TIMESTAMP_SECONDS = range(-62_135_596_800, 253_402_300_799 + 1)


class _Fallback(Exception):
    """A value json_format has to handle: it returns the result or raises its own error."""


def _encoder(descriptor: Any) -> _Encode:
    encode = _ENCODERS.get(descriptor)
    if encode is None:
        encode = _build(descriptor)
    return encode


def _build(descriptor: Any) -> _Encode:
    name = descriptor.full_name
    if name in _WELL_KNOWN:
        encode = _WELL_KNOWN[name]
    elif name == "google.protobuf.Any" or descriptor.file.name == "google/protobuf/wrappers.proto":
        encode = _via_json_format  # rare in A2A; json_format's form is the reference
    else:
        plan: dict[Any, _Step] = {}
        encode = _regular(plan)
        # Registered before its fields are planned: a message type may contain itself. A field
        # missing from the plan (another thread building it, an extension) means a fallback.
        _ENCODERS[descriptor] = encode
        for field in descriptor.fields:
            plan[field] = _step(field)
        return encode
    _ENCODERS[descriptor] = encode
    return encode


def _regular(plan: dict[Any, _Step]) -> _Encode:
    def encode(message: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field, value in message.ListFields():
            name, convert, each = plan[field]  # KeyError (an extension, say): a fallback
            if each is not None:
                out[name] = [each(item) for item in value]
            elif convert is None:
                out[name] = value
            else:
                out[name] = convert(value)
        return out
    return encode


def _step(field: Any) -> _Step:
    """How a field's value becomes JSON: (JSON name, converter or None, converter of each
    element of a repeated field whose elements need one, or None). The loop above inlines
    the element loop, the hot case (parts, history, artifacts)."""
    if _is_map(field):
        return field.json_name, _map_encoder(field), None
    convert = _single_encoder(field)
    if not field.is_repeated:
        return field.json_name, convert, None
    if convert is None:
        return field.json_name, list, None
    return field.json_name, None, convert


def _map_encoder(field: Any) -> _Encode:
    convert = _single_encoder(field.message_type.fields_by_name["value"])
    key_type = field.message_type.fields_by_name["key"].type
    if key_type == FieldDescriptor.TYPE_STRING:
        if convert is None:
            return dict
        return lambda value: {key: convert(value[key]) for key in value}
    to_key: _Encode = _bool_key if key_type == FieldDescriptor.TYPE_BOOL else str
    if convert is None:
        return lambda value: {to_key(key): value[key] for key in value}
    return lambda value: {to_key(key): convert(value[key]) for key in value}


def _single_encoder(field: Any) -> _Encode | None:
    """The converter for one value of `field`, or None where the value is its JSON form."""
    cpp_type = field.cpp_type
    if cpp_type == FieldDescriptor.CPPTYPE_MESSAGE:
        return _encoder(field.message_type)
    if cpp_type == FieldDescriptor.CPPTYPE_ENUM:
        return _enum_encoder(field.enum_type)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return _bytes
    if cpp_type in _INT64:
        return str
    if cpp_type == FieldDescriptor.CPPTYPE_DOUBLE:
        return _double
    if cpp_type == FieldDescriptor.CPPTYPE_FLOAT:
        return _float
    return None  # string, bool, 32-bit integers


def _enum_encoder(enum_type: Any) -> _Encode:
    if enum_type.full_name == "google.protobuf.NullValue":
        return lambda value: None
    names = {value.number: _enum_name(value) for value in enum_type.values}
    if enum_type.is_closed:
        return names.__getitem__  # an unknown number: json_format raises its error
    return lambda number: names.get(number, number)  # an unknown number stays a number


def _enum_name(value: Any) -> str:
    """The value's name, or the JSON name given by the `pb.enumvalue.json` option if that
    extension is loaded (json_format's rule; no A2A enum uses it)."""
    try:
        option = descriptor_pool.Default().FindExtensionByName("pb.enumvalue.json")
    except KeyError:
        return str(value.name)
    options = value.GetOptions()
    return str(options.Extensions[option].string if options.HasExtension(option) else value.name)


def _bool_key(key: bool) -> str:
    return "true" if key else "false"


def _bytes(value: bytes) -> str:
    return binascii.b2a_base64(value, newline=False).decode("ascii")  # standard, padded


def _double(value: float) -> float | str:
    if value - value == 0.0:  # finite (inf - inf and NaN - NaN are NaN)
        return value
    return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"


def _float(value: float) -> float | str:
    if value - value == 0.0:
        return float(type_checkers.ToShortestFloat(value))
    return _double(value)


def _via_json_format(message: Any) -> Any:
    return json_format.MessageToDict(message)


# The well-known types whose JSON form is not an object of their fields (json_format's
# _WKTJSONMETHODS, Any aside). Values are plain Python JSON: a Struct's numbers stay floats.

def _struct(message: Any) -> dict[str, Any]:
    fields = message.fields
    return {key: _value(fields[key]) for key in fields}  # faster than items() on upb maps


def _list_value(message: Any) -> list[Any]:
    return [_value(item) for item in message.values]


def _value(message: Any) -> Any:
    kind = message.WhichOneof("kind")
    if kind == "string_value":
        return message.string_value
    if kind == "number_value":
        number = message.number_value
        if number - number != 0.0:
            raise _Fallback  # NaN or infinite: json_format raises, as they would parse as text
        return number
    if kind == "bool_value":
        return message.bool_value
    if kind == "struct_value":
        return _struct(message.struct_value)
    if kind == "list_value":
        return _list_value(message.list_value)
    return None  # null_value, or no kind set


def _timestamp(message: Any) -> str:
    """RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, as well_known_types' ToJsonString
    writes it (which builds a datetime per call; here only the date is, and cached)."""
    seconds, nanos = message.seconds, message.nanos
    if seconds not in _TIMESTAMP_SECONDS or not 0 <= nanos < 1_000_000_000:
        raise _Fallback  # json_format raises its ValueError
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3_600)
    minutes, seconds = divmod(seconds, 60)
    text = f"{_date(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}"
    if nanos == 0:
        return text + "Z"
    if nanos % 1_000_000 == 0:
        return f"{text}.{nanos // 1_000_000:03d}Z"
    if nanos % 1_000 == 0:
        return f"{text}.{nanos // 1_000:06d}Z"
    return f"{text}.{nanos:09d}Z"


@functools.lru_cache(maxsize=512)
def _date(days: int) -> str:
    """The date `days` after 1970-01-01, as YYYY-MM-DD (four-digit years, as isoformat)."""
    return (_EPOCH + datetime.timedelta(days=days)).isoformat()


def _to_json_string(message: Any) -> str:
    return str(message.ToJsonString())  # Duration and FieldMask: json_format calls the same


_WELL_KNOWN: dict[str, _Encode] = {
    "google.protobuf.Struct": _struct,
    "google.protobuf.Value": _value,
    "google.protobuf.ListValue": _list_value,
    "google.protobuf.Timestamp": _timestamp,
    "google.protobuf.Duration": _to_json_string,
    "google.protobuf.FieldMask": _to_json_string,
}


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
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
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
            timestamp_pb2.Timestamp().FromJsonString(value)
        except ValueError:
            return "is not an RFC 3339 timestamp"
        return ""
    if not isinstance(value, dict):
        return "must be a JSON object"
    if full_name == "google.protobuf.Struct":
        return _json_value_problem(value)
    return ""


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
