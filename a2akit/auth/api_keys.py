"""API keys in a header (`A2A_API_KEY_HEADER`, default `x-api-key`; the same name as gRPC
metadata), stored only as SHA-256 hashes.

The hashes are a JSON list, one record per key::

    [{"principal": "billing-bot", "sha256": "<64 hex digits>", "tenant": "acme"}]

`tenant` is optional; a key with one works only in that tenant. The list lives in one
source: the `A2A_API_KEYS` setting (local use), a Secrets Manager secret
(`A2A_API_KEYS_SECRET`) or an SSM parameter (`A2A_API_KEYS_PARAMETER`, SecureString). It is
read once per process and kept for `A2A_API_KEYS_MAX_AGE_SECONDS`, so removing a record
revokes its key within that time; a key not in the list makes the kit read the source again
at most once per `A2A_AUTH_REFRESH_SECONDS`, so a new key works within that time. boto3 is
imported only when an AWS source is configured.

A plain hash is enough: keys made here carry 256 random bits, so there is nothing to guess,
and a slow password hash would cost every request. Every record is compared, in constant
time, whatever matches.

Make a key and its record: `python -m a2akit.auth.api_keys PRINCIPAL [--tenant TENANT]`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from a2akit.auth._cache import Reloading, SourceError
from a2akit.auth.identity import Identity
from a2akit.errors import AuthenticationRequiredError, UnavailableError
from a2akit.generated import a2a_pb2 as pb
from a2akit.headers import first_header
from a2akit.settings import ENV, Settings, SettingsError

if TYPE_CHECKING:
    from a2akit.headers import Headers

__all__ = ["ApiKeyScheme", "KeyRecord", "hash_key", "new_key", "parse_records"]

log = logging.getLogger("a2akit.auth")

_MAX_KEY_CHARS = 512
_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclasses.dataclass(frozen=True)
class KeyRecord:
    digest: bytes  # SHA-256 of the key
    principal: str
    tenant: str | None = None


def hash_key(key: str) -> str:
    """The hex SHA-256 a record stores for `key`."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    return "a2a_" + secrets.token_urlsafe(32)


def parse_records(document: str) -> tuple[KeyRecord, ...]:
    """The records of a JSON document. Raises ValueError saying what is wrong, without
    quoting the document."""
    try:
        items = json.loads(document)
    except ValueError:
        raise ValueError("not JSON") from None
    if not isinstance(items, list):
        raise ValueError("not a JSON list of records")
    records = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"record {index} is not an object")
        principal, digest, tenant = item.get("principal"), item.get("sha256"), item.get("tenant")
        if not isinstance(principal, str) or not principal:
            raise ValueError(f"record {index} has no principal")
        if not isinstance(digest, str) or not _HEX.match(digest.lower()):
            raise ValueError(f"record {index} has no sha256 of 64 hex digits")
        if tenant is not None and (not isinstance(tenant, str) or not tenant):
            raise ValueError(f"record {index} has an empty or non-string tenant")
        records.append(KeyRecord(bytes.fromhex(digest), principal, tenant))
    return tuple(records)


def _match(records: Sequence[KeyRecord], digest: bytes) -> KeyRecord | None:
    # Every record is compared, so timing says nothing about which one (if any) matched.
    found = None
    for record in records:
        if hmac.compare_digest(record.digest, digest):
            found = record
    return found


class ApiKeyScheme:
    """API keys in one header; the card calls it `apiKey`."""

    name = "apiKey"

    def __init__(self, header: str, records: Reloading[tuple[KeyRecord, ...]]) -> None:
        self.header = header
        self.challenge = f'ApiKey realm="a2a", header="{header}"'
        self._records = records

    @classmethod
    def from_settings(cls, settings: Settings, clock: Callable[[], float],
                      aws_client: Any = None) -> ApiKeyScheme:
        """Raises SettingsError when the inline `A2A_API_KEYS` does not parse (an AWS
        source is read at the first request instead)."""
        load, name = _source(settings, aws_client)
        records = Reloading(load, name=name, max_age=settings.api_keys_max_age_seconds,
                            min_interval=settings.auth_refresh_seconds, clock=clock)
        if settings.api_keys:
            records.get()  # no I/O: a bad inline list is refused at start, not at a request
        return cls(settings.api_key_header, records)

    def credential(self, headers: Headers) -> str | None:
        return first_header(headers, self.header)

    async def authenticate(self, credential: str) -> Identity:
        key = credential.strip()
        if not key or len(key) > _MAX_KEY_CHARS:
            raise _refused("malformed")
        digest = hashlib.sha256(key.encode()).digest()
        records = self._records.current()
        try:
            if records is None:
                records = await asyncio.to_thread(self._records.get)
        except SourceError as exc:
            raise UnavailableError("The API keys cannot be loaded; retry later") from exc
        record = _match(records, digest)
        if record is None:
            record = _match(await asyncio.to_thread(self._records.refresh, records), digest)
        if record is None:
            raise _refused("unknown or revoked")
        return Identity(owner=f"key:{record.principal}", scheme=self.name,
                        tenants=(record.tenant,) if record.tenant else ())

    def security_scheme(self) -> pb.SecurityScheme:
        scheme = pb.SecurityScheme()
        api_key = scheme.api_key_security_scheme
        api_key.location = "header"
        api_key.name = self.header
        api_key.description = f"An API key in header {self.header} (gRPC: metadata {self.header})"
        return scheme

    def card_scopes(self) -> tuple[str, ...]:
        return ()


