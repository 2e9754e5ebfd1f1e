"""The agent card declares exactly the schemes the server enforces: for each configuration,
credentials presented as the served card describes them are accepted, and without them the
call is refused (unless anonymous callers are served, which the card says too). The extended
card is only for authenticated callers, and only when configured."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from a2akit.auth import Authenticator
from a2akit.auth.api_keys import hash_key, new_key
from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.runtime import build_operations
from a2akit.settings import Settings
from a2akit.store.memory import MemoryStore
from http_service.app import create_app
from tests.auth.conftest import Clock
from tests.auth.issuer import AUDIENCE, SCOPE, Issuer
from tests.auth.transports import TRANSPORTS, open_transport
from tests.jsonrpc.client import AsgiClient
from tests.support.messages import send_params

KEY = new_key()
KEYS = json.dumps([{"principal": "bot", "sha256": hash_key(KEY)}])

Config = Callable[[Issuer], dict[str, Any]]
CONFIGS: dict[str, Config] = {
    "jwt": lambda i: {"jwt_issuer": i.url, "jwt_audiences": (AUDIENCE,),
                      "jwt_required_scopes": {"*": (SCOPE,), "CancelTask": ("a2a/admin",)}},
    "api-key": lambda i: {"api_keys": KEYS, "api_key_header": "x-agent-key"},
    "both-and-anonymous": lambda i: {"jwt_issuer": i.url, "jwt_audiences": (AUDIENCE,),
                                     "api_keys": KEYS, "allow_anonymous": True},
    "dev-tokens": lambda i: {"bearer_tokens": {"dev-token-1": "me"}},
    "anonymous-only": lambda i: {"allow_anonymous": True},
}
EXPECTED: dict[str, dict[str, Any]] = {
    "jwt": {"requirements": [{"schemes": {"oidc": {"list": [SCOPE]}}}]},
    "api-key": {"schemes": {"apiKey": {"apiKeySecurityScheme": {
        "location": "header", "name": "x-agent-key",
        "description": "An API key in header x-agent-key (gRPC: metadata x-agent-key)"}}},
        "requirements": [{"schemes": {"apiKey": {}}}]},
    "both-and-anonymous": {"requirements": [{"schemes": {"oidc": {}}},
                                            {"schemes": {"apiKey": {}}}, {}]},
    "dev-tokens": {"schemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                   "requirements": [{"schemes": {"bearer": {}}}]},
    "anonymous-only": {"schemes": None, "requirements": None},
}


@pytest.fixture(params=list(CONFIGS))
def served(request: pytest.FixtureRequest, issuer: Issuer) -> Iterator[tuple[str, Any]]:
    name = str(request.param)
    settings = Settings(**CONFIGS[name](issuer))
    ops = build_operations(settings, MemoryStore(), EchoAgent(),
                           authenticator=Authenticator.from_settings(settings, clock=Clock()))
    client = AsgiClient(create_app(ops))
    yield name, client
    client.close()


def _credentials(scheme_name: str, scheme: dict[str, Any], issuer: Issuer) -> dict[str, str]:
    """What a client reading the card would send for this scheme."""
    if "apiKeySecurityScheme" in scheme:
        assert scheme["apiKeySecurityScheme"]["location"] == "header"
        return {scheme["apiKeySecurityScheme"]["name"]: KEY}
    if "openIdConnectSecurityScheme" in scheme:
        url = scheme["openIdConnectSecurityScheme"]["openIdConnectUrl"]
        assert url == issuer.url + "/.well-known/openid-configuration"
        return {"Authorization": "Bearer " + issuer.token()}
    assert scheme["httpAuthSecurityScheme"]["scheme"] == "Bearer", scheme_name
    return {"Authorization": "Bearer dev-token-1"}


def test_the_card_declares_what_is_enforced(served: tuple[str, Any], issuer: Issuer) -> None:
    name, client = served
    card = client.get("/.well-known/agent-card.json").json()
    expected = EXPECTED[name]
    schemes = card.get("securitySchemes")
    if "schemes" in expected:
        # The 1.0 members; the 0.3 card's flat members sit beside them (docs/a2a-0.3.md).
        assert schemes == expected["schemes"] if schemes is None else {
            scheme_name: {k: v for k, v in scheme.items() if k.endswith("SecurityScheme")}
            for scheme_name, scheme in schemes.items()} == expected["schemes"]
    assert card.get("securityRequirements") == expected["requirements"]
    # The 0.3 view declares the same schemes and requirements, merged card and 0.3 card alike.
    legacy = client.get("/.well-known/agent.json").json()
    assert legacy.get("security") == card.get("security") == (
        None if expected["requirements"] is None else
        [{n: v.get("list", []) for n, v in r.get("schemes", {}).items()}
         for r in expected["requirements"]])
    assert sorted(legacy.get("securitySchemes") or {}) == sorted(schemes or {})
    for scheme_name, flat in (legacy.get("securitySchemes") or {}).items():
        assert {k: v for k, v in schemes[scheme_name].items()
                if not k.endswith("SecurityScheme")} == flat
    anonymous = {} in (card.get("securityRequirements") or [{}])
    send = send_params("hi")
    for scheme_name, scheme in (card.get("securitySchemes") or {}).items():
        headers = _credentials(scheme_name, scheme, issuer)
        assert "error" not in client.call("SendMessage", send, headers=headers).json()
    reply = client.call("GetTask", {"id": "x"}).json()
    assert reply["error"]["data"][0]["reason"] == (
        "TASK_NOT_FOUND" if anonymous else "UNAUTHENTICATED")


class WithExtendedCard(EchoAgent):
    extended_card = pb.AgentCard(name="Echo, extended", description="for members")


@pytest.mark.parametrize("door", TRANSPORTS)
def test_extended_card_only_for_authenticated_callers(door: str) -> None:
    keys = {"api_keys": KEYS, "allow_anonymous": True}
    cases = [
        (Settings(**keys, extended_agent_card=True), WithExtendedCard(), {}, "UNAUTHENTICATED"),
        (Settings(**keys), WithExtendedCard(), {"x-api-key": KEY}, "UNSUPPORTED_OPERATION"),
        (Settings(**keys, extended_agent_card=True), EchoAgent(), {"x-api-key": KEY},
         "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
        (Settings(**keys, extended_agent_card=True), WithExtendedCard(), {"x-api-key": KEY},
         None),
    ]
    for settings, agent, headers, reason in cases:
        transport = open_transport(door, build_operations(settings, MemoryStore(), agent))
        try:
            outcome = transport.call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest(),
                                     headers)
        finally:
            transport.close()
        assert outcome.reason == reason, outcome.text
        if reason is None:
            assert outcome.result.name == "Echo, extended"
