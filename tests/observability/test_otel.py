"""OpenTelemetry spans (a2akit/telemetry.py) with the SDK and an in-memory exporter: SendMessage
on each binding is a server span named after the method, with the task id, and a child span
for the store write; the caller's traceparent is its parent; in queue mode the worker's span
continues the same trace. Off, no span is made and nothing of OpenTelemetry is imported."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from opentelemetry import trace as otel
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.testclient import TestClient

from a2akit import telemetry
from a2akit.execution.worker import Worker
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.dynamodb import DynamoDBStore
from grpc_service import server as grpc_server
from http_service.app import create_app
from tests.execution.sqs import make_queues
from tests.store.conftest import TABLE
from tests.support.harness import ANON, memory_operations
from tests.support.moto import client as aws_client

EXPORTER = InMemorySpanExporter()
OTEL = dataclasses.replace(ANON, otel=True)
CALLER_TRACE, CALLER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    if not isinstance(otel.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        otel.set_tracer_provider(provider)  # once per process: OpenTelemetry's rule
    telemetry.configure(Settings(otel=True))
    EXPORTER.clear()
    yield EXPORTER
    telemetry.configure(Settings())


def _message() -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def _server_span(exporter: InMemorySpanExporter, name: str) -> Any:
    (server,) = [s for s in exporter.get_finished_spans()
                 if s.name == name and s.kind == otel.SpanKind.SERVER]
    return server


def _children(exporter: InMemorySpanExporter, parent: Any, name: str) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name == name and s.parent is not None
            and s.parent.span_id == parent.context.span_id]


@pytest.mark.parametrize("binding", ["JSON-RPC", "HTTP+JSON"])
def test_an_http_send_is_a_server_span_with_its_store_write(
        spans: InMemorySpanExporter, binding: str) -> None:
    app = TestClient(create_app(memory_operations(settings=OTEL)))
    headers = {"A2A-Version": "1.0", "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"}
    if binding == "JSON-RPC":
        reply = app.post("/", headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": _message()}}).json()["result"]
    else:
        reply = app.post("/message:send", headers=headers, json={"message": _message()}).json()
    task_id = reply["task"]["id"]
    server = _server_span(spans, "SendMessage")
    assert server.attributes["a2a.binding"] == binding
    assert server.attributes["a2a.task.id"] == task_id
    assert server.attributes["a2a.outcome"] == "ok"
    assert "a2a.owner" not in server.attributes
    assert f"{server.context.trace_id:032x}" == CALLER_TRACE  # the caller's trace goes on
    assert f"{server.parent.span_id:016x}" == CALLER_SPAN
    assert _children(spans, server, "a2a.store.write")


def test_a_refused_call_is_a_span_with_its_outcome(spans: InMemorySpanExporter) -> None:
    app = TestClient(create_app(memory_operations(settings=OTEL)))
    app.post("/", headers={"A2A-Version": "1.0"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}})
    assert _server_span(spans, "GetTask").attributes["a2a.outcome"] == "TaskNotFoundError"


@pytest.mark.anyio
async def test_a_grpc_send_is_a_server_span_with_its_store_write(
        spans: InMemorySpanExporter) -> None:
    ops = memory_operations(settings=OTEL)
    running = await grpc_server.serve(OTEL, operations=ops, port=0, host="127.0.0.1")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            send = channel.unary_unary(
                "/lf.a2a.v1.A2AService/SendMessage",
                request_serializer=pb.SendMessageRequest.SerializeToString,
                response_deserializer=pb.SendMessageResponse.FromString)
            reply = await send(pb.SendMessageRequest(message=pb.Message(
                message_id="m-1", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])),
                metadata=(("a2a-version", "1.0"),))
    finally:
        await running.shutdown(0)
    server = _server_span(spans, "SendMessage")
    assert server.attributes["a2a.binding"] == "gRPC"
    assert server.attributes["a2a.task.id"] == reply.task.id
    assert _children(spans, server, "a2a.store.write")


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_workers_span_continues_the_doors_trace(
        spans: InMemorySpanExporter, ddb_endpoint: str, moto_endpoint: str,
        ddb_client: Any) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    queue, _ = make_queues(sqs)
    settings = Settings(table=TABLE, dynamodb_endpoint=ddb_endpoint, allow_anonymous=True,
                        execution="queue", queue_url=queue, sqs_endpoint=moto_endpoint,
                        otel=True)
    store = DynamoDBStore(TABLE, ddb_client)
    app = TestClient(create_app(build_operations(settings, store=store)))
    reply = app.post("/", headers={"A2A-Version": "1.0"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": _message(), "configuration": {"returnImmediately": True}}}).json()
    door = _server_span(spans, "SendMessage")
    assert _children(spans, door, "a2a.queue.send") and _children(spans, door, "a2a.store.write")
    got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=1, WaitTimeSeconds=5)
    (message,) = got["Messages"]
    record = {"messageId": message["MessageId"], "body": message["Body"],
              "attributes": {"ApproximateReceiveCount": "1"}}
    worker = Worker(settings, store, build_operations(settings, store=store).agent)
    assert await worker.handle_batch([record], lambda: 10.0) == {"batchItemFailures": []}
    await asyncio.sleep(0)
    (run,) = [s for s in spans.get_finished_spans() if s.name == "RunTask"]
    assert run.kind == otel.SpanKind.CONSUMER
    assert run.context.trace_id == door.context.trace_id  # one trace, door to worker
    assert run.parent.span_id == door.context.span_id
    assert run.attributes["a2a.task.id"] == reply["result"]["task"]["id"]
    assert _children(spans, run, "a2a.store.write")
