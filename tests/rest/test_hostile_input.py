"""Hostile and malformed input on the HTTP+JSON binding, through the ASGI app and the Mangum
handler: bad paths, methods, query values and bodies each get the spec's error body with the
status that names the problem (never a 500), no ERROR log line, and nothing is stored."""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from a2akit.limits import MAX_ID_BYTES, MAX_JSON_DEPTH
from tests.jsonrpc.client import Reply
from tests.rest.client import KINDS, Rest, error_of, reason, serve_rest, violations
from tests.support.harness import memory_operations
from tests.support.messages import user_message

ALLOWED = {200, 400, 404, 405, 415}


@pytest.fixture(params=KINDS)
def rest(request: pytest.FixtureRequest) -> Iterator[Rest]:
    yield from serve_rest(str(request.param), memory_operations())


@pytest.fixture(autouse=True)
def no_error_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    yield
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


def _nothing_stored(rest: Rest) -> None:
    assert rest.ok("GET", "/tasks")["totalSize"] == 0


# --- paths and methods -------------------------------------------------------------------------


@pytest.mark.parametrize("path", [
    "/tasks/", "/tasks//x", "/x//tasks", "/tasks/x/y/z/w", "/message", "/message:", "/:send",
    "/tasks/a%2Fb/pushNotificationConfigs/c/d", "/" + "a/" * 2000,
    "/tasks/x/pushNotificationConfigs/", "/a/b/c/message:send", "/%7Btenant%7D/tasks/x/y",
])
def test_unknown_paths_are_404(rest: Rest, path: str) -> None:
    error = rest.error("GET", path, status=404)
    assert reason(error) == "METHOD_NOT_FOUND"
    assert len(json.dumps(error)) < 2_000  # the path is not echoed in full


@pytest.mark.parametrize("verb", ["PUT", "PATCH", "OPTIONS", "TRACE", "DELETE"])
@pytest.mark.parametrize("path", ["/message:send", "/tasks", "/tasks/x:cancel",
                                  "/t1/tasks/x:subscribe", "/extendedAgentCard"])
def test_other_methods_are_405_with_allow(rest: Rest, verb: str, path: str) -> None:
    reply = rest.call(verb, path, raw=b"{}", headers={"content-type": "application/json"})
    error_of(reply, 405)
    assert reply.headers["allow"] in ("GET", "POST", "GET, POST", "POST, GET")
    _nothing_stored(rest)


@pytest.mark.parametrize(("path", "field"), [
    ("/tasks/" + "x" * (MAX_ID_BYTES + 1), "id"),
    ("/tasks/" + "é" * (MAX_ID_BYTES // 2 + 1), "id"),
    ("/" + "t" * 3000 + "/tasks", "tenant"),
    ("/tasks/" + "t" * 5000 + "/pushNotificationConfigs", "task_id"),
])
def test_path_values_over_the_limit_are_400(rest: Rest, path: str, field: str) -> None:
    error = rest.error("GET", path, status=400)
    assert reason(error) == "INVALID_PARAMS" and field in violations(error), error
    assert len(json.dumps(error)) < 2_000


@pytest.mark.parametrize("segment", ["%00", "%ED%A0%80", "%FF%FE", "%F0%9F%98%80", "%25", "%3A"])
def test_odd_bytes_in_a_path_segment_are_answered(rest: Rest, segment: str) -> None:
    reply = rest.call("GET", "/tasks/a" + segment)
    assert reason(error_of(reply)) in ("TASK_NOT_FOUND", "INVALID_PARAMS", "METHOD_NOT_FOUND")


# --- query values ------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "field"), [
    ("historyLength=-1", "history_length"),
    ("historyLength=2147483648", "history_length"),
    ("historyLength=", "history_length"),
    ("historyLength=1.5", "history_length"),
    # Integers are ASCII digits (issue 33, item 9): not fullwidth, Arabic-Indic or Devanagari
    # digits, nor the spaces and underscores Python's int() would also take.
    ("historyLength=%EF%BC%91", "history_length"),
    ("historyLength=%D9%A1", "history_length"),
    ("historyLength=%E0%A5%A7", "history_length"),
    ("historyLength=1_0", "history_length"),
    ("historyLength=%201", "history_length"),
    ("historyLength=1%20", "history_length"),
    ("pageSize=%EF%BC%95", "page_size"),
    ("pageSize=%D9%A5.0", "page_size"),
    ("includeArtifacts=TRUE", "include_artifacts"),
    ("includeArtifacts=1", "include_artifacts"),
    ("status=", "status"),
    ("status=TASK_STATE_WORKING&status=TASK_STATE_FAILED", "status"),
    ("statusTimestampAfter=2026-01-01T00:00:00%2B25:00", "status_timestamp_after"),
    ("contextId=" + "c" * 5000, "context_id"),
    ("pageToken=" + "%FF" * 10, "page_token"),
])
def test_bad_query_values_are_400(rest: Rest, query: str, field: str) -> None:
    error = rest.error("GET", "/tasks", query=query, status=400)
    assert reason(error) == "INVALID_PARAMS", error
    assert field in violations(error), error


