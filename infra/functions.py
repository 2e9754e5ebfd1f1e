"""The stack's functions other than the door: the worker (infra/worker.py), the sweeper
(infra/sweeper.py) and the push dispatcher (infra/push.py) are made here from the Lambda
bundle, as the door (infra/jsonrpc_api.py) is."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from .jsonrpc_api import RUNTIME
from .roles import function_role

__all__ = ["bundle_function"]


def bundle_function(
    scope: Construct,
    construct_id: str,
    *,
    handler: str,
    code_dir: str,
    timeout: Duration,
    environment: Mapping[str, str],
    memory_mb: int,
) -> lambda_.Function:
    """A function from the Lambda bundle, as the JSON-RPC one is made: arm64, the bundle's
    Python, its own log group (and a role that may write only there), traced."""
    log_group = logs.LogGroup(
        scope,
        f"{construct_id}Logs",
        retention=logs.RetentionDays.ONE_MONTH,
        removal_policy=RemovalPolicy.DESTROY,
    )
    return lambda_.Function(
        scope,
        construct_id,
        role=function_role(scope, f"{construct_id}Role", log_group),
        runtime=RUNTIME,
        architecture=lambda_.Architecture.ARM_64,
        handler=handler,
        code=lambda_.Code.from_asset(code_dir),
        memory_size=memory_mb,
        timeout=timeout,
        environment=dict(environment),
        log_group=log_group,
        tracing=lambda_.Tracing.ACTIVE,
    )
