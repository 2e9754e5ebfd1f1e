"""A task's bulk (its history and its artifacts' parts) in append-only *body* items, so a
write that appends a chunk or changes the status does not rewrite everything the task holds
(docs/store.md, "Bodies").

The snapshot keeps the task less what its bodies hold, plus its *layout* (`Layout`): the
numbers of its live bodies (``first..last``), how many history messages and, per artifact
(by index), how many parts they hold, and a digest of that content. Body ``n`` is the item
``BODY#<n, 20 digits>`` under the task's partition, ``body`` (B) a serialized `pb.Task`
holding only the messages and the parts it adds, in order. The task is the snapshot's with
its bodies' messages put before its history and their parts before each artifact's parts.

A write compares the new task with the layout of the version it replaces (`plan`): when the
new task still starts with what the bodies hold (same counts, same digest), it keeps them and
moves its new messages and parts, once they make at least `BODY_MIN` bytes, into one new body
(up to `BODY_MAX`; what is larger stays in the snapshot, which `_parts` splits); otherwise
(an artifact replaced, a history rewritten) the bodies are dropped from the layout and the
task starts again from the snapshot alone. Body numbers only grow (a dropped layout's next
body takes the number after its last), a body is put with ``attribute_not_exists(sk)`` in the
transaction that writes the snapshot referring to it, and bodies are never overwritten or
deleted while their task lives: a reader of any snapshot finds its bodies. Dropped bodies stay
until the task expires (the expiry step gives every item of the task its expiry).

Bodies never change, so the gateway keeps those it wrote or read (`_parts.Cache`, by number):
a runner's own reads of its task read the snapshot and no body.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from a2akit.errors import UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import table
from a2akit.store._parts import Cache, Call
from a2akit.store.table import Item

__all__ = ["BODY_MAX", "BODY_MIN", "Layout", "join", "layout_of", "plan", "read"]

BODY_MIN = 512  # new content moves to a body once it is at least this large
BODY_MAX = 256 * 1024  # one body holds at most this much (larger content stays put)
LAYOUT = "body"  # S on the snapshot: "<first>:<last>:<messages>:<parts,...>"
DIGEST = "body_sum"  # B on the snapshot: the digest of what the live bodies hold
BODY = "body"  # B on a body item


@dataclasses.dataclass(frozen=True)
class Layout:
    first: int  # the first live body
    last: int  # the last live body; first > last: none (last: the last number used)
    messages: int  # history messages the live bodies hold
    parts: tuple[int, ...]  # per artifact (by index): parts the live bodies hold
    digest: bytes

    def attributes(self) -> Item:
        parts = ",".join(str(n) for n in self.parts)
        return {LAYOUT: {"S": f"{self.first}:{self.last}:{self.messages}:{parts}"},
                DIGEST: {"B": self.digest}}

    @property
    def live(self) -> bool:
        return self.first <= self.last


def layout_of(item: Item) -> Layout | None:
    """The layout a snapshot item carries (None: it never had a body)."""
    if LAYOUT not in item:
        return None
    first, last, messages, parts = item[LAYOUT]["S"].split(":")
    return Layout(int(first), int(last), int(messages),
                  tuple(int(n) for n in parts.split(",") if n), bytes(item[DIGEST]["B"]))


def _digest(task: pb.Task, messages: int, parts: Sequence[int]) -> bytes | None:
    """The digest of the first `messages` messages and `parts` parts of `task`; None when
    the task has fewer."""
    if len(task.history) < messages or len(parts) > len(task.artifacts):
        return None
    held = pb.Task()
    held.history.extend(task.history[:messages])
    for artifact, count in zip(task.artifacts, parts, strict=False):
        if len(artifact.parts) < count:
            return None
        held.artifacts.add().parts.extend(artifact.parts[:count])
    return hashlib.blake2b(held.SerializeToString(deterministic=True), digest_size=16).digest()


def plan(task: pb.Task, old: Layout | None) -> tuple[pb.Task, Layout | None, bytes | None]:
    """How to store `task` after a snapshot of layout `old`: the snapshot's task, its layout,
    and the bytes of a new body (numbered `layout.last`) or None."""
    kept = old is not None and old.live and _digest(task, old.messages, old.parts) == old.digest
    messages = old.messages if kept and old else 0
    parts = list(old.parts) if kept and old else []
    budget = BODY_MAX
    delta = pb.Task()
    taken = 0
    for message in task.history[messages:]:
        size = message.ByteSize() + 6
        if size > budget:
            break
        budget -= size
        taken += 1
    delta.history.extend(task.history[messages:messages + taken])
    new_parts: list[int] = []
    for index, artifact in enumerate(task.artifacts):
        have = parts[index] if index < len(parts) else 0
        take = 0
        for part in artifact.parts[have:]:
            size = part.ByteSize() + 6
            if size > budget:
                break
            budget -= size
            take += 1
        delta.artifacts.add().parts.extend(artifact.parts[have:have + take])
        new_parts.append(have + take)
    layout: Layout | None
    body: bytes | None = None
    if BODY_MAX - budget >= BODY_MIN:
        while new_parts and new_parts[-1] == 0:
            new_parts.pop()
        del delta.artifacts[len(new_parts):]
        number = old.last + 1 if old is not None else 1
        first = old.first if kept and old else number
        messages += taken
        digest = _digest(task, messages, new_parts)
        assert digest is not None
        layout = Layout(first, number, messages, tuple(new_parts), digest)
        body = delta.SerializeToString()
    elif kept:
        layout = old
    elif old is not None:  # dropped: none live, the numbers go on
        layout = Layout(old.last + 1, old.last, 0, (), _digest(pb.Task(), 0, ()) or b"")
    else:
        layout = None
    head = pb.Task()
    head.CopyFrom(task)
    if layout is not None and layout.live:
        del head.history[:layout.messages]
        for artifact, count in zip(head.artifacts, layout.parts, strict=False):
            del artifact.parts[:count]
    return head, layout, body


def body_item(pk: str, number: int, data: bytes, expires: Item | None) -> Item:
    item: Item = {**table.key(pk, table.body_sk(number)), BODY: {"B": data}}
    if expires is not None:
        item[table.TTL_ATTRIBUTE] = expires
    return item


def join(head: pb.Task, bodies: Sequence[bytes]) -> pb.Task:
    """The task of a snapshot's task `head` and its live bodies' bytes, in order."""
    if not bodies:
        return head
    held = [pb.Task.FromString(data) for data in bodies]
    task = pb.Task()
    task.CopyFrom(head)
    history = [message for body in held for message in body.history]
    if history:
        history += list(task.history)
        del task.history[:]
        task.history.extend(history)
    for index, artifact in enumerate(task.artifacts):
        parts = [part for body in held if index < len(body.artifacts)
                 for part in body.artifacts[index].parts]
        if parts:
            parts += list(artifact.parts)
            del artifact.parts[:]
            artifact.parts.extend(parts)
    return task


async def read(call: Call, client: Any, table_name: str, pk: str, layout: Layout,
               cache: Cache) -> list[bytes]:
    """The bytes of the live bodies of `layout`, from `cache` or by one `Query` (strongly
    consistent, paginated) of those not cached."""
    numbers = range(layout.first, layout.last + 1)
    found = {n: cache.get(pk, str(n)) for n in numbers}
    missing = [n for n, data in found.items() if data is None]
    if missing:
        kwargs: Item = {
            "TableName": table_name,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :lo AND :hi",
            "ExpressionAttributeValues": {":pk": {"S": pk},
                                          ":lo": {"S": table.body_sk(missing[0])},
                                          ":hi": {"S": table.body_sk(layout.last)}},
            "ConsistentRead": True,
        }
        while True:
            page = await call(client.query, **kwargs)
            for item in page.get("Items", []):
                number = int(item[table.SK]["S"][len(table.BODY_PREFIX):])
                if number in found:
                    data = bytes(item[BODY]["B"])
                    found[number] = data
                    cache.put(pk, str(number), data)
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    if any(data is None for data in found.values()):
        # Only TTL deletes bodies, with their snapshot: a task expiring as it was read.
        raise UnavailableError("the task is being deleted (its retention is over)")
    return [data for data in found.values() if data is not None]
