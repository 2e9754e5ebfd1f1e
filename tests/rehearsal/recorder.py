"""A recording HTTP proxy on loopback for the AWS calls of one entry point: each process of
the rehearsal gets its own, as its DynamoDB and SQS endpoint (AWS_ENDPOINT_URL_DYNAMODB,
AWS_ENDPOINT_URL_SQS), so every call is attributed to the process that made it, whichever
client made it (boto3 or the kit's own DynamoDB client), with nothing in the process patched.

Both services speak JSON over POST with the operation in `X-Amz-Target`; the proxy forwards
DynamoDB's to DynamoDB Local and SQS's to moto, and records each call as the IAM actions it
needs and the resources it names (`Call`)."""

from __future__ import annotations

import collections
import dataclasses
import http.client
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Call", "Recorder", "calls_of"]

_DYNAMODB = "DynamoDB_20120810."
_SQS = "AmazonSQS."
# A transaction's items are authorised by the action of each item's kind.
_TRANSACT_ITEM_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                          "ConditionCheck": "ConditionCheckItem"}


@dataclasses.dataclass(frozen=True, order=True)
class Call:
    """One permission a call needed: the IAM action and a resource, symbolically
    (`table:NAME`, `table:NAME/index/INDEX`, `queue:URL`)."""

    action: str
    resource: str


def calls_of(target: str, body: dict[str, Any]) -> list[Call]:
    """The permissions one request needs, from its X-Amz-Target and JSON body."""
    if target.startswith(_SQS):
        return [Call(f"sqs:{target.removeprefix(_SQS)}", f"queue:{body['QueueUrl']}")]
    operation = target.removeprefix(_DYNAMODB)
    if operation == "TransactWriteItems":
        return [Call(f"dynamodb:{_TRANSACT_ITEM_ACTIONS[kind]}", f"table:{item['TableName']}")
                for entry in body["TransactItems"] for kind, item in entry.items()]
    if operation in ("BatchWriteItem", "BatchGetItem"):
        return [Call(f"dynamodb:{operation}", f"table:{name}") for name in body["RequestItems"]]
    resource = f"table:{body['TableName']}"
    if "IndexName" in body:
        resource += f"/index/{body['IndexName']}"
    return [Call(f"dynamodb:{operation}", resource)]


class Recorder:
    """`url` is the endpoint to give a process; `calls` what it asked for so far."""

    def __init__(self, dynamodb_url: str, sqs_url: str) -> None:
        self._calls: set[Call] = set()
        self._requests: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        upstreams = {_DYNAMODB: urllib.parse.urlsplit(dynamodb_url),
                     _SQS: urllib.parse.urlsplit(sqs_url)}
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the clients expect

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                target = self.headers.get("X-Amz-Target", "")
                (upstream,) = [url for prefix, url in upstreams.items()
                               if target.startswith(prefix)]
                with recorder._lock:
                    recorder._calls.update(calls_of(target, json.loads(body or b"{}")))
                    recorder._requests[target.rsplit(".", 1)[-1]] += 1
                connection = http.client.HTTPConnection(upstream.hostname or "127.0.0.1",
                                                        upstream.port, timeout=30)
                try:
                    # As signed (neither emulator checks the signature's host).
                    headers = {k: v for k, v in self.headers.items()
                               if k.lower() != "connection"}
                    connection.request("POST", upstream.path or "/", body, headers)
                    response = connection.getresponse()
                    data = response.read()
                finally:
                    connection.close()
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() not in ("content-length", "connection",
                                            "transfer-encoding", "date", "server"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    @property
    def calls(self) -> set[Call]:
        """A copy of the calls so far (the process may still be making some)."""
        with self._lock:
            return set(self._calls)

    @property
    def requests(self) -> collections.Counter[str]:
        """Requests so far by API operation (a transaction counts once)."""
        with self._lock:
            return collections.Counter(self._requests)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
