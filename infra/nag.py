"""The cdk-nag findings the stack accepts, each on the construct it concerns, with its reason
(tests/infra check that nothing else is found)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Acknowledgment, Validations

if TYPE_CHECKING:
    from .long_lane import LongLane
    from .stack import A2AStack

__all__ = ["acknowledge_findings"]


def acknowledge_findings(stack: A2AStack) -> None:
    """Every accepted cdk-nag finding, on the construct it concerns, with its reason."""
    functions = [stack.jsonrpc.function, stack.sweeper.function]
    if stack.worker is not None:
        functions.append(stack.worker.function)
    if stack.push is not None:
        functions.append(stack.push.function)
    for function in functions:
        role = function.role
        assert role is not None
        Validations.of(role).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason="X-Ray segment upload (active tracing) and dynamodb:ListStreams (the"
                " push dispatcher's stream mapping) have no resource-level permissions; the"
                " table statements name the table, its indexes or its stream, the queue"
                " statements one queue each.",
            ),
        )
        Validations.of(function).acknowledge(
            Acknowledgment(
                id="AwsSolutions-L1",
                reason="The bundle is built from Python 3.13 wheels (infra/bundle.py); the"
                " runtime moves together with the bundle's --python-version.",
            )
        )
    _acknowledge_rest_api(stack)
    if stack.issuer is not None:
        Validations.of(stack.issuer.user_pool).acknowledge(
            Acknowledgment(
                id="AwsSolutions-COG2",
                reason="No person signs in to this pool: its callers are machine clients"
                " using the client credentials flow, which MFA does not apply to.",
            ),
            Acknowledgment(
                id="AwsSolutions-COG3",
                reason="Threat protection scores user sign-ins; this pool has no users,"
                " only app clients with client credentials.",
            ),
            Acknowledgment(
                id="AwsSolutions-COG8",
                reason="The Plus plan adds threat protection for user sign-ins at a cost"
                " per user; machine clients gain nothing from it.",
            ),
        )
    if stack.api_keys is not None:
        Validations.of(stack.api_keys.secret).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SMG4",
                reason="The secret holds SHA-256 hashes of API keys, not a credential"
                " of its own: keys are rotated by adding and removing records.",
            )
        )
    dead_letter_stores = [stack.sweeper.failed]
    if stack.push is not None:
        dead_letter_stores += [stack.push.dead_letter_queue, stack.push.failed_batches]
    for queue in dead_letter_stores:
        Validations.of(queue).acknowledge(
            Acknowledgment(
                id="AwsSolutions-SQS3",
                reason="A dead-letter store itself: Lambda or EventBridge (failed or"
                " undelivered sweeps), the push dispatcher (failed deliveries) or Lambda"
                " (stream batches it gave up on) writes here, and only people read it,"
                " with an alarm on its depth.",
            )
        )
    if stack.long_lane is not None:
        _acknowledge_long_lane(stack, stack.long_lane)
    if stack.grpc is not None:
        execution_role = stack.grpc.service.task_definition.execution_role
        assert execution_role is not None
        Validations.of(execution_role).acknowledge(
            Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason="ecr:GetAuthorizationToken has no resource-level permissions;"
                " image pulls are scoped to the asset repository by CDK.",
            )
        )
        Validations.of(stack.grpc.service.task_definition).acknowledge(
            Acknowledgment(
                id="AwsSolutions-ECS2",
                reason="The container environment holds only non-secret settings (agent"
                " import path, table name, URLs, flags, the issuer and client id, the"
                " ARN of the API-key secret).",
            )
        )
        Validations.of(stack.grpc.load_balancer).acknowledge(
            Acknowledgment(
                id="AwsSolutions-ELB2",
                reason="Internal ALB; the gRPC server logs its own requests. Access logs"
                " need a bucket per deployment and are left to the operator.",
            )
        )


def _acknowledge_rest_api(stack: A2AStack) -> None:
    api = stack.jsonrpc.rest_api
    findings = [
        ("AwsSolutions-APIG2", "The kit validates every request itself (JSON-RPC envelope,"
         " ProtoJSON params, size limit) and answers with the spec's errors; API"
         " Gateway's validation would answer in its own shape."),
        ("AwsSolutions-APIG4", "The kit authenticates A2A callers itself (JWTs or API keys;"
         " anonymous only when configured), identically on both bindings; the agent card"
         " is public by the spec."),
        ("AwsSolutions-COG4", "No Cognito authorizer: the in-process check is the one both"
         " bindings share (it also accepts issuers other than Cognito)."),
    ]
    if stack.waf is None:
        findings.append(("AwsSolutions-APIG3", "WAF is optional (a2a:waf=true): stage"
                         " throttling and the function's reserved concurrency limit a"
                         " flood without its fixed monthly cost."))
    Validations.of(api).acknowledge(*(Acknowledgment(id=i, reason=r) for i, r in findings))
    role = api.node.try_find_child("CloudWatchRole")
    if role is not None:
        Validations.of(role).acknowledge(Acknowledgment(
            id="AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/"
            "service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
            reason="API Gateway's own logging role for access and error logs; AWS's"
            " managed policy is the documented one."))


def _acknowledge_long_lane(stack: A2AStack, lane: LongLane) -> None:
    cluster = stack.get_logical_id(lane.cluster.node.default_child)  # type: ignore[arg-type]
    Validations.of(lane.task_role).acknowledge(Acknowledgment(
        id="AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:<AWS::Region>:"
        f"<AWS::AccountId>:task/<{cluster}>/*]",
        reason="The worker protects its own task from scale-in (ecs:UpdateTaskProtection):"
        " the lane's tasks are started by ECS, so their ARNs are known only as this"
        " cluster's."))
    execution_role = lane.service.task_definition.execution_role
    assert execution_role is not None
    Validations.of(execution_role).acknowledge(Acknowledgment(
        id="AwsSolutions-IAM5[Resource::*]",
        reason="ecr:GetAuthorizationToken has no resource-level permissions; image pulls"
        " are scoped to the asset repository by CDK."))
    Validations.of(lane.service.task_definition).acknowledge(Acknowledgment(
        id="AwsSolutions-ECS2",
        reason="The container environment holds only non-secret settings (agent import"
        " path, table name, queue URL, flags)."))
