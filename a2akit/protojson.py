"""The one serializer between A2A protobuf messages and their ProtoJSON form.

Parsing ignores unknown fields (spec 5.7) but first checks every known field's JSON value
against its proto type, enums strictly: `ignore_unknown_fields` would otherwise turn an
unknown enum name into 0 (bindings.md 11), and json_format accepts some wrong shapes.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
import math
import re
import sys
import threading
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
    violation for each field whose JSON value is not of its proto type.

    The decoders below check and set every field in one walk. Whatever they do not take on (any
    invalid value, so every error; the rare shapes listed with the decoders) goes to the reference
    parse, `_checked_parse`, which then returns its message or raises its error."""
    if data is None:
        data = {}
    descriptor = cls.DESCRIPTOR
    if type(data) is dict and descriptor.full_name not in _NOT_REGULAR:
        message = cls()
        try:
            _decoder(descriptor)(data, message, 1)
        except Exception:
            pass  # a fallback: the reference parse says what json_format makes of the input
        else:
            return message
    return _checked_parse(data, cls)


def _checked_parse(data: object, cls: type[M]) -> M:
    """The reference parse, from_json as it was before the decoders: every field's JSON checked
    against its proto type, then json_format. The decoders' results and errors are this
    function's, by definition."""
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
    """A value the encoders or decoders leave to the reference path (json_format, or the checks
    and json_format), which returns the result or raises its own error."""


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


# --- the decoder: one function per message type, built once from its descriptor ---------------
#
# A decoder takes the JSON value of one message (and its depth) and writes it straight into a
# message, as json_format.ParseDict would after the checks above: scalars by setattr, repeated
# fields by extend or add(), maps by key, submessages through their parent's field. It accepts
# only what those checks accept and json_format then parses without error, and raises (mostly
# _Fallback) on anything else, leaving the answer to the reference: so each error and its
# wording stay in the checks alone, and the decoders only ever need to say "fine" or "not mine".
#
# Left to the reference on purpose: any invalid or doubtful value (an integer as "1e0" or
# " 1", a float as "1.5", a map key json_format would convert), dict or str subclasses,
# keys in json_format's "[extension]" form, Duration, FieldMask and wrapper fields (json_format
# reads them from strings the checks refuse), messages nested deeper than _FAST_DEPTH, and
# message types whose JSON names differ from their camelCase names or clash with a oneof name.
# The opaque types (_OPAQUE) are checked as above (_message_problem), then set by json_format's
# own steps (Struct, Value, ListValue, Timestamp) or by json_format itself (Any, Empty).

_Decode = Callable[[Any, Any, int], None]  # (JSON value, message to fill, depth of the message)
_Setter = Callable[[Any, Any, int], None]  # (parent message, JSON value not null, parent depth)
_Convert = Callable[[Any], Any]  # JSON value -> the field's Python value, or raises
# (the JSON name given too for the same field, the oneof it takes part in, setter, null action)
_Plan = tuple[str | None, str | None, _Setter, Callable[[Any], None]]
_DECODERS: dict[Any, _Decode] = {}  # message descriptor -> decoder
_BUILDING: dict[Any, _Decode] = {}  # decoders being built by the thread holding the lock
_BUILD_LOCK = threading.RLock()
# Types json_format does not parse as an object of their fields (its _WKTJSONMETHODS), and
# Empty (opaque above). The wrappers are also such types; they are recognised by their file.
_NOT_REGULAR = _OPAQUE | {"google.protobuf.Duration", "google.protobuf.FieldMask"}
# json_format.ParseDict's default max_recursion_depth: it counts every message (Struct and
# Value included) from the top; an opaque value parsed on its own is given what remains.
_PARSE_DEPTH = 100
# A2A requests nest six deep at most; deeper input is left to the reference, which then
# applies json_format's depth limit (and uses more stack than the decoders do).
_FAST_DEPTH = 32
_DECIMAL = re.compile(r"-?[0-9]+")  # an integer given as a string, as json_format takes it
_FLOAT32_MAX = 3.4028234663852886e38  # json_format's limit for a float field (type_checkers)
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_JSON_BOOL_KEYS = {"true": True, "false": False}


def _decoder(descriptor: Any) -> _Decode:
    decode = _DECODERS.get(descriptor)
    if decode is None:
        # Built under a lock and published only complete: another thread given a decoder
        # whose plans are still being made would take every field for an unknown one.
        with _BUILD_LOCK:
            decode = _DECODERS.get(descriptor) or _BUILDING.get(descriptor)
            if decode is None:
                outermost = not _BUILDING
                try:
                    decode = _build_decoder(descriptor)
                    if outermost:
                        _DECODERS.update(_BUILDING)
                finally:
                    if outermost:
                        _BUILDING.clear()
    return decode


def _build_decoder(descriptor: Any) -> _Decode:
    name = descriptor.full_name
    if name in _OPAQUE:
        decode = _opaque_decoder(name)
    elif name in _NOT_REGULAR or descriptor.file.name == "google/protobuf/wrappers.proto" \
            or not _names_agree(descriptor):
        decode = _always_fallback
    else:
        plans: dict[str, _Plan] = {}
        decode = _regular_decoder(plans)
        # Registered before its fields are planned: a message type may contain itself.
        _BUILDING[descriptor] = decode
        plans.update(_plans(descriptor))
    _BUILDING[descriptor] = decode
    return decode


def _names_agree(descriptor: Any) -> bool:
    """The checks find a field by camelCase or proto name, json_format by JSON or proto name
    and it also counts oneof names as given keys: the same only if these names agree."""
    keys = {key for field in descriptor.fields for key in (field.name, field.json_name)}
    return (all(field.json_name == field.camelcase_name for field in descriptor.fields)
            and not keys & {oneof.name for oneof in descriptor.oneofs})


def _always_fallback(value: Any, message: Any, depth: int) -> None:
    raise _Fallback


def _regular_decoder(plans: dict[str, _Plan]) -> _Decode:
    def decode(value: Any, message: Any, depth: int) -> None:
        if type(value) is not dict or depth > _FAST_DEPTH:
            raise _Fallback
        chosen: set[str] | None = None  # the oneofs a member was given for
        for key, item in value.items():
            plan = plans.get(key)
            if plan is None:
                if key[:1] == "[" or not key.isascii():
                    # json_format's extension syntax (an error where there are none); text
                    # the descriptor lookups of the checks may not take (a lone surrogate)
                    raise _Fallback
                continue  # unknown fields are ignored (spec 5.7)
            alias, oneof, set_value, set_null = plan
            if alias is not None and alias in value:
                raise _Fallback  # the same field twice, by JSON and by proto name
            if item is None:
                set_null(message)
                continue
            if oneof is not None:
                if chosen is None:
                    chosen = {oneof}
                elif oneof in chosen:
                    raise _Fallback  # two members of one oneof
                else:
                    chosen.add(oneof)
            set_value(message, item, depth)
    return decode


def _plans(descriptor: Any) -> dict[str, _Plan]:
    """The plan of each field under each of its names (JSON, and proto where it differs)."""
    plans: dict[str, _Plan] = {}
    for field in descriptor.fields:
        oneof = field.containing_oneof
        oneof_name = None if oneof is None or _synthetic(oneof, field) else oneof.name
        set_value, set_null = _setter(field), _null_setter(field)
        if field.json_name == field.name:
            plans[field.name] = (None, oneof_name, set_value, set_null)
        else:
            plans[field.json_name] = (field.name, oneof_name, set_value, set_null)
            plans[field.name] = (field.json_name, oneof_name, set_value, set_null)
    return plans


def _null_setter(field: Any) -> Callable[[Any], None]:
    """What json_format does for a null: a Value becomes JSON null, a NullValue enum 0 (the
    checks take both as "not set"), anything else is cleared (as a oneof member, only if it
    is the member set)."""
    name = field.name
    if field.message_type is not None and field.message_type.full_name == \
            "google.protobuf.Value" and not field.is_repeated:
        def set_null(message: Any) -> None:
            getattr(message, name).null_value = 0
    elif field.enum_type is not None and field.enum_type.full_name == \
            "google.protobuf.NullValue" and not field.is_repeated:
        def set_null(message: Any) -> None:
            setattr(message, name, 0)
    else:
        def set_null(message: Any) -> None:
            message.ClearField(name)
    return set_null


