"""Conditional GET of the agent card (RFC 9110 section 13), header values in, 304 or not out."""

from __future__ import annotations

import email.utils
import time

import pytest

from http_service.conditional import not_modified

ETAG = '"abc"'
BUILT = int(time.time()) - 3600
DATE = email.utils.formatdate(BUILT, usegmt=True)


@pytest.mark.parametrize(("header", "matches"), [
    ('"abc"', True), ('W/"abc"', True), ('"x", "abc"', True), ('"x,y" , W/"abc"', True),
    ("*", True), (' * ', True), ('"x"', False), ("abc", False), ('"ab"', False), ("", False),
    ('"x" "abc"', False),  # not a list: no match, the card is sent
])
def test_if_none_match(header: str, matches: bool) -> None:
    assert not_modified(header, None, ETAG, BUILT) is matches


def test_if_none_match_decides_alone() -> None:
    assert not not_modified('"x"', DATE, ETAG, BUILT)
    assert not_modified(ETAG, "Thu, 01 Jan 1970 00:00:00 GMT", ETAG, BUILT)


# Ids named for the case, not the date: the same test has the same id on every run.
@pytest.mark.parametrize(("header", "current"), [
    pytest.param(DATE, True, id="built"),
    pytest.param(email.utils.formatdate(BUILT + 60, usegmt=True), True, id="after"),
    pytest.param(email.utils.formatdate(BUILT - 1, usegmt=True), False, id="before"),
    pytest.param(email.utils.formatdate(time.time() + 3600, usegmt=True), False,
                 id="future-invalid"),
    pytest.param(time.strftime("%A, %d-%b-%y %H:%M:%S GMT", time.gmtime(BUILT)), True,
                 id="rfc850"),
    pytest.param(time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(BUILT)), True, id="asctime"),
    ("not a date", False), ("", False),
])
def test_if_modified_since(header: str, current: bool) -> None:
    assert not_modified(None, header, ETAG, BUILT) is current


def test_no_condition_sends_the_card() -> None:
    assert not not_modified(None, None, ETAG, BUILT)
