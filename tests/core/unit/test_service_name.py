"""The name a process reports as (the `service` of its log lines, the `Service` dimension of its
metrics): Lambda's function name, else POWERTOOLS_SERVICE_NAME (Powertools' variable; the
stack sets it on the gRPC container), else the entry point's default."""

from __future__ import annotations

import pytest

from a2akit.settings import Settings

LAMBDA = "AWS_LAMBDA_FUNCTION_NAME"
POWERTOOLS = "POWERTOOLS_SERVICE_NAME"


@pytest.mark.parametrize(("environment", "expected"), [
    ({}, "grpc"),
    ({POWERTOOLS: "A2AKit-dev-grpc"}, "A2AKit-dev-grpc"),
    ({POWERTOOLS: ""}, "grpc"),  # empty counts as unset
    ({LAMBDA: "A2AKit-dev-Worker-1A2B", POWERTOOLS: "A2AKit-dev-grpc"}, "A2AKit-dev-Worker-1A2B"),
    ({LAMBDA: "", POWERTOOLS: "A2AKit-dev-grpc"}, "A2AKit-dev-grpc"),
])
def test_the_function_name_then_the_powertools_variable_then_the_default(
        environment: dict[str, str], expected: str) -> None:
    assert Settings.from_env(environment).service("grpc") == expected