def test_unknown_and_path_bound_query_parameters_are_ignored(rest: Rest) -> None:
    assert rest.ok("GET", "/tasks", query="nonsense=1&tenant=&x=%00")["totalSize"] == 0
    error = rest.error("GET", "/tasks/abc", query="id=other", status=404)
    assert error["details"][0]["metadata"] == {"taskId": "abc"}  # the path's id wins


# --- bodies ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    (b"not json", "PARSE_ERROR"),
    (b"\xff\xfe{}", "PARSE_ERROR"),
    (b'{"message": "\\ud800"}', "PARSE_ERROR"),
    (b'{"message": NaN}', "PARSE_ERROR"),
    (b"[]", "INVALID_REQUEST"),
    (b"[{}]", "INVALID_REQUEST"),
    (b'"text"', "INVALID_REQUEST"),
    (b"12", "INVALID_REQUEST"),
    (b"null", "INVALID_REQUEST"),
    (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), "INVALID_REQUEST"),
    (b'{"message":' * 20_000 + b"1" + b"}" * 20_000, "INVALID_REQUEST"),
])
def test_bad_bodies_are_400(rest: Rest, raw: bytes, expected: str) -> None:
    for path in ("/message:send", "/message:stream", "/tasks/x:cancel",
                 "/tasks/x/pushNotificationConfigs"):
        error = rest.error("POST", path, raw=raw, status=400,
                           headers={"content-type": "application/json"})
        assert reason(error) == expected, (path, error)
    _nothing_stored(rest)


def test_body_over_the_limit_is_refused(rest: Rest) -> None:
    message = user_message("x" * (2 * 1024 * 1024))
    error = rest.error("POST", "/message:send", {"message": message}, status=400)
    assert reason(error) == "INVALID_REQUEST" and "limitBytes" in error["details"][0]["metadata"]
    _nothing_stored(rest)


@pytest.mark.parametrize(("body", "field"), [
    ({"configuration": "fast"}, "configuration"),
    ({"configuration": {"historyLength": 1.5}}, "configuration.history_length"),
    ({"metadata": [1, 2]}, "metadata"),
    ({"message": {"messageId": "m", "role": "ROLE_USER", "parts": {"text": "x"}}},
     "message.parts"),
    ({"message": "hello"}, "message"),
    ({"message": {"messageId": "m", "role": "ROLE_BOSS", "parts": [{"text": "x"}]}},
     "message.role"),
])
def test_wrong_types_in_the_body_name_the_field(rest: Rest, body: dict[str, Any],
                                                field: str) -> None:
    error = rest.error("POST", "/message:send", {"message": user_message(), **body}, status=400)
    assert reason(error) == "INVALID_PARAMS" and field in violations(error), error
    _nothing_stored(rest)


# --- fuzzing -----------------------------------------------------------------------------------


_SEGMENTS = st.one_of(
    st.sampled_from(["tasks", "message:send", "message:stream", "extendedAgentCard", "x",
                     "pushNotificationConfigs", "x:cancel", "x:subscribe", ":", "", "%2F",
                     "%00", "%ED%A0%80", "{id}", "a..b"]),
    # `.` and `..` are left out: HTTP clients resolve them before sending.
    st.text(st.characters(codec="utf-8", exclude_characters="/?#"), max_size=12).filter(
        lambda s: s not in (".", "..")))
_QUERY = st.lists(st.tuples(
    st.sampled_from(["historyLength", "pageSize", "pageToken", "status", "contextId",
                     "includeArtifacts", "statusTimestampAfter", "tenant", "id", "A2A-Version",
                     "history_length", "x"]),
    st.one_of(st.sampled_from(["true", "false", "1", "-1", "0", "101", "2147483648",
                               "TASK_STATE_WORKING", "2026-01-01T00:00:00Z", ""]),
              st.text(max_size=10))), max_size=4)


def _check(reply: Reply, path: str) -> None:
    assert reply.status in ALLOWED, (reply.status, reply.body[:300])
    if path in ("/", "/.well-known/agent-card.json"):
        return  # the JSON-RPC and card routes, answered as before
    if reply.status >= 400:
        error_of(reply)
    elif not reply.headers["content-type"].startswith("text/event-stream"):
        assert reply.headers["content-type"] == "application/a2a+json"


@pytest.fixture(scope="module", params=["asgi", "apigw_http_v2"])
def fuzz_target(request: pytest.FixtureRequest) -> Iterator[Rest]:
    yield from serve_rest(str(request.param), memory_operations())


@given(verb=st.sampled_from(["GET", "POST", "DELETE", "PUT"]),
       # A leading `//` is read by HTTP clients as an authority: the first segment is not "".
       segments=st.lists(_SEGMENTS, min_size=1, max_size=5).filter(lambda s: s[0] != ""),
       query=_QUERY,
       body=st.one_of(st.none(), st.binary(max_size=60),
                      st.just(json.dumps({"message": user_message()}).encode())))
def test_any_request_is_answered(fuzz_target: Rest, verb: str, segments: list[str],
                                 query: list[tuple[str, str]], body: bytes | None) -> None:
    path = "/" + "/".join(urllib.parse.quote(s, safe=":%{}") for s in segments)
    encoded = urllib.parse.urlencode(query)
    note(f"{verb} {path}?{encoded} {body!r}")
    headers = {"content-type": "application/json"} if body is not None else {}
    _check(fuzz_target.call(verb, path, raw=body, query=encoded, headers=headers), path)
