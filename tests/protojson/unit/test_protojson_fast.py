"""The fast ProtoJSON encoder against json_format: the same output, key order and number types
included, and the same error where json_format refuses a value.

Messages are generated from the descriptors (random subsets of fields, values over each type's
whole range and its edges), for every A2A message type and for a test-only proto3 type that
has what A2A lacks: every scalar type, `optional` scalars, maps with integer and bool keys,
Duration, FieldMask, Any, wrappers, a self reference, field numbers out of declaration order.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from google.protobuf import (
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    json_format,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import given, note, settings
from hypothesis import strategies as st

from a2akit.generated import a2a_pb2 as pb
from a2akit.protojson import _json_default, encode, required_fields, to_json
from a2akit.protojson.shape import _INT_RANGES


def _reference_to_json(message: Message) -> dict[str, Any]:
    """to_json as it was before the fast encoder: json_format, then the REQUIRED defaults."""
    out: dict[str, Any] = json_format.MessageToDict(message)
    for field in required_fields(message.DESCRIPTOR):
        if field.json_name not in out:
            out[field.json_name] = _json_default(field)
    return out


def _outcome(encode: Any, message: Message) -> tuple[str, ...]:
    """The JSON text (so that 1 vs 1.0 and key order count), or the error's type and text."""
    try:
        return ("ok", json.dumps(encode(message)))
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))


def _assert_same(message: Message) -> None:
    written = _non_finite_as_text(message)
    if written is not message:
        # The one deliberate difference: json_format refuses a NaN or infinity in a Value,
        # the kit writes it as a double's ProtoJSON string (a stored task stays readable).
        assert _outcome(_reference_to_json, message)[0] == "error"
        if _outcome(_reference_to_json, written)[0] == "error":  # something else it refuses
            with pytest.raises(Exception):  # noqa: B017 - json_format's error, whichever
                to_json(message)
            return
        # (Compared as values: a copied Struct's map may iterate in another order.)
        out = json.loads(json.dumps(to_json(message), allow_nan=False))
        assert out == _reference_to_json(written)
        return
    expected = _outcome(_reference_to_json, message)
    assert _outcome(to_json, message) == expected
    if expected[0] == "ok":
        assert to_json(message) == _reference_to_json(message)
        # ... and from the fast path itself, not by its fallback to json_format.
        fast = encode._encoder(message.DESCRIPTOR)(message)
        assert json.dumps(fast) == json.dumps(json_format.MessageToDict(message))


def _non_finite_as_text(message: Message) -> Message:
    """`message` with every non-finite Value number replaced by the string ProtoJSON writes
    for such a double; `message` itself when it holds none."""
    copy = type(message)()
    copy.CopyFrom(message)
    return copy if _replace_non_finite(copy) else message


def _replace_non_finite(message: Any) -> bool:
    if isinstance(message, struct_pb2.Value):
        number = message.number_value
        if message.WhichOneof("kind") == "number_value" and not math.isfinite(number):
            message.string_value = ("NaN" if math.isnan(number)
                                    else "Infinity" if number > 0 else "-Infinity")
            return True
    changed = False
    for field, value in message.ListFields():
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if field.message_type.GetOptions().map_entry:
            items = value.values() if field.message_type.fields_by_name[
                "value"].type == FieldDescriptor.TYPE_MESSAGE else []
        else:
            items = value if field.is_repeated else [value]
        for item in items:
            changed |= _replace_non_finite(item)
    return changed


# --- a test-only proto3 type with every kind of field -------------------------------------------

