"""The one stack: composes the constructs, wires settings, grants least privilege, exports URLs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Stack, Validations
from aws_cdk import aws_iam as iam
from constructs import Construct

from a2akit.settings import ENV, Settings

from .alarms import Alarms
from .config import DeployConfig
from .grpc_service import GrpcService
from .jsonrpc_api import JsonRpcApi
from .table import DATA_ACTIONS, INDEX_ACTIONS, TaskTable

__all__ = ["PROJECT_ROOT", "A2AStack"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _flag(value: bool) -> str:
    return "true" if value else "false"


class A2AStack(Stack):
    """Table, JSON-RPC Lambda + HTTP API, optional gRPC on Fargate, alarms."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeployConfig,
        lambda_bundle: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.table = TaskTable(self, "Tasks", retain=config.retain_table)

        common = {
            ENV.AGENT: config.agent,
            ENV.TABLE: self.table.table.table_name,
            ENV.ALLOW_ANONYMOUS: _flag(config.allow_anonymous),
            ENV.RETENTION_DAYS: str(Settings.retention_days),
        }
        self.jsonrpc = JsonRpcApi(
            self,
            "JsonRpc",
            code_dir=lambda_bundle,
            environment={
                **common,
                ENV.STREAM_BUDGET_SECONDS: f"{config.stream_budget_seconds:g}",
            },
            stream_budget_seconds=config.stream_budget_seconds,
        )
        self.jsonrpc.function.add_environment(ENV.PUBLIC_URL, self.jsonrpc.url)
        self._grant_table(self.jsonrpc.function.role)

        self.grpc: GrpcService | None = None
        if config.grpc:
            assert config.certificate_arn is not None  # DeployConfig checks it
            self.grpc = GrpcService(
                self,
                "Grpc",
                project_root=PROJECT_ROOT,
                environment={
                    **common,
                    ENV.PUBLIC_URL: self.jsonrpc.url,
                    ENV.GRPC_PORT: str(Settings.grpc_port),
                },
                certificate_arn=config.certificate_arn,
                desired_count=config.desired_count,
                port=Settings.grpc_port,
            )
            # Both bindings advertise the same card, so the Lambda names the gRPC address too.
            self.jsonrpc.function.add_environment(ENV.GRPC_ADDRESS, self.grpc.address)
            self.grpc.service.task_definition.default_container.add_environment(  # type: ignore[union-attr]
                ENV.GRPC_ADDRESS, self.grpc.address
            )
            self._grant_table(self.grpc.task_role)

        self.alarms = Alarms(
            self,
            "Alarms",
            function=self.jsonrpc.function,
            table=self.table.table,
            target_group=self.grpc.target_group if self.grpc else None,
            email=config.alarm_email,
        )

        CfnOutput(self, "JsonRpcUrl", value=self.jsonrpc.url, description="HTTP API base URL")
        CfnOutput(
            self,
            "FunctionUrl",
            value=self.jsonrpc.function_url.url,
            description="Lambda Function URL (same app, no API Gateway)",
        )
        CfnOutput(self, "TableName", value=self.table.table.table_name)
        if self.grpc is not None:
            CfnOutput(
                self,
                "GrpcAddress",
                value=self.grpc.address,
                description="internal ALB host:port (TLS); give it a DNS name from the certificate",
            )
        self._suppress_nag_findings()

    def _grant_table(self, role: iam.IRole | None) -> None:
        # Explicit statements instead of grant_read_write_data: that one adds `index/*` and
        # table-management actions the kit never uses.
        assert role is not None
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(DATA_ACTIONS), resources=[self.table.table.table_arn])
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(INDEX_ACTIONS), resources=self.table.index_arns)
        )

    def _suppress_nag_findings(self) -> None:
        """Every accepted cdk-nag finding, on the construct it concerns, with its reason."""
        role = self.jsonrpc.function.role
        assert role is not None
        Validations.of(role).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AWSLambdaBasicExecutionRole]",
                reason="The Lambda basic execution policy grants only writing its own logs;"
                " no table access comes from a managed policy.",
            ),
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason="X-Ray segment upload (active tracing) has no resource-level permissions;"
                " the table statements name the table and its list indexes.",
            ),
        )
        Validations.of(self.jsonrpc.function).acknowledge(
            Acknowledgment(
                id="AwsSolutions-L1",
                reason="The bundle is built from Python 3.13 wheels (infra/bundle.py); the"
                " runtime moves together with the bundle's --python-version.",
            )
        )
        Validations.of(self.jsonrpc.http_api).acknowledge(
            Acknowledgment(
                id="AwsSolutions-APIG4",
                reason="The kit authenticates A2A callers itself (bearer tokens; anonymous only"
                " when configured), identically for the HTTP API and the Function URL.",
            )
        )
        if self.grpc is not None:
            execution_role = self.grpc.service.task_definition.execution_role
            assert execution_role is not None
            Validations.of(execution_role).acknowledge(
                Acknowledgment(
                    id="AwsSolutions-IAM5[Resource::*]",
                    reason="ecr:GetAuthorizationToken has no resource-level permissions;"
                    " image pulls are scoped to the asset repository by CDK.",
                )
            )
            Validations.of(self.grpc.service.task_definition).acknowledge(
                Acknowledgment(
                    id="AwsSolutions-ECS2",
                    reason="The container environment holds only non-secret settings (agent"
                    " import path, table name, URLs, flags).",
                )
            )
            Validations.of(self.grpc.load_balancer).acknowledge(
                Acknowledgment(
                    id="AwsSolutions-ELB2",
                    reason="Internal ALB; the gRPC server logs its own requests. Access logs"
                    " need a bucket per deployment and are left to the operator.",
                )
            )
