"""OpenTelemetry on the stack's functions (`a2a:otel=true`; docs/observability.md, "In the
stack"): the AWS Distro for OpenTelemetry's Python layer (infra/region.py says which, and
where it is published) on every function that runs the kit, and the environment that turns
spans on there.

- `A2A_OTEL=true`: the kit's spans (a2akit/telemetry.py) through the tracer provider the layer
  configures; its collector extension exports them to X-Ray.
- `OTEL_SERVICE_NAME`: the stack's name, one service for all its functions (a span's resource
  still names its function, `faas.name`).
- `OTEL_PROPAGATORS=tracecontext`: W3C Trace Context, what the kit carries (`traceparent`);
  the layer's wrapper would otherwise add baggage and X-Ray's header.
- The exec wrapper: the bundle's `otel.sh` (infra/bundle.py), which runs the layer's
  `/opt/otel-instrument` with the bundle's packages ahead of the layer's. The door keeps the
  adapter's (`/opt/bootstrap`): its `run.sh` starts the app through `otel.sh` itself.
- The push dispatcher runs without an httpx instrumentation, should the layer carry one: it
  would replace each webhook's `traceparent` (the task's trace) with a span of its own.

Active tracing is on for every function already (infra/functions.py, infra/jsonrpc_api.py),
with the X-Ray write permission the layer's collector uses. The containers (gRPC, the long
lane) are not Lambda functions: the key leaves them as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from a2akit.settings import ENV

from .bundle import OTEL_SCRIPT, TASK_ROOT

__all__ = ["DISABLED_INSTRUMENTATIONS", "EXEC_WRAPPER", "OTEL_WRAPPER", "PROPAGATORS",
           "SERVICE_NAME", "instrument", "otel_environment"]

EXEC_WRAPPER = "AWS_LAMBDA_EXEC_WRAPPER"
OTEL_WRAPPER = f"{TASK_ROOT}/{OTEL_SCRIPT}"
SERVICE_NAME = "OTEL_SERVICE_NAME"
PROPAGATORS = "OTEL_PROPAGATORS"
DISABLED_INSTRUMENTATIONS = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"


def otel_environment(service_name: str) -> dict[str, str]:
    """What every instrumented function gets, the door included."""
    return {ENV.OTEL: "true", SERVICE_NAME: service_name, PROPAGATORS: "tracecontext"}


def instrument(scope: Construct, *, layer_arn: str, service_name: str,
               door: lambda_.Function, functions: Iterable[lambda_.Function],
               webhooks: lambda_.Function | None) -> None:
    """The layer and the environment on the door (which keeps its exec wrapper) and on
    `functions` (otel.sh as theirs); `webhooks`, the push dispatcher, is one of them."""
    layer = lambda_.LayerVersion.from_layer_version_arn(scope, "OtelLayer", layer_arn)
    environment = otel_environment(service_name)
    for function in (door, *functions):
        function.add_layers(layer)
        for name, value in environment.items():
            function.add_environment(name, value)
        if function is not door:
            function.add_environment(EXEC_WRAPPER, OTEL_WRAPPER)
    if webhooks is not None:
        webhooks.add_environment(DISABLED_INSTRUMENTATIONS, "httpx")