def _test_file() -> Any:
    f = descriptor_pb2.FileDescriptorProto(
        name="a2akit_test/protojson_fast.proto", package="a2akit_test.protojson", syntax="proto3",
        dependency=["google/protobuf/any.proto", "google/protobuf/duration.proto",
                    "google/protobuf/field_mask.proto", "google/protobuf/struct.proto",
                    "google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto",
                    "google/protobuf/empty.proto"])
    enum = f.enum_type.add(name="Color")
    for number, name in enumerate(["COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN"]):
        enum.value.add(name=name, number=number)
    msg = f.message_type.add(name="AllTypes")
    T = FieldDescriptor
    scalars = [("i32", T.TYPE_INT32), ("i64", T.TYPE_INT64), ("u32", T.TYPE_UINT32),
               ("u64", T.TYPE_UINT64), ("s32", T.TYPE_SINT32), ("s64", T.TYPE_SINT64),
               ("f32", T.TYPE_FIXED32), ("f64", T.TYPE_FIXED64), ("sf32", T.TYPE_SFIXED32),
               ("sf64", T.TYPE_SFIXED64), ("dbl", T.TYPE_DOUBLE), ("flt", T.TYPE_FLOAT),
               ("flag", T.TYPE_BOOL), ("text", T.TYPE_STRING), ("blob", T.TYPE_BYTES)]
    msg.oneof_decl.add(name="choice")  # index 0; the synthetic oneofs of `optional` follow
    number = 100  # declared in descending number order: JSON keys follow the numbers
    for name, kind in scalars:
        msg.field.add(name=name, number=number, type=kind, label=T.LABEL_OPTIONAL)
        msg.field.add(name="rep_" + name, number=number - 1, type=kind, label=T.LABEL_REPEATED)
        msg.field.add(name="opt_" + name, number=number - 2, type=kind, label=T.LABEL_OPTIONAL,
                      proto3_optional=True, oneof_index=len(msg.oneof_decl))
        msg.oneof_decl.add(name="_opt_" + name)
        number -= 3
    msg.field.add(name="color", number=200, type=T.TYPE_ENUM, label=T.LABEL_OPTIONAL,
                  type_name=".a2akit_test.protojson.Color")
    msg.field.add(name="colors", number=201, type=T.TYPE_ENUM, label=T.LABEL_REPEATED,
                  type_name=".a2akit_test.protojson.Color")
    wkt = [("child", ".a2akit_test.protojson.AllTypes"), ("dur", ".google.protobuf.Duration"),
           ("mask", ".google.protobuf.FieldMask"), ("any", ".google.protobuf.Any"),
           ("wrapped_int", ".google.protobuf.Int64Value"),
           ("wrapped_text", ".google.protobuf.StringValue"),
           ("stamp", ".google.protobuf.Timestamp"),
           ("value", ".google.protobuf.Value"), ("list", ".google.protobuf.ListValue"),
           ("struct", ".google.protobuf.Struct"), ("empty", ".google.protobuf.Empty"),
           ("null", ".google.protobuf.NullValue")]
    for i, (name, type_name) in enumerate(wkt):
        kind = T.TYPE_ENUM if name == "null" else T.TYPE_MESSAGE
        msg.field.add(name=name, number=300 + i, type=kind, label=T.LABEL_OPTIONAL,
                      type_name=type_name)
    msg.field.add(name="children", number=320, type=T.TYPE_MESSAGE, label=T.LABEL_REPEATED,
                  type_name=".a2akit_test.protojson.AllTypes")
    msg.field.add(name="choice_text", number=330, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL,
                  oneof_index=0)
    msg.field.add(name="choice_child", number=331, type=T.TYPE_MESSAGE, label=T.LABEL_OPTIONAL,
                  oneof_index=0, type_name=".a2akit_test.protojson.AllTypes")
    # Maps: an entry message per map, with the key and value types of its name.
    maps = [("by_text", T.TYPE_STRING, T.TYPE_STRING, ""),
            ("by_i64", T.TYPE_INT64, T.TYPE_INT32, ""),
            ("by_u32", T.TYPE_UINT32, T.TYPE_BYTES, ""),
            ("by_flag", T.TYPE_BOOL, T.TYPE_DOUBLE, ""),
            ("by_s32", T.TYPE_SINT32, T.TYPE_ENUM, ".a2akit_test.protojson.Color"),
            ("children_by_text", T.TYPE_STRING, T.TYPE_MESSAGE, ".a2akit_test.protojson.AllTypes"),
            ("values_by_text", T.TYPE_STRING, T.TYPE_MESSAGE, ".google.protobuf.Value")]
    for i, (name, key, value, type_name) in enumerate(maps):
        entry = msg.nested_type.add(name=f"Entry{i}", options=descriptor_pb2.MessageOptions(
            map_entry=True))
        entry.field.add(name="key", number=1, type=key, label=T.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=value, label=T.LABEL_OPTIONAL)
        if type_name:
            entry.field[1].type_name = type_name
        msg.field.add(name=name, number=400 + i, type=T.TYPE_MESSAGE, label=T.LABEL_REPEATED,
                      type_name=f".a2akit_test.protojson.AllTypes.Entry{i}")
    return f


