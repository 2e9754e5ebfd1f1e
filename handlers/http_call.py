"""The caller of one HTTP request, the same way for JSON-RPC and HTTP+JSON: headers, the
`A2A-Version` query parameter (spec 3.6.1), the identity API Gateway verified, and the Lambda
invocation's deadline."""

from __future__ import annotations

from starlette.requests import Request

from a2akit.auth import platform_principal
from a2akit.caller import Call
from a2akit.execution.budget import lambda_deadline
from a2akit.operations import Operations
from a2akit.service_params import SUPPORTED_VERSION
from a2akit.trace import begin_request, from_asgi

__all__ = ["begin_http_request", "extension_headers", "resolve_http_call"]


def begin_http_request(request: Request, operation: str) -> None:
    """The request's logging context: its id (Lambda's), the operation, the caller's trace."""
    scope = request.scope
    begin_request(operation, scope.get("aws.context"), from_asgi(scope["headers"]))


async def resolve_http_call(ops: Operations, request: Request, *,
                            protocol_version: str = SUPPORTED_VERSION) -> Call:
    """`protocol_version`: the family the method name chose ("0.3" for 0.3 names)."""
    scope = request.scope
    return await ops.resolve_call(
        request.headers, verified_principal=platform_principal(scope.get("aws.event")),
        # Parsed only when there is a query: most requests have none.
        version=request.query_params.get("A2A-Version") if scope["query_string"] else None,
        # On Lambda the invocation's end bounds blocking and streaming calls.
        deadline=lambda_deadline(scope.get("aws.context")), protocol_version=protocol_version)


def extension_headers(call: Call) -> dict[str, str]:
    """The response header naming the extensions this call activated, if any."""
    return {"A2A-Extensions": ",".join(call.active_extensions)} if call.active_extensions else {}
