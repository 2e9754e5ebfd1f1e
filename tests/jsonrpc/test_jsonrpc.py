"""The JSON-RPC binding, through the ASGI app and through Mangum with Lambda event shapes."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from a2akit.agent import RequestContext, TaskHandle
from a2akit.examples.echo import EchoAgent
from a2akit.examples.input_required import GreeterAgent
from a2akit.examples.streaming import StreamingAgent
from a2akit.settings import Settings
from tests.jsonrpc.client import (
    Client,
    LambdaClient,
    app_client,
)
from tests.support.errors import jsonrpc_info
from tests.support.messages import user_message

# --- SendMessage and GetTask -------------------------------------------------------------------


def test_echo_send_returns_completed_task(rpc: Client) -> None:
    result = rpc.result("SendMessage", {"message": user_message("hi there")})
    task = result["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hi there"}]
    assert task["history"][0]["parts"] == [{"text": "hi there"}]
    assert task["history"][0]["taskId"] == task["id"]
    # RFC 3339 with millisecond precision.
    assert len(task["status"]["timestamp"]) == len("2026-01-01T00:00:00.000Z")
    got = rpc.result("GetTask", {"id": task["id"], "historyLength": 0})
    assert got["id"] == task["id"] and "history" not in got


@pytest.mark.spec(
    "3.4.1", "SHOULD", "A repeated messageId is the same message: it answers the task it created")
def test_repeated_message_id_returns_the_first_task(rpc: Client) -> None:
    message = user_message("once", message_id="same-id")
    first = rpc.result("SendMessage", {"message": message})["task"]
    again = rpc.result("SendMessage", {"message": message})["task"]
    assert again["id"] == first["id"]
    assert rpc.result("ListTasks", {})["totalSize"] == 1


def test_a_used_message_id_with_other_content_is_a_new_message(rpc: Client) -> None:
    first = rpc.result("SendMessage", {"message": user_message("one", message_id="m")})["task"]
    other = rpc.result("SendMessage", {"message": user_message("two", message_id="m")})["task"]
    assert other["id"] != first["id"]
    assert other["artifacts"][0]["parts"] == [{"text": "two"}]
    # The true repeat of the second message is still a duplicate of it.
    again = rpc.result("SendMessage", {"message": user_message("two", message_id="m")})["task"]
    assert again["id"] == other["id"]
    assert rpc.result("ListTasks", {})["totalSize"] == 2


def test_a_used_message_id_for_another_task_reaches_that_task(greeter: Client) -> None:
    waiting = greeter.result("SendMessage", {"message": user_message("hi", message_id="m")})
    task = waiting["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    answer = user_message("Ada", message_id="m", taskId=task["id"])
    done = greeter.result("SendMessage", {"message": answer})["task"]
    assert done["id"] == task["id"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.spec("3.4.3", "MUST", "A client-supplied contextId is kept and returned")
def test_context_id_is_kept_and_returned(rpc: Client) -> None:
    task = rpc.result("SendMessage", {"message": user_message(contextId="ctx-1")})["task"]
    assert task["contextId"] == "ctx-1"


@pytest.mark.spec("3.1.3", "MUST", "GetTask of an unknown task fails with TaskNotFoundError")
def test_get_unknown_task_is_task_not_found(rpc: Client) -> None:
    error = rpc.error("GetTask", {"id": "nope"})
    assert error["code"] == -32001
    info = jsonrpc_info(error)
    assert info.reason == "TASK_NOT_FOUND" and dict(info.metadata) == {"taskId": "nope"}


@pytest.mark.spec("3.2.4", "MUST", "A negative historyLength is invalid params")
def test_negative_history_length_is_invalid(rpc: Client) -> None:
    assert rpc.error("GetTask", {"id": "x", "historyLength": -1})["code"] == -32602


def test_unknown_fields_are_ignored(rpc: Client) -> None:
    result = rpc.result("SendMessage", {"message": user_message(), "futureField": 1})
    assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.spec("3.1.1", "MUST", (
    "A part of a media type the agent does not accept fails with "
    "ContentTypeNotSupportedError"))
def test_unsupported_media_type_is_content_type_error(rpc: Client) -> None:
    message = user_message()
    message["parts"] = [{"raw": "aGk=", "mediaType": "image/png"}]
    error = rpc.error("SendMessage", {"message": message})
    assert error["code"] == -32005
    assert dict(jsonrpc_info(error).metadata) == {"mediaType": "image/png"}


# --- multi-turn: input required, continuing, terminal tasks ------------------------------------


@pytest.fixture
def greeter(kind: str) -> Iterator[Client]:
    yield from app_client(kind, GreeterAgent())


@pytest.mark.spec(
    "3.1.1", "MUST", "A message to a task in a terminal state fails with UnsupportedOperationError")
def test_input_required_then_completed(greeter: Client) -> None:
    task = greeter.result("SendMessage", {"message": user_message("hi")})["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert task["status"]["message"]["parts"] == [{"text": "What is your name?"}]
    follow = user_message("Ada", taskId=task["id"])
    done = greeter.result("SendMessage", {"message": follow})["task"]
    assert done["id"] == task["id"] and done["contextId"] == task["contextId"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]
    # The agent's question moved into history; both user messages are there.
    texts = [m["parts"][0]["text"] for m in done["history"]]
    assert texts == ["hi", "What is your name?", "Ada"]
    error = greeter.error("SendMessage", {"message": user_message("more", taskId=task["id"])})
    assert error["code"] == -32004 and jsonrpc_info(error).reason == "UNSUPPORTED_OPERATION"


@pytest.mark.spec(
    "3.4.3", "MUST", "A contextId that differs from the task's is refused, never replaced")
def test_context_mismatch_is_invalid_params(greeter: Client) -> None:
    task = greeter.result("SendMessage", {"message": user_message()})["task"]
    message = user_message(taskId=task["id"], contextId="other")
    assert greeter.error("SendMessage", {"message": message})["code"] == -32602


@pytest.mark.spec("3.4.2", "MUST", (
    "A message naming a task that does not exist (or that the caller may not see) "
    "fails with TaskNotFoundError"))
def test_message_to_unknown_task_is_not_found(rpc: Client) -> None:
    assert rpc.error("SendMessage", {"message": user_message(taskId="nope")})["code"] == -32001


@pytest.mark.spec("3.1.5", "MUST", (
    "CancelTask cancels a task that is not finished; a finished one fails with "
    "TaskNotCancelableError"))
def test_cancel(greeter: Client) -> None:
    task = greeter.result("SendMessage", {"message": user_message()})["task"]
    canceled = greeter.result("CancelTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    again = greeter.error("CancelTask", {"id": task["id"]})
    assert again["code"] == -32002 and jsonrpc_info(again).reason == "TASK_NOT_CANCELABLE"
    assert greeter.error("CancelTask", {"id": "nope"})["code"] == -32001
    error = greeter.error("SubscribeToTask", {"id": task["id"]})
    assert error["code"] == -32004


class _Watched:
    """Counts steps until cancelled, and records the CancelledError it gets, so a test sees
    the agent stop and not only the task in the store. With `writes`, each step is an artifact
    chunk (the runner learns of a cancel at its next write); without, only the runner's
    watcher can stop it."""

    def __init__(self, *, writes: bool) -> None:
        self.writes = writes
        self.steps = 0
        self.cancelled = threading.Event()  # set on the app's event loop thread

    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working("Counting")
        artifact_id = None
        try:
            for _ in range(600):
                await asyncio.sleep(0.05)
                self.steps += 1
                if self.writes:
                    artifact_id = await task.add_artifact(
                        f"{self.steps} ", artifact_id=artifact_id, append=artifact_id is not None)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        await task.complete()


@pytest.mark.parametrize("writes", [True, False], ids=["writing", "silent"])
def test_cancel_stops_a_working_agent(writes: bool) -> None:
    agent = _Watched(writes=writes)
    for client in app_client("asgi", agent):
        task = client.result("SendMessage", {"message": user_message(),
                                             "configuration": {"returnImmediately": True}})["task"]
        assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
        deadline = time.monotonic() + 5
        while agent.steps < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert agent.steps >= 2, "the agent never got to work"
        canceled = client.result("CancelTask", {"id": task["id"]})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        assert agent.cancelled.wait(timeout=5), "the agent was not cancelled"
        stopped_at = agent.steps
        time.sleep(0.4)
        first = client.result("GetTask", {"id": task["id"]})
        time.sleep(0.3)
        later = client.result("GetTask", {"id": task["id"]})
        assert agent.steps == stopped_at, "the agent kept working after its cancellation"
        assert later == first and later["status"]["state"] == "TASK_STATE_CANCELED"


# --- ListTasks ---------------------------------------------------------------------------------


@pytest.mark.spec("3.1.4", "MUST", (
    "ListTasks orders by status time, newest first, and always answers nextPageToken "
    "(empty on the last page)"))
def test_list_tasks_pages_newest_first(rpc: Client) -> None:
    ids = [rpc.result("SendMessage", {"message": user_message(contextId="c1" if i < 2 else "c2")})
           ["task"]["id"] for i in range(3)]
    page = rpc.result("ListTasks", {"pageSize": 2})
    assert page["totalSize"] == 3 and page["pageSize"] == 2 and page["nextPageToken"]
    assert [t["id"] for t in page["tasks"]] == ids[::-1][:2]
    assert all("artifacts" not in t for t in page["tasks"])
    rest = rpc.result("ListTasks", {"pageSize": 2, "pageToken": page["nextPageToken"]})
    assert [t["id"] for t in rest["tasks"]] == [ids[0]]
    assert rest["nextPageToken"] == ""
    only = rpc.result("ListTasks", {"contextId": "c2", "includeArtifacts": True})
    assert [t["id"] for t in only["tasks"]] == [ids[2]] and only["tasks"][0]["artifacts"]
    none = rpc.result("ListTasks", {"status": "TASK_STATE_WORKING"})
    assert none == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}


@pytest.mark.parametrize("params", [
    {"pageSize": 0}, {"pageSize": 101}, {"historyLength": -1}, {"status": "completed"},
    {"pageToken": "not-a-token"},
])
@pytest.mark.spec(
    "3.1.4", "MUST", "ListTasks refuses a page size outside 1-100 and an unknown state")
def test_list_tasks_rejects_bad_params(rpc: Client, params: dict[str, Any]) -> None:
    assert rpc.error("ListTasks", params)["code"] == -32602


# --- streaming ---------------------------------------------------------------------------------


@pytest.fixture
def streamer(kind: str) -> Iterator[Client]:
    yield from app_client(kind, StreamingAgent())


@pytest.mark.spec("3.5.2", "MUST", (
    "Stream events arrive in the order they were made; the stream ends when the task "
    "ends"))
def test_streaming_event_sequence(streamer: Client) -> None:
    reply = streamer.call("SendStreamingMessage", {"message": user_message("one two three")})
    assert reply.status == 200
    assert reply.headers["cache-control"] == "no-store"
    events = reply.events()
    assert all(e["jsonrpc"] == "2.0" and e["id"] == 1 for e in events)
    results = [e["result"] for e in events]
    assert list(results[0]) == ["task"]
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert results[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
    chunks = [r["artifactUpdate"] for r in results[2:5]]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["one", " two", " three"]
    assert [c.get("append", False) for c in chunks] == [False, True, True]
    assert [c.get("lastChunk", False) for c in chunks] == [False, False, True]
    assert results[5]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(results) == 6
    task = streamer.result("GetTask", {"id": results[0]["task"]["id"]})
    assert task["artifacts"][0]["parts"] == [{"text": "one"}, {"text": " two"}, {"text": " three"}]


def test_streaming_errors_before_first_event_are_plain_json(streamer: Client) -> None:
    reply = streamer.call("SendStreamingMessage", {"message": user_message(taskId="nope")})
    assert reply.headers["content-type"].startswith("application/json")
    assert reply.json()["error"]["code"] == -32001


@pytest.mark.spec(
    "3.1.6", "MUST", "SubscribeToTask starts with the task as it stands, then its events")
def test_subscribe_to_running_task() -> None:
    for client in app_client("asgi", StreamingAgent()):
        task = client.result("SendMessage", {
            "message": user_message("a b c d e f"),
            "configuration": {"returnImmediately": True}})["task"]
        events = [e["result"] for e in client.call("SubscribeToTask", {"id": task["id"]}).events()]
        assert events[0]["task"]["id"] == task["id"]
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert client.error("SubscribeToTask", {"id": "nope"})["code"] == -32001


@pytest.mark.spec("3.3.4", "MUST", (
    "Streaming operations fail with UnsupportedOperationError when the card declares "
    "no streaming"))
def test_streaming_disabled_is_unsupported(kind: str) -> None:
    class Plain(EchoAgent):
        streaming = False

    for client in app_client(kind, Plain()):
        assert client.error("SendStreamingMessage", {"message": user_message()})["code"] == -32004


# --- agent contract ----------------------------------------------------------------------------


class _Silent:
    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        return None


class _Replier:
    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.reply("just a message")


class _Broken:
    async def execute(self, context: RequestContext, task: TaskHandle) -> None:
        await task.working()
        raise RuntimeError("secret detail")


def test_agent_that_reports_nothing_is_invalid_agent_response(kind: str) -> None:
    for client in app_client(kind, _Silent()):
        error = client.error("SendMessage", {"message": user_message()})
        assert error["code"] == -32006 and jsonrpc_info(error).reason == "INVALID_AGENT_RESPONSE"


def test_message_reply_without_task(kind: str) -> None:
    for client in app_client(kind, _Replier()):
        result = client.result("SendMessage", {"message": user_message(contextId="c")})
        assert result["message"]["parts"] == [{"text": "just a message"}]
        assert result["message"]["role"] == "ROLE_AGENT" and result["message"]["contextId"] == "c"
        assert client.result("ListTasks", {})["totalSize"] == 0


def test_failing_agent_fails_the_task_without_leaking(kind: str) -> None:
    for client in app_client(kind, _Broken()):
        task = client.result("SendMessage", {"message": user_message()})["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert "secret" not in json.dumps(task)


# --- push notification configs -----------------------------------------------------------------


@pytest.mark.spec("3.1.7", "MUST", (
    "Push notification configs are created, read, listed and deleted; deleting an "
    "absent one succeeds"))
def test_push_config_crud(rpc: Client) -> None:
    task = rpc.result("SendMessage", {"message": user_message()})["task"]
    config = rpc.result("CreateTaskPushNotificationConfig", {
        "taskId": task["id"], "url": "https://93.184.216.34/hook", "token": "t"})
    assert config["id"] and config["taskId"] == task["id"]
    got = rpc.result("GetTaskPushNotificationConfig", {"taskId": task["id"], "id": config["id"]})
    assert got == config
    listed = rpc.result("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    assert listed["configs"] == [config]
    params = {"taskId": task["id"], "id": config["id"]}
    assert rpc.result("DeleteTaskPushNotificationConfig", params) == {}
    assert rpc.result("DeleteTaskPushNotificationConfig", params) == {}  # idempotent
    assert rpc.error("GetTaskPushNotificationConfig", params)["code"] == -32001
    assert rpc.error("ListTaskPushNotificationConfigs", {"taskId": "nope"})["code"] == -32001


@pytest.mark.parametrize("url", ["http://127.0.0.1/x", "http://localhost:8080/",
                                 "https://169.254.169.254/latest", "ftp://93.184.216.34/",
                                 "http://10.1.2.3/", "http://[::1]/"])
@pytest.mark.spec(
    "13.2", "SHOULD", "Webhook URLs that reach private or local addresses are refused (SSRF)")
def test_push_config_refuses_private_urls(rpc: Client, url: str) -> None:
    task = rpc.result("SendMessage", {"message": user_message()})["task"]
    error = rpc.error("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": url})
    assert error["code"] == -32602


@pytest.mark.spec("3.3.4", "MUST", (
    "Push config operations fail with PushNotificationNotSupportedError when the card "
    "declares no push"))
def test_push_disabled_is_not_supported(kind: str) -> None:
    for client in app_client(kind, settings=Settings(allow_anonymous=True)):
        for method in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
                       "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"):
            error = client.error(method, {"taskId": "t", "id": "c", "url": "https://a.b/"})
            assert error["code"] == -32003, method


# --- extended card, auth, owners ---------------------------------------------------------------


@pytest.mark.spec(
    "3.1.11", "MUST", "GetExtendedAgentCard requires authentication and answers the extended card")
def test_extended_card(kind: str) -> None:
    for client in app_client(kind):
        assert client.error("GetExtendedAgentCard")["code"] == -32004
    tokens = Settings(bearer_tokens={"tok-a": "alice"}, extended_agent_card=True)
    for client in app_client(kind, settings=tokens):
        error = client.error("GetExtendedAgentCard", headers={"Authorization": "Bearer tok-a"})
        assert error["code"] == -32007


@pytest.mark.spec("3.3.2", "MUST",
                  "Another caller's task does not exist for a caller: not found, listing included")
def test_owners_are_isolated(kind: str) -> None:
    settings = Settings(bearer_tokens={"tok-a": "alice", "tok-b": "bob"})
    alice, bob = {"Authorization": "Bearer tok-a"}, {"Authorization": "Bearer tok-b"}
    for client in app_client(kind, settings=settings):
        task = client.result("SendMessage", {"message": user_message()}, headers=alice)["task"]
        assert client.error("GetTask", {"id": task["id"]}, headers=bob)["code"] == -32001
        assert client.error("CancelTask", {"id": task["id"]}, headers=bob)["code"] == -32001
        assert client.result("ListTasks", {}, headers=bob)["totalSize"] == 0
        assert client.result("ListTasks", {}, headers=alice)["totalSize"] == 1
        # Tenants partition too.
        assert client.error("GetTask", {"id": task["id"], "tenant": "t2"},
                            headers=alice)["code"] == -32001
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
            reply = client.call("GetTask", {"id": task["id"]}, headers=headers)
            assert reply.status == 401 and "www-authenticate" in reply.headers
            assert reply.json()["error"]["data"][0]["reason"] == "UNAUTHENTICATED"


def test_api_gateway_authorizer_identity_is_the_owner() -> None:
    for client in app_client("apigw_http_v2", settings=Settings()):
        assert isinstance(client, LambdaClient)
        client.authorizer = {"jwt": {"claims": {"sub": "user-1"}, "scopes": []}}
        task = client.result("SendMessage", {"message": user_message()})["task"]
        client.authorizer = {"jwt": {"claims": {"sub": "user-2"}, "scopes": []}}
        assert client.error("GetTask", {"id": task["id"]})["code"] == -32001
