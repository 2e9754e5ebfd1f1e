"""Which DynamoDB Streams records become deliveries: new event items only, read back exactly."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from a2akit import protojson
from a2akit.generated import a2a_pb2 as pb
from a2akit.push.stream import delivery
from a2akit.store import table
from a2akit.store.base import Scope

SCOPE = Scope("acme", "alice")
PK = table.task_pk(SCOPE, "task-1")
EVENT = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(
    task_id="task-1", context_id="ctx", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING)))


def _record(name: str, sk: str, image: dict[str, Any]) -> dict[str, Any]:
    keys = {"pk": {"S": PK}, "sk": {"S": sk}}
    return {"eventName": name, "eventSource": "aws:dynamodb",
            "dynamodb": {"Keys": keys, "NewImage": {**keys, **image}, "SequenceNumber": "7"}}


def _event_image(seq: int = 3, event: pb.StreamResponse = EVENT) -> dict[str, Any]:
    return {"seq": {"N": str(seq)},
            "event": {"B": base64.b64encode(event.SerializeToString()).decode()}}


def test_a_new_event_item_is_a_delivery_of_that_event() -> None:
    found = delivery(_record("INSERT", table.event_sk(3), _event_image()))
    assert found is not None
    assert (found.scope, found.task_id, found.seq) == (SCOPE, "task-1", 3)
    assert protojson.to_json(found.event) == protojson.to_json(EVENT)


@pytest.mark.parametrize(("name", "sk"), [
    ("INSERT", table.SNAPSHOT_SK),  # a new task's snapshot
    ("MODIFY", table.SNAPSHOT_SK),  # a snapshot rewrite or a lease renewal
    ("MODIFY", table.event_sk(3)),  # an event item's TTL set at the task's end
    ("REMOVE", table.event_sk(3)),  # TTL expiry
    ("INSERT", table.push_sk("cfg")),  # a push config
])
def test_other_writes_are_not_deliveries(name: str, sk: str) -> None:
    assert delivery(_record(name, sk, _event_image())) is None


def test_a_message_claim_is_not_a_delivery() -> None:
    record = _record("INSERT", table.MESSAGE_SK, {"task_id": {"S": "task-1"}})
    record["dynamodb"]["Keys"]["pk"] = {"S": table.message_pk(SCOPE, "m-1")}
    assert delivery(record) is None


def test_an_event_record_this_kit_did_not_write_is_refused() -> None:
    with pytest.raises(ValueError):
        delivery(_record("INSERT", table.event_sk(3), {"seq": {"N": "3"},
                                                       "event": {"B": "not base64!"}}))
    record = _record("INSERT", table.event_sk(3), _event_image())
    record["dynamodb"]["Keys"]["pk"] = {"S": "somebody-else#key"}
    with pytest.raises(ValueError):
        delivery(record)


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_an_event_item_carries_the_trace_of_the_write_that_made_it() -> None:
    found = delivery(_record("INSERT", table.event_sk(3),
                             {**_event_image(), table.TRACEPARENT: {"S": TRACEPARENT}}))
    assert found is not None and found.traceparent == TRACEPARENT
    # The head of a large event: read whole from the store later, under the same trace.
    large = delivery(_record("INSERT", table.event_sk(4), {
        **_event_image(4), table.PARTS: {"N": "2"}, table.PART_TOKEN: {"S": "ab"},
        table.TRACEPARENT: {"S": TRACEPARENT}}))
    assert large is not None and large.traceparent == TRACEPARENT


def test_an_event_item_written_without_a_trace_is_delivered_without_one() -> None:
    found = delivery(_record("INSERT", table.event_sk(3), _event_image()))
    assert found is not None and found.traceparent is None
