"""The HTTP+JSON binding through the ASGI app and the real Mangum handler (both event shapes):
every operation at its proto path, query parameters, the tenant forms, a base path, streams
and errors in the spec's body with their HTTP status."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ENV, Settings, SettingsError
from http_service.rest_routes import ROUTES, find_route, routes_of
from tests.rest.client import KINDS, Rest, error_of, reason, serve_rest, violations
from tests.support.harness import ANON, SlowOrEcho, memory_operations
from tests.support.messages import send_params

PROTO = Path(__file__).resolve().parents[2] / "proto" / "a2a.proto"
HOOK = {"url": "https://93.184.216.34/hook", "token": "t0ken"}


class WithExtendedCard(EchoAgent):
    extended_card = pb.AgentCard(name="Echo, extended", description="for members")


@pytest.fixture(params=KINDS)
def rest(request: pytest.FixtureRequest) -> Iterator[Rest]:
    yield from serve_rest(str(request.param), memory_operations(SlowOrEcho()))


def _task(rest: Rest, text: str = "hello", prefix: str = "", **kw: Any) -> Any:
    return rest.ok("POST", f"{prefix}/message:send", send_params(text, **kw))["task"]


# --- the route table is the proto's -------------------------------------------------------------


_HTTP_OPTION = re.compile(
    r"rpc (\w+)\(.*?option \(google\.api\.http\) = \{(.*?)\n    \};", re.DOTALL)
_BINDING = re.compile(r'(get|post|delete|put|patch): "([^"]+)"(?:\s*body: "([^"]*)")?')


@pytest.mark.spec("11.3", "MUST", "HTTP+JSON routes are the proto's google.api.http annotations")
def test_routes_are_the_annotations_of_the_proto_file() -> None:
    """Read from proto/a2a.proto's text, independently of the generated descriptor."""
    declared = set()
    for rpc, option in _HTTP_OPTION.findall(PROTO.read_text()):
        for verb, template, body in _BINDING.findall(option):
            declared.add((rpc, verb.upper(), template, body == "*"))
    assert len(declared) == 22  # eleven rpcs, each with its /{tenant} form
    annotated = routes_of(pb.DESCRIPTOR.services_by_name["A2AService"])
    assert {(r.operation.name, r.verb, r.template, r.body) for r in annotated} == declared
    extra = set(ROUTES) - set(annotated)
    assert {(r.operation.name, r.verb) for r in extra} == {("SubscribeToTask", "POST")}


@pytest.mark.parametrize(("verb", "path", "operation", "variables"), [
    ("GET", "/tasks/abc:subscribe", "SubscribeToTask", {"id": "abc"}),
    ("POST", "/tasks/abc:subscribe", "SubscribeToTask", {"id": "abc"}),
    ("GET", "/tasks/abc", "GetTask", {"id": "abc"}),
    ("GET", "/tasks/tasks", "GetTask", {"id": "tasks"}),  # the rpc's own form first
    ("GET", "/t1/tasks", "ListTasks", {"tenant": "t1"}),
    ("POST", "/t1/tasks/a:b:cancel", "CancelTask", {"tenant": "t1", "id": "a:b"}),
    ("DELETE", "/tasks/t/pushNotificationConfigs/c", "DeleteTaskPushNotificationConfig",
     {"task_id": "t", "id": "c"}),
    ("GET", "/t1/extendedAgentCard", "GetExtendedAgentCard", {"tenant": "t1"}),
])
def test_paths_find_their_operation(verb: str, path: str, operation: str,
                                    variables: dict[str, str]) -> None:
    route, found, _ = find_route(verb, path)
    assert route is not None and route.operation.name == operation
    assert found == variables


# --- every operation -------------------------------------------------------------------------


def test_send_get_list_cancel(rest: Rest) -> None:
    task = _task(rest, "hi")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    got = rest.ok("GET", f"/tasks/{task['id']}")
    assert got == task
    assert "history" not in rest.ok("GET", f"/tasks/{task['id']}", query="historyLength=0")
    assert len(rest.ok("GET", f"/tasks/{task['id']}", query="historyLength=1")["history"]) == 1
    listed = rest.ok("GET", "/tasks")
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    assert "artifacts" not in listed["tasks"][0]
    assert listed["nextPageToken"] == "" and listed["totalSize"] == 1
    error = rest.error("POST", f"/tasks/{task['id']}:cancel", {}, status=400)
    assert reason(error) == "TASK_NOT_CANCELABLE" and error["status"] == "FAILED_PRECONDITION"


