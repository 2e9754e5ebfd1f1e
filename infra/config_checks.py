"""Two groups of DeployConfig's checks across keys (infra/config.py): who may call in (the
auth scheme and the keys only it reads) and what the agent may reach (its managed policies,
secrets and parameters). Each failure is one ConfigError naming its key."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .context import AUTH, CONTEXT, ConfigError

__all__ = ["check_agent_access", "check_auth"]

_MANAGED_POLICY_ARN = re.compile(r"^arn:aws[a-z-]*:iam::(aws|\d{12}):policy/\S+$")
_SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+$")
_SECRET_NAME = re.compile(r"^[\w/+=.@-]{1,512}$")
_PARAMETER_ARN = re.compile(r"^arn:aws[a-z-]*:ssm:[a-z0-9-]+:\d{12}:parameter/[\w/.-]+$")
_PARAMETER_NAME = re.compile(r"^[\w/.-]{1,2048}$")


def check_auth(auth: str, *, jwt_only: Mapping[str, object], api_key_header: str | None) -> None:
    """The scheme is known, and the keys only another scheme reads are unset. `jwt_only` maps
    each JWT key to its value."""
    if auth not in AUTH.ALL:
        raise ConfigError(f"{CONTEXT.AUTH} must be one of {', '.join(AUTH.ALL)}, got {auth!r}")
    if auth != AUTH.JWT:
        for key, value in jwt_only.items():
            if value:
                raise ConfigError(f"{key} needs {CONTEXT.AUTH}={AUTH.JWT}")
    if api_key_header and auth != AUTH.API_KEY:
        raise ConfigError(f"{CONTEXT.API_KEY_HEADER} needs {CONTEXT.AUTH}={AUTH.API_KEY}")
    issuer = jwt_only[CONTEXT.JWT_ISSUER]
    if issuer is not None:
        if not str(issuer).startswith("https://"):
            raise ConfigError(f"{CONTEXT.JWT_ISSUER} must be an https:// URL, got {issuer!r}")
        if not jwt_only[CONTEXT.JWT_AUDIENCE]:
            raise ConfigError(f"{CONTEXT.JWT_AUDIENCE} is required with {CONTEXT.JWT_ISSUER}")
        if jwt_only[CONTEXT.COGNITO_DOMAIN_PREFIX]:
            raise ConfigError(f"{CONTEXT.COGNITO_DOMAIN_PREFIX} is for the stack's own user "
                              f"pool, not with {CONTEXT.JWT_ISSUER}")


def check_agent_access(managed_policies: Sequence[str], secrets: Mapping[str, str],
                       parameters: Mapping[str, str]) -> None:
    """Each managed policy is an IAM policy ARN; each secret and parameter a name or an ARN of
    its service."""
    for policy in managed_policies:
        if not _MANAGED_POLICY_ARN.match(policy):
            raise ConfigError(f"{CONTEXT.AGENT_MANAGED_POLICIES} entries must be IAM policy "
                              f"ARNs (arn:aws:iam::aws:policy/NAME or "
                              f"arn:aws:iam::ACCOUNT:policy/NAME), got {policy!r}")
    for key, values, arn, name in (
            (CONTEXT.AGENT_SECRETS, secrets, _SECRET_ARN, _SECRET_NAME),
            (CONTEXT.AGENT_PARAMETERS, parameters, _PARAMETER_ARN, _PARAMETER_NAME)):
        for entry, where in values.items():
            pattern = arn if where.startswith("arn:") else name
            if not pattern.match(where):
                raise ConfigError(f"{key}: {entry}={where!r} is neither a name nor an ARN of "
                                  "its service")
