"""Property-based fuzzing of the JSON-RPC binding (hypothesis), through the ASGI app and the
Mangum handler: random JSON, bytes that are not UTF-8, lone surrogates, duplicate keys,
deep nesting, and structurally valid requests with a wrong type, a huge value or an
out-of-range number in one field.

Every answer must be a well-formed JSON-RPC response of the right kind at HTTP 200: never a
500, never a hang, no traceback in a reply or an ERROR log record, and the store holds only
consistent tasks afterwards (each snapshot is exactly its events folded in order).

Example counts come from the hypothesis profile (tests/conftest.py): `ci` by default, small
and deterministic; `pytest --hypothesis-profile=long tests/jsonrpc/test_fuzz.py` digs deeper.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import dataclasses
import json
import logging
import signal
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from a2akit.auth import ANONYMOUS
from a2akit.errors import CATALOGUE
from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.limits import ERROR_MESSAGE_CHARS, MAX_JSON_DEPTH
from a2akit.operations import OPERATIONS
from a2akit.runtime import build_operations
from a2akit.states import apply_event
from a2akit.store.base import Scope, TaskQuery
from a2akit.store.memory import MemoryStore
from tests.jsonrpc.client import V1, Client, serve
from tests.jsonrpc.fuzz_strategies import (
    BASES,
    envelope,
    hostile_value_requests,
    json_scalars,
    json_values,
    wrong_type_requests,
)
from tests.support.harness import ANON

CODES = {error.jsonrpc_code for error in CATALOGUE}
_HANG_SECONDS = 20.0


# --- the system under test: one core per client kind -----------------------------------------


@dataclasses.dataclass
class Target:
    client: Client
    store: MemoryStore
    tenants: set[str]  # the scopes to check: every tenant a request named
    checked: dict[tuple[str, str], int]  # (tenant, task id) -> version already checked


class Targets(logging.Handler):
    """The targets of a fuzz test, and the ERROR records logged while they answer."""

    def __init__(self, targets: list[Target]) -> None:
        super().__init__(logging.ERROR)
        self.targets = targets
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)



class Fuzz(Targets):
    """The 1.0 answers checked on both targets."""

    def answers(self, body: bytes, expect: set[int] | None = None, request_id: Any = None,
                ok: bool = True, field: str | None = None) -> list[Any]:
        """Send `body` to every target, check each answer, and return what each was: an error
        code, "result" or "stream".

        expect: the error codes allowed (None: any catalogue code); ok: whether a result is
        allowed; field: a BadRequest violation the error must name."""
        note(f"body[:300]={body[:300]!r}")
        tenant = _tenant(body)
        kinds = []
        for target in self.targets:
            if tenant is not None:
                target.tenants.add(tenant)
            self.records.clear()
            with _no_hang():
                reply = target.client.post(body, V1)
            kinds.append(_check_reply(reply.status, reply.headers, reply.body, expect,
                                      request_id, ok, field))
            errors = [r.getMessage() for r in self.records]
            assert not errors, errors
            _check_store(target)
        return kinds


F = TypeVar("F", bound=logging.Handler)


@contextlib.contextmanager
def fuzzing(make: Callable[[list[Target]], F]) -> Iterator[F]:
    """`make` over an echo agent through the ASGI app and the Mangum handler, each on a
    store of its own, listening to every log record (what a failure logged is asserted)."""
    with contextlib.ExitStack() as stack:
        targets = []
        for kind in ("asgi", "apigw_http_v2"):
            store = MemoryStore()
            clients = serve(kind, build_operations(ANON, store=store, agent=EchoAgent()))
            stack.callback(clients.close)
            targets.append(Target(next(clients), store, {""}, {}))
        found = make(targets)
        logging.getLogger().addHandler(found)
        stack.callback(logging.getLogger().removeHandler, found)
        yield found


@pytest.fixture(scope="module")
def fuzz() -> Iterator[Fuzz]:
    with fuzzing(Fuzz) as found:
        yield found


def _tenant(body: bytes) -> str | None:
    try:
        params = json.loads(body).get("params")
        tenant = params.get("tenant") if isinstance(params, dict) else None
    except (ValueError, AttributeError, RecursionError):
        return None
    return tenant if isinstance(tenant, str) else None


# --- the oracle -----------------------------------------------------------------------------


@contextlib.contextmanager
def _no_hang(seconds: float = _HANG_SECONDS) -> Iterator[None]:
    """Fail, rather than wait forever, when one request does not finish in time."""
    def expired(signum: int, frame: Any) -> None:
        raise AssertionError(f"the request did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _check_reply(status: int, headers: dict[str, str], body: bytes, expect: set[int] | None,
                 request_id: Any, ok: bool, field: str | None) -> Any:
    assert status == 200, (status, body[:500])
    assert b"Traceback" not in body
    content_type = headers["content-type"]
    if content_type.startswith("text/event-stream"):
        assert ok, body[:500]
        frames = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]
        assert frames, body[:500]
        for frame in frames:
            _check_response(json.loads(frame), None, request_id, True, None)
        return "stream"
    assert content_type.startswith("application/json"), content_type
    return _check_response(json.loads(body), expect, request_id, ok, field)


def _check_response(answer: Any, expect: set[int] | None, request_id: Any, ok: bool,
                    field: str | None) -> Any:
    assert isinstance(answer, dict) and answer["jsonrpc"] == "2.0", answer
    assert ("result" in answer) != ("error" in answer), answer
    assert answer["id"] in (request_id, None), answer
    if "result" in answer:
        assert ok, f"expected an error {expect}, got a result: {str(answer)[:500]}"
        assert answer["id"] == request_id
        return "result"
    error = answer["error"]
    assert isinstance(error["message"], str) and len(error["message"]) <= ERROR_MESSAGE_CHARS
    assert error["code"] in (expect or CODES), error
    info = error["data"][0]
    assert info["@type"].endswith("google.rpc.ErrorInfo") and info["domain"], error
    if field is not None:
        violations = [v["field"] for d in error["data"][1:] for v in d.get("fieldViolations", ())]
        assert field in violations, (field, error)
    return error["code"]


def _check_store(target: Target) -> None:
    """Every stored task is whole: REQUIRED parts present, and its events, folded in order,
    give exactly the stored snapshot (no write was applied by halves)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # reads need a loop of their own
        pool.submit(asyncio.run, _check_tasks(target)).result()


