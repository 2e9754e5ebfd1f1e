"""API keys: the record format, and each source - inline, and Secrets Manager and SSM
Parameter Store through the kit's own boto3 calls to a moto server - with revocation within
the cache lifetime, new keys within the refresh interval, and failures that leak nothing."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pytest

from a2akit.auth import Authenticator
from a2akit.auth.api_keys import hash_key, main, new_key, parse_records
from a2akit.errors import AuthenticationRequiredError, UnavailableError
from a2akit.settings import Settings, SettingsError
from tests.auth.conftest import Clock
from tests.auth.headers import Headers
from tests.support import moto as aws

pytestmark = pytest.mark.anyio

ALICE, BOB = new_key(), new_key()


def _records(**keys: str | tuple[str, str]) -> str:
    out = []
    for principal, key in keys.items():
        record = {"principal": principal}
        if isinstance(key, tuple):
            key, record["tenant"] = key
        record["sha256"] = hash_key(key)
        out.append(record)
    return json.dumps(out)


async def _owner(auth: Authenticator, key: str) -> str:
    return (await auth.authenticate(Headers({"x-api-key": key}))).owner


@pytest.mark.parametrize(("document", "why"), [
    ("{", "not JSON"),
    ('{"principal": "a"}', "not a JSON list"),
    ('["x"]', "record 0 is not an object"),
    ('[{"sha256": "' + "a" * 64 + '"}]', "record 0 has no principal"),
    ('[{"principal": "a", "sha256": "abc"}]', "record 0 has no sha256"),
    ('[{"principal": "a", "sha256": "' + "a" * 64 + '", "tenant": 7}]', "record 0 has an"),
])
def test_bad_records_say_why_without_quoting(document: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as caught:
        parse_records(document)
    assert document not in str(caught.value)


def test_a_bad_inline_list_is_refused_at_start() -> None:
    with pytest.raises(SettingsError, match="A2A_API_KEYS: record 0 has no sha256"):
        Authenticator.from_settings(Settings(api_keys='[{"principal": "a", "sha256": "x"}]'))


async def test_inline_keys_and_tenants() -> None:
    auth = Authenticator.from_settings(Settings(api_keys=_records(alice=ALICE,
                                                                  bob=(BOB, "acme"))))
    alice = await auth.authenticate(Headers({"x-api-key": ALICE}))
    bob = await auth.authenticate(Headers({"x-api-key": BOB}))
    assert (alice.owner, alice.tenants, alice.scopes) == ("key:alice", (), None)
    assert (bob.owner, bob.tenants) == ("key:bob", ("acme",))
    with pytest.raises(AuthenticationRequiredError):
        await _owner(auth, new_key())


async def test_a_custom_header() -> None:
    auth = Authenticator.from_settings(Settings(api_keys=_records(alice=ALICE),
                                                api_key_header="x-agent-key"))
    assert await _owner_in(auth, "x-agent-key", ALICE) == "key:alice"
    with pytest.raises(AuthenticationRequiredError):
        await _owner_in(auth, "x-api-key", ALICE)  # not a header the kit reads: no credentials


async def _owner_in(auth: Authenticator, header: str, key: str) -> str:
    return (await auth.authenticate(Headers({header: key}))).owner


def _secret(endpoint: str, document: str) -> tuple[Any, str]:
    client = aws.client("secretsmanager", endpoint)
    name = f"a2a/keys/{uuid.uuid4()}"
    client.create_secret(Name=name, SecretString=document)
    return client, name


@pytest.mark.slow  # a moto server
async def test_secrets_manager_revocation_and_new_keys(moto_endpoint: str,
                                                       clock: Clock) -> None:
    client, name = _secret(moto_endpoint, _records(alice=ALICE, bob=BOB))
    settings = Settings(api_keys_secret=name, api_keys_max_age_seconds=300,
                        auth_refresh_seconds=60)
    auth = Authenticator.from_settings(settings, clock=clock, aws_client=client)
    assert await _owner(auth, BOB) == "key:bob"
    # Bob's key is revoked and Carol's added: Bob works until the list's lifetime ends.
    carol = new_key()
    client.put_secret_value(SecretId=name, SecretString=_records(alice=ALICE, carol=carol))
    clock.advance(30)
    assert await _owner(auth, BOB) == "key:bob"
    with pytest.raises(AuthenticationRequiredError):
        await _owner(auth, carol)  # the list was read 30 s ago: not again yet
    clock.advance(30)
    assert await _owner(auth, carol) == "key:carol"  # an unknown key made it read again
    clock.advance(300)
    with pytest.raises(AuthenticationRequiredError, match="unknown or revoked"):
        await _owner(auth, BOB)
    assert await _owner(auth, ALICE) == "key:alice"


@pytest.mark.slow  # a moto server
async def test_ssm_parameter(moto_endpoint: str, clock: Clock) -> None:
    client = aws.client("ssm", moto_endpoint)
    name = f"/a2a/keys/{uuid.uuid4()}"
    client.put_parameter(Name=name, Value=_records(alice=(ALICE, "acme")),
                         Type="SecureString")
    auth = Authenticator.from_settings(Settings(api_keys_parameter=name), clock=clock,
                                       aws_client=client)
    identity = await auth.authenticate(Headers({"x-api-key": ALICE}))
    assert (identity.owner, identity.tenants) == ("key:alice", ("acme",))


@pytest.mark.slow  # a moto server
async def test_source_failures_are_unavailable_and_leak_nothing(
        moto_endpoint: str, clock: Clock, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    client = aws.client("secretsmanager", moto_endpoint)
    missing = Authenticator.from_settings(Settings(api_keys_secret="a2a/no-such-secret"),
                                          clock=clock, aws_client=client)
    with pytest.raises(UnavailableError):
        await _owner(missing, ALICE)
    assert "ResourceNotFoundException" in caplog.text
    document = '[{"principal": "alice", "sha256": "' + "0" * 63 + '"}]'
    client, name = _secret(moto_endpoint, document)
    broken = Authenticator.from_settings(Settings(api_keys_secret=name), clock=clock,
                                         aws_client=client)
    with pytest.raises(UnavailableError):
        await _owner(broken, ALICE)
    assert "has no sha256" in caplog.text
    # The kit's own lines never quote the list; botocore's DEBUG lines may show the secret's
    # content, which is why it holds hashes, never keys.
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("a2akit"))
    assert "0" * 63 not in ours
    assert ALICE not in caplog.text


def test_the_command_makes_a_key_and_its_record(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["billing-bot", "--tenant", "acme"]) == 0
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    (record,) = parse_records("[" + lines["record"].strip() + "]")
    assert record.principal == "billing-bot" and record.tenant == "acme"
    assert record.digest.hex() == hash_key(lines["key"].strip())
