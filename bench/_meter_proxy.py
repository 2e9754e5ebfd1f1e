"""The load run's metering proxy (bench/load_run.py), a process of its own: it forwards
DynamoDB calls to DynamoDB Local and prices each by bench/_units.py's rules; GET /__meter
answers the totals.

    python bench/_meter_proxy.py UPSTREAM PORT TABLE
"""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import sys
import threading
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _decoded(value: Any) -> Any:
    """A wire attribute value (B as base64) as boto3 gives it (B as bytes), for the Pricer."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((kind, inner),) = value.items()
            if kind == "B" and isinstance(inner, str):
                return {"B": base64.b64decode(inner)}
            if kind == "BS" and isinstance(inner, list):
                return {"BS": [base64.b64decode(each) for each in inner]}
        return {key: _decoded(each) for key, each in value.items()}
    if isinstance(value, list):
        return [_decoded(each) for each in value]
    return value


def proxy(upstream: str, port: int, table_name: str) -> None:
    """Forward DynamoDB calls to `upstream`, pricing each; GET /__meter answers the totals."""
    import boto3
    from _units import READS, WRITES, Meter, Pricer

    from a2akit.store import table

    peek = boto3.client("dynamodb", endpoint_url=upstream, region_name="us-east-1")
    pricer = Pricer(table.create_table_kwargs(table_name), peek, table_name)
    nowhere = types.SimpleNamespace(register=lambda *_: None)
    meter = Meter(types.SimpleNamespace(meta=types.SimpleNamespace(events=nowhere)), pricer)
    lock = threading.Lock()
    totals: dict[str, Any] = {"calls": {}, "wru": 0.0, "index_wru": 0.0, "rru": 0.0}
    host, _, upstream_port = upstream.removeprefix("http://").partition(":")
    local = threading.local()

    def forward(path: str, headers: dict[str, str], body: bytes) -> tuple[int, list[Any], bytes]:
        for attempt in range(2):
            connection = getattr(local, "connection", None)
            if connection is None:
                connection = local.connection = http.client.HTTPConnection(
                    host, int(upstream_port), timeout=30)
            try:
                connection.request("POST", path, body, headers)
                response = connection.getresponse()
                return response.status, response.getheaders(), response.read()
            except (OSError, http.client.HTTPException):
                connection.close()
                local.connection = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def price(name: str, parsed: dict[str, Any]) -> None:
        units = index_units = rru = 0.0
        if name in READS:
            consumed = parsed.get("ConsumedCapacity")
            for entry in (consumed if isinstance(consumed, list)
                          else [consumed] if consumed else []):
                rru += float(entry.get("CapacityUnits", 0))
        else:  # what Meter._after does, its totals kept under the lock
            _, writes = meter._pending.pop(threading.get_ident())
            for key, put, transactional, old in writes:
                new = pricer.get(key)
                units += pricer.item_units(old, new, put) * (2 if transactional else 1)
                index_units += pricer.index_units(old, new)
        with lock:
            totals["calls"][name] = totals["calls"].get(name, 0) + 1
            totals["wru"] += units
            totals["index_wru"] += index_units
            totals["rru"] += rru

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: Any) -> None:
            pass

        def do_GET(self) -> None:
            with lock:
                body = json.dumps(totals).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            name = (self.headers.get("x-amz-target") or "").rpartition(".")[2]
            metered = name in WRITES or name in READS
            if metered:
                params = json.loads(body)
                model = types.SimpleNamespace(name=name)
                if name in READS:
                    meter._before(params=params, model=model)  # asks for ConsumedCapacity
                    body = json.dumps(params).encode()
                else:
                    meter._before(params=_decoded(params), model=model)
            headers = {key: value for key, value in self.headers.items()
                       if key.lower() not in ("host", "content-length")}
            headers["content-length"] = str(len(body))
            status, answer_headers, answer = forward(self.path, headers, body)
            if metered:
                price(name, json.loads(answer or b"{}"))
            self.send_response(status)
            for key, value in answer_headers:
                if key.lower() not in ("content-length", "connection", "date", "server"):
                    self.send_header(key, value)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    proxy(sys.argv[1], int(sys.argv[2]), sys.argv[3])
