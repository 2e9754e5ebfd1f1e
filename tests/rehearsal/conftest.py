"""The deploy rehearsal's fixtures: the stack as `cdk synth` writes it (cdk.json's context,
gRPC and push on, so every role is in it), and its task table created in DynamoDB Local."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from a2akit.store.base import TaskStore
from a2akit.store.dynamodb import DynamoDBStore, env_client, make_client
from tests.infra.conftest import PUSH_CONTEXT, synth_stack
from tests.rehearsal.table import create_table_calls, table_properties
from tests.store.conftest import scope  # noqa: F401  (the contract tests' fresh tenant)

DEPLOYED_TABLE = "a2akit-as-deployed"
REHEARSAL_TABLE = "a2akit-rehearsal"


@pytest.fixture(scope="session")
def deployed_template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The synthesized template (a placeholder for the Lambda folder: the template does not
    depend on its contents)."""
    bundle = tmp_path_factory.mktemp("placeholder_bundle")
    (bundle / "placeholder.txt").write_text("rehearsal\n")
    _, template, _ = synth_stack(bundle, Path(tmp_path_factory.mktemp("cdk_out")),
                                 **PUSH_CONTEXT)
    return dict(template.to_json())


def _create(endpoint: str, template: dict[str, Any], name: str) -> str:
    """The template's table, created in DynamoDB Local under `name`."""
    create, ttl = create_table_calls(table_properties(template), name)
    client = make_client(endpoint, "us-east-1")
    try:
        client.create_table(**create)
        client.get_waiter("table_exists").wait(TableName=name)
        if ttl is not None:
            client.update_time_to_live(**ttl)
    finally:
        client.close()
    return name


@pytest.fixture(scope="session")
def deployed_table(ddb_endpoint: str, deployed_template: dict[str, Any]) -> str:
    """The template's table for the contract suite; its name."""
    return _create(ddb_endpoint, deployed_template, DEPLOYED_TABLE)


@pytest.fixture(scope="session")
def rehearsal_table(ddb_endpoint: str, deployed_template: dict[str, Any]) -> str:
    """Another copy for the processes' rehearsals: their sweeps meet only their own tasks."""
    return _create(ddb_endpoint, deployed_template, REHEARSAL_TABLE)


@pytest.fixture(params=[pytest.param("dynamodb-as-deployed", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest, ddb_endpoint: str,
          deployed_table: str) -> Iterator[TaskStore]:
    """The contract suite's store, on the deployed table through the kit's own client (the
    one Lambda uses)."""
    client = env_client(ddb_endpoint)
    assert client is not None  # the dummy credentials and region are in the environment
    yield DynamoDBStore(deployed_table, client)
    client.close()


@pytest.fixture(scope="session")
def runtime_interpreter() -> str:
    """A CPython of Lambda's version (3.13): what the lock's wheels are built for."""
    from infra.bundle import runtime_python

    python = runtime_python()
    assert python is not None, ("the rehearsal needs CPython 3.13, Lambda's and the image's "
                                "(python3.13 on the PATH, or installed by pyenv)")
    return python


@pytest.fixture(scope="session")
def native_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Lambda folder as infra/bundle.py builds it from the lock (JWT and push included),
    for this machine's architecture instead of Lambda's arm64."""
    from infra.bundle import build_bundle

    folder = tmp_path_factory.mktemp("task_root")
    build_bundle(folder, jwt=True, push=True, native=True)
    return folder


@pytest.fixture(scope="session")
def runtime_sdk_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.rehearsal.lambda_runtime import runtime_sdk

    return runtime_sdk(tmp_path_factory.mktemp("runtime_sdk"))


@pytest.fixture(scope="session")
def deployed_queues(moto_endpoint: str, deployed_template: dict[str, Any]) -> dict[str, str]:
    """Each queue of the template in moto: logical id -> URL."""
    from tests.support.moto import client

    sqs = client("sqs", moto_endpoint)
    try:
        return {key: sqs.create_queue(QueueName=f"rehearsal-{key}")["QueueUrl"]
                for key, resource in deployed_template["Resources"].items()
                if resource["Type"] == "AWS::SQS::Queue"}
    finally:
        sqs.close()
