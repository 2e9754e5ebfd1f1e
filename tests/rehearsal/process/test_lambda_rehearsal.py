"""The Lambda bundle, built for this machine from the same requirements, run as Lambda runs it
(tests/rehearsal/lambda_runtime.py: `python -I -S`, only the bundle and the runtime's SDK on
`sys.path`) with each function's environment from the synthesized template: the front door
answers real API Gateway events (JWT verified against a local issuer), the worker runs the
queued task, the sweeper ends a task whose runner died, the push dispatcher reads the table's
stream. Each process's AWS calls go through its own recorder (tests/rehearsal/recorder.py),
and each function's role in the template must allow every call it made and nothing else.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.clock import epoch_ms
from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ENV
from a2akit.store.base import Lease, Scope
from a2akit.store.dynamodb import DynamoDBStore, make_client
from infra.jsonrpc_api import HANDLER as DOOR_SCRIPT
from infra.push import PUSH_HANDLER
from infra.push_filter import PUSH_FILTER_PATTERN
from infra.sweeper import SWEEPER_HANDLER
from infra.worker import WORKER_HANDLER
from scripts.dynamodb_local import CREDENTIALS
from tests.auth.issuer import AUDIENCE, Issuer, make_keys
from tests.rehearsal.lambda_runtime import Function
from tests.rehearsal.permissions import (
    EMULATOR_ONLY,
    allowed,
    local_environment,
    made_by_aws,
    resource_names,
)
from tests.rehearsal.recorder import Call, Recorder
from tests.rehearsal.sqs import as_lambda_record
from tests.store.test_contract import make_task, status_event
from tests.support.event_filter import matches
from tests.support.processes import ROOT
from tests.support.streams import lambda_event, stream_records
from tests.support.webhooks import Receiver

pytestmark = pytest.mark.slow

EVENTS = ROOT / "tests" / "events"
# The door's Lambda handler is the adapter's run.sh; the same app answers API Gateway's
# events through Mangum in `handlers.jsonrpc.handler` (the bundle holds both).
DOOR = "handlers.jsonrpc.handler"
HANDLERS = {DOOR_SCRIPT: DOOR, WORKER_HANDLER: WORKER_HANDLER,
            SWEEPER_HANDLER: SWEEPER_HANDLER, PUSH_HANDLER: PUSH_HANDLER}
# Webhooks are on the internet on AWS; here the receiver is on loopback, which the SSRF
# guard (at the door and in the dispatcher) refuses unless told otherwise. Two attempts:
# before the second the dispatcher checks the config still exists (GetItem); the failed
# delivery then goes to the dispatcher's dead-letter queue.
LOOPBACK_WEBHOOKS = {ENV.PUSH_ALLOW_HTTP: "true", ENV.PUSH_ALLOW_CIDRS: "127.0.0.1/32",
                    ENV.PUSH_ATTEMPTS: "2"}


def deployed_values(issuer: Issuer) -> dict[str, str]:
    """What exists only once deployed, here: the issuer, the doors' addresses, the name the
    container reports as (from the stack's name)."""
    return {ENV.JWT_ISSUER: issuer.url, ENV.JWT_AUDIENCE: AUDIENCE,
            ENV.PUBLIC_URL: "https://door.example/", ENV.GRPC_ADDRESS: "grpc.example:443",
            ENV.SERVICE_NAME: "A2AKit-rehearsal-grpc"}


class Rehearsal:
    """The functions of the template, each in its own environment with its own recorder."""

    def __init__(self, template: dict[str, Any], table: str, queues: dict[str, str],
                 ddb_endpoint: str, moto_endpoint: str, python: str, task_root: Path,
                 sdk: Path, issuer: Issuer, logs: Path) -> None:
        self.template = template
        self.names = resource_names(template, table, queues)
        self.table, self.queues = table, queues
        self.functions: dict[str, Function] = {}
        self.recorders: dict[str, Recorder] = {}
        self.properties: dict[str, dict[str, Any]] = {}
        try:
            self._start(ddb_endpoint, moto_endpoint, python, task_root, sdk, issuer, logs)
        except BaseException:
            self.close()
            raise

    def _start(self, ddb_endpoint: str, moto_endpoint: str, python: str, task_root: Path,
               sdk: Path, issuer: Issuer, logs: Path) -> None:
        for key, resource in self.template["Resources"].items():
            properties = resource.get("Properties", {})
            if resource["Type"] != "AWS::Lambda::Function" or properties.get(
                    "Handler") not in HANDLERS:
                continue
            handler = properties["Handler"]
            recorder = Recorder(ddb_endpoint, moto_endpoint)
            env = {
                **CREDENTIALS, "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_DYNAMODB": recorder.url, "AWS_ENDPOINT_URL_SQS": recorder.url,
                "AWS_LAMBDA_FUNCTION_NAME": key, "LAMBDA_TASK_ROOT": str(task_root),
                **local_environment(properties["Environment"]["Variables"], self.names,
                                    deployed_values(issuer)),
                **LOOPBACK_WEBHOOKS,
            }
            self.recorders[handler] = recorder
            self.properties[handler] = {**properties, "LogicalId": key}
            self.functions[handler] = Function(python, task_root, sdk, HANDLERS[handler], env,
                                               logs / f"{key}.log")

    def granted(self, handler: str) -> set[Call]:
        return allowed(self.template, self.properties[handler]["Role"]["Fn::GetAtt"][0],
                       self.names)

    def by_aws(self, handler: str) -> set[Call]:
        return made_by_aws(self.template, self.properties[handler]["LogicalId"], self.names)

    def close(self) -> None:
        for function in self.functions.values():
            function.close()
        for recorder in self.recorders.values():
            recorder.close()


def _door_event(body: dict[str, Any], token: str) -> dict[str, Any]:
    """A JSON-RPC POST as API Gateway hands it to the function."""
    event: dict[str, Any] = json.loads((EVENTS / "apigw_http_v2.json").read_text())
    event["headers"].update({"authorization": f"Bearer {token}", "a2a-version": "1.0"})
    event["body"] = json.dumps(body)
    return event


def _call(door: Function, token: str, method: str, params: dict[str, Any]) -> Any:
    response = door.invoke(_door_event(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, token))
    assert response["statusCode"] == 200, response
    reply = json.loads(response["body"])
    assert "result" in reply, reply
    return reply["result"]


def _message(text: str, message_id: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


def _dead_runner_task(ddb_endpoint: str, table: str) -> str:
    """A WORKING task whose runner's lease ended a second ago (its runner died)."""
    async def create() -> None:
        client = make_client(ddb_endpoint, "us-east-1")
        store = DynamoDBStore(table, client)
        task = make_task("dead-runner", state=pb.TASK_STATE_WORKING)
        await store.create(Scope("t#rehearsal", "dead"), task,
                           [status_event(task.id, pb.TASK_STATE_WORKING)],
                           lease=Lease("run#gone", epoch_ms() - 1000))
        client.close()

    asyncio.run(create())
    return "dead-runner"


@pytest.fixture(scope="module")
def rehearsal(deployed_template: dict[str, Any], rehearsal_table: str,
              deployed_queues: dict[str, str], ddb_endpoint: str, moto_endpoint: str,
              native_bundle: Path, runtime_sdk_folder: Path, runtime_interpreter: str,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Runs the scenario once; yields what the tests look at."""
    issuer = Issuer(make_keys())
    issuer.publish("k1")
    token = issuer.token("k1")
    run = Rehearsal(deployed_template, rehearsal_table, deployed_queues, ddb_endpoint,
                    moto_endpoint, runtime_interpreter, native_bundle, runtime_sdk_folder,
                    issuer,
                    tmp_path_factory.mktemp("logs"))
    seen: dict[str, Any] = {"rehearsal": run, "token": token}
    try:
        with Receiver() as hook:
            hook.plan(500, 500)  # both attempts fail: the dead-letter queue gets it
            door, worker = run.functions[DOOR_SCRIPT], run.functions[WORKER_HANDLER]
            config = {"url": hook.url(), "token": "t"}
            # A queued task with a push config, run by the worker.
            sent = _call(door, token, "SendMessage", {
                "message": _message("hello", "m-1"),
                "configuration": {"returnImmediately": True,
                                  "taskPushNotificationConfig": config}})
            task = sent["task"]["id"]
            (task_queue,) = [url for key, url in deployed_queues.items()
                             if "RedrivePolicy" in deployed_template["Resources"][key][
                                 "Properties"]]
            record = as_lambda_record(moto_endpoint, task_queue, task)
            seen["worker"] = worker.invoke({"Records": [record]}, 600)
            seen["done"] = _call(door, token, "GetTask", {"id": task})
            seen["listed"] = _call(door, token, "ListTasks", {})
            _call(door, token, "ListTasks", {"contextId": sent["task"]["contextId"]})
            # A second task: its push configs, then its cancellation.
            other = _call(door, token, "SendMessage", {
                "message": _message("again", "m-2"),
                "configuration": {"returnImmediately": True}})["task"]["id"]
            created = _call(door, token, "CreateTaskPushNotificationConfig",
                            {"taskId": other, **config})
            _call(door, token, "GetTaskPushNotificationConfig",
                  {"taskId": other, "id": created["id"]})
            _call(door, token, "ListTaskPushNotificationConfigs", {"taskId": other})
            _call(door, token, "DeleteTaskPushNotificationConfig",
                  {"taskId": other, "id": created["id"]})
            seen["canceled"] = _call(door, token, "CancelTask", {"id": other})
            # The sweeper meets a task whose runner died.
            _dead_runner_task(ddb_endpoint, rehearsal_table)
            seen["swept"] = run.functions[SWEEPER_HANDLER].invoke({}, 60)
            # The dispatcher gets the stream's event INSERTs of the worker's task.
            records = [record for record in stream_records(ddb_endpoint, rehearsal_table)
                       if record["dynamodb"]["Keys"]["pk"]["S"].endswith(
                           f"#TASK#{task}")]
            event = lambda_event(records)
            event["Records"] = [r for r in event["Records"] if matches(PUSH_FILTER_PATTERN, r)]
            seen["dispatched"] = run.functions[PUSH_HANDLER].invoke(event, 300)
            seen["hooked"] = hook.requests
        seen["probes"] = {handler: function.probe("starlette", "jwt", "cryptography",
                                                  "google.protobuf", "boto3", "httpx")
                          for handler, function in run.functions.items()}
        yield seen
    finally:
        run.close()
        issuer.close()


def test_the_door_answers_api_gateway_with_a_verified_jwt(rehearsal: dict[str, Any]) -> None:
    assert rehearsal["done"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rehearsal["canceled"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert [t["id"] for t in rehearsal["listed"]["tasks"]] == [rehearsal["done"]["id"]]
    # Without a valid token the door refuses: JWT verification ran from the bundle.
    door = rehearsal["rehearsal"].functions[DOOR_SCRIPT]
    response = door.invoke(_door_event({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                        "params": {"id": "x"}}, "not-a-token"))
    assert response["statusCode"] == 401, response


def test_the_door_answers_an_a2a_0_3_caller_from_the_bundle(rehearsal: dict[str, Any]) -> None:
    """The 0.3 modules ship in the bundle and load there on a 0.3 request (no A2A-Version):
    the worker's task, read as a 0.3 client reads it."""
    door = rehearsal["rehearsal"].functions[DOOR_SCRIPT]
    token = rehearsal["token"]
    event = _door_event({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
                         "params": {"id": rehearsal["done"]["id"]}}, token)
    del event["headers"]["a2a-version"]
    response = door.invoke(event)
    assert response["statusCode"] == 200, response
    task = json.loads(response["body"])["result"]
    assert (task["kind"], task["id"]) == ("task", rehearsal["done"]["id"])
    assert task["status"]["state"] == "completed"


def test_the_worker_sweeper_and_dispatcher_run_from_the_bundle(
    rehearsal: dict[str, Any]
) -> None:
    assert rehearsal["worker"] == {"batchItemFailures": []}
    assert rehearsal["swept"] == {"ended": 1}
    assert rehearsal["dispatched"] == {"batchItemFailures": []}
    assert rehearsal["hooked"], "the dispatcher delivered nothing"


@pytest.mark.parametrize("handler", list(HANDLERS))
def test_the_bundle_alone_serves_each_function(rehearsal: dict[str, Any], handler: str) -> None:
    probe = rehearsal["probes"][handler]
    run: Rehearsal = rehearsal["rehearsal"]
    task_root = str(run.functions[handler].task_root)
    for name, file in probe["files"].items():
        if file is None:
            continue  # not imported by this function
        expected = "runtime_sdk" if name == "boto3" else task_root
        assert expected in file, (name, file)
    # protobuf's native (upb) implementation, not its pure-Python fallback.
    assert probe["protobuf"] == "upb"


@pytest.mark.parametrize("handler", list(HANDLERS))
def test_each_role_allows_what_its_code_calls_and_no_more(
    rehearsal: dict[str, Any], handler: str
) -> None:
    run: Rehearsal = rehearsal["rehearsal"]
    made = {call for call in run.recorders[handler].calls
            if call.action not in EMULATOR_ONLY}
    granted = run.granted(handler)
    missing = sorted(made - granted)
    excess = sorted(granted - made - run.by_aws(handler))
    assert (missing, excess) == ([], []), (
        f"{handler}: the role lacks {[(c.action, c.resource) for c in missing]}; "
        f"it allows what the code never called: {[(c.action, c.resource) for c in excess]}")
