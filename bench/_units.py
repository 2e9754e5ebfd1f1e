"""DynamoDB's capacity units of a metered boto3 client, by AWS's published billing rules
(bench/write_units.py and bench/load_run.py price every call with these):

- a write of an item costs ceil(size / 1 KB) write units, the size being the larger of the
  item before and after the write (AWS: attribute names plus values); a transaction's items
  (ConditionCheck included) cost twice that;
- each global secondary index whose key attributes the item has before or after the write
  costs one write of the index entry (table keys + index keys + projected attributes + 100
  bytes, rounded up to 1 KB): a put for a new entry, a delete for one that goes, both when
  an index key changes, one when only a projected attribute changes, none otherwise. The
  indexes and projections are the checkout's own (`table.create_table_kwargs`);
- reads are DynamoDB Local's own `ConsumedCapacity` (half a unit per 4 KB eventually
  consistent, one strongly consistent).

The items' sizes before and after each write are read by a second, unmetered client (a
consistent `GetItem` of each key the call writes, before and after it).
"""

from __future__ import annotations

import collections
import math
import threading
from typing import Any

__all__ = ["READS", "WRITES", "Meter", "Pricer", "item_size", "kb"]

WRITES = ("PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem")
READS = ("GetItem", "Query", "BatchGetItem", "Scan")


def item_size(item: dict[str, Any]) -> int:
    """AWS's item size of a boto3 attribute-value item: names plus values."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: dict[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "B":
        return len(inner)
    if kind == "N":
        digits = inner.lstrip("-").replace(".", "").lstrip("0") or "0"
        return (len(digits) + 1) // 2 + 1
    if kind == "BOOL" or kind == "NULL":
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(_value_size({kind[0]: each}) for each in inner)
    if kind == "L":
        return 3 + sum(1 + _value_size(each) for each in inner)
    if kind == "M":
        return 3 + sum(len(k.encode()) + 1 + _value_size(v) for k, v in inner.items())
    raise ValueError(kind)


def kb(size: int, unit: int = 1024) -> int:
    return max(1, math.ceil(size / unit))


class Pricer:
    """Prices each write of the metered client by the AWS rules above."""

    def __init__(self, table_kwargs: dict[str, Any], peek: Any, table_name: str) -> None:
        self.peek = peek  # an unmetered client
        self.table_name = table_name
        keys = [k["AttributeName"] for k in table_kwargs["KeySchema"]]
        self.keys = keys
        self.indexes = []
        for index in table_kwargs.get("GlobalSecondaryIndexes", []):
            index_keys = [k["AttributeName"] for k in index["KeySchema"]]
            projection = index["Projection"]
            kind = projection["ProjectionType"]
            extra = None if kind == "ALL" else (
                () if kind == "KEYS_ONLY" else tuple(projection["NonKeyAttributes"]))
            self.indexes.append((index["IndexName"], index_keys, extra))

    def get(self, key: dict[str, Any]) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.peek.get_item(
            TableName=self.table_name, Key=key, ConsistentRead=True).get("Item")
        return found

    def _entry(self, item: dict[str, Any] | None, index_keys: list[str],
               extra: tuple[str, ...] | None) -> dict[str, Any] | None:
        if item is None or any(name not in item for name in index_keys):
            return None
        if extra is None:
            return item
        names = {*self.keys, *index_keys, *extra}
        return {name: value for name, value in item.items() if name in names}

    def index_units(self, old: dict[str, Any] | None, new: dict[str, Any] | None) -> int:
        units = 0
        for _name, index_keys, extra in self.indexes:
            before, after = self._entry(old, index_keys, extra), self._entry(new, index_keys,
                                                                               extra)
            if before is None and after is None:
                continue
            if before is None or after is None:
                units += kb(item_size(before or after or {}) + 100)
                continue
            if any(before[k] != after[k] for k in index_keys):
                units += kb(item_size(before) + 100) + kb(item_size(after) + 100)
            elif before != after:
                units += kb(max(item_size(before), item_size(after)) + 100)
        return units

    def item_units(self, old: dict[str, Any] | None, new: dict[str, Any] | None,
                   put: dict[str, Any] | None = None) -> int:
        sizes = [item_size(each) for each in (old, new, put) if each is not None]
        return kb(max(sizes, default=0))


class Meter:
    """Counts and prices the calls of one boto3 DynamoDB client."""

    def __init__(self, client: Any, pricer: Pricer) -> None:
        self.pricer = pricer
        self.reset()
        self._pending: dict[int, Any] = {}
        events = client.meta.events
        for name in (*WRITES, *READS):
            events.register(f"provide-client-params.dynamodb.{name}", self._before)
        events.register("after-call.dynamodb", self._after)
        self.writes_only = False

    def reset(self) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        self.wru = 0.0
        self.index_wru = 0.0
        self.rru = 0.0

    def _before(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        name = model.name
        if name in READS:
            params.setdefault("ReturnConsumedCapacity", "TOTAL")
            return
        writes: list[tuple[dict[str, Any], dict[str, Any] | None, bool]] = []
        if name == "TransactWriteItems":
            for entry in params["TransactItems"]:
                ((_action, body),) = entry.items()
                item = body.get("Item")
                key = body.get("Key") or {k: item[k] for k in self.pricer.keys}
                writes.append((key, item, True))
        elif name == "BatchWriteItem":
            for requests in params["RequestItems"].values():
                for request in requests:
                    if "PutRequest" in request:
                        item = request["PutRequest"]["Item"]
                        writes.append(({k: item[k] for k in self.pricer.keys}, item, False))
                    else:
                        writes.append((request["DeleteRequest"]["Key"], None, False))
        else:
            item = params.get("Item")
            key = params.get("Key") or {k: item[k] for k in self.pricer.keys}
            writes.append((key, item, False))
        self._pending[threading.get_ident()] = (
            name, [(key, item, tx, self.pricer.get(key)) for key, item, tx in writes])

    def _after(self, model: Any, parsed: dict[str, Any], **_: Any) -> None:
        name = model.name
        if name not in (*WRITES, *READS):
            return
        self.calls[name] += 1
        if name in READS:
            if not self.writes_only:
                consumed = parsed.get("ConsumedCapacity")
                for entry in (consumed if isinstance(consumed, list)
                              else [consumed] if consumed else []):
                    self.rru += float(entry.get("CapacityUnits", 0))
            return
        _, writes = self._pending.pop(threading.get_ident())
        for key, put, transactional, old in writes:
            new = self.pricer.get(key)
            self.wru += self.pricer.item_units(old, new, put) * (2 if transactional else 1)
            self.index_wru += self.pricer.index_units(old, new)
