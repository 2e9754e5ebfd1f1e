"""A JSON request body (JSON-RPC and HTTP+JSON), read and parsed only when it is safe to.

Before the body is read: its Content-Type must say JSON (`check_content_type`, 415 otherwise),
and it may not be larger than the request limit (`read_body`).

Three things Python's `json` module would let through or fail on badly:
- nesting: the decoder recurses, so a deep body ends in RecursionError. The nesting is
  measured first, without recursion, and a body deeper than MAX_JSON_DEPTH is refused
  (InvalidRequestError, like the body-size limit, naming the limit);
- lone UTF-16 surrogates: `"\\ud800"` decodes to a str no UTF-8 encoder accepts, so any
  reply echoing it would fail. Such a body is not Unicode text: JSONParseError, as for
  invalid UTF-8 bytes;
- `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259): JSONParseError.
"""

from __future__ import annotations

import json
import re

from starlette.requests import Request

from a2akit.errors import InvalidRequestError, JSONParseError
from a2akit.limits import MAX_JSON_DEPTH

__all__ = ["JSON_TYPES", "check_content_type", "parse_json_body", "read_body"]

# The media types a request may declare: JSON-RPC's application/json, and A2A's own.
JSON_TYPES = frozenset({"application/json", "application/a2a+json"})


def check_content_type(request: Request) -> None:
    """Refuse a request that does not say it is JSON, before its body is read: text/plain,
    form and multipart bodies are what a web page may POST cross-site without a CORS
    preflight, so executing them would let any page start tasks with a visitor's browser."""
    declared = request.headers.get("content-type")
    if declared in JSON_TYPES:
        return  # the usual exact value: no parsing
    if declared is not None and declared.partition(";")[0].strip().lower() in JSON_TYPES:
        return
    raise InvalidRequestError(
        "Content-Type must be application/json or application/a2a+json",
        metadata={"contentType": declared or ""}, http_status=415)


def _too_big(limit: int) -> InvalidRequestError:
    # Built only when raised: an exception object per request would be wasted work.
    return InvalidRequestError(f"Request body exceeds the limit of {limit} bytes",
                               metadata={"limitBytes": str(limit)})


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused (InvalidRequestError) once it is known to exceed `limit` bytes:
    from its Content-Length before reading, or while reading."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_big(limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_big(limit)
    return bytes(body)

# A JSON string literal (escapes included): brackets inside strings do not nest. An
# unterminated one runs to the end, so every quote starts a match and the scan stays linear
# (a pattern that could fail at a quote would be retried at every later quote: quadratic).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_OPENERS = frozenset(b"[{")
_CHUNK = 256
_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_json_body(body: bytes) -> object:
    """The decoded body. Raises JSONParseError when it is not JSON text in UTF-8, and
    InvalidRequestError when it nests deeper than MAX_JSON_DEPTH."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONParseError("Invalid JSON payload: the body is not UTF-8 text") from exc
    _check_depth(body)
    try:
        payload = _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        raise JSONParseError() from exc
    # Only a \u escape can yield a surrogate (the UTF-8 decoder refuses encoded ones).
    if "\\u" in text and _has_surrogate(payload):
        raise JSONParseError(
            "Invalid JSON payload: the body is not valid Unicode text (lone UTF-16 surrogate)")
    return payload


def _check_depth(body: bytes) -> None:
    """Refuse a body nesting deeper than MAX_JSON_DEPTH, measured without recursion and in
    linear time: strings and everything but brackets are dropped, then the depth is followed
    in chunks; only a chunk that could cross the limit is walked bracket by bracket."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return  # no deeper than its openers, strings included: most requests end here
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    depth = 0
    for start in range(0, len(brackets), _CHUNK):
        chunk = brackets[start:start + _CHUNK]
        opens = chunk.count(b"[") + chunk.count(b"{")
        if depth + opens <= MAX_JSON_DEPTH:
            depth += opens - (len(chunk) - opens)
            continue
        for byte in chunk:
            depth += 1 if byte in _OPENERS else -1
            if depth > MAX_JSON_DEPTH:
                raise InvalidRequestError(
                    f"JSON nesting exceeds the limit of {MAX_JSON_DEPTH} levels",
                    metadata={"limitDepth": str(MAX_JSON_DEPTH)})


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


# Built once: json.loads with an option builds a decoder on every call.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _has_surrogate(payload: object) -> bool:
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
