"""Push notification configs on the DynamoDB store: one item each under the task's partition
(sk `PUSH#<id>`), expiring with the task."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a2akit.errors import UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.store import table
from a2akit.store._writes import check, transact
from a2akit.store.base import PushTarget, Scope, VersionConflictError
from a2akit.store.table import Item

if TYPE_CHECKING:
    from a2akit.store._gateway import Gateway

__all__ = ["config_item", "delete_config", "get_config", "list_targets", "put_config"]


async def put_config(gateway: Gateway, scope: Scope,
                     target: PushTarget) -> None:
    config = target.config
    pk = table.task_pk(scope, config.task_id)
    for _attempt in range(3):
        response = await gateway.call(
            gateway.client.get_item,
            TableName=gateway.name,
            Key=table.key(pk, table.SNAPSHOT_SK),
            ConsistentRead=True,
            ProjectionExpression="pk, expires_at",
        )
        snapshot = response.get("Item")
        if snapshot is None:
            return  # like the embedded store: no task, nothing stored
        item = config_item(pk, target, snapshot)
        if table.TTL_ATTRIBUTE in item:
            await gateway.call(gateway.client.put_item, TableName=gateway.name, Item=item)
            return
        # A running task: the config is written only if the task is still running, or
        # a terminal write landing meanwhile (whose expiry step may have run already)
        # would leave it without an expiry.
        still_running = check(gateway.put(
            {**table.key(pk, table.SNAPSHOT_SK)},
            f"attribute_exists(pk) AND attribute_not_exists({table.TTL_ATTRIBUTE})"))
        try:
            await transact(gateway, [still_running, gateway.put(item)], config.task_id)
            return
        except VersionConflictError:
            continue  # it finished (or went) meanwhile: read it again
    raise UnavailableError("the task kept changing while its push config was written")

def config_item(pk: str, target: PushTarget, snapshot: Item) -> Item:
    """A config's item, with its generation unless 1.0 (a 1.0 config's item is as it was
    before generations were kept); it expires with its task (the snapshot's TTL)."""
    item: Item = {
        table.PK: {"S": pk},
        table.SK: {"S": table.push_sk(target.config.id)},
        "config": {"B": target.config.SerializeToString()},
    }
    if target.protocol_version != SUPPORTED_VERSION:
        item[table.PUSH_PROTOCOL] = {"S": target.protocol_version}
    if table.TTL_ATTRIBUTE in snapshot:
        item[table.TTL_ATTRIBUTE] = snapshot[table.TTL_ATTRIBUTE]
    table.check_size(item, "the push notification config")
    return item

async def get_config(
    gateway: Gateway, scope: Scope, task_id: str, config_id: str
) -> pb.TaskPushNotificationConfig | None:
    response = await gateway.call(
        gateway.client.get_item,
        TableName=gateway.name,
        Key=table.key(table.task_pk(scope, task_id), table.push_sk(config_id)),
        ConsistentRead=True,
    )
    item = response.get("Item")
    if item is None:
        return None
    config = pb.TaskPushNotificationConfig()
    config.ParseFromString(item["config"]["B"])
    return config

def _target(item: Item) -> PushTarget:
    version = item.get(table.PUSH_PROTOCOL, {}).get("S", SUPPORTED_VERSION)
    return PushTarget(pb.TaskPushNotificationConfig.FromString(item["config"]["B"]), version)


async def list_targets(gateway: Gateway, scope: Scope, task_id: str) -> list[PushTarget]:
    kwargs: dict[str, Any] = {
        "TableName": gateway.name,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
        "ExpressionAttributeValues": {
            ":pk": {"S": table.task_pk(scope, task_id)},
            ":p": {"S": table.PUSH_PREFIX},
        },
        "ConsistentRead": True,
    }
    targets: list[PushTarget] = []
    while True:
        page = await gateway.call(gateway.client.query, **kwargs)
        targets.extend(_target(item) for item in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return targets
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

async def delete_config(gateway: Gateway, scope: Scope, task_id: str, config_id: str) -> None:
    await gateway.call(
        gateway.client.delete_item,
        TableName=gateway.name,
        Key=table.key(table.task_pk(scope, task_id), table.push_sk(config_id)),
    )
