"""A non-finite number (NaN, Infinity, 1e400) never poisons a task (issue 33, item 1).

JSON reads `1e400` as infinity and protobuf carries NaN and infinities in a Value's
`number_value`, but ProtoJSON cannot write them in a Struct or Value: a task holding one could
not be answered in JSON. So every entry refuses one with its binding's invalid-params error
before anything is written (JSON-RPC 1.0 and 0.3, HTTP+JSON, both gRPC services, over the
embedded store and DynamoDB Local); and a task stored with one by an earlier version stays
readable and listable on every binding (written as ProtoJSON writes a non-finite double)."""

from __future__ import annotations

import asyncio
import json
import math
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import struct_pb2
from hypothesis import given, note, settings
from hypothesis import strategies as st

from a2akit import operations
from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.operations import Operations
from a2akit.runtime import build_operations
from a2akit.store.base import Scope, TaskQuery
from a2akit.store.dynamodb import DynamoDBStore
from a2akit.store.memory import MemoryStore
from http_service.app import create_app
from tests.store.conftest import TABLE
from tests.support.grpc03 import Env03, open_env03
from tests.support.harness import ANON, background_loop, end_tasks, memory_operations

pytestmark = pytest.mark.anyio

V10 = {"A2A-Version": "1.0"}
# As a caller writes them: JSON numbers Python's parser reads as infinities. (The tokens NaN
# and Infinity are not JSON: a parse error, tests/http_service/unit/test_json_body.py.)
NON_FINITE_TEXT = ["1e400", "-1e999"]


class Kit:
    def __init__(self, ops: Operations, http: httpx.AsyncClient, grpc_env: Env03) -> None:
        self.ops, self.http, self.grpc = ops, http, grpc_env
        self.tenant = f"nf{uuid.uuid4().hex[:8]}"

    async def post(self, path: str, body: str, headers: dict[str, str]) -> httpx.Response:
        return await self.http.post(path, content=body.encode(), headers={
            "content-type": "application/json", **headers})

    async def stored(self) -> int:
        page = await self.ops.store.list(Scope(self.tenant, "anonymous"),
                                         TaskQuery(page_size=100))
        return len(page.tasks)


@pytest.fixture(params=["memory", pytest.param("dynamodb", marks=pytest.mark.slow)])
async def kit(request: pytest.FixtureRequest) -> AsyncIterator[Kit]:
    store = (MemoryStore() if request.param == "memory"
             else DynamoDBStore(TABLE, request.getfixturevalue("ddb_client")))
    ops = build_operations(ANON, store=store, agent=EchoAgent())
    transport = httpx.ASGITransport(app=create_app(ops))
    async with open_env03(ops) as env, httpx.AsyncClient(
            transport=transport, base_url="http://a2a.test") as http:
        yield Kit(ops, http, env)


async def _total(kit: Kit, tenant: str) -> int:
    """How many tasks the tenant holds (0.3 requests name none: the empty tenant, shared
    with other tests on DynamoDB Local, which run one at a time)."""
    return (await kit.ops.store.list(Scope(tenant, "anonymous"), TaskQuery(page_size=1))
            ).total_size


def _rpc(method: str, params: str) -> str:
    return f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}'


def _message10(data: str = '{"k":1}', metadata: str = "{}") -> str:
    return (f'{{"messageId":"{uuid.uuid4()}","role":"ROLE_USER","parts":[{{"data":{data}}}],'
            f'"metadata":{metadata}}}')


def _message03(data: str = '{"k":1}', metadata: str = "{}") -> str:
    return (f'{{"kind":"message","messageId":"{uuid.uuid4()}","role":"user","parts":'
            f'[{{"kind":"data","data":{data}}}],"metadata":{metadata}}}')


def _placements(number: str) -> list[tuple[str, str]]:
    """(data part, message metadata) pairs with `number` in one of them, nested or not."""
    return [(f'{{"a":{number}}}', "{}"), (f'{{"a":[1,{{"b":{number}}}]}}', "{}"),
            ('{"k":1}', f'{{"m":{number}}}')]


