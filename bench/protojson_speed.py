"""How long `protojson.to_json` takes per A2A response shape, and `protojson.from_json` per
request shape, against the reference paths.

    .venv/bin/python bench/protojson_speed.py [--number 2000] [--repeat 7] [--only SHAPE]

The reference of `to_json` is what it was before its fast encoder: `json_format.MessageToDict`
plus the REQUIRED top-level defaults. The reference of `from_json` is what it was before its
decoders, kept as `protojson._checked_parse`: the checks of every field, then
`json_format.ParseDict`. Each pair runs in this process, interleaved, and the tables show
the best of `--repeat` runs of `--number` calls (the minimum is the least disturbed figure on a
shared machine) and the reference/fast ratio. `--only` times one shape with the fast path
alone, for a profiler or `valgrind --tool=callgrind`, which counts instructions and so is
immune to other load:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/protojson_speed.py --only task --number 200 --repeat 1 [--reference]

(run it also with --number 0, and subtract: that is the start-up's count).
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a2akit.generated import a2a_pb2 as pb
from a2akit.protojson import _checked_parse, from_json, to_json
from tests.protojson.unit.test_protojson_fast import _reference_to_json  # the encoder as it was


def _message(i: int, role: int = pb.ROLE_USER) -> pb.Message:
    message = pb.Message(message_id=f"m-{i}", context_id="ctx-1", task_id="task-1", role=role)
    message.parts.add(text=f"hello, agent: this is message {i}")
    return message


def _task(i: int = 1) -> pb.Task:
    """An echo agent's finished task: history, one artifact, a status message, metadata."""
    task = pb.Task(id=f"task-{i}", context_id="ctx-1")
    task.status.state = pb.TASK_STATE_COMPLETED
    task.status.timestamp.FromMilliseconds(1_767_225_600_123 + i)
    task.status.message.CopyFrom(_message(100, pb.ROLE_AGENT))
    task.history.extend([_message(1), _message(2, pb.ROLE_AGENT)])
    artifact = task.artifacts.add(artifact_id="a-1", name="echo")
    artifact.parts.add(text="hello, agent", media_type="text/plain")
    artifact.parts.add().data.struct_value.update({"n": 1, "ok": True, "tags": ["a", "b"]})
    task.metadata.update({"source": "bench", "attempt": 1, "nested": {"k": None}})
    return task


def shapes() -> dict[str, Message]:
    status = pb.TaskStatusUpdateEvent(task_id="task-1", context_id="ctx-1",
                                      status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    status.status.timestamp.FromMilliseconds(1_767_225_600_000)
    artifact = pb.TaskArtifactUpdateEvent(task_id="task-1", context_id="ctx-1",
                                          artifact=_task().artifacts[0], last_chunk=True)
    return {
        "task": _task(),
        "send_response_task": pb.SendMessageResponse(task=_task()),
        "send_response_message": pb.SendMessageResponse(message=_message(1, pb.ROLE_AGENT)),
        "stream_task": pb.StreamResponse(task=_task()),
        "stream_message": pb.StreamResponse(message=_message(1, pb.ROLE_AGENT)),
        "stream_status_update": pb.StreamResponse(status_update=status),
        "stream_artifact_update": pb.StreamResponse(artifact_update=artifact),
        "list_tasks_20": pb.ListTasksResponse(tasks=[_task(i) for i in range(20)],
                                              next_page_token="", page_size=20, total_size=20),
    }


def requests() -> dict[str, tuple[dict[str, Any], type[Message]]]:
    """Request shapes as clients send them: the JSON params, and the type they parse into."""
    send = pb.SendMessageRequest(message=_message(1), configuration=pb.SendMessageConfiguration(
        accepted_output_modes=["text/plain"], history_length=10, return_immediately=True))
    data = pb.SendMessageRequest()
    data.CopyFrom(send)
    data.message.parts.add(media_type="application/json").data.struct_value.update(
        {"city": "Oslo", "days": 3, "units": ["metric"], "options": {"hourly": False}})
    data.metadata.update({"source": "bench", "attempt": 1})
    push = pb.TaskPushNotificationConfig(
        task_id="task-1", id="cfg-1", url="https://example.com/hook", token="t0k3n",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="secret"))
    list_tasks = pb.ListTasksRequest(context_id="ctx-1", status=pb.TASK_STATE_WORKING,
                                     page_size=20, include_artifacts=True)
    list_tasks.status_timestamp_after.FromMilliseconds(1_767_225_600_000)
    cases = {
        "send_message": send,
        "send_message_data": data,
        "get_task": pb.GetTaskRequest(id="task-1", history_length=5),
        "list_tasks": list_tasks,
        "create_push_config": push,
    }
    return {name: (to_json(message), type(message)) for name, message in cases.items()}


def _best(fn: Callable[[], object], number: int, repeat: int) -> float:
    """Microseconds per call, best of `repeat`."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", choices=sorted(shapes()) + sorted(requests()))
    parser.add_argument("--reference", action="store_true",
                        help="with --only: time the reference instead")
    args = parser.parse_args()
    cases = shapes()
    for name, message in cases.items():
        assert to_json(message) == _reference_to_json(message), name
    parses = requests()
    for name, (data, cls) in parses.items():
        assert from_json(data, cls) == _checked_parse(data, cls), name
    if args.only in cases:
        message = cases[args.only]
        encode = _reference_to_json if args.reference else to_json
        for _ in range(args.number * args.repeat):
            encode(message)
        return
    if args.only:
        data, cls = parses[args.only]
        parse = _checked_parse if args.reference else from_json
        for _ in range(args.number * args.repeat):
            parse(data, cls)
        return
    print(f"{'to_json: shape':<24} {'reference us':>13} {'fast us':>9} {'speedup':>8}")
    for name, message in cases.items():
        # Scaled so that every shape runs for a similar time.
        number = max(10, args.number // (20 if name == "list_tasks_20" else 1))
        ref = _best(lambda m=message: _reference_to_json(m), number, args.repeat)  # type: ignore[misc]
        fast = _best(lambda m=message: to_json(m), number, args.repeat)  # type: ignore[misc]
        print(f"{name:<24} {ref:>13.1f} {fast:>9.1f} {ref / fast:>7.1f}x")
    print(f"\n{'from_json: request':<24} {'reference us':>13} {'fast us':>9} {'speedup':>8}")
    for name, (data, cls) in parses.items():
        ref = _best(lambda d=data, c=cls: _checked_parse(d, c), args.number, args.repeat)  # type: ignore[misc]
        fast = _best(lambda d=data, c=cls: from_json(d, c), args.number, args.repeat)  # type: ignore[misc]
        print(f"{name:<24} {ref:>13.1f} {fast:>9.1f} {ref / fast:>7.1f}x")


if __name__ == "__main__":
    main()