def _all_types() -> type[Message]:
    pool = descriptor_pool.Default()
    for module in (any_pb2, duration_pb2, field_mask_pb2, struct_pb2, timestamp_pb2,
                   wrappers_pb2, empty_pb2):
        assert module.DESCRIPTOR.name  # imported, so in the default pool
    try:
        descriptor = pool.FindMessageTypeByName("a2akit_test.protojson.AllTypes")
    except KeyError:
        pool.Add(_test_file())
        descriptor = pool.FindMessageTypeByName("a2akit_test.protojson.AllTypes")
    return GetMessageClass(descriptor)


AllTypes = _all_types()


# --- random messages from the descriptors --------------------------------------------------------



def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [v for v in (low, high, 0, 1, -1, 2**31 - 1, 2**53 + 1) if low <= v <= high]
    return st.sampled_from(edges) | st.integers(low, high)


def _rarely(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`rare` one time in 20: values json_format refuses, so that most messages encode."""
    return st.integers(0, 19).flatmap(lambda i: rare if i == 0 else common)


_TEXT = st.sampled_from(["", " ", "é", "日本", "\U0001f600", "\x00", '"\\']) | st.text(max_size=8)
_DOUBLES = st.sampled_from([0.0, -0.0, 1.0, -1.5, 1e300, 5e-324, 2.0**53, math.nan, math.inf,
                            -math.inf]) | st.floats()
# A Struct's numbers: mostly finite; NaN and infinities make json_format raise, checked too.
_JSON_NUMBERS = _rarely(
    st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53)
    | st.sampled_from([0.0, -0.0, 1.0, 10.0**20]),
    st.sampled_from([math.nan, math.inf, -math.inf]))
_JSON = st.recursive(
    st.none() | st.booleans() | _JSON_NUMBERS | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8)
_JSON_OBJECTS = st.dictionaries(_TEXT, _JSON, max_size=4)


def _scalar(field: Any) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in _INT_RANGES:
        return _ints(*_INT_RANGES[kind])
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return _DOUBLES
    if kind == FieldDescriptor.TYPE_FLOAT:
        return _DOUBLES | st.floats(width=32) | st.sampled_from([0.1, 3.4e38, 1e-45])
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind == FieldDescriptor.TYPE_STRING:
        return _TEXT
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=10)
    if kind == FieldDescriptor.TYPE_ENUM:
        if field.enum_type.full_name == "google.protobuf.NullValue":
            return st.just(0)
        known = [v.number for v in field.enum_type.values]
        return st.sampled_from(known) | _ints(-(2**31), 2**31 - 1)  # unknown numbers too
    raise AssertionError(field.full_name)


def _set_value(value: Any, data: Any) -> None:
    if data is None:
        value.null_value = 0
    elif isinstance(data, bool):
        value.bool_value = data
    elif isinstance(data, int | float):
        value.number_value = data
    elif isinstance(data, str):
        value.string_value = data
    elif isinstance(data, dict):
        value.struct_value.SetInParent()
        value.struct_value.update(data)
    else:
        value.list_value.SetInParent()
        value.list_value.extend(data)


@st.composite
def _fill(draw: st.DrawFn, message: Any, depth: int) -> Message:
    """Set a random subset of `message`'s fields to random values (submessages to `depth`)."""
    name = message.DESCRIPTOR.full_name
    if name == "google.protobuf.Struct":
        message.update(draw(_JSON_OBJECTS))
        return message
    if name == "google.protobuf.ListValue":
        message.extend(draw(st.lists(_JSON, max_size=3)))
        return message
    if name == "google.protobuf.Value":
        if draw(st.booleans()):  # else no kind set: JSON null too
            _set_value(message, draw(_JSON))
        return message
    if name == "google.protobuf.Timestamp":
        valid = st.tuples(_ints(-62_135_596_800, 253_402_300_799),
                          st.sampled_from([0, 1, 1_000, 1_000_000, 999_999_999, 123_000_000])
                          | st.integers(0, 999_999_999))
        invalid = st.tuples(_ints(-(2**40), 2**40), st.sampled_from([-1, 10**9]))
        seconds, nanos = draw(_rarely(valid, invalid))
        message.seconds, message.nanos = seconds, nanos
        return message
    if name == "google.protobuf.Duration":
        seconds = draw(_ints(-315_576_000_000, 315_576_000_000))
        nanos = draw(st.sampled_from([0, 1_000, 1_000_000]) | st.integers(0, 999_999_999))
        message.seconds, message.nanos = seconds, -nanos if seconds < 0 else nanos
        return message
    if name == "google.protobuf.FieldMask":
        message.paths.extend(draw(st.lists(st.sampled_from(["a", "b.c", "foo_bar"]),
                                           max_size=3)))
        return message
    if name == "google.protobuf.Any":
        if draw(st.booleans()):
            message.Pack(pb.Message(message_id=draw(_TEXT), role=pb.ROLE_USER))
        return message
    for field in message.DESCRIPTOR.fields:
        if not draw(st.booleans()):
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key_field, value_field = field.message_type.fields
            container = getattr(message, field.name)
            for _ in range(draw(st.integers(0, 3 if depth > 0 else 0))):
                key = draw(_scalar(key_field))
                if value_field.message_type is None:
                    container[key] = draw(_scalar(value_field))
                else:
                    draw(_fill(container[key], depth - 1))
        elif field.message_type is not None:
            if depth <= 0 and field.message_type.full_name.startswith(("lf.", "a2akit_test.")):
                continue
            if field.is_repeated:
                for _ in range(draw(st.integers(0, 2))):
                    draw(_fill(getattr(message, field.name).add(), depth - 1))
            else:
                getattr(message, field.name).SetInParent()  # present even if left empty
                draw(_fill(getattr(message, field.name), depth - 1))
        elif field.is_repeated:
            getattr(message, field.name).extend(draw(st.lists(_scalar(field), max_size=3)))
        else:
            setattr(message, field.name, draw(_scalar(field)))
    return message


_A2A_TYPES = sorted(pb.DESCRIPTOR.message_types_by_name.values(), key=lambda d: d.full_name)
_SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
_RESPONSE_TYPES = sorted({m.output_type.full_name: m.output_type
                          for m in _SERVICE.methods}.values(), key=lambda d: d.full_name)


def _messages(descriptors: list[Any], depth: int) -> st.SearchStrategy[Message]:
    """Fresh messages (flatmap makes one per example) of the given types, filled at random."""
    return st.sampled_from(descriptors).flatmap(
        lambda d: _fill(GetMessageClass(d)(), depth))


@given(_messages(_RESPONSE_TYPES, depth=4))
@settings(max_examples=150)
def test_responses_encode_as_json_format_does(message: Message) -> None:
    note(repr(message))
    _assert_same(message)


@given(_messages(_A2A_TYPES, depth=2))
def test_every_a2a_type_encodes_as_json_format_does(message: Message) -> None:
    note(repr(message))
    _assert_same(message)


@given(_messages([AllTypes.DESCRIPTOR], depth=1))
@settings(max_examples=100)
def test_every_field_kind_encodes_as_json_format_does(message: Message) -> None:
    note(repr(message))
    _assert_same(message)


# --- hand-written cases for the tricky values -----------------------------------------------------

def _all(**fields: Any) -> Message:
    return AllTypes(**fields)


@pytest.mark.parametrize("message", [
    pytest.param(_all(i64=2**63 - 1, u64=2**64 - 1, s64=-(2**63), f64=1, sf64=-1), id="int64"),
    pytest.param(_all(i32=-(2**31), u32=2**32 - 1, f32=7, sf32=-7), id="int32"),
    pytest.param(_all(dbl=math.nan, flt=math.inf, rep_dbl=[-math.inf, -0.0, 1.0, 1e-300]),
                 id="special-floats"),
    pytest.param(_all(dbl=-0.0), id="negative-zero-is-set"),
    pytest.param(_all(flt=0.1, rep_flt=[3.4e38, 1e-45, 16777217.0]), id="float32-shortest"),
    pytest.param(_all(blob=b"\xff\xfe\x00", rep_blob=[b"", b"a", b"ab", b"abc"]), id="bytes"),
    pytest.param(_all(opt_i32=0, opt_text="", opt_flag=False, opt_dbl=0.0), id="optional-0"),
    pytest.param(_all(color=99, colors=[1, -5, 2]), id="unknown-enum-numbers"),
    pytest.param(_all(by_flag={True: 1.0, False: math.nan}, by_i64={-(2**63): 0, 5: -1},
                      by_u32={2**32 - 1: b"\x00"}, by_s32={-1: 7}), id="map-keys"),
    pytest.param(_all(null=0, value=struct_pb2.Value()), id="null"),
    pytest.param(_all(choice_child=_all()), id="empty-oneof-message"),
    pytest.param(_all(dur=duration_pb2.Duration(seconds=-1, nanos=-500),
                      mask=field_mask_pb2.FieldMask(paths=["a_b", "c"])), id="duration-mask"),
    pytest.param(_all(wrapped_int=wrappers_pb2.Int64Value(value=2**60),
                      wrapped_text=wrappers_pb2.StringValue()), id="wrappers"),
    pytest.param(_all(dur=duration_pb2.Duration(seconds=10**12)), id="invalid-duration"),
    pytest.param(_all(stamp=timestamp_pb2.Timestamp(seconds=2**40)), id="invalid-timestamp"),
    pytest.param(_all(stamp=timestamp_pb2.Timestamp(seconds=0, nanos=-1)), id="negative-nanos"),
])
def test_tricky_values(message: Message) -> None:
    _assert_same(message)


def test_any() -> None:
    message = AllTypes()
    message.any.Pack(pb.Task(id="t", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING)))
    _assert_same(message)
    message.any.Pack(timestamp_pb2.Timestamp(seconds=1))
    _assert_same(message)


