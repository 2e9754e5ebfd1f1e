"""An HTTP+JSON request as a client builds it from an rpc's request message: verb, path, JSON
body or query parameters, after wire-facts.md section 2. Written out here rather than taken
from http_service.rest_routes, so tests of the binding do not rely on the code they test."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from google.protobuf.message import Message

from a2akit.protojson import to_json

__all__ = ["PATHS", "rest_request"]

# rpc -> (verb, path; `{field}` is the request's field of that JSON name)
PATHS = {
    "SendMessage": ("POST", "/message:send"),
    "SendStreamingMessage": ("POST", "/message:stream"),
    "GetTask": ("GET", "/tasks/{id}"),
    "ListTasks": ("GET", "/tasks"),
    "CancelTask": ("POST", "/tasks/{id}:cancel"),
    "SubscribeToTask": ("GET", "/tasks/{id}:subscribe"),
    "CreateTaskPushNotificationConfig": ("POST", "/tasks/{taskId}/pushNotificationConfigs"),
    "GetTaskPushNotificationConfig": ("GET", "/tasks/{taskId}/pushNotificationConfigs/{id}"),
    "ListTaskPushNotificationConfigs": ("GET", "/tasks/{taskId}/pushNotificationConfigs"),
    "DeleteTaskPushNotificationConfig": ("DELETE",
                                         "/tasks/{taskId}/pushNotificationConfigs/{id}"),
    "GetExtendedAgentCard": ("GET", "/extendedAgentCard"),
}


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def rest_request(method: str, request: Message) -> tuple[str, str, dict[str, Any] | None, str]:
    """(verb, path, JSON body or None, query string) for `request` sent as rpc `method`; the
    tenant, when set, is the path's first segment."""
    verb, template = PATHS[method]
    fields = to_json(request)
    tenant = fields.pop("tenant", "")

    def bind(match: Any) -> str:
        return urllib.parse.quote(str(fields.pop(match.group(1), "")), safe="")

    path = re.sub(r"\{(\w+)\}", bind, template)
    if tenant:
        path = "/" + urllib.parse.quote(tenant, safe="") + path
    if verb == "POST":
        return verb, path, fields, ""
    query = urllib.parse.urlencode([(k, _query_value(v)) for k, v in fields.items()])
    return verb, path, None, query