def test_list_filters_and_pages(rest: Rest) -> None:
    first = _task(rest, "one")
    second = _task(rest, "two", contextId="ctx-2")
    page = rest.ok("GET", "/tasks", query="pageSize=1&includeArtifacts=true")
    assert [t["id"] for t in page["tasks"]] == [second["id"]] and page["tasks"][0]["artifacts"]
    assert page["pageSize"] == 1 and page["totalSize"] == 2
    rest_page = rest.ok("GET", "/tasks", query=f"pageSize=1&pageToken={page['nextPageToken']}")
    assert [t["id"] for t in rest_page["tasks"]] == [first["id"]]
    assert [t["id"] for t in rest.ok("GET", "/tasks", query="contextId=ctx-2")["tasks"]] == [
        second["id"]]
    assert rest.ok("GET", "/tasks", query="status=TASK_STATE_WORKING")["totalSize"] == 0
    assert rest.ok("GET", "/tasks", query="status_timestamp_after=2000-01-01T00:00:00Z"
                   )["totalSize"] == 2  # the proto name is accepted too
    assert rest.ok("GET", "/tasks", query="statusTimestampAfter=2999-01-01T00:00:00Z"
                   )["totalSize"] == 0


def test_cancel_and_subscribe_a_running_task(rest: Rest) -> None:
    task = _task(rest, "slow", immediately=True)
    path = f"/tasks/{task['id']}"
    canceled = rest.ok("POST", f"{path}:cancel", {"metadata": {"why": "test"}})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    error = rest.error("GET", f"{path}:subscribe", status=400)
    assert reason(error) == "UNSUPPORTED_OPERATION"


@pytest.mark.parametrize("verb", ["GET", "POST"])
@pytest.mark.spec("3.1.6", "MUST", "A subscription ends when the task ends")
def test_subscribe_streams_until_the_task_ends(verb: str) -> None:
    ops = memory_operations(SlowOrEcho(), Settings(allow_anonymous=True,
                                                   stream_budget_seconds=1.0))
    for rest in serve_rest("asgi", ops):
        task = _task(rest, "slow", immediately=True)
        events = rest.events(verb, f"/tasks/{task['id']}:subscribe")
        assert events[0]["task"]["id"] == task["id"]  # a bare StreamResponse, no envelope


def test_stream_events_are_bare_stream_responses(rest: Rest) -> None:
    events = rest.events("POST", "/message:stream", send_params("streamed"))
    assert list(events[0]) == ["task"]
    kinds = [next(iter(event)) for event in events]
    assert set(kinds) <= {"task", "statusUpdate", "artifactUpdate"}
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    reply = rest.call("POST", "/message:stream", send_params("x"))
    assert reply.headers["cache-control"] == "no-store"


def test_push_config_resources(rest: Rest) -> None:
    task = _task(rest)
    base = f"/tasks/{task['id']}/pushNotificationConfigs"
    created = rest.ok("POST", base, {**HOOK, "id": "c1"})
    assert created["taskId"] == task["id"] and created["id"] == "c1"
    assert rest.ok("GET", f"{base}/c1") == created
    assert rest.ok("GET", base) == {"configs": [created]}
    assert rest.ok("DELETE", f"{base}/c1") == {}
    assert rest.ok("DELETE", f"{base}/c1") == {}  # idempotent
    assert reason(rest.error("GET", f"{base}/c1", status=404)) == "TASK_NOT_FOUND"
    assert reason(rest.error("GET", "/tasks/nope/pushNotificationConfigs",
                             status=404)) == "TASK_NOT_FOUND"


def test_push_off_is_400() -> None:
    for rest in serve_rest("asgi", memory_operations(settings=Settings(allow_anonymous=True))):
        task = _task(rest)
        error = rest.error("POST", f"/tasks/{task['id']}/pushNotificationConfigs", HOOK,
                           status=400)
        assert reason(error) == "PUSH_NOTIFICATION_NOT_SUPPORTED"


