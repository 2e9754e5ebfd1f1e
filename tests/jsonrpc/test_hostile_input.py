"""Hostile and malformed input on the JSON-RPC binding: every case is answered with a clean
JSON-RPC error, through the ASGI app and the Mangum handler, and nothing is stored."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.examples.echo import EchoAgent
from a2akit.limits import (
    MAX_HISTORY_LENGTH,
    MAX_ID_BYTES,
    MAX_JSON_DEPTH,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_PARTS_PER_MESSAGE,
)
from a2akit.runtime import build_operations
from a2akit.store.dynamodb import DynamoDBStore
from tests.jsonrpc.client import KINDS, V1, Client, serve
from tests.support.dynamodb import refusing_client
from tests.support.harness import ANON, memory_operations
from tests.support.messages import user_message


@pytest.fixture(params=KINDS)
def rpc(request: pytest.FixtureRequest) -> Iterator[Client]:
    yield from serve(str(request.param), memory_operations())


def _post(rpc: Client, body: bytes | str) -> dict[str, Any]:
    """POST a raw body; the reply must be a JSON-RPC response at HTTP 200, never a 500."""
    reply = rpc.post(body.encode() if isinstance(body, str) else body, V1)
    assert reply.status == 200, reply.body[:300]
    assert reply.headers["content-type"].startswith("application/json"), reply.headers
    assert b"Traceback" not in reply.body
    answer: dict[str, Any] = reply.json()
    assert answer["jsonrpc"] == "2.0"
    return answer


def _violations(error: dict[str, Any]) -> dict[str, str]:
    bad = [d for d in error["data"] if d["@type"].endswith("google.rpc.BadRequest")]
    assert bad, error
    return {v["field"]: v["description"] for v in bad[0]["fieldViolations"]}


def _nothing_stored(rpc: Client) -> None:
    assert rpc.result("ListTasks", {})["totalSize"] == 0


def _get_task_with(value: str) -> str:
    """A GetTask request whose params carry `value` (raw JSON text) in an unknown member."""
    return '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","z":' + value + "}}"


# --- the envelope: Unicode, nesting, notifications ---------------------------------------------


@pytest.mark.parametrize("body", [
    '{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"x"}}',
    '{"jsonrpc":"2.0","id":1,"method":"\\udfff","params":{"id":"x"}}',
    '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a\\ud800b"}}',
    '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"\\ud83d":1,"id":"x"}}',
])
def test_lone_surrogate_is_a_parse_error(rpc: Client, body: str,
                                         caplog: pytest.LogCaptureFixture) -> None:
    answer = _post(rpc, body)
    assert answer["id"] is None
    assert answer["error"]["code"] == -32700
    assert "Unicode" in answer["error"]["message"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_surrogate_pairs_are_fine(rpc: Client) -> None:
    body = '{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"GetTask","params":{"id":"x"}}'
    answer = _post(rpc, body)
    assert answer["id"] == "\U0001f600" and answer["error"]["code"] == -32001


@pytest.mark.parametrize("where", ["top", "params", "metadata"])
def test_deep_nesting_is_refused_with_the_limit(rpc: Client, where: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    deep = "[" * 20_000 + "]" * 20_000
    body = {
        "top": deep,
        "params": _get_task_with(deep),
        "metadata": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": user_message(metadata={"k": "@"})}}).replace('"@"', deep),
    }[where]
    error = _post(rpc, body)["error"]
    assert error["code"] == -32600
    assert str(MAX_JSON_DEPTH) in error["message"]
    assert error["data"][0]["metadata"] == {"limitDepth": str(MAX_JSON_DEPTH)}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_nesting_up_to_the_limit_is_accepted(rpc: Client) -> None:
    # The envelope is level 1, params 2; the unknown member fills the rest up to the limit.
    inner = "[" * (MAX_JSON_DEPTH - 2) + "]" * (MAX_JSON_DEPTH - 2)
    body = _get_task_with(inner)
    assert _post(rpc, body)["error"]["code"] == -32001
    too_deep = "[" + inner + "]"
    body = _get_task_with(too_deep)
    assert _post(rpc, body)["error"]["code"] == -32600


def test_brackets_inside_strings_do_not_count(rpc: Client) -> None:
    text = "[{" * 5_000 + '\\"' + "}]" * 10
    answer = _post(rpc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                    "params": {"message": user_message(text)}}))
    assert answer["result"]["task"]["artifacts"][0]["parts"] == [{"text": text}]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_parse_errors(rpc: Client, constant: str) -> None:
    body = _get_task_with(constant)
    assert _post(rpc, body)["error"]["code"] == -32700


def test_notification_is_refused_and_not_executed(rpc: Client) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "SendMessage",
                       "params": {"message": user_message()}})
    answer = _post(rpc, body)
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert "id" in answer["error"]["message"]
    _nothing_stored(rpc)


def test_explicit_null_id_is_a_request(rpc: Client) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "method": "ListTasks", "params": {}})
    answer = _post(rpc, body)
    assert answer["id"] is None and answer["result"]["totalSize"] == 0


def test_huge_method_name_is_not_echoed_in_full(rpc: Client) -> None:
    method = "M" * 100_000
    reply = rpc.post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}).encode(), V1)
    error = reply.json()["error"]
    assert error["code"] == -32601
    assert len(reply.body) < 4_000
    assert len(error["data"][0]["metadata"]["method"]) <= 256


# --- params: every field as its proto type says -----------------------------------------------


def _send(message: dict[str, Any], **params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                       "params": {"message": message, **params}})


@pytest.mark.parametrize(("params", "field"), [
    ({"configuration": "fast"}, "configuration"),
    ({"configuration": []}, "configuration"),
    ({"configuration": ["x"]}, "configuration"),
    ({"configuration": {"acceptedOutputModes": "text/plain"}},
     "configuration.accepted_output_modes"),
    ({"configuration": {"returnImmediately": "yes"}}, "configuration.return_immediately"),
    ({"configuration": {"historyLength": 1.5}}, "configuration.history_length"),
    ({"configuration": {"historyLength": 2**31}}, "configuration.history_length"),
    ({"configuration": {"taskPushNotificationConfig": "https://x"}},
     "configuration.task_push_notification_config"),
    ({"metadata": [1, 2]}, "metadata"),
    ({"metadata": {"n": 10**400}}, "metadata"),
    ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": {"text": "x"}}},
     "message.parts"),
    ({"message": "hello"}, "message"),
    ({"message": ["hello"]}, "message"),
])
def test_wrong_types_are_invalid_params_naming_the_field(rpc: Client, params: dict[str, Any],
                                                         field: str) -> None:
    params = {"message": user_message(), **params}
    error = _post(rpc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                   "params": params}))["error"]
    assert error["code"] == -32602, error
    assert field in _violations(error), error
    _nothing_stored(rpc)


@pytest.mark.parametrize("offset", ["+25:00", "-24:00", "+23:60", "+00:99", "+0:0", "+1:00",
                                    "+01", "+0100"])
def test_timestamps_with_an_impossible_offset_are_invalid_params(rpc: Client,
                                                                 offset: str) -> None:
    # RFC 3339 5.6: time-numoffset is ("+" / "-") HH ":" MM, hours 00-23, minutes 00-59.
    error = _post(rpc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {
        "statusTimestampAfter": f"2026-01-01T00:00:00{offset}"}}))["error"]
    assert error["code"] == -32602, error
    assert "status_timestamp_after" in _violations(error), error


@pytest.mark.parametrize("stamp", ["2026-01-01T00:00:00Z", "2026-01-01T05:30:00+05:30",
                                   "2025-12-31T00:01:00-23:59", "2026-01-01T00:00:00.5+00:00"])
def test_timestamps_with_a_valid_offset_are_accepted(rpc: Client, stamp: str) -> None:
    rpc.result("SendMessage", {"message": user_message()})
    listed = rpc.result("ListTasks", {"statusTimestampAfter": stamp})
    assert listed["totalSize"] == 1, listed


@pytest.mark.parametrize(("parts", "field"), [
    ([[]], "message.parts[0]"),
    ([{}], "message.parts[0]"),
    ([{"mediaType": "text/plain", "filename": "a.txt"}], "message.parts[0]"),
    ([{"text": "ok"}, {"text": None}], "message.parts[1]"),
    ([{"text": "a", "url": "https://example.com/a"}], "message.parts[0].content"),
    (["text"], "message.parts[0]"),
    ([{"raw": "not base64!"}], "message.parts[0].raw"),
    ([{"raw": "aGk=aGk="}], "message.parts[0].raw"),
    ([{"raw": "a"}], "message.parts[0].raw"),
    ([{"raw": "aG+k_w=="}], "message.parts[0].raw"),
    ([{"raw": 12}], "message.parts[0].raw"),
])
def test_malformed_parts_are_invalid_params(rpc: Client, parts: list[Any], field: str) -> None:
    message = {**user_message(), "parts": parts}
    error = _post(rpc, _send(message))["error"]
    assert error["code"] == -32602, error
    assert field in _violations(error), error
    _nothing_stored(rpc)


@pytest.mark.parametrize("raw", ["aGk=", "aGk", "-_-_", "+/+/", "", "aGVsbG8gd29ybGQ="])
def test_base64_forms_proto_json_allows(rpc: Client, raw: str) -> None:
    message = {**user_message(), "parts": [{"raw": raw, "mediaType": "text/plain"}]}
    answer = _post(rpc, _send(message))
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer


@pytest.mark.parametrize("url", ["http://a:99999/", "http://[::1", "http://a:-1/", "https://"])
def test_malformed_push_urls_are_invalid_params(rpc: Client, url: str) -> None:
    params = {"message": user_message(), "configuration": {"taskPushNotificationConfig": {
        "url": url}}}
    error = rpc.error("SendMessage", params)
    assert error["code"] == -32602 and "url" in _violations(error)
    _nothing_stored(rpc)


# --- limits (a2akit/limits.py) -----------------------------------------------------------------


@pytest.mark.parametrize(("method", "params", "field"), [
    ("GetTask", {"id": "x" * (MAX_ID_BYTES + 1)}, "id"),
    ("GetTask", {"id": "é" * (MAX_ID_BYTES // 2 + 1)}, "id"),
    ("GetTask", {"id": "x", "tenant": "t" * 3000}, "tenant"),
    ("CancelTask", {"id": "x" * 5000}, "id"),
    ("SubscribeToTask", {"id": "x" * 5000}, "id"),
    ("ListTasks", {"contextId": "c" * 5000}, "context_id"),
    ("GetTaskPushNotificationConfig", {"taskId": "t" * 5000, "id": "c"}, "task_id"),
    ("DeleteTaskPushNotificationConfig", {"taskId": "t", "id": "c" * 5000}, "id"),
    ("ListTaskPushNotificationConfigs", {"taskId": "t" * 5000}, "task_id"),
    ("CreateTaskPushNotificationConfig",
     {"taskId": "t", "id": "c" * 5000, "url": "https://93.184.216.34/hook"}, "id"),
    ("SendMessage", {"message": user_message(message_id="m" * 5000)}, "message.message_id"),
    ("SendMessage", {"message": user_message(taskId="t" * 5000)}, "message.task_id"),
    ("SendMessage", {"message": user_message(contextId="c" * 5000)}, "message.context_id"),
    ("SendMessage", {"message": user_message(referenceTaskIds=["ok", "r" * 5000])},
     "message.reference_task_ids[1]"),
])
def test_ids_over_the_limit_are_invalid_params(rpc: Client, method: str,
                                               params: dict[str, Any], field: str) -> None:
    error = rpc.error(method, params)
    assert error["code"] == -32602, error
    violations = _violations(error)
    assert field in violations, violations
    assert str(MAX_ID_BYTES) in violations[field]
    assert len(json.dumps(error)) < 2_000  # the id is not echoed back
    _nothing_stored(rpc)


def test_ids_at_the_limit_are_accepted(rpc: Client) -> None:
    task = rpc.result("SendMessage", {"message": user_message(
        message_id="m" * MAX_ID_BYTES, contextId="c" * MAX_ID_BYTES)})["task"]
    assert task["contextId"] == "c" * MAX_ID_BYTES
    assert rpc.error("GetTask", {"id": "x" * MAX_ID_BYTES})["code"] == -32001


@pytest.mark.parametrize(("params", "field", "limit"), [
    ({"message": user_message(parts=[{"text": "p"}] * (MAX_PARTS_PER_MESSAGE + 1))},
     "message.parts", MAX_PARTS_PER_MESSAGE),
    ({"message": user_message(metadata={"k": "v" * MAX_METADATA_BYTES})},
     "message.metadata", MAX_METADATA_BYTES),
    ({"message": user_message(), "metadata": {"k": "v" * MAX_METADATA_BYTES}},
     "metadata", MAX_METADATA_BYTES),
    ({"message": user_message(parts=[{"text": "p", "metadata": {
        "k": "v" * MAX_METADATA_BYTES}}])}, "message.parts[0].metadata", MAX_METADATA_BYTES),
    ({"message": user_message(metadata=json.loads(
        '{"a":' * (MAX_METADATA_DEPTH + 1) + "1" + "}" * (MAX_METADATA_DEPTH + 1)))},
     "message.metadata", MAX_METADATA_DEPTH),
    ({"message": user_message(metadata={"a": json.loads(
        "[" * MAX_METADATA_DEPTH + "]" * MAX_METADATA_DEPTH)})},
     "message.metadata", MAX_METADATA_DEPTH),
])
def test_request_limits_name_the_limit(rpc: Client, params: dict[str, Any], field: str,
                                       limit: int) -> None:
    error = rpc.error("SendMessage", params)
    assert error["code"] == -32602, error
    violations = _violations(error)
    assert field in violations, violations
    assert str(limit) in violations[field] and str(limit) in error["message"]
    _nothing_stored(rpc)


def test_limits_are_inclusive(rpc: Client) -> None:
    depth = MAX_METADATA_DEPTH - 1  # {"a": [...]} : the struct itself is one level
    message = user_message(parts=[{"text": "p"}] * MAX_PARTS_PER_MESSAGE,
                           metadata={"a": json.loads("[" * depth + "]" * depth)})
    task = rpc.result("SendMessage", {"message": message,
                                      "configuration": {"historyLength": MAX_HISTORY_LENGTH}})
    assert task["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("method", ["GetTask", "ListTasks"])
def test_negative_history_length_on_reads(rpc: Client, method: str) -> None:
    error = rpc.error(method, {"id": "x", "historyLength": -1})
    assert error["code"] == -32602
    assert ">= 0" in _violations(error)["history_length"]


# --- versions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.1", "1.2.0", "1.10", "2.0", "1", "1.0.x", " 1.1 "])
def test_other_minor_versions_are_refused(rpc: Client, version: str) -> None:
    error = rpc.error("GetTask", {"id": "x"}, headers={"A2A-Version": version})
    assert error["code"] == -32009
    assert error["data"][0]["metadata"]["supportedVersions"] == "1.0"


# --- retryable failures ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_unavailable_store_is_retryable_internal_error(kind: str) -> None:
    with refusing_client() as client:
        store = DynamoDBStore("a2akit-unreachable", client)
        for rpc in serve(kind, build_operations(ANON, store=store, agent=EchoAgent())):
            error = rpc.error("GetTask", {"id": "x"})
            assert error["code"] == -32603
            info = error["data"][0]
            assert info["reason"] == "UNAVAILABLE" and info["metadata"] == {"retryable": "true"}


# --- the 0.3 family (http_service/jsonrpc03.py): the same limits, 0.3 errors --------------------


def _post03(rpc: Client, body: str) -> dict[str, Any]:
    """POST a 0.3 request (no A2A-Version); the answer is a JSON-RPC response at HTTP 200
    whose error, if any, carries an object `data` (0.3), never a 500."""
    reply = rpc.post(body.encode(), {})
    assert reply.status == 200, reply.body[:300]
    assert b"Traceback" not in reply.body
    answer: dict[str, Any] = reply.json()
    if "error" in answer:
        assert isinstance(answer["error"]["data"], dict), answer
    return answer


def _message03(**fields: Any) -> dict[str, Any]:
    return {"kind": "message", "messageId": "m-03", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}], **fields}


def test_03_deep_nesting_is_refused_with_the_limit(rpc: Client) -> None:
    deep = "[" * 20_000 + "]" * 20_000
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": _message03(metadata={"k": "@"})}}).replace('"@"', deep)
    # The envelope is checked before the family is chosen: 1.0's error shape (as REF).
    error = rpc.post(body.encode(), {}).json()["error"]
    assert error["code"] == -32600 and str(MAX_JSON_DEPTH) in error["message"]


def test_03_huge_method_name_is_not_echoed_in_full(rpc: Client) -> None:
    answer = _post03(rpc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "a/" + "M" * 100_000}))
    assert answer["error"]["code"] == -32601
    assert len(json.dumps(answer)) < 4_000


@pytest.mark.parametrize(("method", "params", "field"), [
    ("tasks/get", {"id": "x" * (MAX_ID_BYTES + 1)}, "id"),
    ("tasks/cancel", {"id": "x" * 5000}, "id"),
    ("message/send", {"message": _message03(messageId="m" * 5000)}, "message.message_id"),
    ("message/send", {"message": _message03(referenceTaskIds=["ok", "r" * 5000])},
     "message.reference_task_ids[1]"),
    ("message/send", {"message": _message03(parts=[{"kind": "text", "text": "p"}] * (
        MAX_PARTS_PER_MESSAGE + 1))}, "message.parts"),
    ("message/send", {"message": _message03(metadata={"k": "v" * MAX_METADATA_BYTES})},
     "message.metadata"),
])
def test_03_limits_are_invalid_params(rpc: Client, method: str, params: dict[str, Any],
                                      field: str) -> None:
    answer = _post03(rpc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                      "params": params}))
    error = answer["error"]
    assert error["code"] == -32602, error
    assert field in [v["field"] for v in error["data"]["errors"]], error
    assert len(json.dumps(error)) < 2_000  # the value is not echoed back
    _nothing_stored(rpc)


@pytest.mark.parametrize("body", [
    '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"a\\ud800b"}}',
    '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message",'
    '"messageId":"m","role":"user","parts":[{"kind":"text","text":"\\udfff"}]}}}',
])
def test_03_lone_surrogates_are_parse_errors(rpc: Client, body: str) -> None:
    assert rpc.post(body.encode(), {}).json()["error"]["code"] == -32700


@pytest.mark.parametrize("kind", KINDS)
def test_03_unavailable_store_is_retryable_internal_error(kind: str) -> None:
    with refusing_client() as client:
        store = DynamoDBStore("a2akit-unreachable", client)
        for rpc in serve(kind, build_operations(ANON, store=store, agent=EchoAgent())):
            answer = _post03(rpc, '{"jsonrpc":"2.0","id":1,"method":"tasks/get",'
                                  '"params":{"id":"x"}}')
            assert answer["error"]["code"] == -32603
            assert answer["error"]["data"] == {"reason": "UNAVAILABLE", "retryable": "true"}
