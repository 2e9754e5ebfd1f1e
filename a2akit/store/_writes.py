"""The items of a task write, and what a cancelled transaction of one means.

Besides the snapshot and its events a write keeps the scope's counts (`bookkeeping`: the
count item of the task's shard when its state changes; when it finishes, its retirement and
the marker of its older items' expiry, `a2akit.store._expiry`).

A write is the snapshot, its new events, maybe a message claim and push configs. When they
fit one transaction (100 items, 4 MB) they are one `TransactWriteItems`. Otherwise they are
written in several, in order, under a *reservation* (docs/store.md, "Writes of any size"):

1. the first transaction sets ``writer`` (a random token) and ``writer_until`` on the
   snapshot, conditional on what the writer read (version, last_seq, no reservation): a
   conflict or a claimed message id is found here, before any event is written; it carries
   the message claim and the first events;
2. the middle ones carry events only;
3. the last one puts the snapshot, conditional on the version and the token, with the last
   events. The Put replaces the item, so the reservation goes with it.

Every event is put with ``attribute_not_exists(sk)``: the log is append-only, an event is
never overwritten. Other writers' snapshot conditions include ``attribute_not_exists(writer)``:
while a reservation lives they wait for it (bounded by ``writer_until``), then re-read. A
reservation left by a writer that died is broken after ``writer_until`` by the next writer,
which keeps the events already written (readers and push deliveries may have seen them) and
writes its own after them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from a2akit.generated import a2a_pb2 as pb
from a2akit.states import is_terminal
from a2akit.store import table
from a2akit.store._errors import Cancellation, Interpret
from a2akit.store._expiry import marker
from a2akit.store._gateway import Contended, Gateway
from a2akit.store._parts import Ref, ref
from a2akit.store.base import (
    DuplicateMessageError,
    Scope,
    VersionConflictError,
    quota_refused,
)
from a2akit.store.table import Item

__all__ = ["Condition", "Contended", "Reserved", "StaleSeq", "bookkeeping", "check", "interpret",
           "quota_check", "quota_take", "role", "transact"]


class StaleSeq(Exception):
    """The remembered last_seq of this version was another writer's: the old item's instead."""

    def __init__(self, last_seq: int, state: int, parts: Ref | None, counted: bool) -> None:
        super().__init__(last_seq)
        self.last_seq = last_seq
        self.state = state
        self.parts = parts
        self.counted = counted


class Reserved(Exception):
    """The snapshot of the version read is held by another write in several transactions."""

    def __init__(self, token: str, until_ms: int, last_seq: int, state: int,
                 parts: Ref | None, counted: bool) -> None:
        super().__init__(token)
        self.token = token
        self.until_ms = until_ms
        self.last_seq = last_seq
        self.state = state
        self.parts = parts  # those of the snapshot it holds
        self.counted = counted  # the snapshot it holds is in its owner's quota count


def role(write: Item) -> str:
    """What a transaction entry writes: "snapshot", "event", "claim", "quota" (the owner's
    count of unfinished tasks) or "other" (a push config, an expiry marker, a scope count)."""
    action = next(iter(write.values()))
    sk = (action.get("Item") or action["Key"])[table.SK]["S"]
    if sk == table.SNAPSHOT_SK:
        return "snapshot"
    if sk == table.MESSAGE_SK:
        return "claim"
    if sk == table.QUOTA_SK:
        return "quota"
    return "event" if sk.startswith(table.EVENT_PREFIX) else "other"


def interpret(writes: Sequence[Item], task_id: str, *, expected_version: int | None = None,
              last_seq: int = 0, breaking: str | None = None,
              quota: int | None = None) -> Interpret:
    """What a cancelled transaction of `writes` means. For a create (`expected_version` None)
    a claimed message id wins over a full quota (`quota`, the limit the create counted
    against), which wins over an existing task; for an update a version conflict wins.
    An event that exists already is a conflict: someone else wrote after the version read."""
    roles = [role(write) for write in writes]

    def meaning(cancellation: Cancellation) -> Exception | None:
        failed = {roles[index] for index in range(len(roles)) if cancellation.failed(index)}
        snapshot = roles.index("snapshot") if "snapshot" in roles else None
        if snapshot is not None and cancellation.code(snapshot) == "TransactionConflict" \
                and expected_version is not None:
            failed.add("snapshot")
        if expected_version is not None and "snapshot" in failed:
            assert snapshot is not None
            return _update_conflict(cancellation.old_item(snapshot), task_id, expected_version,
                                    last_seq, breaking)
        if "claim" in failed:
            claim = roles.index("claim")
            item = cancellation.old_item(claim) or {}
            return DuplicateMessageError(str(item.get("task_id", {}).get("S", "")))
        if "quota" in failed and quota is not None:
            return quota_refused(quota)
        if failed & {"snapshot", "event"}:
            return VersionConflictError(task_id)
        if any(roles[index] in ("other", "quota")
               and cancellation.code(index) == "TransactionConflict"
               for index in range(len(roles))):
            # A count item (the scope's, the owner's quota) in another writer's
            # transaction: nothing was written, again.
            return Contended()
        return None

    return meaning


def _update_conflict(old: Item | None, task_id: str, expected_version: int, last_seq: int,
                     breaking: str | None) -> Exception:
    if old is None or int(old["version"]["N"]) != expected_version:
        return VersionConflictError(task_id)
    state = int(old["state"]["N"])
    writer = old.get(table.WRITER, {}).get("S")
    if writer is not None and writer != breaking:
        return Reserved(writer, int(old[table.WRITER_UNTIL]["N"]), int(old["last_seq"]["N"]),
                        state, ref(old), table.COUNTED in old)
    if writer is None and int(old["last_seq"]["N"]) != last_seq:
        return StaleSeq(int(old["last_seq"]["N"]), state, ref(old), table.COUNTED in old)
    return VersionConflictError(task_id, cancel_requested=table.CANCEL_REQUESTED in old)


@dataclasses.dataclass(frozen=True)
class Condition:
    """What an update's snapshot write requires of the stored snapshot."""

    version: int
    last_seq: int
    lease_expired_by: int | None = None
    breaking: str | None = None  # a dead writer's reservation token, instead of none
    unfinished: bool = False  # the write leaves the task unfinished: a cancel request stops it

    def expression(self) -> tuple[str, Item]:
        values: Item = {":v": {"N": str(self.version)}}
        if self.breaking is None:
            text = f"version = :v AND last_seq = :s AND attribute_not_exists({table.WRITER})"
            values[":s"] = {"N": str(self.last_seq)}
        else:
            text = f"version = :v AND {table.WRITER} = :dead"
            values[":dead"] = {"S": self.breaking}
        if self.unfinished:
            text += f" AND attribute_not_exists({table.CANCEL_REQUESTED})"
        if self.lease_expired_by is not None:
            # Expiry: a renewal that landed since the read keeps the runner's task.
            text += f" AND {table.LEASE_UNTIL} < :expired_by"
            values[":expired_by"] = {"N": str(self.lease_expired_by)}
        return text, values


