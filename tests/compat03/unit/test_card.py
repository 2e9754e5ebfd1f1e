"""The 0.3 form of the agent card (a2akit.compat03.card03), field by field against
compat-facts section 4, and the 0.3 error names and shapes (a2akit.compat03.errors)."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2

from a2akit import errors
from a2akit.auth import Authenticator
from a2akit.card import build_card
from a2akit.compat03 import errors as errors03
from a2akit.compat03.card03 import from_core_card
from a2akit.examples.echo import EchoAgent
from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03
from a2akit.settings import Settings


def _card() -> pb.AgentCard:
    card = pb.AgentCard(
        name="Demo", description="d", version="1.2.0", documentation_url="https://e.com/doc",
        icon_url="https://e.com/i.png", default_input_modes=["text/plain"],
        default_output_modes=["application/json"],
        provider=pb.AgentProvider(url="https://e.com", organization="E"),
        capabilities=pb.AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True,
            extensions=[pb.AgentExtension(uri="urn:x", description="x", required=True,
                                          params=struct_pb2.Struct())]),
    )
    card.capabilities.extensions[0].params.update({"p": 1})
    card.supported_interfaces.add(url="https://e.com/a2a", protocol_binding="JSONRPC",
                                  protocol_version="1.0")
    card.supported_interfaces.add(url="https://e.com/rest", protocol_binding="HTTP+JSON",
                                  protocol_version="1.0")
    card.supported_interfaces.add(url="grpc.e.com:443", protocol_binding="GRPC",
                                  protocol_version="1.0", tenant="acme")
    card.security_schemes["key"].api_key_security_scheme.CopyFrom(
        pb.APIKeySecurityScheme(description="k", location="header", name="X-Key"))
    card.security_schemes["basic"].http_auth_security_scheme.CopyFrom(
        pb.HTTPAuthSecurityScheme(description="h", scheme="bearer", bearer_format="JWT"))
    card.security_schemes["oidc"].open_id_connect_security_scheme.CopyFrom(
        pb.OpenIdConnectSecurityScheme(description="o", open_id_connect_url="https://e.com/.w"))
    card.security_schemes["mtls"].mtls_security_scheme.CopyFrom(
        pb.MutualTlsSecurityScheme(description="m"))
    oauth = card.security_schemes["oauth"].oauth2_security_scheme
    oauth.description, oauth.oauth2_metadata_url = "oa", "https://e.com/meta"
    oauth.flows.authorization_code.CopyFrom(pb.AuthorizationCodeOAuthFlow(
        authorization_url="https://e.com/auth", token_url="https://e.com/token",
        refresh_url="https://e.com/refresh", scopes={"read": "Read"}, pkce_required=True))
    card.security_requirements.add().schemes["key"].list.extend([])
    card.security_requirements.add().schemes["oauth"].list.extend(["read"])
    skill = card.skills.add(id="s", name="S", description="sd", tags=["t"], examples=["e"],
                            input_modes=["text/plain"], output_modes=["text/plain"])
    skill.security_requirements.add().schemes["oauth"].list.append("read")
    card.signatures.add(protected="p", signature="s").header.update({"kid": "k1"})
    return card


def test_card_field_by_field() -> None:
    old = from_core_card(_card())
    assert (old.name, old.description, old.version) == ("Demo", "d", "1.2.0")
    assert (old.documentation_url, old.icon_url) == ("https://e.com/doc", "https://e.com/i.png")
    assert old.provider == pb03.AgentProvider(url="https://e.com", organization="E")
    assert list(old.default_input_modes) == ["text/plain"]
    assert list(old.default_output_modes) == ["application/json"]
    assert old.protocol_version == "0.3.0"
    assert old.supports_authenticated_extended_card is True
    assert (old.capabilities.streaming, old.capabilities.push_notifications) == (True, True)
    extension = old.capabilities.extensions[0]
    assert (extension.uri, extension.description, extension.required) == ("urn:x", "x", True)
    assert extension.params["p"] == 1
    # Only 1.0 interfaces declared: the kit serves 0.3 on its JSON-RPC URL and gRPC address;
    # HTTP+JSON is not a 0.3 interface here. The main one is listed too (0.3 spec 5.6.2).
    assert (old.url, old.preferred_transport) == ("https://e.com/a2a", "JSONRPC")
    assert [(i.url, i.transport) for i in old.additional_interfaces] == [
        ("https://e.com/a2a", "JSONRPC"), ("grpc.e.com:443", "GRPC")]
    assert old.signatures[0].protected == "p" and old.signatures[0].header["kid"] == "k1"


def test_declared_03_interfaces_win_in_their_order() -> None:
    card = _card()
    card.supported_interfaces.add(url="grpc03.e.com:443", protocol_binding="GRPC",
                                  protocol_version="0.3")
    card.supported_interfaces.add(url="https://e.com/v03", protocol_binding="JSONRPC",
                                  protocol_version="0.3.0")
    old = from_core_card(card)
    assert (old.url, old.preferred_transport) == ("https://e.com/v03", "JSONRPC")
    assert [i.url for i in old.additional_interfaces] == ["grpc03.e.com:443",
                                                          "https://e.com/v03"]
    card = _card()
    del card.supported_interfaces[:]
    card.supported_interfaces.add(url="g:1", protocol_binding="GRPC", protocol_version="0.3")
    old = from_core_card(card)
    assert (old.url, old.preferred_transport) == ("g:1", "GRPC")


def test_security_schemes_and_requirements() -> None:
    old = from_core_card(_card())
    assert old.security_schemes["key"].api_key_security_scheme == pb03.APIKeySecurityScheme(
        description="k", location="header", name="X-Key")
    assert old.security_schemes["basic"].http_auth_security_scheme == \
        pb03.HTTPAuthSecurityScheme(description="h", scheme="bearer", bearer_format="JWT")
    assert old.security_schemes["oidc"].open_id_connect_security_scheme == \
        pb03.OpenIdConnectSecurityScheme(description="o",
                                         open_id_connect_url="https://e.com/.w")
    assert old.security_schemes["mtls"].HasField("mtls_security_scheme")
    oauth = old.security_schemes["oauth"].oauth2_security_scheme
    assert (oauth.description, oauth.oauth2_metadata_url) == ("oa", "https://e.com/meta")
    # pkce_required has no 0.3 field (5.3 #19).
    assert oauth.flows == pb03.OAuthFlows(authorization_code=pb03.AuthorizationCodeOAuthFlow(
        authorization_url="https://e.com/auth", token_url="https://e.com/token",
        refresh_url="https://e.com/refresh", scopes={"read": "Read"}))
    assert [dict((k, list(v.list)) for k, v in s.schemes.items()) for s in old.security] == [
        {"key": []}, {"oauth": ["read"]}]
    skill = old.skills[0]
    assert (skill.id, skill.name, skill.description) == ("s", "S", "sd")
    assert (list(skill.tags), list(skill.examples)) == (["t"], ["e"])
    assert list(skill.input_modes) == list(skill.output_modes) == ["text/plain"]
    assert list(skill.security[0].schemes["oauth"].list) == ["read"]


@pytest.mark.parametrize("flow", ["client_credentials", "implicit", "password", "device_code"])
def test_each_oauth_flow(flow: str) -> None:
    card = pb.AgentCard()
    flows = card.security_schemes["o"].oauth2_security_scheme.flows
    if flow == "implicit":
        flows.implicit.authorization_url = "https://e.com/auth"
    else:
        getattr(flows, flow).token_url = "https://e.com/token"
    getattr(flows, flow).refresh_url = "https://e.com/refresh"
    getattr(flows, flow).scopes["s"] = "S"
    old = from_core_card(card).security_schemes["o"].oauth2_security_scheme.flows
    if flow == "device_code":  # 1.0 only: no 0.3 form (5.3 #19)
        assert old.WhichOneof("flow") is None
    else:
        assert old.WhichOneof("flow") == flow
        assert getattr(old, flow).refresh_url == "https://e.com/refresh"
        assert dict(getattr(old, flow).scopes) == {"s": "S"}


def test_the_kits_own_card_declares_the_same_schemes() -> None:
    settings = Settings(bearer_tokens={"t": "alice"}, api_keys='[]', allow_anonymous=True,
                        grpc_address="grpc.e.com:443")
    authenticator = Authenticator.from_settings(settings)
    card = build_card(settings, EchoAgent(), authenticator)
    old = from_core_card(card)
    assert set(old.security_schemes) == set(card.security_schemes)
    assert len(old.security) == len(card.security_requirements)
    assert old.url == settings.public_url
    assert [i.transport for i in old.additional_interfaces] == ["JSONRPC", "GRPC"]


# --- errors --------------------------------------------------------------------------------------

NAMES_03 = {  # facts 2.6
    -32700: "JSONParseError", -32600: "InvalidRequestError", -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError", -32603: "InternalError", -32001: "TaskNotFoundError",
    -32002: "TaskNotCancelableError", -32003: "PushNotificationNotSupportedError",
    -32004: "UnsupportedOperationError", -32005: "ContentTypeNotSupportedError",
    -32006: "InvalidAgentResponseError", -32007: "AuthenticatedExtendedCardNotConfiguredError",
}


@pytest.mark.parametrize("cls", errors.CATALOGUE, ids=lambda c: c.__name__)
def test_every_error_has_a_03_name(cls: type[errors.A2AError]) -> None:
    error = cls("boom", metadata={"taskId": "t"})
    name = errors03.type_name(error)
    if cls in errors03.TYPE_NAMES:
        assert NAMES_03[cls.jsonrpc_code] == name
    else:  # not defined by 0.3: the catalogue's own name, same code
        assert name == cls.__name__
    status = errors03.grpc_status(error)
    assert status.message == f"{name}: boom"
    assert status.code == cls.grpc_code
    assert status.details == error.to_status().details
    assert errors03.jsonrpc_error(error) == {
        "code": cls.jsonrpc_code, "message": "boom",
        "data": {"reason": error.reason, **error.metadata}}
    assert errors03.jsonrpc_data(error)["taskId"] == "t"


def test_every_03_code_is_named() -> None:
    assert {cls.jsonrpc_code for cls in errors03.TYPE_NAMES} == set(NAMES_03)
    # -32008 and -32009 keep their codes (the 0.3 server range) and their 1.0 names.
    error = errors.VersionNotSupportedError()
    assert errors03.jsonrpc_error(error)["code"] == -32009
    assert errors03.type_name(error) == "VersionNotSupportedError"
