"""The webhook sender against a real receiver on loopback (tests/support/webhooks.py).

Waits between attempts go through an injected `sleep` that records them and returns at
once, and `random` is fixed, so backoff is asserted exactly and no test waits on luck.
Names resolve through an injected resolver only (no DNS here)."""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from a2akit.generated import a2a_pb2 as pb
from a2akit.push.guard import Policy, check_config
from a2akit.push.sender import Delivered, Dropped, Failed, RetryPolicy, Sender
from a2akit.settings import Settings
from tests.support.webhooks import Authority, Receiver, Reply

pytestmark = pytest.mark.anyio

LOOPBACK = (ipaddress.ip_network("127.0.0.1/32"),)
POLICY = Policy(allow_http=True, allowed_networks=LOOPBACK)
# A generous request timeout: a loaded CI machine must not turn a 4xx into a timed-out
# attempt (the timeout tests set their own).
FAST = RetryPolicy(attempts=3, backoff_seconds=0.01, backoff_cap_seconds=0.05,
                   timeout_seconds=5.0)
BODY = b'{"statusUpdate":{"taskId":"t-1","status":{"state":"TASK_STATE_COMPLETED"}}}'


class Sleeps(list[float]):
    """An injected sleep: records each wait and returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)
        await asyncio.sleep(0)


class Resolver:
    """Answers names from a table (a list of answers is used one per call), counting calls."""

    def __init__(self, **table: list[str] | list[list[str]]) -> None:
        self.table = {name.replace("_", "."): answer for name, answer in table.items()}
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        answer: Any = self.table.get(host)
        if not answer:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if isinstance(answer[0], list):
            return list(answer.pop(0) if len(answer) > 1 else answer[0])
        return list(answer)


@pytest.fixture
async def make() -> AsyncIterator[Callable[..., Sender]]:
    """Build Senders (FAST retries, recorded sleeps, random() = 1) closed after the test."""
    made: list[Sender] = []

    def build(retry: RetryPolicy = FAST, policy: Policy = POLICY, **kwargs: Any) -> Sender:
        kwargs.setdefault("sleep", Sleeps())
        kwargs.setdefault("random", lambda: 1.0)
        sender = Sender(policy, retry, **kwargs)
        made.append(sender)
        return sender

    yield build
    for sender in made:
        await sender.aclose()


def config(url: str, **fields: Any) -> pb.TaskPushNotificationConfig:
    return pb.TaskPushNotificationConfig(task_id="t-1", id="c-1", url=url, **fields)


def slept(sender: Sender) -> list[float]:
    return list(sender._sleep)  # type: ignore[call-overload]


# --- what is sent ---------------------------------------------------------------------------------


@pytest.mark.spec(
    "4.3.3", "MUST", "A webhook gets the config's credentials in the Authorization header")
async def test_posts_the_body_with_content_type_and_credentials(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    hook = config(receiver.url("/hook?tenant=a"), token="tok-1",
                  authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="cred-1"))
    outcome = await make().deliver(hook, BODY)
    assert outcome == Delivered(attempts=1, status=200)
    [request] = receiver.wait_for(1)
    assert (request.method, request.target, request.body) == ("POST", "/hook?tenant=a", BODY)
    assert request.headers["content-type"] == "application/a2a+json"
    assert request.headers["authorization"] == "Bearer cred-1"
    assert request.headers["x-a2a-notification-token"] == "tok-1"
    assert request.headers["host"] == f"127.0.0.1:{receiver.port}"


async def test_no_credential_headers_without_credentials(receiver: Receiver,
                                                         make: Callable[..., Sender]) -> None:
    scheme_only = config(receiver.url(), authentication=pb.AuthenticationInfo(scheme="Bearer"))
    assert isinstance(await make().deliver(scheme_only, BODY), Delivered)
    [request] = receiver.wait_for(1)
    assert "authorization" not in request.headers
    assert "x-a2a-notification-token" not in request.headers


async def test_any_2xx_is_delivered(receiver: Receiver, make: Callable[..., Sender]) -> None:
    receiver.plan(204)
    assert await make().deliver(config(receiver.url()), BODY) == Delivered(1, 204)


async def test_refused_header_values_send_nothing(receiver: Receiver,
                                                  make: Callable[..., Sender]) -> None:
    outcome = await make().deliver(config(receiver.url(), token="a\r\nX-Evil: 1"), BODY)
    assert isinstance(outcome, Failed) and outcome.attempts == 0
    assert "token" in outcome.error and "Evil" not in outcome.error
    assert receiver.requests == []


# --- retries ------------------------------------------------------------------------------------


async def test_503_then_200_is_delivered_on_the_second_attempt(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    receiver.plan(503, 200)
    sender = make(random=lambda: 0.5)
    assert await sender.deliver(config(receiver.url()), BODY) == Delivered(2, 200)
    assert [r.body for r in receiver.wait_for(2)] == [BODY, BODY]
    assert slept(sender) == [0.005]  # random() * backoff


async def test_backoff_doubles_with_full_jitter_up_to_the_cap(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    receiver.plan(500, 502, 504, 500, 200)
    sender = make(RetryPolicy(attempts=5, backoff_seconds=0.01, backoff_cap_seconds=0.03,
                              timeout_seconds=5.0))
    assert await sender.deliver(config(receiver.url()), BODY) == Delivered(5, 200)
    assert slept(sender) == [0.01, 0.02, 0.03, 0.03]


@pytest.mark.parametrize(("retry_after", "low", "high"), [
    ("1", 1.0, 1.0),
    ("86400", 30.0, 30.0),  # bounded by the cap
    (None, 0.01, 0.01),  # plain backoff
    ("soon", 0.01, 0.01),  # unreadable: plain backoff
])
async def test_429_honours_retry_after(receiver: Receiver, make: Callable[..., Sender],
                                       retry_after: str | None, low: float, high: float) -> None:
    receiver.plan(Reply(429, retry_after=retry_after), 200)
    sender = make(RetryPolicy(attempts=2, backoff_seconds=0.01, backoff_cap_seconds=30.0,
                              timeout_seconds=5.0))
    assert await sender.deliver(config(receiver.url()), BODY) == Delivered(2, 200)
    [wait] = slept(sender)
    assert low <= wait <= high


async def test_retry_after_as_an_http_date(receiver: Receiver,
                                           make: Callable[..., Sender]) -> None:
    receiver.plan(Reply(503, retry_after=email.utils.formatdate(time.time() + 20, usegmt=True)))
    sender = make(RetryPolicy(attempts=2, backoff_seconds=0.01, backoff_cap_seconds=30.0,
                              timeout_seconds=5.0))
    assert await sender.deliver(config(receiver.url()), BODY) == Delivered(2, 200)
    [wait] = slept(sender)
    assert 15.0 < wait <= 20.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 413])
async def test_other_4xx_are_not_retried(receiver: Receiver, make: Callable[..., Sender],
                                         status: int) -> None:
    receiver.plan(status)
    hook = config(receiver.url("/hook?secret=s3cr3t"), token="tok-secret")
    outcome = await make().deliver(hook, BODY)
    assert isinstance(outcome, Failed)
    assert (outcome.attempts, outcome.status) == (1, status)
    assert "s3cr3t" not in outcome.error and "tok-secret" not in outcome.error
    assert len(receiver.requests) == 1


async def test_a_receiver_that_stays_down_fails_after_all_attempts(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    receiver.down()
    sender = make()
    outcome = await sender.deliver(config(receiver.url()), BODY)
    assert isinstance(outcome, Failed)
    assert (outcome.attempts, outcome.status) == (3, None)
    assert "connection" in outcome.error
    assert slept(sender) == [0.01, 0.02]


async def test_a_receiver_back_up_gets_the_retry(receiver: Receiver,
                                                 make: Callable[..., Sender]) -> None:
    receiver.down()

    async def restart(seconds: float) -> None:
        receiver.start()  # listens on the same port again

    sender = make(sleep=restart)
    assert await sender.deliver(config(receiver.url()), BODY) == Delivered(2, 200)


async def test_a_slow_receiver_times_out_and_is_retried(receiver: Receiver,
                                                        make: Callable[..., Sender]) -> None:
    receiver.default = Reply(200, delay=10.0)  # cut short when the receiver stops
    sender = make(RetryPolicy(attempts=2, backoff_seconds=0.01, timeout_seconds=0.5))
    started = time.monotonic()
    outcome = await sender.deliver(config(receiver.url()), BODY)
    assert isinstance(outcome, Failed) and outcome.attempts == 2
    assert "timed out" in outcome.error
    assert time.monotonic() - started < 5.0  # two bounded attempts, not two 10 s answers
    assert len(receiver.wait_for(2)) == 2


@pytest.mark.parametrize("location", ["other", "http://169.254.169.254/latest/meta-data/"])
async def test_redirects_are_not_followed(receiver: Receiver, make: Callable[..., Sender],
                                          location: str) -> None:
    with Receiver() as other:  # reachable and allowed: still not followed
        receiver.plan(Reply(302, location=other.url() if location == "other" else location))
        outcome = await make().deliver(config(receiver.url()), BODY)
        assert isinstance(outcome, Failed)
        assert (outcome.attempts, outcome.status) == (1, 302)
        assert len(receiver.requests) == 1
        assert other.requests == []


async def test_unwanted_before_a_retry_is_dropped(receiver: Receiver,
                                                  make: Callable[..., Sender]) -> None:
    receiver.plan(503)
    asked: list[bool] = []

    async def still_wanted() -> bool:
        asked.append(False)
        return False

    outcome = await make().deliver(config(receiver.url()), BODY, still_wanted=still_wanted)
    assert outcome == Dropped(attempts=1)
    assert asked == [False]
    assert len(receiver.requests) == 1


async def test_still_wanted_is_asked_before_each_retry_only(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    receiver.plan(503, 503)
    asked: list[int] = []

    async def still_wanted() -> bool:
        asked.append(len(receiver.requests))
        return True

    outcome = await make().deliver(config(receiver.url()), BODY, still_wanted=still_wanted)
    assert outcome == Delivered(3, 200)
    assert asked == [1, 2]


async def test_a_deadline_shorter_than_the_backoff_fails_without_waiting(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    receiver.plan(503)
    sender = make(RetryPolicy(attempts=5, backoff_seconds=10.0, backoff_cap_seconds=10.0,
                              timeout_seconds=5.0))
    deadline = asyncio.get_running_loop().time() + 2.0
    outcome = await sender.deliver(config(receiver.url()), BODY, deadline=deadline)
    assert isinstance(outcome, Failed)
    assert (outcome.attempts, outcome.status) == (1, 503)
    assert "out of time" in outcome.error
    assert slept(sender) == []
    assert len(receiver.requests) == 1


async def test_a_deadline_bounds_the_request_too(receiver: Receiver,
                                                 make: Callable[..., Sender]) -> None:
    receiver.default = Reply(200, delay=10.0)
    sender = make(RetryPolicy(attempts=5, backoff_seconds=0.01, timeout_seconds=10.0))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 0.5
    outcome = await sender.deliver(config(receiver.url()), BODY, deadline=deadline)
    assert isinstance(outcome, Failed) and "time" in outcome.error
    assert loop.time() < deadline + 2.0


async def test_a_passed_deadline_sends_nothing(receiver: Receiver,
                                               make: Callable[..., Sender]) -> None:
    deadline = asyncio.get_running_loop().time() - 1
    outcome = await make().deliver(config(receiver.url()), BODY, deadline=deadline)
    assert isinstance(outcome, Failed) and outcome.attempts == 0
    assert receiver.requests == []


# --- the guard at connect time --------------------------------------------------------------------


async def test_blocked_targets_are_not_sent_to(receiver: Receiver,
                                               make: Callable[..., Sender]) -> None:
    outcome = await make(policy=Policy(allow_http=True)).deliver(config(receiver.url()), BODY)
    assert isinstance(outcome, Failed) and outcome.attempts == 1 and "blocked" in outcome.error
    assert receiver.requests == []


async def test_dns_that_changes_after_config_time_is_checked_again(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    # Allowed when the config was made; at send time the name also has a private address.
    resolve = Resolver(hook_test=[["127.0.0.1"], ["127.0.0.1", "10.0.0.1"]])
    hook = config(f"http://hook.test:{receiver.port}/hook")
    await check_config(hook, POLICY, resolve)
    outcome = await make(resolve=resolve).deliver(hook, BODY)
    assert isinstance(outcome, Failed) and outcome.attempts == 1 and "blocked" in outcome.error
    assert receiver.requests == []


async def test_one_lookup_per_attempt_and_the_connection_goes_to_its_address(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    # hook.test exists only in the injected resolver: the system resolver would fail, so
    # delivery proves the connection used the checked address.
    receiver.plan(503, 503)
    resolve = Resolver(hook_test=["127.0.0.1"])
    outcome = await make(resolve=resolve).deliver(
        config(f"http://hook.test:{receiver.port}/hook"), BODY)
    assert outcome == Delivered(3, 200)
    assert resolve.calls == [("hook.test", receiver.port)] * 3
    assert {r.headers["host"] for r in receiver.requests} == {f"hook.test:{receiver.port}"}


async def test_a_name_that_does_not_resolve_at_send_time_is_retried(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    resolve = Resolver(hook_test=[[], ["127.0.0.1"]])
    sender = make(resolve=resolve)
    assert await sender.deliver(config(f"http://hook.test:{receiver.port}/"), BODY) == \
        Delivered(2, 200)
    assert len(resolve.calls) == 2


# --- TLS ----------------------------------------------------------------------------------------


async def test_https_is_verified_for_the_host_name(tls_receiver: Receiver,
                                                   authority: Authority,
                                                   make: Callable[..., Sender]) -> None:
    resolve = Resolver(hook_test=["127.0.0.1"])
    sender = make(policy=Policy(allowed_networks=LOOPBACK), resolve=resolve,
                  ssl_context=authority.client_context())
    outcome = await sender.deliver(config(f"https://hook.test:{tls_receiver.port}/h"), BODY)
    assert outcome == Delivered(1, 200)
    [request] = tls_receiver.wait_for(1)
    assert request.headers["host"] == f"hook.test:{tls_receiver.port}"
    assert request.body == BODY


async def test_a_certificate_for_another_name_is_refused(tls_receiver: Receiver,
                                                         authority: Authority,
                                                         make: Callable[..., Sender]) -> None:
    # The certificate is valid for hook.test and 127.0.0.1, the address connected to:
    # only a check against the URL's name refuses it.
    resolve = Resolver(other_test=["127.0.0.1"])
    sender = make(policy=Policy(allowed_networks=LOOPBACK), resolve=resolve,
                  ssl_context=authority.client_context())
    outcome = await sender.deliver(config(f"https://other.test:{tls_receiver.port}/h"), BODY)
    assert isinstance(outcome, Failed) and outcome.attempts == 1
    assert "certificate" in outcome.error
    assert tls_receiver.requests == []


async def test_default_verification_does_not_trust_the_test_ca(
        tls_receiver: Receiver, make: Callable[..., Sender]) -> None:
    sender = make(policy=Policy(allowed_networks=LOOPBACK),
                  resolve=Resolver(hook_test=["127.0.0.1"]))
    outcome = await sender.deliver(config(f"https://hook.test:{tls_receiver.port}/"), BODY)
    assert isinstance(outcome, Failed) and "certificate" in outcome.error
    assert tls_receiver.requests == []


async def test_names_sharing_an_address_never_share_a_tls_connection(
        tls_receiver: Receiver, authority: Authority, make: Callable[..., Sender]) -> None:
    resolve = Resolver(hook_test=["127.0.0.1"], other_test=["127.0.0.1"])
    sender = make(policy=Policy(allowed_networks=LOOPBACK), resolve=resolve,
                  ssl_context=authority.client_context())
    first = config(f"https://hook.test:{tls_receiver.port}/")
    assert await sender.deliver(first, BODY) == Delivered(1, 200)
    assert await sender.deliver(first, BODY) == Delivered(1, 200)
    one, two = tls_receiver.wait_for(2)
    assert one.peer_port == two.peer_port  # the connection is pooled and kept alive...
    outcome = await sender.deliver(config(f"https://other.test:{tls_receiver.port}/"), BODY)
    assert isinstance(outcome, Failed) and "certificate" in outcome.error  # ...but not shared
    assert len(tls_receiver.requests) == 2


async def test_names_sharing_an_address_use_their_own_connections(
        receiver: Receiver, make: Callable[..., Sender]) -> None:
    sender = make(resolve=Resolver(a_test=["127.0.0.1"], b_test=["127.0.0.1"]))
    for name in ("a.test", "b.test", "a.test"):
        assert isinstance(await sender.deliver(
            config(f"http://{name}:{receiver.port}/"), BODY), Delivered)
    a1, b, a2 = receiver.wait_for(3)
    assert a1.peer_port == a2.peer_port != b.peer_port


# --- settings and other event loops ------------------------------------------------------------


def test_retry_policy_from_settings() -> None:
    settings = Settings(push_attempts=7, push_backoff_seconds=0.5, push_backoff_cap_seconds=9.0,
                        push_timeout_seconds=3.0)
    assert RetryPolicy.from_settings(settings) == RetryPolicy(7, 0.5, 9.0, 3.0)


def test_the_receiver_serves_a_loop_in_another_thread(receiver: Receiver) -> None:
    """As a Lambda handler would: asyncio.run in a thread of its own."""
    outcomes: list[object] = []

    async def deliver() -> None:
        sender = Sender(POLICY, FAST)
        try:
            outcomes.append(await sender.deliver(config(receiver.url()), BODY))
        finally:
            await sender.aclose()

    thread = threading.Thread(target=asyncio.run, args=(deliver(),))
    thread.start()
    thread.join(timeout=10)
    assert outcomes == [Delivered(1, 200)]
    assert len(receiver.wait_for(1)) == 1
