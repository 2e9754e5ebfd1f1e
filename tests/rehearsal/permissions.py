"""What a role of the synthesized template allows, in the recorder's terms (`Call`: action and
symbolic resource), and what AWS itself does with a role on a function's behalf."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tests.rehearsal.recorder import Call

__all__ = ["EMULATOR_ONLY", "allowed", "made_by_aws", "resource_names"]

# Asked for only against an emulator endpoint (a2akit.store.dynamodb:
# create_table_if_missing); against AWS the kit never describes or creates tables.
EMULATOR_ONLY = frozenset({"dynamodb:DescribeTable", "dynamodb:CreateTable"})
# The pollers of Lambda's event source mappings and its on-failure destinations act with the
# function's role, not its code: these are the actions they need.
_QUEUE_POLLER = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility",
                 "sqs:GetQueueAttributes", "sqs:GetQueueUrl")
_STREAM_POLLER = ("dynamodb:DescribeStream", "dynamodb:GetRecords",
                  "dynamodb:GetShardIterator")
_SERVICES = ("dynamodb:", "sqs:")


def resource_names(template: dict[str, Any], table: str,
                   queues: Mapping[str, str]) -> dict[str, str]:
    """Logical id -> symbolic resource: the table (by its local name) and each queue (by its
    local URL, `queues` maps logical ids to them)."""
    names = {f"{key}": f"queue:{url}" for key, url in queues.items()}
    for key, resource in template["Resources"].items():
        if resource["Type"] == "AWS::DynamoDB::Table":
            names[key] = f"table:{table}"
    return names


def _symbol(resource: Any, names: Mapping[str, str]) -> str:
    if resource == "*":
        return "*"
    if isinstance(resource, dict) and "Fn::GetAtt" in resource:
        key, attribute = resource["Fn::GetAtt"]
        if attribute == "Arn" and key in names:
            return names[key]
        if attribute == "StreamArn" and key in names:
            return f"{names[key]}/stream"
    if isinstance(resource, dict) and "Fn::Join" in resource:
        separator, (first, *rest) = resource["Fn::Join"]
        if separator == "" and all(isinstance(part, str) for part in rest):
            return _symbol(first, names) + "".join(rest)
    return json.dumps(resource, sort_keys=True)  # unknown: never equal to a recorded call


def allowed(template: dict[str, Any], role: str, names: Mapping[str, str]) -> set[Call]:
    """The DynamoDB and SQS permissions the role's policies grant."""
    granted: set[Call] = set()
    for policy in template["Resources"].values():
        if policy["Type"] != "AWS::IAM::Policy" or {"Ref": role} not in policy[
                "Properties"]["Roles"]:
            continue
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            assert statement["Effect"] == "Allow", statement
            actions = statement["Action"]
            resources = statement["Resource"]
            for action in actions if isinstance(actions, list) else [actions]:
                if not action.startswith(_SERVICES):
                    continue
                for resource in resources if isinstance(resources, list) else [resources]:
                    granted.add(Call(action, _symbol(resource, names)))
    return granted


def made_by_aws(template: dict[str, Any], function: str, names: Mapping[str, str]) -> set[Call]:
    """What the function's event source mappings, their on-failure destinations and those of
    its asynchronous invocations need."""
    needed: set[Call] = set()
    for mapping in template["Resources"].values():
        properties = mapping.get("Properties", {})
        if mapping["Type"] != "AWS::Lambda::EventSourceMapping" or properties[
                "FunctionName"] != {"Ref": function}:
            continue
        source = _symbol(properties["EventSourceArn"], names)
        poller = _STREAM_POLLER if source.endswith("/stream") else _QUEUE_POLLER
        needed.update(Call(action, source) for action in poller)
        if source.endswith("/stream"):
            needed.add(Call("dynamodb:ListStreams", "*"))
        destination = properties.get("DestinationConfig", {}).get("OnFailure", {})
        if destination:
            needed.add(Call("sqs:SendMessage", _symbol(destination["Destination"], names)))
    # Asynchronous invocations' on-failure destinations (the sweeper's failed sweeps).
    for config in template["Resources"].values():
        properties = config.get("Properties", {})
        if config["Type"] != "AWS::Lambda::EventInvokeConfig" or properties[
                "FunctionName"] != {"Ref": function}:
            continue
        destination = properties.get("DestinationConfig", {}).get("OnFailure", {})
        if destination:
            needed.add(Call("sqs:SendMessage", _symbol(destination["Destination"], names)))
    return needed


def local_environment(variables: Mapping[str, Any], names: Mapping[str, str],
                      local: Mapping[str, str]) -> dict[str, str]:
    """A process's environment from the template, as this machine has it: references to the
    table and the queues become their local names; other values that only exist once deployed
    (the issuer, the URLs) come from `local`, by variable name."""
    resolved: dict[str, str] = {}
    for name, value in variables.items():
        if isinstance(value, str):
            resolved[name] = value
        elif isinstance(value, dict) and value.get("Ref") in names:
            resolved[name] = names[value["Ref"]].split(":", 1)[1]
        else:
            assert name in local, f"no local value for {name}={value}"
            resolved[name] = local[name]
    return resolved
