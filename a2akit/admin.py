"""The operator's command: `./dev admin COMMAND ...` (python -m a2akit.admin), with the
deployment's settings (the same environment as the functions: A2A_TABLE, A2A_QUEUE_URL,
A2A_PUSH_DLQ_URL, AWS_*).

    task TENANT OWNER TASK_ID        a task: its snapshot's state, its events, its lease
    tasks TENANT OWNER [--state S]   a caller's tasks (of one state), newest first
    expired [--limit N]              tasks whose lease expired: their runner is gone
    messages QUEUE [--max N]         a queue's messages, without secrets
    redrive QUEUE --to TARGET (--id MESSAGE_ID ... | --all)
                                     move messages (a dead-letter queue's back to its queue)
    drop QUEUE (--id MESSAGE_ID ... | --all)
                                     delete messages

QUEUE and TARGET are queue URLs or `tasks` (A2A_QUEUE_URL) or `push-dlq` (A2A_PUSH_DLQ_URL).
Everything goes through the store's own reads: nothing here writes a task. A redriven task
message for a finished task does nothing (the worker's rule). Message bodies are summarized,
never printed whole: a task job's request metadata shows only its keys, a push dead-letter
record never its event (which holds the task's content) and never a credential (the record
has none: a2akit.push.dispatcher.dead_letter).

`redrive` and `drop` make one pass: each message is received at most once, those not asked
for are released at once when the pass ends, and ids not found are listed (`notFound`, exit
1). A bad argument is one line and exit 2, as the servers' settings are.

`messages` receives messages to read them (with a visibility timeout of 0, so they are back
at once): on a live queue that counts as a receive towards its dead-letter limit, so inspect
dead-letter queues, not the task queue, while workers run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from a2akit.clock import epoch_ms, timestamp_ms
from a2akit.generated import a2a_pb2 as pb
from a2akit.limits import MAX_ID_BYTES
from a2akit.runtime import explain_startup_errors, make_store
from a2akit.settings import Settings, SettingsError
from a2akit.store.base import Scope, TaskQuery, TaskStore

__all__ = ["main"]


def _state(value: int) -> str:
    return pb.TaskState.Name(value).removeprefix("TASK_STATE_")


def _event_line(seq: int, event: pb.StreamResponse) -> dict[str, Any]:
    kind = event.WhichOneof("payload") or ""
    line: dict[str, Any] = {"seq": seq, "kind": kind}
    if event.HasField("status_update"):
        status = event.status_update.status
        line["state"] = _state(status.state)
        line["at_ms"] = timestamp_ms(status.timestamp)
    elif event.HasField("artifact_update"):
        line["artifact"] = event.artifact_update.artifact.artifact_id
    return line


async def show_task(store: TaskStore, scope: Scope, task_id: str) -> dict[str, Any] | None:
    """The task as stored (no settling: an operator looks, never writes), its events as
    summaries, its lease and whether it expired."""
    stored = await store.get(scope, task_id)
    if stored is None:
        return None
    task = stored.task
    lease = stored.lease
    return {
        "taskId": task.id, "contextId": task.context_id, "tenant": scope.tenant,
        "owner": scope.owner, "state": _state(task.status.state),
        "statusAtMs": timestamp_ms(task.status.timestamp), "version": stored.version,
        "artifacts": len(task.artifacts), "history": len(task.history),
        "cancelRequested": stored.cancel_requested,
        "lease": None if lease is None else {
            "owner": lease.owner, "untilMs": lease.until_ms,
            "expired": lease.until_ms < epoch_ms()},
        "events": [_event_line(e.seq, e.event)
                   for e in await store.events_after(scope, task_id, 0)],
    }


async def list_tasks(store: TaskStore, scope: Scope, state: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    token = ""
    while True:
        page = await store.list(scope, TaskQuery(state=state, page_size=100, page_token=token))
        out += [{"taskId": t.id, "contextId": t.context_id, "state": _state(t.status.state),
                 "statusAtMs": timestamp_ms(t.status.timestamp)} for t in page.tasks]
        token = page.next_page_token
        if not token:
            return out


async def expired(store: TaskStore, limit: int) -> list[dict[str, str]]:
    return [{"tenant": scope.tenant, "owner": scope.owner, "taskId": task_id}
            for scope, task_id in await store.expired_leases(epoch_ms(), limit)]


# --- queues -----------------------------------------------------------------------------------


def summary(body: str) -> dict[str, Any]:
    """What an operator may see of a message body: a task job or a push dead-letter record,
    without content or secrets; anything else only by its size."""
    try:
        data = json.loads(body)
    except ValueError:
        return {"kind": "unknown", "bytes": len(body)}
    if not isinstance(data, dict):
        return {"kind": "unknown", "bytes": len(body)}
    if "leaseOwner" in data and "taskId" in data:
        return {"kind": "task-job", "tenant": data.get("tenant"), "owner": data.get("owner"),
                "taskId": data.get("taskId"), "messageId": data.get("messageId"),
                "newTask": data.get("newTask"), "traceparent": data.get("traceparent"),
                "enqueuedAt": data.get("enqueuedAt"),
                "metadataKeys": sorted(data.get("metadata") or {})}
    if "configId" in data and "taskId" in data:
        kept = ("tenant", "owner", "taskId", "configId", "url", "seq", "attempts", "status",
                "error", "failedAt")
        event = data.get("event")
        return {"kind": "push-dead-letter", **{key: data.get(key) for key in kept},
                "event": sorted(event) if isinstance(event, dict) else None}
    return {"kind": "unknown", "bytes": len(body)}


def _peek(sqs: Any, url: str, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` messages of the queue, each once (receives with visibility timeout 0)."""
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(max(3, limit)):
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0,
                                  WaitTimeSeconds=0, AttributeNames=["All"]).get("Messages", [])
        fresh = [m for m in got if m["MessageId"] not in seen]
        for message in fresh:
            seen[message["MessageId"]] = message
        if not got or len(seen) >= limit:
            break
    return list(seen.values())[:limit]


