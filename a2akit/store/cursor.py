"""ListTasks paging, one rule for both stores: page sizes, the order, page tokens.

A task's `Position` is where it sorts; ListTasks returns the largest first:

1. status time, in milliseconds (ListTasks is "newest status first");
2. the write stamp (`clock.write_ns`), taken when the store writes the task. Within one
   process stamps strictly increase, so tasks whose status shares a millisecond list in
   exact reverse write order. Across processes the stamp is each host's wall clock: their
   order within a millisecond is only as good as the clocks agree, which is the most one
   can have without a shared counter;
3. the task id, so two equal stamps from two processes still give a total order.

A page token is the position of the last task on its page, nothing more: each store looks
it up within the caller's own scope, so a forged token can skip or repeat the caller's own
tasks but never reach another's.
"""

from __future__ import annotations

import base64
import dataclasses
import json

from a2akit.clock import timestamp_ms, write_ns
from a2akit.errors import InvalidParamsError
from a2akit.generated import a2a_pb2 as pb

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "MIN_PAGE_SIZE",
    "STATUS_MS_DIGITS",
    "WRITE_NS_DIGITS",
    "Position",
    "decode",
    "encode",
    "position",
]

# ListTasks page sizes (the A2A spec's bounds and default). Operations rejects a size outside
# them, so a store is always asked for a valid one.
MIN_PAGE_SIZE = 1
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50

# The widest each part can be. The DynamoDB sort key pads to these widths, so that string
# order is numeric order there.
STATUS_MS_DIGITS = 15
WRITE_NS_DIGITS = 20


@dataclasses.dataclass(frozen=True, order=True)
class Position:
    """Where a task sorts in ListTasks; a larger position is newer. Fields compare in order."""

    status_ms: int
    write_ns: int
    task_id: str


def position(task: pb.Task) -> Position:
    """The position of `task` as it is written now: call it once per write, when writing."""
    # Clamped into the key's width: a status time before 1970 or after year 33658 still sorts.
    status_ms = min(max(0, timestamp_ms(task.status.timestamp)), 10**STATUS_MS_DIGITS - 1)
    return Position(status_ms, write_ns(), task.id)


def encode(position: Position) -> str:
    """The page token that resumes after `position`."""
    fields = [position.status_ms, position.write_ns, position.task_id]
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode()


def decode(token: str) -> Position:
    """The position a page token holds.

    Raises InvalidParamsError (a BadRequest violation on ``page_token``) for any token that
    `encode` would not have produced."""
    try:
        fields = json.loads(base64.b64decode(token, altchars=b"-_", validate=True))
    # ValueError covers binascii.Error, UnicodeDecodeError and JSONDecodeError; deeply nested
    # JSON ("[[[[...") exhausts the parser's recursion instead.
    except (ValueError, RecursionError):
        fields = None
    if isinstance(fields, list) and len(fields) == 3:
        status_ms, stamp, task_id = fields
        found = Position(status_ms, stamp, task_id)
        if (
            _is_count(status_ms, STATUS_MS_DIGITS)
            and _is_count(stamp, WRITE_NS_DIGITS)
            and isinstance(task_id, str)
            and task_id
            # Only the exact spelling: no other padding, spacing or number form slips through.
            and encode(found) == token
        ):
            return found
    raise InvalidParamsError("pageToken is not a token this server issued",
                             violations=[("page_token", "invalid page token")])


def _is_count(value: object, digits: int) -> bool:
    # bool is an int subclass, and JSON `true` is no position.
    return type(value) is int and 0 <= value < 10**digits