def check(put: Item) -> Item:
    """The condition of a Put, checked without writing (its key; same condition)."""
    fields = {name: value for name, value in put["Put"].items() if name != "Item"}
    item = put["Put"]["Item"]
    return {"ConditionCheck": {**fields, "Key": table.key(item[table.PK]["S"],
                                                           item[table.SK]["S"])}}


def quota_take(gateway: Gateway, scope: Scope, limit: int) -> Item:
    """The entry of a create that counts its task against the owner's quota: one more,
    only while the owner has fewer than `limit` (a conditional write, so a burst of creates
    never gets past it; its failure is `quota_refused`)."""
    return {"Update": {
        "TableName": gateway.name,
        "Key": table.quota_key(scope.owner),
        "UpdateExpression": "ADD #a :one",
        "ConditionExpression": "attribute_not_exists(#a) OR #a < :limit",
        "ExpressionAttributeNames": {"#a": table.QUOTA_ACTIVE},
        "ExpressionAttributeValues": {":one": {"N": "1"}, ":limit": {"N": str(limit)}}}}


def quota_check(take: Item) -> Item:
    """`quota_take`'s condition, checked without writing (the first transaction of a create
    in several: a full quota is found before any event is written)."""
    update = take["Update"]
    return {"ConditionCheck": {
        "TableName": update["TableName"], "Key": update["Key"],
        "ConditionExpression": update["ConditionExpression"],
        "ExpressionAttributeNames": update["ExpressionAttributeNames"],
        "ExpressionAttributeValues": {":limit": update["ExpressionAttributeValues"][":limit"]}}}


def bookkeeping(gateway: Gateway, scope: Scope, task: pb.Task, snapshot: Item,
                old_state: int | None, *, counted: bool = False) -> list[Item]:
    """What a snapshot write keeps besides: the scope's counts when the state changes
    (`old_state` None: a new task); when the task finishes, its retirement, for an update
    the marker of its older items' expiry (docs/store.md, "TTL"), and when the task was
    `counted` (its old snapshot was in its owner's quota count) one less in that count."""
    state = int(task.status.state)
    entries: list[Item] = []
    if counted and is_terminal(state):
        entries.append({"Update": {
            "TableName": gateway.name, "Key": table.quota_key(scope.owner),
            "UpdateExpression": "ADD #a :less", "ExpressionAttributeNames": {
                "#a": table.QUOTA_ACTIVE}, "ExpressionAttributeValues": {":less": {"N": "-1"}}}})
    pk = table.task_pk(scope, task.id)
    if state != old_state:
        names = {"#s": table.count_of(state)}
        adds = ["#s :one"]
        values = {":one": {"N": "1"}}
        if old_state is None:
            names["#n"] = table.COUNT_ALL
            adds.append("#n :one")
        else:
            names["#o"] = table.count_of(old_state)
            adds.append("#o :less")
            values[":less"] = {"N": "-1"}
        entries.append({"Update": {
            "TableName": gateway.name,
            "Key": table.key(table.count_pk(scope, table.list_shard(task.id)),
                             table.COUNT_SK),
            "UpdateExpression": "ADD " + ", ".join(adds),
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": values}})
    if is_terminal(state) and (old_state is None or not is_terminal(old_state)):
        expires = snapshot[table.TTL_ATTRIBUTE]
        retire = {**table.retire_key(pk, int(expires["N"])), "state": {"N": str(state)}}
        entries.append(gateway.put(retire))
        if old_state is not None:
            entries.append(gateway.put(marker(pk, expires)))
    return entries


async def transact(gateway: Gateway, writes: list[Item], task_id: str, **meaning: Any) -> None:
    """One transaction of a write of `task_id`, its cancellation read by `interpret`."""
    await gateway.transact(writes, interpret(writes, task_id, **meaning))

