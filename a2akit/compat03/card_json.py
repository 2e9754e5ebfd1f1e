"""The 0.3 agent card as 0.3 JSON (0.3 schema `AgentCard`; facts 4.1, 4.2), from the 0.3
card message, and the merged card that one document serves to both generations (facts 4.3).

Where the 0.3 JSON differs from ProtoJSON of the 0.3 message: security schemes are flat
objects with a `type` (the proto's oneof wrapper is gone, `location` is `in`), security
requirements are `[{scheme: [scopes]}]` (no `schemes` / `list` wrappers), interfaces are
`{url, transport}`, and `supportsAuthenticatedExtendedCard` is written only when true.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from a2akit.generated import a2a_v0_3_pb2 as pb03

__all__ = ["card_json", "merge_into"]

JsonObject = dict[str, Any]


def _put(out: JsonObject, name: str, value: Any) -> None:
    if value:
        out[name] = value


def _security(requirements: Any) -> list[JsonObject]:
    return [{name: list(scopes.list) for name, scopes in requirement.schemes.items()}
            for requirement in requirements]


def _flows(flows: pb03.OAuthFlows) -> JsonObject:
    member = flows.WhichOneof("flow")
    if member is None:
        return {}
    flow = getattr(flows, member)
    out: JsonObject = {}
    for field, name in (("authorization_url", "authorizationUrl"), ("token_url", "tokenUrl"),
                        ("refresh_url", "refreshUrl")):
        if hasattr(flow, field):
            _put(out, name, getattr(flow, field))
    out["scopes"] = dict(flow.scopes)
    # The proto holds one flow (a oneof); 0.3 JSON names it by the member's JSON name.
    return {flows.DESCRIPTOR.fields_by_name[member].json_name: out}


# (oneof member, 0.3 `type`, (proto field, JSON name) pairs), as facts 4.2 lists them.
_SCHEMES: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("api_key_security_scheme", "apiKey", (("location", "in"), ("name", "name"))),
    ("http_auth_security_scheme", "http", (("scheme", "scheme"),
                                           ("bearer_format", "bearerFormat"))),
    ("oauth2_security_scheme", "oauth2", (("oauth2_metadata_url", "oauth2MetadataUrl"),)),
    ("open_id_connect_security_scheme", "openIdConnect",
     (("open_id_connect_url", "openIdConnectUrl"),)),
    ("mtls_security_scheme", "mutualTLS", ()),
)


def _scheme(scheme: pb03.SecurityScheme) -> JsonObject:
    member = scheme.WhichOneof("scheme")
    for name, kind, fields in _SCHEMES:
        if name == member:
            inner = getattr(scheme, name)
            out: JsonObject = {"type": kind}
            for field, json_name in fields:
                _put(out, json_name, getattr(inner, field))
            if kind == "oauth2":
                out["flows"] = _flows(inner.flows)
            _put(out, "description", inner.description)
            return out
    return {}


def _skill(skill: pb03.AgentSkill) -> JsonObject:
    out: JsonObject = {"id": skill.id, "name": skill.name, "description": skill.description,
                       "tags": list(skill.tags)}
    _put(out, "examples", list(skill.examples))
    _put(out, "inputModes", list(skill.input_modes))
    _put(out, "outputModes", list(skill.output_modes))
    _put(out, "security", _security(skill.security))
    return out


def _extension(extension: pb03.AgentExtension) -> JsonObject:
    out: JsonObject = {"uri": extension.uri}
    _put(out, "description", extension.description)
    _put(out, "required", extension.required)
    if extension.HasField("params"):
        out["params"] = json_format.MessageToDict(extension.params)
    return out


def card_json(card: pb03.AgentCard) -> JsonObject:
    """The 0.3 JSON of a 0.3 card: every member the 0.3 schema requires, the rest if set."""
    capabilities: JsonObject = {"streaming": card.capabilities.streaming,
                                "pushNotifications": card.capabilities.push_notifications}
    _put(capabilities, "extensions", [_extension(e) for e in card.capabilities.extensions])
    out: JsonObject = {
        "protocolVersion": card.protocol_version or "0.3.0",
        "name": card.name, "description": card.description, "url": card.url,
        "preferredTransport": card.preferred_transport or "JSONRPC",
    }
    _put(out, "additionalInterfaces", [{"url": i.url, "transport": i.transport}
                                       for i in card.additional_interfaces])
    if card.HasField("provider"):
        out["provider"] = {"organization": card.provider.organization,
                           "url": card.provider.url}
    out["version"] = card.version
    _put(out, "iconUrl", card.icon_url)
    _put(out, "documentationUrl", card.documentation_url)
    out["capabilities"] = capabilities
    _put(out, "securitySchemes", {name: _scheme(scheme)
                                  for name, scheme in card.security_schemes.items()})
    _put(out, "security", _security(card.security))
    out["defaultInputModes"] = list(card.default_input_modes)
    out["defaultOutputModes"] = list(card.default_output_modes)
    out["skills"] = [_skill(skill) for skill in card.skills]
    _put(out, "supportsAuthenticatedExtendedCard", card.supports_authenticated_extended_card)
    _put(out, "signatures", [json_format.MessageToDict(s) for s in card.signatures])
    return out


def merge_into(base: JsonObject, extra: JsonObject) -> JsonObject:
    """`extra`'s members added to `base` where absent (facts 4.3, REF's merge): objects under
    one key merge recursively, lists element by element where both elements are objects; a
    value `base` has is never replaced. Returns `base`, changed in place."""
    for key, value in extra.items():
        mine = base.get(key)
        if key not in base:
            base[key] = value
        elif isinstance(mine, dict) and isinstance(value, dict):
            merge_into(mine, value)
        elif isinstance(mine, list) and isinstance(value, list):
            for own, other in zip(mine, value, strict=False):
                if isinstance(own, dict) and isinstance(other, dict):
                    merge_into(own, other)
    return base
