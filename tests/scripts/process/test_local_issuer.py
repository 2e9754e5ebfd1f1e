"""`python -m scripts.local_issuer` (docs/local-recipes.md): the kit, configured as it prints,
accepts the tokens it hands out, over real HTTP; an agent with another audience refuses them."""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
from pathlib import Path

import pytest

from a2akit.auth import Authenticator
from a2akit.errors import AuthenticationRequiredError
from a2akit.settings import Settings
from tests.auth.headers import bearer
from tests.support.processes import free_port, python_env, running, wait_for_output

pytestmark = pytest.mark.slow


def test_the_kit_accepts_its_tokens(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "issuer.log"
    url = f"http://127.0.0.1:{port}"
    with running([sys.executable, "-m", "scripts.local_issuer", "--port", str(port)],
                 ports=[port], env=python_env(), log=log) as process:
        wait_for_output(log, "A token", process)
        printed = log.read_text()
        assert f"A2A_JWT_ISSUER={url} A2A_JWT_AUDIENCE=a2a-agent ./dev serve" in printed
        assert f"curl -s {url}/token" in printed
        with urllib.request.urlopen(f"{url}/token", timeout=10) as reply:
            token = json.load(reply)["access_token"]
        auth = Authenticator.from_settings(Settings(jwt_issuer=url,
                                                    jwt_audiences=("a2a-agent",)))
        identity = asyncio.run(auth.authenticate(bearer(token)))
        assert identity.owner == "jwt:alice"
        assert identity.scopes is not None and "a2a/invoke" in identity.scopes
        other = Authenticator.from_settings(Settings(jwt_issuer=url,
                                                     jwt_audiences=("another-agent",)))
        with pytest.raises(AuthenticationRequiredError):
            asyncio.run(other.authenticate(bearer(token)))
