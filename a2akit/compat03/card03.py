"""The agent card in its 0.3 form (compat-facts section 4), from the 1.0 card.

Field by field (facts 4.1): name, description, version, documentation_url, icon_url,
provider, default modes and signatures are copied; `capabilities.extended_agent_card` moves
to `supports_authenticated_extended_card`; security schemes, requirements (`security`) and
skill security are the same content under 0.3 names (4.2); the interfaces become `url`,
`preferred_transport`, `protocol_version` and `additional_interfaces` (below). The tenant of
an interface has no 0.3 home (0.3 requests carry none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from a2akit.generated import a2a_pb2 as pb
from a2akit.generated import a2a_v0_3_pb2 as pb03

__all__ = ["PROTOCOL_VERSION", "from_core_card", "legacy_interfaces"]

PROTOCOL_VERSION = "0.3.0"  # what 0.3 cards say (the 0.3 schema's default, facts 7)
# The bindings the kit serves to 0.3 callers at the same addresses as 1.0: JSON-RPC on the
# same URL (method names pick the generation), gRPC on the same port (service a2a.v1).
_SERVED_03 = ("JSONRPC", "GRPC")
_LEGACY = re.compile(r"0\.[0-9]+(\.[0-9]+)?")


def legacy_interfaces(card: pb.AgentCard) -> list[pb.AgentInterface]:
    """The interfaces a 0.3 client may use, in the card's order (= preference, facts 4.3).

    Those declared for 0.x, or with no version (REF counts those as 0.3 too). A card that
    declares none: its JSON-RPC and gRPC interfaces, since the kit serves 0.3 at both
    addresses; REF would have no 0.3 view at all (facts 4.3, step 2)."""
    declared = [i for i in card.supported_interfaces
                if not i.protocol_version or _LEGACY.fullmatch(i.protocol_version)]
    if declared:
        return declared
    return [i for i in card.supported_interfaces if i.protocol_binding in _SERVED_03]


def from_core_card(card: pb.AgentCard) -> pb03.AgentCard:
    """The 0.3 card. `url` is the first 0.3 JSON-RPC interface (a 0.3 client's default
    transport), else the first 0.3 interface, with its binding as `preferred_transport`;
    `additional_interfaces` lists every 0.3 interface, the main one included, as the 0.3 spec
    (5.6.2) asks (REF leaves the main one out). `protocol_version` is 0.3.0 (facts 4.1)."""
    out = pb03.AgentCard(
        name=card.name, description=card.description, version=card.version,
        documentation_url=card.documentation_url, icon_url=card.icon_url,
        default_input_modes=card.default_input_modes,
        default_output_modes=card.default_output_modes,
        protocol_version=PROTOCOL_VERSION,
        supports_authenticated_extended_card=card.capabilities.extended_agent_card,
    )
    if card.HasField("provider"):
        out.provider.url, out.provider.organization = card.provider.url, card.provider.organization
    interfaces = legacy_interfaces(card)
    if interfaces:
        main = next((i for i in interfaces if i.protocol_binding == "JSONRPC"), interfaces[0])
        out.url, out.preferred_transport = main.url, main.protocol_binding
        out.additional_interfaces.extend(
            pb03.AgentInterface(url=i.url, transport=i.protocol_binding) for i in interfaces)
    _capabilities(card.capabilities, out.capabilities)
    for name, scheme in card.security_schemes.items():
        _scheme(scheme, out.security_schemes[name])
    out.security.extend(_security(card.security_requirements))
    for skill in card.skills:
        out.skills.add(id=skill.id, name=skill.name, description=skill.description,
                       tags=skill.tags, examples=skill.examples, input_modes=skill.input_modes,
                       output_modes=skill.output_modes,
                       security=_security(skill.security_requirements))
    for signature in card.signatures:
        copied = out.signatures.add(protected=signature.protected, signature=signature.signature)
        if signature.HasField("header"):
            copied.header.CopyFrom(signature.header)
    return out


def _capabilities(source: pb.AgentCapabilities, target: pb03.AgentCapabilities) -> None:
    # stateTransitionHistory has no 1.0 source and is never emitted (5.3 #16).
    target.streaming, target.push_notifications = source.streaming, source.push_notifications
    for extension in source.extensions:
        copied = target.extensions.add(uri=extension.uri, description=extension.description,
                                       required=extension.required)
        if extension.HasField("params"):
            copied.params.CopyFrom(extension.params)


def _security(requirements: Iterable[pb.SecurityRequirement]) -> Sequence[pb03.Security]:
    """`security_requirements` -> `security`: the same map of scheme -> scopes (4.1)."""
    out = []
    for requirement in requirements:
        security = pb03.Security()
        for name, scopes in requirement.schemes.items():
            security.schemes[name].list.extend(scopes.list)
        out.append(security)
    return out


def _scheme(source: pb.SecurityScheme, target: pb03.SecurityScheme) -> None:
    """One security scheme: the same oneof member and fields on both sides (4.2)."""
    kind = source.WhichOneof("scheme")
    if kind is not None:
        _copy_fields(getattr(source, kind), getattr(target, kind))


def _flows(source: pb.OAuthFlows, target: pb03.OAuthFlows) -> None:
    """Both protos hold one flow (a oneof), so the 1.0 flow is copied as it is. 5.3 #19:
    `device_code` (1.0 only) has no 0.3 form and leaves `flows` empty; `pkce_required` is
    dropped. (Collapsing several flows into one, authorizationCode first, only arises when
    reading 0.3 JSON, which holds several.)"""
    kind = source.WhichOneof("flow")
    if kind in target.DESCRIPTOR.fields_by_name:
        _copy_fields(getattr(source, kind), getattr(target, kind))


def _copy_fields(source: Any, target: Any) -> None:
    """A scheme's or flow's message, 1.0 -> 0.3: each field 0.3 has, by name (the same names
    and types on both sides, facts 3.6); what 1.0 alone has is left behind. The message is
    set even when every field is empty (an mTLS scheme has only a description)."""
    target.SetInParent()
    for field in target.DESCRIPTOR.fields:
        if field.name == "flows":
            _flows(source.flows, target.flows)
        elif field.name == "scopes":
            target.scopes.update(source.scopes)
        else:
            setattr(target, field.name, getattr(source, field.name))
