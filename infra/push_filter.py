"""Which DynamoDB Stream records invoke the push dispatcher: the one filter pattern.

Only the INSERT of an event item (sort key ``EV#<seq>``, a2akit/store/table.py) is a
notification. Everything else the table's stream carries never invokes the dispatcher:
snapshot writes and lease renewals (INSERT/MODIFY of ``TASK``), push configs (``PUSH#...``),
message claims (``MSG``) and TTL deletions (REMOVE). Event items are append-only, so an
INSERT is the only write an event ever sees.

The pattern uses the Lambda event filtering syntax (EventBridge patterns: exact values in a
list, ``prefix``), applied to the stream record as Lambda receives it, keys in DynamoDB JSON.
`infra/push.py` hands it to the event source mapping; tests match sample records against it
with `tests/support/event_filter.py`. This module imports no CDK, so runtime tests can use it
without the `infra` extra.
"""

from __future__ import annotations

from typing import Any, Final

from a2akit.store.table import EVENT_PREFIX, SK

__all__ = ["EVENT_SK_PREFIX", "PUSH_FILTER_PATTERN"]

# What every event item's sort key starts with ("EV#"), from the store's key layout.
EVENT_SK_PREFIX: Final[str] = EVENT_PREFIX

PUSH_FILTER_PATTERN: Final[dict[str, Any]] = {
    "eventName": ["INSERT"],
    "dynamodb": {"Keys": {SK: {"S": [{"prefix": EVENT_SK_PREFIX}]}}},
}
