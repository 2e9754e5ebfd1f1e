"""A task's writes on DynamoDB: their items, how one is written in one or several
transactions, and what a cancelled transaction of one means.

Besides the snapshot and its events a write keeps the scope's counts (`bookkeeping`: the
count item of the task's shard when its state changes; when it finishes, its retirement and
the marker of its older items' expiry, `a2akit.store._expiry`).

A write is the snapshot, its new events, maybe a message claim and push configs. When they
fit one transaction (100 items, 4 MB: `_plan.fits`) they are one `TransactWriteItems`.
Otherwise an update (`update`) is written in several (`_plan.transactions`), in order, under a
*reservation* (docs/store.md, "Writes of any size"):

1. the first transaction sets ``writer`` (a random token) and ``writer_until`` on the
   snapshot, conditional on what the writer read (version, last_seq, no reservation): a
   conflict or a claimed message id is found here, before any event is written; it carries
   the message claim and the first events;
2. the middle ones carry events only;
3. the last one puts the snapshot, conditional on the version and the token, with the last
   events. The Put replaces the item, so the reservation goes with it.

A create in several (`create`) needs no reservation: its first transaction checks that the
task and the claim do not exist yet and that the quota has room; its last one writes them.

Every event is put with ``attribute_not_exists(sk)``: the log is append-only, an event is
never overwritten. Other writers' snapshot conditions include ``attribute_not_exists(writer)``:
while a reservation lives they wait for it (`Reserved`, `outwait`: bounded by
``writer_until``), then re-read. A reservation left by a writer that died is broken after
``writer_until`` by the next writer (`Condition.breaking`, `DynamoDBStore.update`), which
keeps the events already written (readers and push deliveries may have seen them) and writes
its own after them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from a2akit.clock import epoch_ms
from a2akit.generated import a2a_pb2 as pb
from a2akit.states import is_terminal
from a2akit.store import _bodies, _parts, cursor, table
from a2akit.store._errors import Cancellation, Interpret
from a2akit.store._expiry import marker
from a2akit.store._gateway import Contended, Gateway
from a2akit.store._parts import Ref, ref
from a2akit.store._plan import fits, transactions
from a2akit.store.base import (
    DuplicateMessageError,
    Lease,
    Scope,
    VersionConflictError,
    quota_refused,
)
from a2akit.store.table import Item
from a2akit.trace import current_traceparent

__all__ = ["Condition", "Contended", "Reserved", "StaleSeq", "bodies_apart", "bookkeeping",
           "check", "claim", "create", "interpret", "items", "outwait", "quota_check",
           "quota_take", "role", "transact", "update", "wrote_bodies"]


class StaleSeq(Exception):
    """The remembered last_seq of this version was another writer's: the old item's instead."""

    def __init__(self, last_seq: int, state: int, parts: Ref | None, counted: bool,
                 body: _bodies.Layout | None) -> None:
        super().__init__(last_seq)
        self.last_seq = last_seq
        self.state = state
        self.parts = parts
        self.counted = counted
        self.body = body


class Reserved(Exception):
    """The snapshot of the version read is held by another write in several transactions."""

    def __init__(self, token: str, until_ms: int, last_seq: int, state: int,
                 parts: Ref | None, counted: bool, body: _bodies.Layout | None) -> None:
        super().__init__(token)
        self.token = token
        self.until_ms = until_ms
        self.last_seq = last_seq
        self.state = state
        self.parts = parts  # those of the snapshot it holds
        self.counted = counted  # the snapshot it holds is in its owner's quota count
        self.body = body  # the body layout of the snapshot it holds


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
                        state, ref(old), table.COUNTED in old, _bodies.layout_of(old))
    if writer is None and int(old["last_seq"]["N"]) != last_seq:
        return StaleSeq(int(old["last_seq"]["N"]), state, ref(old), table.COUNTED in old,
                        _bodies.layout_of(old))
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


def items(gateway: Gateway, scope: Scope, task: pb.Task,
          raw_events: Sequence[bytes], *, version: int, first_seq: int, expires: int | None,
          lease: Lease | None = None, counted: bool = False,
          body: _bodies.Layout | None = None, events: Sequence[pb.StreamResponse] = (),
          tails: bool = True) -> tuple[Item, list[Item], list[Item]]:
    """The snapshot item of `task`, the puts of its events (`raw_events`, each only where
    none is yet) and of its new body, if any (`_bodies.plan` after the replaced snapshot's
    layout `body`: written with the snapshot, in its transaction). `expires`: the expiry of
    a terminal task. `counted`: the task is in its owner's quota count, which the snapshot
    says while the task is unfinished. `events`: the parsed `raw_events`, which may hold
    the tail of an artifact (`_bodies.Tail`); `tails`: whether they may (not when the
    events since the replaced snapshot are not all this write's)."""
    pk = table.task_pk(scope, task.id)
    head, layout, new_body = _bodies.plan(task, body, events, first_seq, tails=tails)
    data = head.SerializeToString()
    position = cursor.position(task)
    last_seq = first_seq + len(raw_events) - 1
    snapshot: Item = {
        table.PK: {"S": pk},
        table.SK: {"S": table.SNAPSHOT_SK},
        table.LIST_INDEX_PK: {"S": table.list_pk(scope, table.list_shard(task.id))},
        table.LIST_INDEX_SK: {"S": table.list_sk(position)},
        "task": {"B": data},
        "version": {"N": str(version)},
        "last_seq": {"N": str(last_seq)},
        "status_ms": {"N": str(position.status_ms)},
        "state": {"N": str(int(task.status.state))},
        "context_id": {"S": task.context_id},
    }
    if layout is not None:
        snapshot.update(layout.attributes())
    if task.context_id:
        snapshot[table.CONTEXT_INDEX_PK] = {"S": table.context_pk(scope, task.context_id)}
    if expires is not None:
        snapshot[table.TTL_ATTRIBUTE] = {"N": str(expires)}
    elif counted:
        snapshot[table.COUNTED] = {"N": "1"}
    if expires is None and lease is not None:
        # Only a leased task enters the (sparse) lease index; a terminal one never does.
        snapshot.update(table.lease_attributes(pk, lease))
    # A large snapshot's parts close the events: they land with it or before it.
    snapshot_parts = _parts.split(snapshot, "task")
    if snapshot_parts:
        gateway.part_cache.put(pk, snapshot[table.PART_TOKEN]["S"], data)
    table.check_size(snapshot, "the task")
    puts: list[Item] = []
    traceparent = current_traceparent()  # the push dispatcher goes on with this trace
    for offset, event in enumerate(raw_events):
        seq = first_seq + offset
        item: Item = {
            table.PK: {"S": pk},
            table.SK: {"S": table.event_sk(seq)},
            "seq": {"N": str(seq)},
            "event": {"B": event},
        }
        if expires is not None:
            item[table.TTL_ATTRIBUTE] = {"N": str(expires)}
        if traceparent is not None:
            item[table.TRACEPARENT] = {"S": traceparent}
        # A large event's parts precede it: whoever sees the event can read them.
        puts += [gateway.put(part) for part in _parts.split(item, "event")]
        table.check_size(item, "an event")
        puts.append(gateway.put(item, "attribute_not_exists(sk)"))
    puts += [gateway.put(part) for part in snapshot_parts]
    bodies: list[Item] = []
    if new_body is not None:
        assert layout is not None
        expiry = snapshot.get(table.TTL_ATTRIBUTE)
        # Cached once written (`wrote_bodies`): the number is another writer's if this
        # write loses.
        bodies.append(gateway.put(_bodies.body_item(pk, layout.last, new_body, expiry),
                                  "attribute_not_exists(sk)"))
    return snapshot, puts, bodies


def bodies_apart(puts: list[Item]) -> tuple[list[Item], list[Item]]:
    """The puts of a write less its body puts, and those: a body goes in the transaction
    that writes its snapshot (`_bodies`)."""
    def is_body(put: Item) -> bool:
        return str(put["Put"]["Item"][table.SK]["S"]).startswith(table.BODY_PREFIX)
    return ([put for put in puts if not is_body(put)], [put for put in puts if is_body(put)])


def wrote_bodies(gateway: Gateway, bodies: list[Item]) -> None:
    """Keep the bytes of the bodies a committed write put (they never change)."""
    for put in bodies:
        item = put["Put"]["Item"]
        number = item[table.SK]["S"][len(table.BODY_PREFIX):]
        gateway.body_cache.put(item[table.PK]["S"], str(int(number)), item[_bodies.BODY]["B"])


def claim(gateway: Gateway, scope: Scope, message_id: str | None, task_id: str,
          expires: int) -> list[Item]:
    """The idempotency claim for `message_id` (none without one)."""
    if not message_id:
        return []
    put = gateway.put({
        table.PK: {"S": table.message_pk(scope, message_id)},
        table.SK: {"S": table.MESSAGE_SK},
        "task_id": {"S": task_id},
        table.TTL_ATTRIBUTE: {"N": str(expires)},
    }, "attribute_not_exists(pk)")
    put["Put"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return [put]


async def transact(gateway: Gateway, writes: list[Item], task_id: str, **meaning: Any) -> None:
    """One transaction of a write of `task_id`, its cancellation read by `interpret`."""
    await gateway.transact(writes, interpret(writes, task_id, **meaning))


async def create(gateway: Gateway, task_id: str, snapshot: Item, puts: list[Item],
                 claims: list[Item], take: list[Item], others: list[Item],
                 quota: int | None) -> None:
    """Write a new task: its snapshot, event `puts`, message `claims`, quota `take` (counted
    against `quota`) and `others` (push configs, bookkeeping)."""
    put = gateway.put(snapshot, "attribute_not_exists(pk)")
    # The owner's quota is taken in the transaction that creates the task, on its
    # condition: of a burst of creates, those past the limit are cancelled whole.
    meaning = {"quota": quota} if take else {}
    single = [put, *claims, *take, *others, *puts]
    if fits(single):
        await transact(gateway, single, task_id, **meaning)
        return
    # Several transactions: the first checks that the task and the claim do not exist yet
    # and that the quota has room; the last writes them with the snapshot.
    checks = [check(entry) for entry in (*claims, put)]
    checks += [quota_check(entry) for entry in take]
    for batch in transactions(checks, puts, [put, *claims, *take, *others]):
        await transact(gateway, batch, task_id, **meaning)


async def update(gateway: Gateway, task_id: str, snapshot: Item, puts: list[Item],
                 claims: list[Item], extra: list[Item], condition: Condition, *,
                 hold_ms: int, hold_ms_per_batch: int) -> None:
    """Write an update on `condition`: in one transaction, or in several under a reservation
    held `hold_ms`, plus `hold_ms_per_batch` per transaction (the module's docstring)."""
    expression, values = condition.expression()
    put = gateway.put(snapshot, expression, values)
    put["Put"]["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    meaning = {"expected_version": condition.version, "last_seq": condition.last_seq,
               "breaking": condition.breaking}
    single = [put, *claims, *extra, *puts]
    if fits(single):
        await transact(gateway, single, task_id, **meaning)
        return
    token = os.urandom(12).hex()
    until = epoch_ms() + hold_ms + hold_ms_per_batch * (len(puts) // 90 + 1)
    hold = {":w": {"S": token}, ":wu": {"N": str(until)}}
    reserve: Item = {"Update": {
        "TableName": gateway.name,
        "Key": table.key(snapshot[table.PK]["S"], table.SNAPSHOT_SK),
        "UpdateExpression": "SET #w = :w, #wu = :wu",
        "ConditionExpression": expression,
        "ExpressionAttributeNames": {"#w": table.WRITER, "#wu": table.WRITER_UNTIL},
        "ExpressionAttributeValues": {**values, **hold},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }}
    final = gateway.put(snapshot, f"version = :v AND {table.WRITER} = :w",
                        {":v": values[":v"], ":w": hold[":w"]})
    batches = transactions([reserve, *claims], puts, [final, *extra])
    await transact(gateway, batches[0], task_id, **meaning)
    for batch in batches[1:]:
        # Only a writer that broke this reservation (we outlived it) makes these fail.
        await transact(gateway, batch, task_id)


async def outwait(gateway: Gateway, pk: str, held: Reserved, delay: float,
                  max_delay: float) -> None:
    """Wait while the snapshot is reserved by `held` (until it commits, or may be broken),
    polling after `delay`, doubling up to `max_delay`."""
    while epoch_ms() < held.until_ms:
        await asyncio.sleep(delay)
        delay = min(delay * 2, max_delay)
        response = await gateway.call(
            gateway.client.get_item, TableName=gateway.name,
            Key=table.key(pk, table.SNAPSHOT_SK), ConsistentRead=True,
            ProjectionExpression="#w", ExpressionAttributeNames={"#w": table.WRITER})
        if response.get("Item", {}).get(table.WRITER, {}).get("S") != held.token:
            return
