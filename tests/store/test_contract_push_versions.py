"""A push config remembers which protocol generation created it (A2A 1.0 or 0.3: the
`Call.protocol_version` of the request), on both stores, without a trace of it in the 1.0
API's results: the dispatcher reads it (`list_push_targets`) to pick the webhook's payload."""

from __future__ import annotations

from typing import Any

import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import LEGACY_VERSION, SUPPORTED_VERSION
from a2akit.store import table
from a2akit.store.base import PushTarget, Scope, TaskStore
from a2akit.store.dynamodb import DynamoDBStore
from tests.store.conftest import TABLE, partition
from tests.store.test_contract import make_task, task_event

pytestmark = pytest.mark.anyio


def _config(config_id: str) -> pb.TaskPushNotificationConfig:
    return pb.TaskPushNotificationConfig(task_id="t1", id=config_id, token=f"tok-{config_id}",
                                         url=f"https://{config_id}.example.com/hook")


async def _generations(store: TaskStore, scope: Scope) -> dict[str, str]:
    return {target.config.id: target.protocol_version
            for target in await store.list_push_targets(scope, "t1")}


async def test_a_config_is_read_back_with_the_generation_that_stored_it(
        store: TaskStore, scope: Scope) -> None:
    task = make_task("t1")
    # A 0.3 SendMessage stores its config with the new task.
    await store.create(scope, task, [task_event(task)],
                       push_configs=[PushTarget(_config("born"), LEGACY_VERSION)])
    await store.put_push_config(scope, _config("old"), protocol_version=LEGACY_VERSION)
    await store.put_push_config(scope, _config("new"), protocol_version=SUPPORTED_VERSION)
    await store.put_push_config(scope, _config("plain"))  # 1.0 unless told
    assert await _generations(store, scope) == {
        "born": "0.3", "old": "0.3", "new": "1.0", "plain": "1.0"}
    # The 1.0 API reads the configs exactly as they were given.
    for config_id in ("born", "old", "new", "plain"):
        assert await store.get_push_config(scope, "t1", config_id) == _config(config_id)
    listed = sorted(await store.list_push_configs(scope, "t1"), key=lambda c: c.id)
    assert listed == [_config(i) for i in ("born", "new", "old", "plain")]
    targets = {target.config.id: target.config
               for target in await store.list_push_targets(scope, "t1")}
    assert targets == {config.id: config for config in listed}
    # A replace (same id) takes the generation of the call that replaced it.
    await store.put_push_config(scope, _config("old"))
    await store.put_push_config(scope, _config("new"), protocol_version=LEGACY_VERSION)
    assert await _generations(store, scope) == {
        "born": "0.3", "old": "1.0", "new": "0.3", "plain": "1.0"}
    await store.delete_push_config(scope, "t1", "born")
    assert "born" not in await _generations(store, scope)
    # Another caller sees none of them.
    assert await store.list_push_targets(Scope(scope.tenant, "bob"), "t1") == []


@pytest.mark.slow
async def test_a_1_0_config_item_is_as_before_and_one_without_a_generation_is_1_0(
        ddb_client: Any, scope: Scope) -> None:
    """Only a 0.3 config's item carries the attribute; items written before it existed (or
    by a 1.0 call) read as 1.0."""
    store = DynamoDBStore(TABLE, ddb_client)
    task = make_task("t1")
    await store.create(scope, task, [task_event(task)])
    await store.put_push_config(scope, _config("a"))
    await store.put_push_config(scope, _config("b"), protocol_version=LEGACY_VERSION)
    items = {item["sk"]["S"]: item for item in partition(ddb_client,
                                                          table.task_pk(scope, "t1"))}
    assert table.PUSH_PROTOCOL not in items[table.push_sk("a")]
    assert items[table.push_sk("b")][table.PUSH_PROTOCOL] == {"S": "0.3"}
    assert set(items[table.push_sk("a")]) == {"pk", "sk", "config"}
