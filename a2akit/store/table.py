"""The DynamoDB table: its definition (one source for the store, its tests and the CDK stack),
its key layout and DynamoDB's size limits.

Every key starts with the caller's scope, ``T#<tenant>#O#<owner>``, both parts
percent-encoded like every id in a key, so no value can forge a ``#`` separator and no two
scopes share a key (docs/store.md):

    pk                          sk                      what
    <scope>#TASK#<task id>      TASK                    snapshot (task, version, last_seq; lpk/lsk)
    <scope>#TASK#<task id>      EV#<seq, 20 digits>     one event (StreamResponse bytes;
                                                        `traceparent` of the write)
    <scope>#TASK#<task id>      PUSH#<config id>        one push notification config
    <scope>#MSG#<message id>    MSG                     idempotency claim: the task id
    <scope>#TASK#<task id>      PART#<token>#<i>        part i of a split snapshot or event
    <scope>#TASK#<task id>      BODY#<n, 20 digits>     messages and artifact parts moved out
                                                        of the snapshot (`_bodies`)
    Q#<owner>                   QUOTA                   the owner's counted unfinished tasks,
                                                        in every tenant (`active`)

A snapshot or event item that would be over DynamoDB's 400 KB keeps the first part of its
bytes and says how many parts there are (`PARTS`) and under which token (`PART_TOKEN`); the
other parts are items of their own, written in the same transactions or earlier ones
(`a2akit.store._parts`, docs/store.md "Large tasks").

Two list indexes share the sort key ``lsk``, the task's `Position`
(``<status ms, 15 digits>#<write ns, 20 digits>#<task id>``), and project only the task
state; only snapshots carry their keys:

    index             partition key                      answers
    list_by_scope     lpk = <scope>#L#<shard>            ListTasks without a context filter
    list_by_context   cpk = <scope>#C#<context id>       ListTasks filtered by context

The scope's tasks are spread over `LIST_SHARDS` partitions of the first index by a hash of
the task id, so one owner's write rate is not capped by one partition (docs/store.md).

The lease index `by_lease` (sparse, keys only): ``lease_shard`` = ``L#<0..3>`` (from the task
key), ``lease_until`` = epoch ms. Only a snapshot whose task is leased carries them, and a
terminal task never is, so the sweeper queries running tasks without scanning the table.
"""

from __future__ import annotations

import json
import zlib
from typing import Any
from urllib.parse import quote, unquote

from a2akit.errors import InternalError
from a2akit.store.base import Lease, Scope
from a2akit.store.cursor import STATUS_MS_DIGITS, WRITE_NS_DIGITS, Position

__all__ = [
    "BODY_PREFIX",
    "CANCEL_REQUESTED",
    "CONTEXT_INDEX",
    "CONTEXT_INDEX_PK",
    "COUNTED",
    "COUNT_ALL",
    "COUNT_SK",
    "EVENT_PREFIX",
    "EXPIRY_PREFIX",
    "EXPIRY_SHARDS",
    "LAST_EVENT_SK",
    "LEASE_INDEX",
    "LEASE_OWNER",
    "LEASE_SHARD",
    "LEASE_SHARDS",
    "LEASE_UNTIL",
    "LIST_INDEX",
    "LIST_INDEXES",
    "LIST_INDEX_PK",
    "LIST_INDEX_SK",
    "LIST_PROJECTED",
    "LIST_SHARDS",
    "MAX_ITEM_BYTES",
    "MAX_TRANSACTION_BYTES",
    "MAX_TRANSACTION_ITEMS",
    "MESSAGE_SK",
    "PARTS",
    "PART_PREFIX",
    "PART_TOKEN",
    "PK",
    "PUSH_PREFIX",
    "PUSH_PROTOCOL",
    "QUOTA_ACTIVE",
    "QUOTA_SK",
    "RETIRE_PREFIX",
    "SK",
    "SNAPSHOT_SK",
    "TRACEPARENT",
    "TTL_ATTRIBUTE",
    "WRITER",
    "WRITER_UNTIL",
    "Item",
    "body_sk",
    "check_size",
    "context_pk",
    "count_of",
    "count_pk",
    "create_table_kwargs",
    "event_sk",
    "expiry_pk",
    "item_size",
    "key",
    "lease_attributes",
    "lease_of",
    "lease_shard",
    "list_pk",
    "list_position",
    "list_shard",
    "list_sk",
    "list_sk_from",
    "message_pk",
    "parse_task_pk",
    "part_sk",
    "push_sk",
    "quota_key",
    "retire_key",
    "scope_prefix",
    "task_pk",
]

PK = "pk"
SK = "sk"
LIST_INDEX = "list_by_scope"
LIST_INDEX_PK = "lpk"  # the scope and the task's shard
CONTEXT_INDEX = "list_by_context"
CONTEXT_INDEX_PK = "cpk"  # the scope and the task's context id
LIST_INDEX_SK = "lsk"  # the task's Position, fixed width: newest first when reversed
LIST_INDEXES = ((LIST_INDEX, LIST_INDEX_PK), (CONTEXT_INDEX, CONTEXT_INDEX_PK))
# Index items hold their keys and these attributes only: small items keep the reads that
# count (totalSize) and the index writes cheap; a page's tasks are then read by key.
LIST_PROJECTED = ("state",)
# Partitions of one scope in the list index. A partition key takes about 1,000 writes/s;
# each shard is one. Fixed for the life of a table: the readers query exactly these.
LIST_SHARDS = 8
TTL_ATTRIBUTE = "expires_at"
# A write in several transactions holds the snapshot meanwhile (a2akit.store._writes):
# Set by CancelTask on an unfinished task's snapshot (N: epoch ms): while it is there, only a
# write that ends the task goes through (store.base.TaskStore.update).
CANCEL_REQUESTED = "cancel_requested"
WRITER = "writer"  # its random token (S)
WRITER_UNTIL = "writer_until"  # epoch ms after which another writer may break it (N)
LEASE_INDEX = "by_lease"
LEASE_SHARD = "lease_shard"  # present only while the task is leased: the index is sparse
LEASE_UNTIL = "lease_until"  # epoch ms (N)
LEASE_OWNER = "lease_owner"
# Renewals write the lease index; spreading it over a few partitions keeps any one of them
# far below DynamoDB's per-partition write rate. The sweeper queries each shard.
LEASE_SHARDS = 4

# A finished task whose older items still need their expiry has a marker item, pk
# `EXPIRE#<shard>` and sk its task key, until they have it (`DynamoDBStore.expire_finished`).
EXPIRY_PREFIX = "EXPIRE#"
EXPIRY_SHARDS = 16

# The scope's task counts, one item per list shard (pk `<scope>#N#<shard>`, sk `COUNT`):
# `n` all tasks, `s<state>` per state; kept in the transaction that writes the snapshot.
COUNT_SK = "COUNT"
COUNT_ALL = "n"
# A finished task's retirement (pk `RETIRE#<shard>`, sk `<expires_at, 12 digits>#<task key>`,
# its state): at its expiry the sweeper takes it out of the counts (`expire_finished`).
RETIRE_PREFIX = "RETIRE#"

# The per-caller quota (A2A_MAX_ACTIVE_TASKS_PER_CALLER): one item per owner, across its
# tenants (pk `Q#<owner>`, sk `QUOTA`), `active` its unfinished tasks created with a limit. A
# create adds one on the condition that it stays within the limit, in its transaction; the
# write that ends a task whose snapshot carries `counted` takes it out again.
QUOTA_SK = "QUOTA"
QUOTA_ACTIVE = "active"
COUNTED = "counted"  # N (1), on the snapshot of an unfinished task in its owner's count

