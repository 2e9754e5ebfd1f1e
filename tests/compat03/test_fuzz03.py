"""Property-based fuzzing of the 0.3 JSON-RPC surface (hypothesis), as test_fuzz.py does the
1.0 one, through the ASGI app and the Mangum handler: structurally valid 0.3 requests with
any JSON value in one field (any depth), unknown methods with a slash, any params.

Every answer is a well-formed JSON-RPC response at HTTP 200 (a JSON body, or SSE whose every
`data:` line is one), an error is a catalogue code with an object `data`, never a 500, a hang,
a traceback or an ERROR log record, and the store holds only whole tasks afterwards."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from a2akit.compat03.json03 import METHODS
from a2akit.limits import ERROR_MESSAGE_CHARS
from tests.jsonrpc.fuzz_strategies import HOOK, json_values
from tests.jsonrpc.test_fuzz import CODES, Targets, _check_store, _no_hang, fuzzing

MESSAGE = {"kind": "message", "messageId": "fuzz-03", "role": "user", "parts": [
    {"kind": "text", "text": "hi"},
    {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
    {"kind": "data", "data": {"k": 1}}], "metadata": {"m": 1}}
PUSH = {"url": HOOK, "id": "c-1", "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "x"}}
# One valid params object per 0.3 method; the fuzz varies one member at a time.
BASES: dict[str, dict[str, Any]] = {
    "message/send": {"message": MESSAGE, "metadata": {"k": "v"}, "configuration": {
        "acceptedOutputModes": ["text/plain"], "historyLength": 3, "blocking": True,
        "pushNotificationConfig": PUSH}},
    "message/stream": {"message": MESSAGE},
    "tasks/get": {"id": "t-1", "historyLength": 2},
    "tasks/cancel": {"id": "t-1", "metadata": {"why": "fuzz"}},
    "tasks/resubscribe": {"id": "t-1"},
    "tasks/pushNotificationConfig/set": {"taskId": "t-1", "pushNotificationConfig": PUSH},
    "tasks/pushNotificationConfig/get": {"id": "t-1", "pushNotificationConfigId": "c-1"},
    "tasks/pushNotificationConfig/list": {"id": "t-1"},
    "tasks/pushNotificationConfig/delete": {"id": "t-1", "pushNotificationConfigId": "c-1"},
    "agent/getAuthenticatedExtendedCard": {},
}
assert set(BASES) == METHODS


class Fuzz03(Targets):
    def answers(self, body: bytes, request_id: Any) -> None:
        note(f"body[:300]={body[:300]!r}")
        for target in self.targets:
            self.records.clear()
            with _no_hang():
                reply = target.client.post(body, {})
            assert reply.status == 200, (reply.status, reply.body[:500])
            assert b"Traceback" not in reply.body
            if reply.headers["content-type"].startswith("text/event-stream"):
                frames = reply.body.decode().split("\n\n")
                lines = [line for frame in frames for line in frame.split("\n") if line]
                assert lines and all(line.startswith(("data: ", ":")) for line in lines)
                for line in lines:
                    if line.startswith("data: "):
                        _check(json.loads(line[6:]), request_id)
            else:
                _check(reply.json(), request_id)
            assert not [r.getMessage() for r in self.records]
            _check_store(target)


def _check(answer: Any, request_id: Any) -> None:
    assert isinstance(answer, dict) and answer["jsonrpc"] == "2.0", answer
    assert ("result" in answer) != ("error" in answer), answer
    assert answer["id"] == request_id, answer
    if "error" in answer:
        error = answer["error"]
        assert error["code"] in CODES, error
        assert isinstance(error["message"], str) and len(error["message"]) <= ERROR_MESSAGE_CHARS
        assert isinstance(error["data"], dict) and error["data"]["reason"], error


@pytest.fixture(scope="module")
def fuzz() -> Iterator[Fuzz03]:
    with fuzzing(Fuzz03) as found:
        yield found


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every member and element of `value`, as a path of keys and indexes."""
    items = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, inner in items:
        yield (*path, key)
        yield from _paths(inner, (*path, key))


@st.composite
def one_field_changed(draw: st.DrawFn) -> tuple[bytes, int]:
    method = draw(st.sampled_from(sorted(BASES)))
    params = copy.deepcopy(BASES[method])
    paths = list(_paths(params))
    if paths:
        path = draw(st.sampled_from(paths))
        holder = params
        for key in path[:-1]:
            holder = holder[key]
        if draw(st.booleans()):
            holder[path[-1]] = draw(json_values)
        elif isinstance(holder, dict):
            del holder[path[-1]]
    body = {"jsonrpc": "2.0", "id": 5, "method": method, "params": params}
    return json.dumps(body).encode(), 5


@given(request=one_field_changed())
def test_any_value_in_any_03_field_is_answered(fuzz: Fuzz03, request: tuple[bytes, int]) -> None:
    fuzz.answers(*request)


@given(method=st.sampled_from(sorted(BASES)) | st.text(max_size=12).map(lambda t: t + "/x"),
       params=json_values)
def test_any_params_of_any_03_method_are_answered(fuzz: Fuzz03, method: str,
                                                  params: Any) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": "p", "method": method, "params": params})
    fuzz.answers(body.encode(), "p")
