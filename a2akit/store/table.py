"""The DynamoDB table definition: one source for the store, its tests and the CDK stack."""

from __future__ import annotations

from typing import Any

__all__ = [
    "LIST_INDEX",
    "LIST_INDEX_PK",
    "LIST_INDEX_SK",
    "PK",
    "SK",
    "TTL_ATTRIBUTE",
    "create_table_kwargs",
]

PK = "pk"
SK = "sk"
LIST_INDEX = "by_status_time"
LIST_INDEX_PK = "lpk"  # tenant + owner of a task snapshot item
LIST_INDEX_SK = "lsk"  # status time (zero-padded ms) + task id: newest first when reversed
TTL_ATTRIBUTE = "expires_at"


def create_table_kwargs(table_name: str) -> dict[str, Any]:
    """Arguments for boto3 `create_table` (local emulator) mirroring infra's table."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": "S"}
            for name in (PK, SK, LIST_INDEX_PK, LIST_INDEX_SK)
        ],
        "KeySchema": [
            {"AttributeName": PK, "KeyType": "HASH"},
            {"AttributeName": SK, "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": LIST_INDEX,
                "KeySchema": [
                    {"AttributeName": LIST_INDEX_PK, "KeyType": "HASH"},
                    {"AttributeName": LIST_INDEX_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }
