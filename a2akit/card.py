"""The agent card, built from settings and the agent's own attributes.

Never from the request's Host header: a card served through a proxy or a Lambda URL must
name the public address the operator chose (A2A_PUBLIC_URL, A2A_GRPC_ADDRESS)."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from a2akit.auth import Authenticator
from a2akit.generated import a2a_pb2 as pb
from a2akit.service_params import LEGACY_VERSION, SUPPORTED_VERSION
from a2akit.settings import Settings

__all__ = ["build_card", "input_modes", "rest_url", "streaming_enabled"]

_DEFAULT_MODES = ("text/plain",)


def streaming_enabled(agent: object) -> bool:
    return bool(getattr(agent, "streaming", True))


def input_modes(agent: object) -> Sequence[str]:
    return tuple(getattr(agent, "input_modes", _DEFAULT_MODES))


def rest_url(settings: Settings) -> str:
    """The HTTP+JSON interface's URL: A2A_PUBLIC_URL itself (one URL for both HTTP bindings,
    spec 8.3.1), or its scheme and host with A2A_REST_BASE_PATH as the path. The routes are
    relative to it (`{url}/message:send`); the prefix is only a path, never authentication."""
    if settings.rest_base_path is None:
        return settings.public_url
    parts = urlsplit(settings.public_url)
    return urlunsplit((parts.scheme, parts.netloc, settings.rest_base_path or "/", "", ""))


def build_card(settings: Settings, agent: object, authenticator: Authenticator) -> pb.AgentCard:
    """The public card; its security part is declared by the `authenticator` that checks
    every request, so it names exactly the schemes enforced."""
    name = str(getattr(agent, "name", type(agent).__name__))
    card = pb.AgentCard(
        name=name,
        description=str(getattr(agent, "description", "") or f"{name}, served by the A2A AWS kit"),
        version=str(getattr(agent, "version", "0.1.0")),
        default_input_modes=list(input_modes(agent)),
        default_output_modes=list(getattr(agent, "output_modes", _DEFAULT_MODES)),
        capabilities=pb.AgentCapabilities(
            streaming=streaming_enabled(agent),
            push_notifications=settings.push_notifications,
            extended_agent_card=settings.extended_agent_card,
            extensions=list(getattr(agent, "extensions", ())),
        ),
    )
    card.supported_interfaces.add(url=settings.public_url, protocol_binding="JSONRPC",
                                  protocol_version=SUPPORTED_VERSION)
    # JSON-RPC first, as before (clients take the first entry they support), then HTTP+JSON.
    card.supported_interfaces.add(url=rest_url(settings), protocol_binding="HTTP+JSON",
                                  protocol_version=SUPPORTED_VERSION)
    if settings.grpc_address:
        card.supported_interfaces.add(url=settings.grpc_address, protocol_binding="GRPC",
                                      protocol_version=SUPPORTED_VERSION)
    # A2A 0.3 callers are served on the same endpoints (docs/a2a-0.3.md): their interfaces
    # come after every 1.0 one, so a 1.0 client still picks a 1.0 interface first, and the
    # first 0.3 one (JSON-RPC) becomes the 0.3 card's `url`.
    card.supported_interfaces.add(url=settings.public_url, protocol_binding="JSONRPC",
                                  protocol_version=LEGACY_VERSION)
    if settings.grpc_address:
        card.supported_interfaces.add(url=settings.grpc_address, protocol_binding="GRPC",
                                      protocol_version=LEGACY_VERSION)
    skills: Sequence[pb.AgentSkill] = getattr(agent, "skills", ())
    if skills:
        card.skills.extend(skills)
    else:
        card.skills.add(id="default", name=name, description=card.description, tags=["general"])
    authenticator.declare(card)
    return card