@pytest.mark.parametrize(("seconds", "nanos"), [
    (0, 0), (-62_135_596_800, 0), (253_402_300_799, 999_999_999), (-1, 1), (86_399, 1_000),
    (1_767_225_600, 123_000_000), (1_767_225_600, 123_456_000), (1_767_225_600, 123_456_789),
    (951_782_400, 0),  # 2000-02-29
])
def test_timestamps(seconds: int, nanos: int) -> None:
    status = pb.TaskStatus(timestamp=timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos))
    _assert_same(status)


def test_struct_numbers_stay_floats_and_non_finite_ones_are_written_as_doubles_are() -> None:
    task = pb.Task(id="t")
    task.metadata.update({"whole": 1, "half": 0.5, "big": 2**60, "nested": {"list": [1, None]}})
    _assert_same(task)
    assert json.dumps(to_json(task)["metadata"]["whole"]) == "1.0"
    task.metadata.update({"bad": math.nan, "deep": {"list": [math.inf, -math.inf]}})
    _assert_same(task)
    with pytest.raises(json_format.SerializeToJsonError):
        json_format.MessageToDict(task)
    out = to_json(task)["metadata"]
    assert (out["bad"], out["deep"]["list"]) == ("NaN", ["Infinity", "-Infinity"])


def test_top_level_well_known_types() -> None:
    for message in (empty_pb2.Empty(), struct_pb2.Struct(), struct_pb2.Value(),
                    struct_pb2.ListValue(), timestamp_pb2.Timestamp(seconds=5)):
        assert json.dumps(to_json(message)) == json.dumps(json_format.MessageToDict(message))


def test_empty_messages_keep_their_required_defaults() -> None:
    for descriptor in _A2A_TYPES:
        _assert_same(GetMessageClass(descriptor)())
