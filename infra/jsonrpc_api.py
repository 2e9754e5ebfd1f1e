"""The JSON-RPC binding: one arm64 Lambda (Mangum), an HTTP API in front and a Function URL.

The function runs with SnapStart: Lambda initializes each published version once (imports,
store client, agent, card: everything `handlers.jsonrpc` builds at import), snapshots it, and
resumes new execution environments from the snapshot. SnapStart applies to published
versions only, so the HTTP API and the Function URL invoke the `live` alias of the current
version, never $LATEST; `handlers.jsonrpc` refreshes connections after a restore.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from handlers.jsonrpc_app import AGENT_CARD_PATH

__all__ = ["ALIAS", "HANDLER", "JsonRpcApi"]

HANDLER = "handlers.jsonrpc.handler"  # DESIGN.md: the kit's Lambda entry point
# The bundle is built for exactly this interpreter (infra/bundle.py). SnapStart needs 3.12+.
RUNTIME = lambda_.Runtime.PYTHON_3_13
ALIAS = "live"

# Headroom over the stream budget for the last event and the response to leave.
_TIMEOUT_MARGIN_SECONDS = 4


class JsonRpcApi(Construct):
    """Exposes `function`, `alias`, `http_api` and `function_url` so the stack can wire and
    grant."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code_dir: str,
        environment: Mapping[str, str],
        stream_budget_seconds: float,
        authorizer: apigwv2.IHttpRouteAuthorizer | None = None,
        memory_mb: int = 512,
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=RUNTIME,
            architecture=lambda_.Architecture.ARM_64,
            handler=HANDLER,
            code=lambda_.Code.from_asset(code_dir),
            memory_size=memory_mb,
            # A streaming call is buffered by Mangum and ends at its budget; the function
            # must outlive it, and API Gateway cuts everything at 30 s anyway.
            timeout=Duration.seconds(
                min(29, math.ceil(stream_budget_seconds) + _TIMEOUT_MARGIN_SECONDS)
            ),
            environment=dict(environment),
            log_group=self.log_group,
            tracing=lambda_.Tracing.ACTIVE,
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS,
        )
        # A new version is published whenever the code or the configuration changes; the
        # alias follows it, and callers only ever reach the alias.
        self.alias = lambda_.Alias(
            self, "Live", alias_name=ALIAS, version=self.function.current_version
        )
        integration = integrations.HttpLambdaIntegration("Integration", self.alias)
        self.http_api = apigwv2.HttpApi(
            self,
            "HttpApi",
            description="A2A JSON-RPC binding",
            default_integration=integration,
            # Optional defence in depth; the kit checks every request itself anyway.
            default_authorizer=authorizer,
        )
        if authorizer is not None:
            # The public agent card needs no credentials (spec 8.2).
            self.http_api.add_routes(
                path=AGENT_CARD_PATH,
                methods=[apigwv2.HttpMethod.GET],
                integration=integration,
                authorizer=apigwv2.HttpNoneAuthorizer(),
            )
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        _enable_access_logs(self.http_api, self.access_logs)
        # Callers are authenticated by the kit itself (JWTs or API keys; anonymous only when
        # configured), the same as through the HTTP API, so the URL adds no weaker path.
        self.function_url = self.alias.add_function_url(
            auth_type=lambda_.FunctionUrlAuthType.NONE,
            invoke_mode=lambda_.InvokeMode.BUFFERED,
        )

    @property
    def url(self) -> str:
        """The HTTP API's default-stage URL, ending in `/`."""
        url = self.http_api.url
        assert url is not None  # the default stage always exists here
        return url


def _enable_access_logs(api: apigwv2.HttpApi, group: logs.LogGroup) -> None:
    # The default stage is created by HttpApi; its access log settings are only on the L1.
    stage = api.default_stage
    assert stage is not None
    cfn_stage = stage.node.default_child
    assert isinstance(cfn_stage, apigwv2.CfnStage)
    cfn_stage.access_log_settings = apigwv2.CfnStage.AccessLogSettingsProperty(
        destination_arn=group.log_group_arn,
        format=(
            '{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",'
            '"time":"$context.requestTime","method":"$context.httpMethod",'
            '"path":"$context.path","status":"$context.status",'
            '"latency":"$context.responseLatency",'
            '"integrationError":"$context.integrationErrorMessage"}'
        ),
    )
