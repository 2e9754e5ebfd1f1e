"""Reading what a kit process printed: its JSON log lines and EMF metric documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["json_lines", "metric_values", "metrics_named"]


def json_lines(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """(the JSON objects, the other lines) of a process's output."""
    objects, other = [], []
    for line in path.read_text(errors="replace").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        if isinstance(value, dict):
            objects.append(value)
        else:
            other.append(line)
    return objects, other


def metrics_named(objects: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The EMF documents that declare metric `name`, after checking their shape."""
    found = []
    for doc in objects:
        directives = doc.get("_aws", {}).get("CloudWatchMetrics", [])
        if not any(m["Name"] == name for d in directives for m in d["Metrics"]):
            continue
        (directive,) = directives
        assert directive["Namespace"] == "A2AKit"
        for dimension_set in directive["Dimensions"]:
            assert len(dimension_set) <= 2, dimension_set  # Service and at most one more
            for dimension in dimension_set:
                assert dimension in doc, (dimension, doc)
        found.append(doc)
    return found


def metric_values(objects: list[dict[str, Any]], name: str) -> list[float]:
    return [doc[name] for doc in metrics_named(objects, name)]
