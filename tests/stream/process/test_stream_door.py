"""The streaming door as it runs on Lambda: `python -m handlers.stream` in its own process,
requests carrying the Lambda Web Adapter's context headers, read with httpx as a stream.

Events leave as the agent emits them (each stamped chunk arrives within 100 ms of its stamp;
the agent pauses 300 ms between chunks, so a buffered door would be seconds late), idle
streams carry keep-alive comments, a stream ends at the invocation's deadline less the
margin, and the context headers count only under the adapter."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import httpx
import pytest

from infra.bundle import RUN_SCRIPT, write_scripts
from tests.execution.processes import kit_env, worker
from tests.execution.sqs import make_queues
from tests.stream.agents import DELAY_ENV
from tests.stream.door import STAMPED, door, lags, lambda_context, read_stream, results, rpc
from tests.support.moto import client as aws_client
from tests.support.processes import ROOT, free_port, python_env, running

pytestmark = pytest.mark.slow

LIVE_LAG_SECONDS = 0.1


def _states(lines: list[tuple[float, str]]) -> list[str]:
    return [r["statusUpdate"]["status"]["state"] for _, r in results(lines) if "statusUpdate" in r]


def test_each_event_arrives_as_the_agent_emits_it(tmp_path: Path) -> None:
    with door(tmp_path / "door.log", adapter=True) as url:
        _, status, lines = read_stream(url, 5, {"x-amzn-lambda-context": lambda_context(60)})
    assert status == 200
    delays = lags(lines)
    assert len(delays) == 5
    assert max(delays) < LIVE_LAG_SECONDS, delays
    assert _states(lines)[-1] == "TASK_STATE_COMPLETED"


def test_an_idle_stream_carries_keepalive_comments(tmp_path: Path) -> None:
    with door(tmp_path / "door.log", adapter=True, A2A_SSE_KEEPALIVE_SECONDS="0.2",
              **{DELAY_ENV: "1.5"}) as url:
        _, _, lines = read_stream(url, 1, {"x-amzn-lambda-context": lambda_context(60)})
    kinds = ["keep-alive" if line == ": keep-alive" else "data" if line.startswith("data:")
             else None for _, line in lines]
    kinds = [kind for kind in kinds if kind]
    # submitted, working, then 1.5 s without an event, then the chunk and completed.
    first_chunk = next(i for i, (_, r) in enumerate(
        (at, r) for at, r in results(lines)) if "artifactUpdate" in r)
    assert first_chunk == 2
    idle = kinds[2:kinds.index("data", 2)]
    assert len(idle) >= 3 and set(idle) == {"keep-alive"}, kinds


def test_the_stream_ends_at_the_invocation_deadline_less_the_margin(tmp_path: Path) -> None:
    # No stream budget of its own: only the invocation bounds the stream.
    with door(tmp_path / "door.log", adapter=True, A2A_BUDGET_MARGIN_SECONDS="1") as url:
        started, _, lines = read_stream(url, 40, {"x-amzn-lambda-context": lambda_context(4)})
    ended = lines[-1][0] - started
    assert 2.5 <= ended < 3.9, ended  # deadline 4 s, margin 1 s
    assert "TASK_STATE_COMPLETED" not in _states(lines)
    assert len(lags(lines)) < 40


def test_a_forged_lambda_context_sets_no_deadline(tmp_path: Path) -> None:
    # Not under the adapter: the header is a client's and is dropped unread, so the stream
    # runs to its own budget (2.5 s), not to the forged deadline less the margin (0.5 s).
    with door(tmp_path / "door.log", adapter=False, A2A_BUDGET_MARGIN_SECONDS="0.5",
              A2A_STREAM_BUDGET_SECONDS="2.5") as url:
        started, _, lines = read_stream(url, 40, {"x-amzn-lambda-context": lambda_context(1)})
    ended = lines[-1][0] - started
    assert 2.0 <= ended < 4.0, ended


def _claims(sub: str, path: str = "/") -> str:
    # A REST API request context with a Cognito authorizer's claims, as the adapter sends it.
    return json.dumps({"stage": "a2a", "path": path, "resourcePath": "/{proxy+}",
                       "requestId": "r", "identity": {"sourceIp": "192.0.2.1"},
                       "authorizer": {"claims": {"sub": sub}}})


def _send(url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, json=rpc("SendMessage", "1"),
                      headers={"A2A-Version": "1.0", **headers}, timeout=30)


def test_a_forged_request_context_grants_no_identity(tmp_path: Path) -> None:
    forged = {"x-amzn-request-context": _claims("victim")}
    with door(tmp_path / "plain.log", adapter=False, A2A_ALLOW_ANONYMOUS="false",
              **{DELAY_ENV: "0"}) as url:
        refused = _send(url, forged)
    assert refused.status_code == 401
    assert "result" not in refused.json()
    # Under the adapter the same header is the adapter's own: the authorizer's caller.
    with door(tmp_path / "adapter.log", adapter=True, A2A_ALLOW_ANONYMOUS="false",
              **{DELAY_ENV: "0"}) as url:
        accepted = _send(url, forged)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_stage_path_reaches_the_interface_and_the_card(tmp_path: Path) -> None:
    # The REST API forwards `/` for `https://host/a2a/`; the request context has the stage.
    with door(tmp_path / "door.log", adapter=True, path="/a2a/", **{DELAY_ENV: "0"}) as url:
        reply = _send(url, {"x-amzn-request-context": _claims("someone", "/a2a/")})
        card = httpx.get(url + ".well-known/agent-card.json", headers={
            "x-amzn-request-context": _claims("someone", "/a2a/.well-known/agent-card.json")})
    assert reply.status_code == 200, reply.text
    assert card.status_code == 200
    assert card.json()["supportedInterfaces"][0]["url"].endswith("/a2a/")


def test_http_json_streams_live_under_a_stage(tmp_path: Path) -> None:
    # The adapter forwards `/message:stream`; the request context has the stage's path.
    with door(tmp_path / "door.log", adapter=True, path="/a2a/") as url:
        lines: list[tuple[float, str]] = []
        with httpx.Client(timeout=60) as client, client.stream(
                "POST", url + "message:stream", json=rpc("SendStreamingMessage", "4")["params"],
                headers={"A2A-Version": "1.0", "x-amzn-lambda-context": lambda_context(60),
                         "x-amzn-request-context": _claims("someone", "/a2a/message:stream")},
        ) as response:
            assert response.status_code == 200
            lines.extend((time.time(), line) for line in response.iter_lines())
    events = [(at, json.loads(line[len("data: "):]))
              for at, line in lines if line.startswith("data: ")]
    assert "task" in events[0][1] and "result" not in events[0][1]  # bare StreamResponses
    chunks = [(at, e["artifactUpdate"]["artifact"]["parts"][0]["text"])
              for at, e in events if "artifactUpdate" in e]
    assert len(chunks) == 4
    assert max(at - float(text.split("@")[1].rstrip(";")) for at, text in chunks) < (
        LIVE_LAG_SECONDS), chunks
    assert events[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_queue_mode_streams_a_workers_events_live(
    ddb_endpoint: str, moto_endpoint: str, tmp_path: Path
) -> None:
    sqs = aws_client("sqs", moto_endpoint)
    queue, _ = make_queues(sqs, visibility_seconds=30)
    env = kit_env(ddb_endpoint, STAMPED, AWS_ENDPOINT_URL_SQS=moto_endpoint,
                  A2A_QUEUE_URL=queue, **{DELAY_ENV: "0.3"})
    with worker(env, tmp_path / "worker.log"), door(
            tmp_path / "door.log", adapter=True, A2A_EXECUTION="queue",
            **{k: v for k, v in env.items() if k.startswith(("A2A_", "AWS_ENDPOINT"))}) as url:
        started, status, lines = read_stream(url, 5, {"x-amzn-lambda-context": lambda_context(60)})
    assert status == 200
    delays = lags(lines)
    assert len(delays) == 5
    # The front door reads the worker's events from DynamoDB, polling at most every 1 s
    # (DynamoDBStore.poll_interval) while idle: late by a poll at most, never by the stream.
    assert max(delays) < 1.5, delays
    first_chunk_at = next(at for at, r in results(lines) if "artifactUpdate" in r)
    assert first_chunk_at - started < 5 * 0.3 + 1.0  # before the last chunk could be emitted
    assert _states(lines)[-1] == "TASK_STATE_COMPLETED"
    assert time.time() - started < 30


def test_the_bundles_run_script_starts_the_door(tmp_path: Path) -> None:
    # What the adapter's bootstrap runs as the function's handler, from the task root.
    write_scripts(tmp_path)
    script = tmp_path / RUN_SCRIPT
    port = free_port()
    env = python_env(PORT=str(port), LAMBDA_TASK_ROOT=str(ROOT), A2A_ALLOW_ANONYMOUS="true",
                     PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH")
    with running(["sh", str(script)], ports=[port], env=env, log=tmp_path / "run.log"):
        card = httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=10)
    assert card.status_code == 200


def test_03_streams_leave_live_in_the_03_framing(tmp_path: Path) -> None:
    """message/stream from a 0.3 client (no A2A-Version) through the streaming door: each
    event one `data:` line as it is emitted, no `event:` lines, `final` on the last; an
    unknown task's resubscribe is an error event at HTTP 200."""
    body = {"jsonrpc": "2.0", "id": "s1", "method": "message/stream", "params": {"message": {
        "kind": "message", "messageId": str(time.time()), "role": "user",
        "parts": [{"kind": "text", "text": "4"}]}}}
    headers = {"x-amzn-lambda-context": lambda_context(60)}
    with door(tmp_path / "door.log", adapter=True) as url, httpx.Client(timeout=60) as client:
        lines: list[tuple[float, str]] = []
        with client.stream("POST", url, json=body, headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = [(time.time(), line) for line in response.iter_lines()]
        missing = client.post(url, headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": "x"}})
    assert not [line for _, line in lines if line.startswith("event:")]
    events = results(lines)
    assert events[0][1]["kind"] == "task"
    chunks = [(at, r) for at, r in events if r["kind"] == "artifact-update"]
    assert len(chunks) == 4
    assert max(at - float(r["artifact"]["parts"][0]["text"].split("@")[1].rstrip(";"))
               for at, r in chunks) < LIVE_LAG_SECONDS, chunks
    assert events[-1][1]["status"]["state"] == "completed" and events[-1][1]["final"] is True
    assert missing.status_code == 200
    assert missing.text.startswith("data: ") and '"code":-32001' in missing.text


@pytest.mark.parametrize("deadline", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_deadline_in_the_adapters_context_is_no_deadline(
        tmp_path: Path, deadline: str) -> None:
    """Hardening (issue 33): the adapter writes a number, but a NaN or an infinity must
    never turn the call into a 500."""
    context = json.dumps({**json.loads(lambda_context(30)), "deadline": 0}).replace(
        '"deadline": 0', f'"deadline": {deadline}')  # as JSON text: json.dumps writes no 1e999
    with door(tmp_path / "door.log", adapter=True) as url:
        reply = _send(url, {"x-amzn-lambda-context": context})
    assert reply.status_code == 200, reply.text
    assert "result" in reply.json(), reply.text
    assert reply.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_bare_door_nobody_can_call_says_so_at_start(tmp_path: Path) -> None:
    """Run by hand (not under the adapter) with no scheme and no anonymous access, every
    call is 401: the door says so once at start, as `python -m grpc_service` does."""
    log = tmp_path / "door.log"
    with door(log, adapter=False, A2A_ALLOW_ANONYMOUS="false") as url:
        assert _send(url, {}).status_code == 401
    assert "no caller can be authenticated" in log.read_text()


def test_a_request_with_two_lengths_is_refused_and_its_connection_closed(
        tmp_path: Path) -> None:
    """Hardening (issue 33): Content-Length and Transfer-Encoding together are 400, and the
    connection is closed, so nothing after the body can be read as another request."""
    import socket

    body = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}'
    request = (b"POST / HTTP/1.1\r\nHost: door\r\nA2A-Version: 1.0\r\n"
               b"Content-Type: application/json\r\nContent-Length: 5\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n"
               + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    with door(tmp_path / "door.log", adapter=False) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(request)
            received = b""
            while chunk := conn.recv(4096):  # ends when the server closes the connection
                received += chunk
    assert received.startswith(b"HTTP/1.1 400 "), received[:200]
    assert b"Task not found" not in received


def test_a_request_head_that_never_ends_is_cut(tmp_path: Path) -> None:
    """Hardening (issue 33, slowloris): a client that sends its request line and then one
    header byte every half second (which keeps uvicorn's keep-alive timer from firing) is
    disconnected once the head has taken longer than the door allows (HEAD_SECONDS), on a
    new connection and on one that already carried a request; a prompt client is served."""
    import socket

    from handlers.stream import HEAD_SECONDS

    get = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: door\r\n\r\n"
    with door(tmp_path / "door.log", adapter=False) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        for earlier in (b"", get):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
                if earlier:
                    conn.sendall(earlier)
                    assert conn.recv(65536).startswith(b"HTTP/1.1 200 ")
                conn.sendall(b"GET / HTTP/1.1\r\nHost: door\r\nX-Slow: ")
                started = time.monotonic()
                closed = False
                while time.monotonic() - started < HEAD_SECONDS + 10:
                    try:
                        conn.sendall(b"a")
                        conn.settimeout(0.5)
                        if conn.recv(4096) == b"":
                            closed = True
                            break
                    except TimeoutError:
                        continue
                    except OSError:  # reset by the server
                        closed = True
                        break
                assert closed, "the door kept a request head open past its limit"
                assert time.monotonic() - started < HEAD_SECONDS + 3
