"""Time, one place: status timestamps at millisecond precision, their integer form, the
epoch milliseconds leases are counted in, and the write clock that orders writes sharing a
millisecond."""

from __future__ import annotations

import threading
import time

from google.protobuf import timestamp_pb2

__all__ = ["epoch_ms", "now", "timestamp_ms", "write_ns"]

_write_lock = threading.Lock()
_last_write_ns = 0


def now() -> timestamp_pb2.Timestamp:
    """The current time at millisecond precision, so ProtoJSON prints three fraction digits."""
    ms = time.time_ns() // 1_000_000
    return timestamp_pb2.Timestamp(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


def epoch_ms() -> int:
    """Milliseconds since the epoch, now: what lease ends and expiry instants are stored in."""
    return time.time_ns() // 1_000_000


def timestamp_ms(stamp: timestamp_pb2.Timestamp) -> int:
    """Milliseconds since the epoch: how stores index status times and ListTasks filters."""
    return stamp.seconds * 1000 + stamp.nanos // 1_000_000


def write_ns() -> int:
    """Wall-clock nanoseconds since the epoch, strictly increasing within this process.

    The wall clock (not `time.monotonic_ns`) so that stamps from several processes are
    comparable at all; the bump past the last stamp so that two writes never tie, even when
    the clock is coarse or steps back."""
    global _last_write_ns
    with _write_lock:
        _last_write_ns = max(time.time_ns(), _last_write_ns + 1)
        return _last_write_ns
