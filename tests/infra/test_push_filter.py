"""The push dispatcher's stream filter, checked against stream records of every item kind the
table holds, with a matcher for the filter syntax that is itself tested here. No synth."""

from __future__ import annotations

from typing import Any

import pytest

from a2akit.store.base import Scope
from a2akit.store.table import (
    LAST_EVENT_SK,
    MESSAGE_SK,
    PK,
    SK,
    SNAPSHOT_SK,
    event_sk,
    message_pk,
    push_sk,
    task_pk,
)
from infra.push_filter import EVENT_SK_PREFIX, PUSH_FILTER_PATTERN
from tests.support.event_filter import UnsupportedPattern, matches

_SCOPE = Scope(tenant="acme", owner="alice#1")
_TASK = task_pk(_SCOPE, "task-1")


def _record(event_name: str, pk: str, sk: str, *, new: dict[str, Any] | None = None,
            old: dict[str, Any] | None = None) -> dict[str, Any]:
    """A DynamoDB Streams record as Lambda hands it over (NEW_AND_OLD_IMAGES)."""
    keys = {PK: {"S": pk}, SK: {"S": sk}}
    body: dict[str, Any] = {
        "ApproximateCreationDateTime": 1767225600,
        "Keys": keys,
        "SequenceNumber": "4421584500000000017450439091",
        "SizeBytes": 120,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        body["NewImage"] = {**keys, **new}
    if old is not None:
        body["OldImage"] = {**keys, **old}
    return {
        "eventID": "c4ca4238a0b923820dcc509a6f75849b",
        "eventName": event_name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": body,
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:111111111111:table/Tasks/stream/"
                          "2026-01-01T00:00:00.000",
    }


_SNAPSHOT = {"state": {"S": "TASK_STATE_WORKING"}, "version": {"N": "2"}}
_LEASED = {**_SNAPSHOT, "lease_shard": {"S": "L#1"}, "lease_until": {"N": "1767225630000"}}

# What the stream carries, and whether it is a notification.
RECORDS = {
    "event insert": (_record("INSERT", _TASK, event_sk(1), new={"body": {"B": "AAE="}}), True),
    "last event insert": (_record("INSERT", _TASK, event_sk(10**20 - 1),
                                  new={"body": {"B": "AAE="}}), True),
    "snapshot insert": (_record("INSERT", _TASK, SNAPSHOT_SK, new=_SNAPSHOT), False),
    "snapshot write": (_record("MODIFY", _TASK, SNAPSHOT_SK, new=_SNAPSHOT, old=_SNAPSHOT), False),
    "lease renewal": (_record("MODIFY", _TASK, SNAPSHOT_SK, new=_LEASED, old=_LEASED), False),
    "push config insert": (_record("INSERT", _TASK, push_sk("cfg-1"),
                                   new={"url": {"S": "https://example.com/hook"}}), False),
    "push config delete": (_record("REMOVE", _TASK, push_sk("cfg-1"),
                                   old={"url": {"S": "https://example.com/hook"}}), False),
    "message claim": (_record("INSERT", message_pk(_SCOPE, "msg-1"), MESSAGE_SK,
                              new={"task_id": {"S": "task-1"}}), False),
    "event expired (TTL)": (_record("REMOVE", _TASK, event_sk(1),
                                    old={"body": {"B": "AAE="}}), False),
    "event modified": (_record("MODIFY", _TASK, event_sk(1), new={"body": {"B": "AAE="}},
                               old={"body": {"B": "AAE="}}), False),
}


@pytest.mark.parametrize("name", list(RECORDS))
def test_only_event_inserts_pass_the_dispatcher_filter(name: str) -> None:
    record, notification = RECORDS[name]
    assert matches(PUSH_FILTER_PATTERN, record) is notification


def test_the_filter_is_the_documented_pattern() -> None:
    assert EVENT_SK_PREFIX == "EV#"
    assert PUSH_FILTER_PATTERN == {
        "eventName": ["INSERT"],
        "dynamodb": {"Keys": {"sk": {"S": [{"prefix": "EV#"}]}}},
    }
    assert event_sk(0).startswith(EVENT_SK_PREFIX)
    assert LAST_EVENT_SK.startswith(EVENT_SK_PREFIX)
    # No other item's sort key can pass for an event's.
    for other in (SNAPSHOT_SK, MESSAGE_SK, push_sk("EV#1")):
        assert not other.startswith(EVENT_SK_PREFIX)


# --- the matcher itself --------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "event", "expected"), [
    ({"a": ["x"]}, {"a": "x"}, True),
    ({"a": ["x"]}, {"a": "y"}, False),
    ({"a": ["x", "y"]}, {"a": "y"}, True),
    ({"a": ["x"]}, {}, False),
    ({"a": ["x"]}, {"a": ["z", "x"]}, True),  # a list in the event: any element
    ({"a": ["x"]}, {"a": {"x": 1}}, False),  # an object is no leaf
    ({"a": ["x"]}, {"a": "x", "b": "extra"}, True),  # unnamed fields are ignored
    ({"a": {"b": ["x"]}}, {"a": {"b": "x"}}, True),
    ({"a": {"b": ["x"]}}, {"a": "b"}, False),
    ({"a": {"b": ["x"]}}, {"a": {"c": "x"}}, False),
    ({"a": ["x"], "b": ["y"]}, {"a": "x", "b": "n"}, False),  # every field must match
    ({"a": [{"prefix": "EV#"}]}, {"a": "EV#0001"}, True),
    ({"a": [{"prefix": "EV#"}]}, {"a": "ev#0001"}, False),  # case-sensitive
    ({"a": [{"prefix": "EV#"}]}, {"a": "TASK"}, False),
    ({"a": [{"prefix": "EV#"}]}, {"a": 3}, False),
    ({"a": [{"prefix": ""}]}, {"a": "anything"}, True),
    ({"a": [1]}, {"a": 1.0}, True),
    ({"a": [1]}, {"a": "1"}, False),
    ({"a": [1]}, {"a": True}, False),
    ({"a": [True]}, {"a": 1}, False),
    ({"a": [True]}, {"a": True}, True),
    ({"a": [None]}, {"a": None}, True),
    ({"a": [None]}, {}, False),
    ({"a": ["INSERT", {"prefix": "MOD"}]}, {"a": "MODIFY"}, True),
])
def test_matcher(pattern: dict[str, Any], event: dict[str, Any], expected: bool) -> None:
    assert matches(pattern, event) is expected


@pytest.mark.parametrize("pattern", [
    {},
    {"a": "x"},  # a leaf must be a list
    {"a": []},
    {"a": [{"anything-but": "x"}]},
    {"a": [{"prefix": "x", "suffix": "y"}]},
    {"a": [{"exists": True}]},
    {"a": [{"numeric": [">", 0]}]},
    {"a": [{"prefix": 1}]},
    {"a": [["nested"]]},
    {"$or": [{"a": ["x"]}]},
])
def test_matcher_refuses_syntax_it_does_not_implement(pattern: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedPattern):
        matches(pattern, {"a": "x"})
