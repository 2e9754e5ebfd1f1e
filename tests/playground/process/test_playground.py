"""The playground (docs/playground.md) in a real browser: Chromium from the OS packages driven by
Playwright, against `./dev serve`'s server (scripts.serve_local) with the demo agents. Each
view's screenshot is written to PLAYGROUND_SCREENSHOTS when it is set (docs/playground.md's
pictures come from here)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from a2akit.auth.api_keys import hash_key, new_key
from tests.playground.browser import ARGS, chromium
from tests.support.processes import free_port, python_env, running

pytestmark = pytest.mark.slow

SHOTS = os.environ.get("PLAYGROUND_SCREENSHOTS")
KEY = new_key()
KEYS = json.dumps([{"principal": "alice", "sha256": hash_key(KEY)}])
STREAMING = "a2akit.examples.streaming:agent"
INPUT = "a2akit.examples.input_required:agent"
COUNTING = "a2akit.examples.cancellable:agent"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable), args=ARGS)
        yield launched
        launched.close()


def _serve(tmp: Path, agent: str, **env: str) -> Any:
    port = free_port()
    environment = python_env(A2A_AGENT=agent, **env)
    return port, running([sys.executable, "-m", "scripts.serve_local", "--port", str(port),
                          "--grpc-port", "0"], ports=[port], env=environment,
                         log=tmp / f"serve-{port}.log")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("playground")
    urls: dict[str, str] = {}
    started = []
    try:
        for name, agent, env in (("streaming", STREAMING, {}), ("input", INPUT, {}),
                                 ("counting", COUNTING, {}),
                                 ("keyed", STREAMING, {"A2A_ALLOW_ANONYMOUS": "false",
                                                       "A2A_API_KEYS": KEYS})):
            port, server = _serve(tmp, agent, **env)
            server.__enter__()
            started.append(server)
            urls[name] = f"http://127.0.0.1:{port}/playground"
        yield urls
    finally:
        for server in reversed(started):
            server.__exit__(None, None, None)


@pytest.fixture()
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A new page; every request it makes is recorded in `page.requested`."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    opened = context.new_page()
    opened.requested = []
    opened.on("request", lambda sent: opened.requested.append(sent.url))
    yield opened
    context.close()


def _shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def _send(page: Any, text: str) -> None:
    page.get_by_label("Message").fill(text)
    page.get_by_label("Message").press("Enter")  # Enter sends


def _only_own_origin(page: Any, url: str) -> None:
    origin = urlsplit(url).netloc
    others = [seen for seen in page.requested if urlsplit(seen).netloc != origin]
    assert others == [], f"the page asked outside the kit's origin: {others}"


def test_the_card_renders(page: Any, servers: dict[str, str]) -> None:
    page.goto(servers["streaming"])
    page.get_by_role("heading", name="Streamer").wait_for()
    card = page.locator("#card")
    assert "streaming: yes" in card.inner_text()
    assert "JSONRPC 1.0" in card.inner_text() and "HTTP+JSON" in card.inner_text()
    page.get_by_text("Raw card JSON").click()
    assert '"name": "Streamer"' in page.locator("#card-json").inner_text()
    _shot(page, "card")
    _only_own_origin(page, servers["streaming"])


def test_a_streamed_answer_renders_in_parts_before_the_final_one(
        page: Any, servers: dict[str, str]) -> None:
    page.goto(servers["streaming"])
    page.get_by_role("heading", name="Streamer").wait_for()
    # Every text the conversation log takes, recorded in the page as it changes.
    page.evaluate("""() => {
        window.renderings = [];
        const log = document.querySelector('[role="log"]');
        new MutationObserver(() => {
            const reply = log.querySelector('.turn:last-child .reply');
            if (reply) window.renderings.push(reply.textContent);
        }).observe(log, {subtree: true, childList: true, characterData: true});
    }""")
    words = " ".join(f"word{i}" for i in range(40))
    _send(page, words)
    log = page.get_by_role("log")
    log.locator(".state", has_text="COMPLETED").wait_for(timeout=20_000)
    assert words in log.inner_text()
    renderings = page.evaluate("window.renderings")
    partial = {text for text in renderings if "word" in text and words not in text}
    assert len(partial) >= 2, renderings
    assert log.locator(".task-id").first.inner_text() != "—"
    _shot(page, "conversation")
    _only_own_origin(page, servers["streaming"])


def test_the_input_required_question_and_the_answer_that_completes_it(
        page: Any, servers: dict[str, str]) -> None:
    page.goto(servers["input"])
    page.get_by_role("heading", name="Greeter").wait_for()
    _send(page, "hello")
    log = page.get_by_role("log")
    log.locator(".state", has_text="INPUT_REQUIRED").wait_for(timeout=20_000)
    assert "What is your name?" in log.inner_text()
    first_task = log.locator(".task-id").first.inner_text()
    assert first_task in page.locator("#continuing").inner_text()
    _send(page, "Ada")
    log.locator(".state", has_text="COMPLETED").wait_for(timeout=20_000)
    assert "Hello, Ada!" in log.inner_text()
    assert log.locator(".task-id").last.inner_text() == first_task  # the same task continued


def test_the_task_list_shows_new_tasks_and_a_filter_works(
        page: Any, servers: dict[str, str]) -> None:
    page.goto(servers["input"])
    page.get_by_role("heading", name="Greeter").wait_for()
    _send(page, "one")
    page.get_by_role("log").locator(".state", has_text="INPUT_REQUIRED").wait_for()
    task_id = page.get_by_role("log").locator(".task-id").last.inner_text()
    tasks = page.get_by_role("table", name="Tasks")
    tasks.get_by_role("button", name=task_id).wait_for()
    page.get_by_label("State").select_option("TASK_STATE_COMPLETED")
    page.get_by_role("button", name="Refresh").first.click()
    tasks.get_by_role("button", name=task_id).wait_for(state="detached")
    page.get_by_label("State").select_option("TASK_STATE_INPUT_REQUIRED")
    page.get_by_role("button", name="Refresh").first.click()
    tasks.get_by_role("button", name=task_id).wait_for()
    assert "INPUT_REQUIRED" in tasks.inner_text()
    tasks.get_by_role("button", name=task_id).click()
    page.locator("#task-view").get_by_text("What is your name?").wait_for()
    _shot(page, "tasks")


def test_cancel_on_a_running_task_shows_canceled(page: Any, servers: dict[str, str]) -> None:
    page.goto(servers["counting"])
    page.get_by_role("heading", name="Counter").wait_for()
    _send(page, "count")
    log = page.get_by_role("log")
    log.locator(".state", has_text="WORKING").wait_for(timeout=20_000)
    task_id = log.locator(".task-id").last.inner_text()
    page.get_by_role("table", name="Tasks").get_by_role("button", name=task_id).click()
    page.get_by_role("button", name="Cancel task").click()
    page.locator("#task-summary .state", has_text="CANCELED").wait_for(timeout=20_000)
    log.locator(".state", has_text="CANCELED").wait_for(timeout=20_000)  # its stream ends too
    _shot(page, "task")


def test_a_bad_key_gets_a_clear_message(page: Any, servers: dict[str, str]) -> None:
    page.goto(servers["keyed"])
    page.get_by_role("heading", name="Streamer").wait_for()
    page.get_by_label("Credential type").select_option("api-key")
    page.get_by_label("API key or bearer token").fill("wrong-key")
    _send(page, "hi")
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "refused the credentials (HTTP 401" in alert.inner_text()
    page.get_by_label("API key or bearer token").fill(KEY)
    _send(page, "hello there")
    page.get_by_role("log").locator(".state", has_text="COMPLETED").wait_for(timeout=20_000)
    assert page.get_by_role("alert").is_hidden()
    # The raw view holds every exchange, each copyable as curl with what was sent.
    page.get_by_text("Every request and response of this page").click()
    send = page.locator("#raw-log details", has_text="SendStreamingMessage").first
    send.locator("summary").click()
    curl = send.locator(".curl").inner_text()
    assert curl.startswith("curl -sS -N 'http://127.0.0.1:") and "SendStreamingMessage" in curl
    assert f"-H 'x-api-key: {KEY}'" in curl  # the card's header name, the key sent
    _shot(page, "requests")
    _only_own_origin(page, servers["keyed"])


def test_a_phone_wide_page_has_every_control_in_view(
        browser: Any, servers: dict[str, str]) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 800})
    phone = context.new_page()
    try:
        phone.goto(servers["streaming"])
        phone.get_by_role("heading", name="Streamer").wait_for()
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the page is {width} px wide at 375"
        for label in ("Message", "API key or bearer token", "Credential type"):
            assert phone.get_by_label(label).is_visible()
        _shot(phone, "phone")
    finally:
        context.close()
