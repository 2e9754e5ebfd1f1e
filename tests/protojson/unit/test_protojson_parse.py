"""The fast ProtoJSON decoders against the reference parse (`protojson._checked_parse`: the
checks, then json_format): the same message, or the same InvalidParamsError (message and
violations, in order), or the same other exception, for every input.

Valid inputs are the JSON of random messages (the generators of test_protojson_fast); invalid
ones are those with a few random mutations: values of the wrong type or out of range, unknown
enum names, a field given again under its other name, a second member of a oneof, nulls,
unknown keys, all at any depth.
"""

from __future__ import annotations

import collections
import concurrent.futures
import copy
import json
import math
import re
import threading
from typing import Any

import pytest
from google.protobuf import struct_pb2
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import given, note, settings
from hypothesis import strategies as st

from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.operations import OPERATIONS
from a2akit.protojson import _checked_parse, decode, from_json, to_json
from tests.protojson.unit.test_protojson_fast import _A2A_TYPES, _JSON, _TEXT, AllTypes, _messages

_REQUEST_TYPES = sorted({op.request.DESCRIPTOR.full_name: op.request.DESCRIPTOR
                         for op in OPERATIONS.values()}.values(), key=lambda d: d.full_name)


def _outcome(parse: Any, data: Any, cls: type[Message]) -> tuple[Any, ...]:
    """The message's bytes (presence, oneof choice, -0.0 and NaN included), or the error."""
    try:
        message = parse(copy.deepcopy(data), cls)
    except InvalidParamsError as exc:
        return ("invalid", exc.message, exc.violations)
    except RecursionError:
        return ("error", "RecursionError")  # its text depends on where the stack ran out
    except Exception as exc:
        # Without an object's address: upb's SystemError on a lone surrogate key names its
        # bound method, with the address, when a tracer (coverage) is on.
        return ("error", type(exc).__name__, re.sub(r" at 0x[0-9a-f]+", "", str(exc)))
    return ("ok", message.SerializeToString(deterministic=True))


def _assert_same(data: Any, cls: type[Message]) -> tuple[Any, ...]:
    expected = _outcome(_checked_parse, data, cls)
    assert _outcome(from_json, data, cls) == expected
    return expected


def _fast_takes(data: Any, cls: type[Message]) -> bool:
    """Whether the decoder itself parsed `data`, without falling back."""
    try:
        decode._decoder(cls.DESCRIPTOR)(data, cls(), 1)
    except Exception:
        return False
    return True


def _json_of(message: Message) -> dict[str, Any] | None:
    try:
        return to_json(message)
    except Exception:  # a NaN in a Struct, an invalid Timestamp: no JSON to parse
        return None


# --- valid input: the JSON of random messages ---------------------------------------------------

def _check_valid(message: Message) -> None:
    data = _json_of(message)
    if data is None:
        return
    note(json.dumps(data))
    cls = type(message)
    outcome = _assert_same(data, cls)
    note(repr(outcome))
    # Not all are valid (unknown enum numbers; the test type's Duration is written as text
    # where the checks want an object), but an A2A message that is goes the fast way.
    if outcome[0] == "ok" and cls.DESCRIPTOR.full_name.startswith("lf."):
        assert _fast_takes(data, cls), "an A2A message left to the reference"


@given(_messages(_REQUEST_TYPES, depth=4))
@settings(max_examples=200)
def test_requests_parse_as_the_reference_does(message: Message) -> None:
    _check_valid(message)


@given(_messages(_A2A_TYPES, depth=2))
def test_every_a2a_type_parses_as_the_reference_does(message: Message) -> None:
    _check_valid(message)


@given(_messages([AllTypes.DESCRIPTOR], depth=1))
@settings(max_examples=150)
def test_every_field_kind_parses_as_the_reference_does(message: Message) -> None:
    _check_valid(message)


# --- invalid (and odd but valid) input: mutated JSON ---------------------------------------------

def _field_keys(descriptors: list[Any]) -> list[str]:
    """Every JSON and proto name of the fields of these types: added to an object, they give
    duplicates, second oneof members, and fields of the wrong message."""
    keys = {key for d in descriptors for f in d.fields for key in (f.name, f.json_name)}
    return sorted(keys)


