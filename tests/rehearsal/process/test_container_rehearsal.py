"""The gRPC container as its Dockerfile installs it (tests/rehearsal/container.py: the same
files and the same pip command, into a fresh virtual environment, no Docker) runs its CMD
with the task definition's environment from the template: it answers health and A2A calls
with a verified JWT, and the task role allows every AWS call it made and nothing else."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2akit.generated import a2a_pb2 as pb
from a2akit.settings import ENV
from grpc_service.generated import a2a_pb2_grpc
from infra.stack import PROJECT_ROOT
from scripts.dynamodb_local import CREDENTIALS
from tests.auth.issuer import Issuer, make_keys
from tests.rehearsal.container import install_like_the_image, read_dockerfile
from tests.rehearsal.permissions import EMULATOR_ONLY, allowed, local_environment, resource_names
from tests.rehearsal.process.test_lambda_rehearsal import LOOPBACK_WEBHOOKS, deployed_values
from tests.rehearsal.recorder import Call, Recorder
from tests.rehearsal.sqs import take_message
from tests.support.messages import V1, send_request
from tests.support.processes import free_port, running

pytestmark = pytest.mark.slow

DOCKERFILE = PROJECT_ROOT / "grpc_service" / "Dockerfile"
# The in-process sweep runs every A2A_SWEEP_SECONDS (60 by default): every second here, so
# the rehearsal sees its query.
_SWEEP_SOON = {ENV.SWEEP_SECONDS: "1"}


@pytest.fixture(scope="session")
def container_install(tmp_path_factory: pytest.TempPathFactory,
                      runtime_interpreter: str) -> tuple[Path, Path]:
    return install_like_the_image(PROJECT_ROOT, DOCKERFILE,
                                  tmp_path_factory.mktemp("container"), runtime_interpreter)


@pytest.fixture(scope="module")
def container(container_install: tuple[Path, Path], deployed_template: dict[str, Any],
              rehearsal_table: str, deployed_queues: dict[str, str], ddb_endpoint: str,
              moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory,
              ) -> Iterator[dict[str, Any]]:
    """The container serving on a loopback port; yields what the tests look at."""
    python, app = container_install
    names = resource_names(deployed_template, rehearsal_table, deployed_queues)
    (task,) = [r["Properties"] for r in deployed_template["Resources"].values()
               if r["Type"] == "AWS::ECS::TaskDefinition"]
    (definition,) = task["ContainerDefinitions"]
    issuer = Issuer(make_keys())
    issuer.publish("k1")
    recorder = Recorder(ddb_endpoint, moto_endpoint)
    port = free_port()
    env = {
        **CREDENTIALS, "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_DYNAMODB": recorder.url, "AWS_ENDPOINT_URL_SQS": recorder.url,
        "PATH": "/usr/bin:/bin",
        **local_environment({e["Name"]: e["Value"] for e in definition["Environment"]}, names,
                            deployed_values(issuer)),
        ENV.GRPC_PORT: str(port), **_SWEEP_SOON, **LOOPBACK_WEBHOOKS,
    }
    command = read_dockerfile(DOCKERFILE).command
    assert command[0] == "python"
    log = tmp_path_factory.mktemp("container_log") / "grpc.log"
    try:
        with running([str(python), *command[1:]], ports=[port], env=env, log=log,
                     cwd=app), grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            seen: dict[str, Any] = {"recorder": recorder, "names": names,
                                    "role": task["TaskRoleArn"]["Fn::GetAtt"][0]}
            health = health_pb2_grpc.HealthStub(channel)
            seen["health"] = health.Check(health_pb2.HealthCheckRequest(service=""),
                                          timeout=10).status
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            # Its own caller: the Lambda rehearsal lists the same table as alice.
            metadata = (*V1, ("authorization", f"Bearer {issuer.token('k1', sub='carol')}"))
            seen["refused"] = _code(lambda: stub.GetTask(
                pb.GetTaskRequest(id="x"), metadata=(*V1, ("authorization", "Bearer no")),
                timeout=10))
            sent = stub.SendMessage(send_request("container", immediately=True),
                                    metadata=metadata, timeout=30)
            seen["sent"] = sent.task
            task_id, context = sent.task.id, sent.task.context_id
            stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=metadata, timeout=10)
            seen["listed"] = stub.ListTasks(pb.ListTasksRequest(), metadata=metadata,
                                            timeout=10)
            stub.ListTasks(pb.ListTasksRequest(context_id=context), metadata=metadata,
                           timeout=10)
            config = stub.CreateTaskPushNotificationConfig(
                pb.TaskPushNotificationConfig(task_id=task_id, url="http://127.0.0.1:9/hook"),
                metadata=metadata, timeout=10)
            stub.DeleteTaskPushNotificationConfig(
                pb.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config.id),
                metadata=metadata, timeout=10)
            # Queued, as deployed (the worker Lambda runs it): take the message off the queue,
            # so the Lambda rehearsal's worker finds its own.
            seen["queued"] = take_message(moto_endpoint, env[ENV.QUEUE_URL], task_id)
            seen["canceled"] = stub.CancelTask(pb.CancelTaskRequest(id=task_id),
                                               metadata=metadata, timeout=10)
            # The in-process sweep's query of the lease index.
            _wait_for(recorder, lambda call: call.resource.endswith("/index/by_lease"))
            yield seen
    finally:
        recorder.close()
        issuer.close()


def _wait_for(recorder: Recorder, wanted: Callable[[Call], bool]) -> None:
    """Until the container made a call `wanted` accepts (it runs on its own schedule)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any(map(wanted, recorder.calls)):
        time.sleep(0.1)


def _code(call: Any) -> grpc.StatusCode | None:
    try:
        call()
    except grpc.RpcError as error:
        return error.code()
    return None


def test_the_install_answers_health_and_send_message(container: dict[str, Any]) -> None:
    assert container["health"] == health_pb2.HealthCheckResponse.SERVING
    assert container["sent"].status.state == pb.TASK_STATE_SUBMITTED
    assert container["sent"].id in container["queued"]
    assert container["canceled"].status.state == pb.TASK_STATE_CANCELED
    assert [t.id for t in container["listed"].tasks] == [container["sent"].id]
    assert container["refused"] == grpc.StatusCode.UNAUTHENTICATED


def test_the_task_role_allows_what_the_container_calls_and_no_more(
    container: dict[str, Any], deployed_template: dict[str, Any]
) -> None:
    recorder: Recorder = container["recorder"]
    made = {call for call in recorder.calls if call.action not in EMULATOR_ONLY}
    granted = allowed(deployed_template, container["role"], container["names"])
    missing, excess = sorted(made - granted), sorted(granted - made)
    assert (missing, excess) == ([], []), (
        f"task role: lacks {[(c.action, c.resource) for c in missing]}; allows what the "
        f"container never called: {[(c.action, c.resource) for c in excess]}")


def test_the_recipe_is_the_dockerfiles() -> None:
    recipe = read_dockerfile(DOCKERFILE)
    assert recipe.command == ["python", "-m", "grpc_service"]
    assert recipe.pip_arguments, recipe
