"""The encoders of a2akit.protojson.to_json: one function per message type."""

from __future__ import annotations

import binascii
import datetime
import functools
from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor_pool, json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.internal import type_checkers

from a2akit.protojson.shape import (
    _Fallback,
    _is_map,
)

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
        # NaN and the infinities are written as ProtoJSON writes a double ("NaN",
        # "Infinity"), where json_format raises: requests carrying one are refused
        # (a2akit.validation), but a task stored with one by an earlier version stays readable.
        return _double(message.number_value)
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
