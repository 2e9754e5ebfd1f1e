"""The task table: key names and the list index come from the store's own definition."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from a2akit.store.table import (
    LEASE_INDEX,
    LEASE_SHARD,
    LEASE_UNTIL,
    LIST_INDEX_SK,
    LIST_INDEXES,
    LIST_PROJECTED,
    PK,
    SK,
    TTL_ATTRIBUTE,
)

__all__ = ["DATA_ACTIONS", "INDEX_ACTIONS", "TaskTable"]

# What the store does with items. No Scan and no table management: the kit never creates
# or describes tables against AWS. Transactions are authorised by these per-item actions.
DATA_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
# The list indexes are only ever queried.
INDEX_ACTIONS = ("dynamodb:Query",)


def _key(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


class TaskTable(Construct):
    """On-demand table with PITR, TTL, a stream (for push dispatch), the list indexes and the
    sparse lease index the sweeper queries."""

    def __init__(self, scope: Construct, construct_id: str, *, retain: bool = True) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=_key(PK),
            sort_key=_key(SK),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            # Task history is the product's data: keep it when the stack goes away,
            # unless a throwaway environment says otherwise.
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY,
        )
        for index, partition in LIST_INDEXES:
            self.table.add_global_secondary_index(
                index_name=index,
                partition_key=_key(partition),
                sort_key=_key(LIST_INDEX_SK),
                projection_type=dynamodb.ProjectionType.INCLUDE,
                non_key_attributes=list(LIST_PROJECTED),
            )
        self.table.add_global_secondary_index(
            index_name=LEASE_INDEX,
            partition_key=_key(LEASE_SHARD),
            sort_key=dynamodb.Attribute(name=LEASE_UNTIL, type=dynamodb.AttributeType.NUMBER),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )

    @property
    def index_arns(self) -> list[str]:
        """The ARNs of the list indexes, each by name (not `index/*`)."""
        return [f"{self.table.table_arn}/index/{index}" for index, _ in LIST_INDEXES]

    @property
    def lease_index_arn(self) -> str:
        """The ARN of the lease index alone: only the sweeper queries it."""
        return f"{self.table.table_arn}/index/{LEASE_INDEX}"