def _assert_invalid_params(answer: dict[str, Any]) -> None:
    assert answer.get("error", {}).get("code") == -32602, answer


@pytest.mark.parametrize("number", NON_FINITE_TEXT)
async def test_json_rpc_refuses_a_non_finite_number_and_writes_nothing(kit: Kit,
                                                                      number: str) -> None:
    before03 = await _total(kit, "")
    for data, metadata in _placements(number):
        params = f'{{"tenant":"{kit.tenant}","message":{_message10(data, metadata)}}}'
        for method in ("SendMessage", "SendStreamingMessage"):
            reply = await kit.post("/", _rpc(method, params), V10)
            assert reply.status_code == 200, reply.text
            text = reply.text
            answer = (json.loads(text.split("data: ", 1)[1].split("\n")[0])
                      if text.startswith(("data:", ":")) else reply.json())
            _assert_invalid_params(answer)
        # 0.3 carries no tenant in params: its tasks land in the default tenant, counted below.
        params03 = f'{{"message":{_message03(data, metadata)}}}'
        for method in ("message/send", "message/stream"):
            reply = await kit.post("/", _rpc(method, params03), {})
            text = reply.text
            answer = (json.loads(text.split("data: ", 1)[1].split("\n")[0])
                      if "text/event-stream" in reply.headers["content-type"] else reply.json())
            _assert_invalid_params(answer)
    assert await kit.stored() == 0
    assert await _total(kit, "") == before03


@pytest.mark.parametrize("number", NON_FINITE_TEXT)
async def test_http_json_refuses_a_non_finite_number_and_writes_nothing(kit: Kit,
                                                                       number: str) -> None:
    for data, metadata in _placements(number):
        body = f'{{"message":{_message10(data, metadata)}}}'
        for route in ("message:send", "message:stream"):
            reply = await kit.post(f"/{kit.tenant}/{route}", body, V10)
            assert reply.status_code == 400, (route, reply.status_code, reply.text)
    assert await kit.stored() == 0


def _value_with(number: float) -> struct_pb2.Value:
    value = struct_pb2.Value()
    value.struct_value.update({"a": [1, {"b": number}]})
    return value


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
async def test_grpc_refuses_a_non_finite_number_and_writes_nothing(kit: Kit,
                                                                   number: float) -> None:
    meta = (("a2a-version", "1.0"),)
    data_part = pb.SendMessageRequest(tenant=kit.tenant, message=pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(data=_value_with(number))]))
    in_metadata = pb.SendMessageRequest(tenant=kit.tenant, message=pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="hi")]))
    in_metadata.message.metadata.update({"m": number})
    in_request_metadata = pb.SendMessageRequest()
    in_request_metadata.CopyFrom(in_metadata)
    in_request_metadata.message.ClearField("metadata")
    in_request_metadata.metadata.update({"x": {"y": number}})
    for request in (data_part, in_metadata, in_request_metadata):
        # As bytes on the wire: the server decodes what the client serialized.
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await kit.grpc.stub10.SendMessage(request, metadata=meta)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
        assert "finite" in (caught.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in kit.grpc.stub10.SendStreamingMessage(request, metadata=meta):
                pass
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
    assert await kit.stored() == 0

    # 0.3: a data part's Struct, and the message's metadata.
    for where in ("data", "metadata"):
        request03 = pb03.SendMessageRequest(request=pb03.Message(
            message_id=str(uuid.uuid4()), role=pb03.ROLE_USER,
            content=[pb03.Part(text="hi")]))
        if where == "data":
            part = request03.request.content.add()
            part.data.data.update({"a": number})
        else:
            request03.request.metadata.update({"a": number})
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await kit.grpc.stub.SendMessage(request03)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value


async def test_a_task_stored_with_a_non_finite_number_stays_readable(
        kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    """As an earlier version stored it: the check is lifted for the one write."""
    with monkeypatch.context() as lifted:
        lifted.setattr(operations, "check_request", lambda request: None)
        request = pb.SendMessageRequest(tenant=kit.tenant, message=pb.Message(
            message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
            parts=[pb.Part(data=_value_with(math.inf))]))
        request.message.metadata.update({"n": math.nan})
        task = (await kit.grpc.stub10.SendMessage(
            request, metadata=(("a2a-version", "1.0"),))).task
    assert await kit.stored() == 1

    get = _rpc("GetTask", f'{{"tenant":"{kit.tenant}","id":"{task.id}"}}')
    answer = (await kit.post("/", get, V10)).json()
    part = answer["result"]["history"][0]["parts"][0]
    assert part["data"] == {"a": [1, {"b": "Infinity"}]}, answer
    assert answer["result"]["history"][0]["metadata"] == {"n": "NaN"}

    listed = (await kit.post("/", _rpc("ListTasks", f'{{"tenant":"{kit.tenant}"}}'), V10)).json()
    assert [t["id"] for t in listed["result"]["tasks"]] == [task.id], listed

    for path in (f"/{kit.tenant}/tasks/{task.id}", f"/{kit.tenant}/tasks"):
        reply = await kit.http.get(path, headers=V10)
        assert reply.status_code == 200, (path, reply.text)

    meta = (("a2a-version", "1.0"),)
    got = await kit.grpc.stub10.GetTask(pb.GetTaskRequest(tenant=kit.tenant, id=task.id),
                                        metadata=meta)
    assert math.isinf(got.history[0].parts[0].data.struct_value["a"][1]["b"])


async def test_a_0_3_task_with_a_non_finite_number_stays_readable(
        kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as lifted:
        lifted.setattr(operations, "check_request", lambda request: None)
        before = await _total(kit, "")
        message = _message03(data='{"a":1e400}')
        body = _rpc("message/send", f'{{"message":{message}}}')
        sent = (await kit.post("/", body, {})).json()
    task_id = sent["result"]["id"]
    assert await _total(kit, "") == before + 1  # (how the refusal tests count 0.3 tasks)
    answer = (await kit.post("/", _rpc("tasks/get", f'{{"id":"{task_id}"}}'), {})).json()
    assert answer["result"]["history"][0]["parts"][0]["data"] == {"a": "Infinity"}, answer
    got = await kit.grpc.stub.GetTask(pb03.GetTaskRequest(name=f"tasks/{task_id}"))
    assert math.isinf(got.history[0].content[0].data.data["a"])


# --- fuzz: a non-finite number anywhere, through every decoder --------------------------------

_POISON = [math.inf, -math.inf, math.nan]
_KEYS = st.text("abcxyz", max_size=4)
_PLAIN = st.one_of(st.integers(-9, 9), st.text("abc", max_size=3), st.booleans(), st.none())


def _planted(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """JSON values holding `leaf` once, at any depth, beside ordinary members."""
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda value, key, others: {**others, key: value}, inner, _KEYS,
                  st.dictionaries(_KEYS, _PLAIN, max_size=2)),
        st.builds(lambda value, before, after: [*before, value, *after], inner,
                  st.lists(_PLAIN, max_size=2), st.lists(_PLAIN, max_size=2))), max_leaves=8)


_WHERE = st.sampled_from(["data", "message.metadata", "request.metadata"])
# JSON leaves, each with the error it must get: infinities as numbers too large for a double
# (NaN has no JSON number text), a lone surrogate (not Unicode text: a parse error) and a
# value nested past the body's depth limit (an invalid request).
_SURROGATE, _DEEP = "SURROGATE", "DEEP"
_JSON_LEAVES = st.sampled_from([math.inf, -math.inf, _SURROGATE, _DEEP])
_JSON_CODES = {_SURROGATE: -32700, _DEEP: -32600}


def _json_text(value: Any) -> str:
    return (json.dumps(value).replace("-Infinity", "-1e999").replace("Infinity", "1e400")
            .replace(f'"{_SURROGATE}"', '"\\ud800"')
            .replace(f'"{_DEEP}"', '{"d":' * 70 + "1" + "}" * 70))


@pytest.fixture(scope="module")
def fuzz_kit() -> Iterator[tuple[Operations, Env03, httpx.AsyncClient, asyncio.AbstractEventLoop]]:
    """One kit for every example, on the suite's background loop (a thread of its own)."""
    loop = background_loop()
    ops = memory_operations()
    running = open_env03(ops)
    env = asyncio.run_coroutine_threadsafe(running.__aenter__(), loop).result(30)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(ops)),
                             base_url="http://a2a.test")
    try:
        yield ops, env, http, loop
    finally:
        asyncio.run_coroutine_threadsafe(http.aclose(), loop).result(30)
        asyncio.run_coroutine_threadsafe(running.__aexit__(None, None, None), loop).result(30)
        asyncio.run_coroutine_threadsafe(end_tasks(), loop).result(30)


