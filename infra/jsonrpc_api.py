"""The JSON-RPC binding's public door: one arm64 Lambda running the Lambda Web Adapter in
response-streaming mode, behind a regional API Gateway REST API whose Lambda integration
streams (`responseTransferMode: STREAM`); optionally its own domain name and a streaming
Function URL. Why this door: docs/public-door.md.

The function's handler is the bundle's `run.sh` (infra/bundle.py), which the adapter's layer
runs as the runtime's exec wrapper: it starts `python -m handlers.stream` on 127.0.0.1:8080
and forwards each invocation to it, streaming the response as it is written.

The function runs with SnapStart: Lambda initializes each published version once (the
adapter, the server, the kit's imports, store client, agent and card), snapshots it, and
resumes new execution environments from the snapshot; the adapter then POSTs to the
after-restore path, where `handlers.stream` refreshes what restored copies must not share.
SnapStart applies to published versions only, so the doors invoke the `live` alias.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from aws_cdk import Annotations, Aws, Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_certificatemanager as acm
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_route53 as route53
from aws_cdk import aws_route53_targets as targets
from constructs import Construct

from a2akit.settings import Settings

from .bundle import RUN_SCRIPT
from .roles import function_role

__all__ = ["ADAPTER_ENVIRONMENT", "ALIAS", "HANDLER", "RUNTIME", "STAGE",
           "TIMEOUT_MARGIN_SECONDS", "DomainConfig", "JsonRpcApi"]

HANDLER = RUN_SCRIPT  # the function's handler: the adapter runs it (handlers.stream)

# The bundle is built for exactly this interpreter (infra/bundle.py). SnapStart needs 3.12+.
RUNTIME = lambda_.Runtime.PYTHON_3_13
ALIAS = "live"
STAGE = "a2a"  # the REST API's stage: https://ID.execute-api.REGION.amazonaws.com/a2a/
AFTER_RESTORE_PATH = "/_lwa/after-restore"  # handlers.stream serves it, the adapter guards it
ADAPTER_ENVIRONMENT = {
    "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",  # the layer's bootstrap runs the handler
    "AWS_LWA_INVOKE_MODE": "response_stream",  # stream the app's response as it is written
    "PORT": "8080",  # where handlers.stream listens and the adapter connects (its default)
    # Ready once the port accepts: the app has no GET at `/` to probe.
    "AWS_LWA_READINESS_CHECK_PROTOCOL": "tcp",
    "AWS_LWA_SNAPSTART_AFTER_RESTORE_PATH": AFTER_RESTORE_PATH,
}

# Headroom over the stream budget for the last event and the response to leave: the kit's
# own budget margin, which it keeps free of the invocation's remaining time, so a stream
# lasts exactly its budget (a2akit/execution/budget.py).
TIMEOUT_MARGIN_SECONDS = math.ceil(Settings.budget_margin_seconds)
_LAMBDA_CEILING_SECONDS = 900


class DomainConfig:
    """A door's own name: the certificate by ARN, or issued in (and aliased from) a zone."""

    def __init__(self, name: str, *, certificate_arn: str | None = None,
                 zone_id: str | None = None, zone_name: str | None = None) -> None:
        self.name = name
        self.certificate_arn = certificate_arn
        self.zone_id = zone_id
        self.zone_name = zone_name

    def zone(self, scope: Construct, construct_id: str) -> route53.IHostedZone | None:
        if self.zone_id is None or self.zone_name is None:
            return None
        return route53.HostedZone.from_hosted_zone_attributes(
            scope, construct_id, hosted_zone_id=self.zone_id, zone_name=self.zone_name)

    def certificate(self, scope: Construct, construct_id: str,
                    zone: route53.IHostedZone | None) -> acm.ICertificate:
        if self.certificate_arn is not None:
            return acm.Certificate.from_certificate_arn(scope, construct_id, self.certificate_arn)
        assert zone is not None  # DeployConfig requires one or the other
        return acm.Certificate(scope, construct_id, domain_name=self.name,
                               validation=acm.CertificateValidation.from_dns(zone))