def _setter(field: Any) -> _Setter:
    name = field.name
    if _is_map(field):
        return _map_setter(field)
    if field.message_type is not None:
        return _message_setter(name, _decoder(field.message_type), field.is_repeated)
    convert = _scalar_decoder(field)
    if field.is_repeated:
        def extend(message: Any, value: Any, depth: int) -> None:
            if type(value) is not list:
                raise _Fallback
            getattr(message, name).extend([convert(item) for item in value])
        return extend

    def set_scalar(message: Any, value: Any, depth: int) -> None:
        setattr(message, name, convert(value))
    return set_scalar


def _message_setter(name: str, decode: _Decode, repeated: bool) -> _Setter:
    if repeated:
        def add_each(message: Any, value: Any, depth: int) -> None:
            if type(value) is not list:
                raise _Fallback
            add = getattr(message, name).add
            for item in value:
                if item is None:
                    raise _Fallback  # the checks refuse null elements, a Value's too
                decode(item, add(), depth + 1)
        return add_each

    def set_message(message: Any, value: Any, depth: int) -> None:
        sub = getattr(message, name)
        sub.SetInParent()  # present even if given as {}
        decode(value, sub, depth + 1)
    return set_message


def _map_setter(field: Any) -> _Setter:
    name = field.name
    to_key = _map_key(field.message_type.fields_by_name["key"])
    value_field = field.message_type.fields_by_name["value"]
    if value_field.message_type is not None:
        decode = _decoder(value_field.message_type)

        def set_messages(message: Any, value: Any, depth: int) -> None:
            if type(value) is not dict:
                raise _Fallback
            container = getattr(message, name)
            for key, item in value.items():
                if item is None:
                    raise _Fallback
                decode(item, container[to_key(key)], depth + 1)
        return set_messages
    convert = _scalar_decoder(value_field)

    def set_scalars(message: Any, value: Any, depth: int) -> None:
        if type(value) is not dict:
            raise _Fallback
        container = getattr(message, name)
        for key, item in value.items():
            container[to_key(key)] = convert(item)
    return set_scalars


def _map_key(key_field: Any) -> _Convert:
    """JSON object keys are text; json_format converts them to the key type."""
    if key_field.type == FieldDescriptor.TYPE_STRING:
        return _text
    if key_field.type == FieldDescriptor.TYPE_BOOL:
        return _JSON_BOOL_KEYS.__getitem__
    low, high = _INT_RANGES[key_field.type]

    def integer_key(key: Any) -> int:
        if type(key) is not str or not _DECIMAL.fullmatch(key):
            raise _Fallback
        number = int(key)
        if not low <= number <= high:
            raise _Fallback
        return number
    return integer_key


def _opaque_decoder(full_name: str) -> _Decode:
    """Checked as the checks do (`_message_problem`), then set as json_format sets it: by the
    functions below for JSON values and timestamps, by json_format itself for Any and Empty.
    json_format counts the depth from the top of the request: a value parsed on its own may
    go only as deep as remains."""
    if full_name == "google.protobuf.Timestamp":
        return _fill_timestamp  # its check is the parse itself: done once, not twice
    fill = _JSON_VALUE_FILLS.get(full_name)

    def decode(value: Any, message: Any, depth: int) -> None:
        if _message_problem(full_name, value):
            raise _Fallback
        if fill is not None:
            fill(value, message, depth)
        else:
            json_format.ParseDict(value, message, ignore_unknown_fields=True,
                                  max_recursion_depth=_PARSE_DEPTH + 1 - depth)
    return decode


def _fill_timestamp(value: Any, message: Any, depth: int) -> None:
    """The checks accept text that FromJsonString parses; json_format then calls the same."""
    if type(value) is not str:
        raise _Fallback
    message.FromJsonString(value)  # ValueError where the checks find a problem: a fallback


# JSON in a Struct, Value or ListValue, already checked by _json_value_problem: json_format's
# steps (_ConvertStructMessage, _ConvertValueMessage, _ConvertListOrTupleValueMessage), the
# same calls in the same order, without a parser object and a path string per value.

