"""How a write's `TransactWriteItems` entries are cut into transactions: whether they fit one
(100 items, 4 MB: `table`'s limits), and otherwise their split over as few as fit, in the
order the reservation protocol needs (`_writes`, docs/store.md "Writes of any size")."""

from __future__ import annotations

from collections.abc import Sequence

from a2akit.errors import InternalError
from a2akit.store.table import (
    MAX_ITEM_BYTES,
    MAX_TRANSACTION_BYTES,
    MAX_TRANSACTION_ITEMS,
    Item,
    item_size,
)

__all__ = ["fits", "transactions"]


def _write_size(write: Item) -> int:
    """The bytes a transaction entry counts towards 4 MB: the item a Put writes; for an
    entry on a stored item (ConditionCheck, Update) that item, which may be as large as an
    item can be."""
    put = write.get("Put")
    return item_size(put["Item"]) if put is not None else MAX_ITEM_BYTES


def fits(writes: Sequence[Item]) -> bool:
    """Whether the writes (`TransactWriteItems` entries) fit one transaction: 100 items and
    4 MB, with 2 KB to spare for the request's own overhead."""
    return (len(writes) <= MAX_TRANSACTION_ITEMS
            and sum(_write_size(write) for write in writes) <= MAX_TRANSACTION_BYTES - 2048)


def transactions(head: Sequence[Item], events: Sequence[Item],
                 tail: Sequence[Item]) -> list[list[Item]]:
    """`events` split over as few transactions as fit, in order: `head` opens the first one,
    `tail` (the snapshot) closes the last one, with as many of the last events as fit.

    Raises InternalError when `head` or `tail` with one event cannot fit: every item is
    under 400 KB (`_parts` splits larger ones), so this is the store's fault."""
    cut = len(events)
    while cut > 0 and fits([*tail, *events[cut - 1:]]):
        cut -= 1
    last = [*tail, *events[cut:]]
    if not fits(last) or (cut and not fits([*head, events[0]])):
        raise InternalError("the task's own items are over DynamoDB's 4 MB transaction limit")
    batches: list[list[Item]] = [list(head)]
    for event in events[:cut]:
        if not fits([*batches[-1], event]):
            batches.append([])
        batches[-1].append(event)
    return [*(batch for batch in batches if batch), last]


