"""A recorded-call stand-in for what ECS gives the long lane's worker (moto's ECS has no task
protection): the task metadata endpoint (`GET /task`, as ECS_CONTAINER_METADATA_URI_V4
serves it) and the ECS API's `UpdateTaskProtection` (JSON 1.1 over POST, as botocore sends it
to AWS_ENDPOINT_URL_ECS). Every protection call is recorded; the worker's own boto3 client
makes them, over HTTP, in its own process."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["CLUSTER", "TASK_ARN", "EcsFake", "ecs_fake"]

CLUSTER = "arn:aws:ecs:us-east-1:123456789012:cluster/a2a-long"
TASK_ARN = "arn:aws:ecs:us-east-1:123456789012:task/a2a-long/0123456789abcdef"
_TARGET = "AmazonEC2ContainerServiceV20141113.UpdateTaskProtection"


class EcsFake:
    def __init__(self, url: str) -> None:
        self.url = url
        self.calls: list[dict[str, Any]] = []  # UpdateTaskProtection request bodies, in order
        self.others: list[str] = []  # anything else asked of it

    def states(self) -> list[bool]:
        return [call["protectionEnabled"] for call in self.calls]

    def env(self) -> dict[str, str]:
        """What a worker process needs to find it."""
        return {"ECS_CONTAINER_METADATA_URI_V4": self.url, "AWS_ENDPOINT_URL_ECS": self.url}


@contextlib.contextmanager
def ecs_fake() -> Iterator[EcsFake]:
    fake: EcsFake

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: dict[str, Any], content_type: str) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/task":
                self._answer(200, {"Cluster": CLUSTER, "TaskARN": TASK_ARN,
                                   "Family": "a2a-long", "DesiredStatus": "RUNNING"},
                             "application/json")
                return
            fake.others.append(f"GET {self.path}")
            self._answer(404, {}, "application/json")

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            if self.headers.get("X-Amz-Target") != _TARGET:
                fake.others.append(str(self.headers.get("X-Amz-Target")))
                self._answer(400, {"__type": "InvalidParameterException",
                                   "message": "not faked"}, "application/x-amz-json-1.1")
                return
            fake.calls.append(body)
            tasks = [{"taskArn": arn, "protectionEnabled": body["protectionEnabled"]}
                     for arn in body["tasks"]]
            self._answer(200, {"protectedTasks": tasks, "failures": []},
                         "application/x-amz-json-1.1")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake = EcsFake(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
