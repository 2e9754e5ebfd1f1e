"""The JSON-RPC binding's edges: protocol versions (header and query), the JSON-RPC envelope,
required fields, the body limit, ids, and the agent card from the settings."""

from __future__ import annotations

import json

import pytest

from a2akit.settings import Settings
from tests.jsonrpc.client import Client, app_client
from tests.support.errors import jsonrpc_info
from tests.support.messages import user_message


@pytest.mark.parametrize("headers", [{"A2A-Version": ""}, {"A2A-Version": "0.3"},
                                     {"A2A-Version": "2.0"}, {"A2A-Version": "one"}])
@pytest.mark.spec("3.6", "MUST", (
    "A request in a protocol version the server does not serve fails with "
    "VersionNotSupportedError"))
def test_unsupported_versions(rpc: Client, headers: dict[str, str]) -> None:
    error = rpc.error("GetTask", {"id": "x"}, headers=headers)
    assert error["code"] == -32009 and jsonrpc_info(error).reason == "VERSION_NOT_SUPPORTED"


@pytest.mark.spec("3.6.2", "MUST", "A missing or empty A2A-Version is read as 0.3")
def test_missing_version_header_means_0_3(rpc: Client) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})
    reply = rpc.post(body.encode(), {})
    assert reply.status == 200 and reply.json()["error"]["code"] == -32009


@pytest.mark.parametrize(("query", "headers", "code"), [
    ("A2A-Version=1.0", {}, -32001),  # served: the task is not found
    ("A2A-Version=1.0.1&other=x", {}, -32001),
    ("A2A-Version=2.0", {}, -32009),
    ("other=1.0", {}, -32009),
    ("A2A-Version=1.0", {"A2A-Version": "2.0"}, -32009),  # the header wins
    ("A2A-Version=2.0", {"A2A-Version": "1.0"}, -32001),
])
@pytest.mark.spec(
    "3.6.1", "MUST", "HTTP bindings take the version from the A2A-Version query parameter too")
def test_version_as_query_parameter(rpc: Client, query: str, headers: dict[str, str],
                                     code: int) -> None:
    """HTTP clients may send the version as a query parameter instead (spec 3.6.1)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})
    reply = rpc.post(body.encode(), headers, query=query)
    assert reply.status == 200 and reply.json()["error"]["code"] == code


@pytest.mark.parametrize("version", ["1.0", "1.0.0", "1.0.3"])
def test_1_0_versions_accepted(rpc: Client, version: str) -> None:
    assert rpc.error("GetTask", {"id": "x"}, headers={"A2A-Version": version})["code"] == -32001


@pytest.mark.parametrize(("body", "code"), [
    (b"{not json", -32700),
    (b"[]", -32600),
    (b'[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]', -32600),
    (b'"text"', -32600),
    (b'{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}', -32600),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
    # 0.3 methods are served (docs/a2a-0.3.md), but not to a caller asking for 1.0.
    (b'{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}', -32009),
    (b'{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}', -32601),
    (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"historyLength":"x"}}', -32602),
    (b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":"x"}}', -32602),
])
@pytest.mark.spec(
    "9.5", "MUST", "JSON-RPC envelope errors answer the standard codes (-32700, -32600, -32601)")
def test_envelope_errors(rpc: Client, body: bytes, code: int) -> None:
    reply = rpc.post(body, {"A2A-Version": "1.0"})
    assert reply.status == 200
    error = reply.json()["error"]
    assert error["code"] == code, error
    assert reply.json()["id"] in (None, 1)
    assert "Traceback" not in reply.body.decode()


@pytest.mark.spec(
    "3.3.2", "MUST", "Inputs are validated before processing: missing required fields are named")
def test_missing_required_fields_list_each_field(rpc: Client) -> None:
    message = {"messageId": "m", "parts": []}
    error = rpc.error("SendMessage", {"message": message})
    assert error["code"] == -32602
    bad = error["data"][1]
    assert bad["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    fields = {v["field"] for v in bad["fieldViolations"]}
    assert fields == {"message.role", "message.parts"}
    assert rpc.result("ListTasks", {})["totalSize"] == 0  # nothing half-written


def test_oversize_body_is_refused(kind: str) -> None:
    for client in app_client(kind, settings=Settings(allow_anonymous=True,
                                                  max_request_bytes=2048)):
        error = client.error("SendMessage", {"message": user_message("x" * 4096)})
        assert error["code"] == -32600 and "2048" in error["message"]
        assert client.result("ListTasks", {})["totalSize"] == 0


def test_string_ids_are_echoed(rpc: Client) -> None:
    body = b'{"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{"id":"x"}}'
    assert rpc.post(body, {"A2A-Version": "1.0"}).json()["id"] == "abc"


def test_agent_card_comes_from_settings(kind: str) -> None:
    settings = Settings(allow_anonymous=True, public_url="https://agent.example.com/",
                        grpc_address="grpc.internal:50051")
    for client in app_client(kind, settings=settings):
        reply = client.get("/.well-known/agent-card.json", {"Host": "evil.example"})
        assert reply.status == 200 and reply.headers["etag"]
        card = reply.json()
        assert card["supportedInterfaces"] == [
            {"url": "https://agent.example.com/", "protocolBinding": "JSONRPC",
             "protocolVersion": "1.0"},
            {"url": "https://agent.example.com/", "protocolBinding": "HTTP+JSON",
             "protocolVersion": "1.0"},
            {"url": "grpc.internal:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "https://agent.example.com/", "protocolBinding": "JSONRPC",
             "protocolVersion": "0.3"},
            {"url": "grpc.internal:50051", "protocolBinding": "GRPC", "protocolVersion": "0.3"}]
        assert card["capabilities"]["streaming"] is True
        assert card["skills"][0]["id"] == "echo"
