"""Conditional GET (RFC 9110 section 13) for a resource with a fixed ETag and date: the
agent card. Answers whether the client's copy is current, so the server can send 304."""

from __future__ import annotations

import datetime
import email.utils
import re
import time

__all__ = ["not_modified"]

# One entity-tag of a list: optional weakness marker, then a quoted opaque tag (which may
# itself hold commas, so the list is not split on commas).
_ENTITY_TAG = re.compile(r'[\s,]*(?:W/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)')


def not_modified(if_none_match: str | None, if_modified_since: str | None,
                 etag: str, last_modified: int) -> bool:
    """True when a GET with these header values may be answered 304 Not Modified.

    If-None-Match decides alone when present (RFC 9110 13.1.2, 13.2.2), by weak comparison,
    with `*` matching any current representation. Otherwise If-Modified-Since is honoured
    when it is one valid HTTP date, not in the future (13.1.3), at or after `last_modified`
    (seconds since the epoch)."""
    if if_none_match is not None:
        return _matches(if_none_match, etag)
    if if_modified_since is None:
        return False
    try:
        date = email.utils.parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False  # not a valid HTTP date: ignored
    # HTTP dates are GMT; the obsolete formats carry no zone and parse as naive.
    since = (date if date.tzinfo else date.replace(tzinfo=datetime.UTC)).timestamp()
    return last_modified <= since <= time.time()


def _matches(header: str, etag: str) -> bool:
    if header.strip() == "*":
        return True
    opaque = _opaque(etag)
    position = 0
    while position < len(header):
        found = _ENTITY_TAG.match(header, position)
        if found is None:
            return False  # not a list of entity-tags: no match, send the card
        if found.group(1) == opaque:
            return True
        position = found.end()
    return False


def _opaque(etag: str) -> str:
    return etag[2:] if etag.startswith("W/") else etag
