"""Execution roles for the stack's functions: each may write to its own log group and to
nothing else of CloudWatch Logs (no AWSLambdaBasicExecutionRole, whose statement is `*`)."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct

__all__ = ["LOG_ACTIONS", "function_role"]

# What the Lambda runtime does with a log group that already exists (the stack creates each
# function's group, so no CreateLogGroup).
LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")


def function_role(scope: Construct, construct_id: str, log_group: logs.ILogGroup) -> iam.Role:
    """A role Lambda can assume, allowed to write to `log_group` (its streams) only."""
    role = iam.Role(scope, construct_id,
                    assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    # The group's ARN ends in `:*`, which covers its log streams.
    role.add_to_policy(iam.PolicyStatement(actions=list(LOG_ACTIONS),
                                           resources=[log_group.log_group_arn]))
    return role
