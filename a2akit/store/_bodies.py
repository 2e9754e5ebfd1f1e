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
from a2akit.store._parts import Cache, Call, query_pages, sk_between
from a2akit.store.table import Item

__all__ = ["BODY_MAX", "BODY_MIN", "Layout", "Tail", "event_parts", "join", "layout_of", "plan",
           "read", "read_tail", "remember_tail"]

BODY_MIN = 512  # new content moves to a body once it is at least this large
BODY_MAX = 256 * 1024  # one body holds at most this much (larger content stays put)
LAYOUT = "body"  # S on the snapshot: "<first>:<last>:<messages>:<parts,...>"
DIGEST = "body_sum"  # B on the snapshot: the digest of what the live bodies hold
BODY = "body"  # B on a body item
TAIL_DIGEST = "body_tail"  # B on the snapshot: the digest of its tail's parts (`Tail`)


@dataclasses.dataclass(frozen=True)
class Tail:
    """An artifact's parts after those its bodies hold, kept in the task's events only: the
    parts of the artifact updates (for that artifact's id) among the events from `seq` to
    the snapshot's last_seq."""

    artifact: int  # its index
    seq: int  # the first event of the range
    parts: int  # how many parts the range adds
    digest: bytes  # of those parts and the artifact's id


@dataclasses.dataclass(frozen=True)
class Layout:
    first: int  # the first live body
    last: int  # the last live body; first > last: none (last: the last number used)
    messages: int  # history messages the live bodies hold
    parts: tuple[int, ...]  # per artifact (by index): parts the live bodies hold
    digest: bytes
    tail: Tail | None = None

    def attributes(self) -> Item:
        parts = ",".join(str(n) for n in self.parts)
        text = f"{self.first}:{self.last}:{self.messages}:{parts}"
        attributes: Item = {DIGEST: {"B": self.digest}}
        if self.tail is not None:
            text += f":{self.tail.artifact},{self.tail.seq},{self.tail.parts}"
            attributes[TAIL_DIGEST] = {"B": self.tail.digest}
        attributes[LAYOUT] = {"S": text}
        return attributes

    @property
    def live(self) -> bool:
        return self.first <= self.last

    @property
    def joins(self) -> bool:
        """Whether a read of the snapshot joins anything (bodies, a tail of events)."""
        return self.live or self.tail is not None


def layout_of(item: Item) -> Layout | None:
    """The layout a snapshot item carries (None: it never had a body)."""
    if LAYOUT not in item:
        return None
    first, last, messages, parts, *rest = item[LAYOUT]["S"].split(":")
    tail = None
    if rest:
        artifact, seq, count = (int(n) for n in rest[0].split(","))
        tail = Tail(artifact, seq, count, bytes(item[TAIL_DIGEST]["B"]))
    return Layout(int(first), int(last), int(messages),
                  tuple(int(n) for n in parts.split(",") if n), bytes(item[DIGEST]["B"]),
                  tail)


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


def _parts_digest(parts: Sequence[pb.Part], artifact_id: str) -> bytes:
    """The digest of a tail's parts and of the artifact id its events are read by."""
    held = pb.Artifact(artifact_id=artifact_id)
    held.parts.extend(parts)
    return hashlib.blake2b(held.SerializeToString(deterministic=True), digest_size=16).digest()


def event_parts(event: pb.StreamResponse, artifact_id: str) -> list[pb.Part]:
    """The parts an event adds to the artifact `artifact_id`, as a tail counts them."""
    if event.HasField("artifact_update") and \
            event.artifact_update.artifact.artifact_id == artifact_id:
        return list(event.artifact_update.artifact.parts)
    return []


def _tail(task: pb.Task, old: Layout | None, held: Sequence[int],
          events: Sequence[pb.StreamResponse], first_seq: int) -> Tail | None:
    """The tail of the new snapshot: the old one with this write's parts of its artifact,
    or one starting at this write; None when the artifact's parts beyond its bodies are not
    exactly what the range of events adds."""
    candidates: list[tuple[int, int, int]] = []  # artifact, first seq, parts before
    if old is not None and old.tail is not None:
        candidates.append((old.tail.artifact, old.tail.seq, old.tail.parts))
    for index, artifact in enumerate(task.artifacts):
        if any(event_parts(event, artifact.artifact_id) for event in events):
            candidates.append((index, first_seq, 0))
            break
    for index, seq, before in candidates:
        if index >= len(task.artifacts):
            continue
        base = held[index] if index < len(held) else 0
        artifact = task.artifacts[index]
        parts = artifact.parts[base:]
        if before and (old is None or old.tail is None
                       or len(parts) < before
                       or _parts_digest(parts[:before], artifact.artifact_id) != old.tail.digest):
            continue
        added = [part for event in events for part in event_parts(event, artifact.artifact_id)]
        if (not added and not before) or len(parts) != before + len(added) or any(
                a.SerializeToString(deterministic=True) != b.SerializeToString(deterministic=True)
                for a, b in zip(parts[before:], added, strict=True)):
            continue
        return Tail(index, seq, len(parts), _parts_digest(parts, artifact.artifact_id))
    return None


