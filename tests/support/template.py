"""Reading a synthesized CloudFormation template the way the infra tests assert it: by resource
type, handler and properties, never by a logical id written into a test.

Imported by tests/infra only, after its conftest.py has set up jsii's environment.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aws_cdk import App
from aws_cdk.assertions import Template

__all__ = [
    "CONTAINER",
    "Synth",
    "actions_of",
    "as_list",
    "environments",
    "lambda_function",
    "logical_id",
    "only",
    "role_of",
    "statements",
    "task_role",
    "tls_only_queues",
]

# The `synth` fixture (tests/infra/conftest.py): synth(bundle, outdir, validate=False, **context).
Synth = Callable[..., tuple[App, Template, Path]]

# environments()' name for the gRPC container's environment; the functions go by handler.
CONTAINER = "container"


def logical_id(template: Template, resource_type: str,
               where: Callable[[Any], bool] = lambda _: True) -> str:
    """The logical id of the one resource of this type (of those `where` accepts)."""
    (found,) = [key for key, resource in template.find_resources(resource_type).items()
                if where(resource)]
    return found


def only(template: Template, resource_type: str) -> dict[str, Any]:
    """The one resource of this type, whole (Properties, DependsOn, DeletionPolicy)."""
    (resource,) = template.find_resources(resource_type).values()
    return dict(resource)


def lambda_function(template: Template, handler: str) -> tuple[str, dict[str, Any]]:
    """The one function with this handler: its logical id and its properties."""
    (found,) = [(key, resource["Properties"])
                for key, resource in template.find_resources("AWS::Lambda::Function").items()
                if resource["Properties"].get("Handler") == handler]
    return found


def role_of(function: dict[str, Any]) -> str:
    """The logical id of a function's execution role, from the function's properties."""
    role: str = function["Role"]["Fn::GetAtt"][0]
    return role


def task_role(template: Template) -> str:
    """The logical id of the gRPC container's task role."""
    (task_definition,) = template.find_resources("AWS::ECS::TaskDefinition").values()
    role: str = task_definition["Properties"]["TaskRoleArn"]["Fn::GetAtt"][0]
    return role


def environments(template: Template) -> dict[str, dict[str, Any]]:
    """Every process's environment as name -> value: by handler for the functions, CONTAINER
    for the gRPC container (absent without gRPC)."""
    found = {
        resource["Properties"]["Handler"]: dict(resource["Properties"]["Environment"]["Variables"])
        for resource in template.find_resources("AWS::Lambda::Function").values()
    }
    for task in template.find_resources("AWS::ECS::TaskDefinition").values():
        (container,) = task["Properties"]["ContainerDefinitions"]
        found[CONTAINER] = {e["Name"]: e["Value"] for e in container["Environment"]}
    return found


def as_list(value: Any) -> list[Any]:
    """An IAM statement's Action or Resource (one value or a list) as a list."""
    return value if isinstance(value, list) else [value]


def statements(template: Template, role_id: str | None = None) -> list[dict[str, Any]]:
    """The statements of the stack's IAM policies: all of them, or those of one role."""
    return [statement
            for policy in template.find_resources("AWS::IAM::Policy").values()
            if role_id is None or {"Ref": role_id} in policy["Properties"]["Roles"]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]]


def actions_of(template: Template, role_id: str, prefix: str) -> set[str]:
    """The actions starting with `prefix` that the role's policies allow."""
    return {action for statement in statements(template, role_id)
            for action in as_list(statement["Action"]) if action.startswith(prefix)}


def tls_only_queues(template: Template) -> set[str]:
    """The ids of the queues whose queue policy denies every request made without TLS."""
    return {queue["Ref"]
            for policy in template.find_resources("AWS::SQS::QueuePolicy").values()
            for queue in policy["Properties"]["Queues"]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
            if statement["Effect"] == "Deny"
            and statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}}
