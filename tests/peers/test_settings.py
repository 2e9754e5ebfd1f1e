"""The peers' settings: A2A_PEERS (names and addresses), A2A_PEER_API_KEYS and the
client-credentials grant (A2A_PEER_TOKEN_URL, A2A_PEER_CLIENT_ID, A2A_PEER_SCOPES); every
mistake is one SettingsError naming the variable."""

from __future__ import annotations

import pytest

from a2akit.settings import Settings, SettingsError


def test_nothing_set_means_no_peers() -> None:
    settings = Settings.from_env({})
    assert (settings.peers, settings.peer_api_keys, settings.peer_token_url,
            settings.peer_client_id, settings.peer_scopes) == ({}, {}, None, None, ())


def test_every_address_form() -> None:
    settings = Settings.from_env({"A2A_PEERS": (
        " counter = grpc://counter.internal:50051 , tls=grpcs://10.0.3.7:443,"
        "card=https://agents.example.com/.well-known/agent-card.json,"
        "base=https://agents.example.com/billing/, local=http://127.0.0.1:8000")})
    assert settings.peers == {
        "counter": "grpc://counter.internal:50051", "tls": "grpcs://10.0.3.7:443",
        "card": "https://agents.example.com/.well-known/agent-card.json",
        "base": "https://agents.example.com/billing/", "local": "http://127.0.0.1:8000"}


@pytest.mark.parametrize(("value", "says"), [
    ("counter", "NAME=value"),
    ("my-peer=https://a.example", "NAME=value"),
    ("a=https://x.example,a=https://y.example", "each NAME once"),
    ("a=ftp://files.example", "http://, https://, grpc:// or grpcs://"),
    ("a=counter.internal:50051", "http://, https://, grpc:// or grpcs://"),
    ("a=grpc://counter.internal", "grpc://host:port"),
    ("a=grpc://counter.internal:50051/a2a", "grpc://host:port"),
    ("a=grpc://counter.internal:port", "not a port number"),
    ("a=https://", "needs a host"),
    ("a=https://a.example/?x=1", "no query"),
    ("a=https://user@a.example/", "no query, fragment or user"),
])
def test_a_bad_peer_is_named(value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=r"^A2A_PEERS") as raised:
        Settings.from_env({"A2A_PEERS": value})
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_api_keys_name_a_secret_per_peer() -> None:
    settings = Settings.from_env({"A2A_PEERS": "a=grpc://h:1,b=grpc://h:2",
                                  "A2A_PEER_API_KEYS": "a=A_KEY"})
    assert settings.peer_api_keys == {"a": "A_KEY"}


@pytest.mark.parametrize(("env", "says"), [
    ({"A2A_PEER_API_KEYS": "a=A_KEY"}, "A2A_PEER_API_KEYS names a, which A2A_PEERS does not"),
    ({"A2A_PEERS": "a=grpc://h:1", "A2A_PEER_API_KEYS": "a=a-key"},
     "A2A_PEER_API_KEYS entry a=a-key: the value is the name of a secret"),
    ({"A2A_PEERS": "a=grpc://h:1", "A2A_PEER_API_KEYS": "a"}, "A2A_PEER_API_KEYS entries"),
])
def test_a_bad_api_key_entry_is_named(env: dict[str, str], says: str) -> None:
    with pytest.raises(SettingsError, match=r"^A2A_PEER_API_KEYS") as raised:
        Settings.from_env(env)
    assert says in str(raised.value)


def test_the_client_credentials_grant() -> None:
    settings = Settings.from_env({
        "A2A_PEER_TOKEN_URL": "https://kit.auth.us-east-1.amazoncognito.com/oauth2/token",
        "A2A_PEER_CLIENT_ID": "5a2b", "A2A_PEER_SCOPES": "a2a/invoke, a2a/read"})
    assert settings.peer_token_url == "https://kit.auth.us-east-1.amazoncognito.com/oauth2/token"
    assert (settings.peer_client_id, settings.peer_scopes) == ("5a2b", ("a2a/invoke", "a2a/read"))
    # Plain http only on loopback (a local issuer in tests and development).
    assert Settings.from_env({"A2A_PEER_TOKEN_URL": "http://127.0.0.1:9/oauth2/token",
                              "A2A_PEER_CLIENT_ID": "c"}).peer_token_url


@pytest.mark.parametrize(("env", "says"), [
    ({"A2A_PEER_TOKEN_URL": "http://auth.example/oauth2/token", "A2A_PEER_CLIENT_ID": "c"},
     "A2A_PEER_TOKEN_URL must be an https:// URL"),
    ({"A2A_PEER_TOKEN_URL": "https://auth.example/oauth2/token"},
     "A2A_PEER_CLIENT_ID is required with A2A_PEER_TOKEN_URL"),
    ({"A2A_PEER_CLIENT_ID": "c"}, "A2A_PEER_TOKEN_URL is required by"),
    ({"A2A_PEER_SCOPES": "a2a/invoke"}, "A2A_PEER_TOKEN_URL is required by"),
])
def test_a_bad_grant_is_named(env: dict[str, str], says: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env(env)
    assert str(raised.value).startswith(says)


def test_settings_built_in_code_are_checked_too() -> None:
    with pytest.raises(SettingsError, match=r"^A2A_PEERS entry a=grpc://h"):
        Settings(peers={"a": "grpc://h"})
