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

__all__ = ["INDEX_ACTIONS", "RUN_ACTIONS", "SERVE_ACTIONS", "SWEEP_ACTIONS", "TaskTable",
           "table_actions"]

# What the store's code asks of the table (a2akit/store/dynamodb.py), by what a process does;
# a role gets the union for what its process does, on the table ARN. No Scan and no table
# management: the kit never creates or describes tables against AWS. Transactions
# (TransactWriteItems) are authorised by their items' actions (Put, Update, ConditionCheck,
# Delete). tests/rehearsal records the calls each entry point makes and compares them with
# the roles.
#
# Answering callers: read tasks, events and configs (GetItem, Query), write a task with its
# events, claims and counts (PutItem and UpdateItem, in transactions, with ConditionCheckItem
# where a write only checks an item), request a cancel (UpdateItem), give an ended task's
# older items its expiry (UpdateItem), read a page of listed tasks by key (BatchGetItem),
# delete a push config (DeleteItem).
SERVE_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
# Running agents on tasks that exist: the same reads and writes, the expiry of an ended task
# (UpdateItem, and DeleteItem of its marker), and renewing or handing over a lease
# (UpdateItem); no creating, no listing, no push configs.
RUN_ACTIONS = (
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
# Sweeping: find expired leases (Query, on the lease index) and end their tasks FAILED; finish
# the retention of ended tasks (UpdateItem, and DeleteItem of its markers).
SWEEP_ACTIONS = (
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
# The indexes are only ever queried.
INDEX_ACTIONS = ("dynamodb:Query",)


def table_actions(*, serves: bool = False, runs: bool = False,
                  sweeps: bool = False) -> tuple[str, ...]:
    """The table actions of a process that answers callers, runs agents and/or sweeps."""
    chosen: set[str] = set()
    for wanted, actions in ((serves, SERVE_ACTIONS), (runs, RUN_ACTIONS),
                            (sweeps, SWEEP_ACTIONS)):
        if wanted:
            chosen.update(actions)
    return tuple(sorted(chosen))


def _key(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


class TaskTable(Construct):
    """On-demand table with PITR, TTL, a stream (for push dispatch), the list indexes and the
    sparse lease index the sweeper queries."""

    def __init__(self, scope: Construct, construct_id: str, *, retain: bool = True,
                 deletion_protection: bool = True) -> None:
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
            # RETAIN covers only the stack's deletion; this refuses DeleteTable from anyone
            # (console, CLI, a replacement) until someone turns it off.
            deletion_protection=deletion_protection,
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
