"""The dispatcher Lambda (`handlers.push.handler`) called with real DynamoDB Streams events: the
records DynamoDB Local's stream holds after tasks ran through both bindings over the DynamoDB
store, laid out as Lambda delivers them, through the stack's filter.

The front doors run with `A2A_PUSH_DELIVERY=stream`, as on AWS: they send nothing themselves.
The tests run in the suite's event loop (gRPC's poller must never see a loop that closed
under one of its calls); the handler runs its own loop, as on Lambda, in a worker thread.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import uuid
from typing import Any

import pytest

from a2akit import protojson
from a2akit.auth import ANONYMOUS
from a2akit.runtime import build_operations
from a2akit.settings import ENV, STREAM, Settings
from a2akit.store import table
from a2akit.store.base import Scope
from infra.push_filter import PUSH_FILTER_PATTERN
from scripts.dynamodb_local import CREDENTIALS
from tests.push.conftest import DeadLetterQueue
from tests.push.test_delivery import _config, _Quick, _send
from tests.support.event_filter import matches
from tests.support.messages import send_params
from tests.support.streams import lambda_event, stream_records
from tests.support.webhooks import Receiver, Reply

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SCOPE = Scope("", ANONYMOUS)


class _Context:
    """What the handler reads of Lambda's context object."""

    def __init__(self, seconds: float = 300.0) -> None:
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


def _front_door(ddb_endpoint: str, table_name: str) -> Settings:
    return Settings(allow_anonymous=True, push_notifications=True, push_delivery=STREAM,
                    push_allow_http=True, push_allow_cidrs=("127.0.0.1/32",),
                    table=table_name, dynamodb_endpoint=ddb_endpoint)


async def _run_tasks(settings: Settings, hook: Receiver, texts: dict[str, str]
                     ) -> dict[str, str]:
    """One task per binding (binding -> text), each with a config for `hook`; their ids."""
    ops = build_operations(settings, agent=_Quick())
    try:
        return {binding: await _send(binding, ops, send_params(text, push_config=_config(hook)))
                for binding, text in texts.items()}
    finally:
        await ops.close()


async def _stored(settings: Settings, task_id: str) -> list[dict[str, Any]]:
    ops = build_operations(settings, agent=_Quick())
    try:
        events = await ops.store.events_after(SCOPE, task_id, 0)
        return [protojson.to_json(event.event) for event in events]
    finally:
        await ops.close()


async def _records(endpoint: str, table_name: str) -> dict[str, Any]:
    """The table's stream so far, as the Lambda event of one batch."""
    return lambda_event(await asyncio.to_thread(stream_records, endpoint, table_name))


