"""What one request may carry: the fixed limits, the same on both bindings.

The request size is a setting (`A2A_MAX_REQUEST_BYTES`, a2akit.settings); everything else a
client controls is bounded here, so hostile input is refused with a named limit before it
reaches an agent or the task store. A request over a limit gets InvalidParamsError (-32602 /
INVALID_ARGUMENT) with a BadRequest violation naming the field and the limit; JSON nesting
is checked by the JSON-RPC binding before parsing (InvalidRequestError, -32600).
"""

from __future__ import annotations

__all__ = [
    "ERROR_DETAIL_CHARS",
    "ERROR_MESSAGE_CHARS",
    "MAX_HISTORY_LENGTH",
    "MAX_ID_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_DEPTH",
    "MAX_PARTS_PER_MESSAGE",
]

MAX_JSON_DEPTH = 64
"""Deepest nesting of JSON arrays and objects in a JSON-RPC body; the envelope is level 1.
A2A's own structures need under 10 levels; the rest is room for metadata and data parts."""

MAX_ID_BYTES = 128
"""Longest id, in UTF-8 bytes: task, context, message, push config, tenant, and the request
fields naming them. The store percent-encodes ids into its keys (at most 3 bytes per byte),
so tenant + owner + id stay far below DynamoDB's 2048-byte partition key and 1024-byte sort
key. A UUID is 36 bytes."""

MAX_PARTS_PER_MESSAGE = 100
"""Most parts in one message."""

MAX_METADATA_BYTES = 16 * 1024
"""Largest `metadata` object (any google.protobuf.Struct field), as serialized protobuf."""

MAX_METADATA_DEPTH = 16
"""Deepest nesting inside one `metadata` object; the object itself is level 1."""

MAX_HISTORY_LENGTH = 1000
"""Most messages a `historyLength` returns: a larger one is served as this many (leave it
unset for the whole history)."""

ERROR_DETAIL_CHARS = 256
"""Error metadata values and field violations are cut to this length: an error never
echoes a huge value back."""

ERROR_MESSAGE_CHARS = 1024
"""Error messages are cut to this length."""