async def _check_tasks(target: Target) -> None:
    for tenant in target.tenants:
        scope = Scope(tenant=tenant, owner=ANONYMOUS)
        page = await target.store.list(scope, TaskQuery(page_size=1_000_000))
        for listed in page.tasks:
            stored = await target.store.get(scope, listed.id)
            assert stored is not None
            key = (tenant, listed.id)
            if target.checked.get(key) == stored.version:
                continue
            task = stored.task
            assert task.id and task.status.state != pb.TASK_STATE_UNSPECIFIED, task
            status = [task.status.message] if task.status.HasField("message") else []
            for message in [*task.history, *status]:
                assert message.message_id and message.role and message.parts, message
                assert all(p.WhichOneof("content") for p in message.parts), message
            events = await target.store.events_after(scope, task.id, 0)
            assert len(events) == stored.last_seq
            folded = pb.Task()
            for event in events:
                apply_event(folded, event.event)
            assert folded == task
            target.checked[key] = stored.version


# --- the properties ----------------------------------------------------------------------------


@given(value=json_values)
def test_any_json_value_is_answered(fuzz: Fuzz, value: Any) -> None:
    body = json.dumps(value).encode()
    if isinstance(value, dict):
        fuzz.answers(body, ok=_is_request(value), request_id=value.get("id"))
    else:
        fuzz.answers(body, expect={-32600}, ok=False)


def _is_request(value: dict[str, Any]) -> bool:
    return value.get("jsonrpc") == "2.0" and value.get("method") in OPERATIONS


