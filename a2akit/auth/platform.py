"""The caller a platform in front of the kit already verified: an API Gateway authorizer
(HTTP API JWT authorizer `sub`, Lambda authorizer `principalId`; on a REST API a Cognito
authorizer's `claims.sub` or a Lambda authorizer's `principalId`) or a Function URL with IAM
auth (the caller's ARN). Only the Lambda front doors carry one; gRPC never does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["platform_principal"]


def platform_principal(request_context: Mapping[str, Any] | None) -> str | None:
    """The caller API Gateway already verified (its authorizer context), if any.

    `request_context` is the Lambda event's (API Gateway HTTP API v2, Function URL or REST API
    shape; through the Lambda Web Adapter, its x-amzn-request-context header)."""
    request_context = request_context or {}
    authorizer = request_context.get("authorizer") or {}
    # HTTP API: authorizer.jwt.claims; REST API (Cognito user pools): authorizer.claims.
    claims = (authorizer.get("jwt") or {}).get("claims") or authorizer.get("claims")
    if not isinstance(claims, dict):  # a Lambda authorizer's context values are strings
        claims = {}
    principal = (claims.get("sub") or (authorizer.get("lambda") or {}).get("principalId")
                 or authorizer.get("principalId")
                 or (authorizer.get("iam") or {}).get("userArn"))
    return str(principal) if principal else None
