"""Where the kit's DynamoDB client gets credentials: the environment, as Lambda and ECS give them.

- static keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN): Lambda without
  SnapStart; read at every call, so a changed environment is followed;
- the container credentials endpoint: AWS_CONTAINER_CREDENTIALS_FULL_URI with its
  authorization token (Lambda with SnapStart), AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (ECS
  and Fargate task roles); fetched when needed, again before they expire, and anew after
  `reset()` (a restored snapshot).

A source's `get()` raises `_errors.ConnectionFailure` when it cannot give credentials.
"""

from __future__ import annotations

import datetime
import http.client
import json
import threading
import urllib.parse
from collections.abc import Mapping

from a2akit.store._errors import ConnectionFailure

__all__ = [
    "ContainerCredentials",
    "CredentialSource",
    "Credentials",
    "EnvCredentials",
    "credential_source",
]


class Credentials:
    """One set of credentials; a source hands out the current one."""

    def __init__(self, access_key: str, secret_key: str, token: str | None = None) -> None:
        self.access_key = access_key
        self.secret_key = secret_key
        self.token = token

    def get(self) -> Credentials:
        return self  # fixed credentials are their own source (tests, tools)

    def reset(self) -> None:
        pass

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Credentials | None:
        access, secret = environ.get("AWS_ACCESS_KEY_ID"), environ.get("AWS_SECRET_ACCESS_KEY")
        if not access or not secret:
            return None
        return cls(access, secret, environ.get("AWS_SESSION_TOKEN") or None)


class EnvCredentials:
    """The static keys in the environment, read at every call: an environment that changes
    (a restored snapshot) is followed."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def get(self) -> Credentials:
        credentials = Credentials.from_env(self._environ)
        if credentials is None:
            raise ConnectionFailure("the AWS credentials left the environment")
        return credentials

    def reset(self) -> None:
        pass


class ContainerCredentials:
    """Credentials from the container credentials endpoint, cached until 5 minutes before
    they expire. `reset()` forgets them (copies restored from one snapshot fetch their own)."""

    _MARGIN = datetime.timedelta(minutes=5)

    def __init__(self, url: str, token: str | None = None, token_file: str | None = None,
                 timeout: float = 2) -> None:
        self._url = urllib.parse.urlsplit(url)
        self._token = token
        self._token_file = token_file
        self._timeout = timeout
        self._lock = threading.Lock()
        self._cached: tuple[Credentials, datetime.datetime] | None = None

    def get(self) -> Credentials:
        with self._lock:
            now = datetime.datetime.now(datetime.UTC)
            if self._cached is None or self._cached[1] - self._MARGIN <= now:
                self._cached = self._fetch()
            return self._cached[0]

    def reset(self) -> None:
        with self._lock:
            self._cached = None

    def _fetch(self) -> tuple[Credentials, datetime.datetime]:
        headers = {"accept": "application/json"}
        token = self._token
        if self._token_file:
            with open(self._token_file) as f:
                token = f.read().strip()
        if token:
            headers["authorization"] = token
        url = self._url
        kind = (http.client.HTTPSConnection if url.scheme == "https"
                else http.client.HTTPConnection)
        connection = kind(url.hostname or "", url.port, timeout=self._timeout)
        try:
            path = url.path + (f"?{url.query}" if url.query else "")
            connection.request("GET", path or "/", headers=headers)
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise ConnectionFailure(f"container credentials: {exc}") from exc
        finally:
            connection.close()
        if response.status != 200:
            raise ConnectionFailure(f"container credentials: HTTP {response.status}")
        data = json.loads(body)
        expires = datetime.datetime.fromisoformat(data["Expiration"])
        return Credentials(data["AccessKeyId"], data["SecretAccessKey"], data.get("Token")), expires


CredentialSource = Credentials | EnvCredentials | ContainerCredentials

_ECS_HOST = "http://169.254.170.2"


def credential_source(environ: Mapping[str, str]) -> CredentialSource | None:
    """Where the environment says credentials come from, as botocore looks first: static
    keys, then the container endpoint; None when it says neither."""
    if Credentials.from_env(environ) is not None:
        return EnvCredentials(environ)
    full, relative = (environ.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
                      environ.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"))
    if relative:
        return ContainerCredentials(_ECS_HOST + relative,
                                    environ.get("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
                                    environ.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"))
    if full:
        return ContainerCredentials(full, environ.get("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
                                    environ.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"))
    return None