def _fill_struct(value: Any, message: Any, depth: int) -> None:
    if type(value) is not dict or depth > _FAST_DEPTH:
        raise _Fallback
    message.Clear()  # as json_format: marks the Struct set even if it stays empty
    fields = message.fields
    for key, item in value.items():
        _fill_value(item, fields[key], depth + 1)


def _fill_list(value: Any, message: Any, depth: int) -> None:
    if type(value) is not list or depth > _FAST_DEPTH:
        raise _Fallback
    message.ClearField("values")
    add = message.values.add
    for item in value:
        _fill_value(item, add(), depth + 1)


def _fill_value(value: Any, message: Any, depth: int) -> None:
    kind = type(value)
    if kind is str:
        message.string_value = value
    elif kind is bool:
        message.bool_value = value
    elif kind is int or kind is float:
        message.number_value = value
    elif value is None:
        message.null_value = 0
    elif kind is dict:
        _fill_struct(value, message.struct_value, depth + 1)
    elif kind is list:
        _fill_list(value, message.list_value, depth + 1)
    else:
        raise _Fallback  # a tuple, a subclass: json_format's view of it may differ


_JSON_VALUE_FILLS: dict[str, _Decode] = {
    "google.protobuf.Struct": _fill_struct,
    "google.protobuf.Value": _fill_value,
    "google.protobuf.ListValue": _fill_list,
}


def _scalar_decoder(field: Any) -> _Convert:
    """The converter of one JSON value (not null) of a scalar field to what json_format
    would set, or raising _Fallback where the checks or json_format might object."""
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return _text
    if kind == FieldDescriptor.TYPE_ENUM:
        return _enum_decoder(field.enum_type)
    if kind == FieldDescriptor.TYPE_BOOL:
        return _bool
    if kind == FieldDescriptor.TYPE_BYTES:
        return _base64
    if kind in _INT_RANGES:
        return _integer_decoder(*_INT_RANGES[kind])
    if kind == FieldDescriptor.TYPE_FLOAT:
        return _float_decoder(_FLOAT32_MAX)
    return _float_decoder(sys.float_info.max)  # double


def _text(value: Any) -> str:
    if type(value) is not str or (not value.isascii() and _SURROGATE.search(value)):
        raise _Fallback
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _Fallback
    return value


def _base64(value: Any) -> bytes:
    if type(value) is not str or not _is_base64(value):
        raise _Fallback
    # json_format's decoding: both alphabets, with as much padding added as it adds.
    encoded = value.encode("ascii")
    return base64.urlsafe_b64decode(encoded + b"=" * (4 - len(encoded) % 4))


def _enum_decoder(enum_type: Any) -> _Convert:
    """Enum names and known numbers only (the checks refuse the rest)."""
    by_name = {value.name: value.number for value in enum_type.values}
    numbers = frozenset(by_name.values())

    def convert(value: Any) -> int:
        if type(value) is str:
            number: int = by_name[value]  # KeyError: an unknown name, a fallback
            return number
        if type(value) is int and value in numbers:
            return value
        raise _Fallback
    return convert


def _integer_decoder(low: int, high: int) -> _Convert:
    def convert(value: Any) -> int:
        if type(value) is int:
            number = value
        elif type(value) is str and _DECIMAL.fullmatch(value):
            number = int(value)  # int64 as ProtoJSON writes it
        elif type(value) is float and value.is_integer():
            number = int(value)
        else:
            raise _Fallback
        if not low <= number <= high:
            raise _Fallback
        return number
    return convert


def _float_decoder(largest: float) -> _Convert:
    """Finite numbers within the type's range (json_format refuses larger floats for a float
    field; larger integers are left to it too), or "NaN", "Infinity", "-Infinity"."""
    def convert(value: Any) -> float:
        if type(value) is float or type(value) is int:
            number = float(value)  # OverflowError for a huge integer: a fallback
            if not -largest <= number <= largest:
                raise _Fallback  # and so NaN too
            return number
        if type(value) is str:
            return _SPECIAL_FLOATS[value]  # KeyError for other text: a fallback
        raise _Fallback
    return convert