def test_extended_card() -> None:
    settings = Settings(allow_anonymous=True, bearer_tokens={"tok": "alice"},
                        extended_agent_card=True)
    for rest in serve_rest("asgi", memory_operations(WithExtendedCard(), settings)):
        card = rest.ok("GET", "/extendedAgentCard", headers={"Authorization": "Bearer tok"})
        assert card["name"] == "Echo, extended"
        error = rest.error("GET", "/extendedAgentCard", status=401)
        assert reason(error) == "UNAUTHENTICATED"


# --- tenants and the base path ---------------------------------------------------------------


@pytest.mark.spec(
    "8.3.2", "MUST", "A tenant in the path scopes the task: another tenant cannot see it")
def test_tenant_forms_scope_the_task(rest: Rest) -> None:
    task = _task(rest, prefix="/acme")
    assert rest.ok("GET", f"/acme/tasks/{task['id']}")["id"] == task["id"]
    assert reason(rest.error("GET", f"/tasks/{task['id']}", status=404)) == "TASK_NOT_FOUND"
    assert reason(rest.error("GET", f"/other/tasks/{task['id']}",
                             status=404)) == "TASK_NOT_FOUND"
    assert [t["id"] for t in rest.ok("GET", "/acme/tasks")["tasks"]] == [task["id"]]
    assert rest.ok("GET", "/tasks")["totalSize"] == 0
    # The path's tenant wins over one in the body.
    other = rest.ok("POST", "/acme/message:send", {**send_params(), "tenant": "else"})["task"]
    assert rest.ok("GET", f"/acme/tasks/{other['id']}")["id"] == other["id"]


def test_a_route_joined_to_the_interface_url_with_its_slash_is_served(rest: Rest) -> None:
    """A client joining `https://host/` and `/message:send` asks for `//message:send`: the
    leading slashes are one (issue 33, item 11); the tenant and the resource stay the same."""
    task = _task(rest, prefix="/")
    assert rest.ok("GET", f"//tasks/{task['id']}")["id"] == task["id"]
    acme = _task(rest, prefix="//acme")
    assert [t["id"] for t in rest.ok("GET", "///acme/tasks")["tasks"]] == [acme["id"]]
    assert rest.ok("GET", "/tasks")["totalSize"] == 1
    # Inside the path an empty segment is not collapsed: it would name another resource.
    assert rest.call("GET", f"/acme//tasks/{acme['id']}").status == 404


def test_base_path_prefixes_every_route_and_the_card_url() -> None:
    settings = Settings(allow_anonymous=True, public_url="https://agent.example.com/prod/",
                        rest_base_path="/prod/a2a")
    for kind in KINDS:
        for rest in serve_rest(kind, memory_operations(settings=settings), prefix="/prod/a2a"):
            task = _task(rest)
            assert rest.ok("GET", f"/tasks/{task['id']}")["id"] == task["id"]
            assert rest.ok("GET", f"//tasks/{task['id']}")["id"] == task["id"]
            card = rest.client.get("/prod/.well-known/agent-card.json").json()
            assert card["supportedInterfaces"][1] == {
                "url": "https://agent.example.com/prod/a2a", "protocolBinding": "HTTP+JSON",
                "protocolVersion": "1.0"}
            # Outside the base path there is no HTTP+JSON route; JSON-RPC is where it was.
            assert rest.client.request("GET", "/prod/tasks").status == 404
            assert rest.client.call("ListTasks", {}).status == 404  # POST / is not JSON-RPC's
            assert rest.client.request("POST", "/prod/", b'{"jsonrpc":"2.0","id":1,'
                                       b'"method":"ListTasks"}', {
                                           "A2A-Version": "1.0",
                                           "content-type": "application/json"}).status == 200


@pytest.mark.parametrize(("raw", "path"), [("/a2a", "/a2a"), ("/a2a/", "/a2a"), ("/", ""),
                                           ("/a/b-c.d~e_f", "/a/b-c.d~e_f")])
def test_base_path_setting(raw: str, path: str) -> None:
    assert Settings.from_env({ENV.REST_BASE_PATH: raw}).rest_base_path == path


@pytest.mark.parametrize("raw", ["a2a", "/a2a:x", "/{tenant}", "//x", "/a//b", "/a%20b",
                                 "/a?b", "https://x/a2a"])
def test_bad_base_path_is_refused_naming_the_variable(raw: str) -> None:
    with pytest.raises(SettingsError, match=ENV.REST_BASE_PATH):
        Settings.from_env({ENV.REST_BASE_PATH: raw})


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.spec("11.6", "MUST",
                  "HTTP+JSON answers 404 for an unknown path and 405 with Allow for a wrong method")