class _Dispatcher:
    """`handlers.push` imported as Lambda would, with the stack's environment (plus the
    development allowances for the loopback receiver); `handle` calls the entry point in a
    worker thread, where it runs its own event loop as on Lambda."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, ddb_endpoint: str, table_name: str,
                 dead_letters: DeadLetterQueue) -> None:
        environment = {
            **CREDENTIALS, "AWS_LAMBDA_FUNCTION_NAME": "a2akit-push-test",
            ENV.TABLE: table_name, ENV.DYNAMODB_ENDPOINT: ddb_endpoint,
            ENV.PUSH_NOTIFICATIONS: "true", ENV.PUSH_DELIVERY: STREAM,
            ENV.PUSH_ALLOW_HTTP: "true", ENV.PUSH_ALLOW_CIDRS: "127.0.0.1/32",
            ENV.PUSH_ATTEMPTS: "2", ENV.PUSH_BACKOFF_SECONDS: "0.01",
            ENV.PUSH_BACKOFF_CAP_SECONDS: "0.05", ENV.PUSH_TIMEOUT_SECONDS: "2",
            ENV.PUSH_DLQ_URL: dead_letters.url, ENV.SQS_ENDPOINT: dead_letters.endpoint,
        }
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        self.monkeypatch = monkeypatch

    async def __aenter__(self) -> _Dispatcher:
        sys.modules.pop("handlers.push", None)
        self.module = await asyncio.to_thread(importlib.import_module, "handlers.push")
        return self

    async def handle(self, event: dict[str, Any], seconds: float = 300.0) -> Any:
        return await asyncio.to_thread(self.module.handler, event, _Context(seconds))

    async def __aexit__(self, *exc: object) -> None:
        sys.modules.pop("handlers.push", None)
        module = self.module

        def close() -> None:
            module._loop.run_until_complete(module.dispatcher.aclose())
            module._loop.run_until_complete(module.dispatcher.store.close())
            module._loop.close()

        await asyncio.to_thread(close)


async def test_every_event_reaches_the_webhook_in_order_through_the_stream_dispatcher(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _front_door(ddb_endpoint, table_name)
    with Receiver() as hook:
        tasks = await _run_tasks(settings, hook,
                                 {"jsonrpc": "one two three", "grpc": "four five"})
        assert hook.requests == []  # the front doors deliver nothing themselves
        event = await _records(ddb_endpoint, table_name)
        passed = [record for record in event["Records"] if matches(PUSH_FILTER_PATTERN, record)]
        # Snapshots, configs and message claims are in the stream; only events pass.
        assert len(passed) < len(event["Records"])
        assert all(record["dynamodb"]["Keys"]["sk"]["S"].startswith("EV#") for record in passed)
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            answer = await dispatcher.handle({"Records": passed})
        assert answer == {"batchItemFailures": []}
        received = hook.requests
    for task_id in tasks.values():
        expected = await _stored(settings, task_id)
        bodies = [json.loads(r.body) for r in received
                  if _task_of(json.loads(r.body)) == task_id]
        assert bodies == expected
        assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(received) == len(passed)
    for request in received:
        assert request.headers["content-type"] == "application/a2a+json"
        assert request.headers["authorization"] == "Bearer webhook-secret"
        assert request.headers["x-a2a-notification-token"] == "notify-token"


async def test_the_webhooks_and_lines_of_the_stream_dispatcher_continue_the_door_trace(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The caller's `traceparent` (JSON-RPC header, gRPC metadata) reaches the door; the
    events its task writes keep that trace in the table, so the dispatcher, reading only the
    stream, continues it: each webhook's `traceparent` and each of its lines about the task
    carry the door's trace id, under a span of the dispatcher's own."""
    settings = _front_door(ddb_endpoint, table_name)
    traces = {"jsonrpc": uuid.uuid4().hex, "grpc": uuid.uuid4().hex}
    caller_span = "b7ad6b7169203331"
    monkeypatch.setenv(ENV.LOG_LEVEL, "DEBUG")
    with Receiver() as hook:
        ops = build_operations(settings, agent=_Quick())
        try:
            tasks = {await _send(binding, ops, send_params("one two", push_config=_config(hook)),
                                 {"traceparent": f"00-{trace_id}-{caller_span}-01"}): trace_id
                     for binding, trace_id in traces.items()}
        finally:
            await ops.close()
        event = await _records(ddb_endpoint, table_name)
        passed = [record for record in event["Records"] if matches(PUSH_FILTER_PATTERN, record)]
        capsys.readouterr()  # the door's lines: only the dispatcher's are read below
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            assert await dispatcher.handle({"Records": passed}) == {"batchItemFailures": []}
        received = hook.requests
    assert len(received) == len(passed)
    spans = set()
    for request in received:
        version, trace_id, span_id, flags = request.headers["traceparent"].split("-")
        assert (version, trace_id, flags) == ("00", tasks[_task_of(json.loads(request.body))],
                                              "01")
        assert span_id != caller_span
        spans.add(span_id)
    output = capsys.readouterr()
    lines = [json.loads(text) for text in (output.out + output.err).splitlines()
             if text.startswith("{")]
    about = [line for line in lines if line.get("task_id") in tasks]
    assert {line["task_id"] for line in about} == set(tasks)
    for line in about:  # log lines (stderr) and metric lines (stdout, PushDelivered)
        assert line.get("trace_id") == tasks[line["task_id"]], line
    # The webhook's parent span is the dispatcher's, which its log lines name.
    assert spans <= {line["span_id"] for line in about if "span_id" in line}