SNAPSHOT_SK = "TASK"
MESSAGE_SK = "MSG"
PUSH_PREFIX = "PUSH#"
# S, on a push config item: the protocol generation of the call that stored it when it is
# not 1.0 ("0.3"); absent: 1.0 (store.base.PushTarget).
PUSH_PROTOCOL = "protocol_version"
EVENT_PREFIX = "EV#"
_SEQ_DIGITS = 20
# The parts of a split item: `PART#` does not start with `EV#`, so the push stream's filter
# never takes a part for an event, and no event query reads one.
PART_PREFIX = "PART#"
# S, on an event item: the W3C `traceparent` of the hop that wrote it (a2akit.trace), so the
# push dispatcher, which sees only the table's stream, continues the task's trace.
TRACEPARENT = "traceparent"
# A task's history messages and artifact parts kept out of its snapshot, append-only
# (`a2akit.store._bodies`); `BODY#` starts with neither `EV#` nor `PART#`.
BODY_PREFIX = "BODY#"
PARTS = "parts"  # N: how many parts the item's bytes are in (the item holds the first)
PART_TOKEN = "part_token"  # S: the token in the sort keys of its other parts

MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item size limit (names + values)
MAX_TRANSACTION_ITEMS = 100
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024

Item = dict[str, Any]  # an item in DynamoDB's attribute-value form


def create_table_kwargs(table_name: str) -> dict[str, Any]:
    """Arguments for boto3 `create_table` (local emulator) mirroring infra's table."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            *({"AttributeName": name, "AttributeType": "S"}
              for name in (PK, SK, LIST_INDEX_PK, LIST_INDEX_SK, CONTEXT_INDEX_PK, LEASE_SHARD)),
            {"AttributeName": LEASE_UNTIL, "AttributeType": "N"},
        ],
        "KeySchema": [
            {"AttributeName": PK, "KeyType": "HASH"},
            {"AttributeName": SK, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            *(
                {
                    "IndexName": index,
                    "KeySchema": [
                        {"AttributeName": partition, "KeyType": "HASH"},
                        {"AttributeName": LIST_INDEX_SK, "KeyType": "RANGE"},
                    ],
                    "Projection": {
                        "ProjectionType": "INCLUDE",
                        "NonKeyAttributes": list(LIST_PROJECTED),
                    },
                }
                for index, partition in LIST_INDEXES
            ),
            {
                "IndexName": LEASE_INDEX,
                "KeySchema": [
                    {"AttributeName": LEASE_SHARD, "KeyType": "HASH"},
                    {"AttributeName": LEASE_UNTIL, "KeyType": "RANGE"},
                ],
                # The sweeper needs only the task key, which a keys-only index carries.
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }


# --- keys ------------------------------------------------------------------------------


def _enc(value: str) -> str:
    """Percent-encode everything but unreserved characters: no `#` survives."""
    return quote(value, safe="")


def scope_prefix(scope: Scope) -> str:
    return f"T#{_enc(scope.tenant)}#O#{_enc(scope.owner)}"


def task_pk(scope: Scope, task_id: str) -> str:
    return f"{scope_prefix(scope)}#TASK#{_enc(task_id)}"


def parse_task_pk(pk: str) -> tuple[Scope, str]:
    """The scope and task id of a task key (`task_pk` reversed).

    Raises ValueError for a key that is not a task key."""
    parts = pk.split("#")
    if len(parts) != 6 or parts[0] != "T" or parts[2] != "O" or parts[4] != "TASK":
        raise ValueError(f"not a task key: {pk!r}")
    return Scope(unquote(parts[1]), unquote(parts[3])), unquote(parts[5])


def lease_shard(pk: str) -> str:
    """The lease index partition of a task key: stable, spread over LEASE_SHARDS."""
    return f"L#{zlib.crc32(pk.encode()) % LEASE_SHARDS}"


def expiry_pk(task_key: str) -> str:
    """The partition of a task's expiry marker: spread, so no partition key is hot."""
    return f"{EXPIRY_PREFIX}{zlib.crc32(task_key.encode()) % EXPIRY_SHARDS}"


def count_pk(scope: Scope, shard: int) -> str:
    return f"{scope_prefix(scope)}#N#{shard}"


def count_of(state: int) -> str:
    """The count attribute of one task state."""
    return f"s{state}"


