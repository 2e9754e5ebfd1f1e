"""The A2A 0.3 JSON-RPC family on the 1.0 route: every 0.3 method with its 0.3 shapes, SSE
framing and `final`, push config CRUD, the version routing matrix and bad 0.3 input; through
the ASGI app and the real Mangum handler (API Gateway and Function URL events), on the
embedded store and on DynamoDB Local."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.examples.echo import EchoAgent
from a2akit.examples.input_required import GreeterAgent
from a2akit.examples.streaming import StreamingAgent
from a2akit.settings import Settings
from tests.compat03.client03 import Caller03, message03
from tests.compat03.conftest import V1

# --- message/send, tasks/get, tasks/cancel ---------------------------------------------------


@pytest.mark.spec("0.3 7.1", "MUST", (
    "message/send answers a Task in the 0.3 JSON shape (kind, parts)"), generation="0.3")
def test_send_answers_a_bare_task_in_the_03_shape(rpc: Caller03) -> None:
    message = message03("hi there")
    message["parts"] += [
        {"kind": "file", "file": {"name": "x.txt", "mimeType": "text/plain", "bytes": "aGk="}},
        {"kind": "file", "file": {"uri": "https://example.com/f.txt", "mimeType": "text/plain"}},
        {"kind": "data", "data": {"k": 1}},
    ]
    task = rpc.result("message/send", {"message": message})
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["status"]["timestamp"].endswith("Z")
    sent = task["history"][0]
    assert sent["kind"] == "message" and sent["role"] == "user"
    assert sent["messageId"] == message["messageId"] and sent["taskId"] == task["id"]
    assert sent["parts"] == [
        {"kind": "text", "text": "hi there"},
        {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "x.txt"}},
        {"kind": "file", "file": {"uri": "https://example.com/f.txt", "mimeType": "text/plain"}},
        {"kind": "data", "data": {"k": 1.0}},
    ]
    assert task["artifacts"][0]["parts"][0] == {"kind": "text", "text": "hi there"}
    assert "kind" not in task["artifacts"][0]


def test_a_message_without_kinds_is_accepted(rpc: Caller03) -> None:
    # The 0.3 spec's own examples (9.2-9.7) omit `kind`; the schema's variants tell it apart.
    message = {"messageId": str(uuid.uuid4()), "role": "user", "parts": [{"text": "plain"}]}
    task = rpc.result("message/send", {"message": message})
    assert task["history"][0]["parts"] == [{"kind": "text", "text": "plain"}]


def test_get_with_history_length_and_zero_as_no_limit(connect: Any) -> None:
    greeter = connect(GreeterAgent())
    task = greeter.send("hi")
    assert task["status"]["state"] == "input-required"
    greeter.result("message/send", {"message": message03("Ada", taskId=task["id"])})
    full = greeter.result("tasks/get", {"id": task["id"]})
    assert full["status"]["state"] == "completed" and len(full["history"]) >= 3
    assert greeter.result("tasks/get", {"id": task["id"], "historyLength": 0}) == full
    one = greeter.result("tasks/get", {"id": task["id"], "historyLength": 1})
    assert one["history"] == full["history"][-1:]


def test_get_unknown_task_is_task_not_found_with_an_object_data(rpc: Caller03) -> None:
    error = rpc.error("tasks/get", {"id": "nope"})
    assert error["code"] == -32001
    assert error["data"] == {"reason": "TASK_NOT_FOUND", "taskId": "nope"}


def test_cancel(connect: Any) -> None:
    greeter = connect(GreeterAgent())
    task = greeter.send("hi")
    canceled = greeter.result("tasks/cancel", {"id": task["id"], "metadata": {"why": "test"}})
    assert canceled["kind"] == "task" and canceled["status"]["state"] == "canceled"
    again = greeter.error("tasks/cancel", {"id": task["id"]})
    assert again["code"] == -32002 and again["data"]["reason"] == "TASK_NOT_CANCELABLE"
    # The state as a 0.3 caller names it, not the 1.0 enum's TASK_STATE_CANCELED.
    assert again["message"].endswith(" canceled"), again["message"]
    assert greeter.error("tasks/cancel", {"id": "nope"})["code"] == -32001


def test_non_blocking_send_returns_at_once(connect: Any) -> None:
    streamer = connect(StreamingAgent())
    task = streamer.send(" ".join(["w"] * 40), blocking=False)
    assert task["status"]["state"] in ("submitted", "working")


def test_reference_task_ids_reach_the_task(rpc: Caller03) -> None:
    first = rpc.send("one")
    message = message03("two", referenceTaskIds=[first["id"]])
    task = rpc.result("message/send", {"message": message})
    got = rpc.client.result("GetTask", {"id": task["id"]}, headers=V1)
    assert got["history"][0]["referenceTaskIds"] == [first["id"]]


def test_a_repeated_message_id_answers_the_first_task(rpc: Caller03) -> None:
    message = message03("once")
    first = rpc.result("message/send", {"message": message})
    again = rpc.result("message/send", {"message": message})
    assert again["id"] == first["id"]


# --- message/stream and tasks/resubscribe -----------------------------------------------------


@pytest.mark.spec("0.3 7.2", "MUST",
                  "message/stream events in order, the last status update final", generation="0.3")
def test_stream_framing_order_and_final(connect: Any) -> None:
    streamer = connect(StreamingAgent())
    reply, events = streamer.stream("message/stream", {"message": message03("one two")})
    assert reply.headers["cache-control"] == "no-store"
    assert all(e["jsonrpc"] == "2.0" and e["id"] == 1 and "result" in e for e in events)
    results = [e["result"] for e in events]
    assert [r["kind"] for r in results] == ["task", "status-update", "artifact-update",
                                           "artifact-update", "status-update"]
    assert results[0]["status"]["state"] == "submitted"
    assert results[1]["status"]["state"] == "working" and results[1]["final"] is False
    chunks = results[2:4]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["one", " two"]
    assert [(c["append"], c["lastChunk"]) for c in chunks] == [(False, False), (True, True)]
    assert results[-1]["status"]["state"] == "completed" and results[-1]["final"] is True


def test_a_stream_ending_at_input_required_is_final(connect: Any) -> None:
    greeter = connect(GreeterAgent())
    _, events = greeter.stream("message/stream", {"message": message03("hi")})
    last = events[-1]["result"]
    assert last["kind"] == "status-update"
    assert last["status"]["state"] == "input-required" and last["final"] is True


def test_stream_of_an_agent_that_replies_with_a_message(connect: Any) -> None:
    class Replier:
        name = "Replier"

        async def execute(self, context: Any, task: Any) -> None:
            await task.reply("just this")

    replier = connect(Replier())
    _, events = replier.stream("message/stream", {"message": message03("hi")})
    assert len(events) == 1
    assert events[0]["result"]["kind"] == "message"
    assert events[0]["result"]["role"] == "agent"
    assert replier.send("hi")["kind"] == "message"


def test_stream_errors_before_the_first_event_are_data_events(rpc: Caller03) -> None:
    _, events = rpc.stream("message/stream", {"message": message03(taskId="nope")})
    assert len(events) == 1 and events[0]["error"]["code"] == -32001
    _, events = rpc.stream("tasks/resubscribe", {"id": "nope"})
    assert len(events) == 1 and events[0]["error"]["code"] == -32001
    assert events[0]["error"]["data"]["reason"] == "TASK_NOT_FOUND"


@pytest.mark.spec("0.3 7.9", "MUST", "tasks/resubscribe follows a running task", generation="0.3")
def test_resubscribe_on_a_running_task(connect: Any) -> None:
    streamer = connect(StreamingAgent())
    task = streamer.send("a b c d e f g h", blocking=False)
    _, events = streamer.stream("tasks/resubscribe", {"id": task["id"]})
    results = [e["result"] for e in events]
    assert results[0]["kind"] == "task" and results[0]["id"] == task["id"]
    assert results[-1]["kind"] == "status-update" and results[-1]["final"] is True
    assert results[-1]["status"]["state"] == "completed"
    assert all(r["final"] is False for r in results[1:-1] if r["kind"] == "status-update")


def test_resubscribe_on_a_finished_task_answers_the_task(rpc: Caller03) -> None:
    task = rpc.send("done already")
    _, events = rpc.stream("tasks/resubscribe", {"id": task["id"]})
    assert len(events) == 1
    assert events[0]["result"]["kind"] == "task"
    assert events[0]["result"]["status"]["state"] == "completed"


# --- push notification configs --------------------------------------------------------------


@pytest.mark.spec(
    "0.3 7.5", "MUST", "tasks/pushNotificationConfig/set, get, list and delete", generation="0.3")
def test_push_config_crud(rpc: Caller03) -> None:
    task = rpc.send("push me")
    tid = task["id"]
    default = rpc.result("tasks/pushNotificationConfig/set", {
        "taskId": tid, "pushNotificationConfig": {
            "url": "https://93.184.216.34/a", "token": "tok",
            "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "secret"}}})
    assert default == {"taskId": tid, "pushNotificationConfig": {
        "url": "https://93.184.216.34/a", "id": tid, "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"}}}
    named = rpc.result("tasks/pushNotificationConfig/set", {
        "taskId": tid, "pushNotificationConfig": {"url": "https://93.184.216.34/b",
                                                  "id": "cfg-b"}})
    assert named["pushNotificationConfig"]["id"] == "cfg-b"
    got = rpc.result("tasks/pushNotificationConfig/get",
                     {"id": tid, "pushNotificationConfigId": "cfg-b"})
    assert got == named
    # Without a config id (the deprecated TaskIdParams form): the default config, id = task id.
    assert rpc.result("tasks/pushNotificationConfig/get", {"id": tid}) == default
    listed = rpc.result("tasks/pushNotificationConfig/list", {"id": tid})
    assert isinstance(listed, list)
    assert sorted(c["pushNotificationConfig"]["id"] for c in listed) == sorted([tid, "cfg-b"])
    reply = rpc.call("tasks/pushNotificationConfig/delete",
                     {"id": tid, "pushNotificationConfigId": tid})
    assert reply.json() == {"jsonrpc": "2.0", "id": reply.json()["id"], "result": None}
    # Now without a default config: the first one there is.
    assert rpc.result("tasks/pushNotificationConfig/get", {"id": tid}) == named
    rpc.result("tasks/pushNotificationConfig/delete",
               {"id": tid, "pushNotificationConfigId": "cfg-b"})
    assert rpc.result("tasks/pushNotificationConfig/list", {"id": tid}) == []
    assert rpc.error("tasks/pushNotificationConfig/get", {"id": tid})["code"] == -32001
    assert rpc.error("tasks/pushNotificationConfig/list", {"id": "nope"})["code"] == -32001


def test_push_config_in_the_send_configuration(rpc: Caller03) -> None:
    task = rpc.send("x", pushNotificationConfig={"url": "https://93.184.216.34/c"})
    listed = rpc.result("tasks/pushNotificationConfig/list", {"id": task["id"]})
    assert [c["pushNotificationConfig"]["url"] for c in listed] == ["https://93.184.216.34/c"]


def test_push_config_off_is_not_supported(connect: Any) -> None:
    rpc = connect(settings=Settings(allow_anonymous=True))
    task = rpc.send("x")
    error = rpc.error("tasks/pushNotificationConfig/set", {
        "taskId": task["id"], "pushNotificationConfig": {"url": "https://93.184.216.34/"}})
    assert error["code"] == -32003


# --- the extended card ------------------------------------------------------------------------


def test_extended_card_in_the_03_shape(connect: Any) -> None:
    from a2akit.generated import a2a_pb2 as pb

    class WithExtendedCard(EchoAgent):
        extended_card = pb.AgentCard(name="Echo, extended", description="for members",
                                     version="2.0")

    settings = Settings(bearer_tokens={"tok-a": "alice"}, extended_agent_card=True)
    alice = {"Authorization": "Bearer tok-a"}
    rpc = connect(WithExtendedCard(), settings)
    card = rpc.result("agent/getAuthenticatedExtendedCard", headers=alice)
    assert card["name"] == "Echo, extended" and card["version"] == "2.0"
    assert "supportedInterfaces" not in card and card["protocolVersion"].startswith("0.3")
    reply = rpc.call("agent/getAuthenticatedExtendedCard")
    assert reply.status == 401 and "www-authenticate" in reply.headers
    plain = connect(EchoAgent(), settings)
    assert plain.error("agent/getAuthenticatedExtendedCard", headers=alice)["code"] == -32007


# --- cards ----------------------------------------------------------------------------------


def test_the_card_serves_both_generations(kind: str) -> None:
    from a2akit.generated import a2a_pb2 as pb
    from a2akit.protojson import from_json
    from http_service.app import create_app
    from tests.jsonrpc.client import lambda_event_loop, make_client
    from tests.support.harness import memory_operations

    settings = Settings(allow_anonymous=True, public_url="https://agent.example.com/a2a/",
                        grpc_address="grpc.example.com:443", api_keys="[]")
    with lambda_event_loop() if kind != "asgi" else _nothing():
        client = make_client(kind, create_app(memory_operations(settings=settings)))
        reply = client.get("/a2a/.well-known/agent-card.json")
        card = reply.json()
        # A 1.0 reader: the 1.0 members, the 1.0 interfaces first.
        parsed = from_json(card, pb.AgentCard)
        assert [(i.protocol_binding, i.protocol_version) for i in
                parsed.supported_interfaces] == [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"),
                                                 ("GRPC", "1.0"), ("JSONRPC", "0.3"),
                                                 ("GRPC", "0.3")]
        # A 0.3 reader of the same document: the 0.3 schema's required members.
        assert card["url"] == "https://agent.example.com/a2a/"
        assert card["preferredTransport"] == "JSONRPC"
        assert card["protocolVersion"].startswith("0.3")
        # The main interface is listed again, as the 0.3 spec (5.6.2) asks.
        assert card["additionalInterfaces"] == [
            {"url": "https://agent.example.com/a2a/", "transport": "JSONRPC"},
            {"url": "grpc.example.com:443", "transport": "GRPC"}]
        for member in ("name", "description", "version", "capabilities", "defaultInputModes",
                       "defaultOutputModes", "skills"):
            assert member in card
        # The 0.3 form: the same card, nothing of 1.0.
        legacy = client.get("/a2a/.well-known/agent.json")
        pure = legacy.json()
        assert "supportedInterfaces" not in pure and "securityRequirements" not in pure
        assert {k: pure[k] for k in ("url", "preferredTransport", "protocolVersion",
                                     "additionalInterfaces", "name")} == {
            k: card[k] for k in ("url", "preferredTransport", "protocolVersion",
                                 "additionalInterfaces", "name")}
        for answer in (reply, legacy):
            assert answer.headers["cache-control"] == "public, max-age=300"
            path = "/a2a/.well-known/" + ("agent.json" if answer is legacy
                                          else "agent-card.json")
            again = client.get(path, {"If-None-Match": answer.headers["etag"]})
            assert again.status == 304
        assert reply.headers["etag"] != legacy.headers["etag"]
        client.close()


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield
