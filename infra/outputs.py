"""The stack's outputs: the addresses and names a deployer needs after `cdk deploy` (the door's
URL, the queues, the issuer, what to point a domain at)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import CfnOutput
from aws_cdk import aws_route53 as route53

from .config import DeployConfig

if TYPE_CHECKING:
    from .stack import A2AStack

__all__ = ["add_outputs"]


def add_outputs(stack: A2AStack, config: DeployConfig,
                grpc_zone: route53.IHostedZone | None) -> None:
    """Every output of `stack`, which `config` built."""
    CfnOutput(stack, "JsonRpcUrl", value=stack.jsonrpc.url,
              description="the public door (streaming REST API): JSON-RPC and the card")
    if stack.jsonrpc.function_url is not None:
        CfnOutput(stack, "FunctionUrl", value=stack.jsonrpc.function_url.url,
                  description="streaming Function URL (same app, no API Gateway limits)")
    CfnOutput(stack, "TableName", value=stack.table.table.table_name)
    if stack.worker is not None:
        CfnOutput(stack, "QueueUrl", value=stack.worker.queue.queue_url)
        CfnOutput(stack, "DeadLetterQueueUrl", value=stack.worker.dead_letter_queue.queue_url)
    if stack.push is not None:
        CfnOutput(stack, "PushDeadLetterQueueUrl",
                  value=stack.push.dead_letter_queue.queue_url,
                  description="push deliveries that failed after all their attempts")
        CfnOutput(stack, "PushFailedBatchesQueueUrl",
                  value=stack.push.failed_batches.queue_url,
                  description="stream batches the push dispatcher could not process")
    if stack.long_lane is not None:
        CfnOutput(stack, "LongQueueUrl", value=stack.long_lane.queue.queue_url,
                  description="the long-task lane's queue (its worker on ECS Fargate)")
        CfnOutput(stack, "LongDeadLetterQueueUrl",
                  value=stack.long_lane.dead_letter_queue.queue_url)
    _auth_outputs(stack)
    if stack.grpc is not None:
        CfnOutput(
            stack,
            "GrpcAddress",
            value=stack.grpc.address,
            description="gRPC host:port (TLS): a2a:grpcDomainName, pointing at the ALB",
        )
        if grpc_zone is None:
            CfnOutput(stack, "GrpcLoadBalancerDnsName",
                      value=stack.grpc.load_balancer.load_balancer_dns_name,
                      description="the internal ALB: point a2a:grpcDomainName at it (no "
                      "a2a:grpcHostedZoneId, so the stack made no record)")
    domain = stack.jsonrpc.rest_api.domain_name
    if domain is not None and config.hosted_zone_id is None:
        CfnOutput(stack, "DomainNameTarget", value=domain.domain_name_alias_domain_name,
                  description="point a2a:domainName at it: a CNAME, or an alias record "
                  "with DomainNameTargetZoneId (no a2a:hostedZoneId, so the stack made "
                  "no record)")
        CfnOutput(stack, "DomainNameTargetZoneId",
                  value=domain.domain_name_alias_hosted_zone_id,
                  description="the hosted zone of DomainNameTarget, for an alias record")


def _auth_outputs(stack: A2AStack) -> None:
    if stack.issuer is not None:
        CfnOutput(stack, "JwtIssuer", value=stack.issuer.issuer,
                  description="iss of the callers' tokens (OpenID Connect discovery)")
        CfnOutput(stack, "TokenUrl", value=stack.issuer.token_url,
                  description="OAuth 2.0 token endpoint (client credentials)")
        CfnOutput(stack, "MachineClientId", value=stack.issuer.audience,
                  description="app client for machine callers; its secret: aws "
                  "cognito-idp describe-user-pool-client")
        CfnOutput(stack, "UserPoolId", value=stack.issuer.user_pool.user_pool_id)
        CfnOutput(stack, "Scope", value=stack.issuer.scope)
    if stack.api_keys is not None:
        CfnOutput(stack, "ApiKeysSecretArn", value=stack.api_keys.secret.secret_arn,
                  description="API-key records (hashes); see docs/authentication.md")