def _take(sqs: Any, url: str, ids: set[str] | None) -> list[dict[str, Any]]:
    """Receive the messages named (all when `ids` is None), hidden for 60 s while handled.

    One pass: every other message received is held too (so the pass never receives it
    twice) and released at once when the pass ends. A receive still counts towards a
    message's dead-letter limit: one per pass, not one per loop."""
    taken: dict[str, dict[str, Any]] = {}
    others: list[str] = []
    try:
        for _ in range(_MAX_RECEIVES):
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60,
                                      WaitTimeSeconds=0).get("Messages", [])
            if not got:
                break
            for message in got:
                if ids is None or message["MessageId"] in ids:
                    taken[message["MessageId"]] = message
                else:
                    others.append(message["ReceiptHandle"])
            if ids is not None and ids <= set(taken):
                break
    finally:
        for start in range(0, len(others), 10):  # not ours: back at once
            sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
                {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                for i, handle in enumerate(others[start:start + 10])])
    return list(taken.values())


_MAX_RECEIVES = 100  # receives of up to 10 messages: a pass looks at 1,000 at most


def messages(sqs: Any, url: str, limit: int) -> list[dict[str, Any]]:
    return [{"id": m["MessageId"],
             "receives": int(m.get("Attributes", {}).get("ApproximateReceiveCount", "0")),
             "sentAtMs": int(m.get("Attributes", {}).get("SentTimestamp", "0")),
             **summary(m["Body"])} for m in _peek(sqs, url, limit)]


def redrive(sqs: Any, url: str, target: str, ids: set[str] | None) -> list[str]:
    """Send each message to `target` as it is, then delete it here; returns their ids."""
    moved = []
    for message in _take(sqs, url, ids):
        sqs.send_message(QueueUrl=target, MessageBody=message["Body"])
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        moved.append(message["MessageId"])
    return moved


def drop(sqs: Any, url: str, ids: set[str] | None) -> list[str]:
    dropped = []
    for message in _take(sqs, url, ids):
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        dropped.append(message["MessageId"])
    return dropped


# --- the command line -------------------------------------------------------------------------


def _queue(settings: Settings, name: str) -> str:
    known = {"tasks": settings.queue_url, "push-dlq": settings.push_dlq_url}
    if name in known:
        if not known[name]:
            raise SettingsError(f"{name!r} names no queue here: set "
                                f"{'A2A_QUEUE_URL' if name == 'tasks' else 'A2A_PUSH_DLQ_URL'}")
        return str(known[name])
    if not name.startswith(("https://", "http://")):
        raise SettingsError(f"{name!r} is not a queue URL, 'tasks' or 'push-dlq'")
    return name


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as the servers write theirs: one line, exit 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {' '.join(message.split())}", file=sys.stderr, flush=True)
        raise SystemExit(2)