def retire_key(task_key: str, expires_at: int) -> Item:
    return key(f"{RETIRE_PREFIX}{zlib.crc32(task_key.encode()) % EXPIRY_SHARDS}",
               f"{expires_at:012d}#{task_key}")


def quota_key(owner: str) -> Item:
    """The owner's quota item: no tenant in it, the quota is the caller's across tenants."""
    return key(f"Q#{_enc(owner)}", QUOTA_SK)


def message_pk(scope: Scope, message_id: str) -> str:
    return f"{scope_prefix(scope)}#MSG#{_enc(message_id)}"


def event_sk(seq: int) -> str:
    return f"{EVENT_PREFIX}{seq:0{_SEQ_DIGITS}d}"


LAST_EVENT_SK = event_sk(10**_SEQ_DIGITS - 1)


def part_sk(token: str, index: int) -> str:
    return f"{PART_PREFIX}{token}#{index:06d}"


def body_sk(number: int) -> str:
    return f"{BODY_PREFIX}{number:0{_SEQ_DIGITS}d}"


def push_sk(config_id: str) -> str:
    return PUSH_PREFIX + _enc(config_id)


def key(pk: str, sk: str) -> Item:
    return {PK: {"S": pk}, SK: {"S": sk}}


def list_shard(task_id: str) -> int:
    """The list index shard of a task: a stable hash, so a task never changes shard."""
    return zlib.crc32(task_id.encode()) % LIST_SHARDS


def list_pk(scope: Scope, shard: int) -> str:
    return f"{scope_prefix(scope)}#L#{shard}"


def context_pk(scope: Scope, context_id: str) -> str:
    return f"{scope_prefix(scope)}#C#{_enc(context_id)}"


def list_sk(position: Position) -> str:
    return (f"{position.status_ms:0{STATUS_MS_DIGITS}d}#{position.write_ns:0{WRITE_NS_DIGITS}d}"
            f"#{_enc(position.task_id)}")


def list_sk_from(status_ms: int) -> str:
    """The least `lsk` of a status time: ``lsk >= list_sk_from(t)`` keeps status times >= t."""
    return f"{status_ms:0{STATUS_MS_DIGITS}d}"


def list_position(lsk: str) -> Position:
    """The position an `lsk` holds."""
    status_ms, stamp, task_id = lsk.split("#", 2)
    return Position(int(status_ms), int(stamp), unquote(task_id))


# --- sizes -----------------------------------------------------------------------------


def item_size(item: Item) -> int:
    """DynamoDB's item size: attribute names plus values (numbers count ~1 byte per 2 digits)."""
    size = 0
    for name, value in item.items():
        size += len(name.encode())
        if "S" in value:
            size += len(value["S"].encode())
        elif "B" in value:
            size += len(value["B"])
        elif "N" in value:
            size += len(value["N"]) // 2 + 2
        else:
            size += len(json.dumps(value))
    return size


def check_size(item: Item, what: str) -> None:
    """Raises InternalError, before anything is written, for an item over 400 KB: the store
    splits what is larger (`_parts`), so such an item is the store's fault, never the
    caller's."""
    size = item_size(item)
    if size > MAX_ITEM_BYTES:
        raise InternalError(
            f"the store built {what} of {size} bytes, over DynamoDB's 400 KB item limit")


def lease_attributes(pk: str, lease: Lease) -> dict[str, Any]:
    """The snapshot attributes that hold `lease` (and put it in the lease index's shard)."""
    return {
        LEASE_OWNER: {"S": lease.owner},
        LEASE_UNTIL: {"N": str(lease.until_ms)},
        LEASE_SHARD: {"S": lease_shard(pk)},
    }


def lease_of(item: dict[str, Any]) -> Lease | None:
    """The lease a snapshot item holds, if any."""
    if LEASE_OWNER not in item or LEASE_UNTIL not in item:
        return None
    return Lease(item[LEASE_OWNER]["S"], int(item[LEASE_UNTIL]["N"]))
