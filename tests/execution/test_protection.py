"""Scale-in protection (a2akit/execution/protection.py) through the kit's AWS edge against
the recorded-call stand-in of ECS (tests/execution/ecs_fake.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from a2akit import aws
from a2akit.execution.protection import (
    NoProtection,
    TaskProtection,
    make_protection,
    task_identity,
)
from a2akit.settings import Settings
from tests.execution.ecs_fake import CLUSTER, TASK_ARN, EcsFake, ecs_fake

pytestmark = pytest.mark.anyio


@pytest.fixture
def ecs(monkeypatch: pytest.MonkeyPatch) -> Iterator[EcsFake]:
    with ecs_fake() as fake:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        monkeypatch.setenv("AWS_ENDPOINT_URL_ECS", fake.url)
        yield fake


async def test_the_first_agent_protects_the_task_and_the_last_releases_it(ecs: EcsFake) -> None:
    protection = make_protection(Settings(ecs_metadata_uri=ecs.url))
    assert isinstance(protection, TaskProtection)
    assert (protection.cluster, protection.task_arn) == (CLUSTER, TASK_ARN)
    await protection.hold()
    await protection.hold()  # a second agent: already protected
    await protection.release()
    assert ecs.states() == [True]
    await protection.release()
    assert ecs.states() == [True, False]
    assert ecs.calls[0] == {"cluster": CLUSTER, "tasks": [TASK_ARN], "protectionEnabled": True,
                            "expiresInMinutes": 60}
    await protection.close()


async def test_protection_is_renewed_while_agents_run(ecs: EcsFake) -> None:
    protection = TaskProtection(aws.client("ecs"), CLUSTER, TASK_ARN, minutes=1,
                                renew_seconds=0.05)
    await protection.hold()
    await asyncio.sleep(0.3)
    await protection.release()
    states = ecs.states()
    assert states[0] and not states[-1] and states.count(True) >= 3
    renewals = len(ecs.calls)
    await asyncio.sleep(0.2)
    assert len(ecs.calls) == renewals  # no renewal once nothing runs


async def test_a_refused_call_is_logged_and_the_agent_runs_on(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    # Nothing listens there: the call fails as a connection failure, after its attempts.
    client = aws.client("ecs", endpoint_url="http://127.0.0.1:9", region_name="us-east-1",
                        max_attempts=1, connect_timeout=0.5)
    protection = TaskProtection(client, CLUSTER, TASK_ARN)
    await protection.hold()  # does not raise
    assert "could not enable scale-in protection" in caplog.text
    await protection.release()  # nothing was enabled: nothing to disable
    await protection.close()


def test_outside_ecs_there_is_nothing_to_protect(ecs: EcsFake) -> None:
    assert isinstance(make_protection(Settings()), NoProtection)
    assert task_identity(ecs.url) == (CLUSTER, TASK_ARN)
    with pytest.raises(OSError):
        task_identity("http://127.0.0.1:9", timeout=0.5)
