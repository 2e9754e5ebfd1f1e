"""The JSON-RPC body parser: nesting measured without recursion, not-Unicode refused."""

from __future__ import annotations

import time

import pytest

from a2akit.errors import InvalidRequestError, JSONParseError
from a2akit.limits import MAX_JSON_DEPTH
from http_service.json_body import parse_json_body


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_nesting_up_to_the_limit_parses() -> None:
    assert parse_json_body(_nested(MAX_JSON_DEPTH)) is not None
    assert parse_json_body(b'{"a":' * MAX_JSON_DEPTH + b"1" + b"}" * MAX_JSON_DEPTH)


@pytest.mark.parametrize("body", [
    _nested(MAX_JSON_DEPTH + 1), _nested(1_000_000), b"[" * 1_000_000,
    b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
])
def test_deeper_is_refused_naming_the_limit(body: bytes) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_json_body(body)
    assert caught.value.metadata == {"limitDepth": str(MAX_JSON_DEPTH)}


@pytest.mark.parametrize("text", [
    '"[[[["', '"\\"[[[["', '"\\\\"', '"a\\\\\\"[["', '"]]]]\\"[[[["',
])
def test_brackets_in_strings_do_not_nest(text: str) -> None:
    body = ("[" + text + "]").encode()
    deep = b"[" * (MAX_JSON_DEPTH - 1) + body + b"]" * (MAX_JSON_DEPTH - 1)
    parse_json_body(deep)
    with pytest.raises(InvalidRequestError):
        parse_json_body(b"[" + deep + b"]")


@pytest.mark.parametrize("body", [
    b'"\\ud800"', b'{"\\udfff": 1}', b'["ok", {"a": ["\\udbff"]}]', b'"\\ud83d\\ud83d"',
    b"\xff", b'"\xed\xa0\x80"', b"NaN", b"[Infinity]", b"-Infinity", b"", b"{",
])
def test_not_json_text_is_a_parse_error(body: bytes) -> None:
    with pytest.raises(JSONParseError):
        parse_json_body(body)


def test_surrogate_pairs_and_escaped_backslashes_are_text() -> None:
    assert parse_json_body(b'"\\ud83d\\ude00"') == "\U0001f600"
    assert parse_json_body(b'"\\\\ud800"') == "\\ud800"


@pytest.mark.parametrize(("body", "error"), [
    (b'"' * 1_000_000, JSONParseError),
    (b'["' + b'\\"' * 500_000, JSONParseError),
    (b'["' + b"\\" * 999_999, JSONParseError),
    (b"[" + b"[]," * 300_000 + b"[]]", None),
])
def test_hostile_megabytes_are_linear(body: bytes, error: type[Exception] | None) -> None:
    start = time.perf_counter()
    if error is None:
        parse_json_body(body)
    else:
        with pytest.raises(error):
            parse_json_body(body)
    assert time.perf_counter() - start < 5  # quadratic scanning would take minutes
