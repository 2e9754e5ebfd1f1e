"""Time, one place: status timestamps at millisecond precision and their integer form."""

from __future__ import annotations

import time

from google.protobuf import timestamp_pb2

__all__ = ["now", "timestamp_ms"]


def now() -> timestamp_pb2.Timestamp:
    """The current time at millisecond precision, so ProtoJSON prints three fraction digits."""
    ms = time.time_ns() // 1_000_000
    return timestamp_pb2.Timestamp(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


def timestamp_ms(stamp: timestamp_pb2.Timestamp) -> int:
    """Milliseconds since the epoch: how stores index status times and ListTasks filters."""
    return stamp.seconds * 1000 + stamp.nanos // 1_000_000
