"""The ListTasks cursor: positions, and page tokens that only this server's encoder makes."""

from __future__ import annotations

import base64
import json

import pytest
from google.protobuf import timestamp_pb2

from a2akit import clock
from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb
from a2akit.store import cursor
from a2akit.store.cursor import Position


def _token(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


@pytest.mark.parametrize("position", [
    Position(0, 0, "t"),
    Position(1_767_225_600_123, 1_767_225_600_123_456_789, "0f3c-uuid"),
    Position(10**15 - 1, 10**20 - 1, "a#b/c?d=é 🙂"),
])
def test_round_trip(position: Position) -> None:
    token = cursor.encode(position)
    assert cursor.decode(token) == position
    assert token.isascii() and not set(token) & set("+/")  # URL-safe as it stands


def test_positions_order_newest_last() -> None:
    assert Position(2, 0, "a") > Position(1, 9, "z")  # status time first
    assert Position(1, 2, "a") > Position(1, 1, "z")  # then the write stamp
    assert Position(1, 1, "b") > Position(1, 1, "a")  # the id only for equal stamps


@pytest.mark.parametrize("token", [
    "not base64 !!",
    "abc",  # bad padding
    cursor.encode(Position(1, 2, "t")).rstrip("="),  # padding dropped
    base64.b64encode(json.dumps([1, 2, "t~~~"]).encode()).decode(),  # standard alphabet: "+"
    cursor.encode(Position(1, 2, "t")) + "\n",
    base64.urlsafe_b64encode(b"\xff\xfe").decode(),  # not UTF-8
    base64.urlsafe_b64encode(b"[1, 2,").decode(),  # not JSON
    _token({"status_ms": 1, "write_ns": 2, "task_id": "t"}),
    _token({"a": 1, "b": 2, "c": 3}),  # three keys would unpack like a list
    _token([1000, "t1"]),  # the old two-part shape
    _token([1, 2, "t", 4]),
    _token(["1", 2, "t"]),
    _token([1, "2", "t"]),
    _token([1.0, 2, "t"]),
    _token([True, 2, "t"]),
    _token([1, 2, 3]),
    _token([1, 2, ""]),
    _token([1, 2, None]),
    _token([-1, 2, "t"]),
    _token([1, -2, "t"]),
    _token([10**15, 2, "t"]),
    _token([1, 10**20, "t"]),
    base64.urlsafe_b64encode(b'[1,2,"t"]').decode(),  # other spacing: not what encode makes
    _token(None),
    _token("t"),
    base64.urlsafe_b64encode(b"[" * 100_000).decode(),  # nested past the parser's recursion
    "é" + cursor.encode(Position(1, 2, "t")),  # not ASCII
])
def test_foreign_tokens_rejected(token: str) -> None:
    with pytest.raises(InvalidParamsError) as caught:
        cursor.decode(token)
    assert caught.value.message == "pageToken is not a token this server issued"
    assert caught.value.violations == [("page_token", "invalid page token")]
    assert caught.value.to_status().code == 3  # INVALID_ARGUMENT


def _task(seconds: int, nanos: int) -> pb.Task:
    task = pb.Task(id="t1")
    task.status.timestamp.CopyFrom(timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos))
    return task


def test_position_of_a_task() -> None:
    first = cursor.position(_task(1_700_000_000, 123_999_999))
    second = cursor.position(_task(1_700_000_000, 123_000_000))
    assert (first.status_ms, first.task_id) == (1_700_000_000_123, "t1")
    assert second.write_ns > first.write_ns  # the same millisecond: the later write is newer
    assert second > first
    # Out of the key's range: clamped, never an unsortable key.
    assert cursor.position(_task(-5, 0)).status_ms == 0
    assert cursor.position(_task(10**13, 0)).status_ms == 10**15 - 1


def test_write_clock_strictly_increases(monkeypatch: pytest.MonkeyPatch) -> None:
    start = clock.write_ns()
    # A coarse clock, then one that steps back: the stamps still increase by at least 1.
    monkeypatch.setattr(clock.time, "time_ns", lambda: start)
    stamps = [clock.write_ns() for _ in range(5)]
    monkeypatch.setattr(clock.time, "time_ns", lambda: start - 10**9)
    stamps.append(clock.write_ns())
    assert stamps == list(range(start + 1, start + 7))
