"""Settings: read from the environment once, into one frozen, typed object.

Code receives a `Settings`; tests build one directly instead of patching the environment.
The names below are the kit's public interface (DESIGN.md); infra/ imports them from here.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["ENV", "Settings", "SettingsError"]

N = TypeVar("N", int, float)


class SettingsError(ValueError):
    """An environment variable has a value the kit cannot use; the message names it."""


# Environment variable names, one place.
class ENV:
    AGENT = "A2A_AGENT"
    TABLE = "A2A_TABLE"
    DYNAMODB_ENDPOINT = "AWS_ENDPOINT_URL_DYNAMODB"
    PUBLIC_URL = "A2A_PUBLIC_URL"
    GRPC_ADDRESS = "A2A_GRPC_ADDRESS"
    ALLOW_ANONYMOUS = "A2A_ALLOW_ANONYMOUS"
    BEARER_TOKENS = "A2A_BEARER_TOKENS"
    GRPC_PORT = "GRPC_PORT"
    MAX_REQUEST_BYTES = "A2A_MAX_REQUEST_BYTES"
    PUSH_NOTIFICATIONS = "A2A_PUSH_NOTIFICATIONS"
    EXTENDED_AGENT_CARD = "A2A_EXTENDED_AGENT_CARD"
    STREAM_BUDGET_SECONDS = "A2A_STREAM_BUDGET_SECONDS"
    RETENTION_DAYS = "A2A_RETENTION_DAYS"
    SHUTDOWN_GRACE_SECONDS = "A2A_GRPC_SHUTDOWN_GRACE_SECONDS"
    LOG_LEVEL = "LOG_LEVEL"


DEFAULT_AGENT = "a2akit.examples.echo:agent"


@dataclasses.dataclass(frozen=True)
class Settings:
    agent: str = DEFAULT_AGENT
    table: str | None = None
    dynamodb_endpoint: str | None = None
    public_url: str = "http://127.0.0.1:8000/"
    grpc_address: str | None = None
    allow_anonymous: bool = False
    # bearer token -> owner; a real identity provider (API Gateway authorizer) takes precedence.
    bearer_tokens: Mapping[str, str] = dataclasses.field(default_factory=dict)
    grpc_port: int = 50051
    # One limit for both bindings: JSON-RPC body bytes and gRPC message bytes.
    max_request_bytes: int = 1024 * 1024
    push_notifications: bool = False
    extended_agent_card: bool = False
    # Longest a stream (or a blocking wait) may run; Lambda needs one below its timeout.
    stream_budget_seconds: float | None = None
    retention_days: int = 30
    # How long the gRPC container lets running calls finish after SIGTERM.
    shutdown_grace_seconds: float = 20.0
    log_level: str = "INFO"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            agent=env.get(ENV.AGENT) or DEFAULT_AGENT,
            table=env.get(ENV.TABLE) or None,
            dynamodb_endpoint=env.get(ENV.DYNAMODB_ENDPOINT) or None,
            public_url=env.get(ENV.PUBLIC_URL) or cls.public_url,
            grpc_address=_grpc_address(env.get(ENV.GRPC_ADDRESS)),
            allow_anonymous=_bool(env, ENV.ALLOW_ANONYMOUS),
            bearer_tokens=_tokens(env.get(ENV.BEARER_TOKENS, "")),
            grpc_port=_int(env, ENV.GRPC_PORT, cls.grpc_port, minimum=0, maximum=65535),
            max_request_bytes=_int(env, ENV.MAX_REQUEST_BYTES, cls.max_request_bytes, minimum=1024),
            push_notifications=_bool(env, ENV.PUSH_NOTIFICATIONS),
            extended_agent_card=_bool(env, ENV.EXTENDED_AGENT_CARD),
            stream_budget_seconds=_float(env, ENV.STREAM_BUDGET_SECONDS),
            retention_days=_int(env, ENV.RETENTION_DAYS, cls.retention_days, minimum=1),
            shutdown_grace_seconds=_float(env, ENV.SHUTDOWN_GRACE_SECONDS)
            or cls.shutdown_grace_seconds,
            log_level=_log_level(env.get(ENV.LOG_LEVEL)),
        )


def _bool(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in ("", "0", "false", "no"):
        return False
    if value in ("1", "true", "yes"):
        return True
    raise SettingsError(f"{name} must be true or false, not {value!r}")


def _int(env: Mapping[str, str], name: str, default: int, *, minimum: int,
         maximum: int | None = None) -> int:
    value = _number(env, name, int, "an integer")
    if value is None:
        return default
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise SettingsError(f"{name} must be at most {maximum}, not {value}")
    return value


def _float(env: Mapping[str, str], name: str) -> float | None:
    value = _number(env, name, float, "a number of seconds")
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise SettingsError(f"{name} must be a positive, finite number, not {env[name]!r}")
    return value


def _number(env: Mapping[str, str], name: str, convert: Callable[[str], N],
            what: str) -> N | None:
    """The variable converted, None when unset or empty; names it when it does not convert."""
    raw = env.get(name)
    if not raw:
        return None
    try:
        return convert(raw)
    except ValueError:
        raise SettingsError(f"{name} must be {what}, not {raw!r}") from None


_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(raw: str | None) -> str:
    level = (raw or "INFO").strip().upper()
    if level not in _LOG_LEVELS:
        raise SettingsError(f"{ENV.LOG_LEVEL} must be one of {', '.join(_LOG_LEVELS)}, "
                            f"not {raw!r}")
    return level


def _tokens(raw: str) -> dict[str, str]:
    """`owner=token,owner2=token2` -> {token: owner}."""
    tokens: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        owner, sep, token = item.partition("=")
        if not sep or not owner or not token:
            raise SettingsError(f"{ENV.BEARER_TOKENS} entries must look like owner=token")
        if token in tokens and tokens[token] != owner:
            raise SettingsError(f"{ENV.BEARER_TOKENS} gives one token to two owners")
        tokens[token] = owner
    return tokens


def _grpc_address(raw: str | None) -> str | None:
    """The card publishes gRPC as host:port (bindings.md 4); strip a scheme if given."""
    if not raw:
        return None
    return raw.split("://", 1)[-1].rstrip("/")
