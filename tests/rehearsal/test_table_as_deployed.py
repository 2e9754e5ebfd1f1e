"""The store contract on the table as the template defines it: key schema, indexes and their
projections, stream and TTL translated from the synthesized `AWS::DynamoDB::Table` into
DynamoDB Local (tests/rehearsal/table.py), not from the store's own definition. A projection,
key or index the stack gets wrong fails here as it would after a deploy.

The contract tests are the suite's own (tests/store/test_contract.py,
tests/store/test_lease_contract.py), collected here again with this folder's `store` fixture.
"""

from __future__ import annotations

from typing import Any

import pytest

from a2akit.store.dynamodb import make_client
from tests.rehearsal.table import UntranslatedProperty, create_table_calls, table_properties
from tests.store.test_contract import *  # noqa: F403  (collected against the deployed table)
from tests.store.test_lease_contract import *  # noqa: F403


@pytest.mark.slow
def test_dynamodb_local_holds_the_table_the_template_defines(
    ddb_endpoint: str, deployed_table: str, deployed_template: dict[str, Any]
) -> None:
    declared = table_properties(deployed_template)
    client = make_client(ddb_endpoint, "us-east-1")
    try:
        table = client.describe_table(TableName=deployed_table)["Table"]
        ttl = client.describe_time_to_live(TableName=deployed_table)
    finally:
        client.close()
    assert table["KeySchema"] == declared["KeySchema"]
    assert {index["IndexName"]: (index["KeySchema"], index["Projection"])
            for index in table["GlobalSecondaryIndexes"]} == {
        index["IndexName"]: (index["KeySchema"], index["Projection"])
        for index in declared["GlobalSecondaryIndexes"]}
    assert table["StreamSpecification"] == {
        "StreamEnabled": True,
        "StreamViewType": declared["StreamSpecification"]["StreamViewType"]}
    assert ttl["TimeToLiveDescription"]["AttributeName"] == declared[
        "TimeToLiveSpecification"]["AttributeName"]


def test_an_unknown_table_property_is_not_dropped() -> None:
    with pytest.raises(UntranslatedProperty, match="ImportSourceSpecification"):
        create_table_calls({"KeySchema": [], "ImportSourceSpecification": {}}, "t")