class JsonRpcApi(Construct):
    """Exposes `function`, `alias`, `rest_api`, `stage` and `function_url` (or None), so the
    stack can wire, grant and protect."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code_dir: str,
        environment: Mapping[str, str],
        stream_budget_seconds: float,
        rate_limit: float,
        burst_limit: int,
        reserved_concurrency: int | None,
        domain: DomainConfig | None = None,
        layer_arn: str,
        snap_start: bool,
        function_url: bool = False,
        memory_mb: int = 512,
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        # A stream ends at its budget; the function outlives it by the margin.
        timeout = Duration.seconds(min(_LAMBDA_CEILING_SECONDS,
                                       math.ceil(stream_budget_seconds) + TIMEOUT_MARGIN_SECONDS))
        self.function = lambda_.Function(
            self,
            "Function",
            role=function_role(self, "Role", self.log_group),
            runtime=RUNTIME,
            architecture=lambda_.Architecture.ARM_64,
            handler=RUN_SCRIPT,
            code=lambda_.Code.from_asset(code_dir),
            layers=[lambda_.LayerVersion.from_layer_version_arn(
                self, "WebAdapter", layer_arn)],
            memory_size=memory_mb,
            timeout=timeout,
            environment={**environment, **ADAPTER_ENVIRONMENT},
            log_group=self.log_group,
            tracing=lambda_.Tracing.ACTIVE,
            # Off only where a2a:snapStart=false says so (infra/region.py).
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if snap_start else None,
            # A flood at the door never takes the concurrency the worker, the sweeper and the
            # push dispatcher need; beyond it callers get 429 from API Gateway.
            reserved_concurrent_executions=reserved_concurrency,
        )
        # A new version is published whenever the code or the configuration changes; the
        # alias follows it, and callers only ever reach the alias. That is what CDK's warning
        # asks for: acknowledged, so the CLI prints no stray warning (with its trace's last
        # frame, the jsii runtime's program.js) on every synth.
        if snap_start:
            Annotations.of(self.function).acknowledge_warning(
                "@aws-cdk/aws-lambda:snapStartRequirePublish",
                "the alias `live` points at current_version: every change publishes a version")
        self.alias = lambda_.Alias(
            self, "Live", alias_name=ALIAS, version=self.function.current_version
        )
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.domain = domain
        zone = domain.zone(self, "Zone") if domain else None
        self.rest_api = apigw.LambdaRestApi(
            self,
            "RestApi",
            handler=self.alias,
            proxy=True,
            # Named after the stack: API Gateway's metrics (and so the door's alarms) are
            # keyed by ApiName, which would mix every stack's default "RestApi".
            rest_api_name=Stack.of(self).stack_name,
            description="A2A JSON-RPC binding (streaming)",
            # Regional: streams idle up to 5 minutes there, 30 s on edge-optimized endpoints.
            endpoint_configuration=apigw.EndpointConfiguration(
                types=[apigw.EndpointType.REGIONAL]),
            integration_options=apigw.LambdaIntegrationOptions(
                response_transfer_mode=apigw.ResponseTransferMode.STREAM,
                timeout=timeout,
            ),
            deploy_options=apigw.StageOptions(
                stage_name=STAGE,
                # Refused at the edge with 429, before any invocation.
                throttling_rate_limit=rate_limit,
                throttling_burst_limit=burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.custom(
                    '{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",'
                    '"time":"$context.requestTime","method":"$context.httpMethod",'
                    '"path":"$context.path","status":"$context.status",'
                    '"latency":"$context.responseLatency","waf":"$context.waf.status",'
                    '"integrationError":"$context.integrationErrorMessage"}'),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                tracing_enabled=True,
            ),
            # Access and error logs need the account's API Gateway logging role. It is a
            # setting of the whole account and region (AWS::ApiGateway::Account): every API
            # there logs through it, so deleting this stack must not delete it.
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            domain_name=apigw.DomainNameOptions(
                domain_name=domain.name,
                certificate=domain.certificate(self, "Certificate", zone),
                endpoint_type=apigw.EndpointType.REGIONAL,
                security_policy=apigw.SecurityPolicy.TLS_1_2,
            ) if domain else None,
            # With a name of its own, the door has one URL: the one the card advertises.
            disable_execute_api_endpoint=domain is not None,
        )
        self.stage = self.rest_api.deployment_stage
        # The stage's execution (error) logs go to a group whose name API Gateway fixes; left
        # to it, it creates the group at the first error and keeps it forever. Made here, it
        # keeps a month like the others and goes with the stack; the stage waits for it.
        self.execution_logs = logs.LogGroup(
            self,
            "ExecutionLogs",
            log_group_name=f"API-Gateway-Execution-Logs_{self.rest_api.rest_api_id}/{STAGE}",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.stage.node.add_dependency(self.execution_logs)
        # One URL for the door, the stack's JsonRpcUrl: not RestApi's own Endpoint output,
        # which repeats it, or names the execute-api URL a domain turns off.
        self.rest_api.node.try_remove_child("Endpoint")
        if domain is not None and zone is not None:
            route53.ARecord(self, "Alias", zone=zone, record_name=domain.name,
                            target=route53.RecordTarget.from_alias(
                                targets.ApiGateway(self.rest_api)))
        # The same app without API Gateway: no throttling or WAF before it, only the reserved
        # concurrency. Off unless asked for.
        self.function_url = self.alias.add_function_url(
            auth_type=lambda_.FunctionUrlAuthType.NONE,
            invoke_mode=lambda_.InvokeMode.RESPONSE_STREAM,
        ) if function_url else None

    @property
    def url(self) -> str:
        """The door's base URL, ending in `/`: the domain's, or the stage's."""
        if self.domain is not None:
            return f"https://{self.domain.name}/"
        # Built from the API's id and the stage's literal name: `rest_api.url` refers to the
        # stage resource, which depends on the function, whose settings carry this URL.
        return (f"https://{self.rest_api.rest_api_id}.execute-api.{Aws.REGION}."
                f"{Aws.URL_SUFFIX}/{STAGE}/")