_KEYS = st.sampled_from(_field_keys([*_A2A_TYPES, AllTypes.DESCRIPTOR])) | st.sampled_from(
    ["unknownField", "[a2a.ext]", "", "\ud800"])
# Values of every JSON type, each near some rule's edge.
_ODD = st.sampled_from([
    None, True, False, 0, -1, 1.5, 3.0, 2**31, 2**53 + 1, 2**64, -(2**63) - 1, 10**400,
    math.nan, math.inf, 1e39, "", "x", "NaN", "Infinity", "-Infinity", "nan", "1e0", " 1", "07",
    "-0", "1.5", "aGk", "aGk=", "a b", "-_8", "+/8=", "a===", "\ud800", "\ud83d\ude00",
    "ROLE_USER", "ROLE_ROBOT", "TASK_STATE_WORKING", "COLOR_RED", "NULL_VALUE",
    "2026-01-01T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00+25:00",
    "2026-01-01T00:00:00-23:59", "2026-01-01T00:00:00+05:60", "1s", "true", [], [None],
    [1, "a"], {}, {"x": None}, {"text": "t"}, {"@type": "x"}, ("tuple",),
]) | _JSON | _TEXT


def _containers(data: Any) -> list[Any]:
    """Every object and array in `data`, outermost first."""
    found, stack = [], [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


@st.composite
def _mutated(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        # Drawn by index and copied: hypothesis must not keep objects changed afterwards.
        containers = _containers(data)
        node = containers[draw(st.integers(0, len(containers) - 1))]
        # A value from this document (a message where a scalar goes, say) or an odd one.
        value = copy.deepcopy(draw(
            st.integers(0, len(containers) - 1).map(containers.__getitem__) | _ODD))
        if isinstance(node, list):
            if node and draw(st.booleans()):
                node[draw(st.integers(0, len(node) - 1))] = value
            else:
                node.append(value)
        elif node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node)))
            if draw(st.integers(0, 4)) == 0:
                del node[key]
            else:
                node[key] = value
        else:
            node[draw(_KEYS)] = value
    return data


@st.composite
def _mutated_json(draw: st.DrawFn, descriptors: list[Any], depth: int) -> tuple[Any, Any]:
    message = draw(_messages(descriptors, depth))
    data = _json_of(message)
    if data is None:
        data = {}
    return type(message), draw(_mutated(data))


def _check_mutated(cls: type[Message], data: dict[str, Any]) -> None:
    note(repr(data))
    note(repr(_assert_same(data, cls)))


@given(_mutated_json(_REQUEST_TYPES, depth=3))
@settings(max_examples=400)
def test_mutated_requests_fail_or_parse_as_the_reference_does(case: tuple[Any, Any]) -> None:
    _check_mutated(*case)


@given(_mutated_json(_A2A_TYPES, depth=2))
@settings(max_examples=200)
def test_mutated_a2a_types_fail_or_parse_as_the_reference_does(case: tuple[Any, Any]) -> None:
    _check_mutated(*case)


@given(_mutated_json([AllTypes.DESCRIPTOR], depth=1))
@settings(max_examples=150)
def test_mutated_field_kinds_fail_or_parse_as_the_reference_does(
        case: tuple[Any, Any]) -> None:
    _check_mutated(*case)


# --- hand-written cases ------------------------------------------------------------------------

_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}


