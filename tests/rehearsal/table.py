"""The task table as the synthesized template defines it, as DynamoDB calls: the template's
`AWS::DynamoDB::Table` properties translated into CreateTable (and UpdateTimeToLive)
arguments, so DynamoDB Local holds the table a deploy would create, not the store's own
idea of it (a2akit/store/table.py: create_table_kwargs)."""

from __future__ import annotations

from typing import Any

__all__ = ["UntranslatedProperty", "create_table_calls", "table_properties"]

# Properties that change nothing a store call can observe on DynamoDB Local: backups,
# encryption at rest, deletion safeguards, tags. Any other property must be translated (or
# added here with its reason), so the rehearsal never silently drops a part of the table.
_NO_BEHAVIOUR = frozenset({
    "PointInTimeRecoverySpecification",
    "SSESpecification",
    "DeletionProtectionEnabled",
    "Tags",
    "TableClass",
    "ContributorInsightsSpecification",
})
# Passed to CreateTable as they stand: the same shape in CloudFormation and the API.
_AS_IS = ("AttributeDefinitions", "KeySchema", "BillingMode", "LocalSecondaryIndexes")


class UntranslatedProperty(AssertionError):
    """The template's table has a property the rehearsal does not know how to create."""


def table_properties(template: dict[str, Any]) -> dict[str, Any]:
    """The properties of the template's one task table."""
    (table,) = [resource["Properties"] for resource in template["Resources"].values()
                if resource["Type"] == "AWS::DynamoDB::Table"]
    return dict(table)


def create_table_calls(properties: dict[str, Any],
                       name: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(CreateTable arguments, UpdateTimeToLive arguments or None) for `properties`."""
    unknown = set(properties) - _NO_BEHAVIOUR - set(_AS_IS) - {
        "GlobalSecondaryIndexes", "StreamSpecification", "TimeToLiveSpecification",
        "ProvisionedThroughput"}
    if unknown:
        raise UntranslatedProperty(f"the table's {sorted(unknown)} have no translation")
    create: dict[str, Any] = {"TableName": name}
    create.update({key: properties[key] for key in _AS_IS if key in properties})
    if "ProvisionedThroughput" in properties:
        create["ProvisionedThroughput"] = properties["ProvisionedThroughput"]
    indexes = properties.get("GlobalSecondaryIndexes")
    if indexes:
        # Index, key schema and projection as declared; on-demand indexes carry no
        # throughput of their own.
        create["GlobalSecondaryIndexes"] = [
            {key: index[key] for key in ("IndexName", "KeySchema", "Projection",
                                         "ProvisionedThroughput") if key in index}
            for index in indexes]
    stream = properties.get("StreamSpecification")
    if stream:
        create["StreamSpecification"] = {"StreamEnabled": True,
                                         "StreamViewType": stream["StreamViewType"]}
    ttl = properties.get("TimeToLiveSpecification")
    update_ttl = None
    if ttl and ttl.get("Enabled"):
        update_ttl = {"TableName": name, "TimeToLiveSpecification": {
            "AttributeName": ttl["AttributeName"], "Enabled": True}}
    return create, update_ttl