def _refused(why: str) -> AuthenticationRequiredError:
    log.info("API key refused: %s", why)
    return AuthenticationRequiredError(f"The API key is not valid: {why}")


# --- sources ----------------------------------------------------------------------------------


def _source(settings: Settings, aws_client: Any) -> tuple[Callable[[], tuple[KeyRecord, ...]],
                                                          str]:
    """The loader of the configured source and its name for logs (never its content)."""
    if settings.api_keys:
        inline = settings.api_keys

        def load_inline() -> tuple[KeyRecord, ...]:
            try:
                return parse_records(inline)
            except ValueError as exc:
                raise SettingsError(f"{ENV.API_KEYS}: {exc}") from None

        return load_inline, f"the API keys in {ENV.API_KEYS}"
    if settings.api_keys_secret:
        secret_id = settings.api_keys_secret
        client = aws_client or _aws_client("secretsmanager", settings)

        def load_secret() -> tuple[KeyRecord, ...]:
            with _aws_errors(f"secret {secret_id}"):
                document = client.get_secret_value(SecretId=secret_id)["SecretString"]
            return _parsed(document, f"secret {secret_id}")

        return load_secret, f"the API keys in secret {secret_id}"
    if settings.api_keys_parameter:
        parameter = settings.api_keys_parameter
        client = aws_client or _aws_client("ssm", settings)

        def load_parameter() -> tuple[KeyRecord, ...]:
            with _aws_errors(f"parameter {parameter}"):
                document = client.get_parameter(Name=parameter,
                                                WithDecryption=True)["Parameter"]["Value"]
            return _parsed(document, f"parameter {parameter}")

        return load_parameter, f"the API keys in parameter {parameter}"
    raise SettingsError("no API key source is configured")


def _parsed(document: Any, origin: str) -> tuple[KeyRecord, ...]:
    if not isinstance(document, str):
        raise SourceError(f"{origin} holds no text")
    try:
        return parse_records(document)
    except ValueError as exc:
        raise SourceError(f"{origin}: {exc}") from None


def _aws_client(service: str, settings: Settings) -> Any:
    # Made on first use: boto3 costs ~0.4 s of cold start, paid only with an AWS source.
    from a2akit import aws

    timeout = settings.auth_timeout_seconds
    return aws.client(service, max_attempts=3, timeout=timeout, connect_timeout=timeout)


@contextlib.contextmanager
def _aws_errors(origin: str) -> Iterator[None]:
    """Turns AWS failures into SourceError, naming the source and the error code."""
    from a2akit import aws

    try:
        yield
    except KeyError as exc:
        raise SourceError(f"{origin}: {type(exc).__name__}") from exc
    except Exception as exc:
        failure = aws.failure(exc)
        if failure is None:
            raise
        raise SourceError(f"{origin}: {failure.code or 'error'}") from exc


# --- command line -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    import argparse  # the command line only: not on the request path's imports

    parser = argparse.ArgumentParser(
        description="Make an API key; print the key (give it to the caller, once) and the "
                    "record to add to the key list (the only thing the kit stores).")
    parser.add_argument("principal")
    parser.add_argument("--tenant")
    args = parser.parse_args(argv)
    key = new_key()
    record = {"principal": args.principal, "sha256": hash_key(key)}
    if args.tenant:
        record["tenant"] = args.tenant
    print(f"key:    {key}")
    print(f"record: {json.dumps(record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