@given(data=st.binary(max_size=200))
def test_any_bytes_are_answered(fuzz: Fuzz, data: bytes) -> None:
    try:
        json.loads(data.decode())
    except (UnicodeDecodeError, ValueError):
        fuzz.answers(data, expect={-32700}, ok=False)
    else:
        fuzz.answers(data, ok=False)


@given(request=wrong_type_requests())
def test_a_wrong_type_in_any_field_is_invalid_params(fuzz: Fuzz,
                                                     request: tuple[bytes, Any, str]) -> None:
    body, request_id, field = request
    fuzz.answers(body, expect={-32602}, request_id=request_id, ok=False, field=field)


@given(request=hostile_value_requests())
def test_hostile_values_are_answered(fuzz: Fuzz, request: tuple[bytes, Any]) -> None:
    body, request_id = request
    fuzz.answers(body, request_id=request_id)


@given(method=st.sampled_from(sorted(BASES)), request_id=json_values,
       jsonrpc=st.sampled_from(["2.0", "1.0", 2, None]),
       drop=st.sampled_from([None, "id", "jsonrpc", "method", "params"]))
def test_envelope_variants(fuzz: Fuzz, method: str, request_id: Any, jsonrpc: Any,
                           drop: str | None) -> None:
    payload = {"jsonrpc": jsonrpc, "id": request_id, "method": method,
               "params": copy.deepcopy(BASES[method])}
    if drop:
        del payload[drop]
    good_id = "id" in payload and (request_id is None or (
        isinstance(request_id, str | int) and not isinstance(request_id, bool)))
    body = json.dumps(payload).encode()
    if not good_id or jsonrpc != "2.0" or drop in ("jsonrpc", "method"):
        fuzz.answers(body, expect={-32600}, ok=False, request_id=request_id if good_id else None)
    else:
        fuzz.answers(body, request_id=request_id)


@given(method=st.sampled_from(sorted(BASES)), position=st.integers(0, 10_000),
       junk=st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80",
                             b"\x80", b"\xe2\x82"]))
def test_invalid_utf8_is_a_parse_error(fuzz: Fuzz, method: str, position: int,
                                       junk: bytes) -> None:
    body = envelope(method, BASES[method])
    at = position % (len(body) + 1)
    fuzz.answers(body[:at] + junk + body[at:], expect={-32700}, ok=False)


@given(method=st.sampled_from(sorted(BASES)), surrogate=st.integers(0xD800, 0xDFFF),
       where=st.sampled_from(["id", "method", "params"]))
def test_lone_surrogates_are_parse_errors(fuzz: Fuzz, method: str, surrogate: int,
                                          where: str) -> None:
    body = envelope(method, {**BASES[method], "note": "@"}, "#").decode()
    target = {"id": '"#"', "method": f'"{method}"', "params": '"@"'}[where]
    body = body.replace(target, target[:-1] + f"\\u{surrogate:04x}" + '"', 1)
    fuzz.answers(body.encode(), expect={-32700}, ok=False)


@given(method=st.sampled_from(sorted(BASES)), key=st.sampled_from(["id", "method", "jsonrpc"]),
       first=json_scalars)
def test_duplicate_keys_answer_as_the_last_one(fuzz: Fuzz, method: str, key: str,
                                               first: Any) -> None:
    # The JSON parser keeps the last of duplicate names (as JSON.parse does): the answer is
    # the one the request without the first duplicate gets.
    body = envelope(method, BASES[method], 3).decode()
    duplicated = "{" + json.dumps(key) + ":" + json.dumps(first) + "," + body[1:]
    assert fuzz.answers(duplicated.encode(), request_id=3) == fuzz.answers(
        body.encode(), request_id=3)


@given(depth=st.integers(MAX_JSON_DEPTH + 1, 50_000), opener=st.sampled_from(["[", '{"a":']))
def test_deep_nesting_is_refused(fuzz: Fuzz, depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    deep = opener * depth + "1" + closer * depth
    body = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","z":' + deep + "}}"
    fuzz.answers(body.encode(), expect={-32600}, ok=False)