@pytest.mark.parametrize("data", [
    {"i64": "-9223372036854775808", "u64": "18446744073709551615", "s64": "-0", "f64": "007"},
    {"i64": "9223372036854775808"}, {"u64": "-1"}, {"i32": 2.0}, {"i32": "2.0"}, {"i32": " 2"},
    {"i32": "1_000"}, {"i32": True}, {"u32": 2**32}, {"sf32": -(2**31)},
    {"dbl": "NaN", "flt": "-Infinity", "repDbl": ["Infinity", 1, -0.0]}, {"dbl": "1.5"},
    {"dbl": math.nan}, {"flt": 3.5e38}, {"flt": 2**128}, {"dbl": 10**400}, {"flt": 3.4028234e38},
    {"blob": "-_8"}, {"blob": "+/8="}, {"blob": "aGk"}, {"blob": "aGk=="}, {"blob": "-/8="},
    {"repBlob": ["", "AA", "AAA=", "AAAA"]},
    {"color": "COLOR_RED", "colors": [0, "COLOR_GREEN", 2]}, {"color": 7}, {"colors": [None]},
    {"optI32": 0, "optText": "", "optFlag": False, "opt_dbl": 0.0},
    {"optI32": None}, {"opt_i32": 1, "optI32": None},
    {"choiceText": "a", "choiceChild": {}}, {"choiceText": "a", "choiceChild": None},
    {"choiceText": None, "choiceChild": {"i32": 1}}, {"choice_text": "a"},
    {"null": None}, {"null": "NULL_VALUE"}, {"null": 0}, {"value": None}, {"value": [None]},
    {"list": []}, {"list": None}, {"struct": {}}, {"struct": {"a": []}}, {"value": {"a": {}}},
    {"value": ("t",)}, {"struct": {"a": ("t",)}}, {"struct": [1]},
    {"stamp": "1970-01-01T00:00:00Z"}, {"stamp": "1970-01-01T00:00:00+01:00"}, {"stamp": 0},
    {"stamp": "1970-01-02T00:00:00+25:00"}, {"stamp": "1970-01-02T00:00:00-23:60"},
    {"stamp": "1970-01-02T00:00:00+1:00"}, {"stamp": "1970-01-02T00:00:00+23:59"},
    {"dur": "1s"}, {"dur": {}}, {"mask": "a,b"}, {"wrappedInt": 5}, {"wrappedText": None},
    {"any": {}}, {"any": {"@type": "type.googleapis.com/lf.a2a.v1.Part", "text": "t"}},
    {"empty": {}}, {"empty": {"x": 1}}, {"empty": {"[x]": 1}}, {"[x]": 1}, {"[": 1},
    {"byText": {"a": "b", "": ""}}, {"byText": {"\ud800": "b"}}, {"byText": {"a": None}},
    {"byI64": {"-1": 1, "9223372036854775807": 2}}, {"byI64": {"01": 1, "1": 2}},
    {"byI64": {" 1": 1}}, {"byI64": {"1.0": 1}}, {"byU32": {"-1": "AA"}},
    {"byFlag": {"true": 1.5, "false": "NaN"}}, {"byFlag": {"True": 1}},
    {"byS32": {"1": "COLOR_RED"}}, {"childrenByText": {"a": {"i32": 1}, "b": {}}},
    {"valuesByText": {"a": None}}, {"valuesByText": {"a": [1, {"b": None}]}},
    {"children": [{}, {"child": {"text": "t"}}]}, {"children": [None]}, {"children": {}},
    {"child": []}, {"child": "x"}, {"text": "\ud83d\ude00"}, {"text": "\ud83d\ude00".encode(
        "utf-16", "surrogatepass").decode("utf-16")}, {"text": "\udc00"},
    {"text": "a", "text_": 1},
])
def test_field_kinds(data: dict[str, Any]) -> None:
    _assert_same(data, AllTypes)


@pytest.mark.parametrize("data", [
    {"message": _MESSAGE},
    {"message": {**_MESSAGE, "message_id": "n"}},
    {"message": {**_MESSAGE, "messageId": None, "message_id": "n"}},
    {"message": {**_MESSAGE, "parts": [{"text": "a", "raw": "aGk="}]}},
    {"message": {**_MESSAGE, "parts": [{"text": "a", "raw": None}]}},
    {"message": {**_MESSAGE, "parts": [{"data": None}, {"data": {"a": [1, None, {}]}}]}},
    {"message": {**_MESSAGE, "parts": [{"data": [], "metadata": {"k": "v"}}]}},
    {"message": {**_MESSAGE, "metadata": {"n": 10**400}}},
    {"message": {**_MESSAGE, "metadata": {"\ud800": 1}}},
    {"message": {**_MESSAGE, "role": "ROLE_ROBOT", "parts": "x"}, "configuration": 1},
    {"message": _MESSAGE, "configuration": {"historyLength": "3", "returnImmediately": False}},
    {"message": _MESSAGE, "configuration": {"history_length": 0}},
    {"message": _MESSAGE, "configuration": {"taskPushNotificationConfig": {
        "url": "https://x", "authentication": {"scheme": "Bearer"}}}},
    {"message": _MESSAGE, "tenant": None, "futureField": {"a": 1}},
])
def test_send_message_requests(data: dict[str, Any]) -> None:
    _assert_same(data, pb.SendMessageRequest)