async def test_unfiltered_records_deliver_the_same_events_once(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the mapping's filter (a misconfigured stack), snapshots, lease renewals and
    configs still reach no webhook."""
    settings = _front_door(ddb_endpoint, table_name)
    with Receiver() as hook:
        (task_id,) = (await _run_tasks(settings, hook, {"jsonrpc": "one two"})).values()
        event = await _records(ddb_endpoint, table_name)
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            assert await dispatcher.handle(event) == {"batchItemFailures": []}
        assert [json.loads(r.body) for r in hook.requests] == await _stored(settings, task_id)


async def test_a_failing_webhook_goes_to_the_dead_letter_queue_without_failing_the_batch(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    settings = _front_door(ddb_endpoint, table_name)
    with Receiver() as hook:
        (task_id,) = (await _run_tasks(settings, hook, {"grpc": "one"})).values()
        event = await _records(ddb_endpoint, table_name)
        hook.plan(Reply(500), Reply(500))  # both attempts at the first event
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            assert await dispatcher.handle(event) == {"batchItemFailures": []}
        expected = await _stored(settings, task_id)
        assert [json.loads(r.body) for r in hook.requests] == [expected[0], *expected]
    (record,) = dead_letters.records()
    assert (record["taskId"], record["seq"], record["status"]) == (task_id, 1, 500)
    line = next(json.loads(text) for text in capsys.readouterr().out.splitlines()
                if text.startswith("{") and task_id in text and "PushDeliveryFailed" in text)
    assert line["FunctionName"] == "a2akit-push-test"  # this stack's alarm dimension
    assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["FunctionName"]]


async def test_a_record_it_cannot_settle_is_retried_from_there_and_other_tasks_go_on(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The dead-letter queue is gone: a failed delivery cannot be kept, so that record (and
    the rest of its task) is reported for retry; the other task is delivered in full."""
    settings = _front_door(ddb_endpoint, table_name)
    with Receiver() as hook, Receiver(default=Reply(400)) as broken:
        (good,) = (await _run_tasks(settings, hook, {"jsonrpc": "one two"})).values()
        (bad,) = (await _run_tasks(settings, broken, {"grpc": "three"})).values()
        event = await _records(ddb_endpoint, table_name)
        dead_letters.sqs.delete_queue(QueueUrl=dead_letters.url)
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            answer = await dispatcher.handle(event)
        first_bad = min(int(r["dynamodb"]["SequenceNumber"]) for r in event["Records"]
                        if r["eventName"] == "INSERT" and bad in r["dynamodb"]["Keys"]["pk"]["S"]
                        and r["dynamodb"]["Keys"]["sk"]["S"].startswith("EV#"))
        assert [int(f["itemIdentifier"]) for f in answer["batchItemFailures"]] == [first_bad]
        assert len(broken.requests) == 1  # the first event once (a 400 is final); no more
        assert [json.loads(r.body) for r in hook.requests] == await _stored(settings, good)


async def test_out_of_time_the_rest_is_left_for_the_retry(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _front_door(ddb_endpoint, table_name)
    with Receiver() as hook:
        await _run_tasks(settings, hook, {"jsonrpc": "one"})
        event = await _records(ddb_endpoint, table_name)
        first_event = min(int(r["dynamodb"]["SequenceNumber"]) for r in event["Records"]
                          if r["eventName"] == "INSERT"
                          and r["dynamodb"]["Keys"]["sk"]["S"].startswith("EV#"))
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            # Less time left than the margin and one request's timeout: nothing starts.
            answer = await dispatcher.handle(event, seconds=1.0)
        assert [int(f["itemIdentifier"]) for f in answer["batchItemFailures"]] == [first_event]
        assert hook.requests == []
    assert dead_letters.records() == []


def _task_of(body: dict[str, Any]) -> str:
    if "task" in body:
        return str(body["task"]["id"])
    (update,) = body.values()
    return str(update["taskId"])


async def test_an_event_too_large_for_one_item_reaches_the_webhook_whole(
        ddb_endpoint: str, table_name: str, dead_letters: DeadLetterQueue,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A 500 KB message: the task event that starts its stream is over DynamoDB's 400 KB
    item, so it is stored in parts and its stream record carries only the first part (docs/
    store.md, "Large tasks"); the webhook still gets it whole, in order with the others."""
    settings = _front_door(ddb_endpoint, table_name)
    words = " ".join(("x" if i % 2 else "y") * 250_000 for i in range(2))
    with Receiver() as hook:
        (task_id,) = (await _run_tasks(settings, hook, {"jsonrpc": words})).values()
        event = await _records(ddb_endpoint, table_name)
        passed = [record for record in event["Records"] if matches(PUSH_FILTER_PATTERN, record)]
        # The parts of large items never pass the filter: only whole events' heads do.
        assert all(record["dynamodb"]["Keys"]["sk"]["S"].startswith("EV#") for record in passed)
        assert any(table.PARTS in record["dynamodb"]["NewImage"] for record in passed)
        async with _Dispatcher(monkeypatch, ddb_endpoint, table_name, dead_letters) as dispatcher:
            assert await dispatcher.handle({"Records": passed}) == {"batchItemFailures": []}
        bodies = [json.loads(r.body) for r in hook.requests]
    expected = await _stored(settings, task_id)
    assert bodies == expected
    assert len(json.dumps(expected[0])) > 500_000
