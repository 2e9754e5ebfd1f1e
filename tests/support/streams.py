"""DynamoDB Streams records as the dispatcher Lambda receives them: read from DynamoDB Local's
real stream of a table, then laid out as Lambda's JSON event (binary attributes base64)."""

from __future__ import annotations

import base64
import datetime
from typing import Any

__all__ = ["lambda_event", "stream_records"]


def stream_records(endpoint: str, table_name: str) -> list[dict[str, Any]]:
    """Every record of the table's stream so far, oldest first per shard, as boto3 gives
    them."""
    import boto3

    ddb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    streams = boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name="us-east-1")
    try:
        arn = ddb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        records: list[dict[str, Any]] = []
        for shard in shards:
            iterator = streams.get_shard_iterator(
                StreamArn=arn, ShardId=shard["ShardId"],
                ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while iterator:
                page = streams.get_records(ShardIterator=iterator, Limit=1000)
                records += [{**record, "eventSourceARN": arn} for record in page["Records"]]
                if not page["Records"]:
                    break
                iterator = page.get("NextShardIterator")
        return records
    finally:
        ddb.close()
        streams.close()


def lambda_event(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The Lambda event of a batch of stream records (AWS Lambda's DynamoDB event shape)."""
    return {"Records": [_lambda_record(record) for record in records]}


def _lambda_record(record: dict[str, Any]) -> dict[str, Any]:
    data = dict(record["dynamodb"])
    created = data.get("ApproximateCreationDateTime")
    if isinstance(created, datetime.datetime):
        data["ApproximateCreationDateTime"] = created.timestamp()
    for image in ("Keys", "NewImage", "OldImage"):
        if image in data:
            data[image] = {name: _attribute(value) for name, value in data[image].items()}
    return {
        "eventID": record["eventID"],
        "eventName": record["eventName"],
        "eventVersion": record.get("eventVersion", "1.1"),
        "eventSource": "aws:dynamodb",
        "awsRegion": record.get("awsRegion", "us-east-1"),
        "dynamodb": data,
        "eventSourceARN": record["eventSourceARN"],
    }


def _attribute(value: dict[str, Any]) -> dict[str, Any]:
    """One attribute value in Lambda's JSON: bytes as base64 text, numbers as text."""
    (kind, inner), = value.items()
    if kind == "B":
        return {"B": base64.b64encode(inner).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(item).decode() for item in inner]}
    if kind == "M":
        return {"M": {name: _attribute(item) for name, item in inner.items()}}
    if kind == "L":
        return {"L": [_attribute(item) for item in inner]}
    return {kind: inner}
