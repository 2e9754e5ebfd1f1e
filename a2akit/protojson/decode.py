"""The decoders of a2akit.protojson.from_json: one function per message type."""

from __future__ import annotations

import base64
import math
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from a2akit.protojson.shape import (
    _INT_RANGES,
    _OPAQUE,
    _SURROGATE,
    _Fallback,
    _is_base64,
    _is_map,
    _message_problem,
    _parse_timestamp,
    _synthetic,
)

# --- the decoder: one function per message type, built once from its descriptor ---------------
#
# A decoder takes the JSON value of one message (and its depth) and writes it straight into a
# message, as json_format.ParseDict would after the checks of a2akit.protojson.shape: scalars
# by setattr, repeated fields by extend or add(), maps by key, submessages through their
# parent's field. It accepts
# only what those checks accept and json_format then parses without error, and raises (mostly
# _Fallback) on anything else, leaving the answer to the reference: so each error and its
# wording stay in the checks alone, and the decoders only ever need to say "fine" or "not mine".
#
# Left to the reference on purpose: any invalid or doubtful value (an integer as "1e0" or
# " 1", a float as "1.5", a map key json_format would convert), dict or str subclasses,
# keys in json_format's "[extension]" form, Duration, FieldMask and wrapper fields (json_format
# reads them from strings the checks refuse), messages nested deeper than _FAST_DEPTH, and
# message types whose JSON names differ from their camelCase names or clash with a oneof name.
# The opaque types (_OPAQUE) are checked as the shape checks do (_message_problem), then set
# by json_format's own steps (Struct, Value, ListValue, Timestamp) or by json_format itself
# (Any, Empty).

_Decode = Callable[[Any, Any, int], None]  # (JSON value, message to fill, depth of the message)
_Setter = Callable[[Any, Any, int], None]  # (parent message, JSON value not null, parent depth)
_Convert = Callable[[Any], Any]  # JSON value -> the field's Python value, or raises
# (the JSON name given too for the same field, the oneof it takes part in, setter, null action)
_Plan = tuple[str | None, str | None, _Setter, Callable[[Any], None]]
_DECODERS: dict[Any, _Decode] = {}  # message descriptor -> decoder
_BUILDING: dict[Any, _Decode] = {}  # decoders being built by the thread holding the lock
_BUILD_LOCK = threading.RLock()
# Types json_format does not parse as an object of their fields (its _WKTJSONMETHODS), and
# Empty (opaque too). The wrappers are also such types; they are recognised by their file.
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
    """The checks accept the text _parse_timestamp parses; json_format then parses the same."""
    if type(value) is not str:
        raise _Fallback
    _parse_timestamp(value, message)  # ValueError where the checks find a problem: a fallback


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