def _nothing_stored(ops: Operations, loop: asyncio.AbstractEventLoop) -> None:
    page = asyncio.run_coroutine_threadsafe(
        ops.store.list(Scope("", "anonymous"), TaskQuery(page_size=10)), loop).result(30)
    assert page.tasks == []


@settings(max_examples=60, deadline=None)
@given(leaf=_JSON_LEAVES, where=_WHERE, generation=st.sampled_from(["1.0", "0.3"]),
       data=st.data())
def test_fuzz_json_decoders_refuse_hostile_values(fuzz_kit: Any, leaf: Any, where: str,
                                                 generation: str, data: st.DataObject) -> None:
    ops, _, http, loop = fuzz_kit
    text = _json_text(data.draw(_planted(st.just(leaf))))
    part = text if where == "data" else '{"k":1}'
    metadata = text if where == "message.metadata" else "{}"
    if not metadata.startswith("{"):
        metadata = f'{{"v":{metadata}}}'
    if generation == "1.0":
        message = _message10(part, metadata)
        method, headers = "SendMessage", V10
    else:
        # A 0.3 data part holds an object: the value goes in one of its members.
        message = _message03(f'{{"v":{part}}}' if where == "data" else part, metadata)
        method, headers = "message/send", {}
    request_meta = text if where == "request.metadata" else "{}"
    if not request_meta.startswith("{"):
        request_meta = f'{{"v":{request_meta}}}'
    body = _rpc(method, f'{{"message":{message},"metadata":{request_meta}}}')
    reply = asyncio.run_coroutine_threadsafe(http.post("/", content=body.encode(), headers={
        "content-type": "application/json", **headers}), loop).result(30)
    note(reply.text[:300])
    assert reply.json()["error"]["code"] == _JSON_CODES.get(leaf, -32602), reply.text
    _nothing_stored(ops, loop)


@settings(max_examples=60, deadline=None)
@given(value=_planted(st.sampled_from(_POISON)), where=_WHERE,
       generation=st.sampled_from(["1.0", "0.3"]))
def test_fuzz_protobuf_decoders_refuse_non_finite_numbers(fuzz_kit: Any, value: Any, where: str,
                                                         generation: str) -> None:
    ops, env, _, loop = fuzz_kit
    holder = struct_pb2.Struct()
    holder.update({"v": value})
    if generation == "1.0":
        request = pb.SendMessageRequest(message=pb.Message(
            message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="hi")]))
        target = {"data": lambda: request.message.parts.add().data.CopyFrom(holder.fields["v"]),
                  "message.metadata": lambda: request.message.metadata.CopyFrom(holder),
                  "request.metadata": lambda: request.metadata.CopyFrom(holder)}
        call = env.stub10.SendMessage
        metadata: Any = (("a2a-version", "1.0"),)
    else:
        request = pb03.SendMessageRequest(request=pb03.Message(
            message_id=str(uuid.uuid4()), role=pb03.ROLE_USER, content=[pb03.Part(text="hi")]))
        target = {"data": lambda: request.request.content.add().data.data.CopyFrom(holder),
                  "message.metadata": lambda: request.request.metadata.CopyFrom(holder),
                  "request.metadata": lambda: request.metadata.CopyFrom(holder)}
        call, metadata = env.stub.SendMessage, ()
    target[where]()
    # The stub sends the request's bytes: the server's protobuf decoder reads them.
    async def send() -> Any:
        return await call(request, metadata=metadata)

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        asyncio.run_coroutine_threadsafe(send(), loop).result(30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
    _nothing_stored(ops, loop)
