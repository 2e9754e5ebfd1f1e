"""What an agent reads at run time and keeps out of its code: secrets and parameters, by name.

    from a2akit import parameter, secret

    key = secret("MODEL_API_KEY")   # Secrets Manager on AWS; A2A_SECRET_MODEL_API_KEY locally
    model = parameter("MODEL_ID")   # SSM Parameter Store on AWS; A2A_PARAMETER_MODEL_ID locally

Where a name's value comes from, the first that applies:

1. the name is listed in A2A_AGENT_SECRETS (`NAME=secret-arn-or-name,...`) or
   A2A_AGENT_PARAMETERS (`NAME=/ssm/path,...`), which the CDK stack sets from
   `-c a2a:agentSecrets` / `-c a2a:agentParameters`: read from AWS on first use (SecureString
   parameters decrypted), kept by the process for A2A_SECRETS_MAX_AGE_SECONDS (default 300 s),
   then read again;
2. the environment variable A2A_SECRET_<NAME> / A2A_PARAMETER_<NAME> (local development),
   read at each call;
3. neither: UnknownNameError, naming both.

A read from AWS blocks (boto3): call these through `asyncio.to_thread` in `execute`; a kept
value returns at once. Not at import or in the agent's constructor: deployed, the doors import
the agent for its card where they do not run it, and only the roles that run it may read
(infra/agent_access.py).

Not Powertools' parameters utility (aws_lambda_powertools.utilities.parameters), the AWS
community's usual answer, because the kit already has what it would bring, and it would be one
more locked package in the bundle: the API-key sources (a2akit.auth.api_keys) read Secrets
Manager and SSM through a2akit.aws (retries, timeouts) into a bounded-age cache shared by
threads (a2akit.auth._cache), which this module reuses; failures become the kit's one-line
errors. What it does is what Powertools does: one value per name, kept per process for a max
age, parameters decrypted.

    SecretsError
     +-- UnknownNameError   the name is configured nowhere
     +-- UnavailableError   AWS did not give the value (not found, access denied, unreachable)

boto3 is imported on the first read from AWS only: importing this module (`import a2akit`)
costs the Lambda front door nothing.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from a2akit.settings import ENV, Settings

if TYPE_CHECKING:
    from a2akit.auth._cache import Reloading

__all__ = ["AgentValues", "SecretsError", "UnavailableError", "UnknownNameError", "parameter",
           "secret"]

# After a failed read, the next attempt waits this long (or the max age, if shorter): an agent
# calling in a loop cannot make the kit hammer AWS.
RETRY_SECONDS = 5.0


class SecretsError(Exception):
    """A secret or parameter cannot be given; the message names it, never its value."""


class UnknownNameError(SecretsError, LookupError):
    """The name is neither listed for AWS nor set in the local environment variable."""


class UnavailableError(SecretsError):
    """AWS did not give the value: not found, access denied, unreachable, not text."""


@dataclasses.dataclass(frozen=True)
class _Kind:
    what: str  # "secret", "parameter"
    listed: str  # the variable listing the names read from AWS
    local: str  # the prefix of the local variables
    context: str  # the CDK context key that lists them on AWS
    service: str  # the boto3 service


_SECRET = _Kind("secret", ENV.AGENT_SECRETS, ENV.SECRET_PREFIX, "a2a:agentSecrets",
                "secretsmanager")
_PARAMETER = _Kind("parameter", ENV.AGENT_PARAMETERS, ENV.PARAMETER_PREFIX,
                   "a2a:agentParameters", "ssm")


class AgentValues:
    """The secrets and parameters of one process: the names `settings` lists come from AWS
    and are kept for `settings.secrets_max_age_seconds`; any other name from `environ`.

    `clients` ("secretsmanager", "ssm") are made on first use when not given."""

    def __init__(self, settings: Settings, *, environ: Mapping[str, str] = os.environ,
                 clients: Mapping[str, Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._listed = {_SECRET: settings.agent_secrets, _PARAMETER: settings.agent_parameters}
        self._max_age = settings.secrets_max_age_seconds
        self._environ = environ
        self._clients: dict[str, Any] = dict(clients or {})
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: dict[tuple[_Kind, str], Reloading[str]] = {}

    def secret(self, name: str) -> str:
        """The secret `name`. Raises UnknownNameError or UnavailableError (see the module)."""
        return self._get(_SECRET, name)

    def parameter(self, name: str) -> str:
        """The parameter `name`. Raises UnknownNameError or UnavailableError."""
        return self._get(_PARAMETER, name)

    def _get(self, kind: _Kind, name: str) -> str:
        where = self._listed[kind].get(name)
        if where is None:
            value = self._environ.get(kind.local + name)
            if value is None:
                raise UnknownNameError(
                    f"no {kind.what} {name!r}: set {kind.local}{name} (locally), or list it in "
                    f"{kind.listed} as {name}=... (on AWS: -c {kind.context}={name}=...)")
            return value
        from a2akit.auth._cache import SourceError

        try:
            return self._kept_value(kind, name, where).get()
        except SourceError as exc:
            raise UnavailableError(f"{kind.what} {name!r}: {exc}") from exc

    def _kept_value(self, kind: _Kind, name: str, where: str) -> Reloading[str]:
        from a2akit.auth._cache import Reloading

        with self._lock:
            kept = self._kept.get((kind, name))
            if kept is None:
                kept = Reloading(lambda: self._read(kind, where), name=f"{kind.what} {name}",
                                 max_age=self._max_age,
                                 min_interval=min(RETRY_SECONDS, self._max_age),
                                 clock=self._clock)
                self._kept[(kind, name)] = kept
            return kept

    def _client(self, service: str) -> Any:
        with self._lock:
            if service not in self._clients:
                from a2akit import aws

                self._clients[service] = aws.client(service)
            return self._clients[service]

    def _read(self, kind: _Kind, where: str) -> str:
        """One read from AWS. Raises SourceError naming `where` and AWS's error code."""
        from a2akit import aws
        from a2akit.auth._cache import SourceError

        try:
            client = self._client(kind.service)
            if kind is _SECRET:
                value = client.get_secret_value(SecretId=where).get("SecretString")
            else:
                value = client.get_parameter(Name=where, WithDecryption=True)["Parameter"]["Value"]
        except Exception as exc:
            failure = aws.failure(exc)
            if failure is None:
                raise
            raise SourceError(f"{where}: {failure.code or failure.kind}") from exc
        if not isinstance(value, str):
            raise SourceError(f"{where} holds no text (a binary secret?)")
        return value


_shared: AgentValues | None = None
_shared_lock = threading.Lock()


def _values() -> AgentValues:
    """The process's AgentValues, made from the environment on first use (the entry point
    already refused bad settings at start, so this cannot fail on them there)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = AgentValues(Settings.from_env())
        return _shared


def secret(name: str) -> str:
    """The secret `name`: Secrets Manager when A2A_AGENT_SECRETS lists it (kept for
    A2A_SECRETS_MAX_AGE_SECONDS), else A2A_SECRET_<NAME>. Raises UnknownNameError when it is
    neither, UnavailableError when AWS does not give it."""
    return _values().secret(name)


def parameter(name: str) -> str:
    """The parameter `name`: SSM Parameter Store when A2A_AGENT_PARAMETERS lists it (kept
    for A2A_SECRETS_MAX_AGE_SECONDS), else A2A_PARAMETER_<NAME>. Raises UnknownNameError
    when it is neither, UnavailableError when AWS does not give it."""
    return _values().parameter(name)