def test_unknown_path_is_404_and_wrong_method_405(rest: Rest) -> None:
    error = rest.error("GET", "/no/such/thing", status=404)
    assert reason(error) == "METHOD_NOT_FOUND"
    reply = rest.call("PUT", "/tasks/abc")
    error = error_of(reply, 405)
    assert reason(error) == "METHOD_NOT_FOUND" and reply.headers["allow"] == "GET"
    reply = rest.call("GET", "/message:send")
    assert error_of(reply, 405) and reply.headers["allow"] == "POST"


def test_json_rpc_paths_keep_their_answers(rest: Rest) -> None:
    assert rest.client.get("/").status == 405  # GET of the JSON-RPC path, as before
    assert rest.client.call("ListTasks", {}).json()["result"]["totalSize"] == 0


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", None])
def test_body_must_be_declared_json(rest: Rest, content_type: str | None) -> None:
    reply = rest.call("POST", "/message:send", raw=b'{"message": {}}',
                      headers={"content-type": content_type})
    assert reason(error_of(reply, 415)) == "INVALID_REQUEST"
    assert rest.ok("GET", "/tasks")["totalSize"] == 0


def test_a2a_json_content_type_is_accepted(rest: Rest) -> None:
    reply = rest.call("POST", "/message:send", raw=b'{"message": {"messageId": "m", '
                      b'"role": "ROLE_USER", "parts": [{"text": "x"}]}}',
                      headers={"content-type": "application/a2a+json; charset=utf-8"})
    assert reply.status == 200, reply.body


@pytest.mark.parametrize(("query", "field"), [
    ("historyLength=-1", "history_length"),
    ("historyLength=abc", "history_length"),
    ("pageSize=0", "page_size"),
    ("pageSize=101", "page_size"),
    ("pageSize=1.5", "page_size"),
    ("status=TASK_STATE_BOGUS", "status"),
    ("includeArtifacts=yes", "include_artifacts"),
    ("statusTimestampAfter=yesterday", "status_timestamp_after"),
    ("pageSize=1&pageSize=2", "page_size"),
])
def test_bad_query_values_are_400_naming_the_field(rest: Rest, query: str, field: str) -> None:
    error = rest.error("GET", "/tasks", query=query, status=400)
    assert reason(error) == "INVALID_PARAMS"
    assert field in violations(error), error


def test_version_is_required(rest: Rest) -> None:
    error = rest.error("GET", "/tasks", headers={"A2A-Version": None}, status=400)
    assert reason(error) == "VERSION_NOT_SUPPORTED"
    assert rest.ok("GET", "/tasks", query="A2A-Version=1.0", headers={"A2A-Version": None})


@pytest.mark.spec("7.4", "MUST", (
    "A request without valid credentials is 401 with WWW-Authenticate naming the "
    "schemes"))
def test_missing_credentials_are_401_with_a_challenge() -> None:
    settings = Settings(bearer_tokens={"tok": "alice"})
    for kind in KINDS:
        for rest in serve_rest(kind, memory_operations(settings=settings)):
            reply = rest.call("GET", "/tasks")
            assert reason(error_of(reply, 401)) == "UNAUTHENTICATED"
            assert reply.headers["www-authenticate"].startswith("Bearer")
            assert rest.ok("GET", "/tasks", headers={"Authorization": "Bearer tok"})


def test_missing_required_fields_are_400(rest: Rest) -> None:
    error = rest.error("POST", "/message:send", {}, status=400)
    assert reason(error) == "INVALID_PARAMS" and "message" in violations(error)
    error = rest.error("POST", "/message:send", raw=b"", status=400,
                       headers={"content-type": "application/json"})
    assert reason(error) == "INVALID_PARAMS"


def test_defaults_keep_one_url_for_both_http_bindings() -> None:
    ops = memory_operations(settings=ANON)
    for rest in serve_rest("asgi", ops):
        card = rest.client.get("/.well-known/agent-card.json").json()
        urls = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
        assert urls == {"JSONRPC": ANON.public_url, "HTTP+JSON": ANON.public_url}
        assert [(i["protocolBinding"], i["protocolVersion"])
                for i in card["supportedInterfaces"]] == [
            ("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")]