def _count(name: str, most: int) -> Callable[[str], int]:
    """An argument that is a whole number from 1 to `most` (ASCII digits)."""
    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= most:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number from 1 to {most}, "
                                             f"not {text[:40]!r}")
        return int(text)
    return parse


def _id(name: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if len(text.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
            raise argparse.ArgumentTypeError(f"{name} is longer than {MAX_ID_BYTES} bytes, "
                                             "the kit's id limit")
        return text
    return parse


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=_PROG, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    task = commands.add_parser("task", help="a task: snapshot, events, lease")
    for command in (task, tasks := commands.add_parser("tasks", help="a caller's tasks")):
        command.add_argument("tenant", type=_id("tenant"))
        command.add_argument("owner")
    task.add_argument("task_id", type=_id("task_id"))
    tasks.add_argument("--state", default="", help="e.g. WORKING, FAILED")
    commands.add_parser("expired", help="tasks whose lease expired").add_argument(
        "--limit", type=_count("--limit", 1000), default=100)
    peek = commands.add_parser("messages", help="a queue's messages, summarized")
    peek.add_argument("queue")
    peek.add_argument("--max", type=_count("--max", 1000), default=50)
    helps = {"redrive": "move messages to another queue (a dead-letter queue's back)",
             "drop": "delete messages"}
    for name in ("redrive", "drop"):
        command = commands.add_parser(name, help=helps[name])
        command.add_argument("queue")
        if name == "redrive":
            command.add_argument("--to", required=True, help="the queue to move them to")
        which = command.add_mutually_exclusive_group(required=True)
        which.add_argument("--id", action="append", help="a message id (repeatable)")
        which.add_argument("--all", action="store_true")
    return parser


def _state_value(name: str) -> int:
    if not name:
        return pb.TASK_STATE_UNSPECIFIED
    try:
        return int(pb.TaskState.Value("TASK_STATE_" + name.upper().removeprefix("TASK_STATE_")))
    except ValueError as exc:
        raise SettingsError(f"--state {name!r} is not a task state") from exc


async def _store_command(settings: Settings, args: argparse.Namespace) -> Any:
    store = make_store(settings)
    try:
        if args.command == "task":
            found = await show_task(store, Scope(args.tenant, args.owner), args.task_id)
            if found is None:
                raise SettingsError(f"no task {args.task_id} for tenant {args.tenant!r} and "
                                    f"owner {args.owner!r}")
            return found
        if args.command == "tasks":
            return await list_tasks(store, Scope(args.tenant, args.owner),
                                    _state_value(args.state))
        return await expired(store, args.limit)
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    with explain_startup_errors():
        settings = Settings.from_env()
        if args.command in ("task", "tasks", "expired"):
            if not settings.table:
                raise SettingsError("set A2A_TABLE: the admin command reads the deployment's "
                                    "table")
            result = asyncio.run(_store_command(settings, args))
        else:
            from a2akit import aws

            sqs = aws.client("sqs", endpoint_url=settings.sqs_endpoint)
            url = _queue(settings, args.queue)
            ids = None if getattr(args, "all", False) else set(getattr(args, "id", None) or ())
            result = _queue_command(sqs, settings, args, url, ids)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    if isinstance(result, dict) and result.get("notFound"):
        print(f"{_PROG}: not found on the queue: {', '.join(result['notFound'])}",
              file=sys.stderr)
        raise SystemExit(1)


_PROG = "python -m a2akit.admin"


def _queue_command(sqs: Any, settings: Settings, args: argparse.Namespace, url: str,
                   ids: set[str] | None) -> Any:
    """messages, redrive or drop; ids asked for but not on the queue are `notFound`."""
    from botocore.exceptions import ClientError

    try:
        if args.command == "messages":
            return messages(sqs, url, args.max)
        if args.command == "redrive":
            done = {"moved": redrive(sqs, url, _queue(settings, args.to), ids)}
        else:
            done = {"dropped": drop(sqs, url, ids)}
    except ClientError as exc:
        # A queue that does not exist, or one this role may not use: the operator's to fix.
        error = exc.response.get("Error", {})
        raise SettingsError(f"queue {url}: {error.get('Code', 'error')}: "
                            f"{error.get('Message', '')}") from None
    missing = sorted((ids or set()) - {*next(iter(done.values()))})
    return {**done, "notFound": missing} if missing else done


if __name__ == "__main__":
    main()
