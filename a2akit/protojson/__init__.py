"""The one serializer between A2A protobuf messages and their ProtoJSON form.

Parsing ignores unknown fields (spec 5.7) but first checks every known field's JSON value
against its proto type, enums strictly: `ignore_unknown_fields` would otherwise turn an
unknown enum name into 0 (bindings.md 11), and json_format accepts some wrong shapes.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from a2akit.errors import InvalidParamsError
from a2akit.protojson.decode import _NOT_REGULAR, _decoder
from a2akit.protojson.encode import _encoder
from a2akit.protojson.shape import _check_message, _is_map, required_fields

__all__ = ["dumps", "from_json", "required_fields", "to_json"]

M = TypeVar("M", bound=Message)


def to_json(message: Message) -> dict[str, Any]:
    """ProtoJSON of a response message. REQUIRED top-level fields are always present, even at
    their default (ListTasksResponse's `nextPageToken: ""`, `totalSize: 0`); nested ones follow
    the ordinary presence rules, so a listed task without artifacts has no `artifacts` member.

    The output is json_format.MessageToDict's, key order included, but built by the encoders
    of a2akit.protojson.encode (json_format walks the descriptors on every call and costs
    several times as much), which also write a NaN or infinity in a Struct as the string
    "NaN" or "Infinity" where json_format raises. Whatever they do not take on (an invalid
    Timestamp, anything unexpected) is handed to json_format, which then returns its value
    or raises its error."""
    descriptor = message.DESCRIPTOR
    try:
        out: dict[str, Any] = _encoder(descriptor)(message)
    except Exception:
        out = json_format.MessageToDict(message)
    required = _REQUIRED_JSON.get(descriptor)
    if required is None:
        required = _REQUIRED_JSON[descriptor] = tuple(
            (field.json_name, field) for field in required_fields(descriptor))
    for name, field in required:
        if name not in out:
            out[name] = _json_default(field)
    return out


def dumps(payload: object) -> bytes:
    """JSON text as the bindings write it: compact, on one line (an SSE `data:` line holds
    one event), UTF-8 as it is."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def from_json(data: object, cls: type[M]) -> M:
    """Parse a ProtoJSON object into `cls`. Raises InvalidParamsError with a BadRequest
    violation for each field whose JSON value is not of its proto type.

    The decoders of a2akit.protojson.decode check and set every field in one walk. Whatever
    they do not take on (any invalid value, so every error; the rare shapes listed with the
    decoders) goes to the reference parse, `_checked_parse`, which then returns its message
    or raises its error."""
    if data is None:
        data = {}
    descriptor = cls.DESCRIPTOR
    if type(data) is dict and descriptor.full_name not in _NOT_REGULAR:
        message = cls()
        try:
            _decoder(descriptor)(data, message, 1)
        except Exception:
            pass  # a fallback: the reference parse says what json_format makes of the input
        else:
            return message
    return _checked_parse(data, cls)


def _checked_parse(data: object, cls: type[M]) -> M:
    """The reference parse, from_json as it was before the decoders: every field's JSON checked
    against its proto type, then json_format. The decoders' results and errors are this
    function's, by definition."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidParamsError("params must be a JSON object",
                                 violations=[("params", "must be a JSON object")])
    violations: list[tuple[str, str]] = []
    _check_message(data, cls.DESCRIPTOR, "", violations)
    if violations:
        field, problem = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise InvalidParamsError(f"Invalid parameters: {field} {problem}{more}",
                                 violations=violations)
    message = cls()
    try:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError, OverflowError) as exc:
        # Not expected after the checks above; still a client error, never an internal one.
        raise InvalidParamsError(f"Invalid parameters: {exc}",
                                 violations=[("params", str(exc))]) from exc
    return message


_REQUIRED_JSON: dict[Any, tuple[tuple[str, Any], ...]] = {}  # descriptor -> (json name, field)


def _json_default(field: Any) -> Any:
    if field.is_repeated:
        return {} if _is_map(field) else []
    if field.type == FieldDescriptor.TYPE_STRING:
        return ""
    if field.type == FieldDescriptor.TYPE_BOOL:
        return False
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return {}
    return 0