@pytest.mark.parametrize("offset", ["+25:00", "-24:00", "+23:60", "+00:99", "+0:0", "+1:00"])
def test_timestamp_offsets_beyond_rfc_3339_are_refused(offset: str) -> None:
    data = {"stamp": f"1970-01-02T00:00:00{offset}"}
    for parse in (from_json, _checked_parse):
        with pytest.raises(InvalidParamsError) as raised:
            parse(data, AllTypes)
        assert [field for field, _ in raised.value.violations] == ["stamp"]


def test_list_tasks_request() -> None:
    for data in ({"status": "TASK_STATE_WORKING", "statusTimestampAfter": "2026-01-01T00:00:00Z",
                  "pageSize": 10, "includeArtifacts": True},
                 {"statusTimestampAfter": "yesterday"}, {"status": 99}, {"pageSize": "10"}):
        _assert_same(data, pb.ListTasksRequest)


def _nested(levels: int, leaf: Any) -> Any:
    for _ in range(levels):
        leaf = {"child": leaf}
    return leaf


@pytest.mark.parametrize("levels", [1, 31, 32, 33, 98, 99, 100, 101, 400])
def test_deep_messages(levels: int) -> None:
    _assert_same(_nested(levels, {"i32": 1}), AllTypes)


@pytest.mark.parametrize("message_levels", [0, 5, 20])
@pytest.mark.parametrize("json_levels", [10, 14, 15, 16, 17, 40, 45, 49, 50, 51, 60])
def test_deep_json_values(message_levels: int, json_levels: int) -> None:
    """json_format counts messages from the top (a JSON object in a Struct is two: a Value
    and a Struct) and refuses the 101st."""
    value: Any = 1
    for _ in range(json_levels):
        value = {"k": value}
    _assert_same(_nested(message_levels, {"struct": value}), AllTypes)
    _assert_same(_nested(message_levels, {"list": [value]}), AllTypes)


def test_dict_and_text_subclasses_go_to_the_reference() -> None:
    data = collections.OrderedDict(messageId="m", role="ROLE_USER")
    assert _assert_same(data, pb.Message)[0] == "ok"
    assert _assert_same({"message": data}, pb.SendMessageRequest)[0] == "ok"


class _Text(str):
    pass


def test_text_subclass() -> None:
    _assert_same({"id": _Text("t")}, pb.GetTaskRequest)


@pytest.mark.parametrize("cls", [struct_pb2.Struct, struct_pb2.Value, pb.Part])
def test_top_level_types(cls: type[Message]) -> None:
    for data in ({}, {"fields": {}}, {"a": 1}, {"text": "t"}, None):
        _assert_same(data, cls)


@pytest.mark.parametrize("descriptor", _REQUEST_TYPES, ids=lambda d: d.name)
def test_every_request_type_has_a_fast_decoder(descriptor: Any) -> None:
    cls = GetMessageClass(descriptor)
    assert _fast_takes({}, cls)
    assert _assert_same({}, cls) == ("ok", b"")


def test_decoders_built_by_many_threads_at_once() -> None:
    """A decoder is published only with its plans made: one seen half-built by another thread
    would drop every field as unknown."""
    data = {"message": {**_MESSAGE, "parts": [{"data": {"a": [1]}}]},
            "configuration": {"historyLength": 1}}
    expected = _checked_parse(data, pb.SendMessageRequest)
    decode._DECODERS.clear()
    start = threading.Barrier(8)

    def parse() -> Message:
        start.wait()
        return from_json(data, pb.SendMessageRequest)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = [pool.submit(parse) for _ in range(8)]
    assert all(result.result() == expected for result in results)
