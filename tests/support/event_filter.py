"""A matcher for the subset of Lambda event filtering (EventBridge pattern) syntax the stack
uses, so tests can check a filter pattern against real records instead of trusting it.

Supported, as AWS evaluates them:

- an object in the pattern: the record has that field, an object, matching recursively
  (fields the pattern does not name are ignored);
- a list at a leaf: the record's value matches any entry. An entry is an exact value
  (string, number, boolean, null; `1` does not match `"1"` nor `true`) or `{"prefix": s}`
  (a string starting with `s`). A list value in the record matches if any element does.

Anything else (`anything-but`, `numeric`, `exists`, `suffix`, `$or`, ...) raises
`UnsupportedPattern` rather than answering a guess.

    matches(infra.push_filter.PUSH_FILTER_PATTERN, stream_record)  # -> bool
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["UnsupportedPattern", "matches"]

_MISSING = object()


class UnsupportedPattern(ValueError):
    """The pattern uses syntax this matcher does not implement."""


def matches(pattern: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Whether Lambda's filter `pattern` lets `record` (the event as Lambda receives it)
    through."""
    if not isinstance(pattern, Mapping) or not pattern:
        raise UnsupportedPattern(f"a pattern is a non-empty object, got {pattern!r}")
    for field, expected in pattern.items():
        if field.startswith("$"):
            raise UnsupportedPattern(f"{field} is not supported")
        value = record.get(field, _MISSING) if isinstance(record, Mapping) else _MISSING
        if isinstance(expected, Mapping):
            if not isinstance(value, Mapping) or not matches(expected, value):
                return False
        elif isinstance(expected, list):
            if not expected:
                raise UnsupportedPattern(f"{field}: an empty list matches nothing in AWS")
            if value is _MISSING or isinstance(value, Mapping):
                # A missing field matches no value (`null` needs the field present).
                for rule in expected:
                    _check_rule(rule)
                return False
            values = value if isinstance(value, list) else [value]
            if not any(_leaf(rule, item) for rule in expected for item in values):
                return False
        else:
            raise UnsupportedPattern(f"{field}: a leaf must be a list, got {expected!r}")
    return True


def _leaf(rule: Any, value: Any) -> bool:
    _check_rule(rule)
    if isinstance(rule, Mapping):
        prefix = rule["prefix"]
        return isinstance(value, str) and value.startswith(prefix)
    return _same(rule, value)


def _check_rule(rule: Any) -> None:
    if isinstance(rule, Mapping):
        if set(rule) != {"prefix"} or not isinstance(rule["prefix"], str):
            raise UnsupportedPattern(f"only {{'prefix': str}} is supported, got {rule!r}")
    elif not (rule is None or isinstance(rule, str | int | float | bool)):
        raise UnsupportedPattern(f"unsupported rule {rule!r}")


def _same(rule: Any, value: Any) -> bool:
    """Exact match with JSON's types: booleans, numbers, strings and null stay apart."""
    if rule is None or value is None:
        return rule is None and value is None
    if isinstance(rule, bool) or isinstance(value, bool):
        return isinstance(rule, bool) and isinstance(value, bool) and rule == value
    if isinstance(rule, int | float) and isinstance(value, int | float):
        return float(rule) == float(value)
    return type(rule) is type(value) and bool(rule == value)