def plan(task: pb.Task, old: Layout | None, events: Sequence[pb.StreamResponse] = (),
         first_seq: int = 1, *, tails: bool = True,
         ) -> tuple[pb.Task, Layout | None, bytes | None]:
    """How to store `task` after a snapshot of layout `old`, written with `events` (from
    `first_seq` on): the snapshot's task, its layout, and the bytes of a new body (numbered
    `layout.last`) or None. `tails`: the events from the old snapshot's last_seq on are
    exactly `events` (not so when breaking a dead writer's reservation)."""
    kept = old is not None and old.live and _digest(task, old.messages, old.parts) == old.digest
    messages = old.messages if kept and old else 0
    parts = list(old.parts) if kept and old else []
    tail = _tail(task, old if kept or (old is not None and not old.live) else None, parts,
                 events, first_seq) if tails else None
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
        for part in ([] if tail is not None and tail.artifact == index
                     else artifact.parts[have:]):
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
        layout = Layout(first, number, messages, tuple(new_parts), digest, tail)
        body = delta.SerializeToString()
    elif kept and old is not None:
        layout = dataclasses.replace(old, tail=tail)
    elif old is not None:  # dropped: none live, the numbers go on
        layout = Layout(old.last + 1, old.last, 0, (), _digest(pb.Task(), 0, ()) or b"",
                        tail)
    elif tail is not None:
        layout = Layout(1, 0, 0, (), _digest(pb.Task(), 0, ()) or b"", tail)
    else:
        layout = None
    head = pb.Task()
    head.CopyFrom(task)
    if layout is not None and layout.live:
        del head.history[:layout.messages]
        for artifact, count in zip(head.artifacts, layout.parts, strict=False):
            del artifact.parts[:count]
    if tail is not None:  # the tail's parts are its events'
        del head.artifacts[tail.artifact].parts[:]
    return head, layout, body


def body_item(pk: str, number: int, data: bytes, expires: Item | None) -> Item:
    item: Item = {**table.key(pk, table.body_sk(number)), BODY: {"B": data}}
    if expires is not None:
        item[table.TTL_ATTRIBUTE] = expires
    return item


def join(head: pb.Task, bodies: Sequence[bytes], tail: Tail | None = None,
         tail_parts: Sequence[pb.Part] = ()) -> pb.Task:
    """The task of a snapshot's task `head`, its live bodies' bytes (in order) and the parts
    of its tail."""
    if not bodies and tail is None:
        return head
    held = [pb.Task.FromString(data) for data in bodies]
    task = pb.Task()
    task.CopyFrom(head)
    if tail is not None:
        task.artifacts[tail.artifact].parts.extend(tail_parts)
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
        request = sk_between(table_name, pk, table.body_sk(missing[0]),
                             table.body_sk(layout.last))
        async for items in query_pages(call, client, **request):
            for item in items:
                number = int(item[table.SK]["S"][len(table.BODY_PREFIX):])
                if number in found:
                    data = bytes(item[BODY]["B"])
                    found[number] = data
                    cache.put(pk, str(number), data)
    if any(data is None for data in found.values()):
        # Only TTL deletes bodies, with their snapshot: a task expiring as it was read.
        raise UnavailableError("the task is being deleted (its retention is over)")
    return [data for data in found.values() if data is not None]


async def read_tail(call: Call, client: Any, table_name: str, pk: str, layout: Layout,
                    last_seq: int, artifact_id: str, cache: Cache) -> list[pb.Part]:
    """The parts of the tail of `layout`: those its events (up to `last_seq`) add to the
    artifact `artifact_id`, from `cache` (per event) or by one `Query` of those not cached
    (strongly consistent, paginated; large events joined with their parts)."""
    from a2akit.store import _parts

    tail = layout.tail
    assert tail is not None
    found: dict[int, bytes | None] = {
        seq: cache.get(pk, _tail_key(seq, artifact_id)) for seq in range(tail.seq, last_seq + 1)}
    missing = [seq for seq, data in found.items() if data is None]
    if missing:
        request = sk_between(table_name, pk, table.event_sk(missing[0]),
                             table.event_sk(last_seq))
        async for items in query_pages(call, client, **request):
            for item in items:
                seq = int(item["seq"]["N"])
                if seq not in found or found[seq] is not None:
                    continue
                if not await _parts.join_by_query(call, client, table_name, item, "event"):
                    raise UnavailableError("a task's event is missing a part")
                event = pb.StreamResponse.FromString(item["event"]["B"])
                held = pb.Artifact()
                held.parts.extend(event_parts(event, artifact_id))
                extracted = held.SerializeToString()
                found[seq] = extracted
                cache.put(pk, _tail_key(seq, artifact_id), extracted)
    if any(data is None for data in found.values()):
        raise UnavailableError("the task is being deleted (its retention is over)")
    parts: list[pb.Part] = []
    for held_bytes in found.values():
        if held_bytes:
            parts.extend(pb.Artifact.FromString(held_bytes).parts)
    return parts


def _tail_key(seq: int, artifact_id: str) -> str:
    return f"e{seq}#{artifact_id}"


def remember_tail(cache: Cache, pk: str, layout: Layout | None, head: pb.Task,
                  events: Sequence[pb.StreamResponse], first_seq: int) -> None:
    """Keep what a committed write's events add to its snapshot's tail (they never change),
    so the writer's own reads of the task read no event."""
    if layout is None or layout.tail is None:
        return
    artifact_id = head.artifacts[layout.tail.artifact].artifact_id
    for offset, event in enumerate(events):
        seq = first_seq + offset
        if seq >= layout.tail.seq:
            held = pb.Artifact()
            held.parts.extend(event_parts(event, artifact_id))
            cache.put(pk, _tail_key(seq, artifact_id), held.SerializeToString())
